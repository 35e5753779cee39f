//! Element-wise gather and scatter along an axis (ONNX GatherElements and
//! ScatterElements), with i64 indices, one per element; ONNX Pad, CumSum and TopK.

use gpukit_core::elements::ScatterReduction;
use gpukit_core::pad::PadMode;
use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;
use crate::index::check_indices;

/// Validates the extents shared by both ops: `idx` is i64 with `outer * nidx * inner`
/// elements; returns `(data_len, idx_len)`.
fn shapes(
    op: &str,
    idx: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
    nidx: usize,
) -> Result<(usize, usize)> {
    if idx.dtype() != DType::I64 {
        return Err(Error::DType {
            op: op.to_string(),
            expected: "i64 (indices)".into(),
            got: idx.dtype(),
        });
    }
    let data_len = check::product(op, "[outer, axis_len, inner]", &[outer, axis_len, inner])?;
    let idx_len = check::product(op, "[outer, nidx, inner]", &[outer, nidx, inner])?;
    check::len(op, "idx", idx, idx_len)?;
    Ok((data_len, idx_len))
}

/// ONNX GatherElements on `[outer, axis_len, inner]` data:
/// `out[o, g, i] = data[o, idx[o, g, i], i]`, `idx` and `out` `[outer, nidx, inner]`,
/// `idx` i64 (a negative index counts from the end of the axis), any dtype; bits are
/// copied. `out` must not overlap `data` or `idx`.
///
/// Errors: [`Error::IndexOutOfRange`] naming the first index outside
/// `[-axis_len, axis_len)` (nothing is written; checked even when nothing would be
/// read); [`Error::DType`] (indices not i64, `out` and `data` differ); [`Error::Length`];
/// [`Error::SizeOverflow`]; [`Error::InvalidArgument`] (overlap); [`Error::Absent`];
/// [`Error::DeviceMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn gather_elements(
    kit: &Kit,
    out: &Buf,
    data: &Buf,
    idx: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
    nidx: usize,
) -> Result<()> {
    let op = "gather_elements";
    check::on_kit(kit, op, &[(out, "out"), (data, "data"), (idx, "idx")])?;
    let d = check::same_dtype(op, &[(out, "out"), (data, "data")])?;
    let (data_len, n) = shapes(op, idx, outer, axis_len, inner, nidx)?;
    check::len(op, "data", data, data_len)?;
    check::len(op, "out", out, n)?;
    check::no_overlap(op, out, &[(data, "data"), (idx, "idx")], false)?;
    check_indices(kit, op, idx, axis_len)?;
    if n == 0 {
        return Ok(());
    }
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(n)?,
        &[
            out.into(),
            data.into(),
            idx.into(),
            s("outer", outer)?,
            s("axis_len", axis_len)?,
            s("inner", inner)?,
            s("nidx", nidx)?,
        ],
    )
}

/// ONNX ScatterElements on `[outer, axis_len, inner]` data: `y = data`, then for every
/// update in the row-major order of `upd` (`[outer, nidx, inner]`, like `idx`),
/// `y[o, r, i] = combine(reduction, y[o, r, i], upd[o, g, i])` with `r = idx[o, g, i]`
/// (negative from the end). That order is the defined order for duplicate targets on
/// every backend: under [`ScatterReduction::None`] the last update wins, the others fold
/// in that order with one rounding per step
/// ([`gpukit_core::elements::ScatterElem::combine`]). Any dtype. `y` may be exactly
/// `data` (in place) and must not overlap `idx` or `upd`.
///
/// Errors: as [`gather_elements`]; on [`Error::IndexOutOfRange`] nothing is written.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements(
    kit: &Kit,
    y: &Buf,
    data: &Buf,
    idx: &Buf,
    upd: &Buf,
    outer: usize,
    axis_len: usize,
    inner: usize,
    nidx: usize,
    reduction: ScatterReduction,
) -> Result<()> {
    let op = "scatter_elements";
    check::on_kit(
        kit,
        op,
        &[(y, "y"), (data, "data"), (idx, "idx"), (upd, "upd")],
    )?;
    let d = check::same_dtype(op, &[(y, "y"), (data, "data"), (upd, "upd")])?;
    let (data_len, n) = shapes(op, idx, outer, axis_len, inner, nidx)?;
    check::len(op, "data", data, data_len)?;
    check::len(op, "y", y, data_len)?;
    check::len(op, "upd", upd, n)?;
    check::no_overlap(op, y, &[(data, "data")], true)?;
    check::no_overlap(op, y, &[(idx, "idx"), (upd, "upd")], false)?;
    check_indices(kit, op, idx, axis_len)?;
    if !check::same_range(y, data) {
        y.copy_from(data)?;
    }
    if n == 0 {
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
            s("nidx", nidx)?,
            DevArg::I64(reduction.code()),
        ],
    )
}

