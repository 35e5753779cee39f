//! `ops::gather_elements` / `ops::scatter_elements` refuse bad shapes, dtypes, lengths,
//! overlaps, foreign kits and out-of-range indices with a specific error; raw launches
//! of their kernels are checked (lengths, reduction codes, index contents) on cpu and
//! ptx-emu before anything runs.

use gpukit::prelude::*;
use gpukit::{Buf, ops};
use ops::ScatterReduction;

fn kits() -> Vec<Kit> {
    vec![
        gpukit::open("cpu").unwrap(),
        gpukit::open("ptx-emu").unwrap(),
    ]
}

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn gather_elements_errors() {
    for k in kits() {
        // data [2, 3, 2], idx / out [2, 4, 2].
        let (data, out) = (f32s(&k, 12), f32s(&k, 16));
        let idx = k.upload(&[0i64; 16]).unwrap();
        ops::gather_elements(&k, &out, &data, &idx, 2, 3, 2, 4).unwrap();
        let short = k.upload(&[0i64; 15]).unwrap();
        let e = ops::gather_elements(&k, &out, &data, &short, 2, 3, 2, 4).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Length {
                    expected: 16,
                    got: 15,
                    ..
                }
            ),
            "{e}"
        );
        let e = ops::gather_elements(&k, &out, &f32s(&k, 11), &idx, 2, 3, 2, 4).unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let e = ops::gather_elements(&k, &f32s(&k, 15), &data, &idx, 2, 3, 2, 4).unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let i32idx = k.upload(&[0i32; 16]).unwrap();
        let e = ops::gather_elements(&k, &out, &data, &i32idx, 2, 3, 2, 4).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DType {
                    got: DType::I32,
                    ..
                }
            ),
            "{e}"
        );
        let d64 = k.upload(&[0.0f64; 12]).unwrap();
        let e = ops::gather_elements(&k, &out, &d64, &idx, 2, 3, 2, 4).unwrap_err();
        assert!(matches!(e, Error::DType { .. }), "{e}");
        // out overlapping data.
        let big = f32s(&k, 16);
        let e = ops::gather_elements(&k, &big, &big.view(0, 12).unwrap(), &idx, 2, 3, 2, 4)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        // Extents whose product overflows.
        let e = ops::gather_elements(&k, &out, &data, &idx, usize::MAX, 3, 2, 4).unwrap_err();
        assert!(
            matches!(e, Error::SizeOverflow { .. } | Error::Length { .. }),
            "{e}"
        );
        // A buffer of another kit.
        let other = Kit::cpu().unwrap();
        let foreign = other.upload(&[0i64; 16]).unwrap();
        let e = ops::gather_elements(&k, &out, &data, &foreign, 2, 3, 2, 4).unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
        // Out of range: the error names the index; nothing is written.
        let bad = k.upload(&[[0i64; 15].as_slice(), &[-4]].concat()).unwrap();
        let fresh = k.upload(&[7.0f32; 16]).unwrap();
        let e = ops::gather_elements(&k, &fresh, &data, &bad, 2, 3, 2, 4).unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfRange {
                    index: -4,
                    axis_len: 3,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(fresh.download::<f32>().unwrap(), [7.0; 16]);
    }
}

#[test]
fn scatter_elements_errors() {
    for k in kits() {
        let (data, y, upd) = (f32s(&k, 12), f32s(&k, 12), f32s(&k, 16));
        let idx = k.upload(&[-1i64; 16]).unwrap();
        let r = ScatterReduction::Add;
        ops::scatter_elements(&k, &y, &data, &idx, &upd, 2, 3, 2, 4, r).unwrap();
        assert_eq!(y.download::<f32>().unwrap()[4], 5.0);
        let e =
            ops::scatter_elements(&k, &y, &data, &idx, &f32s(&k, 15), 2, 3, 2, 4, r).unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let e =
            ops::scatter_elements(&k, &f32s(&k, 13), &data, &idx, &upd, 2, 3, 2, 4, r).unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let ui = k.upload(&[0i32; 16]).unwrap();
        let e = ops::scatter_elements(&k, &y, &data, &idx, &ui, 2, 3, 2, 4, r).unwrap_err();
        assert!(matches!(e, Error::DType { .. }), "{e}");
        // y overlapping upd or idx; y exactly data is in place (allowed).
        let e = ops::scatter_elements(
            &k,
            &upd.view(0, 12).unwrap(),
            &data,
            &idx,
            &upd,
            2,
            3,
            2,
            4,
            r,
        )
        .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        ops::scatter_elements(&k, &data, &data, &idx, &upd, 2, 3, 2, 4, r).unwrap();
        let bad = k.upload(&[[0i64; 15].as_slice(), &[3]].concat()).unwrap();
        let fresh = k.upload(&[7.0f32; 12]).unwrap();
        for red in ScatterReduction::ALL {
            let e =
                ops::scatter_elements(&k, &fresh, &data, &bad, &upd, 2, 3, 2, 4, red).unwrap_err();
            assert!(matches!(e, Error::IndexOutOfRange { index: 3, .. }), "{e}");
            assert_eq!(fresh.download::<f32>().unwrap(), [7.0; 12]);
        }
    }
}

