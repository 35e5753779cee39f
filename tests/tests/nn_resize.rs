//! The general resize (`ops::resize`, ONNX Resize) on every backend of
//! [`gpukit_tests::backends`] against the reference oracle (which finds its taps
//! itself), bit for bit (any NaN equals any NaN), at 256 cases per dtype: ranks 0..=4,
//! extents 0, 1 and more, sizes or scales, every mode, coordinate mode and nearest mode,
//! cubic with random `A` and `exclude_outside`; values with NaN, ±inf, -0.0 and
//! subnormals. Also fixed ONNX cases and the existing 2-D resizes as special cases.
//! `GPUKIT_CASES=N` changes the case count.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::prelude::*;
use gpukit::{Buf, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, cfg, on_backends, value};
use ops::{CoordMode, NearestMode, ResizeMode, ResizeSpec, ResizeTarget};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// Sizes or scales for one input shape.
#[derive(Debug, Clone)]
enum Target {
    Sizes(Vec<usize>),
    Scales(Vec<f64>),
}

impl Target {
    fn get(&self) -> ResizeTarget<'_> {
        match self {
            Target::Sizes(v) => ResizeTarget::Sizes(v),
            Target::Scales(v) => ResizeTarget::Scales(v),
        }
    }
}

fn extent() -> impl Strategy<Value = usize> {
    prop_oneof![6 => 1usize..=5, 1 => Just(0usize), 1 => Just(9usize)]
}

/// A shape and a target: the leading axes mostly kept, the last two mostly resized.
fn shape_target() -> impl Strategy<Value = (Vec<usize>, Target)> {
    prop::collection::vec(extent(), 0..=4).prop_flat_map(|dims| {
        let r = dims.len();
        let d2 = dims.clone();
        let sizes = prop::collection::vec((extent(), any::<bool>()), r).prop_map(move |v| {
            Target::Sizes(
                v.iter()
                    .enumerate()
                    .map(|(a, &(o, keep))| {
                        // Keep leading axes more often; an empty input keeps its 0.
                        if d2[a] == 0 || (keep && a + 2 < d2.len()) {
                            d2[a]
                        } else {
                            o
                        }
                    })
                    .collect(),
            )
        });
        let d3 = dims.clone();
        let scales = prop::collection::vec(
            prop::sample::select(vec![
                1.0f64,
                0.5,
                2.0,
                3.0,
                0.6,
                1.5,
                0.75,
                1.7,
                0.3333333432674408,
                2.2,
            ]),
            r,
        )
        .prop_map(move |v| {
            Target::Scales(
                v.iter()
                    .zip(&d3)
                    .map(|(&s, &d)| if d == 0 { 1.0 } else { s })
                    .collect(),
            )
        });
        (Just(dims), prop_oneof![sizes, scales])
    })
}

fn spec(float: bool) -> impl Strategy<Value = ResizeSpec> {
    let modes = if float {
        vec![ResizeMode::Nearest, ResizeMode::Linear, ResizeMode::Cubic]
    } else {
        vec![ResizeMode::Nearest]
    };
    (
        prop::sample::select(modes),
        prop::sample::select(CoordMode::ALL.to_vec()),
        prop::sample::select(NearestMode::ALL.to_vec()),
        prop::sample::select(vec![-0.75f64, -0.5, -0.6]),
        any::<bool>(),
    )
        .prop_map(
            |(mode, coord, nearest, cubic_a, exclude_outside)| ResizeSpec {
                mode,
                coord,
                nearest,
                cubic_a,
                exclude_outside,
            },
        )
}

type Case<T> = (Vec<usize>, Target, ResizeSpec, Vec<T>);

fn case<T: TestElem>(float: bool) -> impl Strategy<Value = Case<T>> {
    (shape_target(), spec(float)).prop_flat_map(|((dims, t), s)| {
        let n: usize = dims.iter().product();
        (
            Just(dims),
            Just(t),
            Just(s),
            prop::collection::vec(value::<T>(), n),
        )
    })
}

