//! Equivalence, bad-input and no-panic tests of the normalisations added to the `norm`
//! group: `layer_norm_ex` (optional bias, optional mean / inverse-std outputs),
//! `group_norm` and `rms_norm`, on every backend of [`gpukit_tests::backends`] against
//! the reference oracle, bit for bit (any NaN equals any NaN).
//!
//! Shapes reach empty rows and empty row counts, rows of 1, just past 32 lanes and past
//! one chunk (8192); values reach NaN, ±inf, -0.0 and subnormals (through
//! [`gpukit_tests::values`]). `GPUKIT_CASES=N` changes the case count (256 by default).

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::prelude::*;
use gpukit::{Buf, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, len_with_edges, values};
use gpukit_tests::{cfg, on_backends};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

fn rows_n() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        8 => (0usize..6, len_with_edges(70)),
        1 => (1usize..3, prop::sample::select(vec![8191usize, 8192, 8193, 16385])),
    ]
}

fn eps() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![0.0, 1e-5, 1e-12, 0.5, 3.0, 1e-300])
}

// ---------------------------------------------------------------------------------------
// layer_norm_ex
// ---------------------------------------------------------------------------------------

/// rows, n, x, scale, bias (None: no bias), stats wanted, eps, in place.
type LnCase<T> = (
    usize,
    usize,
    Vec<T>,
    Vec<T>,
    Option<Vec<T>>,
    bool,
    f64,
    bool,
);

fn ln_case<T: TestElem>() -> impl Strategy<Value = LnCase<T>> {
    (rows_n(), eps(), any::<bool>(), any::<bool>()).prop_flat_map(
        |((rows, n), eps, stats, in_place)| {
            (
                Just(rows),
                Just(n),
                values::<T>(rows * n),
                values::<T>(n),
                prop::option::of(values::<T>(n)),
                Just(stats),
                Just(eps),
                Just(in_place),
            )
        },
    )
}

