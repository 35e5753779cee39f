//! Shared validation: every op calls these before touching memory.

use gpukit_core::numeric::FLOAT_DTYPES;
use gpukit_core::{Buf, DType, Error, Kit, LaunchConfig, Result};

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

/// `a * b * ...` for sizes named in `what`, checked for overflow.
pub(crate) fn product(op: &str, what: &str, dims: &[usize]) -> Result<usize> {
    numel(dims).map_err(|_| Error::SizeOverflow {
        what: format!("{op}: {what} {dims:?}"),
    })
}

/// Each operand is present and belongs to `kit`.
pub(crate) fn on_kit(kit: &Kit, op: &str, bufs: &[(&Buf, &str)]) -> Result<()> {
    for (b, name) in bufs {
        match b.kit() {
            None => {
                return Err(Error::Absent {
                    what: format!("{op}: {name}"),
                });
            }
            Some(k) if !k.same(kit) => {
                return Err(Error::DeviceMismatch {
                    op: op.to_string(),
                    operand: name.to_string(),
                });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Every operand has the dtype of the first.
pub(crate) fn same_dtype(op: &str, bufs: &[(&Buf, &str)]) -> Result<DType> {
    let d = bufs[0].0.dtype();
    for (b, _) in &bufs[1..] {
        if b.dtype() != d {
            return Err(Error::DType {
                op: op.to_string(),
                expected: d.to_string(),
                got: b.dtype(),
            });
        }
    }
    Ok(d)
}

/// The dtype is one of `allowed`.
pub(crate) fn dtype_in(op: &str, d: DType, allowed: &[DType]) -> Result<()> {
    if allowed.contains(&d) {
        Ok(())
    } else {
        Err(Error::DType {
            op: op.to_string(),
            expected: allowed
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(" or "),
            got: d,
        })
    }
}

/// The dtype is a float.
pub(crate) fn float(op: &str, d: DType) -> Result<()> {
    dtype_in(op, d, &FLOAT_DTYPES)
}

/// The scalar parameter `v` as the op computes with it: rounded once to the compute
/// type of `d` (f64 for f64, f32 for every other float dtype).
pub(crate) fn in_compute_type(d: DType, v: f64) -> f64 {
    if d == DType::F64 {
        v
    } else {
        f64::from(v as f32)
    }
}

/// The scalar parameter `what` = `v` is finite *in the compute type of `d`* (a value
/// that is finite as an f64 but overflows f32, such as 1e300 for an f32 op, is
/// refused), and `>= 0` when `non_negative`.
pub(crate) fn finite_param(
    op: &str,
    what: &str,
    d: DType,
    v: f64,
    non_negative: bool,
) -> Result<()> {
    let c = in_compute_type(d, v);
    if c.is_finite() && (!non_negative || c >= 0.0) {
        return Ok(());
    }
    let ty = if d == DType::F64 { "f64" } else { "f32" };
    let need = if non_negative {
        "finite and >= 0"
    } else {
        "finite"
    };
    Err(Error::InvalidArgument {
        op: op.to_string(),
        reason: format!("{what} must be {need} in the compute type ({ty}), got {v}"),
    })
}

/// The buffer has exactly `expected` elements.
pub(crate) fn len(op: &str, name: &str, b: &Buf, expected: usize) -> Result<()> {
    if b.len() == expected {
        Ok(())
    } else {
        Err(Error::Length {
            what: format!("{op}: {name}"),
            expected,
            got: b.len(),
        })
    }
}

fn range(b: &Buf) -> (u64, u64) {
    let s = b.device_ptr().0;
    (s, s + b.byte_len() as u64)
}

/// Whether two buffers share any byte.
pub(crate) fn overlaps(a: &Buf, b: &Buf) -> bool {
    let ((s1, e1), (s2, e2)) = (range(a), range(b));
    s1 < e2 && s2 < e1 && a.byte_len() > 0 && b.byte_len() > 0
}

/// Whether two buffers are exactly the same range.
pub(crate) fn same_range(a: &Buf, b: &Buf) -> bool {
    range(a) == range(b) && a.dtype() == b.dtype()
}

/// `out` overlaps none of `inputs`, except (when `exact_ok`) by being exactly the same
/// range, which elementwise ops handle in place.
pub(crate) fn no_overlap(
    op: &str,
    out: &Buf,
    inputs: &[(&Buf, &str)],
    exact_ok: bool,
) -> Result<()> {
    for (b, name) in inputs {
        if overlaps(out, b) && !(exact_ok && same_range(out, b)) {
            return Err(Error::InvalidArgument {
                op: op.to_string(),
                reason: format!(
                    "the output overlaps input `{name}`{}",
                    if exact_ok {
                        " without being exactly the same range"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    Ok(())
}

/// A size as the i64 scalar kernels take.
pub(crate) fn i64_of(op: &str, what: &str, v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::SizeOverflow {
        what: format!("{op}: {what} = {v}"),
    })
}

/// The launch geometry of a 1-D kernel over `n` work items (at least one block, so
/// kernels that must write something for an empty input, like `sum`, still run).
pub(crate) fn launch_1d(n: usize) -> Result<LaunchConfig> {
    LaunchConfig::for_elements(n.max(1), 256)
}

/// The kernel name `{op}_{dtype}`.
pub(crate) fn name(op: &str, d: DType) -> String {
    gpukit_core::abi::kernel_name(op, d)
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