fn run<T: Element>(
    kit: &Kit,
    x: &[T],
    dims: &[usize],
    t: &Target,
    s: &ResizeSpec,
) -> gpukit::Result<Vec<T>> {
    let out_dims = ops::resize_out_dims(dims, t.get())?;
    let bx = kit.upload(x)?;
    let out: Buf = kit.alloc(T::DTYPE, out_dims.iter().product())?;
    ops::resize(kit, &out, &bx, dims, t.get(), s)?;
    out.download()
}

fn what(c: &(Vec<usize>, Target, ResizeSpec)) -> String {
    format!("resize {:?} to {:?} with {:?}", c.0, c.1, c.2)
}

fn check_float<T: TestElem + FloatElement>(c: &Case<T>) -> TestResult {
    let (dims, t, s, x) = c;
    let want = reference::resize_nd(x, dims, t.get(), s);
    on_backends(&what(&(dims.clone(), t.clone(), *s)), &want, |kit| {
        run(kit, x, dims, t, s)
    })
}

fn check_int<T: TestElem>(c: &Case<T>) -> TestResult {
    let (dims, t, s, x) = c;
    let want = reference::resize_nearest_nd(x, dims, t.get(), s);
    on_backends(&what(&(dims.clone(), t.clone(), *s)), &want, |kit| {
        run(kit, x, dims, t, s)
    })
}

mod equivalence {
    use super::*;
    proptest! {
        #![proptest_config(cfg())]
        #[test] fn t_f32(c in case::<f32>(true)) { check_float::<f32>(&c)?; }
        #[test] fn t_f64(c in case::<f64>(true)) { check_float::<f64>(&c)?; }
        #[test] fn t_f16(c in case::<f16>(true)) { check_float::<f16>(&c)?; }
        #[test] fn t_bf16(c in case::<bf16>(true)) { check_float::<bf16>(&c)?; }
        #[test] fn t_i64(c in case::<i64>(false)) { check_int::<i64>(&c)?; }
        #[test] fn t_i32(c in case::<i32>(false)) { check_int::<i32>(&c)?; }
    }
}

fn cpu_run(x: &[f32], dims: &[usize], t: &Target, s: &ResizeSpec) -> Vec<f32> {
    run(&gpukit::cpu().unwrap(), x, dims, t, s).unwrap()
}

fn spec_of(mode: ResizeMode, coord: CoordMode) -> ResizeSpec {
    ResizeSpec {
        mode,
        coord,
        ..ResizeSpec::default()
    }
}

