//! Fixed cases for the reference oracle whose expected values do NOT come from the oracle
//! or from gpukit's kernels: each is derived by hand (the derivation is in the comments)
//! or taken from the documented definition/examples of the ONNX operator of the same
//! name (onnx/docs/Operators.md). The point is independence: the oracle must not share
//! a misreading of the contract with the kernels it judges.
//!
//! Every comparison is bitwise with the contract's NaN rule (rule 8), except the few
//! tests involving gpukit's transcendental functions (rule 3) against f64 math, which
//! allow the documented ulp error and say so.

use gpukit_core::Error;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{BinaryOp, UnaryOp};
use gpukit_reference as reference;

#[path = "../common/mod.rs"]
mod common;
use common::{assert_bits, ulps_f32};

/// Distance in ulps between two finite f64 values.
fn ulps_f64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i128::from(i64::MIN) - i128::from(i)
        } else {
            i128::from(i)
        }
    };
    key(a).abs_diff(key(b)) as u64
}

// ---------------------------------------------------------------------------------------
// Elementwise binary (ONNX Add, Sub, Mul, Div)
// ---------------------------------------------------------------------------------------

/// Source: ONNX Add/Sub/Mul/Div ("performs element-wise binary addition/..."), values
/// by hand; every result is exactly representable or (2/5) the correctly rounded
/// quotient, which is what the f32 literal 0.4 also denotes.
#[test]
fn binary_same_shape_f32_by_hand() {
    let a = [1.0f32, 2.0, 3.0, -4.0];
    let b = [4.0f32, 5.0, 6.0, 8.0];
    assert_bits(
        &reference::binary(BinaryOp::Add, &a, &b),
        &[5.0, 7.0, 9.0, 4.0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Sub, &a, &b),
        &[-3.0, -3.0, -3.0, -12.0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Mul, &a, &b),
        &[4.0, 10.0, 18.0, -32.0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Div, &a, &b),
        &[0.25, 0.4, 0.5, -0.5],
    );
    // Same in f64 (0.4 is again the correctly rounded 2/5).
    let a64 = [1.0f64, 2.0, 3.0, -4.0];
    let b64 = [4.0f64, 5.0, 6.0, 8.0];
    assert_bits(
        &reference::binary(BinaryOp::Div, &a64, &b64),
        &[0.25, 0.4, 0.5, -0.5],
    );
    // Empty in, empty out.
    assert!(reference::binary::<f32>(BinaryOp::Add, &[], &[]).is_empty());
}

/// Source: IEEE 754-2019 §6 (specials; the sign of an exact zero sum is + in
/// round-to-nearest unless both operands are -0) and ONNX's rule that NaN propagates
/// through elementwise ops (contract rule 7). By hand.
#[test]
fn binary_specials_by_hand() {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let a = [1.0f32, -1.0, 0.0, inf, nan, -0.0, -0.0, 0.0];
    let b = [0.0f32, 0.0, 0.0, inf, 1.0, -0.0, 0.0, -0.0];
    assert_bits(
        &reference::binary(BinaryOp::Div, &a, &b),
        // 1/+0 = +inf, -1/+0 = -inf, 0/0 = NaN, inf/inf = NaN, NaN/1 = NaN,
        // -0/-0 = NaN, -0/+0 = NaN, +0/-0 = NaN.
        &[inf, -inf, nan, nan, nan, nan, nan, nan],
    );
    assert_bits(
        &reference::binary(BinaryOp::Add, &a, &b),
        // 1+0, -1+0, 0+0, inf+inf, NaN+1, -0 + -0 = -0, -0 + +0 = +0, +0 + -0 = +0.
        &[1.0, -1.0, 0.0, inf, nan, -0.0, 0.0, 0.0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Sub, &a, &b),
        // inf - inf = NaN; -0 - -0 = +0; -0 - +0 = -0; +0 - -0 = +0.
        &[1.0, -1.0, 0.0, nan, nan, 0.0, -0.0, 0.0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Mul, &[inf, -2.0, -0.0], &[0.0, 0.0, -3.0]),
        // inf * 0 = NaN; -2 * +0 = -0; -0 * -3 = +0.
        &[nan, -0.0, 0.0],
    );
    // Subnormals are kept (rule 1): 2^-149 + 2^-149 = 2^-148, not flushed to zero.
    assert_bits(
        &reference::binary(BinaryOp::Add, &[f32::from_bits(1)], &[f32::from_bits(1)]),
        &[f32::from_bits(2)],
    );
}