fn check_ln<T: FloatElement>(c: &LnCase<T>) -> TestResult
where
    T::Real: Element,
{
    let (rows, n, x, sc, bi, stats, eps, in_place) = c;
    let want = reference::layer_norm_ex(x, sc, bi.as_deref(), *rows, *n, *eps);
    let p = ops::LayerNorm {
        rows: *rows,
        n: *n,
        eps: *eps,
    };
    let what = format!(
        "layer_norm_ex {rows}x{n} eps {eps} bias {} stats {stats}",
        bi.is_some()
    );
    // y, and (when asked) the statistics; the same launch gives both.
    let run = |kit: &Kit| -> gpukit::Result<(Vec<T>, Vec<T::Real>)> {
        let (bx, bs) = (kit.upload(x)?, kit.upload(sc)?);
        let bb = bi.as_ref().map(|b| kit.upload(b)).transpose()?;
        let r = ops::compute_dtype(T::DTYPE);
        let (m, s) = (kit.alloc(r, *rows)?, kit.alloc(r, *rows)?);
        let st = stats.then_some((&m, &s));
        let out = if *in_place {
            bx.clone()
        } else {
            kit.alloc(T::DTYPE, x.len())?
        };
        ops::layer_norm_ex(kit, &out, &bx, &bs, bb.as_ref(), st, p)?;
        let mut v = Vec::new();
        if *stats {
            v = m.download()?;
            v.extend(s.download::<T::Real>()?);
        }
        Ok((out.download()?, v))
    };
    on_backends(&what, &want.y, |kit| run(kit).map(|r| r.0))?;
    if *stats {
        let mut w = want.mean.clone();
        w.extend(&want.inv_std);
        on_backends(&format!("{what} (mean, inv_std)"), &w, |kit| {
            run(kit).map(|r| r.1)
        })?;
    }
    // With a bias, the bits of the existing layer_norm (oracle and kernel).
    if let Some(b) = bi {
        let old = reference::layer_norm(x, sc, b, *rows, *n, *eps);
        on_backends(&format!("{what} = layer_norm"), &old, |kit| {
            let (bx, bs, bb) = (kit.upload(x)?, kit.upload(sc)?, kit.upload(b)?);
            let out = kit.alloc(T::DTYPE, x.len())?;
            ops::layer_norm(kit, &out, &bx, &bs, &bb, p)?;
            out.download()
        })?;
        prop_assert!(gpukit_tests::check_same_bits("oracles", &want.y, &old).is_ok());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// group_norm
// ---------------------------------------------------------------------------------------

/// shape, groups, x, scale, bias, eps, in place.
type GnCase<T> = (Vec<usize>, usize, Vec<T>, Vec<T>, Vec<T>, f64, bool);

fn gn_case<T: TestElem>() -> impl Strategy<Value = GnCase<T>> {
    (
        prop_oneof![4 => 1usize..4, 1 => Just(0usize)],
        prop_oneof![4 => 1usize..4, 1 => Just(1usize)],
        prop_oneof![4 => 1usize..4, 1 => Just(0usize)],
        prop::collection::vec(
            prop_oneof![4 => 1usize..9, 1 => Just(0usize), 1 => Just(33usize)],
            0..3,
        ),
        prop_oneof![6 => Just(()).prop_map(|_| 0usize), 1 => Just(1usize)],
        eps(),
        any::<bool>(),
    )
        .prop_flat_map(|(n, groups, per, spatial, big, eps, in_place)| {
            let c = groups * per;
            let mut shape = vec![n, c];
            shape.extend(spatial);
            if big == 1 && n > 0 {
                // One group past a chunk: [1, groups, 8193].
                shape = vec![1, groups, 8193];
            }
            let c = shape[1];
            let total: usize = shape.iter().product();
            (
                Just(shape),
                Just(groups),
                values::<T>(total),
                values::<T>(c),
                values::<T>(c),
                Just(eps),
                Just(in_place),
            )
        })
}

fn check_gn<T: FloatElement>(c: &GnCase<T>) -> TestResult {
    let (shape, groups, x, sc, bi, eps, in_place) = c;
    let s: usize = shape[2..].iter().product();
    let want = reference::group_norm(x, sc, bi, shape[0], shape[1], s, *groups, *eps);
    let what = format!("group_norm {shape:?} groups {groups} eps {eps}");
    on_backends(&what, &want, |kit| {
        let (bx, bs, bb) = (kit.upload(x)?, kit.upload(sc)?, kit.upload(bi)?);
        let p = ops::GroupNorm {
            shape,
            groups: *groups,
            eps: *eps,
        };
        let out = if *in_place {
            bx.clone()
        } else {
            kit.alloc(T::DTYPE, x.len())?
        };
        ops::group_norm(kit, &out, &bx, &bs, &bb, p)?;
        out.download()
    })
}

// ---------------------------------------------------------------------------------------
// rms_norm
// ---------------------------------------------------------------------------------------

type RmsCase<T> = (usize, usize, Vec<T>, Vec<T>, f64, bool);

fn rms_case<T: TestElem>() -> impl Strategy<Value = RmsCase<T>> {
    (rows_n(), eps(), any::<bool>()).prop_flat_map(|((rows, n), eps, in_place)| {
        (
            Just(rows),
            Just(n),
            values::<T>(rows * n),
            values::<T>(n),
            Just(eps),
            Just(in_place),
        )
    })
}

fn check_rms<T: FloatElement>(c: &RmsCase<T>) -> TestResult {
    let (rows, n, x, sc, eps, in_place) = c;
    let want = reference::rms_norm(x, sc, *rows, *n, *eps);
    on_backends(&format!("rms_norm {rows}x{n} eps {eps}"), &want, |kit| {
        let (bx, bs) = (kit.upload(x)?, kit.upload(sc)?);
        let p = ops::RmsNorm {
            rows: *rows,
            n: *n,
            eps: *eps,
        };
        let out = if *in_place {
            bx.clone()
        } else {
            kit.alloc(T::DTYPE, x.len())?
        };
        ops::rms_norm(kit, &out, &bx, &bs, p)?;
        out.download()
    })
}

macro_rules! float_dtypes {
    ($name:ident, $strategy:ident, $check:ident) => {
        mod $name {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>()) { $check::<f32>(&c)?; }
                #[test] fn t_f64(c in $strategy::<f64>()) { $check::<f64>(&c)?; }
                #[test] fn t_f16(c in $strategy::<f16>()) { $check::<f16>(&c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>()) { $check::<bf16>(&c)?; }
            }
        }
    };
}

