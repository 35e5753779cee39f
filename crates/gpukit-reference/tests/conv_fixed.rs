//! Fixed cases of the `conv` group's oracle (gemm, conv2d, conv_transpose2d,
//! max_pool2d), with expected values derived by hand or taken from the examples of the
//! ONNX operator documentation (onnx/docs/Operators.md, the operators of the same name),
//! so the oracle cannot share a misreading with the kernels. Every comparison is exact
//! (`to_bits`, any NaN equal to any NaN): none of these ops uses a transcendental
//! function.

use gpukit_core::abi::conv::{Conv2dParams, ConvTranspose2dParams, GemmParams, MaxPool2dParams};
use gpukit_core::half::f16;
use gpukit_core::numeric::same_bits;
use gpukit_reference::{conv_transpose2d, conv2d, gemm, max_pool2d};

fn assert_bits<T: gpukit_core::Element>(got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(same_bits(*g, *w), "element {i}: got {g:?}, want {w:?}");
    }
}

fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|v| v as f32).collect()
}

/// ONNX Gemm: Y = alpha·A·B + beta·C (+ bias, here a per-column term). By hand:
/// A·B = [[19, 22], [43, 50]]; ×2 = [[38, 44], [86, 100]]; + 0.5·1; + [10, 20].
#[test]
fn gemm_alpha_beta_bias_both_layouts() {
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let b = [5.0f32, 6.0, 7.0, 8.0];
    let bt = [5.0f32, 7.0, 6.0, 8.0];
    let c = [1.0f32; 4];
    let bias = [10.0f32, 20.0];
    let mut p = GemmParams::new(2, 2, 2);
    p.alpha = 2.0;
    p.beta = 0.5;
    let want = [48.5f32, 64.5, 96.5, 120.5];
    assert_bits(&gemm(&a, &b, Some(&c), Some(&bias), &p), &want);
    p.trans_b = true;
    assert_bits(&gemm(&a, &bt, Some(&c), Some(&bias), &p), &want);
    // Without C and bias: 2·A·B.
    p.trans_b = false;
    assert_bits(&gemm(&a, &b, None, None, &p), &[38.0, 44.0, 86.0, 100.0]);
}

/// By hand from the contract: k = 0 leaves acc = +0.0, so y = alpha·(+0.0): -0.0 for
/// alpha = -1, NaN for alpha = inf; with C, fma(beta, c, y) = c.
#[test]
fn gemm_k_zero() {
    let mut p = GemmParams::new(1, 0, 2);
    p.alpha = -1.0;
    let y = gemm::<f32>(&[], &[], None, None, &p);
    assert_bits(&y, &[-0.0, -0.0]);
    p.alpha = f64::INFINITY;
    assert!(gemm::<f32>(&[], &[], None, None, &p)[0].is_nan());
    p.alpha = 1.0;
    assert_bits(
        &gemm::<f32>(&[], &[], Some(&[3.0, -0.0]), None, &p),
        &[3.0, 0.0],
    );
}

/// By hand: the chain is fused. acc = fma(-1, 1, +0) = -1, then
/// fma(1+2^-12, 1+2^-12, -1) = 2^-11 + 2^-24 exactly; an unfused multiply would round
/// the product to 1 + 2^-11 (a tie, to even) and give 2^-11.
#[test]
fn gemm_uses_fused_multiply_add() {
    let e = 1.0f32 + 2f32.powi(-12);
    let p = GemmParams::new(1, 2, 1);
    let y = gemm(&[-1.0f32, e], &[1.0, e], None, None, &p);
    assert_bits(&y, &[2f32.powi(-11) + 2f32.powi(-24)]);
    // alpha is rounded to the compute type first: 1 + 2^-30 is 1.0 in f32.
    let mut p = GemmParams::new(1, 1, 1);
    p.alpha = 1.0 + 2f64.powi(-30);
    assert_bits(&gemm(&[3.0f32], &[1.0], None, None, &p), &[3.0]);
    assert_bits(
        &gemm(&[3.0f64], &[1.0], None, None, &p),
        &[3.0 * (1.0 + 2f64.powi(-30))],
    );
}