/// Source: gpukit contract rule 6 and `numeric::int_div`'s documentation: integer
/// arithmetic wraps, division truncates toward zero, `x / 0 = 0`, `MIN / -1 = MIN`.
/// By hand.
#[test]
fn binary_integer_rules() {
    let a = [7i64, -7, 7, i64::MIN, 5, 0];
    let b = [2i64, 2, 0, -1, -5, 0];
    assert_bits(
        &reference::binary(BinaryOp::Div, &a, &b),
        &[3, -3, 0, i64::MIN, -1, 0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Add, &[i64::MAX, -1], &[1, 1]),
        &[i64::MIN, 0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Sub, &[i64::MIN], &[1]),
        &[i64::MAX],
    );
    // 2^62 * 4 = 2^64 wraps to 0; MIN * -1 wraps to MIN.
    assert_bits(
        &reference::binary(BinaryOp::Mul, &[1i64 << 62, i64::MIN], &[4, -1]),
        &[0, i64::MIN],
    );
    let a32 = [7i32, -7, 7, i32::MIN, i32::MAX];
    let b32 = [-2i32, -2, 0, -1, 0];
    assert_bits(
        &reference::binary(BinaryOp::Div, &a32, &b32),
        &[-3, 3, 0, i32::MIN, 0],
    );
    assert_bits(
        &reference::binary(BinaryOp::Add, &[i32::MAX], &[1]),
        &[i32::MIN],
    );
}

/// Source: rule 6 (compute in f32, store rounds to nearest even), by hand. f16 has 10
/// fraction bits: ulp(1) = 2^-10. 1 + 3*2^-11 = 1 + 1.5 ulp, exactly halfway between
/// 1 + 2^-10 (odd last bit) and 1 + 2^-9 (even): ties to even gives 1 + 2^-9.
/// And 1 + 2^-12 (a quarter ulp) rounds down to 1.
#[test]
fn f16_add_rounds_once_on_store() {
    let a = [f16::ONE, f16::ONE];
    let b = [
        f16::from_f32(3.0 * 2f32.powi(-11)),
        f16::from_f32(2f32.powi(-12)),
    ];
    // Both addends are exactly representable in f16 (normal numbers).
    assert_eq!(b[0].to_f32(), 3.0 * 2f32.powi(-11));
    assert_eq!(b[1].to_f32(), 2f32.powi(-12));
    let got = reference::binary(BinaryOp::Add, &a, &b);
    assert_bits(&got, &[f16::from_f32(1.0 + 2f32.powi(-9)), f16::ONE]);
    assert_eq!(got[0].to_bits(), 0x3c02); // 1 + 2 * 2^-10: fraction field 2.
    assert_eq!(got[1].to_bits(), 0x3c00);
}

// ---------------------------------------------------------------------------------------
// Broadcasting (ONNX multidirectional / numpy broadcasting)
// ---------------------------------------------------------------------------------------

/// Source: ONNX Broadcasting.md (numpy-style multidirectional broadcasting): shapes
/// [2,1] and [1,3] broadcast to [2,3], out[i][j] = op(a[i][0], b[0][j]). By hand.
#[test]
fn broadcast_2x1_with_1x3() {
    let a = [1.0f32, 2.0]; // [[1], [2]]
    let b = [10.0f32, 20.0, 30.0]; // [[10, 20, 30]]
    let (sa, sb) = ([1usize, 0], [0usize, 1]);
    let dims = [2usize, 3];
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Add, &dims, &a, &sa, &b, &sb),
        &[11.0, 21.0, 31.0, 12.0, 22.0, 32.0],
    );
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Sub, &dims, &a, &sa, &b, &sb),
        &[-9.0, -19.0, -29.0, -8.0, -18.0, -28.0],
    );
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Mul, &dims, &a, &sa, &b, &sb),
        &[10.0, 20.0, 30.0, 20.0, 40.0, 60.0],
    );
    // b / a: 10/1, 20/1, 30/1, 10/2, 20/2, 30/2.
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Div, &dims, &b, &sb, &a, &sa),
        &[10.0, 20.0, 30.0, 5.0, 10.0, 15.0],
    );
    // Integers through the same path: the int rules hold (7 / 0 = 0).
    assert_bits(
        &reference::binary_broadcast(
            BinaryOp::Div,
            &[1, 3],
            &[7i32],
            &[0, 0],
            &[0, 7, -7],
            &[0, 1],
        ),
        &[0, 1, -1],
    );
}

