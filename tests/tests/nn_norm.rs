//! Equivalence and bad-input tests of the `norm` group: batch norm, layer norm, leaky
//! ReLU, clip, erf, GELU (erf and tanh forms), softmax along any axis, argmax and the L2
//! norm, on every backend of [`gpukit_tests::backends`] against the reference oracle,
//! bit for bit (any NaN equals any NaN).
//!
//! Shapes reach rows of length 1, odd sizes, rows just past 32 lanes and past one chunk
//! (8192), first / middle / last axes, `inner = 1`, `outer = 1`, N = 1 and N > 1;
//! values reach NaN, ±inf, -0.0 and subnormals. `GPUKIT_CASES=N` changes the case count.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::prelude::*;
use gpukit::{Buf, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, check_same_bits, len_with_edges, value, values};
use gpukit_tests::{cfg, on_backends};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// `[rows, n]`: mostly small rows (odd sizes, 1, just past 32 lanes), sometimes one or
/// two rows just past a chunk.
fn rows_n() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        8 => (0usize..6, len_with_edges(70)),
        1 => (1usize..3, prop::sample::select(vec![8191usize, 8192, 8193, 8227, 16385])),
    ]
}

fn eps() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![0.0, 1e-5, 1e-12, 0.5, 3.0, 1e-300])
}

// ---------------------------------------------------------------------------------------
// batch_norm
// ---------------------------------------------------------------------------------------

type BnCase<T> = (Vec<usize>, Vec<T>, [Vec<T>; 4], f64, bool);

fn bn_case<T: TestElem>() -> impl Strategy<Value = BnCase<T>> {
    (
        1usize..4,
        prop_oneof![3 => 1usize..6, 1 => Just(0usize), 1 => Just(33usize)],
        prop::collection::vec(
            prop_oneof![4 => 1usize..8, 1 => Just(0usize), 1 => Just(33usize)],
            0..3,
        ),
        eps(),
        any::<bool>(),
    )
        .prop_flat_map(|(n, c, spatial, eps, in_place)| {
            let mut shape = vec![n, c];
            shape.extend(spatial);
            let total: usize = shape.iter().product();
            (
                Just(shape),
                values::<T>(total),
                [
                    values::<T>(c),
                    values::<T>(c),
                    values::<T>(c),
                    values::<T>(c),
                ],
                Just(eps),
                Just(in_place),
            )
        })
}

fn check_bn<T: FloatElement>(c: &BnCase<T>) -> TestResult {
    let (shape, x, [sc, bi, me, va], eps, in_place) = c;
    let (n, ch) = (shape[0], shape[1]);
    let s: usize = shape[2..].iter().product();
    let want = reference::batch_norm(x, sc, bi, me, va, n, ch, s, *eps);
    on_backends(&format!("batch_norm {shape:?} eps {eps}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let (bs, bb, bm, bv) = (
            kit.upload(sc)?,
            kit.upload(bi)?,
            kit.upload(me)?,
            kit.upload(va)?,
        );
        let p = ops::BatchNorm { shape, eps: *eps };
        if *in_place {
            ops::batch_norm(kit, &bx, &bx, &bs, &bb, &bm, &bv, p)?;
            bx.download()
        } else {
            let out = kit.alloc(T::DTYPE, x.len())?;
            ops::batch_norm(kit, &out, &bx, &bs, &bb, &bm, &bv, p)?;
            out.download()
        }
    })
}

// ---------------------------------------------------------------------------------------
// layer_norm
// ---------------------------------------------------------------------------------------

type LnCase<T> = (usize, usize, Vec<T>, Vec<T>, Vec<T>, f64, bool);

fn ln_case<T: TestElem>() -> impl Strategy<Value = LnCase<T>> {
    (rows_n(), eps(), any::<bool>()).prop_flat_map(|((rows, n), eps, in_place)| {
        (
            Just(rows),
            Just(n),
            values::<T>(rows * n),
            values::<T>(n),
            values::<T>(n),
            Just(eps),
            Just(in_place),
        )
    })
}

