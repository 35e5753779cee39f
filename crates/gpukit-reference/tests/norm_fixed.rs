//! Fixed cases for the `norm` group of the reference oracle, whose expected values do NOT
//! come from the oracle or the kernels: each is derived by hand (the derivation is in
//! the comment) or taken from the examples in the ONNX operator documentation
//! (onnx/docs/Operators.md: BatchNormalization, LayerNormalization, LeakyRelu, Clip,
//! Erf, Gelu, Softmax, ArgMax, ReduceL2) or from exact mathematical values
//! (Python's `math.erf`, `math.tanh` in f64, quoted to 16 digits).
//!
//! Comparisons are bitwise under rule 8 except in the tests that go through gpukit's
//! transcendental functions (erf, tanh, exp: faithfully rounded, ≤ 1 ulp, rule 3) or
//! compare with ONNX's numpy outputs (computed without fma): those allow a few ulps and
//! say why.

use gpukit_core::half::f16;
use gpukit_reference as reference;

mod common;
use common::{assert_bits, ulps_f32};

/// Every `got[i]` within `ulps` of the f64 value `want[i]` rounded to f32.
#[track_caller]
fn assert_close_f32(got: &[f32], want: &[f64], ulps: u64) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let d = ulps_f32(g, w as f32);
        assert!(d <= ulps, "element {i}: got {g}, want {w} ({d} ulps)");
    }
}

// ---------------------------------------------------------------------------------------
// BatchNormalization
// ---------------------------------------------------------------------------------------

/// By hand, exact: x [N=2, C=2, S=2]; mean [2, 0], var [3, -0.75], eps 1, so den =
/// sqrt(3 + 1) = 2 for channel 0 and sqrt(-0.75 + 1) = 0.5 for channel 1.
/// ch0: (1-2)/2 = -0.5 → fma(-0.5, 1.5, 0.25) = -0.5; (3-2)/2 = 0.5 → 1.0;
///      (2-2)/2 = 0 → 0.25; (-6-2)/2 = -4 → -5.75.
/// ch1: (-2-0)/0.5 = -4 → fma(-4, -1, 1) = 5; 0.5/0.5 = 1 → fma(1, -1, 1) = +0.0;
///      (0-0)/0.5 = 0 → 1; 8/0.5 = 16 → -15.
#[test]
fn batch_norm_by_hand() {
    let x = [1.0f32, 3.0, -2.0, 0.5, 2.0, -6.0, 0.0, 8.0];
    let (scale, bias) = ([1.5f32, -1.0], [0.25f32, 1.0]);
    let (mean, var) = ([2.0f32, 0.0], [3.0f32, -0.75]);
    let y = reference::batch_norm(&x, &scale, &bias, &mean, &var, 2, 2, 2, 1.0);
    assert_bits(&y, &[-0.5, 1.0, 5.0, 0.0, 0.25, -5.75, 1.0, -15.0]);
    // f64 and f16 give the same exact values.
    let x64: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let c = |a: [f32; 2]| a.map(f64::from);
    let y = reference::batch_norm(&x64, &c(scale), &c(bias), &c(mean), &c(var), 2, 2, 2, 1.0);
    assert_bits(&y, &[-0.5, 1.0, 5.0, 0.0, 0.25, -5.75, 1.0, -15.0]);
    let h = |a: &[f32]| a.iter().map(|&v| f16::from_f32(v)).collect::<Vec<_>>();
    let y = reference::batch_norm(
        &h(&x),
        &h(&scale),
        &h(&bias),
        &h(&mean),
        &h(&var),
        2,
        2,
        2,
        1.0,
    );
    assert_bits(&y, &h(&[-0.5, 1.0, 5.0, 0.0, 0.25, -5.75, 1.0, -15.0]));
}

/// ONNX BatchNormalization example (`x` (1, 2, 1, 3), scale [1, 1.5], bias [0, 1], mean
/// [0, 3], var [1, 1.5], eps 1e-5), the expected values computed from ONNX's formula
/// `(x - mean) / sqrt(var + eps) * scale + B` in f64 (the docs print numpy's float32
/// result, which rounds the product before the bias and so differs by up to 4 ulps
/// after the cancellation in channel 1): within 2 ulps of the exact value (f32 rounds
/// var + eps, the quotient, the sqrt and the fused step once each).
#[test]
fn batch_norm_onnx_example() {
    let x = [-1.0f32, 0.0, 1.0, 2.0, 3.0, 4.0];
    let (scale, bias, mean, var) = ([1.0, 1.5], [0.0, 1.0], [0.0, 3.0], [1.0, 1.5]);
    let y = reference::batch_norm(&x, &scale, &bias, &mean, &var, 1, 2, 3, 1e-5);
    let want: Vec<f64> = (0..6)
        .map(|i| {
            let k = i / 3;
            let (m, v) = (f64::from(mean[k]), f64::from(var[k]));
            (f64::from(x[i]) - m) / (v + 1e-5).sqrt() * f64::from(scale[k]) + f64::from(bias[k])
        })
        .collect();
    assert_close_f32(&y, &want, 2);
    // The printed docs values, to 4 ulps.
    assert_close_f32(
        &y,
        &[-0.999995, 0.0, 0.999995, -0.22474074, 1.0, 2.2247407],
        4,
    );
}