/// Source: numpy broadcasting of a 0-D array and of a [3] vector against [2,3]
/// (ONNX Broadcasting.md examples "shape(A) = (2, 3, 4, 5), shape(B) = (5,)" and
/// "shape(B) = ()"), plus a transposed read and an empty dimension. By hand.
#[test]
fn broadcast_scalar_vector_transpose_empty() {
    // 0-D: out_dims empty, one element.
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Mul, &[], &[3.0f64], &[], &[-2.0], &[]),
        &[-6.0],
    );
    // [2,3] + [3]: b's row is repeated over the first dimension.
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [100.0f32, 200.0, 300.0];
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Add, &[2, 3], &a, &[3, 1], &b, &[0, 1]),
        &[101.0, 202.0, 303.0, 104.0, 205.0, 306.0],
    );
    // [2,3] - scalar (every stride 0).
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Sub, &[2, 3], &a, &[3, 1], &[1.0], &[0, 0]),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    );
    // a (2x3 row-major) read transposed as a 3x2 view: strides [1, 3].
    // out[i][j] = a[j][i]: [[1,4],[2,5],[3,6]]; + 0 (broadcast zero) keeps values.
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Add, &[3, 2], &a, &[1, 3], &[0.0], &[0, 0]),
        &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0],
    );
    // A zero-size dimension: empty output, nothing read.
    assert!(
        reference::binary_broadcast::<f32>(
            BinaryOp::Add,
            &[2, 0, 3],
            &[],
            &[0, 0, 0],
            &[],
            &[0, 0, 0]
        )
        .is_empty()
    );
    // 3-D: [2,1,2] * [1,2,1] -> [2,2,2]; out[i][j][k] = a[i][0][k] * b[0][j][0].
    let a3 = [1.0f32, 2.0, 3.0, 4.0]; // [[[1,2]],[[3,4]]]
    let b3 = [10.0f32, -1.0]; // [[[10],[-1]]]
    assert_bits(
        &reference::binary_broadcast(BinaryOp::Mul, &[2, 2, 2], &a3, &[2, 0, 1], &b3, &[0, 1, 0]),
        &[10.0, 20.0, -1.0, -2.0, 30.0, 40.0, -3.0, -4.0],
    );
}

// ---------------------------------------------------------------------------------------
// Unary maps (ONNX Relu, Sigmoid, Exp, Tanh, Sqrt, Log)
// ---------------------------------------------------------------------------------------

/// Source: ONNX Relu, `y = max(0, x)`, with NaN passing through (ONNX: NaN propagates),
/// and gpukit's sign-of-zero rule (numeric::relu, rule 7): relu(-0.0) = +0.0.
#[test]
fn relu_by_definition() {
    let x = [
        -1.0f32,
        0.0,
        2.5,
        f32::NEG_INFINITY,
        f32::INFINITY,
        -0.0,
        f32::NAN,
        f32::from_bits(1),
        -f32::from_bits(1),
    ];
    let got = reference::unary(UnaryOp::Relu, &x);
    assert_bits(
        &got,
        &[
            0.0,
            0.0,
            2.5,
            0.0,
            f32::INFINITY,
            0.0,
            f32::NAN,
            f32::from_bits(1),
            0.0,
        ],
    );
    // The sign of relu(-0.0) is +: bit pattern 0, not 0x8000_0000.
    assert_eq!(got[5].to_bits(), 0);
    assert!(got[6].is_nan());
    // Same in bf16 and f64.
    let gb = reference::unary(
        UnaryOp::Relu,
        &[bf16::NEG_ZERO, bf16::NAN, bf16::from_f32(-3.0)],
    );
    assert_eq!(gb[0].to_bits(), 0);
    assert!(gb[1].is_nan());
    assert_eq!(gb[2].to_bits(), 0);
    let gd = reference::unary(UnaryOp::Relu, &[-0.0f64, f64::NAN, 7.0]);
    assert_eq!(gd[0].to_bits(), 0);
    assert!(gd[1].is_nan());
    assert_eq!(gd[2], 7.0);
}