fn check_ln<T: FloatElement>(c: &LnCase<T>) -> TestResult {
    let (rows, n, x, sc, bi, eps, in_place) = c;
    let want = reference::layer_norm(x, sc, bi, *rows, *n, *eps);
    on_backends(&format!("layer_norm {rows}x{n} eps {eps}"), &want, |kit| {
        let (bx, bs, bb) = (kit.upload(x)?, kit.upload(sc)?, kit.upload(bi)?);
        let p = ops::LayerNorm {
            rows: *rows,
            n: *n,
            eps: *eps,
        };
        if *in_place {
            ops::layer_norm(kit, &bx, &bx, &bs, &bb, p)?;
            bx.download()
        } else {
            let out = kit.alloc(T::DTYPE, x.len())?;
            ops::layer_norm(kit, &out, &bx, &bs, &bb, p)?;
            out.download()
        }
    })
}

// ---------------------------------------------------------------------------------------
// Activations
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Act {
    Leaky(f64),
    Clip(f64, f64),
    Erf,
    Gelu,
    GeluTanh,
}

fn act_case<T: TestElem>(kind: u8) -> impl Strategy<Value = (Act, Vec<T>, bool)> {
    let bound = || {
        prop_oneof![
            3 => -50.0f64..50.0,
            1 => prop::sample::select(vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1e-40, 1.0]),
        ]
    };
    let act = match kind {
        0 => prop::sample::select(vec![0.01, 0.2, 0.0, -1.5, 1e-40, 3.0])
            .prop_map(Act::Leaky)
            .boxed(),
        1 => (bound(), bound())
            .prop_map(|(a, b)| {
                if a <= b {
                    Act::Clip(a, b)
                } else {
                    Act::Clip(b, a)
                }
            })
            .boxed(),
        2 => Just(Act::Erf).boxed(),
        3 => Just(Act::Gelu).boxed(),
        _ => Just(Act::GeluTanh).boxed(),
    };
    (
        act,
        len_with_edges(2000).prop_flat_map(values::<T>),
        any::<bool>(),
    )
}

fn check_act<T: FloatElement>(c: &(Act, Vec<T>, bool)) -> TestResult {
    let (act, x, in_place) = c;
    let want = match *act {
        Act::Leaky(a) => reference::leaky_relu(x, a),
        Act::Clip(lo, hi) => reference::clip(x, lo, hi),
        Act::Erf => reference::erf(x),
        Act::Gelu => reference::gelu(x),
        Act::GeluTanh => reference::gelu_tanh(x),
    };
    let run = |kit: &Kit, out: &Buf, bx: &Buf| match *act {
        Act::Leaky(a) => ops::leaky_relu(kit, out, bx, a),
        Act::Clip(lo, hi) => ops::clip(kit, out, bx, lo, hi),
        Act::Erf => ops::erf(kit, out, bx),
        Act::Gelu => ops::gelu(kit, out, bx),
        Act::GeluTanh => ops::gelu_tanh(kit, out, bx),
    };
    on_backends(&format!("{act:?} n = {}", x.len()), &want, |kit| {
        let bx = kit.upload(x)?;
        if *in_place {
            run(kit, &bx, &bx)?;
            bx.download()
        } else {
            let out = kit.alloc(T::DTYPE, x.len())?;
            run(kit, &out, &bx)?;
            out.download()
        }
    })
}

// ---------------------------------------------------------------------------------------
// softmax_axis
// ---------------------------------------------------------------------------------------

type SmCase<T> = (Vec<usize>, i64, Vec<T>, bool);

