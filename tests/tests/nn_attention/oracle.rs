//! The oracle property tests: fused attention (head-major unmasked and masked, batched
//! interleaved) and composed attention, every float dtype on every backend, against
//! the reference oracle bit for bit; trailing padding that changes no bit; the widest
//! head over many keys.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{self, AttentionShape};
use gpukit::{Buf, DType, Element, Kit, Result};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cases, check_same_bits};
use gpukit_tests::{cfg, on_backends_multi as on_backends};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// A value: mostly in [-2, 2] (so softmax weights spread over many keys), sometimes a
/// larger magnitude, and (when `specials`) sometimes NaN, ±inf, -0.0, a subnormal.
fn value<T: TestElem>(specials: bool) -> BoxedStrategy<T> {
    let sp = T::specials();
    let moderate = prop_oneof![
        10 => (-2.0f64..2.0).prop_map(T::from_moderate),
        1 => (-40.0f64..40.0).prop_map(T::from_moderate),
        1 => Just(T::from_moderate(0.0)),
    ];
    if specials {
        prop_oneof![25 => moderate, 1 => (0..sp.len()).prop_map(move |i| sp[i])].boxed()
    } else {
        moderate.boxed()
    }
}

fn vals<T: TestElem>(n: usize, specials: bool) -> impl Strategy<Value = Vec<T>> {
    proptest::collection::vec(value::<T>(specials), n)
}

/// A mask row of `nkv` values in one of several modes: all kept, random mix (0, biases,
/// -1e30, -inf, rarely NaN), kept then trailing padding, fully masked.
fn mask_row<T: TestElem>(nkv: usize) -> impl Strategy<Value = Vec<T>> {
    let entry = prop_oneof![
        6 => Just(0.0f64),
        3 => -3.0f64..3.0,
        2 => Just(-1e30),
        2 => Just(f64::NEG_INFINITY),
        1 => Just(-1e29),
    ];
    let nan = T::specials()[0];
    prop_oneof![
        2 => Just(vec![T::from_moderate(0.0); nkv]),
        4 => proptest::collection::vec(entry, nkv)
            .prop_map(|v| v.into_iter().map(T::from_moderate).collect()),
        2 => (0..=nkv, prop_oneof![Just(-1e30), Just(f64::NEG_INFINITY)]).prop_map(move |(keep, d)| {
            (0..nkv)
                .map(|j| T::from_moderate(if j < keep { 0.0 } else { d }))
                .collect()
        }),
        1 => prop_oneof![Just(-1e30), Just(f64::NEG_INFINITY)]
            .prop_map(move |d| vec![T::from_moderate(d); nkv]),
        1 => (0..nkv.max(1)).prop_map(move |at| {
            let mut v = vec![T::from_moderate(0.0); nkv];
            if at < nkv {
                v[at] = nan;
            }
            v
        }),
    ]
}

fn masks<T: TestElem>(rows: usize, nkv: usize) -> impl Strategy<Value = Vec<T>> {
    proptest::collection::vec(mask_row::<T>(nkv), rows).prop_map(|r| r.concat())
}

/// Key counts: 1, around one and two key tiles, and random.
fn nkv_dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => prop::sample::select(vec![1usize, 2, 3, 63, 64, 65, 127, 128, 129, 130]),
        1 => 1usize..140,
        1 => Just(0usize),
    ]
}

/// Query counts: 1, small, and past the CPU's 32-row task.
fn n_dim() -> impl Strategy<Value = usize> {
    prop::sample::select(vec![1usize, 1, 2, 3, 5, 31, 33])
}

/// Head widths: 1, odd, even.
fn hd_dim() -> impl Strategy<Value = usize> {
    prop::sample::select(vec![1usize, 1, 2, 3, 4, 5, 8, 13, 17])
}

/// Scales: the default, 1, a small and a large one.
fn scale_of(sel: u8, hd: usize) -> f64 {
    match sel % 4 {
        0 => ops::attention_default_scale(hd),
        1 => 1.0,
        2 => 0.03,
        _ => 7.5,
    }
}

/// A head-major case: (heads, hpb, n, nkv, hd, scale, q, k, v, mask).
#[derive(Debug, Clone)]
struct Case<T> {
    heads: usize,
    hpb: usize,
    n: usize,
    nkv: usize,
    hd: usize,
    scale: f64,
    q: Vec<T>,
    k: Vec<T>,
    v: Vec<T>,
    mask: Vec<T>,
}

impl<T> Case<T> {
    fn shape(&self) -> AttentionShape {
        AttentionShape::new(self.heads, self.n, self.nkv, self.hd).with_scale(self.scale)
    }
}

