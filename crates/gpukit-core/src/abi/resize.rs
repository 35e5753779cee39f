//! Kernel signature of the general resize (`resize`): the tables are
//! [`crate::resize::plan_resize`]'s (docs/ops/movement.md, "General resize").

use super::{ALL_DTYPES, KernelSig};
use crate::resize::MAX_RANK;
use crate::{Error, Result};

const ALL: &[crate::DType] = &ALL_DTYPES;

/// The resize kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // General N-D resize from per-axis tap tables. `dims` holds 2·ndim i64 (1 <= ndim
    // <= resize::MAX_RANK): the input extents, then the output extents (row-major,
    // contiguous). `taps` holds (1 + k)·rows i64 and `weights` k·rows f64, rows = Σ out
    // extents: axis a's output index j is table row Σ_{b<a} out_b + j, its taps the
    // count c (1..=k) then k input indices (the first c used, each < the axis' input
    // extent), its weights k values of the compute type (f32 values for f32/f16/bf16).
    // interp 0 (nearest; k = 1, one tap per row): out[o] = x[Σ tap(a, o_a)·stride_a],
    // a copy of bits, any dtype. interp 1 (floats only): per output, taps nested with
    // the last axis innermost; on each axis acc = w0·v0, then acc = fma(w_t, v_t, acc)
    // in tap order, in the compute type; stored once. n_out = Π out extents.
    KernelSig {
        op: "resize",
        dtypes: ALL,
        args: "out: buf, x: buf, dims: buf<i64>, taps: buf<i64>, weights: buf<f64>, ndim, k, rows, n_out, interp",
    },
];

/// A checked `resize` layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResizeLayout {
    /// Input extents.
    pub in_dims: Vec<usize>,
    /// Output extents.
    pub out_dims: Vec<usize>,
    /// The first table row of each axis.
    pub row0: Vec<usize>,
}