/// Raw launches: lengths against the scalars, the reduction code, and the index
/// contents (the shared content check) are refused before the kernel runs.
/// The arguments of a raw `scatter_elements` launch on `[1, 3, 2]` data.
fn args<'a>(y: &'a Buf, i: &'a Buf, upd: &'a Buf, n: i64, code: i64) -> [DevArg<'a>; 8] {
    [
        DevArg::Buf(y),
        DevArg::Buf(i),
        DevArg::Buf(upd),
        DevArg::I64(1),
        DevArg::I64(3),
        DevArg::I64(2),
        DevArg::I64(n),
        DevArg::I64(code),
    ]
}

#[test]
fn element_raw_launches_are_checked() {
    for k in kits() {
        let cfg = LaunchConfig::for_elements(1, 1).unwrap();
        let (y, upd) = (f32s(&k, 6), f32s(&k, 6));
        let idx = k.upload(&[0i64, 1, 2, -1, -2, -3]).unwrap();
        k.launch_builtin("scatter_elements_f32", cfg, &args(&y, &idx, &upd, 3, 4))
            .unwrap();
        for (n, code) in [(3, 5), (3, -1), (4, 0)] {
            let r = k.launch_builtin("scatter_elements_f32", cfg, &args(&y, &idx, &upd, n, code));
            assert!(
                matches!(r, Err(Error::Argument { .. })),
                "n={n} code={code}: {r:?}"
            );
        }
        // An index past the axis in a raw launch: refused, not read out of bounds.
        let lying = k.upload(&[0i64, 1, 2, 3, 0, 0]).unwrap();
        let r = k.launch_builtin("scatter_elements_f32", cfg, &args(&y, &lying, &upd, 3, 0));
        assert!(r.is_err(), "{r:?}");
        let out = f32s(&k, 6);
        let r = k.launch_builtin(
            "gather_elements_f32",
            cfg,
            &[
                DevArg::Buf(&out),
                DevArg::Buf(&y),
                DevArg::Buf(&lying),
                DevArg::I64(1),
                DevArg::I64(3),
                DevArg::I64(2),
                DevArg::I64(3),
            ],
        );
        assert!(r.is_err(), "{r:?}");
    }
}

#[test]
fn pad_errors_and_raw_launches() {
    use ops::PadMode;
    for k in kits() {
        let (x, v) = (f32s(&k, 6), f32s(&k, 1));
        let out = f32s(&k, 12);
        ops::pad(&k, &out, &x, &v, &[2, 3], &[1, 0, 1, 0], PadMode::Edge).unwrap();
        for (pads, mode) in [
            (vec![1, 0, 1], PadMode::Constant),
            (vec![-3, 0, 0, 0], PadMode::Constant),
            (vec![-2, 0, 1, 0], PadMode::Reflect),
            (vec![i64::MIN, 0, 0, 0], PadMode::Wrap),
        ] {
            let e = ops::pad(&k, &out, &x, &v, &[2, 3], &pads, mode).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{pads:?}: {e}");
        }
        let e = ops::pad(
            &k,
            &out,
            &x,
            &v,
            &[2, 3],
            &[i64::MAX, 0, 0, 0],
            PadMode::Constant,
        )
        .unwrap_err();
        assert!(matches!(e, Error::SizeOverflow { .. }), "{e}");
        let e = ops::pad(
            &k,
            &f32s(&k, 11),
            &x,
            &v,
            &[2, 3],
            &[1, 0, 1, 0],
            PadMode::Edge,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let e = ops::pad(
            &k,
            &out,
            &x,
            &f32s(&k, 2),
            &[2, 3],
            &[1, 0, 1, 0],
            PadMode::Edge,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Length { .. }), "{e}");
        let vi = k.upload(&[0i32]).unwrap();
        let e = ops::pad(&k, &out, &x, &vi, &[2, 3], &[1, 0, 1, 0], PadMode::Edge).unwrap_err();
        assert!(matches!(e, Error::DType { .. }), "{e}");
        let e = ops::pad(&k, &x, &x, &v, &[2, 3], &[0, 0, 0, 0], PadMode::Edge).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
        // Raw launches: a bad mode, a lying layout (crop past the input, an output
        // product other than n_out) are refused before the kernel runs.
        let cfg = LaunchConfig::for_elements(1, 1).unwrap();
        let run = |layout: &[i64], mode: i64, n: i64| {
            let lb = k.upload(layout).unwrap();
            k.launch_builtin(
                "pad_f32",
                cfg,
                &[
                    DevArg::Buf(&out),
                    DevArg::Buf(&x),
                    DevArg::Buf(&v),
                    DevArg::Buf(&lb),
                    DevArg::I64(1),
                    DevArg::I64(mode),
                    DevArg::I64(n),
                ],
            )
        };
        run(&[8, 6, 0, 6, 1], 1, 8).unwrap();
        assert!(matches!(
            run(&[8, 6, 0, 6, 1], 4, 8),
            Err(Error::Argument { .. })
        ));
        assert!(run(&[8, 6, 3, 6, 1], 1, 8).is_err());
        assert!(run(&[8, 9, 0, 9, 1], 1, 8).is_err());
        assert!(run(&[8, 6, 0, 6, 1], 1, 7).is_err());
        assert!(run(&[8, 6, 0, 0, 1], 2, 8).is_err());
    }
}
