//! gpukit's operator family: validation, shape rules and dispatch to each backend's
//! built-in kernels (`{op}_{dtype}`), written against `gpukit-core` only.
//!
//! **Placeholder crate.** The foundation issue lays out the workspace; the operators
//! themselves (elementwise, matmul, softmax, gather/scatter, the neural-network family)
//! arrive with the numerics-contract and operator-family issues. Until then this crate
//! holds only the shared helpers below.

use gpukit_core::{Error, Result};

/// The number of elements of a shape, checked for overflow.
///
/// Errors: [`Error::SizeOverflow`] when the product does not fit in `usize`.
pub fn numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("shape {shape:?}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numel_multiplies_and_checks_overflow() {
        assert_eq!(numel(&[]).unwrap(), 1);
        assert_eq!(numel(&[2, 3, 0]).unwrap(), 0);
        assert_eq!(numel(&[7, 11]).unwrap(), 77);
        assert!(matches!(
            numel(&[usize::MAX, 2]),
            Err(Error::SizeOverflow { .. })
        ));
    }
}
