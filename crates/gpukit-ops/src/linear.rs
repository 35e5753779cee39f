//! The model-author entry points of the GEMM family: [`linear`] (a PyTorch
//! `nn.Linear` over any leading dims, on [`crate::gemm`]) and [`matmul_broadcast`]
//! (numpy `matmul` batch broadcasting on both operands, on [`crate::bmm`] by batch
//! strides, without copies).

use gpukit_core::{Buf, Error, Kit, Result};

use crate::check;
use crate::conv::{GemmParams, gemm};
use crate::linalg::bmm;

fn shape_err(op: &str, detail: String) -> Error {
    Error::Shape {
        op: op.to_string(),
        detail,
    }
}

/// The output dims of [`linear`]: `x_dims` with its last dim replaced by
/// `w_dims[0]` (out features).
///
/// Errors: [`Error::Shape`] when `x_dims` is empty (rank 0) or its last dim differs
/// from `w_dims[1]` (in features); [`Error::SizeOverflow`].
pub fn linear_out_dims(x_dims: &[usize], w_dims: [usize; 2]) -> Result<Vec<usize>> {
    let op = "linear";
    let Some((&k, lead)) = x_dims.split_last() else {
        return Err(shape_err(
            op,
            format!("x must have rank >= 1 (got shape {x_dims:?}), weight {w_dims:?}"),
        ));
    };
    if w_dims[1] != k {
        return Err(shape_err(
            op,
            format!(
                "x {x_dims:?}, weight {w_dims:?}: the weight must be [out, in] with in = {k} \
                 (axis -1 of x), PyTorch's nn.Linear layout"
            ),
        ));
    }
    let mut out = lead.to_vec();
    out.push(w_dims[0]);
    check::product(op, "output", &out)?;
    Ok(out)
}

/// A linear (dense, fully connected) layer with PyTorch's weight layout:
/// `y[..., o] = Σ_i x[..., i] · w[o][i] + bias[o]`, i.e. `y = x · wᵀ + bias`, for `x`
/// of shape `x_dims` (`[..., in]`, any leading dims, contiguous), `w` `[out, in]`
/// (`w_dims`, contiguous, an `nn.Linear.weight`), `bias` `[out]` or `None`, and `y`
/// contiguous `[..., out]` (see [`linear_out_dims`]).
///
/// This is [`gemm`] with `m` = the product of the leading dims, `trans_b`, no C,
/// `alpha = 1`: each output is one fma chain over `i` ascending from +0.0, then
/// `1·acc`, then `+ bias[o]`, stored once: bit-identical to that gemm call.
///
/// Errors: [`Error::Shape`] when the dims do not fit (see [`linear_out_dims`]);
/// [`Error::Length`] when a buffer does not hold its shape; those of [`gemm`]
/// ([`Error::DType`], [`Error::Absent`], [`Error::DeviceMismatch`],
/// [`Error::InvalidArgument`] for an output overlapping an input).
#[doc(alias = "dense")]
#[doc(alias = "fully_connected")]
#[doc(alias = "Linear")]
pub fn linear(
    kit: &Kit,
    y: &Buf,
    x: &Buf,
    x_dims: &[usize],
    w: &Buf,
    w_dims: [usize; 2],
    bias: Option<&Buf>,
) -> Result<()> {
    let op = "linear";
    let out = linear_out_dims(x_dims, w_dims)?;
    let (n, k) = (w_dims[0], w_dims[1]);
    let m = check::product(op, "leading dims of x", &x_dims[..x_dims.len() - 1])?;
    check::len(op, &format!("x {x_dims:?}"), x, check::numel(x_dims)?)?;
    check::len(op, &format!("weight {w_dims:?}"), w, check::numel(&w_dims)?)?;
    check::len(op, &format!("y {out:?}"), y, check::numel(&out)?)?;
    if let Some(b) = bias {
        check::len(op, &format!("bias (want [{n}])"), b, n)?;
    }
    let p = GemmParams {
        trans_b: true,
        ..GemmParams::new(m, k, n)
    };
    gemm(kit, y, x, w, None, bias, &p)
}

