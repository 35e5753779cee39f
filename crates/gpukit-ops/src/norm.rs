//! The neural-network family: the `norm` group — inference batch norm, layer norm,
//! activations (leaky ReLU, clip, erf, GELU and its tanh approximation), softmax along
//! any axis, argmax and the L2 norm along the last axis.
//!
//! The exact order of floating-point operations of every op is in docs/ops/norm.md
//! and in the kernel table ([`gpukit_core::abi::norm`]); the reference oracle
//! (`gpukit_reference::{batch_norm, layer_norm, ...}`) is its executable form.

use gpukit_core::numeric::resolve_index;
use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;

/// The shape and epsilon of [`batch_norm`].
#[derive(Debug, Clone, Copy)]
pub struct BatchNorm<'a> {
    /// `x`'s shape `[N, C, spatial...]` (rank at least 2; no spatial dims means `S = 1`).
    pub shape: &'a [usize],
    /// Added to the variance; finite and `>= 0` in the compute type (rounded once to
    /// it: 1e300 for an f32 op is refused).
    pub eps: f64,
}

/// The shape and epsilon of [`layer_norm`].
#[derive(Debug, Clone, Copy)]
pub struct LayerNorm {
    /// Rows normalised independently (the product of the leading dims).
    pub rows: usize,
    /// Length of each row (the product of the normalised trailing dims).
    pub n: usize,
    /// Added to the variance; finite and `>= 0` in the compute type (rounded once to
    /// it: 1e300 for an f32 op is refused).
    pub eps: f64,
}

/// Inference batch normalisation (ONNX BatchNormalization, inference mode) of `x` of
/// shape `[N, C, spatial...]`, viewed as `(N, C, S)`: for every element of channel `k`,
/// `out = fma((x - mean[k]) / sqrt(var[k] + eps), scale[k], bias[k])` in the compute
/// type, stored once. `scale`, `bias`, `mean`, `var` hold `C` elements of `x`'s dtype;
/// `out` may be exactly `x`.
///
/// Errors: [`Error::Shape`] when the shape has rank < 2; [`Error::SizeOverflow`];
/// [`Error::Length`] when a buffer does not match the shape; [`Error::DType`] unless all
/// six buffers share one float dtype; [`Error::InvalidArgument`] for an `eps` that is
/// NaN, infinite or negative, or an output overlapping an input (other than exactly
/// `x`); [`Error::Absent`] / [`Error::DeviceMismatch`] for a missing or foreign buffer.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    scale: &Buf,
    bias: &Buf,
    mean: &Buf,
    var: &Buf,
    p: BatchNorm<'_>,
) -> Result<()> {
    let op = "batch_norm";
    let ops = [
        (out, "out"),
        (x, "x"),
        (scale, "scale"),
        (bias, "bias"),
        (mean, "mean"),
        (var, "var"),
    ];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    if p.shape.len() < 2 {
        return Err(Error::Shape {
            op: op.to_string(),
            detail: format!("x must be [N, C, spatial...], got shape {:?}", p.shape),
        });
    }
    let (n, c) = (p.shape[0], p.shape[1]);
    let s = check::product(op, "spatial dims", &p.shape[2..])?;
    let total = check::product(op, "shape", p.shape)?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    for (b, name) in &ops[2..] {
        check::len(op, name, b, c)?;
    }
    check::finite_param(op, "eps", d, p.eps, true)?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    check::no_overlap(op, out, &ops[2..], false)?;
    if total == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(total)?,
        &[
            out.into(),
            x.into(),
            scale.into(),
            bias.into(),
            mean.into(),
            var.into(),
            DevArg::I64(check::i64_of(op, "n", n)?),
            DevArg::I64(check::i64_of(op, "c", c)?),
            DevArg::I64(check::i64_of(op, "s", s)?),
            DevArg::F64(p.eps),
        ],
    )
}

/// Layer normalisation over the last axis (ONNX LayerNormalization; flatten the
/// normalised trailing dims into `n`) of `x` viewed as `[rows, n]`, `scale` and `bias`
/// `[n]`: per row `mean` = the reduction shape's sum / n, `var` = the reduction shape's
/// sum of `fma(d, d, acc)` (`d = x - mean`) / n, and
/// `out_j = fma((x_j - mean) / sqrt(var + eps), scale_j, bias_j)`, in the compute type,
/// stored once. `out` may be exactly `x`.
///
/// Errors: [`Error::SizeOverflow`]; [`Error::Length`] when a buffer does not match the
/// shape; [`Error::DType`] unless all buffers share one float dtype;
/// [`Error::InvalidArgument`] for a bad `eps` or an overlapping output (other than
/// exactly `x`); [`Error::Absent`] / [`Error::DeviceMismatch`].
pub fn layer_norm(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    scale: &Buf,
    bias: &Buf,
    p: LayerNorm,
) -> Result<()> {
    let op = "layer_norm";
    let ops = [(out, "out"), (x, "x"), (scale, "scale"), (bias, "bias")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let total = check::product(op, "[rows, n]", &[p.rows, p.n])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    check::len(op, "scale", scale, p.n)?;
    check::len(op, "bias", bias, p.n)?;
    check::finite_param(op, "eps", d, p.eps, true)?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    check::no_overlap(op, out, &ops[2..], false)?;
    if total == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(p.rows)?,
        &[
            out.into(),
            x.into(),
            scale.into(),
            bias.into(),
            DevArg::I64(check::i64_of(op, "rows", p.rows)?),
            DevArg::I64(check::i64_of(op, "n", p.n)?),
            DevArg::F64(p.eps),
        ],
    )
}

