//! The GEMM family's model-author forms on every backend of
//! [`gpukit_tests::backends`] against the reference oracle, bit for bit (any NaN
//! equals any NaN), every float dtype:
//! - `linear` (PyTorch `[out, in]` weights, any leading dims, with and without bias),
//!   also checked equal to `gemm` with `trans_b` on the same buffers;
//! - `matmul_broadcast` (numpy batch broadcasting on both operands, ranks 2 to 5,
//!   batch dims of 0 and 1, k = 0), also checked equal to `matmul` per output matrix;
//! - gemm's four transpose combinations giving the same bits for the same values.
//!
//! gemm with `trans_a` and a broadcast C is in the gemm suite of nn_conv/oracle.rs; the bad
//! inputs of all three are at the end of this file.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{GemmC, GemmParams};
use gpukit::{Buf, DType, Error, Kit, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, cfg, dim, on_backends, values};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---------------------------------------------------------------------------------
// linear
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct LinearCase<T> {
    lead: Vec<usize>,
    inf: usize,
    outf: usize,
    x: Vec<T>,
    w: Vec<T>,
    bias: Option<Vec<T>>,
}

fn linear_case<T: TestElem>() -> impl Strategy<Value = LinearCase<T>> {
    (
        proptest::collection::vec(dim(6), 0..3),
        prop_oneof![4 => dim(40), 1 => 250usize..290],
        dim(40),
        any::<bool>(),
    )
        .prop_flat_map(|(lead, inf, outf, has_bias)| {
            let rows: usize = lead.iter().product();
            (
                Just(lead),
                Just(inf),
                Just(outf),
                values::<T>(rows * inf),
                values::<T>(outf * inf),
                values::<T>(outf).prop_map(move |b| has_bias.then_some(b)),
            )
        })
        .prop_map(|(lead, inf, outf, x, w, bias)| LinearCase {
            lead,
            inf,
            outf,
            x,
            w,
            bias,
        })
}

fn check_linear<T: FloatElement>(c: &LinearCase<T>) -> Result<(), TestCaseError> {
    let rows: usize = c.lead.iter().product();
    let want = reference::linear(&c.x, &c.w, c.bias.as_deref(), rows, c.inf, c.outf);
    let mut x_dims = c.lead.clone();
    x_dims.push(c.inf);
    let what = format!(
        "linear x {x_dims:?} weight [{}, {}] bias {}",
        c.outf,
        c.inf,
        c.bias.is_some()
    );
    on_backends(&what, &want, |kit| {
        let (x, w) = (kit.upload(&c.x)?, kit.upload(&c.w)?);
        let bias = c.bias.as_ref().map(|b| kit.upload(b)).transpose()?;
        let y = kit.alloc(T::DTYPE, rows * c.outf)?;
        ops::linear(kit, &y, &x, &x_dims, &w, [c.outf, c.inf], bias.as_ref())?;
        y.download::<T>()
    })?;
    // gemm with trans_b on the same buffers gives the same bits (both equal `want`).
    on_backends(&format!("{what} as gemm trans_b"), &want, |kit| {
        let (x, w) = (kit.upload(&c.x)?, kit.upload(&c.w)?);
        let bias = c.bias.as_ref().map(|b| kit.upload(b)).transpose()?;
        let y = kit.alloc(T::DTYPE, rows * c.outf)?;
        let p = GemmParams {
            trans_b: true,
            ..GemmParams::new(rows, c.inf, c.outf)
        };
        ops::gemm(kit, &y, &x, &w, None, bias.as_ref(), &p)?;
        y.download::<T>()
    })
}

// ---------------------------------------------------------------------------------
// matmul_broadcast
// ---------------------------------------------------------------------------------

type BcastCase<T> = (Vec<usize>, Vec<T>, Vec<usize>, Vec<T>);