/// ONNX's documented examples (onnx/backend/test/case/node/resize.py), exact here.
#[test]
fn onnx_examples() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    // test_resize_upsample_scales_linear: [[1,2],[3,4]] x2, half_pixel.
    let got = cpu_run(
        &x,
        &[1, 1, 2, 2],
        &Target::Scales(vec![1.0, 1.0, 2.0, 2.0]),
        &spec_of(ResizeMode::Linear, CoordMode::HalfPixel),
    );
    assert_eq!(
        got,
        [
            1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0
        ]
    );
    // test_resize_upsample_scales_linear_align_corners.
    let got = cpu_run(
        &x,
        &[1, 1, 2, 2],
        &Target::Scales(vec![1.0, 1.0, 2.0, 2.0]),
        &spec_of(ResizeMode::Linear, CoordMode::AlignCorners),
    );
    let want = [
        1.0f32,
        1.333_333_3,
        1.666_666_7,
        2.0,
        1.666_666_7,
        2.0,
        2.333_333_3,
        2.666_666_7,
        2.333_333_3,
        2.666_666_7,
        3.0,
        3.333_333_3,
        3.0,
        3.333_333_3,
        3.666_666_7,
        4.0,
    ];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6, "{got:?}");
    }
    // test_resize_downsample_scales_nearest: [[1..4],[5..8]] x0.6 -> [[1, 3]].
    let y: Vec<f32> = (1..=8).map(|v| v as f32).collect();
    let got = cpu_run(
        &y,
        &[1, 1, 2, 4],
        &Target::Scales(vec![1.0, 1.0, 0.6000000238418579, 0.6000000238418579]),
        &spec_of(ResizeMode::Nearest, CoordMode::HalfPixel),
    );
    assert_eq!(got, [1.0, 3.0]);
    // test_resize_upsample_sizes_nearest_ceil_half_pixel (first row): 4x4 -> 8x8.
    let z: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let got = cpu_run(
        &z,
        &[1, 1, 4, 4],
        &Target::Sizes(vec![1, 1, 8, 8]),
        &ResizeSpec {
            nearest: NearestMode::Ceil,
            ..spec_of(ResizeMode::Nearest, CoordMode::HalfPixel)
        },
    );
    assert_eq!(&got[..8], &[1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 4.0]);
    // test_resize_upsample_sizes_nearest_floor_align_corners (first row).
    let got = cpu_run(
        &z,
        &[1, 1, 4, 4],
        &Target::Sizes(vec![1, 1, 8, 8]),
        &ResizeSpec {
            nearest: NearestMode::Floor,
            ..spec_of(ResizeMode::Nearest, CoordMode::AlignCorners)
        },
    );
    assert_eq!(&got[..8], &[1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]);
    // test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric (first row).
    let got = cpu_run(
        &z,
        &[1, 1, 4, 4],
        &Target::Sizes(vec![1, 1, 8, 8]),
        &ResizeSpec {
            nearest: NearestMode::RoundPreferCeil,
            ..spec_of(ResizeMode::Nearest, CoordMode::Asymmetric)
        },
    );
    assert_eq!(&got[..8], &[1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 4.0]);
}

/// The existing resize_nearest (asymmetric, floor, exact integer quotients) agrees with
/// this op's nearest/asymmetric/floor with sizes on these shapes (the f64 coordinate
/// `y / (out / in)` does not round across an integer here; it always agrees for
/// integer upsampling factors).
#[test]
fn existing_nearest_is_a_special_case() {
    let kit = gpukit::cpu().unwrap();
    let s = ResizeSpec {
        nearest: NearestMode::Floor,
        ..spec_of(ResizeMode::Nearest, CoordMode::Asymmetric)
    };
    for (ih, iw, oh, ow) in [
        (1, 1, 3, 2),
        (3, 5, 7, 2),
        (4, 4, 8, 8),
        (5, 3, 2, 9),
        (7, 6, 3, 4),
    ] {
        let x: Vec<f32> = (0..2 * ih * iw).map(|v| v as f32 * 0.5 - 3.0).collect();
        let bx = kit.upload(&x).unwrap();
        let out: Buf = kit.alloc(DType::F32, 2 * oh * ow).unwrap();
        let r = ops::Resize2d {
            n: 2,
            c: 1,
            in_h: ih,
            in_w: iw,
            out_h: oh,
            out_w: ow,
        };
        ops::resize_nearest(&kit, &out, &bx, r).unwrap();
        let old = out.download::<f32>().unwrap();
        let new = run(
            &kit,
            &x,
            &[2, 1, ih, iw],
            &Target::Sizes(vec![2, 1, oh, ow]),
            &s,
        )
        .unwrap();
        assert_eq!(old, new, "{ih}x{iw} -> {oh}x{ow}");
    }
}

