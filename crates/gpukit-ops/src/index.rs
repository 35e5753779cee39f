//! Gather and scatter along an axis, with i64 indices.

use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;

/// Checks every index of `idx` lies in `[-axis_len, axis_len)` on the device; reports
/// the first that does not.
pub(crate) fn check_indices(kit: &Kit, op: &str, idx: &Buf, axis_len: usize) -> Result<()> {
    if idx.is_empty() {
        return Ok(());
    }
    // The kernel always writes the result; -1 ("none bad") up front is what a census kit,
    // which runs no kernel, then reads back.
    let result = kit.upload(&[-1i64])?;
    kit.launch_builtin(
        "check_index_i64",
        check::launch_1d(idx.len())?,
        &[
            idx.into(),
            DevArg::I64(check::i64_of(op, "n", idx.len())?),
            DevArg::I64(check::i64_of(op, "axis_len", axis_len)?),
            (&result).into(),
        ],
    )?;
    let first_bad = result.download::<i64>()?[0];
    if first_bad < 0 {
        return Ok(());
    }
    let index = idx.view(first_bad as usize, 1)?.download::<i64>()?[0];
    Err(Error::IndexOutOfRange {
        op: op.to_string(),
        index,
        axis_len,
    })
}

fn index_shapes(
    op: &str,
    idx: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
) -> Result<(usize, usize)> {
    if idx.dtype() != DType::I64 {
        return Err(Error::DType {
            op: op.to_string(),
            expected: "i64 (indices)".into(),
            got: idx.dtype(),
        });
    }
    let data_len = check::product(op, "[outer, axis_len, inner]", &[outer, axis_len, inner])?;
    let upd_len = check::product(op, "[outer, nidx, inner]", &[outer, idx.len(), inner])?;
    Ok((data_len, upd_len))
}

/// `out[o, g, i] = data[o, idx[g], i]`: `data` viewed as `[outer, axis_len, inner]`,
/// `idx` an i64 buffer of `nidx` indices (negative counts from the end), `out` as
/// `[outer, nidx, inner]`, any dtype. `out` must not overlap `data` or `idx`.
///
/// Errors: [`Error::IndexOutOfRange`] naming the first bad index (nothing is written),
/// [`Error::DType`] (indices not i64, `out` and `data` differ), [`Error::Length`],
/// [`Error::SizeOverflow`], [`Error::InvalidArgument`] (overlap), [`Error::Absent`],
/// [`Error::DeviceMismatch`].
pub fn gather(
    kit: &Kit,
    out: &Buf,
    data: &Buf,
    idx: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
) -> Result<()> {
    let op = "gather";
    check::on_kit(kit, op, &[(out, "out"), (data, "data"), (idx, "idx")])?;
    let d = check::same_dtype(op, &[(out, "out"), (data, "data")])?;
    let (data_len, out_len) = index_shapes(op, idx, outer, axis_len, inner)?;
    check::len(op, "data", data, data_len)?;
    check::len(op, "out", out, out_len)?;
    check::no_overlap(op, out, &[(data, "data"), (idx, "idx")], false)?;
    // Indices are checked even when nothing would be read: a bad index is an error
    // whatever the other extents are (the reference does the same).
    check_indices(kit, op, idx, axis_len)?;
    if out_len == 0 {
        return Ok(());
    }
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(out_len)?,
        &[
            out.into(),
            data.into(),
            idx.into(),
            s("outer", outer)?,
            s("axis_len", axis_len)?,
            s("inner", inner)?,
            s("nidx", idx.len())?,
        ],
    )
}

/// `y = data`, then `y[o, idx[g], i] = upd[o, g, i]`: `data` and `y` viewed as
/// `[outer, axis_len, inner]`, `upd` as `[outer, nidx, inner]`, any dtype. With
/// duplicate indices the largest `g` wins (ONNX ScatterElements leaves this undefined;
/// gpukit defines it so every backend agrees). `y` may be exactly `data` (in place) and
/// must not overlap `idx` or `upd`.
///
/// Errors: as [`gather`]; on [`Error::IndexOutOfRange`] nothing is written.
#[allow(clippy::too_many_arguments)]
pub fn scatter(
    kit: &Kit,
    y: &Buf,
    data: &Buf,
    idx: &Buf,
    upd: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
) -> Result<()> {
    let op = "scatter";
    check::on_kit(
        kit,
        op,
        &[(y, "y"), (data, "data"), (idx, "idx"), (upd, "upd")],
    )?;
    let d = check::same_dtype(op, &[(y, "y"), (data, "data"), (upd, "upd")])?;
    let (data_len, upd_len) = index_shapes(op, idx, outer, axis_len, inner)?;
    check::len(op, "data", data, data_len)?;
    check::len(op, "y", y, data_len)?;
    check::len(op, "upd", upd, upd_len)?;
    check::no_overlap(op, y, &[(data, "data")], true)?;
    check::no_overlap(op, y, &[(idx, "idx"), (upd, "upd")], false)?;
    check_indices(kit, op, idx, axis_len)?;
    if !check::same_range(y, data) {
        y.copy_from(data)?;
    }
    if upd_len == 0 {
        return Ok(());
    }
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(outer.saturating_mul(inner))?,
        &[
            y.into(),
            idx.into(),
            upd.into(),
            s("outer", outer)?,
            s("axis_len", axis_len)?,
            s("inner", inner)?,
            s("nidx", idx.len())?,
        ],
    )
}
