//! The attention group on every backend of [`gpukit_tests::backends`], against the
//! reference oracle bit for bit (any NaN equals any NaN): fused attention (head-major
//! unmasked and masked, batched interleaved) and composed attention, every float dtype.
//! Shapes hit 1-token sequences, key counts around the key tile (63, 64, 65, 129, ...),
//! head widths 1, odd and the maximum, several heads with shared mask rows, row blocks
//! past the CPU's 32-row tasks; masks hit 0, biases, -1e30, -inf, NaN, partial, trailing
//! and full masking; values hit NaN, ±inf, -0.0 and subnormals. Then the bad-input
//! errors and a no-panic proptest of random invalid calls.
//!
//! `GPUKIT_CASES=N` raises the case count (default 256 per op × dtype).

mod errors;
mod fuzz;
mod oracle;

use gpukit::Kit;

/// The CPU kit the bad-input and no-panic tests call.
fn kit() -> Kit {
    gpukit::cpu().unwrap()
}