/// Source: the mathematical definitions in ONNX Exp, Log, Tanh, Sigmoid
/// (`1 / (1 + exp(-x))`) and Sqrt, at points where the exact result is representable, so
/// a function with < 1 ulp error (rule 3; math.rs states the bounds) must return it
/// exactly; and IEEE 754 specials. By hand.
#[test]
fn unary_exact_points_and_specials_f32() {
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    assert_bits(
        &reference::unary(UnaryOp::Exp, &[0.0f32, -0.0, f32::NEG_INFINITY, inf, nan]),
        &[1.0, 1.0, 0.0, inf, nan],
    );
    assert_bits(
        &reference::unary(UnaryOp::Log, &[1.0f32, 0.0, -0.0, -1.0, inf, nan]),
        &[0.0, -inf, -inf, nan, inf, nan],
    );
    // tanh is odd: tanh(-0) = -0. 1 - tanh(20) = 2/(e^40 + 1) ~ 8.5e-18, far below half
    // an ulp under 1 (2^-25), so tanh(20) rounds to 1.
    assert_bits(
        &reference::unary(UnaryOp::Tanh, &[0.0f32, -0.0, inf, -inf, 20.0, -20.0, nan]),
        &[0.0, -0.0, 1.0, -1.0, 1.0, -1.0, nan],
    );
    // sigmoid(0) = 1/2 exactly; sigmoid(+inf) = 1, sigmoid(-inf) = +0.
    // 1 - sigmoid(40) = e^-40/(1+e^-40) ~ 4.2e-18 < 2^-25, so sigmoid(40) rounds to 1.
    assert_bits(
        &reference::unary(UnaryOp::Sigmoid, &[0.0f32, inf, -inf, 40.0, nan]),
        &[0.5, 1.0, 0.0, 1.0, nan],
    );
    // sqrt is correctly rounded (rule 1). sqrt(2) = 1.41421356237...; the f32 neighbours
    // are 1.41421353816986 (0x3fb504f3) and 1.41421365737915 (0x3fb504f4); the first is
    // nearer. sqrt(-0) = -0, sqrt(-1) = NaN (IEEE 754-2019 §5.4.1).
    assert_bits(
        &reference::unary(UnaryOp::Sqrt, &[4.0f32, 2.0, 0.0, -0.0, -1.0, inf, 0.25]),
        &[2.0, f32::from_bits(0x3fb5_04f3), 0.0, -0.0, nan, inf, 0.5],
    );
    // Subnormal input kept: sqrt(2^-148) = 2^-74 exactly.
    assert_bits(
        &reference::unary(UnaryOp::Sqrt, &[f32::from_bits(2)]),
        &[2f32.powi(-74)],
    );
}

/// Source: the mathematical definitions (ONNX Exp, Log, Tanh, Sigmoid) evaluated with f64
/// math, then compared with the documented accuracy of gpukit's functions (rule 3;
/// math.rs: exp/log/sigmoid < 1 ulp, tanh < 2 ulp). This test alone has a tolerance:
/// gpukit's transcendental functions are not correctly rounded, so the exact bits are
/// gpukit's own and are pinned by the equivalence suite, not here.
#[test]
fn unary_accuracy_against_f64_definition() {
    let xs = [0.5f32, 1.0, -2.25, 3.0, -7.5, 10.0];
    /// An op, its f64 definition, the allowed ulp error.
    type Case = (UnaryOp, fn(f64) -> f64, u64);
    let cases: [Case; 4] = [
        (UnaryOp::Exp, f64::exp, 1),
        (UnaryOp::Tanh, f64::tanh, 2),
        (UnaryOp::Sigmoid, |x| 1.0 / (1.0 + (-x).exp()), 1),
        (UnaryOp::Log, |x| x.abs().ln(), 1),
    ];
    for (op, f, tol) in cases {
        let input: Vec<f32> = if op == UnaryOp::Log {
            xs.iter().map(|x| x.abs()).collect()
        } else {
            xs.to_vec()
        };
        let got = reference::unary(op, &input);
        for (&x, &g) in input.iter().zip(&got) {
            let want = f(f64::from(x)) as f32;
            assert!(
                ulps_f32(g, want) <= tol,
                "{op:?}({x}) = {g} vs {want} ({} ulp)",
                ulps_f32(g, want)
            );
        }
    }
}

/// Source: rule 6: a user map sees the exactly loaded f32 and its result is stored once.
/// By hand: bf16 has 7 fraction bits, ulp(1) = 2^-7. f(x) = x + 3*2^-9 (3/4 ulp) in f32
/// then one store: 1 + 0.75 ulp rounds up to 1 + 2^-7.
#[test]
fn map_loads_computes_stores_once() {
    let got = reference::map(|x: f32| x + 3.0 * 2f32.powi(-9), &[bf16::ONE]);
    assert_eq!(got[0].to_bits(), 0x3f81); // 1 + 2^-7
    let got = reference::map(|x: f64| x * x, &[3.0f64, -0.0]);
    assert_bits(&got, &[9.0, 0.0]);
}

// ---------------------------------------------------------------------------------------
// MatMul
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Gather / ScatterElements
// ---------------------------------------------------------------------------------------

