//! Normalisations over trailing axes and channel groups: layer norm along any axis with
//! an optional bias and the optional mean / inverse-std outputs, group norm and RMS
//! norm. Each method computes the `[rows, n]` view and calls one op of `gpukit_ops`
//! (`layer_norm_ex`, `group_norm`, `rms_norm`), so the bits are that op's
//! (docs/ops/norm.md).

#[cfg(doc)]
use gpukit_core::Error;
use gpukit_core::Result;
use gpukit_ops::{GroupNorm, LayerNorm, RmsNorm};

use crate::Tensor;
use crate::layout::{self, shape_err};

impl Tensor {
    /// `(axis, rows, n)` of a normalisation over `dims[axis..]`, with `weight` (and
    /// `bias`) either that trailing shape or its flattened `[n]`.
    fn trailing(
        &self,
        op: &str,
        axis: i64,
        params: &[(&Tensor, &str)],
    ) -> Result<(usize, usize, usize)> {
        let a = layout::axis(op, axis, &self.dims)?;
        let (lead, tail) = self.dims.split_at(a);
        let n: usize = layout::numel(op, tail)?;
        let rows: usize = layout::numel(op, lead)?;
        for (t, name) in params {
            self.same_dtype(op, t)?;
            if t.dims[..] != *tail && t.dims[..] != [n] {
                return Err(shape_err(
                    op,
                    format!(
                        "x {:?} normalises axes {a}.. (axis {axis}) of shape {tail:?}: {name} {:?} must be {tail:?} or [{n}]",
                        self.dims, t.dims
                    ),
                ));
            }
        }
        Ok((a, rows, n))
    }

    /// Shared body of [`Tensor::layer_norm_axis`] and [`Tensor::layer_norm_with_stats`].
    fn layer_norm_impl(
        &self,
        op: &str,
        axis: i64,
        weight: &Tensor,
        bias: Option<&Tensor>,
        eps: f64,
        stats: bool,
    ) -> Result<(Tensor, Option<(Tensor, Tensor)>)> {
        let mut params = vec![(weight, "weight")];
        if let Some(b) = bias {
            params.push((b, "bias"));
        }
        let (a, rows, n) = self.trailing(op, axis, &params)?;
        let x = self.contiguous()?;
        let w = weight.contiguous()?;
        let b = bias.map(|b| b.contiguous()).transpose()?;
        let out = self.alloc_like(&self.dims, self.dtype())?;
        let st = if stats {
            let mut sd = self.dims[..a].to_vec();
            sd.resize(self.rank(), 1);
            let r = gpukit_ops::compute_dtype(self.dtype());
            Some((self.alloc_like(&sd, r)?, self.alloc_like(&sd, r)?))
        } else {
            None
        };
        gpukit_ops::layer_norm_ex(
            &self.kit,
            &out.buf,
            &x.buf,
            &w.buf,
            b.as_ref().map(|b| &b.buf),
            st.as_ref().map(|(m, s)| (&m.buf, &s.buf)),
            LayerNorm { rows, n, eps },
        )?;
        Ok((out, st))
    }

    /// Layer normalisation (ONNX LayerNormalization) over the trailing axes
    /// `axis..rank` (negative `axis` counts from the end) with `weight` (scale) and an
    /// optional `bias`, each of the normalised shape `dims[axis..]` or flattened to
    /// `[n]`; via the `layer_norm_ex` op. Without a bias the output is `t · weight`
    /// exactly (docs/ops/norm.md); with one, `layer_norm`'s bits.
    ///
    /// Errors: [`Error::InvalidArgument`] naming the axis and shape for an axis out of
    /// range (a rank-0 tensor has none) or a negative / non-finite `eps`;
    /// [`Error::Shape`] naming the shapes for a weight or bias of another shape;
    /// [`Error::DType`] for mixed or integer dtypes.
    pub fn layer_norm_axis(
        &self,
        axis: i64,
        weight: &Tensor,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        Ok(self
            .layer_norm_impl("layer_norm", axis, weight, bias, eps, false)?
            .0)
    }

    /// [`Tensor::layer_norm_axis`] that also returns ONNX's `Mean` and `InvStdDev`
    /// outputs: shape `dims` with the normalised axes set to 1, dtype the compute type
    /// (f32 for f16/bf16/f32, f64 for f64; ONNX's default `stash_type`). Returns
    /// `(y, mean, inv_std)`.
    ///
    /// Errors: as [`Tensor::layer_norm_axis`].
    pub fn layer_norm_with_stats(
        &self,
        axis: i64,
        weight: &Tensor,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (y, st) = self.layer_norm_impl("layer_norm", axis, weight, bias, eps, true)?;
        match st {
            Some((m, s)) => Ok((y, m, s)),
            // layer_norm_impl returns statistics whenever it is asked for them.
            None => Err(shape_err(
                "layer_norm",
                "no statistics were produced".into(),
            )),
        }
    }

    /// Group normalisation (ONNX GroupNormalization, opset 21) of `[n, c, spatial...]`
    /// in `num_groups` groups of consecutive channels, with per-channel `scale` and
    /// `bias` (`[c]`), via the `group_norm` op.
    ///
    /// Errors: [`Error::Shape`] for rank < 2 or a scale/bias that is not `[c]`;
    /// [`Error::InvalidArgument`] when `num_groups` is 0 or does not divide `c`, or for
    /// a negative / non-finite `eps`; [`Error::DType`] for mixed or integer dtypes.
    pub fn group_norm(
        &self,
        num_groups: usize,
        scale: &Tensor,
        bias: &Tensor,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "group_norm";
        if self.rank() < 2 {
            return Err(shape_err(
                op,
                format!("x must be [n, c, spatial...], got {:?}", self.dims),
            ));
        }
        let c = self.dims[1];
        for (t, name) in [(scale, "scale"), (bias, "bias")] {
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
        }
        let (x, s, b) = (self.contiguous()?, scale.contiguous()?, bias.contiguous()?);
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::group_norm(
            &self.kit,
            &out.buf,
            &x.buf,
            &s.buf,
            &b.buf,
            GroupNorm {
                shape: &self.dims,
                groups: num_groups,
                eps,
            },
        )?;
        Ok(out)
    }

    /// RMS normalisation (ONNX RMSNormalization, opset 23; LLaMA's RMSNorm) over the
    /// trailing axes `axis..rank` with `scale` of the normalised shape (or flattened
    /// `[n]`): `(x / sqrt(mean(x²) + eps)) · scale`, via the `rms_norm` op.
    ///
    /// Errors: as [`Tensor::layer_norm_axis`].
    pub fn rms_norm(&self, axis: i64, scale: &Tensor, eps: f64) -> Result<Tensor> {
        let op = "rms_norm";
        let (_, rows, n) = self.trailing(op, axis, &[(scale, "scale")])?;
        let (x, s) = (self.contiguous()?, scale.contiguous()?);
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::rms_norm(
            &self.kit,
            &out.buf,
            &x.buf,
            &s.buf,
            RmsNorm { rows, n, eps },
        )?;
        Ok(out)
    }
}
