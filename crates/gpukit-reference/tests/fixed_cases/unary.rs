//! Unary maps (ONNX Relu, Sigmoid, Exp, Tanh, Sqrt, Log): exact points and specials by
//! hand, accuracy against the f64 definitions, and a user map's single store.

use gpukit_core::half::bf16;
use gpukit_core::numeric::UnaryOp;
use gpukit_reference as reference;

use crate::common::{assert_bits, ulps_f32};

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