/// Validates an elementwise float activation and launches it with `extra` scalars.
fn activation(kit: &Kit, op: &str, out: &Buf, x: &Buf, extra: &[DevArg<'_>]) -> Result<()> {
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    check::len(op, "out", out, x.len())?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    if x.is_empty() {
        return Ok(());
    }
    let mut args: Vec<DevArg<'_>> = vec![
        out.into(),
        x.into(),
        DevArg::I64(check::i64_of(op, "len", x.len())?),
    ];
    args.extend_from_slice(extra);
    kit.launch_builtin(&check::name(op, d), check::launch_1d(x.len())?, &args)
}

/// Leaky ReLU (ONNX LeakyRelu), elementwise: `x` if `x > 0` or NaN, else `alpha * x`
/// (in the compute type; `-0.0` gives `-0.0 * alpha`). `out` may be exactly `x`.
///
/// Errors: [`Error::InvalidArgument`] for an `alpha` that is NaN or infinite in the
/// compute type (1e300 for an f32 op), or an output that
/// overlaps `x` other than exactly; [`Error::Length`] when `out` and `x` differ in
/// length; [`Error::DType`] for a non-float or mismatched dtype; [`Error::Absent`] /
/// [`Error::DeviceMismatch`].
pub fn leaky_relu(kit: &Kit, out: &Buf, x: &Buf, alpha: f64) -> Result<()> {
    check::finite_param("leaky_relu", "alpha", x.dtype(), alpha, false)?;
    activation(kit, "leaky_relu", out, x, &[DevArg::F64(alpha)])
}

/// Clip (ONNX Clip), elementwise: `min_nan(max_nan(x, lo), hi)` (NaN passes through;
/// pass `f64::NEG_INFINITY` / `f64::INFINITY` for no bound). `lo`, `hi` are converted
/// to the compute type. `lo > hi` sets every non-NaN element to `hi`, ONNX's rule
/// (the formula gives it). `out` may be exactly `x`.
///
/// Errors: [`Error::InvalidArgument`] when `lo` or `hi` is NaN, or for an overlapping
/// output; [`Error::Length`], [`Error::DType`], [`Error::Absent`],
/// [`Error::DeviceMismatch`] as [`leaky_relu`].
pub fn clip(kit: &Kit, out: &Buf, x: &Buf, lo: f64, hi: f64) -> Result<()> {
    if lo.is_nan() || hi.is_nan() {
        return Err(Error::InvalidArgument {
            op: "clip".into(),
            reason: format!("the bounds must not be NaN, got lo = {lo}, hi = {hi}"),
        });
    }
    activation(kit, "clip", out, x, &[DevArg::F64(lo), DevArg::F64(hi)])
}

/// The error function (ONNX Erf), elementwise, with gpukit's portable `erf`. `out` may
/// be exactly `x`.
///
/// Errors: as [`leaky_relu`] (without the `alpha` check).
pub fn erf(kit: &Kit, out: &Buf, x: &Buf) -> Result<()> {
    activation(kit, "erf", out, x, &[])
}

/// GELU, exact (erf) form (ONNX Gelu, `approximate = "none"`), elementwise:
/// `x * fma(0.5, erf(x * (1/√2)), 0.5)`; `-inf` gives `-0.0`. `out` may be exactly `x`.
///
/// Errors: as [`erf`].
pub fn gelu(kit: &Kit, out: &Buf, x: &Buf) -> Result<()> {
    activation(kit, "gelu", out, x, &[])
}

/// GELU, tanh approximation (ONNX Gelu, `approximate = "tanh"`), elementwise:
/// `u = √(2/π) * fma(0.044715, (x * x) * x, x)`, `x * fma(0.5, tanh(u), 0.5)`; `-inf`
/// gives `-0.0`. `out` may be exactly `x`.
///
/// Errors: as [`erf`].
pub fn gelu_tanh(kit: &Kit, out: &Buf, x: &Buf) -> Result<()> {
    activation(kit, "gelu_tanh", out, x, &[])
}