/// ONNX Conv examples: x = 0..24 as 5x5, W = 3x3 ones, with pads 1 and without; and
/// x = 0..34 as 7x5 with strides 2: no padding, pads 1, and asymmetric pads [1, 0, 1, 0].
#[test]
fn conv2d_onnx_examples() {
    let x = iota(25);
    let w = [1.0f32; 9];
    let mut p = Conv2dParams::new(1, 1, 5, 5, 1, 3, 3);
    p.pads = [1; 4];
    let want = [
        12.0f32, 21.0, 27.0, 33.0, 24.0, 33.0, 54.0, 63.0, 72.0, 51.0, 63.0, 99.0, 108.0, 117.0,
        81.0, 93.0, 144.0, 153.0, 162.0, 111.0, 72.0, 111.0, 117.0, 123.0, 84.0,
    ];
    assert_bits(&conv2d(&x, &w, None, &p), &want);
    p.pads = [0; 4];
    let want = [54.0f32, 63.0, 72.0, 99.0, 108.0, 117.0, 144.0, 153.0, 162.0];
    assert_bits(&conv2d(&x, &w, None, &p), &want);
    let x = iota(35);
    let mut p = Conv2dParams::new(1, 1, 7, 5, 1, 3, 3);
    p.strides = [2, 2];
    assert_bits(
        &conv2d(&x, &w, None, &p),
        &[54.0, 72.0, 144.0, 162.0, 234.0, 252.0],
    );
    p.pads = [1; 4];
    let want = [
        12.0f32, 27.0, 24.0, 63.0, 108.0, 81.0, 123.0, 198.0, 141.0, 112.0, 177.0, 124.0,
    ];
    assert_bits(&conv2d(&x, &w, None, &p), &want);
    p.pads = [1, 0, 1, 0];
    let want = [21.0f32, 33.0, 99.0, 117.0, 189.0, 207.0, 171.0, 183.0];
    assert_bits(&conv2d(&x, &w, None, &p), &want);
}

/// By hand: dilation 2 puts a 2x2 kernel on the corners of a 3x3 input (0+2+6+8), and
/// the bias is added after the sum.
#[test]
fn conv2d_dilation_and_bias() {
    let mut p = Conv2dParams::new(1, 1, 3, 3, 1, 2, 2);
    p.dilations = [2, 2];
    assert_bits(&conv2d(&iota(9), &[1.0f32; 4], Some(&[0.5]), &p), &[16.5]);
}

/// By hand: groups. Depthwise (groups = 2 = c_in = c_out, 1x1 weights 2 and 3) scales
/// each plane; groups = 2 with c_in = 4, c_out = 2 sums channel pairs (0,1) and (2,3).
#[test]
fn conv2d_groups() {
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let mut p = Conv2dParams::new(1, 2, 2, 2, 2, 1, 1);
    p.groups = 2;
    assert_bits(
        &conv2d(&x, &[2.0f32, 3.0], None, &p),
        &[2.0, 4.0, 6.0, 8.0, 15.0, 18.0, 21.0, 24.0],
    );
    // c_in = 4 planes of one pixel: [1, 2, 3, 4]; out0 = 1·1 + 2·10, out1 = 3·100 + 4·1000.
    let mut p = Conv2dParams::new(1, 4, 1, 1, 2, 1, 1);
    p.groups = 2;
    assert_bits(
        &conv2d(
            &[1.0f32, 2.0, 3.0, 4.0],
            &[1.0, 10.0, 100.0, 1000.0],
            None,
            &p,
        ),
        &[21.0, 4300.0],
    );
    // N = 2: each image on its own.
    let p = Conv2dParams::new(2, 1, 1, 2, 1, 1, 2);
    assert_bits(
        &conv2d(&[1.0f32, 2.0, 3.0, 4.0], &[1.0, 1.0], None, &p),
        &[3.0, 7.0],
    );
}