/// Source: ONNX Gather, Operators.md example 1 (axis = 0):
/// data = [[1.0,1.2],[2.3,3.4],[4.5,5.7]], indices = [[0,1],[1,2]]
/// output = [[[1.0,1.2],[2.3,3.4]],[[2.3,3.4],[4.5,5.7]]].
/// Here outer = 1, axis_len = 3, inner = 2, idx flattened.
#[test]
fn gather_onnx_example_1() {
    let data = [1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7];
    let got = reference::gather(&data, &[0, 1, 1, 2], 1, 3, 2).unwrap();
    assert_bits(&got, &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
}

/// Source: ONNX Gather, Operators.md example 2 (axis = 1):
/// data = [[1.0,1.2,1.9],[2.3,3.4,3.9],[4.5,5.7,5.9]], indices = [[0,2]]
/// output = [[[1.0,1.9]],[[2.3,3.9]],[[4.5,5.9]]]. outer = 3, axis_len = 3, inner = 1.
/// Then the same with negative indices: ONNX Gather accepts [-s, s-1], a negative index
/// counting from the end, so [0, -1] selects the same columns as [0, 2].
#[test]
fn gather_onnx_example_2_and_negative_indices() {
    let data = [1.0f64, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9];
    let want = [1.0f64, 1.9, 2.3, 3.9, 4.5, 5.9];
    assert_bits(&reference::gather(&data, &[0, 2], 3, 3, 1).unwrap(), &want);
    assert_bits(&reference::gather(&data, &[0, -1], 3, 3, 1).unwrap(), &want);
    assert_bits(
        &reference::gather(&data, &[-3, -1], 3, 3, 1).unwrap(),
        &want,
    );
    // ONNX backend test "gather_negative_indices": data = arange(10), indices
    // [0, -9, -10], axis 0 -> [0, 1, 0].
    let data: Vec<i64> = (0..10).collect();
    assert_bits(
        &reference::gather(&data, &[0, -9, -10], 1, 10, 1).unwrap(),
        &[0, 1, 0],
    );
    // Values move bit for bit: -0.0 and a NaN payload survive.
    let odd_nan = f32::from_bits(0x7fc0_1234);
    let got = reference::gather(&[-0.0f32, odd_nan], &[1, 0], 1, 2, 1).unwrap();
    assert_eq!(got[0].to_bits(), 0x7fc0_1234);
    assert_eq!(got[1].to_bits(), 0x8000_0000);
    // Empty idx: empty output.
    assert!(reference::gather(&data, &[], 1, 10, 1).unwrap().is_empty());
}

/// Source: ONNX Gather ("It is an error if any of the index values are out of bounds",
/// bounds [-s, s-1]) and contract rule 7 (reported as an error, never read); the first
/// bad index in idx order is the one reported (abi.rs, check_index).
#[test]
fn gather_out_of_range_is_an_error() {
    let data = [1i32, 2, 3];
    for bad in [3i64, -4, i64::MAX, i64::MIN] {
        let err = reference::gather(&data, &[0, bad, 7], 1, 3, 1).unwrap_err();
        assert_eq!(
            err,
            Error::IndexOutOfRange {
                op: "gather".into(),
                index: bad,
                axis_len: 3,
            }
        );
    }
    // Checked even when nothing would be read (outer = 0) and on an empty axis.
    assert!(reference::gather::<f32>(&[], &[5], 0, 3, 1).is_err());
    assert!(reference::gather::<f32>(&[], &[0], 2, 0, 1).is_err());
}

/// Source: ONNX ScatterElements, Operators.md example 2 (axis = 1):
/// data = [[1.0,2.0,3.0,4.0,5.0]], indices = [[1,3]], updates = [[1.1,2.1]]
/// output = [[1.0,1.1,3.0,2.1,5.0]]; and the backend test
/// "scatter_elements_with_negative_indices": indices = [[1,-3]] ->
/// [[1.0,1.1,2.1,4.0,5.0]].
#[test]
fn scatter_onnx_example_2_and_negative_index() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0];
    let upd = [1.1f32, 2.1];
    assert_bits(
        &reference::scatter(&data, &[1, 3], &upd, 1, 5, 1).unwrap(),
        &[1.0, 1.1, 3.0, 2.1, 5.0],
    );
    assert_bits(
        &reference::scatter(&data, &[1, -3], &upd, 1, 5, 1).unwrap(),
        &[1.0, 1.1, 2.1, 4.0, 5.0],
    );
}

/// Source: ONNX ScatterElements, Operators.md example 1 (axis = 0):
/// data = zeros(3,3), indices = [[1,0,2],[0,2,1]], updates = [[1.0,1.1,1.2],[2.0,2.1,2.2]]
/// output = [[2.0,1.1,0.0],[1.0,0.0,2.2],[0.0,2.1,1.2]].
/// gpukit's scatter takes one index vector per axis (shared by all outer/inner
/// positions), so the example runs column by column: column j is data [3] (outer 1,
/// axis_len 3, inner 1) with idx = indices[:, j] and upd = updates[:, j].
#[test]
fn scatter_onnx_example_1_columnwise() {
    let indices = [[1i64, 0, 2], [0, 2, 1]];
    let updates = [[1.0f32, 1.1, 1.2], [2.0, 2.1, 2.2]];
    let want = [[2.0f32, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]];
    for j in 0..3 {
        let idx = [indices[0][j], indices[1][j]];
        let upd = [updates[0][j], updates[1][j]];
        let col = reference::scatter(&[0.0f32; 3], &idx, &upd, 1, 3, 1).unwrap();
        let want_col = [want[0][j], want[1][j], want[2][j]];
        assert_bits(&col, &want_col);
    }
}