/// The output dims of ONNX Pad on `dims` with `pads` (`[begin.., end..]`, negative
/// crops), or an error naming the axis.
///
/// Errors: [`Error::InvalidArgument`] when `pads` is not `2 * rank` long, an axis is
/// cropped below zero, or a mode other than constant pads an axis with nothing left to
/// read; [`Error::SizeOverflow`] when the output's size overflows.
pub fn pad_out_dims(dims: &[usize], pads: &[i64], mode: PadMode) -> Result<Vec<usize>> {
    let op = "pad";
    let r = dims.len();
    let bad = |reason: String| Error::InvalidArgument {
        op: op.to_string(),
        reason,
    };
    if pads.len() != 2 * r {
        return Err(bad(format!(
            "pads {pads:?} must hold 2 * rank = {} values for dims {dims:?}",
            2 * r
        )));
    }
    let mut out = Vec::with_capacity(r);
    for d in 0..r {
        let (b, e) = (pads[d] as i128, pads[r + d] as i128);
        let len = dims[d] as i128 + b.min(0) + e.min(0);
        if len < 0 {
            return Err(bad(format!(
                "axis {d}: pads ({b}, {e}) crop more than its {} elements",
                dims[d]
            )));
        }
        let o = len + b.max(0) + e.max(0);
        if mode != PadMode::Constant && len == 0 && o > 0 {
            return Err(bad(format!(
                "axis {d}: `{}` padding needs at least one element, the axis has none left",
                mode.name()
            )));
        }
        out.push(
            usize::try_from(o)
                .ok()
                .filter(|&v| v <= i64::MAX as usize / 2)
                .ok_or_else(|| Error::SizeOverflow {
                    what: format!("{op}: axis {d} of {dims:?} padded by ({b}, {e})"),
                })?,
        );
    }
    check::product(op, "the output", &out)?;
    Ok(out)
}

/// ONNX Pad: `out` is `x` (contiguous over `dims`, any dtype) cropped by the negative
/// and padded by the positive `pads` (`[begin_0 .. begin_{r-1}, end_0 .. end_{r-1}]`;
/// cropping first, as onnxruntime) under `mode` ([`PadMode`]: `Constant` writes
/// `value`'s one element, `Reflect` and `Wrap` repeat periodically like numpy for pads
/// longer than the axis, `Edge` repeats the end). Bits are copied. `out` holds the
/// product of [`pad_out_dims`] and overlaps neither `x` nor `value`.
///
/// Errors: those of [`pad_out_dims`]; [`Error::DType`] (`out`, `x`, `value` differ);
/// [`Error::Length`] (`x` not `dims`' product, `value` not one element, `out` not the
/// output's size); [`Error::InvalidArgument`] (overlap); [`Error::Absent`];
/// [`Error::DeviceMismatch`].
pub fn pad(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    value: &Buf,
    dims: &[usize],
    pads: &[i64],
    mode: PadMode,
) -> Result<()> {
    let op = "pad";
    check::on_kit(kit, op, &[(out, "out"), (x, "x"), (value, "value")])?;
    let d = check::same_dtype(op, &[(out, "out"), (x, "x"), (value, "value")])?;
    let od = pad_out_dims(dims, pads, mode)?;
    let n_in = check::product(op, "dims", dims)?;
    let n = check::product(op, "the output", &od)?;
    check::len(op, "x", x, n_in)?;
    check::len(op, "value", value, 1)?;
    check::len(op, "out", out, n)?;
    check::no_overlap(op, out, &[(x, "x"), (value, "value")], false)?;
    if n == 0 {
        return Ok(());
    }
    if dims.is_empty() {
        return out.copy_from(x);
    }
    let r = dims.len();
    let mut layout: Vec<i64> = Vec::with_capacity(5 * r);
    layout.extend(od.iter().map(|&v| v as i64));
    layout.extend(dims.iter().map(|&v| v as i64));
    layout.extend((0..r).map(|a| (-pads[a]).max(0)));
    layout.extend((0..r).map(|a| dims[a] as i64 + pads[a].min(0) + pads[r + a].min(0)));
    layout.extend((0..r).map(|a| pads[a].max(0)));
    let lb = kit.upload(&layout)?;
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(n)?,
        &[
            out.into(),
            x.into(),
            value.into(),
            (&lb).into(),
            s("ndim", r)?,
            DevArg::I64(mode.code()),
            s("n_out", n)?,
        ],
    )
}