/// By hand, ONNX zero padding: a padded tap is a real 0.0 operand, so an infinite
/// weight on it gives 0·inf = NaN; a chain of -0.0 products starting at +0.0 gives
/// +0.0; f16 stores once, rounding to nearest even.
#[test]
fn conv2d_special_values() {
    let mut p = Conv2dParams::new(1, 1, 1, 1, 1, 3, 3);
    p.pads = [1; 4];
    let mut w = [1.0f32; 9];
    w[0] = f32::INFINITY;
    assert!(conv2d(&[1.0f32], &w, None, &p)[0].is_nan());
    let p = Conv2dParams::new(1, 1, 1, 1, 1, 1, 1);
    assert_bits(&conv2d(&[-1.0f32], &[0.0], None, &p), &[0.0]);
    assert_bits(&conv2d(&[-1.0f32], &[0.0], Some(&[-0.0]), &p), &[0.0]);
    // f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10; the f32 sum is exact, the store
    // rounds it to even (1.0).
    let p = Conv2dParams::new(1, 2, 1, 1, 1, 1, 1);
    let x = [f16::ONE, f16::from_f32(2f32.powi(-11))];
    assert_bits(&conv2d(&x, &[f16::ONE, f16::ONE], None, &p), &[f16::ONE]);
}

/// ONNX ConvTranspose example `convtranspose`: x = 0..8 as 3x3, W = ones [1, 2, 3, 3];
/// both output channels are the same 5x5.
#[test]
fn conv_transpose2d_onnx_basic() {
    let p = ConvTranspose2dParams::new(1, 1, 3, 3, 2, 3, 3);
    let plane = [
        0.0f32, 1.0, 3.0, 3.0, 2.0, 3.0, 8.0, 15.0, 12.0, 7.0, 9.0, 21.0, 36.0, 27.0, 15.0, 9.0,
        20.0, 33.0, 24.0, 13.0, 6.0, 13.0, 21.0, 15.0, 8.0,
    ];
    let want: Vec<f32> = plane.iter().chain(&plane).copied().collect();
    assert_bits(&conv_transpose2d(&iota(9), &[1.0f32; 18], None, &p), &want);
}

/// ONNX ConvTranspose examples `convtranspose_pads` (strides [3, 2], pads [1, 2, 1, 2])
/// and `convtranspose_output_shape`'s explicit form with output_padding [1, 1].
#[test]
fn conv_transpose2d_onnx_strides_pads_output_padding() {
    let mut p = ConvTranspose2dParams::new(1, 1, 3, 3, 2, 3, 3);
    p.strides = [3, 2];
    p.pads = [1, 2, 1, 2];
    let plane = [
        1.0f32, 1.0, 3.0, 1.0, 1.0, 3.0, 7.0, 4.0, 9.0, 7.0, 4.0, 9.0, 7.0, 4.0, 9.0, 13.0, 7.0,
        15.0, 13.0, 7.0, 15.0,
    ];
    let want: Vec<f32> = plane.iter().chain(&plane).copied().collect();
    assert_bits(&conv_transpose2d(&iota(9), &[1.0f32; 18], None, &p), &want);

    let mut p = ConvTranspose2dParams::new(1, 1, 3, 3, 2, 3, 3);
    p.strides = [3, 2];
    p.output_padding = [1, 1];
    let rows: [[f32; 8]; 4] = [
        [0.0, 0.0, 1.0, 1.0, 3.0, 2.0, 2.0, 0.0],
        [3.0, 3.0, 7.0, 4.0, 9.0, 5.0, 5.0, 0.0],
        [6.0, 6.0, 13.0, 7.0, 15.0, 8.0, 8.0, 0.0],
        [0.0; 8],
    ];
    let mut plane = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let times = if i == 3 { 1 } else { 3 };
        for _ in 0..times {
            plane.extend_from_slice(r);
        }
    }
    let want: Vec<f32> = plane.iter().chain(&plane).copied().collect();
    assert_bits(&conv_transpose2d(&iota(9), &[1.0f32; 18], None, &p), &want);
}

/// ONNX ConvTranspose example `convtranspose_dilations`: x [[3,8,1],[9,5,7],[3,2,6]],
/// W [[7,2],[1,9]], dilations [2, 2] → 5x5.
#[test]
fn conv_transpose2d_onnx_dilations() {
    let mut p = ConvTranspose2dParams::new(1, 1, 3, 3, 1, 2, 2);
    p.dilations = [2, 2];
    let x = [3.0f32, 8.0, 1.0, 9.0, 5.0, 7.0, 3.0, 2.0, 6.0];
    let w = [7.0f32, 2.0, 1.0, 9.0];
    let want = [
        21.0f32, 56.0, 13.0, 16.0, 2.0, 63.0, 35.0, 67.0, 10.0, 14.0, 24.0, 22.0, 76.0, 76.0, 21.0,
        9.0, 5.0, 88.0, 45.0, 63.0, 3.0, 2.0, 33.0, 18.0, 54.0,
    ];
    assert_bits(&conv_transpose2d(&x, &w, None, &p), &want);
}