fn case<T: TestElem>() -> impl Strategy<Value = Case<T>> {
    (
        prop::sample::select(vec![
            (1usize, 1usize),
            (2, 1),
            (2, 2),
            (3, 1),
            (4, 2),
            (4, 4),
        ]),
        n_dim(),
        nkv_dim(),
        hd_dim(),
        any::<u8>(),
        any::<bool>(),
    )
        .prop_flat_map(|((heads, hpb), n, nkv, hd, sel, specials)| {
            // Keep each case small: shrink n when the rest is large.
            let n = if heads * nkv * hd > 4000 { n.min(3) } else { n };
            (
                Just((heads, hpb, n, nkv, hd, scale_of(sel, hd))),
                vals::<T>(heads * n * hd, specials),
                vals::<T>(heads * nkv * hd, specials),
                vals::<T>(heads * nkv * hd, specials),
                masks::<T>(heads / hpb, nkv),
            )
        })
        .prop_map(|((heads, hpb, n, nkv, hd, scale), q, k, v, mask)| Case {
            heads,
            hpb,
            n,
            nkv,
            hd,
            scale,
            q,
            k,
            v,
            mask,
        })
}

fn upload4<T: Element>(kit: &Kit, c: &Case<T>) -> Result<(Buf, Buf, Buf, Buf)> {
    Ok((
        kit.upload(&c.q)?,
        kit.upload(&c.k)?,
        kit.upload(&c.v)?,
        kit.upload(&c.mask)?,
    ))
}

fn check_fused<T: FloatElement>(c: &Case<T>) -> TestResult {
    let want = reference::attention(
        &c.q, &c.k, &c.v, None, c.heads, c.n, c.nkv, c.hd, 1, c.scale,
    );
    let what = format!(
        "attention h{} n{} nkv{} hd{} s{}",
        c.heads, c.n, c.nkv, c.hd, c.scale
    );
    on_backends(&what, &[want], |kit| {
        let (q, k, v, _) = upload4(kit, c)?;
        let out = kit.alloc(T::DTYPE, c.q.len())?;
        ops::attention(kit, &out, &q, &k, &v, c.shape())?;
        Ok(vec![out.download()?])
    })
}

fn check_masked<T: FloatElement>(c: &Case<T>) -> TestResult {
    let want = reference::attention(
        &c.q,
        &c.k,
        &c.v,
        Some(&c.mask),
        c.heads,
        c.n,
        c.nkv,
        c.hd,
        c.hpb,
        c.scale,
    );
    let what = format!(
        "attention_masked h{} hpb{} n{} nkv{} hd{}",
        c.heads, c.hpb, c.n, c.nkv, c.hd
    );
    on_backends(&what, &[want], |kit| {
        let (q, k, v, m) = upload4(kit, c)?;
        let out = kit.alloc(T::DTYPE, c.q.len())?;
        ops::attention_masked(kit, &out, &q, &k, &v, &m, c.hpb, c.shape())?;
        Ok(vec![out.download()?])
    })
}

fn check_composed<T: FloatElement>(c: &Case<T>, masked: bool) -> TestResult {
    let mask = masked.then_some(&c.mask[..]);
    let (want, p) = reference::attention_composed(
        &c.q, &c.k, &c.v, mask, c.heads, c.n, c.nkv, c.hd, c.hpb, c.scale,
    );
    let what = format!(
        "attention_composed h{} hpb{} n{} nkv{} hd{} masked {masked}",
        c.heads, c.hpb, c.n, c.nkv, c.hd
    );
    on_backends(&what, &[want, p], |kit| {
        let (q, k, v, m) = upload4(kit, c)?;
        let m = if masked { m } else { Buf::absent(T::DTYPE) };
        let out = kit.alloc(T::DTYPE, c.q.len())?;
        let s = kit.alloc(T::DTYPE, c.heads * c.n * c.nkv)?;
        ops::attention_composed(kit, &out, &s, &q, &k, &v, &m, c.hpb, c.shape())?;
        Ok(vec![out.download()?, s.download()?])
    })
}

/// A batched case: (batch, heads, n, nkv, hd, scale, q, k, v, mask, masked).
type BatchCase<T> = (
    (usize, usize, usize, usize, usize, f64),
    Vec<T>,
    Vec<T>,
    Vec<T>,
    Vec<T>,
    bool,
);

