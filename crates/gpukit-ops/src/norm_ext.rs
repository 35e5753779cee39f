//! The normalisations added to the `norm` group: [`layer_norm_ex`] (layer norm with an
//! optional bias and the optional mean / inverse-std outputs), [`group_norm`] and
//! [`rms_norm`]. The exact order of floating-point operations of each is in
//! docs/ops/norm.md and [`gpukit_core::abi::norm_ext`]; the reference oracle
//! (`gpukit_reference::{layer_norm_ex, group_norm, rms_norm}`) is its executable form.

use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;
use crate::norm::LayerNorm;

/// The shape, group count and epsilon of [`group_norm`].
#[derive(Debug, Clone, Copy)]
pub struct GroupNorm<'a> {
    /// `x`'s shape `[N, C, spatial...]` (rank at least 2; no spatial dims means `S = 1`).
    pub shape: &'a [usize],
    /// Number of groups: at least 1 and dividing `C`.
    pub groups: usize,
    /// Added to the variance; finite and `>= 0` in the compute type.
    pub eps: f64,
}

/// The shape and epsilon of [`rms_norm`].
#[derive(Debug, Clone, Copy)]
pub struct RmsNorm {
    /// Rows normalised independently (the product of the leading dims).
    pub rows: usize,
    /// Length of each row (the product of the normalised trailing dims).
    pub n: usize,
    /// Added to the mean square; finite and `>= 0` in the compute type.
    pub eps: f64,
}