float_dtypes!(layer_norm_ex, ln_case, check_ln);
float_dtypes!(group_norm, gn_case, check_gn);
float_dtypes!(rms_norm, rms_case, check_rms);

// ---------------------------------------------------------------------------------------
// Fixed values: hand-derived.
// ---------------------------------------------------------------------------------------

#[test]
fn fixed_values() {
    let k = kit();
    // Row [1, 2, 3, 4]: mean 2.5, var 1.25; eps 0.75 makes den = sqrt(2) exactly rounded.
    let x = k.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let s = k.upload(&[1.0f32, 1.0, 1.0, -2.0]).unwrap();
    let out = k.alloc(DType::F32, 4).unwrap();
    let (m, is) = (
        k.alloc(DType::F32, 1).unwrap(),
        k.alloc(DType::F32, 1).unwrap(),
    );
    let p = ops::LayerNorm {
        rows: 1,
        n: 4,
        eps: 0.75,
    };
    ops::layer_norm_ex(&k, &out, &x, &s, None, Some((&m, &is)), p).unwrap();
    let den = 2.0f32.sqrt();
    let want = [-1.5f32 / den, -0.5 / den, 0.5 / den, (1.5 / den) * -2.0];
    assert_eq!(out.download::<f32>().unwrap(), want);
    assert_eq!(m.download::<f32>().unwrap(), [2.5]);
    assert_eq!(is.download::<f32>().unwrap(), [1.0 / den]);
    // No bias keeps a -0.0 product (a +0.0 bias would give +0.0): constant row, scale -1.
    let x = k.upload(&[3.0f32, 3.0]).unwrap();
    let s = k.upload(&[-1.0f32, 1.0]).unwrap();
    let out = k.alloc(DType::F32, 2).unwrap();
    let p2 = ops::LayerNorm {
        rows: 1,
        n: 2,
        eps: 1.0,
    };
    ops::layer_norm_ex(&k, &out, &x, &s, None, None, p2).unwrap();
    let got = out.download::<f32>().unwrap();
    assert_eq!(got[0].to_bits(), (-0.0f32).to_bits());
    assert_eq!(got[1].to_bits(), 0.0f32.to_bits());
    // rms_norm of [3, 4] with eps 0: ms = 12.5, den = sqrt(12.5).
    let x = k.upload(&[3.0f32, 4.0]).unwrap();
    let s = k.upload(&[2.0f32, 1.0]).unwrap();
    let out = k.alloc(DType::F32, 2).unwrap();
    let pr = ops::RmsNorm {
        rows: 1,
        n: 2,
        eps: 0.0,
    };
    ops::rms_norm(&k, &out, &x, &s, pr).unwrap();
    let den = 12.5f32.sqrt();
    assert_eq!(
        out.download::<f32>().unwrap(),
        [(3.0 / den) * 2.0, 4.0 / den]
    );
    // group_norm [1, 4, 1] in 2 groups: rows [1, 3] and [5, 9]; means 2, 7; vars 1, 4.
    let x = k.upload(&[1.0f32, 3.0, 5.0, 9.0]).unwrap();
    let sc = k.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let bi = k.upload(&[0.5f32, 0.0, -1.0, 1.0]).unwrap();
    let out = k.alloc(DType::F32, 4).unwrap();
    let pg = ops::GroupNorm {
        shape: &[1, 4, 1],
        groups: 2,
        eps: 0.0,
    };
    ops::group_norm(&k, &out, &x, &sc, &bi, pg).unwrap();
    assert_eq!(out.download::<f32>().unwrap(), [-0.5, 2.0, -4.0, 5.0]);
    // n = 0 with statistics: NaN mean and inv_std for every row.
    let e = k.alloc(DType::F32, 0).unwrap();
    let (m, is) = (
        k.alloc(DType::F32, 3).unwrap(),
        k.alloc(DType::F32, 3).unwrap(),
    );
    let p0 = ops::LayerNorm {
        rows: 3,
        n: 0,
        eps: 1e-5,
    };
    ops::layer_norm_ex(&k, &e, &e, &e, None, Some((&m, &is)), p0).unwrap();
    assert!(m.download::<f32>().unwrap().iter().all(|v| v.is_nan()));
    assert!(is.download::<f32>().unwrap().iter().all(|v| v.is_nan()));
}