/// Source: gpukit's definition of duplicates (abi.rs scatter: the largest g wins;
/// ONNX ScatterElements with reduction "none" leaves them undefined), and the
/// [outer, axis_len, inner] layout, by hand.
/// data [2, 3, 2] = 0..12, idx = [2, 0, 2, -1], upd [2, 4, 2]:
/// o = 0: row 2 <- upd[0,0]=(100,101), row 0 <- (102,103), row 2 <- (104,105),
///        row 2 <- (106,107) (last wins); row 1 keeps (2,3).
/// o = 1: upd[1, g] = (200 + 2g, 201 + 2g): row 2 ends as (206,207), row 0 as
///        (202,203); row 1 keeps (8,9).
#[test]
fn scatter_duplicates_largest_g_wins() {
    let data: Vec<i64> = (0..12).collect();
    let upd: Vec<i64> = (0..16)
        .map(|v| if v < 8 { 100 + v } else { 200 + v - 8 })
        .collect();
    let got = reference::scatter(&data, &[2, 0, 2, -1], &upd, 2, 3, 2).unwrap();
    assert_bits(&got, &[102, 103, 2, 3, 106, 107, 202, 203, 8, 9, 206, 207]);
}

/// Source: contract rule 7 (out-of-range index -> error, nothing written), by hand.
#[test]
fn scatter_out_of_range_is_an_error() {
    let err = reference::scatter(&[0.0f32; 3], &[0, -4], &[1.0, 2.0], 1, 3, 1).unwrap_err();
    assert_eq!(
        err,
        Error::IndexOutOfRange {
            op: "scatter".into(),
            index: -4,
            axis_len: 3,
        }
    );
}

// ---------------------------------------------------------------------------------------
// Softmax
// ---------------------------------------------------------------------------------------

/// Source: ONNX Softmax, `Softmax(x) = Exp(x) / ReduceSum(Exp(x), axis, keepdims=1)`,
/// Operators.md example x = [[-1, 0, 1]] -> [[0.09003058, 0.24472848, 0.66524094]], and
/// [1, 2, 3] (the same values: softmax is shift-invariant), evaluated here in f64 and
/// rounded. Tolerance (this test only): softmax uses gpukit's exp (< 1 ulp, rule 3),
/// then a 3-term sum and a division, each correctly rounded; the result is within a few
/// ulp of the true value. 4 ulp allowed in f32 (the f64 derivation is far more precise
/// than that); 8 ulp in f64, where the derivation (platform exp, sum, division, all in
/// f64) carries a few ulp of error of its own.
#[test]
fn softmax_onnx_example_within_ulps() {
    let rows = [[1.0f64, 2.0, 3.0], [-1.0, 0.0, 1.0]];
    let want_rows: Vec<[f64; 3]> = rows
        .iter()
        .map(|r| {
            let e: Vec<f64> = r.iter().map(|x| x.exp()).collect();
            let s: f64 = e.iter().sum();
            [e[0] / s, e[1] / s, e[2] / s]
        })
        .collect();
    // Sanity of the f64 derivation against the documented ONNX numbers.
    for (w, doc) in want_rows[1]
        .iter()
        .zip([0.09003058f64, 0.24472848, 0.66524094])
    {
        // The documented numbers are f32 values printed to 8 decimals.
        assert!((w - doc).abs() < 5e-8);
    }

    let a32: Vec<f32> = rows.iter().flatten().map(|&x| x as f32).collect();
    let got32 = reference::softmax_rows(&a32, 2, 3);
    let a64: Vec<f64> = rows.iter().flatten().copied().collect();
    let got64 = reference::softmax_rows(&a64, 2, 3);
    for (i, w) in want_rows.iter().flatten().enumerate() {
        assert!(
            ulps_f32(got32[i], *w as f32) <= 4,
            "f32 [{i}]: {} vs {}",
            got32[i],
            w
        );
        assert!(
            ulps_f64(got64[i], *w) <= 8,
            "f64 [{i}]: {} vs {}",
            got64[i],
            w
        );
    }
}