fn sm_case<T: TestElem>() -> impl Strategy<Value = SmCase<T>> {
    let small = prop::collection::vec(
        prop_oneof![6 => 1usize..6, 1 => Just(0usize), 1 => Just(7usize), 1 => Just(33usize)],
        1..5,
    );
    // A long axis (past one chunk) at the first, middle or last position.
    let long = (
        1usize..3,
        prop::sample::select(vec![8191usize, 8193, 8227]),
        1usize..4,
        0usize..3,
    )
        .prop_map(|(a, l, b, pos)| match pos {
            0 => vec![l, a],
            1 => vec![a, l, b],
            _ => vec![a, l],
        });
    prop_oneof![8 => small, 1 => long]
        .prop_flat_map(|shape| {
            let rank = shape.len() as i64;
            let total: usize = shape.iter().product();
            (Just(shape), -rank..rank, values::<T>(total), any::<bool>())
        })
        .prop_map(|(shape, axis, x, ip)| {
            // Long shapes: put the axis on the long dimension.
            let axis = match shape.iter().position(|&d| d > 8000) {
                Some(p) => p as i64,
                None => axis,
            };
            (shape, axis, x, ip)
        })
}

fn check_sm<T: FloatElement>(c: &SmCase<T>) -> TestResult {
    let (shape, axis, x, in_place) = c;
    let ax = if *axis < 0 {
        (*axis + shape.len() as i64) as usize
    } else {
        *axis as usize
    };
    let outer: usize = shape[..ax].iter().product();
    let inner: usize = shape[ax + 1..].iter().product();
    let want = reference::softmax_axis(x, outer, shape[ax], inner);
    on_backends(
        &format!("softmax_axis {shape:?} axis {axis}"),
        &want,
        |kit| {
            let bx = kit.upload(x)?;
            if *in_place {
                ops::softmax_axis(kit, &bx, &bx, shape, *axis)?;
                bx.download()
            } else {
                let out = kit.alloc(T::DTYPE, x.len())?;
                ops::softmax_axis(kit, &out, &bx, shape, *axis)?;
                out.download()
            }
        },
    )?;
    // Along the last axis: exactly the bits of the row softmax, on every backend.
    if inner == 1 {
        let rows_want = reference::softmax_rows(x, outer, shape[ax]);
        check_same_bits("reference softmax_rows", &want, &rows_want)
            .map_err(TestCaseError::fail)?;
        on_backends("softmax_rows vs softmax_axis", &want, |kit| {
            let bx = kit.upload(x)?;
            let out = kit.alloc(T::DTYPE, x.len())?;
            ops::softmax_rows(kit, &out, &bx, outer, shape[ax])?;
            out.download()
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// argmax, reduce_l2
// ---------------------------------------------------------------------------------------

/// Values with many ties and specials: half from a tiny set (so maxima repeat).
fn tie_value<T: TestElem>() -> impl Strategy<Value = T> {
    let sp = T::specials();
    let few: Vec<T> = sp.iter().copied().take(6).collect();
    prop_oneof![
        2 => value::<T>(),
        1 => prop::sample::select(few),
        1 => prop::sample::select(sp),
    ]
}

fn am_case<T: TestElem>() -> impl Strategy<Value = (usize, usize, Vec<T>)> {
    prop_oneof![
        8 => (0usize..6, prop_oneof![len_with_edges(70), Just(1usize)]),
        1 => (1usize..3, prop::sample::select(vec![8193usize, 16385])),
    ]
    .prop_map(|(r, n)| (r, n.max(1)))
    .prop_flat_map(|(r, n)| {
        (
            Just(r),
            Just(n),
            prop::collection::vec(tie_value::<T>(), r * n),
        )
    })
}

fn check_am<T: Element>(c: &(usize, usize, Vec<T>)) -> TestResult {
    let (rows, n, x) = c;
    let want = reference::argmax(x, *rows, *n);
    on_backends(&format!("argmax {rows}x{n}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(DType::I64, *rows)?;
        ops::argmax(kit, &out, &bx, *rows, *n)?;
        out.download()
    })
}

fn l2_case<T: TestElem>() -> impl Strategy<Value = (usize, usize, Vec<T>)> {
    rows_n().prop_flat_map(|(r, n)| (Just(r), Just(n), values::<T>(r * n)))
}

fn check_l2<T: FloatElement>(c: &(usize, usize, Vec<T>)) -> TestResult {
    let (rows, n, x) = c;
    let want = reference::reduce_l2(x, *rows, *n);
    on_backends(&format!("reduce_l2 {rows}x{n}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(T::DTYPE, *rows)?;
        ops::reduce_l2(kit, &out, &bx, *rows, *n)?;
        out.download()
    })
}

macro_rules! float_dtypes {
    ($name:ident, $strategy:ident $(($arg:expr))?, $check:ident) => {
        mod $name {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>($($arg)?)) { $check::<f32>(&c)?; }
                #[test] fn t_f64(c in $strategy::<f64>($($arg)?)) { $check::<f64>(&c)?; }
                #[test] fn t_f16(c in $strategy::<f16>($($arg)?)) { $check::<f16>(&c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>($($arg)?)) { $check::<bf16>(&c)?; }
            }
        }
    };
}

float_dtypes!(batch_norm, bn_case, check_bn);
float_dtypes!(layer_norm, ln_case, check_ln);
float_dtypes!(leaky_relu, act_case(0), check_act);
float_dtypes!(clip, act_case(1), check_act);
float_dtypes!(erf, act_case(2), check_act);
float_dtypes!(gelu, act_case(3), check_act);
float_dtypes!(gelu_tanh, act_case(4), check_act);
float_dtypes!(softmax_axis, sm_case, check_sm);
float_dtypes!(reduce_l2, l2_case, check_l2);

mod argmax {
    use super::*;
    proptest! {
        #![proptest_config(cfg())]
        #[test] fn t_f32(c in am_case::<f32>()) { check_am::<f32>(&c)?; }
        #[test] fn t_f64(c in am_case::<f64>()) { check_am::<f64>(&c)?; }
        #[test] fn t_f16(c in am_case::<f16>()) { check_am::<f16>(&c)?; }
        #[test] fn t_bf16(c in am_case::<bf16>()) { check_am::<bf16>(&c)?; }
        #[test] fn t_i64(c in am_case::<i64>()) { check_am::<i64>(&c)?; }
        #[test] fn t_i32(c in am_case::<i32>()) { check_am::<i32>(&c)?; }
    }
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

#[test]
fn batch_norm_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 12), f32s(&k, 12));
    let st = || f32s(&k, 3);
    let (s, b, m, v) = (st(), st(), st(), st());
    let p = |shape: &'static [usize], eps| ops::BatchNorm { shape, eps };
    let bn = |out: &Buf, x: &Buf, s: &Buf, p| ops::batch_norm(&k, out, x, s, &b, &m, &v, p);
    assert!(matches!(
        bn(&out, &x, &s, p(&[12], 0.0)),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        bn(&out, &x, &s, p(&[2, 3, 3], 0.0)),
        Err(Error::Length {
            expected: 18,
            got: 12,
            ..
        })
    ));
    assert!(matches!(
        bn(&out, &x, &f32s(&k, 4), p(&[2, 3, 2], 0.0)),
        Err(Error::Length {
            expected: 3,
            got: 4,
            ..
        })
    ));
    assert!(matches!(
        bn(&f32s(&k, 11), &x, &s, p(&[2, 3, 2], 0.0)),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        bn(&out, &x, &s, p(&[usize::MAX, 3, 2], 0.0)),
        Err(Error::SizeOverflow { .. })
    ));
    for eps in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            bn(&out, &x, &s, p(&[2, 3, 2], eps)),
            Err(Error::InvalidArgument { .. })
        ));
    }
    let s64 = k.upload(&[1.0f64; 3]).unwrap();
    assert!(matches!(
        bn(&out, &x, &s64, p(&[2, 3, 2], 0.0)),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    let xi = k.upload(&[1i64; 12]).unwrap();
    let si = k.upload(&[1i64; 3]).unwrap();
    assert!(matches!(
        ops::batch_norm(&k, &xi, &xi, &si, &si, &si, &si, p(&[2, 3, 2], 0.0)),
        Err(Error::DType {
            got: DType::I64,
            ..
        })
    ));
    // Output overlapping a statistic, or x other than exactly.
    let big = f32s(&k, 16);
    let (lo, hi) = (big.view(0, 12).unwrap(), big.view(4, 12).unwrap());
    assert!(matches!(
        bn(&lo, &hi, &s, p(&[2, 3, 2], 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    let st_in_out = out.view(0, 3).unwrap();
    assert!(matches!(
        bn(&out, &x, &st_in_out, p(&[2, 3, 2], 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bn(&out, &x, &Buf::absent(DType::F32), p(&[2, 3, 2], 0.0)),
        Err(Error::Absent { .. })
    ));
    let far = f32s(&kit(), 3);
    assert!(matches!(
        bn(&out, &x, &far, p(&[2, 3, 2], 0.0)),
        Err(Error::DeviceMismatch { .. })
    ));
    // Valid, in place.
    bn(&x, &x, &s, p(&[2, 3, 2], 0.0)).unwrap();
}

#[test]
fn layer_norm_errors() {
    let k = kit();
    let (x, out, s, b) = (f32s(&k, 12), f32s(&k, 12), f32s(&k, 4), f32s(&k, 4));
    let p = |rows, n, eps| ops::LayerNorm { rows, n, eps };
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s, &b, p(3, 5, 0.0)),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s, &f32s(&k, 3), p(3, 4, 0.0)),
        Err(Error::Length {
            expected: 4,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s, &b, p(usize::MAX, 4, 0.0)),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s, &b, p(3, 4, -0.5)),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s, &b, p(3, 4, f64::NAN)),
        Err(Error::InvalidArgument { .. })
    ));
    let s16 = k.upload(&[f16::ONE; 4]).unwrap();
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &s16, &b, p(3, 4, 0.0)),
        Err(Error::DType { .. })
    ));
    let sv = out.view(8, 4).unwrap();
    assert!(matches!(
        ops::layer_norm(&k, &out, &x, &sv, &b, p(3, 4, 0.0)),
        Err(Error::InvalidArgument { .. })
    ));
    ops::layer_norm(&k, &x, &x, &s, &b, p(3, 4, 1e-5)).unwrap();
}

