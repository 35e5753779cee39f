//! The neural-network family: the `movement` group.
//!
//! Concat (and its primitive, copy into an axis slot), slice along an axis, N-D
//! permute, expand (ONNX Expand with a resolved output shape, and the last-axis form),
//! bilinear and nearest resize (NCHW), and the EOS gather. Everything but bilinear
//! resize is a pure copy of bits (every dtype, NaN payloads and -0.0 preserved);
//! docs/ops/movement.md has the definitions and bilinear's order of operations.
//!
//! Outputs never overlap inputs (no in-place form): every op returns
//! [`Error::InvalidArgument`] for an overlap, before anything is written.

use gpukit_core::abi::movement::MAX_RANK;
use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;

fn shape_err<T>(op: &str, detail: String) -> Result<T> {
    Err(Error::Shape {
        op: op.to_string(),
        detail,
    })
}

fn invalid<T>(op: &str, reason: String) -> Result<T> {
    Err(Error::InvalidArgument {
        op: op.to_string(),
        reason,
    })
}

/// Where one input goes in a larger output along an axis (see [`copy_into_axis`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisSlot {
    /// Product of the dims before the axis.
    pub outer: usize,
    /// The source's axis length.
    pub src_axis: usize,
    /// Product of the dims after the axis.
    pub inner: usize,
    /// The destination's axis length.
    pub dst_axis: usize,
    /// First position of the slot in the destination's axis.
    pub offset: usize,
}

/// Validates a slot against `dst` and `src` (lengths, fit); returns the source length.
fn check_slot(op: &str, dst: &Buf, src: &Buf, s: &AxisSlot, name: &str) -> Result<usize> {
    let src_len = check::product(
        op,
        "[outer, src_axis, inner]",
        &[s.outer, s.src_axis, s.inner],
    )?;
    let dst_len = check::product(
        op,
        "[outer, dst_axis, inner]",
        &[s.outer, s.dst_axis, s.inner],
    )?;
    check::len(op, name, src, src_len)?;
    check::len(op, "dst", dst, dst_len)?;
    match s.offset.checked_add(s.src_axis) {
        Some(end) if end <= s.dst_axis => Ok(src_len),
        _ => shape_err(
            op,
            format!(
                "slot {}..{}+{} does not fit in an axis of {}",
                s.offset, s.offset, s.src_axis, s.dst_axis
            ),
        ),
    }
}

fn launch_slot(kit: &Kit, op: &str, d: DType, dst: &Buf, src: &Buf, s: &AxisSlot) -> Result<()> {
    let i = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name("copy_axis", d),
        check::launch_1d(src.len())?,
        &[
            dst.into(),
            src.into(),
            i("outer", s.outer)?,
            i("src_axis", s.src_axis)?,
            i("inner", s.inner)?,
            i("dst_axis", s.dst_axis)?,
            i("offset", s.offset)?,
        ],
    )
}