// ---------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------

fn kit() -> Kit {
    Kit::cpu().unwrap()
}

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

fn err_text(r: gpukit::Result<()>) -> String {
    r.expect_err("must fail").to_string()
}

#[test]
fn layer_norm_ex_errors() {
    let k = kit();
    let (x, out, s, b) = (f32s(&k, 12), f32s(&k, 12), f32s(&k, 4), f32s(&k, 4));
    let (m, is) = (f32s(&k, 3), f32s(&k, 3));
    let p = |rows, n, eps| ops::LayerNorm { rows, n, eps };
    let e = err_text(ops::layer_norm_ex(
        &k,
        &out,
        &x,
        &s,
        Some(&f32s(&k, 3)),
        None,
        p(3, 4, 0.0),
    ));
    assert!(e.contains("layer_norm_ex") && e.contains("bias"), "{e}");
    let e = err_text(ops::layer_norm_ex(
        &k,
        &out,
        &x,
        &s,
        None,
        Some((&f32s(&k, 2), &is)),
        p(3, 4, 0.0),
    ));
    assert!(e.contains("mean"), "{e}");
    // Statistics of f16 input are f32 (the compute type), not f16.
    let x16 = k.zeros(DType::F16, 12).unwrap();
    let o16 = k.zeros(DType::F16, 12).unwrap();
    let s16 = k.zeros(DType::F16, 4).unwrap();
    let m16 = k.zeros(DType::F16, 3).unwrap();
    let e = err_text(ops::layer_norm_ex(
        &k,
        &o16,
        &x16,
        &s16,
        None,
        Some((&m16, &m16)),
        p(3, 4, 0.0),
    ));
    assert!(e.contains("f32"), "{e}");
    ops::layer_norm_ex(&k, &o16, &x16, &s16, None, Some((&m, &is)), p(3, 4, 0.0)).unwrap();
    // Bias of another dtype, negative / NaN eps, bad shapes, overlaps.
    assert!(matches!(
        ops::layer_norm_ex(&k, &out, &x, &s, Some(&s16), None, p(3, 4, 0.0)),
        Err(Error::DType { .. })
    ));
    for eps in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            ops::layer_norm_ex(&k, &out, &x, &s, Some(&b), None, p(3, 4, eps)),
            Err(Error::InvalidArgument { .. })
        ));
    }
    assert!(matches!(
        ops::layer_norm_ex(&k, &out, &x, &s, None, None, p(usize::MAX, 4, 0.0)),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::layer_norm_ex(&k, &out, &x, &s, None, None, p(3, 5, 0.0)),
        Err(Error::Length { .. })
    ));
    let both = f32s(&k, 6);
    let (m1, s1) = (both.view(0, 3).unwrap(), both.view(2, 3).unwrap());
    assert!(matches!(
        ops::layer_norm_ex(&k, &out, &x, &s, None, Some((&m1, &s1)), p(3, 4, 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::layer_norm_ex(&k, &out, &x, &s, None, Some((&m, &m)), p(3, 4, 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::layer_norm_ex(
            &k,
            &out,
            &x,
            &s,
            Some(&Buf::absent(DType::F32)),
            None,
            p(3, 4, 0.0)
        ),
        Err(Error::Absent { .. })
    ));
    let xi = k.zeros(DType::I32, 12).unwrap();
    assert!(matches!(
        ops::layer_norm_ex(
            &k,
            &xi,
            &xi,
            &k.zeros(DType::I32, 4).unwrap(),
            None,
            None,
            p(3, 4, 0.0)
        ),
        Err(Error::DType { .. })
    ));
    // In place is fine.
    ops::layer_norm_ex(&k, &x, &x, &s, Some(&b), Some((&m, &is)), p(3, 4, 1e-5)).unwrap();
}

#[test]
fn group_norm_errors() {
    let k = kit();
    let (x, out, s, b) = (f32s(&k, 24), f32s(&k, 24), f32s(&k, 4), f32s(&k, 4));
    let g = |shape, groups, eps| ops::GroupNorm { shape, groups, eps };
    let e = err_text(ops::group_norm(&k, &out, &x, &s, &b, g(&[2, 4, 3], 3, 0.0)));
    assert!(
        e.contains("group_norm") && e.contains("num_groups 3") && e.contains("[2, 4, 3]"),
        "{e}"
    );
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &s, &b, g(&[2, 4, 3], 0, 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &s, &b, g(&[24], 1, 0.0)),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &s, &b, g(&[2, 4, 4], 2, 0.0)),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &f32s(&k, 2), &b, g(&[2, 4, 3], 2, 0.0)),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &s, &b, g(&[2, 4, 3], 2, -1.0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &out, &x, &s, &b, g(&[usize::MAX, 4, 3], 2, 0.0)),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::group_norm(&k, &s, &x, &s, &b, g(&[1, 4, 1], 2, 0.0)),
        Err(Error::Length { .. }) | Err(Error::InvalidArgument { .. })
    ));
    ops::group_norm(&k, &x, &x, &s, &b, g(&[2, 4, 3], 2, 1e-5)).unwrap();
}

