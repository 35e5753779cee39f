//! Fixed cases for the reference oracle whose expected values do NOT come from the oracle
//! or from gpukit's kernels: each is derived by hand (the derivation is in the comments)
//! or taken from the documented definition/examples of the ONNX operator of the same
//! name (onnx/docs/Operators.md). The point is independence: the oracle must not share
//! a misreading of the contract with the kernels it judges.
//!
//! Every comparison is bitwise with the contract's NaN rule (rule 8), except the few
//! tests involving gpukit's transcendental functions (rule 3) against f64 math, which
//! allow the documented ulp error and say so.

use gpukit_core::numeric::BinaryOp;
use gpukit_reference as reference;

#[path = "../common/mod.rs"]
mod common;

mod binary;
mod gather_scatter;
mod matmul;
mod reduce;
mod softmax;
mod unary;

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