/// Copies `src` into a slot of `dst` along an axis (the concat primitive):
/// `src` viewed as `[outer, src_axis, inner]`, `dst` as `[outer, dst_axis, inner]`,
/// `dst[o, offset + a, i] = src[o, a, i]`; the rest of `dst` is untouched. Any dtype;
/// bits are copied exactly.
///
/// Errors: [`Error::Absent`], [`Error::DeviceMismatch`], [`Error::DType`] (dtypes
/// differ), [`Error::SizeOverflow`], [`Error::Length`] (a buffer does not match its
/// shape), [`Error::Shape`] (the slot runs past `dst_axis`),
/// [`Error::InvalidArgument`] (`dst` overlaps `src`).
pub fn copy_into_axis(kit: &Kit, dst: &Buf, src: &Buf, slot: AxisSlot) -> Result<()> {
    let op = "copy_into_axis";
    let ops = [(dst, "dst"), (src, "src")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    let n = check_slot(op, dst, src, &slot, "src")?;
    check::no_overlap(op, dst, &[(src, "src")], false)?;
    if n == 0 {
        return Ok(());
    }
    launch_slot(kit, op, d, dst, src, &slot)
}

/// Concatenation along an axis (ONNX Concat): input `k` viewed as
/// `[outer, axis_lens[k], inner]`, `out` as `[outer, Σ axis_lens, inner]`, the inputs
/// one after another along the axis. Any dtype; bits are copied exactly. Inputs with an
/// empty axis contribute nothing. Everything is validated before the first copy.
///
/// Errors: [`Error::InvalidArgument`] (no inputs, or `out` overlaps an input),
/// [`Error::Shape`] (`inputs` and `axis_lens` differ in count), [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`] (dtypes differ),
/// [`Error::SizeOverflow`], [`Error::Length`].
pub fn concat(
    kit: &Kit,
    out: &Buf,
    inputs: &[&Buf],
    outer: usize,
    axis_lens: &[usize],
    inner: usize,
) -> Result<()> {
    let op = "concat";
    if inputs.is_empty() {
        return invalid(op, "concat needs at least one input".into());
    }
    if inputs.len() != axis_lens.len() {
        return shape_err(
            op,
            format!(
                "{} inputs but {} axis lengths",
                inputs.len(),
                axis_lens.len()
            ),
        );
    }
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("inputs[{k}]")).collect();
    let mut ops: Vec<(&Buf, &str)> = vec![(out, "out")];
    ops.extend(inputs.iter().zip(&names).map(|(b, n)| (*b, n.as_str())));
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    let total = axis_lens.iter().try_fold(0usize, |a, &l| a.checked_add(l));
    let Some(total) = total else {
        return Err(Error::SizeOverflow {
            what: format!("{op}: sum of axis lengths {axis_lens:?}"),
        });
    };
    let mut slots = Vec::with_capacity(inputs.len());
    let mut offset = 0;
    for (k, (x, &len)) in inputs.iter().zip(axis_lens).enumerate() {
        let slot = AxisSlot {
            outer,
            src_axis: len,
            inner,
            dst_axis: total,
            offset,
        };
        let n = check_slot(op, out, x, &slot, &names[k])?;
        slots.push((n, slot));
        offset += len;
    }
    check::no_overlap(op, out, &ops[1..], false)?;
    for (x, (n, slot)) in inputs.iter().zip(&slots) {
        if *n > 0 {
            launch_slot(kit, op, d, out, x, slot)?;
        }
    }
    Ok(())
}

/// Launches the strided copy: `out` contiguous over `dims`,
/// `out[c] = x[offset + Σ c_d·strides_d]`. The caller has validated everything.
fn strided_copy(
    kit: &Kit,
    op: &str,
    out: &Buf,
    x: &Buf,
    dims: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<()> {
    let n = out.len();
    if n == 0 {
        return Ok(());
    }
    // A 0-D tensor is a one-dimensional one of one element.
    let (dims, strides) = if dims.is_empty() {
        (vec![1usize], vec![0usize])
    } else {
        (dims.to_vec(), strides.to_vec())
    };
    let conv = |v: &[usize]| -> Result<Vec<i64>> {
        v.iter()
            .map(|&e| check::i64_of(op, "shape entry", e))
            .collect()
    };
    let (bd, bs) = (kit.upload(&conv(&dims)?)?, kit.upload(&conv(&strides)?)?);
    kit.launch_builtin(
        &check::name("strided_copy", out.dtype()),
        check::launch_1d(n)?,
        &[
            out.into(),
            x.into(),
            (&bd).into(),
            (&bs).into(),
            DevArg::I64(dims.len() as i64),
            DevArg::I64(check::i64_of(op, "offset", offset)?),
            DevArg::I64(check::i64_of(op, "n_out", n)?),
        ],
    )
}

/// Row-major contiguous strides of `dims` (the caller has checked the product).
fn contiguous(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![0; dims.len()];
    let mut acc = 1usize;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc = acc.saturating_mul(dims[d]);
    }
    s
}

/// A slice along an axis (see [`slice()`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisSlice {
    /// Product of the dims before the axis.
    pub outer: usize,
    /// The input's axis length.
    pub axis_len: usize,
    /// Product of the dims after the axis.
    pub inner: usize,
    /// First element; negative counts from the end (`start + axis_len`, as ONNX Slice).
    pub start: i64,
    /// Number of elements taken (the output's axis length).
    pub len: usize,
    /// Distance between taken elements, at least 1.
    pub step: usize,
}