#[test]
fn rms_norm_errors() {
    let k = kit();
    let (x, out, s) = (f32s(&k, 12), f32s(&k, 12), f32s(&k, 4));
    let p = |rows, n, eps| ops::RmsNorm { rows, n, eps };
    let e = err_text(ops::rms_norm(&k, &out, &x, &f32s(&k, 3), p(3, 4, 0.0)));
    assert!(e.contains("rms_norm") && e.contains("scale"), "{e}");
    assert!(matches!(
        ops::rms_norm(&k, &out, &x, &s, p(3, 4, f64::NAN)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::rms_norm(&k, &out, &x, &s, p(4, 4, 0.0)),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::rms_norm(&k, &out, &x, &s, p(usize::MAX, 2, 0.0)),
        Err(Error::SizeOverflow { .. })
    ));
    let s64 = k.zeros(DType::F64, 4).unwrap();
    assert!(matches!(
        ops::rms_norm(&k, &out, &x, &s64, p(3, 4, 0.0)),
        Err(Error::DType { .. })
    ));
    let part = x.view(0, 4).unwrap();
    assert!(matches!(
        ops::rms_norm(&k, &x, &x, &part, p(3, 4, 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    ops::rms_norm(&k, &x, &x, &s, p(3, 4, 1e-6)).unwrap();
}

// ---------------------------------------------------------------------------------------
// No panic
// ---------------------------------------------------------------------------------------

fn small() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..12, 1 => Just(usize::MAX), 1 => Just(1usize << 62)]
}

fn scalar() -> impl Strategy<Value = f64> {
    prop_oneof![3 => 0.0f64..2.0, 1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, -1.0, 0.0, -0.0])]
}

fn buf(k: &Kit, d: u8, n: usize) -> Buf {
    k.zeros(DType::ALL[d as usize % 6], n.min(64)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random (mostly invalid) calls: each returns, none panics.
    #[test]
    fn random_norm_ext_calls_never_panic(
        which in 0u8..3, d in any::<u8>(), d2 in any::<u8>(), r in small(), n in small(),
        shape in prop::collection::vec(small(), 0..4), groups in small(),
        lx in small(), ls in small(), lm in small(), flags in 0u8..4, e in scalar(),
    ) {
        let k = kit();
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let (x, s) = (buf(&k, d, lx), buf(&k, d, ls));
            let _ = match which {
                0 => {
                    let (m, is) = (buf(&k, d2, lm), buf(&k, d2, lm));
                    let b = buf(&k, d, ls);
                    ops::layer_norm_ex(&k, &x, &x, &s, (flags & 1 == 1).then_some(&b), (flags & 2 == 2).then_some((&m, &is)), ops::LayerNorm { rows: r, n, eps: e })
                }
                1 => ops::group_norm(&k, &x, &x, &s, &buf(&k, d, ls), ops::GroupNorm { shape: &shape, groups, eps: e }),
                _ => ops::rms_norm(&k, &buf(&k, d, lx), &x, &s, ops::RmsNorm { rows: r, n, eps: e }),
            };
        }));
        prop_assert!(res.is_ok());
    }
}