#[test]
fn activation_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 8), f32s(&k, 8));
    for a in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            ops::leaky_relu(&k, &out, &x, a),
            Err(Error::InvalidArgument { .. })
        ));
    }
    // lo > hi is ONNX's rule, not an error: every non-NaN element becomes hi.
    ops::clip(&k, &out, &x, 1.0, -1.0).unwrap();
    let (xs, ys) = (x.download::<f32>().unwrap(), out.download::<f32>().unwrap());
    for (a, b) in xs.iter().zip(&ys) {
        assert!(
            if a.is_nan() { b.is_nan() } else { *b == -1.0 },
            "{a} -> {b}"
        );
    }
    assert!(matches!(
        ops::clip(&k, &out, &x, f64::NAN, 1.0),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::clip(&k, &out, &x, 0.0, f64::NAN),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::erf(&k, &f32s(&k, 7), &x),
        Err(Error::Length {
            expected: 8,
            got: 7,
            ..
        })
    ));
    let i = k.upload(&[1i32; 8]).unwrap();
    assert!(matches!(
        ops::gelu(&k, &i, &i),
        Err(Error::DType {
            got: DType::I32,
            ..
        })
    ));
    let d = k.upload(&[1.0f64; 8]).unwrap();
    assert!(matches!(
        ops::gelu_tanh(&k, &d, &x),
        Err(Error::DType { .. })
    ));
    let big = f32s(&k, 12);
    let (lo, hi) = (big.view(0, 8).unwrap(), big.view(2, 8).unwrap());
    assert!(matches!(
        ops::gelu(&k, &lo, &hi),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::erf(&k, &out, &Buf::absent(DType::F32)),
        Err(Error::Absent { .. })
    ));
    ops::clip(&k, &x, &x, -0.5, 0.5).unwrap();
    ops::leaky_relu(&k, &x, &x, 0.1).unwrap();
    assert_eq!(x.download::<f32>().unwrap(), vec![0.5; 8]);
}