/// Source: the ONNX Softmax definition evaluated where every step is exact, and the
/// contract's specials (rule 7; ONNX's max-subtracted reference gives the same NaNs),
/// by hand:
/// * [5,5,5,5]: m = 5, e_j = exp(0) = 1 exactly, s = 4, out = 1/4 exactly.
/// * [-inf, 0]: m = 0, e = [exp(-inf), exp(0)] = [0, 1], s = 1, out = [+0, 1].
/// * a NaN anywhere: m = NaN, every e_j = NaN: the row is all NaN.
/// * all -inf: m = -inf, x - m = -inf - -inf = NaN: the row is all NaN.
/// * a +inf: m = +inf, inf - inf = NaN at that position, so s = NaN: all NaN.
/// * 8193 zeros (past one reduction chunk of 8192): e_j = 1, s = 8193 (integer sums are
///   exact below 2^24), out = the correctly rounded 1/8193.
/// * rows or cols = 0: empty output.
#[test]
fn softmax_exact_rows_and_specials() {
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    let a = [
        5.0f32, 5.0, 5.0, 5.0, // exact quarter
        -inf, 0.0, -inf, -inf, // zeros and one
        1.0, nan, 2.0, 3.0, // NaN row
        -inf, -inf, -inf, -inf, // all -inf
        1.0, inf, 2.0, 0.0, // +inf
    ];
    let got = reference::softmax_rows(&a, 5, 4);
    let want = [
        0.25f32, 0.25, 0.25, 0.25, //
        0.0, 1.0, 0.0, 0.0, //
        nan, nan, nan, nan, //
        nan, nan, nan, nan, //
        nan, nan, nan, nan,
    ];
    assert_bits(&got, &want);
    assert_eq!(got[4].to_bits(), 0, "exp(-inf) / 1 is +0.0");

    let zeros = vec![0.0f32; 8193];
    let got = reference::softmax_rows(&zeros, 1, 8193);
    assert!(
        got.iter()
            .all(|&v| v.to_bits() == (1.0f32 / 8193.0).to_bits())
    );

    // f16: [0, 0] -> 0.5 each, exact.
    let got = reference::softmax_rows(&[f16::ZERO, f16::ZERO], 1, 2);
    assert_bits(&got, &[f16::from_f32(0.5); 2]);

    assert!(reference::softmax_rows::<f32>(&[], 3, 0).is_empty());
    assert!(reference::softmax_rows::<f32>(&[], 0, 3).is_empty());
}

// ---------------------------------------------------------------------------------------
// ReduceSum and dot
// ---------------------------------------------------------------------------------------

/// Source: the reduction shape (rule 4; reduce.rs: 32 lanes, lane l takes items
/// l, l+32, ...; tree w = 16, 8, 4, 2, 1), derived by hand in f32 where ulp(1e8) = 8.
/// Input: 1e8 followed by 63 ones (n = 64).
/// * lane 0 = 1e8 + 1 (item 32) -> 1e8 (1 is below half an ulp); lanes 1..31 = 2.
/// * w=16: acc0 = 1e8 + 2 -> 1e8; acc1..15 = 4.
/// * w=8:  acc0 = 1e8 + 4: a tie between 1e8 (= 12500000 * 8, even) and 1e8 + 8 -> 1e8;
///   acc1..7 = 8.
/// * w=4:  acc0 = 1e8 + 8 (exact); acc1..3 = 16.
/// * w=2:  acc0 = 1e8 + 24 (exact); acc1 = 32.
/// * w=1:  acc0 = 1e8 + 56 (exact).
///
/// Result 100000056. (The exact sum is 100000063; a sequential left fold gives 1e8.)
#[test]
fn sum_order_is_the_reduction_shape() {
    let mut a = vec![1.0f32; 64];
    a[0] = 1e8;
    assert_eq!(reference::sum(&a).to_bits(), 100_000_056.0f32.to_bits());
}

/// Source: the reduction shape's chunking (rule 4; CHUNK = 8192), by hand, f32
/// (ulp 8 throughout: every value below stays in [2^26, 2^27)).
/// Input: 1e8 followed by 8223 ones (n = 8224 = 8192 + 32).
/// Chunk 0 (items 0..8192, 256 per lane): lane 0 = 1e8 + 255 ones, each one below half
/// an ulp -> 1e8; lanes 1..31 = 256 each (exact). Tree:
/// * w=16: acc0 = 1e8 + acc16 = 1e8 + 256; acc1..15 = 512.
/// * w=8:  acc0 = 1e8 + 768;  acc1..7 = 1024.
/// * w=4:  acc0 = 1e8 + 1792; acc1..3 = 2048.
/// * w=2:  acc0 = 1e8 + 3840; acc1 = 4096.
/// * w=1:  acc0 = 1e8 + 7936 (every step a multiple of 8: exact).
///
/// Chunk 1 (items 8192..8224, 32 ones): one per lane, tree -> 32.
/// The partials [1e8 + 7936, 32] go through the same shape: lane 0 = 1e8 + 7936,
/// lane 1 = 32, tree -> 1e8 + 7968 = 100007968 (exact).
/// Without chunking (32 lanes over all 8224 items, 257 per lane) the same derivation
/// gives 1e8+256, +768, +1792 (1e8+1796 is a tie, to even), +3848, +7960 = 100007960,
/// so the chunk boundary is observable.
#[test]
fn sum_order_includes_chunking() {
    let mut a = vec![1.0f32; 8224];
    a[0] = 1e8;
    assert_eq!(reference::sum(&a).to_bits(), 100_007_968.0f32.to_bits());
}

