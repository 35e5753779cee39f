//! The general fused attention (`ops::attention_general`) against the reference oracle
//! bit for bit (any NaN equals any NaN), every float dtype: per-query masks (additive
//! and boolean, 2-D and batched, each broadcast dimension 1 or full), the causal flag
//! (alone and with a mask), grouped / multi-query K/V heads, a V width different from
//! Q/K's, both layouts; shapes around the key tile and past the CPU's 64-row blocks;
//! values with NaN, ±inf, -0.0 and subnormals. Then identities (GQA = explicit copies,
//! causal = its additive mask, boolean = its additive mask, the old entries' bits), the
//! ONNX opset 23 fixed cases (fully masked rows give 0, top-left causal), bad inputs
//! and a no-panic proptest.
//!
//! Backends: every one the suite runs (the CPU at all SIMD levels / thread counts via
//! the suite's variants, the PTX emulator, CUDA where a GPU is present), each bit for
//! bit against the oracle.
//!
//! `GPUKIT_CASES=N` raises the case count (default 256 per dtype).

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{self, AttentionMaskKind as MaskKind, AttentionShape, AttentionSpec};
use gpukit::{Buf, DType, Error, Kit, Result};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, on_kits};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// The backends under test.
fn kits() -> Vec<(&'static str, Kit)> {
    backends()
}

fn value<T: TestElem>(specials: bool) -> BoxedStrategy<T> {
    let sp = T::specials();
    let moderate = prop_oneof![
        10 => (-2.0f64..2.0).prop_map(T::from_moderate),
        1 => (-40.0f64..40.0).prop_map(T::from_moderate),
        1 => Just(T::from_moderate(0.0)),
    ];
    if specials {
        prop_oneof![40 => moderate, 1 => (0..sp.len()).prop_map(move |i| sp[i])].boxed()
    } else {
        moderate.boxed()
    }
}

fn vals<T: TestElem>(n: usize, specials: bool) -> impl Strategy<Value = Vec<T>> {
    proptest::collection::vec(value::<T>(specials), n)
}

/// Mask values: additive (0, biases, -1e30, -inf, -1e29, rarely NaN) or boolean (1, 0,
/// -0.0, 2, rarely NaN); with a bias towards rows fully masked or fully kept.
fn mask_vals<T: TestElem>(len: usize, kind: MaskKind) -> BoxedStrategy<Vec<T>> {
    let nan = T::specials()[0];
    let entry: BoxedStrategy<T> = match kind {
        MaskKind::Boolean => prop_oneof![
            8 => Just(T::from_moderate(1.0)),
            4 => Just(T::from_moderate(0.0)),
            1 => Just(T::from_moderate(-0.0)),
            1 => Just(T::from_moderate(2.0)),
            1 => Just(nan),
        ]
        .boxed(),
        _ => prop_oneof![
            8 => Just(T::from_moderate(0.0)),
            3 => (-3.0f64..3.0).prop_map(T::from_moderate),
            2 => Just(T::from_moderate(-1e30)),
            2 => Just(T::from_moderate(f64::NEG_INFINITY)),
            1 => Just(T::from_moderate(-1e29)),
            1 => Just(nan),
        ]
        .boxed(),
    };
    let drop = match kind {
        MaskKind::Boolean => T::from_moderate(0.0),
        _ => T::from_moderate(f64::NEG_INFINITY),
    };
    prop_oneof![
        6 => proptest::collection::vec(entry, len),
        1 => Just(vec![drop; len]),
    ]
    .boxed()
}

/// One general case.
#[derive(Debug, Clone)]
struct Case<T> {
    spec: AttentionSpec,
    q: Vec<T>,
    k: Vec<T>,
    v: Vec<T>,
    mask: Vec<T>,
}