#[test]
fn softmax_axis_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 24), f32s(&k, 24));
    for axis in [3i64, -4, i64::MIN, i64::MAX] {
        assert!(matches!(
            ops::softmax_axis(&k, &out, &x, &[2, 3, 4], axis),
            Err(Error::InvalidArgument { .. })
        ));
    }
    assert!(matches!(
        ops::softmax_axis(&k, &out, &x, &[], 0),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::softmax_axis(&k, &out, &x, &[2, 3, 5], 1),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::softmax_axis(&k, &f32s(&k, 23), &x, &[2, 3, 4], 1),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::softmax_axis(&k, &out, &x, &[usize::MAX, 3, 4], 1),
        Err(Error::SizeOverflow { .. })
    ));
    let i = k.upload(&[1i64; 24]).unwrap();
    assert!(matches!(
        ops::softmax_axis(&k, &i, &i, &[2, 3, 4], 1),
        Err(Error::DType { .. })
    ));
    ops::softmax_axis(&k, &x, &x, &[2, 3, 4], -2).unwrap();
    let y = x.download::<f32>().unwrap();
    assert!(y.iter().all(|&v| v == 1.0 / 3.0));
}

#[test]
fn argmax_and_l2_errors() {
    let k = kit();
    let x = f32s(&k, 12);
    let out = k.zeros(DType::I64, 3).unwrap();
    assert!(matches!(
        ops::argmax(&k, &out, &x, 3, 0),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::argmax(&k, &k.zeros(DType::I64, 0).unwrap(), &x, 0, 0),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::argmax(&k, &f32s(&k, 3), &x, 3, 4),
        Err(Error::DType {
            got: DType::F32,
            ..
        })
    ));
    assert!(matches!(
        ops::argmax(&k, &k.zeros(DType::I32, 3).unwrap(), &x, 3, 4),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        ops::argmax(&k, &out, &x, 3, 5),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::argmax(&k, &k.zeros(DType::I64, 4).unwrap(), &x, 3, 4),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::argmax(&k, &out, &x, usize::MAX, 4),
        Err(Error::SizeOverflow { .. })
    ));
    let xi = k.upload(&[7i64, 1, 9, 9, 2, 3]).unwrap();
    let o2 = xi.view(0, 2).unwrap();
    assert!(matches!(
        ops::argmax(&k, &o2, &xi, 2, 3),
        Err(Error::InvalidArgument { .. })
    ));
    let o = k.zeros(DType::I64, 2).unwrap();
    ops::argmax(&k, &o, &xi, 2, 3).unwrap();
    assert_eq!(o.download::<i64>().unwrap(), vec![2, 0]);

    let l2 = f32s(&k, 3);
    assert!(matches!(
        ops::reduce_l2(&k, &f32s(&k, 4), &x, 3, 4),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::reduce_l2(&k, &l2, &x, 3, 5),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::reduce_l2(&k, &out, &x, 3, 4),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        ops::reduce_l2(&k, &xi.view(0, 2).unwrap(), &xi, 2, 3),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        ops::reduce_l2(&k, &x.view(0, 3).unwrap(), &x, 3, 4),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::reduce_l2(&k, &l2, &x, usize::MAX, 4),
        Err(Error::SizeOverflow { .. })
    ));
    ops::reduce_l2(&k, &l2, &x, 3, 4).unwrap();
    assert_eq!(l2.download::<f32>().unwrap(), vec![2.0; 3]);
}