/// Slice along an axis: `x` viewed as `[outer, axis_len, inner]`, `out` as
/// `[outer, len, inner]`, `out[o, a, i] = x[o, start + a·step, i]`. A negative `start`
/// counts from the end as in ONNX Slice; unlike ONNX nothing is clamped: the resolved
/// start must lie in `[0, axis_len]` and the last element read must be inside the axis.
/// Any dtype; bits are copied exactly.
///
/// Errors: [`Error::InvalidArgument`] (`step == 0`, or `out` overlaps `x`),
/// [`Error::IndexOutOfRange`] (resolved start outside `[0, axis_len]`),
/// [`Error::Shape`] (the slice runs past the end of the axis), [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`], [`Error::SizeOverflow`],
/// [`Error::Length`].
pub fn slice(kit: &Kit, out: &Buf, x: &Buf, s: AxisSlice) -> Result<()> {
    let op = "slice";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    check::same_dtype(op, &ops)?;
    if s.step == 0 {
        return invalid(op, "step must be at least 1".into());
    }
    let in_len = check::product(
        op,
        "[outer, axis_len, inner]",
        &[s.outer, s.axis_len, s.inner],
    )?;
    let out_len = check::product(op, "[outer, len, inner]", &[s.outer, s.len, s.inner])?;
    check::len(op, "x", x, in_len)?;
    check::len(op, "out", out, out_len)?;
    let axis = check::i64_of(op, "axis_len", s.axis_len)?;
    let start = if s.start < 0 {
        s.start.checked_add(axis)
    } else {
        Some(s.start)
    };
    let start = match start {
        Some(v) if (0..=axis).contains(&v) => v as usize,
        _ => {
            return Err(Error::IndexOutOfRange {
                op: op.to_string(),
                index: s.start,
                axis_len: s.axis_len,
            });
        }
    };
    if s.len > 0 {
        let last = (s.len - 1)
            .checked_mul(s.step)
            .and_then(|v| v.checked_add(start));
        if !matches!(last, Some(l) if l < s.axis_len) {
            return shape_err(
                op,
                format!(
                    "{} elements from {start} by {} run past an axis of {}",
                    s.len, s.step, s.axis_len
                ),
            );
        }
    }
    check::no_overlap(op, out, &[(x, "x")], false)?;
    // Only reached with a non-empty output, so every product below is at most an
    // element index of x (a single taken element makes the step irrelevant).
    if out_len == 0 {
        return Ok(());
    }
    let dims = [s.outer, s.len, s.inner];
    let step = if s.len > 1 { s.step * s.inner } else { 0 };
    let strides = [s.axis_len * s.inner, step, 1];
    strided_copy(kit, op, out, x, &dims, &strides, start * s.inner)
}

/// Checks a rank against [`MAX_RANK`].
fn check_rank(op: &str, rank: usize) -> Result<()> {
    if rank > MAX_RANK {
        return invalid(op, format!("rank {rank} exceeds the maximum of {MAX_RANK}"));
    }
    Ok(())
}

/// N-D transpose (ONNX Transpose) of up to [`MAX_RANK`] axes: `x` has `in_dims`, output
/// axis `d` is input axis `perm[d]` (`out` has dims `in_dims[perm[d]]`). A 0-D tensor
/// (empty dims) is one element. Any dtype; bits are copied exactly.
///
/// Errors: [`Error::Shape`] (`perm` and `in_dims` differ in length),
/// [`Error::InvalidArgument`] (rank above [`MAX_RANK`], `perm` repeats an axis or
/// names one out of range, `out` overlaps `x`), [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`], [`Error::SizeOverflow`],
/// [`Error::Length`].
pub fn permute(kit: &Kit, out: &Buf, x: &Buf, in_dims: &[usize], perm: &[usize]) -> Result<()> {
    let op = "permute";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    check::same_dtype(op, &ops)?;
    if perm.len() != in_dims.len() {
        return shape_err(
            op,
            format!(
                "perm {perm:?} has {} entries for {} dims",
                perm.len(),
                in_dims.len()
            ),
        );
    }
    check_rank(op, in_dims.len())?;
    let mut seen = [false; MAX_RANK];
    for &p in perm {
        if p >= perm.len() || seen[p] {
            return invalid(
                op,
                format!("{perm:?} is not a permutation of 0..{}", perm.len()),
            );
        }
        seen[p] = true;
    }
    let n = check::product(op, "in_dims", in_dims)?;
    check::len(op, "x", x, n)?;
    check::len(op, "out", out, n)?;
    check::no_overlap(op, out, &[(x, "x")], false)?;
    let in_strides = contiguous(in_dims);
    let dims: Vec<usize> = perm.iter().map(|&p| in_dims[p]).collect();
    let strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    strided_copy(kit, op, out, x, &dims, &strides, 0)
}

