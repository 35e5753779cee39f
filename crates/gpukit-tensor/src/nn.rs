//! Convolution, pooling and batch normalisation on tensors (ONNX Conv, ConvTranspose,
//! MaxPool, GlobalAveragePool, GlobalMaxPool, BatchNormalization), NCW and NCHW.
//!
//! Every method here computes shapes and padding and calls one op of `gpukit_ops`, so
//! its bits are that op's (docs/ops/conv.md, docs/ops/norm.md). What the ops take as
//! explicit numbers, these methods derive the way ONNX does:
//! - `auto_pad` (`SAME_UPPER`, `SAME_LOWER`, `VALID`) becomes explicit pads;
//! - a 1-D convolution or pooling (`[n, c, w]`) runs as the 2-D op on a height-1 image,
//!   whose order of operations is the 1-D one (channels ascending, then taps);
//! - max pool `ceil_mode` adds end padding, which never takes part in a maximum;
//! - conv-transpose `output_shape` becomes pads (and is checked).

use gpukit_core::{DType, Result};
use gpukit_ops::{BatchNorm, Conv2dParams, ConvTranspose2dParams, MaxPool2dParams};

use crate::Tensor;
use crate::layout::{invalid, shape_err};

/// How a window is padded (ONNX `pads` and `auto_pad`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Padding {
    /// Explicit zero padding in ONNX order: all begins, then all ends
    /// (`[w_begin, w_end]` for 1-D, `[top, left, bottom, right]` for 2-D). Empty means
    /// no padding.
    Explicit(Vec<usize>),
    /// No padding (ONNX `auto_pad = "VALID"`, also the default).
    #[default]
    Valid,
    /// `output = ceil(input / stride)`, the odd pad at the end (ONNX `SAME_UPPER`).
    SameUpper,
    /// `output = ceil(input / stride)`, the odd pad at the beginning (`SAME_LOWER`).
    SameLower,
}

/// Options of [`Tensor::conv`]: strides, dilations (empty = all 1), padding and
/// groups (0 is read as 1).
#[derive(Debug, Clone, Default)]
pub struct ConvOptions {
    /// One stride per spatial axis; empty means 1.
    pub strides: Vec<usize>,
    /// One dilation per spatial axis; empty means 1.
    pub dilations: Vec<usize>,
    /// Padding.
    pub padding: Padding,
    /// Channel groups (`c_in` and `c_out` divisible by it); 0 or 1 is a plain conv.
    pub groups: usize,
}

/// Options of [`Tensor::conv_transpose`]: as [`ConvOptions`], plus ONNX's
/// `output_padding` and `output_shape` (which, when given, decides the pads).
#[derive(Debug, Clone, Default)]
pub struct ConvTransposeOptions {
    /// One stride per spatial axis; empty means 1.
    pub strides: Vec<usize>,
    /// One dilation per spatial axis; empty means 1.
    pub dilations: Vec<usize>,
    /// Padding; with `output_shape` only `SameUpper` (odd pad at the end) or anything
    /// else (odd pad at the beginning) matters, as ONNX specifies.
    pub padding: Padding,
    /// Extra size at the end of each spatial axis; empty means 0.
    pub output_padding: Vec<usize>,
    /// The spatial output size to produce; pads are derived from it.
    pub output_shape: Option<Vec<usize>>,
    /// Channel groups; 0 or 1 is a plain transposed conv.
    pub groups: usize,
}

/// Options of [`Tensor::max_pool`]: window, strides, dilations, padding and
/// `ceil_mode`.
#[derive(Debug, Clone, Default)]
pub struct PoolOptions {
    /// The window size per spatial axis (required).
    pub kernel: Vec<usize>,
    /// One stride per spatial axis; empty means 1.
    pub strides: Vec<usize>,
    /// One dilation per spatial axis; empty means 1.
    pub dilations: Vec<usize>,
    /// Padding (padding never wins a maximum).
    pub padding: Padding,
    /// ONNX `ceil_mode`: the output size rounds up, so a last partial window is kept
    /// (unless it would start in the end padding).
    pub ceil_mode: bool,
}

