//! The equivalence suite for `ops::gather_elements`, `ops::scatter_elements` and
//! `ops::pad` (ONNX GatherElements / ScatterElements / Pad): every dtype on every backend of
//! [`gpukit_tests::backends`] (cpu and its SIMD/thread variants, ptx-emu, cuda where
//! present) against the reference oracle, bit for bit, 256 proptest cases per dtype
//! (`GPUKIT_CASES`).
//!
//! Shapes draw empty extents (outer, inner, nidx or the axis 0), indices across the
//! whole range `[-axis_len, axis_len)` (negative from the end), many duplicates (nidx up
//! to twice the axis) so the defined order of scatter is exercised under every
//! reduction, values with NaN payloads, ±inf, -0.0, subnormals and integer extremes.

use gpukit::elements::ScatterElem;
use gpukit::half::{bf16, f16};
use gpukit::{Error, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, dim, on_backends, value};
use ops::{PadMode, ScatterReduction};
use proptest::prelude::*;

/// `(outer, axis_len, inner, nidx, idx)`: indices in range, one per element.
type Geo = (usize, usize, usize, usize, Vec<i64>);

fn geometry() -> impl Strategy<Value = Geo> {
    (dim(9), 0usize..9, dim(33), 0usize..12)
        .prop_map(|(o, a, i, g)| (o, a, i, if a == 0 { 0 } else { g }))
        .prop_flat_map(|(o, a, i, g)| {
            let n = o * g * i;
            let lo = -(a as i64);
            let hi = (a as i64).max(1);
            (Just((o, a, i, g)), proptest::collection::vec(lo..hi, n))
        })
        .prop_map(|((o, a, i, g), idx)| (o, a, i, g, idx))
}

fn case<T: TestElem>() -> impl Strategy<Value = (Geo, Vec<T>, Vec<T>)> {
    geometry().prop_flat_map(|geo| {
        let (o, a, i, _, ref idx) = geo;
        let nd = o * a * i;
        let nu = idx.len();
        (
            Just(geo),
            proptest::collection::vec(value::<T>(), nd),
            proptest::collection::vec(value::<T>(), nu),
        )
    })
}

fn check_gather<T: TestElem>(geo: &Geo, data: &[T]) -> Result<(), TestCaseError> {
    let (o, a, i, g, idx) = geo;
    let want = reference::gather_elements(data, idx, *o, *a, *i, *g).unwrap();
    let what = format!("gather_elements {} [{o}, {a}, {i}] nidx {g}", T::DTYPE);
    on_backends(&what, &want, |kit| {
        let (bd, bi) = (kit.upload(data)?, kit.upload(idx)?);
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::gather_elements(kit, &out, &bd, &bi, *o, *a, *i, *g)?;
        out.download()
    })
}

fn check_scatter<T: TestElem + ScatterElem>(
    geo: &Geo,
    data: &[T],
    upd: &[T],
    red: ScatterReduction,
) -> Result<(), TestCaseError> {
    let (o, a, i, g, idx) = geo;
    let want = reference::scatter_elements(data, idx, upd, *o, *a, *i, *g, red).unwrap();
    let what = format!(
        "scatter_elements {} {} [{o}, {a}, {i}] nidx {g}",
        red.name(),
        T::DTYPE
    );
    on_backends(&what, &want, |kit| {
        let (bd, bi, bu) = (kit.upload(data)?, kit.upload(idx)?, kit.upload(upd)?);
        let y = kit.alloc(T::DTYPE, data.len())?;
        ops::scatter_elements(kit, &y, &bd, &bi, &bu, *o, *a, *i, *g, red)?;
        y.download()
    })?;
    // In place (y = data).
    on_backends(&format!("{what} in place"), &want, |kit| {
        let (bd, bi, bu) = (kit.upload(data)?, kit.upload(idx)?, kit.upload(upd)?);
        ops::scatter_elements(kit, &bd, &bd, &bi, &bu, *o, *a, *i, *g, red)?;
        bd.download()
    })
}

macro_rules! suite {
    ($t:ty, $g:ident, $s:ident) => {
        proptest! {
            #![proptest_config(cfg())]
            #[test]
            fn $g((geo, data, _u) in case::<$t>()) {
                check_gather::<$t>(&geo, &data)?;
            }
            #[test]
            fn $s((geo, data, upd) in case::<$t>(), r in 0usize..5) {
                check_scatter::<$t>(&geo, &data, &upd, ScatterReduction::ALL[r])?;
            }
        }
    };
}