#[derive(Debug, Clone)]
enum Call {
    BatchNorm(u8, Vec<usize>, usize, usize, f64),
    LayerNorm(u8, usize, usize, usize, usize, f64),
    Act(u8, u8, usize, usize, f64, f64),
    Softmax(u8, Vec<usize>, i64, usize),
    Argmax(u8, u8, usize, usize, usize, usize),
    L2(u8, usize, usize, usize, usize),
}

fn small() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..12, 1 => Just(usize::MAX), 1 => Just(1usize << 62)]
}

fn scalar() -> impl Strategy<Value = f64> {
    prop_oneof![3 => -2.0f64..2.0, 1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, -1.0, 0.0, -0.0])]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (
            any::<u8>(),
            prop::collection::vec(small(), 0..4),
            small(),
            small(),
            scalar()
        )
            .prop_map(|(d, s, lx, lc, e)| Call::BatchNorm(d, s, lx, lc, e)),
        (any::<u8>(), small(), small(), small(), small(), scalar())
            .prop_map(|(d, r, n, lx, ls, e)| Call::LayerNorm(d, r, n, lx, ls, e)),
        (
            any::<u8>(),
            any::<u8>(),
            small(),
            small(),
            scalar(),
            scalar()
        )
            .prop_map(|(w, d, lx, lo, a, b)| Call::Act(w, d, lx, lo, a, b)),
        (
            any::<u8>(),
            prop::collection::vec(small(), 0..4),
            any::<i64>(),
            small()
        )
            .prop_map(|(d, s, a, l)| Call::Softmax(d, s, a, l)),
        (any::<u8>(), any::<u8>(), small(), small(), small(), small())
            .prop_map(|(d, od, r, n, lx, lo)| Call::Argmax(d, od, r, n, lx, lo)),
        (any::<u8>(), small(), small(), small(), small())
            .prop_map(|(d, r, n, lx, lo)| Call::L2(d, r, n, lx, lo)),
    ]
}