/// Softmax along `axis` of `x` of shape `shape` (ONNX Softmax, opset 13 semantics: one
/// axis; a negative `axis` counts from the end). `x` is viewed as `(outer, axis_len,
/// inner)`; per line: `m = max` (NaN if any NaN), `e_j = exp(x_j - m)`, `s` = the
/// reduction shape's sum of `e_j` in ascending `j`, `out_j = e_j / s`. Along the last
/// axis this is bit-identical to [`crate::softmax_rows`]. `out` may be exactly `x`.
///
/// Errors: [`Error::InvalidArgument`] when `axis` is outside `[-rank, rank)` (a 0-D
/// shape has no axis) or the output overlaps `x` other than exactly;
/// [`Error::SizeOverflow`]; [`Error::Length`]; [`Error::DType`] for a non-float or
/// mismatched dtype; [`Error::Absent`] / [`Error::DeviceMismatch`].
pub fn softmax_axis(kit: &Kit, out: &Buf, x: &Buf, shape: &[usize], axis: i64) -> Result<()> {
    let op = "softmax_axis";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let Some(ax) = resolve_index(axis, shape.len()) else {
        return Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!(
                "axis {axis} is out of range for a shape of rank {}",
                shape.len()
            ),
        });
    };
    let total = check::product(op, "shape", shape)?;
    let outer = check::product(op, "leading dims", &shape[..ax])?;
    let inner = check::product(op, "trailing dims", &shape[ax + 1..])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    if total == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(outer * inner)?,
        &[
            out.into(),
            x.into(),
            DevArg::I64(check::i64_of(op, "outer", outer)?),
            DevArg::I64(check::i64_of(op, "axis", shape[ax])?),
            DevArg::I64(check::i64_of(op, "inner", inner)?),
        ],
    )
}

/// Argmax along the last axis (ONNX ArgMax, `select_last_index = 0`) of `x` viewed as
/// `[rows, n]`, any dtype: `out[r]` (i64) is the first index of the row's largest value;
/// `±0` compare equal; a NaN counts as the largest value (the first NaN wins, as numpy).
///
/// Errors: [`Error::Shape`] when `n = 0` (an empty axis has no maximum);
/// [`Error::DType`] unless `out` is i64; [`Error::Length`] (`x` not `rows * n`, `out`
/// not `rows`); [`Error::SizeOverflow`]; [`Error::InvalidArgument`] when `out` overlaps
/// `x`; [`Error::Absent`] / [`Error::DeviceMismatch`].
pub fn argmax(kit: &Kit, out: &Buf, x: &Buf, rows: usize, n: usize) -> Result<()> {
    let op = "argmax";
    check::on_kit(kit, op, &[(out, "out"), (x, "x")])?;
    check::dtype_in(op, out.dtype(), &[DType::I64])?;
    if n == 0 {
        return Err(Error::Shape {
            op: op.to_string(),
            detail: format!("argmax over an empty axis ([rows, n] = [{rows}, 0])"),
        });
    }
    let total = check::product(op, "[rows, n]", &[rows, n])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, rows)?;
    check::no_overlap(op, out, &[(x, "x")], false)?;
    if rows == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, x.dtype()),
        check::launch_1d(rows)?,
        &[
            out.into(),
            x.into(),
            DevArg::I64(check::i64_of(op, "rows", rows)?),
            DevArg::I64(check::i64_of(op, "n", n)?),
        ],
    )
}

/// L2 norm along the last axis (ONNX ReduceL2 over the last axis) of `x` viewed as
/// `[rows, n]`: `out[r] = sqrt(Σ_j x_j²)` with the reduction shape and step
/// `acc = fma(x_j, x_j, acc)`, in the compute type, stored once (`n = 0` gives `+0.0`).
///
/// Errors: [`Error::Length`] (`x` not `rows * n`, `out` not `rows`);
/// [`Error::SizeOverflow`]; [`Error::DType`] for a non-float or mismatched dtype;
/// [`Error::InvalidArgument`] when `out` overlaps `x`; [`Error::Absent`] /
/// [`Error::DeviceMismatch`].
pub fn reduce_l2(kit: &Kit, out: &Buf, x: &Buf, rows: usize, n: usize) -> Result<()> {
    let op = "reduce_l2";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let total = check::product(op, "[rows, n]", &[rows, n])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, rows)?;
    check::no_overlap(op, out, &[(x, "x")], false)?;
    if rows == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(rows)?,
        &[
            out.into(),
            x.into(),
            DevArg::I64(check::i64_of(op, "rows", rows)?),
            DevArg::I64(check::i64_of(op, "n", n)?),
        ],
    )
}
