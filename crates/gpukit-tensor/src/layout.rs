//! Shape and stride arithmetic shared by the view and math modules (no device calls).

use gpukit_core::{Error, Result};

/// `Error::Shape` for `op`.
pub(crate) fn shape_err(op: &str, detail: String) -> Error {
    Error::Shape {
        op: op.to_string(),
        detail,
    }
}

/// `Error::InvalidArgument` for `op`.
pub(crate) fn invalid(op: &str, reason: String) -> Error {
    Error::InvalidArgument {
        op: op.to_string(),
        reason,
    }
}

/// The product of `dims`, checked for overflow (and to fit an `isize` stride).
pub(crate) fn numel(op: &str, dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("{op}: shape {dims:?}"),
        })
}

/// Row-major strides of `dims` (the caller has checked the product).
pub(crate) fn contiguous_strides(dims: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; dims.len()];
    let mut acc = 1isize;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc = acc.saturating_mul(dims[d] as isize);
    }
    s
}

/// Whether `(dims, strides)` is row-major without gaps (axes of length 1 may have any
/// stride; an empty tensor counts as contiguous).
pub(crate) fn is_contiguous(dims: &[usize], strides: &[isize]) -> bool {
    if dims.contains(&0) {
        return true;
    }
    let mut expected = 1isize;
    for (&d, &s) in dims.iter().zip(strides).rev() {
        if d != 1 && s != expected {
            return false;
        }
        expected = expected.saturating_mul(d as isize);
    }
    true
}

/// Resolves `axis` (negative counts from the end) against `rank`.
///
/// Errors: [`Error::InvalidArgument`] naming `op`, the axis and the shape.
pub(crate) fn axis(op: &str, axis: i64, dims: &[usize]) -> Result<usize> {
    axis_in(op, axis, dims.len(), dims)
}

/// Resolves `axis` against `rank` (which may exceed the shape's, for `unsqueeze`).
pub(crate) fn axis_in(op: &str, axis: i64, rank: usize, dims: &[usize]) -> Result<usize> {
    gpukit_core::numeric::resolve_index(axis, rank).ok_or_else(|| {
        invalid(
            op,
            format!("axis {axis} is out of range for shape {dims:?} (rank {rank})"),
        )
    })
}

/// numpy's broadcast of two shapes: align right; each pair of dims is equal, or one of
/// them is 1 (the other wins).
///
/// ```
/// assert_eq!(gpukit_tensor::broadcast_shapes("add", &[2, 1, 3], &[4, 1]).unwrap(), [2, 4, 3]);
/// assert!(gpukit_tensor::broadcast_shapes("add", &[2, 3], &[4]).is_err());
/// ```
///
/// Errors: [`Error::Shape`] naming `op`, both shapes and the first axis (of the
/// result) whose dims do not fit.
pub fn broadcast_shapes(op: &str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r {
            a[i + a.len() - r]
        } else {
            1
        };
        let db = if i + b.len() >= r {
            b[i + b.len() - r]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(shape_err(
                op,
                format!(
                    "shapes {a:?} and {b:?} do not broadcast: axis {i} of the result has {da} vs {db}"
                ),
            ));
        };
    }
    Ok(out)
}

/// The strides that read a tensor of `(dims, strides)` broadcast to `out` (right
/// aligned; 0 along new or stretched axes). The caller has checked that the shapes
/// broadcast.
pub(crate) fn broadcast_strides(dims: &[usize], strides: &[isize], out: &[usize]) -> Vec<isize> {
    let lead = out.len() - dims.len();
    let mut s = vec![0isize; out.len()];
    for d in 0..dims.len() {
        if dims[d] == out[lead + d] && dims[d] != 1 {
            s[lead + d] = strides[d];
        }
    }
    s
}

/// The element range `[lo, hi]` a view reads relative to its offset (`None` when it
/// has no element).
pub(crate) fn extent(dims: &[usize], strides: &[isize]) -> Option<(isize, isize)> {
    if dims.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&d, &s) in dims.iter().zip(strides) {
        let span = (d as isize - 1) * s;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity_ignores_unit_axes_and_empty_tensors() {
        assert!(is_contiguous(&[2, 3], &[3, 1]));
        assert!(is_contiguous(&[2, 1, 3], &[3, 99, 1]));
        assert!(!is_contiguous(&[2, 3], &[1, 2]));
        assert!(is_contiguous(&[0, 3], &[7, 7]));
        assert!(is_contiguous(&[], &[]));
    }

    #[test]
    fn broadcast_rules() {
        assert_eq!(broadcast_shapes("t", &[], &[3]).unwrap(), [3]);
        assert_eq!(broadcast_shapes("t", &[0, 1], &[1, 4]).unwrap(), [0, 4]);
        assert!(broadcast_shapes("t", &[0], &[2]).is_err());
        assert_eq!(
            broadcast_strides(&[3, 1], &[1, 1], &[2, 3, 4]),
            vec![0, 1, 0]
        );
        assert_eq!(extent(&[2, 3], &[-3, 1]), Some((-3, 2)));
    }
}