/// Linear half_pixel against an f64 host bilinear (finite values): within a few f32
/// ulps of the exact interpolation.
#[test]
fn linear_values_match_f64() {
    let (ih, iw, oh, ow) = (5usize, 7usize, 9usize, 4usize);
    let x: Vec<f32> = (0..ih * iw)
        .map(|v| ((v * 37 % 23) as f32) * 0.37 - 2.0)
        .collect();
    let got = cpu_run(
        &x,
        &[ih, iw],
        &Target::Sizes(vec![oh, ow]),
        &spec_of(ResizeMode::Linear, CoordMode::HalfPixel),
    );
    let coord = |o: usize, i: usize, n: usize| {
        let c = ((o as f64 + 0.5) * i as f64 / n as f64 - 0.5).clamp(0.0, i as f64 - 1.0);
        let f = c.floor() as usize;
        let g = (f + 1).min(i - 1);
        (f, g, c - f as f64)
    };
    for oy in 0..oh {
        let (y0, y1, wy) = coord(oy, ih, oh);
        for ox in 0..ow {
            let (x0, x1, wx) = coord(ox, iw, ow);
            let at = |y: usize, xx: usize| x[y * iw + xx] as f64;
            let t = at(y0, x0) * (1.0 - wx) + at(y0, x1) * wx;
            let b = at(y1, x0) * (1.0 - wx) + at(y1, x1) * wx;
            let v = t * (1.0 - wy) + b * wy;
            let g = got[oy * ow + ox] as f64;
            assert!(
                (g - v).abs() <= 1e-5 * v.abs().max(1.0),
                "{oy},{ox}: {g} vs {v}"
            );
        }
    }
}

/// Errors name the op and what was wrong.
#[test]
fn bad_inputs_are_refused() {
    let kit = gpukit::cpu().unwrap();
    let x = kit.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let out: Buf = kit.alloc(DType::F32, 16).unwrap();
    let lin = spec_of(ResizeMode::Linear, CoordMode::HalfPixel);
    let e = |r: gpukit::Result<()>| r.unwrap_err().to_string();
    // Wrong target length.
    let m = e(ops::resize(
        &kit,
        &out,
        &x,
        &[2, 2],
        ResizeTarget::Sizes(&[4]),
        &lin,
    ));
    assert!(m.contains("resize") && m.contains("rank 2"), "{m}");
    // A bad scale.
    let m = e(ops::resize(
        &kit,
        &out,
        &x,
        &[2, 2],
        ResizeTarget::Scales(&[2.0, -1.0]),
        &lin,
    ));
    assert!(m.contains("scale -1"), "{m}");
    // out of the wrong length.
    let m = e(ops::resize(
        &kit,
        &out,
        &x,
        &[2, 2],
        ResizeTarget::Sizes(&[3, 3]),
        &lin,
    ));
    assert!(m.contains("resize") && m.contains("out"), "{m}");
    // x not the product of its dims.
    let m = e(ops::resize(
        &kit,
        &out,
        &x,
        &[2, 3],
        ResizeTarget::Sizes(&[4, 4]),
        &lin,
    ));
    assert!(m.contains("x of shape [2, 3]"), "{m}");
    // Integers do not interpolate.
    let xi = kit.upload(&[1i32, 2, 3, 4]).unwrap();
    let oi: Buf = kit.alloc(DType::I32, 16).unwrap();
    let m = e(ops::resize(
        &kit,
        &oi,
        &xi,
        &[2, 2],
        ResizeTarget::Sizes(&[4, 4]),
        &lin,
    ));
    assert!(m.contains("nearest takes any dtype"), "{m}");
    // Mixed dtypes.
    let m = e(ops::resize(
        &kit,
        &oi,
        &x,
        &[2, 2],
        ResizeTarget::Sizes(&[4, 4]),
        &lin,
    ));
    assert!(m.contains("resize"), "{m}");
    // Empty input axis with a non-empty output axis.
    let x0: Buf = kit.alloc(DType::F32, 0).unwrap();
    let m = e(ops::resize(
        &kit,
        &out,
        &x0,
        &[0, 2],
        ResizeTarget::Sizes(&[8, 2]),
        &lin,
    ));
    assert!(m.contains("empty"), "{m}");
    // Non-finite cubic A.
    let cub = ResizeSpec {
        cubic_a: f64::NAN,
        ..spec_of(ResizeMode::Cubic, CoordMode::HalfPixel)
    };
    let m = e(ops::resize(
        &kit,
        &out,
        &x,
        &[2, 2],
        ResizeTarget::Sizes(&[4, 4]),
        &cub,
    ));
    assert!(m.contains("cubic_coeff_a"), "{m}");
    // In place is refused.
    let m = e(ops::resize(
        &kit,
        &x,
        &x,
        &[2, 2],
        ResizeTarget::Sizes(&[2, 2]),
        &lin,
    ));
    assert!(m.contains("overlap"), "{m}");
    // Rank above 8.
    let one = kit.upload(&[5.0f32]).unwrap();
    let one_out: Buf = kit.alloc(DType::F32, 1).unwrap();
    let m = e(ops::resize(
        &kit,
        &one_out,
        &one,
        &[1; 9],
        ResizeTarget::Sizes(&[1; 9]),
        &lin,
    ));
    assert!(m.contains("rank 9"), "{m}");
}

