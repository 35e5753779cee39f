//! The equivalence suite for `ops::max_pool2d_index` (ONNX MaxPool's `Indices`
//! output): every float dtype on every backend of [`gpukit_tests::backends`] against
//! the reference oracle, bit for bit, 256 proptest cases per dtype (`GPUKIT_CASES`),
//! row- and column-major; hand-checked indices; bad input.
//!
//! Shapes reach padding, strides past the window, dilation, single pixels, several
//! planes; a third of the values are small integers, so equal maxima in one window are
//! common (the first one wins), with NaN, ±inf, -0.0 against +0.0 and subnormals
//! among the rest.

use gpukit::half::{bf16, f16};
use gpukit::numeric::{FloatElement, Real};
use gpukit::ops::MaxPool2dParams;
use gpukit::{DType, DevArg, Error, LaunchConfig, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, on_backends, pool_params, value};
use proptest::prelude::*;

fn case<T: TestElem>() -> impl Strategy<Value = (MaxPool2dParams, Vec<T>, bool)> {
    pool_params().prop_flat_map(|p| {
        let v = prop_oneof![
            2 => value::<T>(),
            1 => (-2i32..3).prop_map(|v| T::from_moderate(f64::from(v))),
        ];
        (
            Just(p),
            proptest::collection::vec(v, p.n * p.c * p.h * p.w),
            any::<bool>(),
        )
    })
}

fn run<T: TestElem>(
    kit: &gpukit::Kit,
    p: &MaxPool2dParams,
    x: &[T],
    column_major: bool,
) -> gpukit::Result<Vec<i64>> {
    let bx = kit.upload(x)?;
    let n: usize = ops::max_pool2d_out_shape(p)?.iter().product();
    let idx = kit.alloc(DType::I64, n)?;
    ops::max_pool2d_index(kit, &idx, &bx, p, column_major)?;
    idx.download()
}

fn check<T: TestElem + FloatElement>(
    p: &MaxPool2dParams,
    x: &[T],
    column_major: bool,
) -> Result<(), TestCaseError> {
    let want = reference::max_pool2d_index(x, p, column_major);
    // Every index points at a tap holding the pooled value.
    let y = reference::max_pool2d(x, p);
    for (&i, &v) in want.iter().zip(&y) {
        prop_assert!(i >= 0 && (i as usize) < x.len());
        if !column_major {
            let t = x[i as usize];
            prop_assert!((t.load().is_nan() && v.load().is_nan()) || t == v);
        }
    }
    let what = format!(
        "max_pool2d_index {} {p:?} column_major {column_major}",
        T::DTYPE
    );
    on_backends(&what, &want, |kit| run(kit, p, x, column_major))
}

mod suite {
    use super::*;
    proptest! {
        #![proptest_config(cfg())]
        #[test] fn t_f32((p, x, cm) in case::<f32>()) { check::<f32>(&p, &x, cm)?; }
        #[test] fn t_f64((p, x, cm) in case::<f64>()) { check::<f64>(&p, &x, cm)?; }
        #[test] fn t_f16((p, x, cm) in case::<f16>()) { check::<f16>(&p, &x, cm)?; }
        #[test] fn t_bf16((p, x, cm) in case::<bf16>()) { check::<bf16>(&p, &x, cm)?; }
    }
}

