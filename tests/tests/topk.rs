//! The equivalence suite for `ops::topk` (ONNX TopK, sorted): every dtype on every
//! backend of [`gpukit_tests::backends`] (cpu and its SIMD/thread variants, ptx-emu,
//! cuda where present) against the reference oracle (a stable sort), values and
//! indices bit for bit, 256 proptest cases per dtype (`GPUKIT_CASES`), largest and
//! smallest, every `k` from 0 to the axis length.
//!
//! Shapes draw empty extents (outer, the axis or inner 0), single-element lines and
//! wide inner extents (strided lines); values include NaN payloads, ±inf, -0.0 against
//! +0.0, subnormals, integer extremes and many exact ties (small integers), where only
//! the lower-index rule decides the order.

use gpukit::half::{bf16, f16};
use gpukit::topk::TopkElem;
use gpukit::{DType, DevArg, Error, LaunchConfig, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, dim, on_backends, value};
use proptest::prelude::*;

/// `(outer, len, inner, k)`.
type Geo = (usize, usize, usize, usize);

/// A value: the usual mix (specials included) or a small integer (ties).
fn tie_or_value<T: TestElem>() -> impl Strategy<Value = T> {
    prop_oneof![
        2 => value::<T>(),
        1 => (-3i32..4).prop_map(|v| T::from_moderate(f64::from(v))),
    ]
}

fn case<T: TestElem>() -> impl Strategy<Value = (Geo, Vec<T>, bool)> {
    (dim(7), dim(65), prop_oneof![dim(9), Just(33usize)])
        .prop_filter("at most 3000 elements", |(o, l, i)| o * l * i <= 3000)
        .prop_flat_map(|(o, l, i)| {
            (
                (Just(o), Just(l), Just(i), 0..=l),
                proptest::collection::vec(tie_or_value::<T>(), o * l * i),
                any::<bool>(),
            )
        })
}

fn run<T: TestElem>(
    kit: &gpukit::Kit,
    geo: Geo,
    x: &[T],
    largest: bool,
) -> gpukit::Result<(Vec<T>, Vec<i64>)> {
    let (o, l, i, k) = geo;
    let bx = kit.upload(x)?;
    let v = kit.alloc(T::DTYPE, o * k * i)?;
    let ix = kit.alloc(DType::I64, o * k * i)?;
    ops::topk(kit, &v, &ix, &bx, o, l, i, k, largest)?;
    Ok((v.download()?, ix.download()?))
}

fn check<T: TestElem + TopkElem>(geo: Geo, x: &[T], largest: bool) -> Result<(), TestCaseError> {
    let (o, l, i, k) = geo;
    let (want_v, want_i) = reference::topk(x, o, l, i, k, largest);
    let what = format!("topk {} [{o}, {l}, {i}] k {k} largest {largest}", T::DTYPE);
    on_backends(&format!("{what} values"), &want_v, |kit| {
        run(kit, geo, x, largest).map(|r| r.0)
    })?;
    on_backends(&format!("{what} indices"), &want_i, |kit| {
        run(kit, geo, x, largest).map(|r| r.1)
    })
}

macro_rules! suite {
    ($t:ty, $name:ident) => {
        proptest! {
            #![proptest_config(cfg())]
            #[test]
            fn $name((geo, x, largest) in case::<$t>()) {
                check::<$t>(geo, &x, largest)?;
            }
        }
    };
}

suite!(f32, topk_f32);
suite!(f64, topk_f64);
suite!(f16, topk_f16);
suite!(bf16, topk_bf16);
suite!(i64, topk_i64);
suite!(i32, topk_i32);

/// Hand-computed answers (what `torch.topk` and ONNX's reference give where they
/// agree) on every backend: ties to the lower index both ways, -0.0 equal to +0.0 (the
/// first one wins), NaN largest (first, or last for the smallest), and a strided axis.
#[test]
fn matches_by_hand() {
    let nan = f32::NAN;
    // One line of 8.
    let x = [1.0f32, 3.0, -0.0, 3.0, nan, 0.0, -2.0, 1.0];
    let cases: [(bool, usize, &[f32], &[i64]); 4] = [
        (true, 4, &[nan, 3.0, 3.0, 1.0], &[4, 1, 3, 0]),
        (false, 4, &[-2.0, -0.0, 0.0, 1.0], &[6, 2, 5, 0]),
        (
            true,
            8,
            &[nan, 3.0, 3.0, 1.0, 1.0, -0.0, 0.0, -2.0],
            &[4, 1, 3, 0, 7, 2, 5, 6],
        ),
        (
            false,
            8,
            &[-2.0, -0.0, 0.0, 1.0, 1.0, 3.0, 3.0, nan],
            &[6, 2, 5, 0, 7, 1, 3, 4],
        ),
    ];
    for (largest, k, wv, wi) in cases {
        let what = format!("topk by hand, largest {largest} k {k}");
        let geo = (1, 8, 1, k);
        on_backends(&what, wv, |kit| run(kit, geo, &x, largest).map(|r| r.0)).unwrap();
        on_backends(&what, wi, |kit| run(kit, geo, &x, largest).map(|r| r.1)).unwrap();
    }
    // [2, 3, 2] along the middle axis (inner 2): the lines are strided.
    let x = [5i64, 0, 7, 9, 5, 9, 1, 2, 1, 2, 3, 2];
    let geo = (2, 3, 2, 2);
    on_backends("topk strided values", &[7, 9, 5, 9, 3, 2, 1, 2], |kit| {
        run(kit, geo, &x, true).map(|r| r.0)
    })
    .unwrap();
    on_backends("topk strided indices", &[1, 1, 0, 2, 2, 0, 0, 1], |kit| {
        run(kit, geo, &x, true).map(|r| r.1)
    })
    .unwrap();
}