/// Batch dims of up to 3 axes for both operands that broadcast: each axis is shared,
/// or 1 on one side (or both), or missing on the shorter side.
fn bcast_case<T: TestElem>() -> impl Strategy<Value = BcastCase<T>> {
    (
        proptest::collection::vec(
            (prop_oneof![3 => 1usize..4, 1 => Just(0usize)], 0u8..4),
            0..4,
        ),
        0usize..4,
        0usize..4,
        dim(20),
        prop_oneof![4 => dim(20), 1 => 250usize..280],
        dim(20),
    )
        .prop_flat_map(|(axes, drop_a, drop_b, m, k, n)| {
            let (m, n) = if k > 64 { (m.min(5), n.min(9)) } else { (m, n) };
            // Per axis: 0 both, 1 a broadcast, 2 b broadcast, 3 both 1.
            let mut ab: Vec<usize> = axes
                .iter()
                .map(|&(d, w)| if w == 1 || w == 3 { 1 } else { d })
                .collect();
            let mut bb: Vec<usize> = axes
                .iter()
                .map(|&(d, w)| if w == 2 || w == 3 { 1 } else { d })
                .collect();
            // Drop leading axes of one side where the other can carry them.
            let da = drop_a.min(ab.len());
            ab.drain(..if drop_b == 0 { da } else { 0 });
            let db = drop_b.min(bb.len());
            bb.drain(..if drop_a != 0 { 0 } else { db });
            ab.extend([m, k]);
            bb.extend([k, n]);
            let (na, nb) = (ab.iter().product(), bb.iter().product());
            (Just(ab), values::<T>(na), Just(bb), values::<T>(nb))
        })
}

fn check_bcast<T: FloatElement>(c: &BcastCase<T>) -> Result<(), TestCaseError> {
    let (ad, a, bd, b) = c;
    let (dims, want) = reference::matmul_broadcast(a, ad, b, bd);
    prop_assert_eq!(&ops::matmul_broadcast_dims(ad, bd).unwrap(), &dims);
    let what = format!("matmul_broadcast {ad:?} @ {bd:?}");
    on_backends(&what, &want, |kit| {
        let c = kit.alloc(T::DTYPE, dims.iter().product())?;
        ops::matmul_broadcast(kit, &c, &kit.upload(a)?, ad, &kit.upload(b)?, bd)?;
        c.download::<T>()
    })
}

macro_rules! float_suite {
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

float_suite!(linear, linear_case, check_linear);
float_suite!(matmul_broadcast, bcast_case, check_bcast);

/// The four transpose combinations of gemm on the same values (A and B stored in each
/// layout) give the same bits, on every backend, with each C broadcast.
#[test]
fn gemm_transposes_agree() {
    let (m, k, n) = (19, 70, 23);
    let a: Vec<f32> = (0..m * k)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
        .collect();
    let b: Vec<f32> = (0..k * n)
        .map(|i| ((i * 53 % 97) as f32 - 48.0) / 9.0)
        .collect();
    let at: Vec<f32> = (0..m * k).map(|i| a[(i % m) * k + i / m]).collect();
    let bt: Vec<f32> = (0..k * n).map(|i| b[(i % k) * n + i / k]).collect();
    for c_layout in [GemmC::Full, GemmC::Row, GemmC::Column, GemmC::Scalar] {
        let c: Vec<f32> = (0..c_layout.len(m, n).unwrap())
            .map(|i| i as f32 * 0.25 - 3.0)
            .collect();
        let p0 = GemmParams {
            alpha: 0.5,
            beta: -2.0,
            c_layout,
            ..GemmParams::new(m, k, n)
        };
        let want = reference::gemm(&a, &b, Some(&c), None, &p0);
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let p = GemmParams {
                trans_a: ta,
                trans_b: tb,
                ..p0
            };
            let what = format!("gemm ta {ta} tb {tb} c {c_layout:?}");
            on_backends(&what, &want, |kit| {
                let ab = kit.upload(if ta { &at } else { &a })?;
                let bb = kit.upload(if tb { &bt } else { &b })?;
                let y = kit.alloc(DType::F32, m * n)?;
                ops::gemm(kit, &y, &ab, &bb, Some(&kit.upload(&c)?), None, &p)?;
                y.download::<f32>()
            })
            .unwrap();
        }
    }
}