/// By hand: a zero variance with eps = 0 gives 0/0 = NaN for x = mean and ±inf
/// otherwise (IEEE division); a NaN input gives NaN.
#[test]
fn batch_norm_specials() {
    let y = reference::batch_norm(
        &[1.0f32, 2.0, f32::NAN],
        &[1.0],
        &[0.0],
        &[1.0],
        &[0.0],
        1,
        1,
        3,
        0.0,
    );
    assert!(y[0].is_nan());
    assert_eq!(y[1], f32::INFINITY);
    assert!(y[2].is_nan());
}

// ---------------------------------------------------------------------------------------
// LayerNormalization
// ---------------------------------------------------------------------------------------

/// By hand, exact (rows chosen so that var + eps is a perfect square), eps 1,
/// scale 2, bias 0.5.
/// Row [0, 0, 0, 4]: mean 1, d = [-1, -1, -1, 3], Σd² = 12, var 3, den 2 →
/// [-0.5, -0.5, -0.5, 1.5] → fma(·, 2, 0.5) = [-0.5, -0.5, -0.5, 3.5].
/// Row [0, 0, 0, -4]: mean -1, d = [1, 1, 1, -3], var 3, den 2 → [0.5, 0.5, 0.5, -1.5]
/// → [1.5, 1.5, 1.5, -2.5].
#[test]
fn layer_norm_by_hand() {
    let x = [0.0f32, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, -4.0];
    let y = reference::layer_norm(&x, &[2.0; 4], &[0.5; 4], 2, 4, 1.0);
    assert_bits(&y, &[-0.5, -0.5, -0.5, 3.5, 1.5, 1.5, 1.5, -2.5]);
}

/// ONNX LayerNormalization: a constant row has zero variance, so with eps > 0 every
/// output is `0 / sqrt(eps) * scale + bias = bias` (by hand: eps 0.25 → den 0.5, 0/0.5
/// = 0, fma(0, s, b) = b); with eps 0 it is 0/0 = NaN.
#[test]
fn layer_norm_constant_rows() {
    let y = reference::layer_norm(&[5.0f64; 3], &[3.0; 3], &[1.0, -2.0, 0.5], 1, 3, 0.25);
    assert_bits(&y, &[1.0, -2.0, 0.5]);
    let y = reference::layer_norm(&[5.0f64; 3], &[3.0; 3], &[1.0, -2.0, 0.5], 1, 3, 0.0);
    assert!(y.iter().all(|v| v.is_nan()));
}

/// By hand, a row past one chunk (8194 items): x_j = 1 (j even), 3 (j odd). Every
/// partial sum is an integer below 2^24, so the sum is exactly 16388 in any order:
/// mean 2, d = ±1, Σd² = 8194 exactly, var 1, eps 0 → den 1, y = ±1.
#[test]
fn layer_norm_long_row() {
    let n = 8194;
    let x: Vec<f32> = (0..n).map(|j| if j % 2 == 0 { 1.0 } else { 3.0 }).collect();
    let y = reference::layer_norm(&x, &vec![1.0; n], &vec![0.0; n], 1, n, 0.0);
    let want: Vec<f32> = (0..n)
        .map(|j| if j % 2 == 0 { -1.0 } else { 1.0 })
        .collect();
    assert_bits(&y, &want);
}

// ---------------------------------------------------------------------------------------
// LeakyRelu, Clip
// ---------------------------------------------------------------------------------------

/// ONNX LeakyRelu example: x = [-1, 0, 1], alpha 0.1 → [-0.1, 0, 1]; by hand: -0.0 gives
/// -0.0 · 0.1 = -0.0, -inf gives -inf, NaN passes, +inf passes, alpha · -4 with alpha
/// 0.5 is -2 exactly (also in f16).
#[test]
fn leaky_relu_cases() {
    let y = reference::leaky_relu(
        &[
            -1.0f32,
            0.0,
            1.0,
            -0.0,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::INFINITY,
        ],
        0.1,
    );
    assert_bits(
        &y,
        &[
            -0.1,
            0.0,
            1.0,
            -0.0,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::INFINITY,
        ],
    );
    let y = reference::leaky_relu(&[f16::from_f32(-4.0), f16::from_f32(3.0)], 0.5);
    assert_bits(&y, &[f16::from_f32(-2.0), f16::from_f32(3.0)]);
}