/// Bad input is an `Err` naming what is wrong, on every backend, and nothing is
/// written; the raw kernel refuses a bad flag, `k > len` and short buffers.
#[test]
fn bad_input_is_an_error() {
    for (name, kit) in backends() {
        let x = kit.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let v = kit.upload(&[9.0f32; 2]).unwrap();
        let ix = kit.upload(&[7i64; 2]).unwrap();
        let vd = kit.alloc(DType::F64, 2).unwrap();
        let r = ops::topk(&kit, &vd, &ix, &x, 1, 4, 1, 2, true);
        assert!(matches!(r, Err(Error::DType { .. })), "{name}: {r:?}");
        let i32s = kit.alloc(DType::I32, 2).unwrap();
        let r = ops::topk(&kit, &v, &i32s, &x, 1, 4, 1, 2, true);
        assert!(matches!(r, Err(Error::DType { .. })), "{name}: {r:?}");
        let r = ops::topk(&kit, &v, &ix, &x, 1, 4, 1, 5, true);
        assert!(
            matches!(&r, Err(Error::InvalidArgument { reason, .. }) if reason.contains("k = 5")),
            "{name}: {r:?}"
        );
        let r = ops::topk(&kit, &v, &ix, &x, 1, 4, 1, 3, true);
        assert!(matches!(r, Err(Error::Length { .. })), "{name}: {r:?}");
        let r = ops::topk(&kit, &v, &ix, &x, 2, usize::MAX, 2, 0, true);
        assert!(
            matches!(r, Err(Error::SizeOverflow { .. })),
            "{name}: {r:?}"
        );
        // Outputs overlapping the input or each other.
        let xv = x.view(0, 2).unwrap();
        let r = ops::topk(&kit, &xv, &ix, &x, 1, 4, 1, 2, true);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })),
            "{name}: {r:?}"
        );
        let other = gpukit::open("cpu").unwrap();
        let far = other.upload(&[1.0f32; 4]).unwrap();
        let r = ops::topk(&kit, &v, &ix, &far, 1, 4, 1, 2, true);
        assert!(
            matches!(r, Err(Error::DeviceMismatch { .. })),
            "{name}: {r:?}"
        );
        assert_eq!(v.download::<f32>().unwrap(), [9.0; 2], "{name}");
        assert_eq!(ix.download::<i64>().unwrap(), [7; 2], "{name}");
        let raw = |len: i64, k: i64, flag: i64| {
            kit.launch_builtin(
                "topk_f32",
                LaunchConfig::for_elements(4, 256).unwrap(),
                &[
                    (&v).into(),
                    (&ix).into(),
                    (&x).into(),
                    DevArg::I64(1),
                    DevArg::I64(len),
                    DevArg::I64(1),
                    DevArg::I64(k),
                    DevArg::I64(flag),
                ],
            )
        };
        assert!(raw(4, 2, 2).is_err(), "{name}: flag 2 accepted");
        assert!(raw(4, 5, 1).is_err(), "{name}: k > len accepted");
        assert!(
            raw(8, 2, 1).is_err(),
            "{name}: 8 inputs from a 4-element buffer"
        );
        assert!(
            raw(4, 3, 1).is_err(),
            "{name}: 3 outputs into 2-element buffers"
        );
        assert_eq!(v.download::<f32>().unwrap(), [9.0; 2], "{name}");
        // k = 0 and empty shapes are no-ops.
        let (e0, e1) = (
            kit.alloc(DType::F32, 0).unwrap(),
            kit.alloc(DType::I64, 0).unwrap(),
        );
        ops::topk(&kit, &e0, &e1, &x, 1, 4, 1, 0, true).unwrap();
        let ex = kit.alloc(DType::F32, 0).unwrap();
        ops::topk(&kit, &e0, &e1, &ex, 0, 4, 3, 2, false).unwrap();
        ops::topk(&kit, &e0, &e1, &ex, 3, 0, 7, 0, false).unwrap();
    }
}
