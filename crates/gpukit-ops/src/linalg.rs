//! Matmul and batched matmul.

use gpukit_core::{Buf, DevArg, Error, Kit, Result};

use crate::check;

/// `c[m×n] = a[m×k] · b[k×n]` (row-major, contiguous, float dtypes): each `c[r][j]` is
/// the fused multiply-add chain over `t = 0..k` ascending from +0.0 in the compute
/// type, stored once. `c` must not overlap `a` or `b`.
///
/// Errors: [`Error::Length`] when a buffer does not hold its matrix, [`Error::DType`],
/// [`Error::SizeOverflow`], [`Error::InvalidArgument`] (overlap), [`Error::Absent`],
/// [`Error::DeviceMismatch`].
pub fn matmul(kit: &Kit, c: &Buf, a: &Buf, b: &Buf, m: usize, k: usize, n: usize) -> Result<()> {
    bmm_named(
        kit,
        "matmul",
        c,
        a,
        b,
        1,
        m,
        k,
        n,
        m.saturating_mul(k),
        k.saturating_mul(n),
    )
}

/// Batched matmul: for `i < batch`, `C_i[m×n] = A_i[m×k] · B_i[k×n]` with `A_i` starting
/// at element `i * a_bstride` of `a` and `B_i` at `i * b_bstride` of `b` (a stride of 0
/// broadcasts one matrix to every batch); `c` is contiguous `[batch, m, n]`. Same
/// accumulation order as [`matmul`].
///
/// Errors: those of [`matmul`]; [`Error::Length`] when the last batch's matrix passes
/// the end of `a` or `b`.
#[allow(clippy::too_many_arguments)]
pub fn bmm(
    kit: &Kit,
    c: &Buf,
    a: &Buf,
    b: &Buf,
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    a_bstride: usize,
    b_bstride: usize,
) -> Result<()> {
    bmm_named(kit, "bmm", c, a, b, batch, m, k, n, a_bstride, b_bstride)
}

/// Elements a strided batch of `count` matrices of `size` elements spans.
fn span(op: &str, what: &str, batch: usize, stride: usize, size: usize) -> Result<usize> {
    if batch == 0 || size == 0 {
        return Ok(0);
    }
    (batch - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(size))
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("{op}: {what} batch span"),
        })
}

#[allow(clippy::too_many_arguments)]
fn bmm_named(
    kit: &Kit,
    op: &str,
    c: &Buf,
    a: &Buf,
    b: &Buf,
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    a_bstride: usize,
    b_bstride: usize,
) -> Result<()> {
    let ops = [(c, "c"), (a, "a"), (b, "b")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let c_len = check::product(op, "[batch, m, n]", &[batch, m, n])?;
    let a_size = check::product(op, "[m, k]", &[m, k])?;
    let b_size = check::product(op, "[k, n]", &[k, n])?;
    check::len(op, "c", c, c_len)?;
    let a_need = span(op, "a", batch, a_bstride, a_size)?;
    let b_need = span(op, "b", batch, b_bstride, b_size)?;
    for (name, buf, need) in [("a", a, a_need), ("b", b, b_need)] {
        // matmul takes exact sizes; bmm allows larger buffers (strided views).
        let bad = if op == "matmul" {
            buf.len() != need
        } else {
            buf.len() < need
        };
        if bad {
            return Err(Error::Length {
                what: format!("{op}: {name} (batch {batch}, m {m}, k {k}, n {n})"),
                expected: need,
                got: buf.len(),
            });
        }
    }
    check::no_overlap(op, c, &[(a, "a"), (b, "b")], false)?;
    if c_len == 0 {
        return Ok(());
    }
    let s = |what, v| check::i64_of(op, what, v);
    kit.launch_builtin(
        &check::name("bmm", d),
        check::launch_1d(c_len)?,
        &[
            c.into(),
            a.into(),
            b.into(),
            DevArg::I64(s("batch", batch)?),
            DevArg::I64(s("m", m)?),
            DevArg::I64(s("k", k)?),
            DevArg::I64(s("n", n)?),
            DevArg::I64(s("a_bstride", a_bstride)?),
            DevArg::I64(s("b_bstride", b_bstride)?),
        ],
    )
}