fn batch_case<T: TestElem>() -> impl Strategy<Value = BatchCase<T>> {
    (
        1usize..4,
        1usize..4,
        n_dim(),
        nkv_dim(),
        hd_dim(),
        any::<u8>(),
        any::<bool>(),
    )
        .prop_flat_map(|(batch, heads, n, nkv, hd, sel, specials)| {
            let n = if batch * heads * nkv * hd > 4000 {
                n.min(3)
            } else {
                n
            };
            let w = heads * hd;
            (
                Just((batch, heads, n, nkv, hd, scale_of(sel, hd))),
                vals::<T>(batch * n * w, specials),
                vals::<T>(batch * nkv * w, specials),
                vals::<T>(batch * nkv * w, specials),
                masks::<T>(batch, nkv),
                any::<bool>(),
            )
        })
}

/// Sequence `b` of an interleaved `[batch*len, heads*hd]` tensor, head-major.
fn to_head_major<T: Copy>(x: &[T], b: usize, len: usize, heads: usize, hd: usize) -> Vec<T> {
    let w = heads * hd;
    let mut r = Vec::with_capacity(len * w);
    for h in 0..heads {
        for i in 0..len {
            let at = (b * len + i) * w + h * hd;
            r.extend_from_slice(&x[at..at + hd]);
        }
    }
    r
}

fn check_batch<T: FloatElement>(c: &BatchCase<T>) -> TestResult {
    let ((batch, heads, n, nkv, hd, scale), q, k, v, mask, masked) = c;
    let (batch, heads, n, nkv, hd) = (*batch, *heads, *n, *nkv, *hd);
    let m = masked.then_some(&mask[..]);
    let want = reference::attention_batch(q, k, v, m, batch, heads, n, nkv, hd, *scale);
    let shape = AttentionShape::new(heads, n, nkv, hd).with_scale(*scale);
    let what = format!("attention_batch b{batch} h{heads} n{n} nkv{nkv} hd{hd} masked {masked}");
    on_backends(&what, std::slice::from_ref(&want), |kit| {
        let (bq, bk, bv) = (kit.upload(q)?, kit.upload(k)?, kit.upload(v)?);
        let bm = if *masked {
            kit.upload(mask)?
        } else {
            Buf::absent(T::DTYPE)
        };
        let out = kit.alloc(T::DTYPE, q.len())?;
        ops::attention_batch(kit, &out, &bq, &bk, &bv, &bm, batch, shape)?;
        Ok(vec![out.download()?])
    })?;
    // Each sequence is bit-identical to the head-major masked entry on its data.
    for (name, kit) in backends() {
        for b in 0..batch {
            let hm = |x: &[T], len| to_head_major(x, b, len, heads, hd);
            let row: Vec<T> = if *masked {
                mask[b * nkv..(b + 1) * nkv].to_vec()
            } else {
                vec![T::from_f64(0.0).unwrap(); nkv]
            };
            let got = (|| -> Result<Vec<T>> {
                let (bq, bk, bv, bm) = (
                    kit.upload(&hm(q, n))?,
                    kit.upload(&hm(k, nkv))?,
                    kit.upload(&hm(v, nkv))?,
                    kit.upload(&row)?,
                );
                let out = kit.alloc(T::DTYPE, heads * n * hd)?;
                if *masked {
                    ops::attention_masked(&kit, &out, &bq, &bk, &bv, &bm, heads, shape)?;
                } else {
                    ops::attention(&kit, &out, &bq, &bk, &bv, shape)?;
                }
                out.download()
            })()
            .map_err(|e| TestCaseError::fail(format!("{name}: {what}: {e}")))?;
            check_same_bits(
                &format!("{name}: {what}: sequence {b} vs head-major"),
                &got,
                &hm(&want, n),
            )
            .map_err(TestCaseError::fail)?;
        }
    }
    Ok(())
}

