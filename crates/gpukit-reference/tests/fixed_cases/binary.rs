//! Elementwise binary ops (ONNX Add, Sub, Mul, Div): same-shape values, specials,
//! integer rules and f16 rounding by hand; then broadcasting (ONNX multidirectional /
//! numpy broadcasting).

use gpukit_core::half::f16;
use gpukit_core::numeric::BinaryOp;
use gpukit_reference as reference;

use crate::common::assert_bits;

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