/// matmul_broadcast equals matmul on each output matrix it picks.
#[test]
fn matmul_broadcast_is_matmul_per_matrix() {
    let kit = gpukit::cpu().unwrap();
    let (m, k, n) = (5, 7, 3);
    let a: Vec<f32> = (0..2 * m * k).map(|i| (i as f32 * 0.37).sin()).collect();
    let b: Vec<f32> = (0..3 * k * n).map(|i| (i as f32 * 0.21).cos()).collect();
    let c = kit.alloc(DType::F32, 6 * m * n).unwrap();
    let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
    ops::matmul_broadcast(&kit, &c, &ab, &[2, 1, m, k], &bb, &[1, 3, k, n]).unwrap();
    let got = c.download::<f32>().unwrap();
    for i in 0..2 {
        for j in 0..3 {
            let want =
                reference::matmul(&a[i * m * k..][..m * k], &b[j * k * n..][..k * n], m, k, n);
            let at = (i * 3 + j) * m * n;
            gpukit_tests::check_same_bits("per matrix", &got[at..at + m * n], &want).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn gemm_trans_a_and_broadcast_c_errors() {
    let k = gpukit::cpu().unwrap();
    let (a, b, y) = (f32s(&k, 6), f32s(&k, 12), f32s(&k, 8));
    // trans_a: a is [k, m] = [3, 2], same count; a wrong count names the layout.
    let p = GemmParams {
        trans_a: true,
        ..GemmParams::new(2, 3, 4)
    };
    ops::gemm(&k, &y, &a, &b, None, None, &p).unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![3.0; 8]);
    match ops::gemm(&k, &y, &f32s(&k, 5), &b, None, None, &p) {
        Err(Error::Length {
            what,
            expected: 6,
            got: 5,
        }) => assert!(what.contains("[k, m]"), "{what}"),
        other => panic!("{other:?}"),
    }
    // Each C layout wants its own length.
    for (layout, want) in [
        (GemmC::Row, 4),
        (GemmC::Column, 2),
        (GemmC::Scalar, 1),
        (GemmC::Full, 8),
    ] {
        let p = GemmParams {
            c_layout: layout,
            ..GemmParams::new(2, 3, 4)
        };
        let c = f32s(&k, want + 1);
        assert!(
            matches!(
                ops::gemm(&k, &y, &a, &b, Some(&c), None, &p),
                Err(Error::Length { expected, .. }) if expected == want
            ),
            "{layout:?}"
        );
        let c = f32s(&k, want);
        ops::gemm(&k, &y, &a, &b, Some(&c), None, &p).unwrap();
        assert_eq!(y.download::<f32>().unwrap(), vec![4.0; 8], "{layout:?}");
    }
    // In place is only allowed over a full C.
    let yc = f32s(&k, 8);
    let row = yc.view(0, 4).unwrap();
    let p = GemmParams {
        c_layout: GemmC::Row,
        ..GemmParams::new(2, 3, 4)
    };
    assert!(matches!(
        ops::gemm(&k, &yc, &a, &b, Some(&row), None, &p),
        Err(Error::InvalidArgument { .. })
    ));
    // ONNX's shapes of C.
    assert_eq!(GemmC::from_shape(&[2, 4], 2, 4), Some(GemmC::Full));
    assert_eq!(GemmC::from_shape(&[4], 2, 4), Some(GemmC::Row));
    assert_eq!(GemmC::from_shape(&[1, 4], 2, 4), Some(GemmC::Row));
    assert_eq!(GemmC::from_shape(&[2, 1], 2, 4), Some(GemmC::Column));
    assert_eq!(GemmC::from_shape(&[], 2, 4), Some(GemmC::Scalar));
    assert_eq!(GemmC::from_shape(&[1], 2, 4), Some(GemmC::Scalar));
    assert_eq!(GemmC::from_shape(&[1, 1], 2, 4), Some(GemmC::Scalar));
    assert_eq!(GemmC::from_shape(&[1, 1], 1, 1), Some(GemmC::Full));
    assert_eq!(GemmC::from_shape(&[2], 2, 4), None);
    assert_eq!(GemmC::from_shape(&[3, 4], 2, 4), None);
    assert_eq!(GemmC::from_shape(&[2, 4, 1], 2, 4), None);
}

#[test]
fn linear_errors() {
    let k = gpukit::cpu().unwrap();
    let (x, w, bias, y) = (f32s(&k, 12), f32s(&k, 8), f32s(&k, 4), f32s(&k, 24));
    ops::linear(&k, &y, &x, &[3, 2, 2], &w, [4, 2], Some(&bias)).unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![3.0; 24]);
    // Shapes: rank 0, in features that differ.
    assert!(matches!(
        ops::linear(&k, &y, &x, &[], &w, [4, 2], None),
        Err(Error::Shape { .. })
    ));
    match ops::linear(&k, &y, &x, &[3, 4], &w, [2, 4 + 1], None) {
        Err(Error::Shape { op, detail }) => {
            assert_eq!(op, "linear");
            assert!(detail.contains("[out, in]"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    // Lengths: x, weight, bias, y.
    for (xx, ww, bb, yy) in [
        (11, 8, 4, 24),
        (12, 7, 4, 24),
        (12, 8, 3, 24),
        (12, 8, 4, 25),
    ] {
        assert!(
            matches!(
                ops::linear(
                    &k,
                    &f32s(&k, yy),
                    &f32s(&k, xx),
                    &[3, 2, 2],
                    &f32s(&k, ww),
                    [4, 2],
                    Some(&f32s(&k, bb))
                ),
                Err(Error::Length { .. })
            ),
            "{xx} {ww} {bb} {yy}"
        );
    }
    // Dtype and overlap.
    let d = k.upload(&[1.0f64; 8]).unwrap();
    assert!(matches!(
        ops::linear(&k, &y, &x, &[3, 2, 2], &d, [4, 2], None),
        Err(Error::DType { .. })
    ));
    let big = f32s(&k, 24);
    assert!(matches!(
        ops::linear(
            &k,
            &big,
            &big.view(0, 12).unwrap(),
            &[3, 2, 2],
            &w,
            [4, 2],
            None
        ),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn matmul_broadcast_errors() {
    let k = gpukit::cpu().unwrap();
    let (a, b) = (f32s(&k, 12), f32s(&k, 6));
    let c = k.alloc(DType::F32, 8).unwrap();
    ops::matmul_broadcast(&k, &c, &a, &[2, 2, 3], &b, &[3, 2]).unwrap();
    assert!(matches!(
        ops::matmul_broadcast(&k, &c, &a, &[12], &b, &[12, 1]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::matmul_broadcast(&k, &c, &a, &[2, 2, 3], &b, &[2, 6]),
        Err(Error::Shape { .. })
    ));
    match ops::matmul_broadcast(&k, &c, &a, &[2, 2, 3], &b, &[3, 3, 2]) {
        Err(Error::Shape { detail, .. }) => {
            assert!(matmul_broadcast_len(&detail), "{detail}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ops::matmul_broadcast(&k, &c, &a, &[2, 3, 2], &b, &[2, 3]),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::matmul_broadcast(&k, &c, &a, &[4, 3], &b, &[3, 4]),
        Err(Error::Length { .. })
    ));
    let i = k.upload(&[1i64; 12]).unwrap();
    assert!(matches!(
        ops::matmul_broadcast(&k, &c, &i, &[2, 2, 3], &b, &[3, 2]),
        Err(Error::DType { .. })
    ));
    let big = k.alloc(DType::F32, 24).unwrap();
    assert!(matches!(
        ops::matmul_broadcast(
            &k,
            &big.view(0, 8).unwrap(),
            &big.view(4, 12).unwrap(),
            &[2, 2, 3],
            &b,
            &[3, 2]
        ),
        Err(Error::InvalidArgument { .. })
    ));
    // Empty batches and k = 0 write nothing / zeros.
    let e = k.alloc(DType::F32, 0).unwrap();
    ops::matmul_broadcast(&k, &e, &e, &[0, 2, 3], &b, &[3, 2]).unwrap();
    let z = f32s(&k, 4);
    ops::matmul_broadcast(&k, &z, &e, &[2, 0], &e, &[1, 0, 2]).unwrap();
    assert_eq!(z.download::<f32>().unwrap(), vec![0.0; 4]);
}

/// The batch-axis error names the axis and both sizes.
fn matmul_broadcast_len(detail: &str) -> bool {
    detail.contains("batch axis") && detail.contains("2 vs 3")
}

/// Shapes the small proptest dims never reach: chains longer than a k-block (several
/// k-blocks accumulated into one chain), few rows (the CPU engine then reads full B
/// panels in place and packs only a partial last one) and many columns (several column
/// blocks, a partial last panel), for matmul, bmm with a broadcast B and gemm with
/// bias and C; f32 and f64 (read in place) and f16 (always packed), every backend.
#[test]
fn long_chains_few_rows_many_columns() {
    fn run<T: FloatElement>(m: usize, k: usize, n: usize) {
        use gpukit::numeric::Real;
        let cv = |v: f64| T::store(<T::Real as Real>::from_f64(v));
        let a: Vec<T> = (0..2 * m * k)
            .map(|i| cv(((i * 37 % 101) as f64 - 50.0) / 7.0))
            .collect();
        let b: Vec<T> = (0..k * n)
            .map(|i| cv(((i * 53 % 97) as f64 - 48.0) / 9.0))
            .collect();
        let a1 = &a[..m * k];
        let want = reference::matmul(a1, &b, m, k, n);
        on_backends(&format!("matmul {m}x{k}x{n} {}", T::DTYPE), &want, |kit| {
            let (ba, bb) = (kit.upload(a1)?, kit.upload(&b)?);
            let out = kit.alloc(T::DTYPE, m * n)?;
            ops::matmul(kit, &out, &ba, &bb, m, k, n)?;
            out.download()
        })
        .unwrap();
        let want = reference::bmm(&a, &b, 2, m, k, n, m * k, 0);
        on_backends(&format!("bmm 2x{m}x{k}x{n} {}", T::DTYPE), &want, |kit| {
            let (ba, bb) = (kit.upload(&a)?, kit.upload(&b)?);
            let out = kit.alloc(T::DTYPE, 2 * m * n)?;
            ops::bmm(kit, &out, &ba, &bb, 2, m, k, n, m * k, 0)?;
            out.download()
        })
        .unwrap();
        let c: Vec<T> = (0..n).map(|i| cv(i as f64 * 0.25 - 3.0)).collect();
        let p = GemmParams {
            alpha: 0.5,
            beta: -2.0,
            c_layout: GemmC::Row,
            ..GemmParams::new(m, k, n)
        };
        let want = reference::gemm(a1, &b, Some(&c), None, &p);
        on_backends(&format!("gemm {m}x{k}x{n} {}", T::DTYPE), &want, |kit| {
            let (ba, bb, bc) = (kit.upload(a1)?, kit.upload(&b)?, kit.upload(&c)?);
            let y = kit.alloc(T::DTYPE, m * n)?;
            ops::gemm(kit, &y, &ba, &bb, Some(&bc), None, &p)?;
            y.download()
        })
        .unwrap();
    }
    for (m, k, n) in [(40, 400, 301), (16, 1000, 97), (3, 333, 200)] {
        run::<f32>(m, k, n);
        run::<f64>(m, k, n);
    }
    run::<f16>(40, 400, 301);
}