/// Strided gather into a contiguous buffer (what a tensor view's `contiguous()` does):
/// `out` is row-major over `dims`, and `out[c] = x[offset + Σ_d c_d·strides_d]` for
/// every coordinate `c`. Strides are in elements and may be 0 (broadcast) or overlap;
/// up to [`MAX_RANK`] axes (0 axes: one element at `offset`). Any dtype; bits are
/// copied exactly.
///
/// Errors: [`Error::Shape`] (`dims` and `strides` differ in length),
/// [`Error::InvalidArgument`] (rank above [`MAX_RANK`], `out` overlaps `x`),
/// [`Error::OutOfBounds`] (the last element read lies outside `x`),
/// [`Error::Absent`], [`Error::DeviceMismatch`], [`Error::DType`],
/// [`Error::SizeOverflow`], [`Error::Length`].
pub fn as_strided(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    dims: &[usize],
    strides: &[usize],
    offset: usize,
) -> Result<()> {
    let op = "as_strided";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    check::same_dtype(op, &ops)?;
    if dims.len() != strides.len() {
        return shape_err(
            op,
            format!("dims {dims:?} and strides {strides:?} differ in length"),
        );
    }
    check_rank(op, dims.len())?;
    let n = check::product(op, "dims", dims)?;
    check::len(op, "out", out, n)?;
    if n == 0 {
        return Ok(());
    }
    // The last element read: offset + Σ (dim - 1)·stride, checked.
    let last = dims.iter().zip(strides).try_fold(offset, |acc, (&d, &s)| {
        (d - 1).checked_mul(s)?.checked_add(acc)
    });
    match last {
        Some(l) if l < x.len() => {}
        _ => {
            return Err(Error::OutOfBounds {
                what: format!("{op}: x read through dims {dims:?}, strides {strides:?}"),
                offset,
                len: last.map_or(usize::MAX, |l| l - offset + 1),
                capacity: x.len(),
            });
        }
    }
    check::no_overlap(op, out, &[(x, "x")], false)?;
    strided_copy(kit, op, out, x, dims, strides, offset)
}

/// Broadcast copy (ONNX Expand, with the output shape already resolved, i.e.
/// `out_dims = broadcast(x's shape, shape)`): `in_dims` align to the right of
/// `out_dims` (missing leading axes count as 1); each input axis equals the output's or
/// is 1 (then repeated). Up to [`MAX_RANK`] output axes. Any dtype; bits are copied
/// exactly.
///
/// Errors: [`Error::Shape`] (more input than output axes, or an axis that neither
/// matches nor is 1), [`Error::InvalidArgument`] (rank above [`MAX_RANK`], `out`
/// overlaps `x`), [`Error::Absent`], [`Error::DeviceMismatch`], [`Error::DType`],
/// [`Error::SizeOverflow`], [`Error::Length`].
pub fn expand(kit: &Kit, out: &Buf, x: &Buf, in_dims: &[usize], out_dims: &[usize]) -> Result<()> {
    let op = "expand";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    check::same_dtype(op, &ops)?;
    if in_dims.len() > out_dims.len() {
        return shape_err(op, format!("{in_dims:?} has more axes than {out_dims:?}"));
    }
    check_rank(op, out_dims.len())?;
    let lead = out_dims.len() - in_dims.len();
    for (d, &i) in in_dims.iter().enumerate() {
        if i != out_dims[lead + d] && i != 1 {
            return shape_err(op, format!("{in_dims:?} does not expand to {out_dims:?}"));
        }
    }
    let n_in = check::product(op, "in_dims", in_dims)?;
    let n_out = check::product(op, "out_dims", out_dims)?;
    check::len(op, "x", x, n_in)?;
    check::len(op, "out", out, n_out)?;
    check::no_overlap(op, out, &[(x, "x")], false)?;
    let in_strides = contiguous(in_dims);
    let mut strides = vec![0usize; out_dims.len()];
    for d in 0..in_dims.len() {
        if in_dims[d] != 1 {
            strides[lead + d] = in_strides[d];
        }
    }
    strided_copy(kit, op, out, x, out_dims, &strides, 0)
}