fn buf(k: &Kit, d: u8, n: usize) -> Buf {
    k.zeros(DType::ALL[d as usize % 6], n.min(64)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random (mostly invalid) calls of the group's ops: each returns, none panics.
    #[test]
    fn random_norm_calls_never_panic(calls in prop::collection::vec(call(), 1..8)) {
        let k = kit();
        for c in calls {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = match &c {
                    Call::BatchNorm(d, s, lx, lc, e) => {
                        let st = buf(&k, *d, *lc);
                        ops::batch_norm(&k, &buf(&k, *d, *lx), &buf(&k, *d, *lx), &st, &buf(&k, *d, *lc), &buf(&k, *d, *lc), &buf(&k, *d, *lc), ops::BatchNorm { shape: s, eps: *e })
                    }
                    Call::LayerNorm(d, r, n, lx, ls, e) => ops::layer_norm(&k, &buf(&k, *d, *lx), &buf(&k, *d, *lx), &buf(&k, *d, *ls), &buf(&k, *d, *ls), ops::LayerNorm { rows: *r, n: *n, eps: *e }),
                    Call::Act(w, d, lx, lo, a, b) => {
                        let (x, o) = (buf(&k, *d, *lx), buf(&k, *d, *lo));
                        match w % 5 {
                            0 => ops::leaky_relu(&k, &o, &x, *a),
                            1 => ops::clip(&k, &o, &x, *a, *b),
                            2 => ops::erf(&k, &o, &x),
                            3 => ops::gelu(&k, &x, &x),
                            _ => ops::gelu_tanh(&k, &o, &x),
                        }
                    }
                    Call::Softmax(d, s, a, l) => {
                        let x = buf(&k, *d, *l);
                        ops::softmax_axis(&k, &x, &x, s, *a)
                    }
                    Call::Argmax(d, od, r, n, lx, lo) => ops::argmax(&k, &buf(&k, *od, *lo), &buf(&k, *d, *lx), *r, *n),
                    Call::L2(d, r, n, lx, lo) => ops::reduce_l2(&k, &buf(&k, *d, *lo), &buf(&k, *d, *lx), *r, *n),
                };
            }));
            prop_assert!(r.is_ok(), "panicked on {c:?}");
        }
    }
}
