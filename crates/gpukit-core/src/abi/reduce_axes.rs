//! Kernel signature of the reductions along a set of axes (`reduce_axes`): the order of
//! operations is [`crate::reduce_axes`]'s (docs/numerics.md, "Reductions along axes").

use super::{ALL_DTYPES, KernelSig};
use crate::reduce_axes::MAX_RANK;
use crate::{Error, Result};

const ALL: &[crate::DType] = &ALL_DTYPES;

/// The reductions' kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // Reduction along axes. `dims`/`strides` (i64 buffers of ndim entries, 1 <= ndim <=
    // reduce_axes::MAX_RANK) are an AxesPlan layout: entries 0..nkeep the kept axes
    // (out index o row-major over them), nkeep..ndim the reduced axes (item j row-major
    // over them), strides in x's elements. out[o] = reduce(x[offset(o, j)], j < n_red)
    // with the reduction of `code` (ReduceOp::code: 0 sum, 1 mean, 2 max, 3 min, 4 prod,
    // 5 l1, 6 l2, 7 logsumexp; i64/i32 only 0, 2, 3, 4). The kept dims multiply to
    // n_out, the reduced to n_red. out overlaps nothing.
    KernelSig {
        op: "reduce_axes",
        dtypes: ALL,
        args: "out: buf, x: buf, dims: buf<i64>, strides: buf<i64>, ndim, nkeep, n_out, n_red, code",
    },
];

/// A checked `reduce_axes` layout (dims and strides as `usize`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceLayout {
    /// Kept then reduced extents.
    pub dims: Vec<usize>,
    /// Their input strides, in elements.
    pub strides: Vec<usize>,
    /// How many leading entries are kept axes.
    pub nkeep: usize,
}

/// The contents of a `reduce_axes` launch (args out, x, dims, strides, ndim, nkeep,
/// n_out, n_red, code): dims and strides non-negative, the kept dims' product `n_out`,
/// the reduced dims' product `n_red`, and (when both are nonzero) the last element read,
/// `Σ (dim − 1)·stride`, inside `x` (`x_len` elements). The CPU kernel and the emulator
/// apply it before a launch.
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault (2 for a
/// negative or overflowing dim or stride, 6 / 7 for a product other than `n_out` /
/// `n_red` or more work than `x` has elements (7), 1 for a read outside `x`).
pub fn reduce_layout(
    kernel: &str,
    dims: &[i64],
    strides: &[i64],
    nkeep: usize,
    n_out: usize,
    n_red: usize,
    x_len: usize,
) -> Result<ReduceLayout> {
    let err = |index: usize, reason: String| {
        Err(Error::Argument {
            kernel: kernel.to_string(),
            index,
            reason,
        })
    };
    let mut d_out = Vec::with_capacity(dims.len().min(MAX_RANK));
    let mut s_out = Vec::with_capacity(dims.len().min(MAX_RANK));
    let (mut keep, mut red) = (1usize, 1usize);
    for (i, (&d, &s)) in dims.iter().zip(strides).enumerate() {
        let (Ok(d), Ok(s)) = (usize::try_from(d), usize::try_from(s)) else {
            return err(
                2,
                format!("negative dim or stride in {dims:?} / {strides:?}"),
            );
        };
        let p = if i < nkeep { &mut keep } else { &mut red };
        *p = match p.checked_mul(d) {
            Some(v) => v,
            None => return err(2, format!("the extents {dims:?} overflow")),
        };
        d_out.push(d);
        s_out.push(s);
    }
    if keep != n_out {
        return err(
            6,
            format!(
                "n_out {n_out} is not the product of the kept dims {:?}",
                &dims[..nkeep.min(dims.len())]
            ),
        );
    }
    if red != n_red {
        return err(
            7,
            format!(
                "n_red {n_red} is not the product of the reduced dims {:?}",
                &dims[nkeep.min(dims.len())..]
            ),
        );
    }
    // Every launch the op makes reads each element of a contiguous x once: more work
    // than x has elements is a lying layout (stride-0 axes would repeat reads without
    // bound).
    if n_out.checked_mul(n_red).is_none_or(|w| w > x_len) && n_out > 0 && n_red > 0 {
        return err(
            7,
            format!("n_out {n_out} x n_red {n_red} items exceed the buffer's {x_len} elements"),
        );
    }
    if n_out > 0 && n_red > 0 {
        let mut last = Some(0usize);
        for (&d, &s) in d_out.iter().zip(&s_out) {
            last = last.and_then(|l| (d - 1).checked_mul(s).and_then(|v| v.checked_add(l)));
        }
        if !matches!(last, Some(l) if l < x_len) {
            return err(1, format!("reads outside the buffer's {x_len} elements"));
        }
    }
    Ok(ReduceLayout {
        dims: d_out,
        strides: s_out,
        nkeep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_checked() {
        let l = reduce_layout("reduce_axes_f32", &[3, 2, 4], &[4, 12, 1], 1, 3, 8, 24).unwrap();
        assert_eq!(
            (l.dims, l.strides, l.nkeep),
            (vec![3, 2, 4], vec![4, 12, 1], 1)
        );
        for (dims, strides, n_out, n_red, x_len, idx) in [
            (
                vec![3i64, 2, 4],
                vec![4i64, 12, 1],
                3usize,
                8usize,
                23usize,
                7usize,
            ),
            (vec![3, 2, 4], vec![4, 13, 1], 3, 8, 24, 1),
            (vec![3, 2, 4], vec![0, 0, 0], 3, 8, 23, 7),
            (vec![3, -2, 4], vec![4, 12, 1], 3, 8, 24, 2),
            (vec![3, 2, 4], vec![4, 12, 1], 4, 8, 24, 6),
            (vec![3, 2, 4], vec![4, 12, 1], 3, 7, 24, 7),
            (vec![3, 2, 4], vec![i64::MAX, 12, 1], 3, 8, 24, 1),
            (vec![3, 1 << 40, 1 << 20], vec![0, 0, 0], 3, 1 << 60, 24, 7),
        ] {
            let e = reduce_layout("k", &dims, &strides, 1, n_out, n_red, x_len).unwrap_err();
            assert!(
                matches!(e, Error::Argument { index, .. } if index == idx),
                "{e}"
            );
        }
        // An empty reduction reads nothing.
        assert!(reduce_layout("k", &[3, 0], &[0, 0], 1, 3, 0, 0).is_ok());
    }
}