/// Expand of the last axis (the seed's `expandlast`): `x` is `[rows, 1]`, `out`
/// `[rows, n]` with `out[r, j] = x[r]`. Any dtype; bits are copied exactly.
///
/// Errors: as [`expand`].
pub fn expand_last(kit: &Kit, out: &Buf, x: &Buf, rows: usize, n: usize) -> Result<()> {
    expand(kit, out, x, &[rows, 1], &[rows, n])
}

/// The shape of an NCHW resize: input `[n, c, in_h, in_w]`, output
/// `[n, c, out_h, out_w]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resize2d {
    /// Batch size N.
    pub n: usize,
    /// Channels C.
    pub c: usize,
    /// Input height.
    pub in_h: usize,
    /// Input width.
    pub in_w: usize,
    /// Output height.
    pub out_h: usize,
    /// Output width.
    pub out_w: usize,
}

/// Validates a resize; returns `(planes, output length)`.
fn check_resize(op: &str, out: &Buf, x: &Buf, r: &Resize2d) -> Result<(usize, usize)> {
    let planes = check::product(op, "[n, c]", &[r.n, r.c])?;
    let n_in = check::product(op, "[n, c, in_h, in_w]", &[planes, r.in_h, r.in_w])?;
    let n_out = check::product(op, "[n, c, out_h, out_w]", &[planes, r.out_h, r.out_w])?;
    check::len(op, "x", x, n_in)?;
    check::len(op, "out", out, n_out)?;
    if n_out > 0 && (r.in_h == 0 || r.in_w == 0) {
        return shape_err(
            op,
            format!(
                "an empty input {}x{} cannot fill a {}x{} output",
                r.in_h, r.in_w, r.out_h, r.out_w
            ),
        );
    }
    // Tap numerators and denominators, (2·out+1)·in at most, stay below 2^53 so every
    // backend converts them to the compute type with one rounding.
    for (i, o) in [(r.in_h, r.out_h), (r.in_w, r.out_w)] {
        let big = o
            .checked_mul(2)
            .and_then(|v| v.checked_add(1))
            .and_then(|v| v.checked_mul(i.max(1)));
        if !matches!(big, Some(v) if v < 1 << 53) {
            return Err(Error::SizeOverflow {
                what: format!("{op}: resize {i} -> {o} (tap arithmetic must stay below 2^53)"),
            });
        }
    }
    check::no_overlap(op, out, &[(x, "x")], false)?;
    Ok((planes, n_out))
}

fn resize_args<'a>(
    op: &str,
    out: &'a Buf,
    x: &'a Buf,
    planes: usize,
    r: &Resize2d,
) -> Result<Vec<DevArg<'a>>> {
    let i = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    Ok(vec![
        out.into(),
        x.into(),
        i("planes", planes)?,
        i("in_h", r.in_h)?,
        i("in_w", r.in_w)?,
        i("out_h", r.out_h)?,
        i("out_w", r.out_w)?,
    ])
}