fn case<T: TestElem>() -> impl Strategy<Value = Case<T>> {
    (
        1usize..3,
        prop::sample::select(vec![
            (1usize, 1usize),
            (2, 1),
            (2, 2),
            (4, 1),
            (4, 2),
            (3, 3),
        ]),
        prop::sample::select(vec![1usize, 1, 2, 3, 5, 33, 65, 70]),
        prop_oneof![
            2 => prop::sample::select(vec![1usize, 2, 3, 63, 64, 65, 127, 128, 129]),
            1 => 0usize..140,
        ],
        prop::sample::select(vec![1usize, 2, 3, 4, 5, 8, 13, 17, 40, 64, 100]),
        prop::sample::select(vec![1usize, 2, 3, 4, 5, 8, 13, 17, 33, 64, 130]),
        (
            any::<bool>(),
            any::<bool>(),
            0u8..3,
            any::<[bool; 3]>(),
            any::<u8>(),
        ),
        any::<bool>(),
    )
        .prop_flat_map(
            |(batch, (heads, kvh), n, nkv, hd, vd, (inter, causal, kind, full, sel), specials)| {
                let n = if batch * heads * nkv * (hd + vd) > 6000 {
                    n.min(5)
                } else {
                    n
                };
                let kind = [MaskKind::None, MaskKind::Additive, MaskKind::Boolean][kind as usize];
                let scale = match sel % 4 {
                    0 => ops::attention_default_scale(hd),
                    1 => 1.0,
                    2 => 0.03,
                    _ => 7.5,
                };
                let mshape = [
                    if full[0] { batch } else { 1 },
                    if full[1] { heads } else { 1 },
                    if full[2] { n } else { 1 },
                ];
                let spec = AttentionSpec::new(batch, heads, n, nkv, hd)
                    .with_kv_heads(kvh)
                    .with_v_head_dim(vd)
                    .with_interleaved(inter)
                    .with_causal(causal)
                    .with_scale(scale)
                    .with_mask_shape(kind, mshape);
                let (ql, kl, vl, _) = spec.lens().unwrap();
                let ml = if kind == MaskKind::None {
                    0
                } else {
                    mshape.iter().product::<usize>() * nkv
                };
                (
                    Just(spec),
                    vals::<T>(ql, specials),
                    vals::<T>(kl, specials),
                    vals::<T>(vl, specials),
                    mask_vals::<T>(ml, kind),
                )
            },
        )
        .prop_map(|(spec, q, k, v, mask)| Case {
            spec,
            q,
            k,
            v,
            mask,
        })
}

fn run<T: FloatElement>(kit: &Kit, c: &Case<T>) -> Result<Vec<T>> {
    let (q, k, v) = (kit.upload(&c.q)?, kit.upload(&c.k)?, kit.upload(&c.v)?);
    let m = if c.spec.mask == MaskKind::None {
        Buf::absent(T::DTYPE)
    } else {
        kit.upload(&c.mask)?
    };
    let out = kit.alloc(T::DTYPE, c.spec.lens().unwrap().3)?;
    ops::attention_general(kit, &out, &q, &k, &v, &m, &c.spec)?;
    out.download()
}

fn oracle<T: FloatElement>(c: &Case<T>) -> Vec<T> {
    let m = (c.spec.mask != MaskKind::None).then_some(&c.mask[..]);
    reference::attention_general(&c.q, &c.k, &c.v, m, &c.spec)
}

fn check<T: FloatElement>(c: &Case<T>) -> TestResult {
    let want = oracle(c);
    on_kits(kits(), &format!("{:?}", c.spec), &want, |kit| run(kit, c))
}

proptest! {
    #![proptest_config(cfg())]
    #[test]
    fn general_f32(c in case::<f32>()) { check(&c)?; }
    #[test]
    fn general_f64(c in case::<f64>()) { check(&c)?; }
    #[test]
    fn general_f16(c in case::<f16>()) { check(&c)?; }
    #[test]
    fn general_bf16(c in case::<bf16>()) { check(&c)?; }
}

fn cpu() -> Kit {
    gpukit::cpu().unwrap()
}