/// ONNX Clip example: x = [-2, 0, 2], min -1, max 1 → [-1, 0, 1]. By hand with the
/// max_nan/min_nan rules: NaN passes; clip(-0.0, 0, 1) = max(-0, +0) = +0;
/// clip(+0.0, -1, -0.0) = min(+0, -0) = -0; infinite bounds leave x unchanged.
#[test]
fn clip_cases() {
    assert_bits(
        &reference::clip(&[-2.0f32, 0.0, 2.0], -1.0, 1.0),
        &[-1.0, 0.0, 1.0],
    );
    assert_bits(
        &reference::clip(&[f64::NAN, -0.0, 7.0], 0.0, 1.0),
        &[f64::NAN, 0.0, 1.0],
    );
    assert_bits(&reference::clip(&[0.0f32], -1.0, -0.0), &[-0.0]);
    let x = [f32::NEG_INFINITY, -3.5, f32::INFINITY];
    assert_bits(&reference::clip(&x, f64::NEG_INFINITY, f64::INFINITY), &x);
}

// ---------------------------------------------------------------------------------------
// Erf, Gelu
// ---------------------------------------------------------------------------------------

/// Exact special values (erf(±0) = ±0, erf(±inf) = ±1, erf saturates to ±1 beyond 4 in
/// f32) bitwise; mathematical values of erf(0.5), erf(1), erf(-2) within 1 ulp (rule 3:
/// gpukit's erf is faithfully rounded).
#[test]
fn erf_cases() {
    let y = reference::erf(&[
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        10.0,
        f32::NAN,
    ]);
    assert_bits(&y, &[0.0, -0.0, 1.0, -1.0, 1.0, f32::NAN]);
    let y = reference::erf(&[0.5f32, 1.0, -2.0]);
    assert_close_f32(
        &y,
        &[0.5204998778130465, 0.8427007929497149, -0.9953222650189527],
        1,
    );
}

/// GELU (erf form): by hand gelu(±0) = ±0 · 0.5 = ±0, gelu(+inf) = +inf, gelu(-inf) =
/// -0.0 (defined), gelu(-10) = -10 · fma(0.5, -1, 0.5) = -0.0, gelu(10) = 10; gelu(1) =
/// Φ(1) and gelu(-1) = -Φ(-1), mathematical values, within 8 ulps (erf's error is
/// magnified by the cancellation in 0.5 + 0.5·erf for negative x).
#[test]
fn gelu_cases() {
    let y = reference::gelu(&[0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, -10.0, 10.0]);
    assert_bits(&y, &[0.0, -0.0, f32::INFINITY, -0.0, -0.0, 10.0]);
    assert!(reference::gelu(&[f32::NAN])[0].is_nan());
    let y = reference::gelu(&[1.0f32, -1.0, 3.0]);
    assert_close_f32(
        &y,
        &[0.8413447460685429, -0.15865525393145707, 2.99595030590511],
        8,
    );
}

/// GELU (tanh approximation, ONNX Gelu approximate = "tanh"): mathematical values of
/// 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) at 1, -1, 0.5 within 8 ulps (tanh's error,
/// magnified as for gelu); specials by hand as for gelu.
#[test]
fn gelu_tanh_cases() {
    let y = reference::gelu_tanh(&[1.0f32, -1.0, 0.5]);
    assert_close_f32(
        &y,
        &[
            0.8411919906082768,
            -0.15880800939172324,
            0.34571400982514394,
        ],
        8,
    );
    let y = reference::gelu_tanh(&[0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY, -20.0]);
    assert_bits(&y, &[0.0, -0.0, f32::INFINITY, -0.0, -0.0]);
}

// ---------------------------------------------------------------------------------------
// Softmax (any axis)
// ---------------------------------------------------------------------------------------

/// ONNX Softmax example: [-1, 0, 1] → [0.09003057, 0.24472847, 0.66524096]
/// (mathematical values) within 2 ulps (exp is faithfully rounded, then one division).
#[test]
fn softmax_onnx_example() {
    let y = reference::softmax_axis(&[-1.0f32, 0.0, 1.0], 1, 3, 1);
    assert_close_f32(
        &y,
        &[0.09003057317038046, 0.24472847105479767, 0.6652409557748219],
        2,
    );
}

