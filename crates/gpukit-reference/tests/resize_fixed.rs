//! The general resize oracle (`resize_nd`, `resize_nearest_nd`) on ONNX's documented
//! cases and values from onnx's reference evaluator (onnx 1.23, opset 19; the
//! evaluator computes in f64 and rounds once, so f32 results agree within a few ulps).

use gpukit_core::resize::{CoordMode, NearestMode, ResizeMode, ResizeSpec, ResizeTarget};
use gpukit_reference::{resize_nd, resize_nearest_nd, resize_out_dims};

fn spec(mode: ResizeMode, coord: CoordMode) -> ResizeSpec {
    ResizeSpec {
        mode,
        coord,
        ..ResizeSpec::default()
    }
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 2e-6 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

fn x16() -> Vec<f32> {
    (1..=16).map(|v| v as f32).collect()
}

#[test]
fn cubic_matches_the_onnx_reference() {
    // test_resize_upsample_scales_cubic (first row).
    let s = [1.0, 1.0, 2.0, 2.0];
    let got = resize_nd(
        &x16(),
        &[1, 1, 4, 4],
        ResizeTarget::Scales(&s),
        &spec(ResizeMode::Cubic, CoordMode::HalfPixel),
    );
    close(
        &got[..8],
        &[
            0.47265625, 0.76953125, 1.2460938, 1.875, 2.28125, 2.9101562, 3.3867188, 3.6835938,
        ],
    );
    // A = -0.5 with exclude_outside.
    let e = ResizeSpec {
        cubic_a: -0.5,
        exclude_outside: true,
        ..spec(ResizeMode::Cubic, CoordMode::HalfPixel)
    };
    let got = resize_nd(&x16(), &[1, 1, 4, 4], ResizeTarget::Scales(&s), &e);
    close(
        &got[..8],
        &[
            0.5588235, 0.81494206, 1.3569825, 1.8970588, 2.3970587, 2.9371352, 3.4791756, 3.735294,
        ],
    );
    // align_corners to 3x3 by sizes.
    let got = resize_nd(
        &x16(),
        &[1, 1, 4, 4],
        ResizeTarget::Sizes(&[1, 1, 3, 3]),
        &spec(ResizeMode::Cubic, CoordMode::AlignCorners),
    );
    close(&got, &[1.0, 2.5, 4.0, 7.0, 8.5, 10.0, 13.0, 14.5, 16.0]);
}

#[test]
fn half_pixel_symmetric_matches_the_onnx_reference() {
    let s = [1.0, 1.0, 0.6000000238418579, 0.6000000238418579];
    let got = resize_nd(
        &x16(),
        &[1, 1, 4, 4],
        ResizeTarget::Scales(&s),
        &spec(ResizeMode::Linear, CoordMode::HalfPixelSymmetric),
    );
    close(&got, &[4.3333335, 6.0, 11.0, 12.666666]);
}

#[test]
fn nearest_modes_and_integers() {
    // test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric, first row.
    let x: Vec<i32> = (1..=16).collect();
    let s = ResizeSpec {
        nearest: NearestMode::RoundPreferCeil,
        ..spec(ResizeMode::Nearest, CoordMode::Asymmetric)
    };
    let got = resize_nearest_nd(&x, &[1, 1, 4, 4], ResizeTarget::Sizes(&[1, 1, 8, 8]), &s);
    assert_eq!(&got[..8], &[1, 2, 2, 3, 3, 4, 4, 4]);
    // Rank 0 is one element; an empty axis gives an empty output.
    assert_eq!(
        resize_nearest_nd(&[7i64], &[], ResizeTarget::Sizes(&[]), &s),
        vec![7]
    );
    assert!(resize_nearest_nd::<i64>(&[], &[0, 3], ResizeTarget::Sizes(&[0, 5]), &s).is_empty());
    // Scales give floor(in * s).
    assert_eq!(
        resize_out_dims(&[5, 4], ResizeTarget::Scales(&[0.6, 1.7])).0,
        vec![3, 6]
    );
}

#[test]
fn zero_weight_taps_are_not_read() {
    // An integer coordinate reads one tap: inf next to it does not make NaN.
    let x = [1.0f32, f32::INFINITY];
    let got = resize_nd(
        &x,
        &[2],
        ResizeTarget::Sizes(&[3]),
        &spec(ResizeMode::Linear, CoordMode::AlignCorners),
    );
    assert_eq!(got[0], 1.0);
    assert_eq!(got[2], f32::INFINITY);
    assert!(got[1].is_infinite());
    // -0.0 survives an identity axis and a weight-1 tap.
    let z = [-0.0f32, 2.0];
    let got = resize_nd(
        &z,
        &[2],
        ResizeTarget::Sizes(&[2]),
        &spec(ResizeMode::Cubic, CoordMode::HalfPixel),
    );
    assert_eq!(got[0].to_bits(), (-0.0f32).to_bits());
}