/// The output dims of [`matmul_broadcast`]: `broadcast(a batch, b batch) + [m, n]`
/// for `a_dims = [..., m, k]` and `b_dims = [..., k, n]` (numpy's batch rules: dims
/// aligned from the right, each pair equal or one of them 1).
///
/// Errors: [`Error::Shape`] for an operand of rank < 2 (1-D operands are the tensor
/// API's business), inner dims that differ, or batch dims that do not broadcast
/// (naming both shapes and the axis); [`Error::SizeOverflow`].
pub fn matmul_broadcast_dims(a_dims: &[usize], b_dims: &[usize]) -> Result<Vec<usize>> {
    let op = "matmul_broadcast";
    let (ra, rb) = (a_dims.len(), b_dims.len());
    if ra < 2 || rb < 2 {
        return Err(shape_err(
            op,
            format!("{a_dims:?} @ {b_dims:?}: both operands must have rank >= 2"),
        ));
    }
    let (m, k) = (a_dims[ra - 2], a_dims[ra - 1]);
    let (k2, n) = (b_dims[rb - 2], b_dims[rb - 1]);
    if k != k2 {
        return Err(shape_err(
            op,
            format!(
                "{a_dims:?} @ {b_dims:?}: axis -1 of the left ({k}) differs from axis -2 of \
                 the right ({k2})"
            ),
        ));
    }
    let (ba, bb) = (&a_dims[..ra - 2], &b_dims[..rb - 2]);
    let r = ba.len().max(bb.len());
    let mut out = Vec::with_capacity(r + 2);
    for i in 0..r {
        let da = if i + ba.len() >= r {
            ba[i + ba.len() - r]
        } else {
            1
        };
        let db = if i + bb.len() >= r {
            bb[i + bb.len() - r]
        } else {
            1
        };
        let d = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(shape_err(
                    op,
                    format!(
                        "{a_dims:?} @ {b_dims:?}: batch axis {} ({da} vs {db}) does not \
                         broadcast",
                        i as i64 - r as i64 - 2
                    ),
                ));
            }
        };
        out.push(d);
    }
    out.extend([m, n]);
    check::product(op, "output", &out)?;
    Ok(out)
}

/// One batch axis of the output: its size and the element strides of A and B along it
/// (0 where that operand is broadcast).
#[derive(Clone, Copy, Debug)]
struct BatchAxis {
    size: usize,
    sa: usize,
    sb: usize,
}

/// The output's batch axes with each operand's strides, axes of size 1 dropped and
/// neighbours merged where both operands step evenly across them.
fn batch_axes(
    batch: &[usize],
    a_batch: &[usize],
    b_batch: &[usize],
    mk: usize,
    kn: usize,
) -> Vec<BatchAxis> {
    // Contiguous strides of an operand's own batch dims, aligned to the output's.
    let strides = |own: &[usize], per: usize| -> Vec<usize> {
        let r = batch.len();
        let mut s = vec![0; r];
        let mut acc = per;
        for (i, &d) in own.iter().enumerate().rev() {
            s[r - own.len() + i] = if d == 1 { 0 } else { acc };
            acc = acc.saturating_mul(d);
        }
        s
    };
    let (sa, sb) = (strides(a_batch, mk), strides(b_batch, kn));
    let mut axes: Vec<BatchAxis> = Vec::new();
    for (i, &size) in batch.iter().enumerate() {
        if size == 1 {
            continue;
        }
        let ax = BatchAxis {
            size,
            sa: sa[i],
            sb: sb[i],
        };
        match axes.last_mut() {
            // The previous axis steps by exactly this one's full extent in both.
            Some(p) if p.sa == ax.sa * size && p.sb == ax.sb * size => {
                p.size *= size;
                p.sa = ax.sa;
                p.sb = ax.sb;
            }
            _ => axes.push(ax),
        }
    }
    axes
}