/// By hand, exact (exp(0) = 1, exp(-inf) = 0): shape [1, 3, 2] along axis 1: column 0
/// [0, 0, 0] → 1/3 each; column 1 [0, -inf, 0] → [0.5, 0, 0.5]. Shape [2, 2] along
/// axis 0: columns [0, -inf] → [1, 0] and [-inf, -inf] → NaN (ONNX: -inf - -inf).
#[test]
fn softmax_axes_by_hand() {
    let ninf = f32::NEG_INFINITY;
    let y = reference::softmax_axis(&[0.0f32, 0.0, 0.0, ninf, 0.0, 0.0], 1, 3, 2);
    let third = 1.0f32 / 3.0;
    assert_bits(&y, &[third, 0.5, third, 0.0, third, 0.5]);
    let y = reference::softmax_axis(&[0.0f32, ninf, ninf, ninf], 1, 2, 2);
    assert_bits(&y, &[1.0, f32::NAN, 0.0, f32::NAN]);
    // A NaN or +inf in a line makes the line NaN; other lines are untouched.
    let y = reference::softmax_axis(&[f32::NAN, 0.0, 0.0, 0.0], 2, 2, 1);
    assert_bits(&y, &[f32::NAN, f32::NAN, 0.5, 0.5]);
}

// ---------------------------------------------------------------------------------------
// ArgMax
// ---------------------------------------------------------------------------------------

/// ONNX ArgMax example (axis 1, keepdims 0): [[2, 1], [3, 10]] → [0, 1]. By hand: ties
/// take the first, ±0 are equal (first wins), the first NaN wins (numpy's rule), a
/// single element gives 0, integers compare exactly at their extremes.
#[test]
fn argmax_cases() {
    assert_eq!(
        reference::argmax(&[2.0f32, 1.0, 3.0, 10.0], 2, 2),
        vec![0, 1]
    );
    assert_eq!(reference::argmax(&[1.0f64, 5.0, 5.0], 1, 3), vec![1]);
    assert_eq!(
        reference::argmax(&[1.0f32, f32::NAN, 5.0, f32::NAN], 1, 4),
        vec![1]
    );
    assert_eq!(reference::argmax(&[f32::NAN, 9.0], 1, 2), vec![0]);
    assert_eq!(
        reference::argmax(&[-0.0f32, 0.0, 0.0, -0.0], 2, 2),
        vec![0, 0]
    );
    assert_eq!(reference::argmax(&[f32::NEG_INFINITY], 1, 1), vec![0]);
    assert_eq!(
        reference::argmax(&[i64::MIN, -1, i64::MAX, i64::MAX], 1, 4),
        vec![2]
    );
    assert_eq!(reference::argmax(&[i32::MIN, i32::MIN + 1], 1, 2), vec![1]);
    assert_eq!(
        reference::argmax(&[f16::from_f32(-1.0), f16::MAX, f16::INFINITY], 1, 3),
        vec![2]
    );
}

// ---------------------------------------------------------------------------------------
// ReduceL2
// ---------------------------------------------------------------------------------------

/// ONNX ReduceL2 example (axes [2]): [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12]]
/// → [2.23606798, 5, 7.81024968, 10.63014581, 13.45362405, 16.2788206]. The sums of
/// squares are exact integers and sqrt is correctly rounded, so the f32 results are the
/// printed values rounded to f32, bit for bit.
#[test]
fn reduce_l2_onnx_example() {
    let x: Vec<f32> = (1..=12).map(|v| v as f32).collect();
    let y = reference::reduce_l2(&x, 6, 2);
    let want = [
        2.23606798f64,
        5.0,
        7.81024968,
        10.63014581,
        13.45362405,
        16.2788206,
    ];
    assert_bits(&y, &want.map(|v| v as f32));
}

/// By hand: an empty row gives +0.0; -0.0 gives sqrt(fma(-0, -0, +0)) = +0.0; NaN gives
/// NaN; an infinity gives +inf; 3-4 gives 5 exactly; f16 [6, 8] gives 10.
#[test]
fn reduce_l2_specials() {
    assert_bits(&reference::reduce_l2(&[] as &[f32], 2, 0), &[0.0, 0.0]);
    assert_bits(&reference::reduce_l2(&[-0.0f32], 1, 1), &[0.0]);
    assert_bits(&reference::reduce_l2(&[f64::NAN, 1.0], 1, 2), &[f64::NAN]);
    assert_bits(
        &reference::reduce_l2(&[f32::NEG_INFINITY, 1.0], 1, 2),
        &[f32::INFINITY],
    );
    assert_bits(&reference::reduce_l2(&[3.0f64, -4.0], 1, 2), &[5.0]);
    let h = [f16::from_f32(6.0), f16::from_f32(8.0)];
    assert_bits(&reference::reduce_l2(&h, 1, 2), &[f16::from_f32(10.0)]);
}
