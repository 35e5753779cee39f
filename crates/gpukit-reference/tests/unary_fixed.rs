//! Fixed cases for the unary maps added for models (abs, neg, rsqrt, silu, softplus),
//! with expected values that do NOT come from the oracle or the kernels: derived by
//! hand (the derivation is in the comments), from IEEE 754's definitions, or from the
//! ONNX operators' documented definitions (Abs, Neg, Sqrt + Reciprocal, Softplus
//! `y = ln(exp(x) + 1)`) and PyTorch's `silu(x) = x * sigmoid(x)`.
//!
//! Every comparison is bitwise with the contract's NaN rule (rule 8), except the tests
//! against f64 math for the maps built on gpukit's transcendental functions (rule 3),
//! which allow the error docs/numerics.md states and say so.

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::UnaryOp;
use gpukit_reference as reference;

mod common;
use common::{assert_bits, ulps_f32};

/// Source: ONNX Abs / Neg, IEEE 754-2019 §5.5.1 (abs and negate are sign-bit
/// operations: "quiet-computational", they change only the sign bit, also of a NaN and
/// of zeros). By hand on the bit patterns.
#[test]
fn abs_and_neg_are_sign_bit_operations() {
    let inf = f32::INFINITY;
    let x = [
        -1.5f32,
        0.0,
        -0.0,
        2.0,
        -inf,
        inf,
        f32::from_bits(0x8000_0001),
    ];
    assert_bits(
        &reference::unary(UnaryOp::Abs, &x),
        &[1.5, 0.0, 0.0, 2.0, inf, inf, f32::from_bits(1)],
    );
    assert_bits(
        &reference::unary(UnaryOp::Neg, &x),
        &[1.5, -0.0, 0.0, -2.0, inf, -inf, f32::from_bits(1)],
    );
    // abs(-0.0) is +0.0 (bits 0), neg(+0.0) is -0.0 (bits 0x8000_0000): not 0 - x.
    assert_eq!(reference::unary(UnaryOp::Abs, &[-0.0f32])[0].to_bits(), 0);
    assert_eq!(
        reference::unary(UnaryOp::Neg, &[0.0f32])[0].to_bits(),
        0x8000_0000
    );
    // A NaN stays NaN; in f32 and f64 its payload is kept (only the sign changes).
    let nan = f32::from_bits(0xffc1_2345);
    assert_eq!(
        reference::unary(UnaryOp::Abs, &[nan])[0].to_bits(),
        0x7fc1_2345
    );
    assert_eq!(
        reference::unary(UnaryOp::Neg, &[nan])[0].to_bits(),
        0x7fc1_2345
    );
    let nd = f64::from_bits(0x7ff8_0000_0000_0abc);
    assert_eq!(
        reference::unary(UnaryOp::Neg, &[nd])[0].to_bits(),
        0xfff8_0000_0000_0abc
    );
    // f16 / bf16: load exact, sign bit in f32, store exact: the storage sign bit.
    let h = [f16::from_f32(-3.5), f16::NEG_ZERO, f16::from_bits(0x8001)];
    assert_bits(
        &reference::unary(UnaryOp::Abs, &h),
        &[f16::from_f32(3.5), f16::ZERO, f16::from_bits(1)],
    );
    let b = [bf16::from_f32(7.0), bf16::ZERO, bf16::from_bits(0x0001)];
    assert_bits(
        &reference::unary(UnaryOp::Neg, &b),
        &[
            bf16::from_f32(-7.0),
            bf16::NEG_ZERO,
            bf16::from_bits(0x8001),
        ],
    );
}

