//! The movement group's equivalence suite: concat (and copy into an axis slot), slice,
//! permute, expand, bilinear and nearest resize and the EOS gather, on every backend of
//! [`gpukit_tests::backends`], against the reference oracle, bit for bit (any NaN
//! equals any NaN); then bad-input tests and a no-panic proptest of invalid calls.

mod errors;
mod oracle;

#[test]
fn skipped_backends_are_reported() {
    for (name, why) in gpukit_tests::skipped_backends() {
        eprintln!("nn_movement: backend `{name}` SKIPPED: {why}");
    }
}