fn base_case(spec: AttentionSpec, seed: u64) -> Case<f32> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((x >> 33) as f64 / (1u64 << 31) as f64) * 4.0 - 2.0
    };
    let (ql, kl, vl, _) = spec.lens().unwrap();
    let mut g = |n: usize| (0..n).map(|_| next() as f32).collect::<Vec<f32>>();
    Case {
        spec,
        q: g(ql),
        k: g(kl),
        v: g(vl),
        mask: Vec::new(),
    }
}

/// Grouped-query attention is bit-identical to full attention on K/V heads copied.
#[test]
fn gqa_equals_copied_heads() {
    for &(heads, kvh, n, nkv, hd, vd) in &[(4, 1, 70, 130, 8, 5), (6, 2, 3, 65, 13, 16)] {
        let spec = AttentionSpec::new(2, heads, n, nkv, hd)
            .with_kv_heads(kvh)
            .with_v_head_dim(vd)
            .with_causal(true);
        let c = base_case(spec, 7);
        let g = heads / kvh;
        let rep = |x: &[f32], w: usize| {
            let mut r = Vec::new();
            for b in 0..2 {
                for h in 0..heads {
                    let at = (b * kvh + h / g) * nkv * w;
                    r.extend_from_slice(&x[at..at + nkv * w]);
                }
            }
            r
        };
        let full = Case {
            spec: spec.with_kv_heads(heads),
            k: rep(&c.k, hd),
            v: rep(&c.v, vd),
            ..c.clone()
        };
        let got = run(&cpu(), &c).unwrap();
        let want = run(&cpu(), &full).unwrap();
        gpukit_tests::check_same_bits("gqa", &got, &want).unwrap();
        gpukit_tests::check_same_bits("gqa oracle", &got, &oracle(&c)).unwrap();
    }
}

/// Causal equals its explicit additive mask (-inf above the diagonal, top-left), and a
/// boolean mask equals its additive spelling (0 → -inf, 1 → 0); n != nkv both ways.
#[test]
fn causal_and_boolean_equal_additive_masks() {
    for &(n, nkv) in &[(130, 70), (70, 130), (64, 64), (1, 200)] {
        let spec = AttentionSpec::new(1, 2, n, nkv, 8);
        let c = base_case(spec.with_causal(true), 11);
        let add: Vec<f32> = (0..n * nkv)
            .map(|x| {
                if x % nkv > x / nkv {
                    f32::NEG_INFINITY
                } else {
                    0.0
                }
            })
            .collect();
        let boolean: Vec<f32> = add
            .iter()
            .map(|&a| if a == 0.0 { 1.0 } else { 0.0 })
            .collect();
        let got = run(&cpu(), &c).unwrap();
        for (kind, mask) in [(MaskKind::Additive, add), (MaskKind::Boolean, boolean)] {
            let m = Case {
                spec: spec.with_mask_shape(kind, [1, 1, n]),
                mask,
                ..c.clone()
            };
            let want = run(&cpu(), &m).unwrap();
            gpukit_tests::check_same_bits("causal", &got, &want).unwrap();
        }
    }
}

