//! MatMul (ONNX MatMul, numpy.matmul): products by hand, the ascending fma chain, zero
//! signs, empty k and specials, bf16's single store, a batch with a shared B.

use gpukit_core::half::bf16;
use gpukit_reference as reference;

use crate::common::assert_bits;

/// Source: ONNX MatMul (numpy.matmul) on a 2x3 by 3x2 product computed by hand:
/// [[1,2,3],[4,5,6]] . [[7,8],[9,10],[11,12]]
///   = [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
///   = [[58, 64], [139, 154]]. All partial sums are small integers (exact).
#[test]
fn matmul_2x3_by_3x2_by_hand() {
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0];
    assert_bits(
        &reference::matmul(&a, &b, 2, 3, 2),
        &[58.0, 64.0, 139.0, 154.0],
    );
    let a64: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
    let b64: Vec<f64> = b.iter().map(|&x| f64::from(x)).collect();
    assert_bits(
        &reference::matmul(&a64, &b64, 2, 3, 2),
        &[58.0, 64.0, 139.0, 154.0],
    );
    // Transposed roles: 3x2 . 2x3 = [[7*1+8*4, ...]] row 0: [39, 54, 69].
    let got = reference::matmul(&b, &a, 3, 2, 3);
    assert_bits(
        &got,
        &[39.0, 54.0, 69.0, 49.0, 68.0, 87.0, 59.0, 82.0, 105.0],
    );
}

/// Source: rule 2 (fma chain from +0.0, t ascending), by hand.
/// A = [1, 1+2^-12] (1x2), B = [-1, 1+2^-12]^T (2x1).
/// t=0: acc = fma(1, -1, +0) = -1.
/// t=1: acc = fma(1+2^-12, 1+2^-12, -1) = (1 + 2^-11 + 2^-24) - 1 = 2^-11 + 2^-24, exact.
/// A separate multiply would round (1+2^-12)^2 to 1+2^-11 first (2^-24 is half an ulp,
/// tie to even) and give 2^-11; descending t would give fma(1,-1, 1+2^-11) = 2^-11 too.
#[test]
fn matmul_uses_ascending_fma_chain() {
    let e = 2f32.powi(-12);
    let a = [1.0f32, 1.0 + e];
    let b = [-1.0f32, 1.0 + e];
    let got = reference::matmul(&a, &b, 1, 2, 1);
    assert_bits(&got, &[2f32.powi(-11) + 2f32.powi(-24)]);
}

/// Source: rule 2, by hand. The chain starts from +0.0: fma(-1, +0, +0) = -0 + +0 = +0,
/// so a product that is -0.0 on its own gives +0.0 in a matmul. k = 0: nothing is
/// accumulated and every output is +0.0 (ONNX MatMul of [2,0]x[0,2] = zeros).
/// inf * 0 in the chain gives NaN.
#[test]
fn matmul_zero_sign_empty_k_and_specials() {
    let got = reference::matmul(&[-1.0f32], &[0.0f32], 1, 1, 1);
    assert_eq!(got[0].to_bits(), 0);
    let got = reference::matmul::<f64>(&[], &[], 2, 0, 2);
    assert_bits(&got, &[0.0; 4]);
    assert!(got.iter().all(|x| x.to_bits() == 0));
    assert!(reference::matmul::<f32>(&[], &[1.0, 2.0], 0, 1, 2).is_empty());
    let got = reference::matmul(&[f32::INFINITY, 1.0], &[0.0f32, 5.0], 1, 2, 1);
    assert!(got[0].is_nan());
}

/// Source: rule 6 (bf16 loads into f32, the whole chain is f32, one store), by hand.
/// bf16 ulp(1) = 2^-7. A = [1,1,1,1], B = [1, 2^-9, 2^-9, 2^-9]^T:
/// f32 chain: 1 + 3*2^-9 = 1 + 0.75 ulp (exact in f32), stored: rounds up to 1 + 2^-7.
/// Had each step been rounded to bf16, 1 + 2^-9 (a quarter ulp) would round back to 1
/// every time and the result would be 1.
#[test]
fn bf16_matmul_rounds_once_on_store() {
    let q = bf16::from_f32(2f32.powi(-9));
    let a = [bf16::ONE; 4];
    let b = [bf16::ONE, q, q, q];
    let got = reference::matmul(&a, &b, 1, 4, 1);
    assert_eq!(got[0].to_bits(), 0x3f81);
    assert_eq!(got[0].to_f32(), 1.0 + 2f32.powi(-7));
}

/// Source: ONNX MatMul with a batch dimension (numpy.matmul broadcasting B over the
/// batch), by hand. A_0 = [[1,2]], A_1 = [[3,4]] (1x2 each), B = [[1,0],[0,-1]] shared
/// (b_bstride 0): C_0 = [[1,-2]], C_1 = [[3,-4]].
#[test]
fn bmm_with_broadcast_b_by_hand() {
    let a = [1.0f32, 2.0, 3.0, 4.0];
    let b = [1.0f32, 0.0, 0.0, -1.0];
    let got = reference::bmm(&a, &b, 2, 1, 2, 2, 2, 0);
    assert_bits(&got, &[1.0, -2.0, 3.0, -4.0]);
    // Strided A (a_bstride 3 skips one padding element per batch): A_0 = [1,2], A_1 = [4,5].
    let a = [1.0f32, 2.0, 99.0, 4.0, 5.0];
    let got = reference::bmm(&a, &b, 2, 1, 2, 2, 3, 0);
    assert_bits(&got, &[1.0, -2.0, 4.0, -5.0]);
    // batch = 0: empty.
    assert!(reference::bmm::<f32>(&[], &[], 0, 2, 2, 2, 4, 4).is_empty());
}