/// Source: rule 4 and 6, by hand.
/// * empty: every lane starts at +0.0 -> +0.0 (ONNX ReduceSum of an empty set is 0).
/// * [-0.0, -0.0]: lanes start at +0.0 and +0 + -0 = +0, so the sum is +0.0 (numpy's
///   sum, which starts from the first element, would give -0.0: gpukit defines +0.0).
/// * NaN anywhere -> NaN; +inf and -inf -> NaN.
/// * f16: 8193 ones accumulate in f32 to 8193 exactly; one store to f16 (ulp 8 at 8192):
///   8193 is 1/8 ulp above 8192 -> 8192. (Accumulating in f16 would stall at 2048.)
/// * i32/i64 wrap: MAX + 1 = MIN.
#[test]
fn sum_specials_storage_and_ints() {
    assert_eq!(reference::sum::<f32>(&[]).to_bits(), 0);
    assert_eq!(reference::sum(&[-0.0f64, -0.0]).to_bits(), 0);
    assert!(reference::sum(&[1.0f32, f32::NAN, 2.0]).is_nan());
    assert!(reference::sum(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    let ones = vec![f16::ONE; 8193];
    assert_eq!(reference::sum(&ones), f16::from_f32(8192.0));
    let ones = vec![bf16::ONE; 300];
    // bf16 ulp at 256 is 2: 300 is representable -> exact.
    assert_eq!(reference::sum(&ones), bf16::from_f32(300.0));
    assert_eq!(reference::sum(&[i32::MAX, 1]), i32::MIN);
    assert_eq!(reference::sum(&[i64::MAX, 2, -1]), i64::MIN);
    assert_eq!(reference::sum::<i64>(&[]), 0);
    assert_eq!(reference::sum(&[1.5f32, 2.25, -0.75]), 3.0);
}

/// Source: rules 2 and 4 (dot: lane step fma(a_i, b_i, acc), combine +), by hand.
/// n = 33: lane 0 gets items 0 and 32, lanes 1..31 one item each (all zero here).
/// Item 0: a = 1, b = -1 -> lane 0 = fma(1, -1, +0) = -1.
/// Item 32: a = b = 1 + 2^-12 -> lane 0 = fma(1+2^-12, 1+2^-12, -1) = 2^-11 + 2^-24
/// exactly (a rounded product would lose the 2^-24: tie to even gives 1 + 2^-11).
/// Tree: adding the +0.0 lanes changes nothing. Result 2^-11 + 2^-24.
#[test]
fn dot_fma_in_lanes_by_hand() {
    let e = 2f32.powi(-12);
    let mut a = vec![0.0f32; 33];
    let mut b = vec![0.0f32; 33];
    a[0] = 1.0;
    b[0] = -1.0;
    a[32] = 1.0 + e;
    b[32] = 1.0 + e;
    let got = reference::dot(&a, &b);
    assert_eq!(got.to_bits(), (2f32.powi(-11) + 2f32.powi(-24)).to_bits());
    // Hand product: [1,2,3].[4,5,6] = 32. Empty: +0.0.
    assert_eq!(reference::dot(&[1.0f64, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    assert_eq!(reference::dot::<f32>(&[], &[]).to_bits(), 0);
    // bf16 inputs, f32 accumulation, one store: 1*1 + 3 * (1 * 2^-9) in different lanes
    // = 1 + 0.75 ulp(bf16) -> rounds to 1 + 2^-7.
    let q = bf16::from_f32(2f32.powi(-9));
    let got = reference::dot(&[bf16::ONE; 4], &[bf16::ONE, q, q, q]);
    assert_eq!(got.to_bits(), 0x3f81);
}

// ---------------------------------------------------------------------------------------
// Pre-conditions
// ---------------------------------------------------------------------------------------

/// The oracle's shape pre-conditions are asserts (documented `# Panics`).
#[test]
#[should_panic(expected = "gpukit-reference::binary")]
fn binary_length_mismatch_panics() {
    let _ = reference::binary(BinaryOp::Add, &[1.0f32, 2.0], &[1.0f32]);
}

/// See [`binary_length_mismatch_panics`].
#[test]
#[should_panic(expected = "gpukit-reference::matmul")]
fn matmul_length_mismatch_panics() {
    let _ = reference::matmul(&[1.0f32, 2.0], &[1.0f32], 1, 2, 1);
}