/// numpy `matmul` on operands of rank >= 2 with batch broadcasting on both sides:
/// `c = a @ b` for `a` `[..., m, k]` (`a_dims`), `b` `[..., k, n]` (`b_dims`), both
/// contiguous, and `c` contiguous with the dims of [`matmul_broadcast_dims`] (e.g.
/// `[b1, 1, m, k] @ [1, b2, k, n]` gives `[b1, b2, m, n]`; a rank-2 operand is
/// shared by every batch). A broadcast batch dim is a batch stride of 0: nothing is
/// copied or expanded. Runs [`bmm`] over the innermost merged batch axis (one launch
/// when the batch dims merge into one, as in `[b, m, k] @ [k, n]`), so every output
/// is [`bmm`]'s chain: bit-identical to [`crate::matmul`] of the same two matrices.
///
/// Errors: those of [`matmul_broadcast_dims`]; [`Error::Length`] when a buffer does
/// not hold its shape; [`Error::InvalidArgument`] when `c` overlaps `a` or `b`; those
/// of [`bmm`] ([`Error::DType`], [`Error::Absent`], [`Error::DeviceMismatch`]).
pub fn matmul_broadcast(
    kit: &Kit,
    c: &Buf,
    a: &Buf,
    a_dims: &[usize],
    b: &Buf,
    b_dims: &[usize],
) -> Result<()> {
    let op = "matmul_broadcast";
    let out = matmul_broadcast_dims(a_dims, b_dims)?;
    let ops = [(c, "c"), (a, "a"), (b, "b")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    check::len(op, &format!("a {a_dims:?}"), a, check::numel(a_dims)?)?;
    check::len(op, &format!("b {b_dims:?}"), b, check::numel(b_dims)?)?;
    check::len(op, &format!("c {out:?}"), c, check::numel(&out)?)?;
    check::no_overlap(op, c, &[(a, "a"), (b, "b")], false)?;
    let (ra, rb, r) = (a_dims.len(), b_dims.len(), out.len());
    let (m, k, n) = (a_dims[ra - 2], a_dims[ra - 1], b_dims[rb - 1]);
    let (mk, kn, mn) = (m * k, k * n, m * n);
    if c.is_empty() {
        return Ok(());
    }
    let axes = batch_axes(&out[..r - 2], &a_dims[..ra - 2], &b_dims[..rb - 2], mk, kn);
    let Some((inner, outer)) = axes.split_last() else {
        // One product (every batch dim is 1).
        return bmm(kit, c, a, b, 1, m, k, n, 0, 0);
    };
    // The outer axes, walked as an odometer: one bmm launch per outer index.
    let count: usize = outer.iter().map(|x| x.size).product();
    let mut idx = vec![0usize; outer.len()];
    for i in 0..count {
        let (oa, ob) = outer.iter().zip(&idx).fold((0, 0), |(oa, ob), (ax, &j)| {
            (oa + j * ax.sa, ob + j * ax.sb)
        });
        let oc = i * inner.size * mn;
        bmm(
            kit,
            &c.view(oc, inner.size * mn)?,
            &a.view(oa, a.len() - oa)?,
            &b.view(ob, b.len() - ob)?,
            inner.size,
            m,
            k,
            n,
            inner.sa,
            inner.sb,
        )?;
        for (j, ax) in idx.iter_mut().zip(outer).rev() {
            *j += 1;
            if *j < ax.size {
                break;
            }
            *j = 0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_axes_merge_and_broadcast() {
        // [2, 3] @ [2, 3]: one axis of 6, both stepping by their matrix size.
        let ax = batch_axes(&[2, 3], &[2, 3], &[2, 3], 4, 5);
        assert_eq!(ax.len(), 1);
        assert_eq!((ax[0].size, ax[0].sa, ax[0].sb), (6, 4, 5));
        // [2, 1] @ [1, 3]: two axes, a broadcast along the second, b along the first.
        let ax = batch_axes(&[2, 3], &[2, 1], &[1, 3], 4, 5);
        assert_eq!(ax.len(), 2);
        assert_eq!((ax[0].size, ax[0].sa, ax[0].sb), (2, 4, 0));
        assert_eq!((ax[1].size, ax[1].sa, ax[1].sb), (3, 0, 5));
        // A rank-2 right operand: stride 0 throughout, still one axis.
        let ax = batch_axes(&[2, 3], &[2, 3], &[], 4, 5);
        assert_eq!(ax.len(), 1);
        assert_eq!((ax[0].size, ax[0].sa, ax[0].sb), (6, 4, 0));
    }

    #[test]
    fn dims_follow_numpy() {
        assert_eq!(
            matmul_broadcast_dims(&[4, 1, 2, 3], &[1, 5, 3, 6]).unwrap(),
            [4, 5, 2, 6]
        );
        assert_eq!(
            matmul_broadcast_dims(&[2, 3], &[7, 3, 1]).unwrap(),
            [7, 2, 1]
        );
        assert!(matmul_broadcast_dims(&[2, 2, 3], &[3, 3, 1]).is_err());
        assert!(matmul_broadcast_dims(&[2, 3], &[4, 1]).is_err());
        assert!(matmul_broadcast_dims(&[3], &[3, 1]).is_err());
        assert_eq!(linear_out_dims(&[2, 5, 3], [4, 3]).unwrap(), [2, 5, 4]);
        assert!(linear_out_dims(&[], [4, 3]).is_err());
        assert!(linear_out_dims(&[2, 5], [4, 3]).is_err());
    }
}