/// The compute type of a float dtype: the dtype of [`layer_norm_ex`]'s statistics.
pub fn compute_dtype(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Checks an optional operand: present, on the kit, of dtype `d`, `len` elements.
fn optional(kit: &Kit, op: &str, name: &str, b: &Buf, d: DType, len: usize) -> Result<()> {
    check::on_kit(kit, op, &[(b, name)])?;
    if b.dtype() != d {
        return Err(Error::DType {
            op: op.to_string(),
            expected: d.to_string(),
            got: b.dtype(),
        });
    }
    check::len(op, name, b, len)
}

/// Layer normalisation (ONNX LayerNormalization) of `x` viewed as `[rows, n]` with
/// `scale` `[n]`, an optional `bias` `[n]` and optional statistics outputs
/// `stats = (mean, inv_std)`, each `[rows]` of the compute type ([`compute_dtype`]: f32
/// for f16/bf16/f32, f64 for f64). Per row, exactly [`crate::layer_norm`]'s order:
/// `out_j = fma((x_j - mean) / den, scale_j, b_j)` with `b_j = bias_j`, or `-0.0`
/// without a bias (the plain product, so a `-0.0` product stays `-0.0`); with a bias the
/// bits are [`crate::layer_norm`]'s. `mean[r] = mean`, `inv_std[r] = 1 / den` (in the
/// compute type, unrounded). `n = 0` writes no element and NaN statistics. `out` may be
/// exactly `x`.
///
/// Errors: [`Error::SizeOverflow`]; [`Error::Length`] when a buffer does not match the
/// shape; [`Error::DType`] unless `out`, `x`, `scale` (and `bias`) share one float dtype
/// and the statistics are of its compute type; [`Error::InvalidArgument`] for a bad
/// `eps` or an output overlapping another operand (other than `out` exactly `x`);
/// [`Error::Absent`] / [`Error::DeviceMismatch`].
pub fn layer_norm_ex(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    scale: &Buf,
    bias: Option<&Buf>,
    stats: Option<(&Buf, &Buf)>,
    p: LayerNorm,
) -> Result<()> {
    let op = "layer_norm_ex";
    let ops = [(out, "out"), (x, "x"), (scale, "scale")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let total = check::product(op, "[rows, n]", &[p.rows, p.n])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    check::len(op, "scale", scale, p.n)?;
    if let Some(b) = bias {
        optional(kit, op, "bias", b, d, p.n)?;
    }
    let r = compute_dtype(d);
    if let Some((m, s)) = stats {
        optional(kit, op, "mean", m, r, p.rows)?;
        optional(kit, op, "inv_std", s, r, p.rows)?;
    }
    check::finite_param(op, "eps", d, p.eps, true)?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    let mut inputs = vec![(x, "x"), (scale, "scale")];
    if let Some(b) = bias {
        inputs.push((b, "bias"));
    }
    check::no_overlap(op, out, &inputs[1..], false)?;
    if let Some((m, s)) = stats {
        let mut all = inputs.clone();
        all.push((out, "out"));
        check::no_overlap(op, m, &all, false)?;
        all.push((m, "mean"));
        check::no_overlap(op, s, &all, false)?;
    }
    if p.rows == 0 || (p.n == 0 && stats.is_none()) {
        return Ok(());
    }
    let absent_b = Buf::absent(d);
    let absent_s = Buf::absent(r);
    let (mean, inv_std) = stats.unwrap_or((&absent_s, &absent_s));
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(p.rows)?,
        &[
            out.into(),
            x.into(),
            scale.into(),
            bias.unwrap_or(&absent_b).into(),
            mean.into(),
            inv_std.into(),
            DevArg::I64(check::i64_of(op, "rows", p.rows)?),
            DevArg::I64(check::i64_of(op, "n", p.n)?),
            DevArg::I64(bias.is_some() as i64),
            DevArg::I64(stats.is_some() as i64),
            DevArg::F64(p.eps),
        ],
    )
}

/// Group normalisation (ONNX GroupNormalization, opset 21) of `x` of shape
/// `[N, C, spatial...]` in `groups` groups of `C / groups` consecutive channels, with
/// `scale`, `bias` `[C]`: each (sample, group) is normalised as one layer-norm row of
/// `(C / groups) · S` elements (same mean / variance order), and an element of channel
/// `k` gives `fma((x - mean) / den, scale[k], bias[k])`. `out` may be exactly `x`.
///
/// Errors: [`Error::Shape`] for rank < 2; [`Error::InvalidArgument`] for `groups` 0 or
/// not dividing `C`, a bad `eps` or an overlapping output; [`Error::SizeOverflow`];
/// [`Error::Length`]; [`Error::DType`]; [`Error::Absent`] / [`Error::DeviceMismatch`].
pub fn group_norm(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    scale: &Buf,
    bias: &Buf,
    p: GroupNorm<'_>,
) -> Result<()> {
    let op = "group_norm";
    let ops = [(out, "out"), (x, "x"), (scale, "scale"), (bias, "bias")];
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
    if p.groups == 0 || !c.is_multiple_of(p.groups) {
        return Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!(
                "num_groups {} must be at least 1 and divide the channel count {c} (shape {:?})",
                p.groups, p.shape
            ),
        });
    }
    let s = check::product(op, "spatial dims", &p.shape[2..])?;
    let total = check::product(op, "shape", p.shape)?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    check::len(op, "scale", scale, c)?;
    check::len(op, "bias", bias, c)?;
    check::finite_param(op, "eps", d, p.eps, true)?;
    check::no_overlap(op, out, &[(x, "x")], true)?;
    check::no_overlap(op, out, &ops[2..], false)?;
    if total == 0 {
        return Ok(());
    }
    let rows = check::product(op, "[N, groups]", &[n, p.groups])?;
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(rows)?,
        &[
            out.into(),
            x.into(),
            scale.into(),
            bias.into(),
            DevArg::I64(check::i64_of(op, "n", n)?),
            DevArg::I64(check::i64_of(op, "c", c)?),
            DevArg::I64(check::i64_of(op, "s", s)?),
            DevArg::I64(check::i64_of(op, "groups", p.groups)?),
            DevArg::F64(p.eps),
        ],
    )
}

/// RMS normalisation (ONNX RMSNormalization, opset 23; LLaMA's RMSNorm) of `x` viewed as
/// `[rows, n]`, `scale` `[n]`: per row `ms` = the reduction shape's sum of
/// `fma(x_j, x_j, acc)` / n, `den = sqrt(ms + eps)`, `out_j = (x_j / den) · scale_j`
/// (two roundings), in the compute type, stored once. `out` may be exactly `x`.
///
/// Errors: [`Error::SizeOverflow`]; [`Error::Length`]; [`Error::DType`] unless all
/// buffers share one float dtype; [`Error::InvalidArgument`] for a bad `eps` or an
/// overlapping output (other than exactly `x`); [`Error::Absent`] /
/// [`Error::DeviceMismatch`].
pub fn rms_norm(kit: &Kit, out: &Buf, x: &Buf, scale: &Buf, p: RmsNorm) -> Result<()> {
    let op = "rms_norm";
    let ops = [(out, "out"), (x, "x"), (scale, "scale")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let total = check::product(op, "[rows, n]", &[p.rows, p.n])?;
    check::len(op, "x", x, total)?;
    check::len(op, "out", out, total)?;
    check::len(op, "scale", scale, p.n)?;
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
            DevArg::I64(check::i64_of(op, "rows", p.rows)?),
            DevArg::I64(check::i64_of(op, "n", p.n)?),
            DevArg::F64(p.eps),
        ],
    )
}