/// Source: IEEE 754 sqrt and division, each correctly rounded (rule 1), composed:
/// `rsqrt(x) = 1 / sqrt(x)` (ONNX has no Rsqrt; `Reciprocal(Sqrt(x))` is the same two
/// operations). By hand: exact squares give exact results; sqrt(±0) = ±0 and 1/±0 =
/// ±inf; sqrt(+inf) = +inf and 1/inf = +0; sqrt of a negative is NaN.
/// rsqrt(2): sqrt(2) rounds to 0x3fb504f3 = 1.41421353816986...; 1 / that =
/// 0.70710679664... whose nearest f32 is 0x3f3504f3 = 0.707106769084930 (the next one,
/// 0x3f3504f4 = 0.707106828689575, is farther).
#[test]
fn rsqrt_is_correctly_rounded_sqrt_then_division() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    assert_bits(
        &reference::unary(
            UnaryOp::Rsqrt,
            &[4.0f32, 0.25, 16.0, 0.0, -0.0, inf, -1.0, -inf, nan, 2.0],
        ),
        &[
            0.5,
            2.0,
            0.25,
            inf,
            -inf,
            0.0,
            nan,
            nan,
            nan,
            f32::from_bits(0x3f35_04f3),
        ],
    );
    // A subnormal input is kept (no flush to zero): 2^-148 has the exact square root
    // 2^-74, so rsqrt is exactly 2^74.
    assert_bits(
        &reference::unary(UnaryOp::Rsqrt, &[f32::from_bits(2)]),
        &[2f32.powi(74)],
    );
    assert_bits(
        &reference::unary(UnaryOp::Rsqrt, &[0.0625f64, -0.0]),
        &[4.0, f64::NEG_INFINITY],
    );
    // bf16: computed in f32 (1/sqrt(9) = 0.33333334f32), stored once to bf16:
    // 0.333333343 between bf16 0x3eaa (0.33203125) and 0x3eab (0.333984375); the
    // second is nearer.
    assert_eq!(
        reference::unary(UnaryOp::Rsqrt, &[bf16::from_f32(9.0)])[0].to_bits(),
        0x3eab
    );
}

/// Source: PyTorch SiLU `x * sigmoid(x)` (ONNX has no SiLU; it is `Mul(x, Sigmoid(x))`).
/// By hand at points where sigmoid is exact or saturated: sigmoid(±0) = 1/2 so silu(±0)
/// = ±0 (the sign of x); sigmoid(+inf) = 1; sigmoid(40) rounds to 1 (see the sigmoid
/// fixed case), so silu(40) = 40; sigmoid(-200) = exp(-200) underflows to +0 in f32 so
/// silu(-200) = -200 * 0 = -0.0; silu(-inf) is defined as -0.0 (the limit; the plain
/// product would be -inf * 0 = NaN).
#[test]
fn silu_points_and_specials() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    assert_bits(
        &reference::unary(UnaryOp::Silu, &[0.0f32, -0.0, inf, -inf, 40.0, -200.0, nan]),
        &[0.0, -0.0, inf, -0.0, 40.0, -0.0, nan],
    );
    assert_bits(
        &reference::unary(UnaryOp::Silu, &[f64::NEG_INFINITY, 0.0, 100.0]),
        &[-0.0, 0.0, 100.0],
    );
}

/// Source: ONNX Softplus `y = ln(exp(x) + 1)`. By hand: +inf gives +inf, -inf gives
/// ln(1) = +0; for x = 100 the exact value is 100 + 3.7e-44, which rounds to 100 in
/// f32 and f64; for x = -200 (f32) the exact value e^-200 ~ 1.4e-87 is below half the
/// smallest subnormal, so +0.
#[test]
fn softplus_points_and_specials() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    assert_bits(
        &reference::unary(UnaryOp::Softplus, &[inf, -inf, 100.0f32, -200.0, nan]),
        &[inf, 0.0, 100.0, 0.0, nan],
    );
    assert_bits(
        &reference::unary(UnaryOp::Softplus, &[f64::INFINITY, 100.0, -800.0]),
        &[f64::INFINITY, 100.0, 0.0],
    );
}

/// Source: the definitions evaluated in f64 math (ONNX Softplus `ln(exp(x) + 1)`,
/// SiLU `x / (1 + exp(-x))`), compared with the errors docs/numerics.md states for
/// gpukit's chains (softplus <= 2 ulp, silu <= 2 ulp away from its subnormal tail).
/// The exact bits are gpukit's own, pinned by the equivalence suite, not here.
#[test]
fn silu_and_softplus_accuracy_against_f64_definition() {
    let xs = [
        -30.0f32, -17.0, -7.5, -2.25, -1.0, -0.01, 1e-6, 0.5, 1.0, 3.0, 10.0, 16.0, 25.0,
    ];
    let sp = reference::unary(UnaryOp::Softplus, &xs);
    let si = reference::unary(UnaryOp::Silu, &xs);
    for (i, &x) in xs.iter().enumerate() {
        let xd = f64::from(x);
        // ln(exp(x) + 1) as ln_1p(exp(x)): the sum 1 + exp(x) would lose exp(x)'s digits.
        let want_sp = xd.exp().ln_1p() as f32;
        let want_si = (xd / (1.0 + (-xd).exp())) as f32;
        assert!(
            ulps_f32(sp[i], want_sp) <= 2,
            "softplus({x}) = {} vs {want_sp}",
            sp[i]
        );
        assert!(
            ulps_f32(si[i], want_si) <= 2,
            "silu({x}) = {} vs {want_si}",
            si[i]
        );
    }
}