/// Raw launches with lying tables are refused by the content check on the CPU and the
/// emulator alike (argument index named), never read out of bounds.
#[test]
fn lying_tables_are_refused() {
    for (name, kit) in gpukit_tests::backends() {
        if name == "cuda" {
            continue;
        }
        let x = kit.upload(&[1.0f32, 2.0]).unwrap();
        let out: Buf = kit.alloc(DType::F32, 3).unwrap();
        let dims = kit.upload(&[2i64, 3]).unwrap();
        let w = kit.upload(&[1.0f64, 0.0, 0.5, 0.5, 1.0, 0.0]).unwrap();
        for (taps, idx) in [
            (vec![1i64, 0, 0, 2, 0, 2, 1, 1, 0], 3usize),
            (vec![1, 0, 0, 3, 0, 1, 1, 1, 0], 3),
            (vec![0, 0, 0, 2, 0, 1, 1, 1, 0], 3),
        ] {
            let t = kit.upload(&taps).unwrap();
            let r = kit.launch_builtin(
                "resize_f32",
                LaunchConfig::for_elements(3, 256).unwrap(),
                &[
                    (&out).into(),
                    (&x).into(),
                    (&dims).into(),
                    (&t).into(),
                    (&w).into(),
                    DevArg::I64(1),
                    DevArg::I64(2),
                    DevArg::I64(3),
                    DevArg::I64(3),
                    DevArg::I64(1),
                ],
            );
            match r {
                Err(gpukit::Error::Argument { index, .. }) if index == idx => {}
                other => panic!("{name}: {taps:?}: {other:?}"),
            }
        }
    }
}

proptest! {
    #![proptest_config(cfg())]
    /// Random (often wrong) shapes, targets, specs and buffer lengths: an `Ok` or an
    /// `Err`, never a panic, on the CPU and the emulator.
    #[test]
    fn random_calls_never_panic(
        dims in prop::collection::vec(prop_oneof![4 => 0usize..6, 1 => Just(usize::MAX), 1 => Just(1usize << 40)], 0..=9),
        sizes in prop::collection::vec(prop_oneof![4 => 0usize..8, 1 => Just(usize::MAX), 1 => Just(1usize << 40)], 0..=9),
        scales in prop::collection::vec(prop_oneof![4 => 0.1f64..3.0, 1 => Just(f64::NAN), 1 => Just(-1.0), 1 => Just(1e300)], 0..=9),
        use_sizes in any::<bool>(),
        s in spec(true),
        a in any::<f64>(),
        lens in (0usize..64, 0usize..64),
        int in any::<bool>(),
    ) {
        let s = ResizeSpec { cubic_a: if a.is_finite() { s.cubic_a } else { a }, ..s };
        let t = if use_sizes { ResizeTarget::Sizes(&sizes) } else { ResizeTarget::Scales(&scales) };
        for (name, kit) in gpukit_tests::backends() {
            if name == "cuda" {
                continue;
            }
            let d = if int { DType::I32 } else { DType::F32 };
            let x: Buf = kit.alloc(d, lens.0).unwrap();
            let out: Buf = kit.alloc(d, lens.1).unwrap();
            let _ = ops::resize(&kit, &out, &x, &dims, t, &s);
            let _ = ops::resize_out_dims(&dims, t);
        }
    }
}