suite!(f32, gather_elements_f32, scatter_elements_f32);
suite!(f64, gather_elements_f64, scatter_elements_f64);
suite!(f16, gather_elements_f16, scatter_elements_f16);
suite!(bf16, gather_elements_bf16, scatter_elements_bf16);
suite!(i64, gather_elements_i64, scatter_elements_i64);
suite!(i32, gather_elements_i32, scatter_elements_i32);

/// Duplicates under every reduction, with hand-computed results: the order is the
/// row-major order of the updates on every backend.
#[test]
fn duplicate_targets_follow_row_major_order() {
    // data [1, 3, 1]; four updates all on rows 0 / -3 (the same row) and 2.
    let data = [10.0f32, 20.0, 30.0];
    let idx = [0i64, -3, 2, 0];
    let upd = [1.0f32, 2.0, 3.0, f32::NAN];
    let cases: [(ScatterReduction, [f32; 3]); 5] = [
        (ScatterReduction::None, [f32::NAN, 20.0, 3.0]),
        (ScatterReduction::Add, [f32::NAN, 20.0, 33.0]),
        (ScatterReduction::Mul, [f32::NAN, 20.0, 90.0]),
        (ScatterReduction::Max, [f32::NAN, 20.0, 30.0]),
        (ScatterReduction::Min, [f32::NAN, 20.0, 3.0]),
    ];
    for (red, want) in cases {
        for (name, kit) in backends() {
            let (bd, bi, bu) = (
                kit.upload(&data).unwrap(),
                kit.upload(&idx).unwrap(),
                kit.upload(&upd).unwrap(),
            );
            let y = kit.alloc(gpukit::DType::F32, 3).unwrap();
            ops::scatter_elements(&kit, &y, &bd, &bi, &bu, 1, 3, 1, 4, red).unwrap();
            let got = y.download::<f32>().unwrap();
            gpukit_tests::check_same_bits(&format!("{name} {}", red.name()), &got, &want).unwrap();
        }
    }
    // Without the NaN: None keeps the last (4.0), Add folds 10 + 1 + 2 + 4 in order.
    let upd = [1.0f32, 2.0, 3.0, 4.0];
    for (red, first) in [
        (ScatterReduction::None, 4.0f32),
        (ScatterReduction::Add, 17.0),
        (ScatterReduction::Mul, 80.0),
        (ScatterReduction::Max, 10.0),
        (ScatterReduction::Min, 1.0),
    ] {
        let want = reference::scatter_elements(&data, &idx, &upd, 1, 3, 1, 4, red).unwrap();
        assert_eq!(want[0], first, "{}", red.name());
    }
}

/// An out-of-range index is an error naming it on every backend, and nothing is
/// written; also when the other extents make the result empty.
#[test]
fn out_of_range_indices_are_errors() {
    for (name, kit) in backends() {
        let data = kit.upload(&[1i32, 2, 3, 4, 5, 6]).unwrap();
        for bad in [2i64, -3, i64::MIN, i64::MAX] {
            let idx = kit.upload(&[0i64, 1, bad]).unwrap();
            let out = kit.upload(&[7i32; 3]).unwrap();
            let e = ops::gather_elements(&kit, &out, &data, &idx, 1, 2, 3, 1).unwrap_err();
            assert!(
                matches!(e, Error::IndexOutOfRange { index, axis_len: 2, .. } if index == bad),
                "{name}: {e}"
            );
            assert_eq!(out.download::<i32>().unwrap(), [7; 3], "{name}");
            let y = kit.upload(&[9i32; 6]).unwrap();
            let upd = kit.upload(&[1i32, 1, 1]).unwrap();
            for red in ScatterReduction::ALL {
                let e = ops::scatter_elements(&kit, &y, &data, &idx, &upd, 1, 2, 3, 1, red)
                    .unwrap_err();
                assert!(matches!(e, Error::IndexOutOfRange { .. }), "{name}: {e}");
                assert_eq!(y.download::<i32>().unwrap(), [9; 6], "{name}");
            }
        }
        // An empty axis: any index is out of range.
        let empty = kit.alloc(gpukit::DType::I32, 0).unwrap();
        let idx = kit.upload(&[0i64]).unwrap();
        let out = kit.alloc(gpukit::DType::I32, 1).unwrap();
        let e = ops::gather_elements(&kit, &out, &empty, &idx, 1, 0, 1, 1).unwrap_err();
        assert!(matches!(e, Error::IndexOutOfRange { .. }), "{name}: {e}");
    }
}

// ---------------------------------------------------------------------------------
// pad (ONNX Pad).
// ---------------------------------------------------------------------------------