/// The contents of a `resize` launch (args out, x, dims, taps, weights, ndim, k, rows,
/// n_out, interp): `dims` (2·ndim entries) non-negative, the output extents summing to
/// `rows` with product `n_out`, the input extents' product at most `x_len`; and, for a
/// non-empty output, every table row's count in `1..=k` (exactly 1 when `interp` is 0)
/// and its used indices inside the axis' input extent. `taps` holds at least
/// `(1 + k)·rows` entries (checked by [`super::check_args`]). The CPU kernel and the
/// emulator apply it before a launch.
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault (2 for a
/// negative or overflowing extent, 7 / 8 for `rows` / `n_out` other than the extents
/// say, 1 for an input larger than `x`, 3 for a bad count or index).
#[allow(clippy::too_many_arguments)]
pub fn resize_layout(
    kernel: &str,
    dims: &[i64],
    taps: &[i64],
    k: usize,
    rows: usize,
    n_out: usize,
    interp: bool,
    x_len: usize,
) -> Result<ResizeLayout> {
    let err = |index: usize, reason: String| {
        Err(Error::Argument {
            kernel: kernel.to_string(),
            index,
            reason,
        })
    };
    let ndim = dims.len() / 2;
    let mut ext = Vec::with_capacity(dims.len());
    for &d in dims {
        match usize::try_from(d) {
            Ok(v) => ext.push(v),
            Err(_) => return err(2, format!("negative extent in {dims:?}")),
        }
    }
    let (in_dims, out_dims) = (ext[..ndim].to_vec(), ext[ndim..2 * ndim].to_vec());
    let prod = |v: &[usize]| v.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let sum = out_dims.iter().try_fold(0usize, |a, &d| a.checked_add(d));
    let (Some(p_in), Some(p_out), Some(s_out)) = (prod(&in_dims), prod(&out_dims), sum) else {
        return err(2, format!("the extents {dims:?} overflow"));
    };
    if s_out != rows {
        return err(
            7,
            format!("rows {rows} is not the sum of the output extents {out_dims:?}"),
        );
    }
    if p_out != n_out {
        return err(
            8,
            format!("n_out {n_out} is not the product of the output extents {out_dims:?}"),
        );
    }
    let mut row0 = Vec::with_capacity(ndim);
    let mut r = 0;
    for &o in &out_dims {
        row0.push(r);
        r += o;
    }
    if n_out > 0 {
        if p_in > x_len {
            return err(
                1,
                format!("the input {in_dims:?} exceeds the buffer's {x_len} elements"),
            );
        }
        for (a, (&i, &o)) in in_dims.iter().zip(&out_dims).enumerate() {
            for j in 0..o {
                let row = &taps[(row0[a] + j) * (1 + k)..(row0[a] + j + 1) * (1 + k)];
                let c = row[0];
                let ok_count = if interp {
                    (1..=k as i64).contains(&c)
                } else {
                    c == 1
                };
                if !ok_count {
                    return err(
                        3,
                        format!("axis {a} output {j}: tap count {c} outside 1..={k}"),
                    );
                }
                if let Some(&t) = row[1..=c as usize]
                    .iter()
                    .find(|&&t| usize::try_from(t).map_or(true, |t| t >= i))
                {
                    return err(
                        3,
                        format!("axis {a} output {j}: tap {t} outside the input extent {i}"),
                    );
                }
            }
        }
    }
    Ok(ResizeLayout {
        in_dims,
        out_dims,
        row0,
    })
}

/// Checks the scalars of a `resize` launch that need no buffer contents: `ndim` in
/// `1..=MAX_RANK`, `k` in `1..=4`, `interp` 0 or 1 (1 for floats only, 0 with `k = 1`).
/// Returns `(ndim, k, rows, n_out, interp)`.
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault.
pub fn resize_scalars(kernel: &str, float: bool, ndim: u64, k: u64, interp: u64) -> Result<()> {
    let err = |index: usize, reason: String| {
        Err(Error::Argument {
            kernel: kernel.to_string(),
            index,
            reason,
        })
    };
    if ndim == 0 || ndim > MAX_RANK as u64 {
        return err(5, format!("ndim {ndim} outside 1..={MAX_RANK}"));
    }
    if !(1..=4).contains(&k) {
        return err(6, format!("k {k} outside 1..=4"));
    }
    match interp {
        0 if k == 1 => Ok(()),
        0 => err(6, format!("nearest (interp 0) takes k = 1, got {k}")),
        1 if float => Ok(()),
        1 => err(
            9,
            "interpolation (interp 1) is defined for floats only".into(),
        ),
        v => err(9, format!("interp must be 0 or 1, got {v}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_checked() {
        // [2] -> [3], k = 2: rows of (count, i0, i1).
        let taps = [1, 0, 0, 2, 0, 1, 1, 1, 0];
        let l = resize_layout("resize_f32", &[2, 3], &taps, 2, 3, 3, true, 2).unwrap();
        assert_eq!((l.in_dims, l.out_dims, l.row0), (vec![2], vec![3], vec![0]));
        for (dims, taps, rows, n_out, x_len, idx) in [
            (
                vec![2i64, 3],
                vec![1i64, 0, 0, 2, 0, 2, 1, 1, 0],
                3usize,
                3usize,
                2usize,
                3usize,
            ),
            (vec![2, 3], vec![1, 0, 0, 3, 0, 1, 1, 1, 0], 3, 3, 2, 3),
            (vec![2, 3], vec![0, 0, 0, 2, 0, 1, 1, 1, 0], 3, 3, 2, 3),
            (vec![2, 3], taps.to_vec(), 4, 3, 2, 7),
            (vec![2, 3], taps.to_vec(), 3, 2, 2, 8),
            (vec![2, 3], taps.to_vec(), 3, 3, 1, 1),
            (vec![-2, 3], taps.to_vec(), 3, 3, 2, 2),
            (vec![2, 3], vec![1, -1, 0, 2, 0, 1, 1, 1, 0], 3, 3, 2, 3),
        ] {
            let e = resize_layout("k", &dims, &taps, 2, rows, n_out, true, x_len).unwrap_err();
            assert!(
                matches!(e, Error::Argument { index, .. } if index == idx),
                "{e}"
            );
        }
        // Nearest takes exactly one tap per row.
        assert!(resize_layout("k", &[2, 1], &[2, 0], 1, 1, 1, false, 2).is_err());
        assert!(resize_layout("k", &[2, 1], &[1, 1], 1, 1, 1, false, 2).is_ok());
        // An empty output reads no table.
        assert!(resize_layout("k", &[2, 3, 0, 3], &[], 1, 3, 0, false, 0).is_ok());
    }

    #[test]
    fn scalars_are_checked() {
        assert!(resize_scalars("k", true, 2, 2, 1).is_ok());
        assert!(resize_scalars("k", false, 2, 1, 0).is_ok());
        for (float, ndim, k, interp) in [
            (true, 0, 2, 1),
            (true, 9, 2, 1),
            (true, 2, 5, 1),
            (true, 2, 2, 0),
            (false, 2, 2, 1),
            (true, 2, 2, 2),
        ] {
            assert!(resize_scalars("k", float, ndim, k, interp).is_err());
        }
    }
}