/// Bilinear resize of an NCHW float tensor (ONNX Resize `linear`, PyTorch
/// `interpolate(mode="bilinear")`). `align_corners = true`: source coordinate
/// `dst·(in−1)/(out−1)` (an output of size 1 samples source 0); `false`: ONNX
/// `half_pixel`, `(dst + 0.5)·in/out − 0.5` clamped at 0 as PyTorch does. Taps clamp to
/// the border. Coordinates are exact integer fractions and the value is an fma chain
/// from +0.0 in the compute type, stored once (docs/ops/movement.md has the exact
/// order).
///
/// Errors: [`Error::DType`] (not a float, or dtypes differ), [`Error::Shape`] (an empty
/// input with a non-empty output), [`Error::SizeOverflow`] (a shape product, or an
/// extent beyond the tap arithmetic's 2^53), [`Error::Length`],
/// [`Error::InvalidArgument`] (`out` overlaps `x`), [`Error::Absent`],
/// [`Error::DeviceMismatch`].
pub fn resize_bilinear(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    r: Resize2d,
    align_corners: bool,
) -> Result<()> {
    let op = "resize_bilinear";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let (planes, n_out) = check_resize(op, out, x, &r)?;
    if n_out == 0 {
        return Ok(());
    }
    let mut args = resize_args(op, out, x, planes, &r)?;
    args.push(DevArg::I64(i64::from(align_corners)));
    kit.launch_builtin(&check::name(op, d), check::launch_1d(n_out)?, &args)
}

/// Nearest resize of an NCHW tensor (ONNX Resize `nearest` with `asymmetric`
/// coordinates and `floor` rounding, computed exactly in integers):
/// `out[n, c, oy, ox] = x[n, c, ⌊oy·in_h/out_h⌋, ⌊ox·in_w/out_w⌋]`. Upsampling by an
/// integer factor `f` (`out = in·f`) reads `dst / f`; any other sizes (down, up,
/// non-integer ratios) follow the same formula. Any dtype; bits are copied exactly.
///
/// Errors: as [`resize_bilinear`], except that every dtype is accepted.
pub fn resize_nearest(kit: &Kit, out: &Buf, x: &Buf, r: Resize2d) -> Result<()> {
    let op = "resize_nearest";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    let (planes, n_out) = check_resize(op, out, x, &r)?;
    if n_out == 0 {
        return Ok(());
    }
    let args = resize_args(op, out, x, planes, &r)?;
    kit.launch_builtin(&check::name(op, d), check::launch_1d(n_out)?, &args)
}

/// EOS gather (CLIP-style pooling): `ids` `[batch, seq]` (i64), `x` `[batch, seq, d]`,
/// `out` `[batch, d]`: row `b` of `out` is `x[b, s, :]` with `s` the position of the
/// largest id in row `b` of `ids` (the first one on ties). Any dtype for `x`/`out`;
/// bits are copied exactly.
///
/// Errors: [`Error::InvalidArgument`] (`seq == 0`, or `out` overlaps `x` or `ids`),
/// [`Error::DType`] (`ids` not i64, or `out` and `x` differ), [`Error::SizeOverflow`],
/// [`Error::Length`], [`Error::Absent`], [`Error::DeviceMismatch`].
pub fn eos_gather(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    ids: &Buf,
    batch: usize,
    seq: usize,
    d: usize,
) -> Result<()> {
    let op = "eos_gather";
    check::on_kit(kit, op, &[(out, "out"), (x, "x"), (ids, "ids")])?;
    let dt = check::same_dtype(op, &[(out, "out"), (x, "x")])?;
    if ids.dtype() != DType::I64 {
        return Err(Error::DType {
            op: op.to_string(),
            expected: "i64 (token ids)".into(),
            got: ids.dtype(),
        });
    }
    if seq == 0 {
        return invalid(op, "seq must be at least 1 (no token to pick)".into());
    }
    let n_ids = check::product(op, "[batch, seq]", &[batch, seq])?;
    let n_x = check::product(op, "[batch, seq, d]", &[batch, seq, d])?;
    let n_out = check::product(op, "[batch, d]", &[batch, d])?;
    check::len(op, "ids", ids, n_ids)?;
    check::len(op, "x", x, n_x)?;
    check::len(op, "out", out, n_out)?;
    check::no_overlap(op, out, &[(x, "x"), (ids, "ids")], false)?;
    if n_out == 0 {
        return Ok(());
    }
    let i = |w, v| check::i64_of(op, w, v).map(DevArg::I64);
    kit.launch_builtin(
        &check::name(op, dt),
        check::launch_1d(n_out)?,
        &[
            out.into(),
            x.into(),
            ids.into(),
            i("batch", batch)?,
            i("seq", seq)?,
            i("d", d)?,
        ],
    )
}