/// ONNX CumSum on `[outer, len, inner]` data: along each `(o, i)` line, in ascending
/// position (descending when `reverse`), a running sum that starts as the line's first
/// element and adds each next one with one rounding in the compute type (f16 / bf16 in
/// f32, rounded once per output; integers wrap). The inclusive output at a position is
/// the sum up to and including it; with `exclusive` the sum before it (`+0` / `0` at the
/// line's first position). The chain per line is the contract's order on every backend
/// (no parallel scan), so results are bit-identical everywhere; lines run in parallel.
/// Any dtype. `y` must not overlap `x`.
///
/// Errors: [`Error::DType`] (`y` and `x` differ); [`Error::Length`];
/// [`Error::SizeOverflow`]; [`Error::InvalidArgument`] (overlap); [`Error::Absent`];
/// [`Error::DeviceMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn cumsum(
    kit: &Kit,
    y: &Buf,
    x: &Buf,
    outer: usize,
    len: usize,
    inner: usize,
    exclusive: bool,
    reverse: bool,
) -> Result<()> {
    let op = "cumsum";
    check::on_kit(kit, op, &[(y, "y"), (x, "x")])?;
    let d = check::same_dtype(op, &[(y, "y"), (x, "x")])?;
    let n = check::product(op, "[outer, len, inner]", &[outer, len, inner])?;
    check::len(op, "x", x, n)?;
    check::len(op, "y", y, n)?;
    check::no_overlap(op, y, &[(x, "x")], false)?;
    if n == 0 {
        return Ok(());
    }
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(outer * inner)?,
        &[
            y.into(),
            x.into(),
            s("outer", outer)?,
            s("len", len)?,
            s("inner", inner)?,
            DevArg::I64(exclusive as i64),
            DevArg::I64(reverse as i64),
        ],
    )
}

/// ONNX TopK (sorted) on `[outer, len, inner]` data: along each `(o, i)` line, the `k`
/// largest elements (smallest when `largest` is false) in order, best first, into
/// `values` (`[outer, k, inner]`, the input's dtype, bit copies) and their positions
/// along the axis into `indices` (`[outer, k, inner]`, i64). The order is a total one
/// ([`gpukit_core::topk::TopkElem::beats`]): NaN above every number (first when
/// `largest`, last otherwise, as ONNX's reference and `torch.topk`), `-0.0` equal to
/// `+0.0`, and equal values keep the lower position first (ONNX's rule), so the
/// result is one answer on every backend. Any dtype; `k <= len`
/// (`k = 0` is two empty outputs). Neither output may overlap the other or `x`.
///
/// Errors: [`Error::DType`] (`values` and `x` differ, or `indices` is not i64);
/// [`Error::InvalidArgument`] (`k > len`, or an overlap); [`Error::Length`];
/// [`Error::SizeOverflow`]; [`Error::Absent`]; [`Error::DeviceMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn topk(
    kit: &Kit,
    values: &Buf,
    indices: &Buf,
    x: &Buf,
    outer: usize,
    len: usize,
    inner: usize,
    k: usize,
    largest: bool,
) -> Result<()> {
    let op = "topk";
    check::on_kit(
        kit,
        op,
        &[(values, "values"), (indices, "indices"), (x, "x")],
    )?;
    let d = check::same_dtype(op, &[(values, "values"), (x, "x")])?;
    if indices.dtype() != DType::I64 {
        return Err(Error::DType {
            op: op.to_string(),
            expected: "i64 (indices)".into(),
            got: indices.dtype(),
        });
    }
    if k > len {
        return Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!("k = {k} exceeds the axis length {len}"),
        });
    }
    let n = check::product(op, "[outer, len, inner]", &[outer, len, inner])?;
    let nout = check::product(op, "[outer, k, inner]", &[outer, k, inner])?;
    check::len(op, "x", x, n)?;
    check::len(op, "values", values, nout)?;
    check::len(op, "indices", indices, nout)?;
    check::no_overlap(op, values, &[(x, "x"), (indices, "indices")], false)?;
    check::no_overlap(op, indices, &[(x, "x")], false)?;
    if nout == 0 {
        return Ok(());
    }
    let s = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(n)?,
        &[
            values.into(),
            indices.into(),
            x.into(),
            s("outer", outer)?,
            s("len", len)?,
            s("inner", inner)?,
            s("k", k)?,
            DevArg::I64(largest as i64),
        ],
    )
}