/// `v`, or `[1; rank]` when empty; errors unless it has one entry per spatial axis.
fn per_axis(op: &str, what: &str, v: &[usize], rank: usize, default: usize) -> Result<Vec<usize>> {
    if v.is_empty() {
        return Ok(vec![default; rank]);
    }
    if v.len() != rank {
        return Err(invalid(
            op,
            format!("{what} {v:?} needs one entry per spatial axis ({rank})"),
        ));
    }
    Ok(v.to_vec())
}

/// Explicit `[begins..., ends...]` pads for one window geometry (ONNX's rules).
fn resolve_pads(
    op: &str,
    padding: &Padding,
    input: &[usize],
    kernel: &[usize],
    strides: &[usize],
    dilations: &[usize],
) -> Result<Vec<usize>> {
    let r = input.len();
    match padding {
        Padding::Valid => Ok(vec![0; 2 * r]),
        Padding::Explicit(p) if p.is_empty() => Ok(vec![0; 2 * r]),
        Padding::Explicit(p) => {
            if p.len() != 2 * r {
                return Err(invalid(
                    op,
                    format!("pads {p:?} need {} entries (begins, then ends)", 2 * r),
                ));
            }
            Ok(p.clone())
        }
        Padding::SameUpper | Padding::SameLower => {
            let mut pads = vec![0; 2 * r];
            for i in 0..r {
                if strides[i] == 0 || kernel[i] == 0 || dilations[i] == 0 {
                    return Err(invalid(
                        op,
                        format!(
                            "kernel {kernel:?}, strides {strides:?} and dilations {dilations:?} must be >= 1"
                        ),
                    ));
                }
                let out = input[i].div_ceil(strides[i]);
                let span = (kernel[i] - 1)
                    .checked_mul(dilations[i])
                    .and_then(|s| s.checked_add(1))
                    .ok_or_else(|| invalid(op, "the dilated window overflows".into()))?;
                let need = out
                    .saturating_sub(1)
                    .saturating_mul(strides[i])
                    .saturating_add(span);
                let total = need.saturating_sub(input[i]);
                let small = total / 2;
                let (b, e) = if *padding == Padding::SameUpper {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                pads[i] = b;
                pads[r + i] = e;
            }
            Ok(pads)
        }
    }
}

/// The 2-D geometry of a rank-3 (1-D) or rank-4 (2-D) NC... tensor: `[n, c, h, w]`
/// with `h = 1` for 1-D, and whether it was 1-D.
fn nchw(op: &str, dims: &[usize]) -> Result<([usize; 4], bool)> {
    match *dims {
        [n, c, w] => Ok(([n, c, 1, w], true)),
        [n, c, h, w] => Ok(([n, c, h, w], false)),
        _ => Err(shape_err(
            op,
            format!("x must be [n, c, w] or [n, c, h, w], got {dims:?}"),
        )),
    }
}

/// Lifts per-axis 1-D settings to 2-D (height 1, stride/dilation 1, no pad) or passes
/// 2-D ones through, as `[h, w]` pairs and `[top, left, bottom, right]` pads.
fn lift(one_d: bool, v: &[usize], unit: usize) -> [usize; 2] {
    if one_d { [unit, v[0]] } else { [v[0], v[1]] }
}

fn lift_pads(one_d: bool, p: &[usize]) -> [usize; 4] {
    if one_d {
        [0, p[0], 0, p[1]]
    } else {
        [p[0], p[1], p[2], p[3]]
    }
}

/// The 2-D result back to the caller's rank.
fn unlift(t: Tensor, one_d: bool) -> Result<Tensor> {
    if one_d { t.squeeze(2) } else { Ok(t) }
}

/// The 2-D window geometry of a pooling op on an NCW / NCHW tensor of `dims`: the
/// `max_pool2d` parameters (pads include `ceil_mode`'s extension at the end), whether it
/// was 1-D, and the pads `o` asks for before that extension (`[begins.., ends..]`).
pub(crate) fn pool_geometry(
    op: &str,
    dims: &[usize],
    o: &PoolOptions,
) -> Result<(MaxPool2dParams, bool, Vec<usize>)> {
    let ([n, c, h, wd], one_d) = nchw(op, dims)?;
    let r = if one_d { 1 } else { 2 };
    let kernel = per_axis(op, "kernel", &o.kernel, r, 0)?;
    if o.kernel.is_empty() || kernel.contains(&0) {
        return Err(invalid(
            op,
            format!(
                "kernel {:?} must give a size >= 1 per spatial axis",
                o.kernel
            ),
        ));
    }
    let strides = per_axis(op, "strides", &o.strides, r, 1)?;
    let dilations = per_axis(op, "dilations", &o.dilations, r, 1)?;
    let input = &dims[2..];
    let mut pads = resolve_pads(op, &o.padding, input, &kernel, &strides, &dilations)?;
    let asked = pads.clone();
    if o.ceil_mode {
        for i in 0..r {
            if strides[i] == 0 || dilations[i] == 0 {
                break; // the op reports it
            }
            let span = (kernel[i] - 1)
                .saturating_mul(dilations[i])
                .saturating_add(1);
            let padded = input[i].saturating_add(pads[i]).saturating_add(pads[r + i]);
            if padded < span {
                break; // the op reports the too-small input
            }
            let mut out = (padded - span).div_ceil(strides[i]) + 1;
            // A window must start inside the input or the begin padding.
            if (out - 1).saturating_mul(strides[i]) >= input[i].saturating_add(pads[i]) {
                out -= 1;
            }
            let reach = (out - 1).saturating_mul(strides[i]).saturating_add(span);
            pads[r + i] += reach.saturating_sub(padded);
        }
    }
    let k2 = lift(one_d, &kernel, 1);
    let p = MaxPool2dParams {
        n,
        c,
        h,
        w: wd,
        kh: k2[0],
        kw: k2[1],
        pads: lift_pads(one_d, &pads),
        strides: lift(one_d, &strides, 1),
        dilations: lift(one_d, &dilations, 1),
    };
    Ok((p, one_d, asked))
}

impl Tensor {
    /// The optional `[c_out]` bias of a convolution, checked (dtype, shape) and made
    /// contiguous.
    fn conv_bias(&self, op: &str, bias: Option<&Tensor>, c_out: usize) -> Result<Option<Tensor>> {
        let Some(b) = bias else { return Ok(None) };
        self.same_dtype(op, b)?;
        if b.dims[..] != [c_out] {
            return Err(shape_err(
                op,
                format!("bias {:?} must be [c_out] = [{c_out}]", b.dims),
            ));
        }
        Ok(Some(b.contiguous()?))
    }

    /// Convolution (ONNX Conv; PyTorch `conv1d`/`conv2d`), NCW or NCHW: `self`
    /// `[n, c_in, (h,) w]`, `w` `[c_out, c_in / groups, (kh,) kw]`, optional `bias`
    /// `[c_out]`; float dtypes. Runs the `conv2d` op (a 1-D conv as a height-1 image);
    /// `auto_pad` modes are resolved to pads as ONNX defines them.
    ///
    /// ```
    /// use gpukit_tensor::{ConvOptions, Padding, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4])?;
    /// let w = Tensor::from_slice(&kit, &[1.0f32, 1.0, 1.0], &[1, 1, 3])?;
    /// let o = ConvOptions { padding: Padding::SameUpper, ..Default::default() };
    /// assert_eq!(x.conv(&w, None, &o)?.to_vec::<f32>()?, [3.0, 6.0, 9.0, 7.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`gpukit_core::Error::Shape`] for ranks other than 3 and 4, a weight of
    /// another rank or channel count, or an input smaller than the dilated kernel;
    /// [`gpukit_core::Error::InvalidArgument`] for zero strides/dilations, groups not
    /// dividing the channels, or lists of the wrong length;
    /// [`gpukit_core::Error::DType`]; the op's errors.
    #[doc(alias = "conv1d")]
    #[doc(alias = "conv2d")]
    pub fn conv(&self, w: &Tensor, bias: Option<&Tensor>, o: &ConvOptions) -> Result<Tensor> {
        let op = "conv";
        self.same_dtype(op, w)?;
        let ([n, c_in, h, wd], one_d) = nchw(op, &self.dims)?;
        let r = if one_d { 1 } else { 2 };
        if w.rank() != self.rank() {
            return Err(shape_err(
                op,
                format!(
                    "weight {:?} must have the rank of x {:?}",
                    w.dims, self.dims
                ),
            ));
        }
        let groups = o.groups.max(1);
        let c_out = w.dims[0];
        if w.dims[1].checked_mul(groups) != Some(c_in) {
            return Err(shape_err(
                op,
                format!(
                    "weight {:?} needs c_in / groups = {c_in} / {groups} input channels (x {:?})",
                    w.dims, self.dims
                ),
            ));
        }
        let kernel = &w.dims[2..];
        let strides = per_axis(op, "strides", &o.strides, r, 1)?;
        let dilations = per_axis(op, "dilations", &o.dilations, r, 1)?;
        let pads = resolve_pads(
            op,
            &o.padding,
            &self.dims[2..],
            kernel,
            &strides,
            &dilations,
        )?;
        let k2 = lift(one_d, kernel, 1);
        let p = Conv2dParams {
            n,
            c_in,
            h,
            w: wd,
            c_out,
            kh: k2[0],
            kw: k2[1],
            pads: lift_pads(one_d, &pads),
            strides: lift(one_d, &strides, 1),
            dilations: lift(one_d, &dilations, 1),
            groups,
        };
        let shape = gpukit_ops::conv2d_out_shape(&p)?;
        let b = self.conv_bias(op, bias, c_out)?;
        let (x, wc) = (self.contiguous()?, w.contiguous()?);
        let y = self.alloc_like(&shape, self.dtype())?;
        gpukit_ops::conv2d(
            &self.kit,
            &y.buf,
            &x.buf,
            &wc.buf,
            b.as_ref().map(|b| &b.buf),
            &p,
        )?;
        unlift(y, one_d)
    }

    /// Transposed convolution (ONNX ConvTranspose; PyTorch `conv_transpose1d/2d`), NCW
    /// or NCHW: `self` `[n, c_in, (h,) w]`, `w` `[c_in, c_out / groups, (kh,) kw]`,
    /// optional `bias` `[c_out]`. With `output_shape`, the pads come from ONNX's
    /// formula `total = stride·(in − 1) + output_padding + (k − 1)·dil + 1 − out`
    /// (odd half at the end for `SameUpper`, else at the beginning); `SameUpper` /
    /// `SameLower` without it produce `in · stride`. Runs the `conv_transpose2d` op.
    ///
    /// Errors: as [`Tensor::conv`]; [`gpukit_core::Error::InvalidArgument`] when
    /// `output_shape` is larger than the kernel can reach (negative total padding) or
    /// `output_padding` is not smaller than the stride.
    #[doc(alias = "conv_transpose1d")]
    #[doc(alias = "conv_transpose2d")]
    #[doc(alias = "deconvolution")]
    pub fn conv_transpose(
        &self,
        w: &Tensor,
        bias: Option<&Tensor>,
        o: &ConvTransposeOptions,
    ) -> Result<Tensor> {
        let op = "conv_transpose";
        self.same_dtype(op, w)?;
        let ([n, c_in, h, wd], one_d) = nchw(op, &self.dims)?;
        let r = if one_d { 1 } else { 2 };
        if w.rank() != self.rank() || w.dims[0] != c_in {
            return Err(shape_err(
                op,
                format!(
                    "weight {:?} must be [c_in = {c_in}, c_out / groups, kernel...] for x {:?}",
                    w.dims, self.dims
                ),
            ));
        }
        let groups = o.groups.max(1);
        let c_out = w.dims[1].checked_mul(groups).ok_or_else(|| {
            invalid(
                op,
                format!("c_out = {} x {groups} groups overflows", w.dims[1]),
            )
        })?;
        let kernel = &w.dims[2..];
        let strides = per_axis(op, "strides", &o.strides, r, 1)?;
        let dilations = per_axis(op, "dilations", &o.dilations, r, 1)?;
        let out_pad = per_axis(op, "output_padding", &o.output_padding, r, 0)?;
        let input = &self.dims[2..];
        let target = match (&o.output_shape, &o.padding) {
            (Some(s), _) => Some(per_axis(op, "output_shape", s, r, 0)?),
            (None, Padding::SameUpper | Padding::SameLower) => Some(
                input
                    .iter()
                    .zip(&strides)
                    .map(|(&i, &s)| i.saturating_mul(s))
                    .collect(),
            ),
            _ => None,
        };
        let pads = match target {
            None => resolve_pads(op, &o.padding, input, kernel, &strides, &dilations)?,
            Some(out) => {
                let mut pads = vec![0; 2 * r];
                for i in 0..r {
                    let full = (input[i].max(1) - 1) as i128 * strides[i] as i128
                        + out_pad[i] as i128
                        + (kernel[i].max(1) - 1) as i128 * dilations[i] as i128
                        + 1;
                    let total = full - out[i] as i128;
                    if total < 0 {
                        return Err(invalid(
                            op,
                            format!(
                                "output_shape {out:?} is larger than kernel {kernel:?} with \
                                 strides {strides:?} reaches from input {input:?}"
                            ),
                        ));
                    }
                    let total = total as usize;
                    let small = total / 2;
                    (pads[i], pads[r + i]) = if o.padding == Padding::SameUpper {
                        (small, total - small)
                    } else {
                        (total - small, small)
                    };
                }
                pads
            }
        };
        let k2 = lift(one_d, kernel, 1);
        let p = ConvTranspose2dParams {
            n,
            c_in,
            h,
            w: wd,
            c_out,
            kh: k2[0],
            kw: k2[1],
            pads: lift_pads(one_d, &pads),
            strides: lift(one_d, &strides, 1),
            output_padding: lift(one_d, &out_pad, 0),
            dilations: lift(one_d, &dilations, 1),
            groups,
        };
        let shape = gpukit_ops::conv_transpose2d_out_shape(&p)?;
        let b = self.conv_bias(op, bias, c_out)?;
        let (x, wc) = (self.contiguous()?, w.contiguous()?);
        let y = self.alloc_like(&shape, self.dtype())?;
        gpukit_ops::conv_transpose2d(
            &self.kit,
            &y.buf,
            &x.buf,
            &wc.buf,
            b.as_ref().map(|b| &b.buf),
            &p,
        )?;
        unlift(y, one_d)
    }

    /// Max pooling (ONNX MaxPool without the indices output; PyTorch `max_pool1d/2d`),
    /// NCW or NCHW, float dtypes, via the `max_pool2d` op: the `max_nan` of each
    /// window's taps inside the input (NaN wins; padding never takes part).
    /// `ceil_mode` keeps a last partial window as ONNX does, except one that would
    /// start in the end padding.
    ///
    /// Errors: [`gpukit_core::Error::Shape`] for ranks other than 3 and 4 or an input
    /// smaller than the window; [`gpukit_core::Error::InvalidArgument`] for a kernel
    /// list of the wrong length, zero sizes, or a window lying wholly in padding;
    /// [`gpukit_core::Error::DType`].
    pub fn max_pool(&self, o: &PoolOptions) -> Result<Tensor> {
        let (p, one_d, _) = pool_geometry("max_pool", &self.dims, o)?;
        let shape = gpukit_ops::max_pool2d_out_shape(&p)?;
        let x = self.contiguous()?;
        let y = self.alloc_like(&shape, self.dtype())?;
        gpukit_ops::max_pool2d(&self.kit, &y.buf, &x.buf, &p)?;
        unlift(y, one_d)
    }

    /// Max pooling with ONNX MaxPool's `Indices` output: `(values, indices)`, values as
    /// [`Tensor::max_pool`], indices i64 of the same shape. Each index is that of the
    /// first in-image tap of the window (row-major window order) holding the maximum bit
    /// for bit (NaN's first position when NaN wins; `+0.0` over an earlier `-0.0`, since
    /// `max(-0, +0) = +0`), flattened over the whole input tensor as ONNX defines it:
    /// `((b·c + ch)·h + ih)·w + iw`, or with `column_major` (ONNX `storage_order = 1`)
    /// `((b·c + ch)·w + iw)·h + ih`. Padding never takes part and never shifts an index.
    ///
    /// ```
    /// # fn main() -> gpukit_core::Result<()> {
    /// use gpukit_tensor::{PoolOptions, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[1.0f32, 5.0, 2.0, 5.0, 0.0, 3.0, 4.0, 9.0, 8.0], &[1, 1, 3, 3])?;
    /// let opts = PoolOptions { kernel: vec![2, 2], ..PoolOptions::default() };
    /// let (v, i) = x.max_pool_with_indices(&opts, false)?;
    /// assert_eq!(v.to_vec::<f32>()?, [5.0, 5.0, 9.0, 9.0]);
    /// assert_eq!(i.to_vec::<i64>()?, [1, 1, 7, 7]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Errors: as [`Tensor::max_pool`].
    pub fn max_pool_with_indices(
        &self,
        o: &PoolOptions,
        column_major: bool,
    ) -> Result<(Tensor, Tensor)> {
        let (p, one_d, _) = pool_geometry("max_pool", &self.dims, o)?;
        let shape = gpukit_ops::max_pool2d_out_shape(&p)?;
        let x = self.contiguous()?;
        let y = self.alloc_like(&shape, self.dtype())?;
        gpukit_ops::max_pool2d(&self.kit, &y.buf, &x.buf, &p)?;
        let idx = self.alloc_like(&shape, DType::I64)?;
        gpukit_ops::max_pool2d_index(&self.kit, &idx.buf, &x.buf, &p, column_major)?;
        Ok((unlift(y, one_d)?, unlift(idx, one_d)?))
    }

    /// Global average pooling (ONNX GlobalAveragePool): the mean over every axis after
    /// the first two, kept as size 1 (`[n, c, 1, 1]` for NCHW), with the `mean`
    /// reduction of [`Tensor::mean_axes`] (its order of operations).
    ///
    /// Errors: [`gpukit_core::Error::Shape`] for rank < 3;
    /// [`gpukit_core::Error::DType`] for integers.
    pub fn global_avg_pool(&self) -> Result<Tensor> {
        self.global_pool("global_avg_pool", crate::ReduceOp::Mean)
    }

    /// Global max pooling (ONNX GlobalMaxPool): the maximum over every axis after the
    /// first two, kept as size 1; NaN wins, as [`Tensor::max_axes`].
    ///
    /// Errors: [`gpukit_core::Error::Shape`] for rank < 3.
    pub fn global_max_pool(&self) -> Result<Tensor> {
        self.global_pool("global_max_pool", crate::ReduceOp::Max)
    }

    fn global_pool(&self, op: &str, r: crate::ReduceOp) -> Result<Tensor> {
        if self.rank() < 3 {
            return Err(shape_err(
                op,
                format!("x must be [n, c, spatial...], got {:?}", self.dims),
            ));
        }
        let axes: Vec<i64> = (2..self.rank() as i64).collect();
        self.reduce(r, &axes, true)
    }

    /// Inference batch normalisation (ONNX BatchNormalization, `training_mode = 0`) of
    /// `[n, c, ...]` with per-channel `scale`, `bias`, `mean`, `var` (each `[c]`), via
    /// the `batch_norm` op: `fma((x − mean) / sqrt(var + eps), scale, bias)`.
    ///
    /// Errors: [`gpukit_core::Error::Shape`] for rank < 2 or a parameter that is not
    /// `[c]`; [`gpukit_core::Error::InvalidArgument`] for a negative or non-finite
    /// `eps`; [`gpukit_core::Error::DType`] for mixed or integer dtypes.
    pub fn batch_norm(
        &self,
        scale: &Tensor,
        bias: &Tensor,
        mean: &Tensor,
        var: &Tensor,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "batch_norm";
        if self.rank() < 2 {
            return Err(shape_err(
                op,
                format!("x must be [n, c, ...], got {:?}", self.dims),
            ));
        }
        let c = self.dims[1];
        let mut params = Vec::with_capacity(4);
        for (t, name) in [
            (scale, "scale"),
            (bias, "bias"),
            (mean, "mean"),
            (var, "var"),
        ] {
            self.same_dtype(op, t)?;
            if t.dims[..] != [c] {
                return Err(shape_err(
                    op,
                    format!(
                        "{name} {:?} must be [c] = [{c}] for x {:?}",
                        t.dims, self.dims
                    ),
                ));
            }
            params.push(t.contiguous()?);
        }
        let x = self.contiguous()?;
        let y = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::batch_norm(
            &self.kit,
            &y.buf,
            &x.buf,
            &params[0].buf,
            &params[1].buf,
            &params[2].buf,
            &params[3].buf,
            BatchNorm {
                shape: &self.dims,
                eps,
            },
        )?;
        Ok(y)
    }
}