/// The existing entries are special cases: unmasked and per-key masks (no fully masked
/// row) give the bits of `attention` / `attention_masked`.
#[test]
fn old_entries_are_special_cases() {
    let (heads, n, nkv, hd) = (4, 70, 130, 16);
    let spec = AttentionSpec::new(1, heads, n, nkv, hd);
    let mut c = base_case(spec, 3);
    c.mask = (0..2 * nkv)
        .map(|j| match j % 7 {
            0 => -1e30,
            1 => 0.5,
            _ => 0.0,
        })
        .collect();
    let kit = cpu();
    let (q, k, v, m) = (
        kit.upload(&c.q).unwrap(),
        kit.upload(&c.k).unwrap(),
        kit.upload(&c.v).unwrap(),
        kit.upload(&c.mask).unwrap(),
    );
    let out = kit.alloc(DType::F32, c.q.len()).unwrap();
    let shape = AttentionShape::new(heads, n, nkv, hd);
    ops::attention(&kit, &out, &q, &k, &v, shape).unwrap();
    gpukit_tests::check_same_bits(
        "unmasked",
        &run(&kit, &c).unwrap(),
        &out.download::<f32>().unwrap(),
    )
    .unwrap();
    ops::attention_masked(&kit, &out, &q, &k, &v, &m, 2, shape).unwrap();
    // Heads 0, 1 read row 0 and heads 2, 3 row 1: run the two halves separately.
    let got = {
        let mut r = Vec::new();
        for half in 0..2 {
            let hs = AttentionSpec::new(1, 2, n, nkv, hd).with_mask(MaskKind::Additive, [0, 0, 0]);
            let at = half * 2 * n * hd;
            let ak = half * 2 * nkv * hd;
            let part = Case {
                spec: hs,
                q: c.q[at..at + 2 * n * hd].to_vec(),
                k: c.k[ak..ak + 2 * nkv * hd].to_vec(),
                v: c.v[ak..ak + 2 * nkv * hd].to_vec(),
                mask: c.mask[half * nkv..(half + 1) * nkv].to_vec(),
            };
            r.extend(run(&kit, &part).unwrap());
        }
        r
    };
    gpukit_tests::check_same_bits("masked", &got, &out.download::<f32>().unwrap()).unwrap();
}

/// ONNX opset 23 (onnx 1.23.2 reference and onnxruntime 1.32 agree): a fully masked row
/// (boolean false or -inf) is 0; causal is top-left (query i keeps keys j <= i) also
/// when n != nkv. Zero queries and keys make the weights equal, so rows are means of V.
#[test]
fn onnx_fixed_cases() {
    for (name, kit) in kits() {
        onnx_fixed_cases_on(name, &kit);
    }
}

fn onnx_fixed_cases_on(name: &str, kit: &Kit) {
    let d = 4;
    // Causal, n = 2, nkv = 4, V rows = unit vectors: [[1,0,0,0],[.5,.5,0,0]].
    let eye: Vec<f32> = (0..16)
        .map(|x| if x % 5 == 0 { 1.0 } else { 0.0 })
        .collect();
    let c = Case {
        spec: AttentionSpec::new(1, 1, 2, 4, d).with_causal(true),
        q: vec![0.0; 8],
        k: vec![0.0; 16],
        v: eye.clone(),
        mask: vec![],
    };
    assert_eq!(
        run(kit, &c).unwrap(),
        vec![1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0]
    );
    // Causal, n = 4, nkv = 2: rows 1.. keep both keys.
    let c = Case {
        spec: AttentionSpec::new(1, 1, 4, 2, d).with_causal(true),
        q: vec![0.0; 16],
        k: vec![0.0; 8],
        v: eye[..8].to_vec(),
        mask: vec![],
    };
    let r = run(kit, &c).unwrap();
    assert_eq!(&r[..4], &[1.0, 0.0, 0.0, 0.0]);
    for i in 1..4 {
        assert_eq!(&r[i * 4..i * 4 + 4], &[0.5, 0.5, 0.0, 0.0]);
    }
    // Fully masked row 0 (boolean and -inf): +0.0; row 1 keeps keys 0 and 1.
    for (kind, mask) in [
        (MaskKind::Boolean, vec![0.0f32, 0.0, 0.0, 1.0, 1.0, 0.0]),
        (
            MaskKind::Additive,
            vec![f32::NEG_INFINITY; 3]
                .into_iter()
                .chain([0.0, 0.0, f32::NEG_INFINITY])
                .collect(),
        ),
    ] {
        let c = Case {
            spec: AttentionSpec::new(1, 1, 2, 3, d).with_mask_shape(kind, [1, 1, 2]),
            q: vec![0.0; 8],
            k: vec![0.0; 12],
            v: eye[..12].to_vec(),
            mask,
        };
        let r = run(kit, &c).unwrap();
        assert!(
            r[..4].iter().all(|x| x.to_bits() == 0),
            "{name} {kind:?}: {r:?}"
        );
        assert_eq!(&r[4..], &[0.5, 0.5, 0.0, 0.0]);
    }
    // nkv = 0: +0.0 everywhere.
    let c = Case {
        spec: AttentionSpec::new(1, 1, 2, 0, d),
        q: vec![1.0; 8],
        k: vec![],
        v: vec![],
        mask: vec![],
    };
    assert!(run(kit, &c).unwrap().iter().all(|x: &f32| x.to_bits() == 0));
}