/// `(dims, pads, mode)`: rank 0 to 3, extents 0 to 5, pads from cropping the whole axis
/// to padding past it (reflect / wrap more than once); non-constant modes keep at least
/// one element on every axis they pad.
fn pad_geometry() -> impl Strategy<Value = (Vec<usize>, Vec<i64>, PadMode)> {
    (proptest::collection::vec(0usize..6, 0..4), 0usize..4)
        .prop_flat_map(|(dims, m)| {
            let r = dims.len();
            let pads: Vec<_> = (0..2 * r)
                .map(|j| {
                    let d = dims[j % r] as i64;
                    -d..7i64
                })
                .collect();
            (Just(dims), pads, Just(PadMode::ALL[m]))
        })
        .prop_map(|(dims, mut pads, mode)| {
            let r = dims.len();
            for a in 0..r {
                let (b, e) = (pads[a], pads[r + a]);
                let len = dims[a] as i64 + b.min(0) + e.min(0);
                if len < 0 || (mode != PadMode::Constant && len == 0) {
                    // Crop less: keep one element if there is one, else pad nothing.
                    pads[a] = b.max(0);
                    pads[r + a] = e.max(0);
                    if dims[a] == 0 && mode != PadMode::Constant {
                        pads[a] = 0;
                        pads[r + a] = 0;
                    }
                }
            }
            (dims, pads, mode)
        })
}

fn check_pad<T: TestElem>(
    dims: &[usize],
    pads: &[i64],
    mode: PadMode,
    x: &[T],
    value: T,
) -> Result<(), TestCaseError> {
    let (od, want) = reference::pad(x, dims, pads, mode, value);
    prop_assert_eq!(&ops::pad_out_dims(dims, pads, mode).unwrap(), &od);
    let what = format!("pad {} {} {dims:?} {pads:?}", mode.name(), T::DTYPE);
    on_backends(&what, &want, |kit| {
        let (bx, bv) = (kit.upload(x)?, kit.upload(&[value])?);
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::pad(kit, &out, &bx, &bv, dims, pads, mode)?;
        out.download()
    })
}

macro_rules! pad_suite {
    ($t:ty, $name:ident) => {
        proptest! {
            #![proptest_config(cfg())]
            #[test]
            fn $name(
                (dims, pads, mode) in pad_geometry(),
                seed in proptest::collection::vec(value::<$t>(), 0..=125),
                value in value::<$t>(),
            ) {
                let n: usize = dims.iter().product();
                let x: Vec<$t> = (0..n).map(|i| if seed.is_empty() { value } else { seed[i % seed.len()] }).collect();
                check_pad::<$t>(&dims, &pads, mode, &x, value)?;
            }
        }
    };
}

pad_suite!(f32, pad_f32);
pad_suite!(f64, pad_f64);
pad_suite!(f16, pad_f16);
pad_suite!(bf16, pad_bf16);
pad_suite!(i64, pad_i64);
pad_suite!(i32, pad_i32);

/// numpy's values for each mode, including pads longer than the axis (reflect and wrap
/// repeat) and cropping with padding on the other side (crop first).
#[test]
fn pad_matches_numpy_and_onnxruntime_by_hand() {
    let x = [1i32, 2, 3, 4, 5];
    let cases: [(PadMode, [i64; 2], &[i32]); 9] = [
        (PadMode::Reflect, [6, 0], &[3, 4, 5, 4, 3, 2, 1, 2, 3, 4, 5]),
        (PadMode::Wrap, [6, 0], &[5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5]),
        (PadMode::Edge, [2, 1], &[1, 1, 1, 2, 3, 4, 5, 5]),
        (PadMode::Constant, [-1, 3], &[2, 3, 4, 5, 0, 0, 0]),
        (PadMode::Reflect, [-1, 3], &[2, 3, 4, 5, 4, 3, 2]),
        (PadMode::Wrap, [-1, 3], &[2, 3, 4, 5, 2, 3, 4]),
        (PadMode::Wrap, [2, -2], &[2, 3, 1, 2, 3]),
        (PadMode::Edge, [-1, 3], &[2, 3, 4, 5, 5, 5, 5]),
        (PadMode::Constant, [-5, 2], &[0, 0]),
    ];
    for (mode, pads, want) in cases {
        for (name, kit) in backends() {
            let (bx, bv) = (kit.upload(&x).unwrap(), kit.upload(&[0i32]).unwrap());
            let out = kit.alloc(gpukit::DType::I32, want.len()).unwrap();
            ops::pad(&kit, &out, &bx, &bv, &[5], &pads, mode).unwrap();
            assert_eq!(
                out.download::<i32>().unwrap(),
                want,
                "{name} {} {pads:?}",
                mode.name()
            );
        }
    }
}