/// Padding a sequence at the end with dropped keys (-1e30 or -inf; their K and V hold
/// anything, even NaN) gives the unpadded sequence's bits.
fn check_padding<T: FloatElement + TestElem>(
    c: &Case<T>,
    pad: usize,
    junk: &[T],
    neg_inf: bool,
) -> TestResult {
    let (heads, n, nkv, hd) = (c.heads, c.n, c.nkv, c.hd);
    let total = nkv + pad;
    let grow = |x: &[T]| -> Vec<T> {
        let mut r = Vec::new();
        for h in 0..heads {
            r.extend_from_slice(&x[h * nkv * hd..(h + 1) * nkv * hd]);
            r.extend((0..pad * hd).map(|i| junk[i % junk.len()]));
        }
        r
    };
    let (kp, vp) = (grow(&c.k), grow(&c.v));
    let d = T::from_moderate(if neg_inf { f64::NEG_INFINITY } else { -1e30 });
    let mask: Vec<T> = (0..heads)
        .flat_map(|_| (0..total).map(move |j| if j < nkv { T::from_moderate(0.0) } else { d }))
        .collect();
    let want = reference::attention(&c.q, &c.k, &c.v, None, heads, n, nkv, hd, 1, c.scale);
    let padded = reference::attention(&c.q, &kp, &vp, Some(&mask), heads, n, total, hd, 1, c.scale);
    check_same_bits("reference: padded vs unpadded", &padded, &want)
        .map_err(TestCaseError::fail)?;
    let shape = AttentionShape::new(heads, n, total, hd).with_scale(c.scale);
    on_backends("attention_masked padded", &[want], |kit| {
        let (q, k, v, m) = (
            kit.upload(&c.q)?,
            kit.upload(&kp)?,
            kit.upload(&vp)?,
            kit.upload(&mask)?,
        );
        let out = kit.alloc(T::DTYPE, c.q.len())?;
        ops::attention_masked(kit, &out, &q, &k, &v, &m, 1, shape)?;
        Ok(vec![out.download()?])
    })
}

macro_rules! per_dtype {
    ($t:ty, $fused:ident, $masked:ident, $batch:ident, $composed:ident) => {
        proptest! {
            #![proptest_config(cfg())]

            #[test]
            fn $fused(c in case::<$t>()) {
                check_fused(&c)?;
            }

            #[test]
            fn $masked(c in case::<$t>()) {
                check_masked(&c)?;
            }

            #[test]
            fn $batch(c in batch_case::<$t>()) {
                check_batch(&c)?;
            }

            #[test]
            fn $composed(c in case::<$t>(), masked in any::<bool>()) {
                check_composed(&c, masked)?;
            }
        }
    };
}

per_dtype!(
    f32,
    attention_f32,
    attention_masked_f32,
    attention_batch_f32,
    attention_composed_f32
);
per_dtype!(
    f64,
    attention_f64,
    attention_masked_f64,
    attention_batch_f64,
    attention_composed_f64
);
per_dtype!(
    f16,
    attention_f16,
    attention_masked_f16,
    attention_batch_f16,
    attention_composed_f16
);
per_dtype!(
    bf16,
    attention_bf16,
    attention_masked_bf16,
    attention_batch_bf16,
    attention_composed_bf16
);

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 4, ..cfg() })]

    #[test]
    fn trailing_padding_is_invisible_f32(
        c in case::<f32>(),
        pad in prop::sample::select(vec![1usize, 2, 63, 64, 65, 100]),
        junk in vals::<f32>(7, true),
        neg_inf in any::<bool>(),
    ) {
        check_padding(&c, pad, &junk, neg_inf)?;
    }

    #[test]
    fn trailing_padding_is_invisible_bf16(
        c in case::<bf16>(),
        pad in prop::sample::select(vec![1usize, 2, 63, 64, 65, 100]),
        junk in vals::<bf16>(7, true),
        neg_inf in any::<bool>(),
    ) {
        check_padding(&c, pad, &junk, neg_inf)?;
    }
}

/// The widest supported head (256) and a long key sequence, deterministic values.
#[test]
fn widest_head_and_many_keys() {
    let (heads, n, nkv, hd) = (2usize, 40usize, 300usize, 256usize);
    let val = |i: usize| ((i * 2654435761) % 1000) as f32 / 500.0 - 1.0;
    let q: Vec<f32> = (0..heads * n * hd).map(val).collect();
    let k: Vec<f32> = (0..heads * nkv * hd).map(|i| val(i + 7)).collect();
    let v: Vec<f32> = (0..heads * nkv * hd).map(|i| val(i + 13)).collect();
    let want = reference::attention(
        &q,
        &k,
        &v,
        None,
        heads,
        n,
        nkv,
        hd,
        1,
        ops::attention_default_scale(hd),
    );
    assert!(ops::attention_supported(hd) && !ops::attention_supported(hd + 1));
    assert!(!ops::attention_supported(0));
    for (name, kit) in backends() {
        let (bq, bk, bv) = (
            kit.upload(&q).unwrap(),
            kit.upload(&k).unwrap(),
            kit.upload(&v).unwrap(),
        );
        let out = kit.alloc(DType::F32, q.len()).unwrap();
        ops::attention(
            &kit,
            &out,
            &bq,
            &bk,
            &bv,
            AttentionShape::new(heads, n, nkv, hd),
        )
        .unwrap();
        check_same_bits(name, &out.download::<f32>().unwrap(), &want).unwrap();
    }
}
