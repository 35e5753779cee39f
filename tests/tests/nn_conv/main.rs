//! The `conv` group (gemm, conv2d, conv_transpose2d, max_pool2d): every op × float
//! dtype on every backend of [`gpukit_tests::backends`] against the reference oracle,
//! bit for bit (any NaN equals any NaN); bad inputs give their specific errors; random
//! invalid calls never panic.
//!
//! Shapes reach: stride > kernel, kernel > input with padding, dilation > 1, depthwise
//! and in-between groups, odd sizes, single pixels, N = 1 and N > 1, output-channel and
//! pixel counts past the CPU register tiles, k (gemm) and C_in/groups·KH·KW (conv) of 0,
//! 1 and past the 256-long k-block, trans_a and trans_b on and off (all four
//! combinations), absent C and bias, C full or broadcast from a row, a column or a
//! scalar, and a full C given as the output itself.

mod errors;
mod fuzz;
mod oracle;

use gpukit::Kit;

/// The CPU kit the bad-input and no-panic tests call.
fn kit() -> Kit {
    gpukit::cpu().unwrap()
}

#[test]
fn skipped_backends_are_reported() {
    for (name, why) in gpukit_tests::skipped_backends() {
        eprintln!("nn_conv: backend {name} skipped: {why}");
    }
}