/// Hand-checked indices (what onnxruntime and PyTorch's `return_indices` give where
/// NaN and zeros do not arise): the first maximum wins, padding never shifts an index,
/// indices count across planes, and column-major storage swaps the spatial axes.
#[test]
fn matches_by_hand() {
    // Two planes of 3x3; a 2x2 window, stride 1, pad 1 on the bottom/right.
    #[rustfmt::skip]
    let x = [
        1.0f32, 5.0, 2.0,
        5.0, 0.0, 3.0,
        4.0, 9.0, 8.0,
        // Plane 1: NaN wins over 7; -0.0 then +0.0: +0.0 wins (max(-0, +0) = +0).
        7.0, f32::NAN, -0.0,
        -1.0, 0.0, -3.0,
        -0.0, -0.0, -5.0,
    ];
    let p = MaxPool2dParams {
        pads: [0, 0, 1, 1],
        ..MaxPool2dParams::new(1, 2, 3, 3, 2, 2)
    };
    // Windows (top-left at (i, j), i, j in 0..3), in-image taps only.
    #[rustfmt::skip]
    let want_rm: [i64; 18] = [
        1, 1, 5,
        7, 7, 8,
        7, 7, 8,
        10, 10, 11,
        13, 13, 14,
        15, 16, 17,
    ];
    on_backends("max_pool2d_index by hand", &want_rm, |kit| {
        run(kit, &p, &x, false)
    })
    .unwrap();
    // Column major: (plane·w + iw)·h + ih.
    let cm: Vec<i64> = want_rm
        .iter()
        .map(|&i| {
            let (plane, r) = (i / 9, i % 9);
            let (ih, iw) = (r / 3, r % 3);
            (plane * 3 + iw) * 3 + ih
        })
        .collect();
    on_backends("max_pool2d_index by hand, column major", &cm, |kit| {
        run(kit, &p, &x, true)
    })
    .unwrap();
}

/// Bad input is an `Err` naming what is wrong on every backend, nothing is written;
/// the raw kernel refuses a storage order other than 0 / 1.
#[test]
fn bad_input_is_an_error() {
    let p = MaxPool2dParams::new(1, 1, 3, 3, 2, 2);
    for (name, kit) in backends() {
        let x = kit.upload(&[1.0f32; 9]).unwrap();
        let idx = kit.upload(&[-7i64; 4]).unwrap();
        let f = kit.alloc(DType::F32, 4).unwrap();
        let r = ops::max_pool2d_index(&kit, &f, &x, &p, false);
        assert!(matches!(r, Err(Error::DType { .. })), "{name}: {r:?}");
        let xi = kit.upload(&[1i64; 9]).unwrap();
        let r = ops::max_pool2d_index(&kit, &idx, &xi, &p, false);
        assert!(matches!(r, Err(Error::DType { .. })), "{name}: {r:?}");
        let short = kit.upload(&[-7i64; 3]).unwrap();
        let r = ops::max_pool2d_index(&kit, &short, &x, &p, false);
        assert!(matches!(r, Err(Error::Length { .. })), "{name}: {r:?}");
        let empty = MaxPool2dParams {
            pads: [2, 0, 0, 0],
            ..p
        };
        let idx8 = kit.upload(&[-7i64; 8]).unwrap();
        let r = ops::max_pool2d_index(&kit, &idx8, &x, &empty, false);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })),
            "{name}: {r:?}"
        );
        let zero = MaxPool2dParams {
            strides: [0, 1],
            ..p
        };
        let r = ops::max_pool2d_index(&kit, &idx, &x, &zero, false);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })),
            "{name}: {r:?}"
        );
        assert_eq!(idx.download::<i64>().unwrap(), [-7; 4], "{name}");
        let raw = |order: i64| {
            let mut a: Vec<DevArg<'_>> = vec![(&idx).into(), (&x).into()];
            a.extend([1i64, 1, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1, 1, 1, order].map(DevArg::I64));
            kit.launch_builtin(
                "max_pool2d_index_f32",
                LaunchConfig::for_elements(4, 256).unwrap(),
                &a,
            )
        };
        assert!(raw(2).is_err(), "{name}: storage_order 2 accepted");
        assert_eq!(idx.download::<i64>().unwrap(), [-7; 4], "{name}");
        raw(1).unwrap();
        assert_eq!(
            idx.download::<i64>().unwrap(),
            [0, 3, 1, 4],
            "{name}: all ties: each window's first tap, column major"
        );
    }
}