fn expect_err(r: Result<()>, want: fn(&Error) -> bool, what: &str) {
    match r {
        Err(e) if want(&e) => {}
        other => panic!("{what}: unexpected {other:?}"),
    }
}

#[test]
fn bad_inputs() {
    let kit = cpu();
    let spec = AttentionSpec::new(1, 4, 3, 5, 8)
        .with_kv_heads(2)
        .with_v_head_dim(6);
    let (ql, kl, vl, ol) = spec.lens().unwrap();
    let b = |n| kit.alloc(DType::F32, n).unwrap();
    let (q, k, v, o) = (b(ql), b(kl), b(vl), b(ol));
    let none = Buf::absent(DType::F32);
    let inv = |e: &Error| matches!(e, Error::InvalidArgument { .. });
    let len = |e: &Error| matches!(e, Error::Length { .. });
    ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec).unwrap();
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec.with_kv_heads(3)),
        inv,
        "kv_heads 3",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec.with_kv_heads(0)),
        inv,
        "kv_heads 0",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec.with_v_head_dim(0)),
        inv,
        "vd 0",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec.with_v_head_dim(257)),
        inv,
        "vd 257",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &spec.with_scale(f64::NAN)),
        inv,
        "scale",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &v, &k, &none, &spec),
        len,
        "k/v swapped",
    );
    expect_err(
        ops::attention_general(&kit, &q, &o, &k, &v, &none, &spec),
        len,
        "q/o swapped",
    );
    let ms = spec.with_mask_shape(MaskKind::Boolean, [1, 4, 3]);
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &b(4 * 3 * 5 - 1), &ms),
        len,
        "short mask",
    );
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &ms),
        |e| matches!(e, Error::Absent { .. }),
        "absent mask",
    );
    let v8 = b(80);
    expect_err(
        ops::attention_general(&kit, &q, &q, &k, &v8, &none, &spec.with_v_head_dim(8)),
        inv,
        "overlap",
    );
    let f64b = kit.alloc(DType::F64, ql).unwrap();
    expect_err(
        ops::attention_general(&kit, &o, &f64b, &k, &v, &none, &spec),
        |e| matches!(e, Error::DType { .. }),
        "dtype",
    );
    let huge = AttentionSpec::new(usize::MAX / 2, 4, 3, 5, 8);
    expect_err(
        ops::attention_general(&kit, &o, &q, &k, &v, &none, &huge),
        |e| matches!(e, Error::SizeOverflow { .. }),
        "overflow",
    );
}

proptest! {
    #![proptest_config(cfg())]
    /// Random (mostly invalid) calls never panic: they return `Ok` or an `Err`.
    #[test]
    fn no_panic(
        dims in proptest::collection::vec(0usize..9, 9),
        strides in any::<[u8; 3]>(),
        lens in proptest::collection::vec(0usize..400, 5),
        flags in any::<(bool, bool, u8)>(),
    ) {
        let kit = cpu();
        let kind = [MaskKind::None, MaskKind::Additive, MaskKind::Boolean][flags.2 as usize % 3];
        let spec = AttentionSpec::new(dims[0], dims[1], dims[2], dims[3], dims[4])
            .with_kv_heads(dims[5])
            .with_v_head_dim(dims[6])
            .with_interleaved(flags.0)
            .with_causal(flags.1)
            .with_mask(kind, strides.map(usize::from));
        let b = |n| kit.upload(&vec![0.5f32; n]).unwrap();
        let r = ops::attention_general(&kit, &b(lens[0]), &b(lens[1]), &b(lens[2]), &b(lens[3]), &b(lens[4]), &spec);
        let _ = r;
    }
}