/// By hand: a tap that lands between input elements is skipped, not a 0.0 operand, so
/// an infinite weight there does not make NaN; an output no tap reaches is +0.0 + bias.
/// Groups: 2 groups of one channel each scale their own input.
#[test]
fn conv_transpose2d_skipped_taps_and_groups() {
    // 1 pixel, stride 2, 1x2 kernel [1, inf], output_padding 1 in w → ow = 3:
    // out[0] = x·1, out[1] = x·inf, out[2]: no tap → +0.0 (+ bias 0.5).
    let mut p = ConvTranspose2dParams::new(1, 1, 1, 1, 1, 1, 2);
    p.strides = [1, 2];
    p.output_padding = [0, 1];
    let y = conv_transpose2d(&[2.0f32], &[1.0, f32::INFINITY], Some(&[0.5]), &p);
    assert_bits(&y, &[2.5, f32::INFINITY, 0.5]);
    let mut p = ConvTranspose2dParams::new(1, 2, 1, 1, 2, 1, 1);
    p.groups = 2;
    assert_bits(
        &conv_transpose2d(&[2.0f32, 3.0], &[5.0, 7.0], None, &p),
        &[10.0, 21.0],
    );
}

/// ONNX MaxPool examples: `maxpool_2d_pads` (x = 1..25 as 5x5, 5x5 window, pads 2) and
/// `maxpool_2d_dilations` (x = 1..16 as 4x4, 2x2 window, dilations 2); and by hand a
/// 2x2 window with stride 2 on 1..25.
#[test]
fn max_pool2d_onnx_examples() {
    let x: Vec<f32> = (1..=25).map(|v| v as f32).collect();
    let mut p = MaxPool2dParams::new(1, 1, 5, 5, 5, 5);
    p.pads = [2; 4];
    let want = [
        13.0f32, 14.0, 15.0, 15.0, 15.0, 18.0, 19.0, 20.0, 20.0, 20.0, 23.0, 24.0, 25.0, 25.0,
        25.0, 23.0, 24.0, 25.0, 25.0, 25.0, 23.0, 24.0, 25.0, 25.0, 25.0,
    ];
    assert_bits(&max_pool2d(&x, &p), &want);
    let mut p = MaxPool2dParams::new(1, 1, 5, 5, 2, 2);
    p.strides = [2, 2];
    assert_bits(&max_pool2d(&x, &p), &[7.0, 9.0, 17.0, 19.0]);
    let x: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let mut p = MaxPool2dParams::new(1, 1, 4, 4, 2, 2);
    p.dilations = [2, 2];
    assert_bits(&max_pool2d(&x, &p), &[11.0, 12.0, 15.0, 16.0]);
}

/// By hand: padding never wins (all-negative input with padding keeps the negative
/// maximum), a NaN anywhere in the window gives NaN, max(-0, +0) = +0 in either order.
#[test]
fn max_pool2d_special_values() {
    let mut p = MaxPool2dParams::new(1, 1, 1, 2, 1, 2);
    p.pads = [0, 1, 0, 1];
    assert_bits(&max_pool2d(&[-5.0f32, -3.0], &p), &[-5.0, -3.0, -3.0]);
    let p = MaxPool2dParams::new(1, 1, 1, 3, 1, 2);
    assert!(
        max_pool2d(&[1.0f32, f32::NAN, 2.0], &p)
            .iter()
            .all(|v| v.is_nan())
    );
    assert_bits(&max_pool2d(&[-0.0f32, 0.0, -0.0], &p), &[0.0, 0.0]);
    assert_bits(
        &max_pool2d(&[-0.0f64, -0.0], &MaxPool2dParams::new(1, 1, 1, 2, 1, 2)),
        &[-0.0],
    );
}
