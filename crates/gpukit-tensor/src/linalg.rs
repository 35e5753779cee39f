//! Linear algebra on tensors: `matmul` (numpy's rules, batched and broadcast), `linear`
//! and ONNX's `gemm`. Each method computes shapes and strides and calls one op of
//! `gpukit_ops`, so the bits are that op's.

#[cfg(doc)]
use gpukit_core::Error;
use gpukit_core::Result;
use gpukit_ops::{GemmC, GemmParams};

use crate::Tensor;
use crate::layout::{self, shape_err};

/// The options of [`Tensor::gemm`] (ONNX Gemm's attributes). The default is
/// `alpha = beta = 1`, neither operand transposed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmOpts {
    /// Scale of the product.
    pub alpha: f64,
    /// Scale of C.
    pub beta: f64,
    /// A is given `[k, m]` (ONNX `transA`).
    pub trans_a: bool,
    /// B is given `[n, k]` (ONNX `transB`).
    pub trans_b: bool,
}

impl Default for GemmOpts {
    fn default() -> GemmOpts {
        GemmOpts {
            alpha: 1.0,
            beta: 1.0,
            trans_a: false,
            trans_b: false,
        }
    }
}

impl Tensor {
    /// Matrix product with numpy's `matmul` rules: `[..., m, k] @ [..., k, n]` gives
    /// `[broadcast(batch dims), m, n]`; a rank-1 left operand is a row `[1, k]` and a
    /// rank-1 right one a column `[k, 1]` (the added axis is dropped from the result).
    /// Rank 2 runs the `matmul` op, batches `matmul_broadcast` (the `bmm` op with batch
    /// strides, 0 along a broadcast dim: `[b1, 1, m, k] @ [1, b2, k, n]` or a matrix
    /// against a batch copies nothing), so every output has `matmul`'s bits.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let a = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let i = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 0.0, 0.0, 1.0], &[2, 2])?;
    /// assert_eq!(a.matmul(&i)?.to_vec::<f32>()?, [1.0, 2.0, 3.0, 4.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`] for a rank-0 operand, inner dims that differ, or batch
    /// dims that do not broadcast (naming both shapes and the axes); [`Error::DType`]
    /// for mixed or integer dtypes.
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let op = "matmul";
        let d = self.same_dtype(op, other)?;
        if self.rank() == 0 || other.rank() == 0 {
            return Err(shape_err(
                op,
                format!(
                    "operands must have rank >= 1, got {:?} and {:?}",
                    self.dims, other.dims
                ),
            ));
        }
        let a = if self.rank() == 1 {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let b = if other.rank() == 1 {
            other.unsqueeze(-1)?
        } else {
            other.clone()
        };
        let (ra, rb) = (a.rank(), b.rank());
        let (m, k) = (a.dims[ra - 2], a.dims[ra - 1]);
        let (k2, n) = (b.dims[rb - 2], b.dims[rb - 1]);
        if k != k2 {
            return Err(shape_err(
                op,
                format!(
                    "{:?} @ {:?}: axis -1 of the left ({k}) differs from axis -2 of the right ({k2})",
                    self.dims, other.dims
                ),
            ));
        }
        let batch =
            layout::broadcast_shapes(op, &a.dims[..ra - 2], &b.dims[..rb - 2]).map_err(|_| {
                shape_err(
                    op,
                    format!(
                        "{:?} @ {:?}: batch dims {:?} and {:?} do not broadcast",
                        self.dims,
                        other.dims,
                        &a.dims[..ra - 2],
                        &b.dims[..rb - 2]
                    ),
                )
            })?;
        let mut dims = batch.clone();
        dims.extend([m, n]);
        let out = self.alloc_like(&dims, d)?;
        let (a, b) = (a.contiguous()?, b.contiguous()?);
        if batch.is_empty() {
            gpukit_ops::matmul(&self.kit, &out.buf, &a.buf, &b.buf, m, k, n)?;
        } else if rb == 2 {
            // One shared right operand: the batch rows are one `[batch·m, k]` matrix
            // (each output is the same chain over k; one GEMM instead of many small).
            let rows = batch.iter().product::<usize>() * m;
            gpukit_ops::matmul(&self.kit, &out.buf, &a.buf, &b.buf, rows, k, n)?;
        } else {
            // Broadcast batch dims are batch strides of 0: nothing is expanded.
            gpukit_ops::matmul_broadcast(&self.kit, &out.buf, &a.buf, &a.dims, &b.buf, &b.dims)?;
        }
        // Drop the axes added for rank-1 operands (numpy's matmul).
        let mut fin = batch;
        if self.rank() > 1 {
            fin.push(m);
        }
        if other.rank() > 1 {
            fin.push(n);
        }
        let strides = layout::contiguous_strides(&fin);
        Ok(out.with_layout(fin, strides, 0))
    }

    /// A linear layer, `x · wᵀ + bias`, with a PyTorch `nn.Linear` weight `[out, in]`
    /// and an optional bias `[out]`: `self` is `[..., in]`, the result `[..., out]`.
    /// Runs `gpukit::ops::linear` (the `gemm` op with `trans_b`, bias added per
    /// column, any leading dims of `self` flattened into rows), so it has exactly
    /// `gpukit::ops::gemm`'s bits. Also known as a dense or fully connected layer.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let x = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 2.0], &[1, 2])?;
    /// let w = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 1.0, 0.0, 3.0, -1.0, 0.5], &[3, 2])?;
    /// let b = gpukit_tensor::Tensor::from_slice(&kit, &[0.5f32, 0.0, 1.0], &[3])?;
    /// assert_eq!(x.linear(&w, Some(&b))?.to_vec::<f32>()?, [3.5, 6.0, 1.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`] when `self` has rank 0, `w` is not `[out, in]` with
    /// `in` = the last dim of `self`, or the bias is not `[out]`; [`Error::DType`] for
    /// mixed or integer dtypes.
    #[doc(alias = "Linear")]
    #[doc(alias = "dense")]
    #[doc(alias = "fully_connected")]
    pub fn linear(&self, w: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        let op = "linear";
        let d = self.same_dtype(op, w)?;
        let bad = |why: String| {
            shape_err(
                op,
                format!(
                    "x {:?}, weight {:?}, bias {:?}: {why}",
                    self.dims,
                    w.dims,
                    bias.map(|b| b.dims.to_vec())
                ),
            )
        };
        if self.rank() == 0 {
            return Err(bad("x must have rank >= 1".into()));
        }
        if w.rank() != 2 {
            return Err(bad("the weight must be [out, in] (rank 2)".into()));
        }
        let n = w.dims[0];
        if let Some(b) = bias {
            self.same_dtype(op, b)?;
            if b.dims[..] != [n] {
                return Err(bad(format!("the bias must be [{n}]")));
            }
        }
        let dims = gpukit_ops::linear_out_dims(&self.dims, [w.dims[0], w.dims[1]])
            .map_err(|e| bad(e.to_string()))?;
        let out = self.alloc_like(&dims, d)?;
        let (x, w) = (self.contiguous()?, w.contiguous()?);
        let b = bias.map(|b| b.contiguous()).transpose()?;
        gpukit_ops::linear(
            &self.kit,
            &out.buf,
            &x.buf,
            &x.dims,
            &w.buf,
            [w.dims[0], w.dims[1]],
            b.as_ref().map(|b| &b.buf),
        )?;
        Ok(out)
    }

    /// ONNX Gemm: `alpha·(op(self)·op(b)) + beta·c` for a rank-2 `self` (`[m, k]`, or
    /// `[k, m]` with `p.trans_a`) and `b` (`[k, n]`, or `[n, k]` with `p.trans_b`);
    /// `c` may be `[m, n]` or broadcast from a row (`[n]`, `[1, n]`), a column
    /// (`[m, 1]`) or a scalar (`[]`, `[1]`, `[1, 1]`), never materialised. Runs the
    /// `gemm` op, so it has exactly `gpukit::ops::gemm`'s bits.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let a = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 3.0, 2.0, 4.0], &[2, 2])?;
    /// let i = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 0.0, 0.0, 1.0], &[2, 2])?;
    /// let c = gpukit_tensor::Tensor::from_slice(&kit, &[10.0f32, 20.0], &[2])?;
    /// let p = gpukit_tensor::GemmOpts { trans_a: true, ..Default::default() };
    /// assert_eq!(a.gemm(&i, Some(&c), p)?.to_vec::<f32>()?, [11.0, 22.0, 13.0, 24.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`] when an operand is not rank 2, the inner dims differ or
    /// `c` does not broadcast to `[m, n]` (naming the shapes); [`Error::DType`] for
    /// mixed or integer dtypes.
    #[doc(alias = "Gemm")]
    pub fn gemm(&self, b: &Tensor, c: Option<&Tensor>, p: GemmOpts) -> Result<Tensor> {
        let op = "gemm";
        let d = self.same_dtype(op, b)?;
        let bad = |why: String| {
            shape_err(
                op,
                format!(
                    "a {:?} (trans_a {}), b {:?} (trans_b {}), c {:?}: {why}",
                    self.dims,
                    p.trans_a,
                    b.dims,
                    p.trans_b,
                    c.map(|c| c.dims.to_vec())
                ),
            )
        };
        if self.rank() != 2 || b.rank() != 2 {
            return Err(bad("a and b must have rank 2".into()));
        }
        let (m, k) = if p.trans_a {
            (self.dims[1], self.dims[0])
        } else {
            (self.dims[0], self.dims[1])
        };
        let (k2, n) = if p.trans_b {
            (b.dims[1], b.dims[0])
        } else {
            (b.dims[0], b.dims[1])
        };
        if k != k2 {
            return Err(bad(format!("the inner dims differ ({k} vs {k2})")));
        }
        let c_layout = match c {
            None => GemmC::Full,
            Some(c) => {
                self.same_dtype(op, c)?;
                GemmC::from_shape(&c.dims, m, n)
                    .ok_or_else(|| bad(format!("c does not broadcast to [{m}, {n}]")))?
            }
        };
        let out = self.alloc_like(&[m, n], d)?;
        let (a, bb) = (self.contiguous()?, b.contiguous()?);
        let cc = c.map(|c| c.contiguous()).transpose()?;
        let gp = GemmParams {
            alpha: p.alpha,
            beta: p.beta,
            trans_a: p.trans_a,
            trans_b: p.trans_b,
            c_layout,
            ..GemmParams::new(m, k, n)
        };
        gpukit_ops::gemm(
            &self.kit,
            &out.buf,
            &a.buf,
            &bb.buf,
            cc.as_ref().map(|c| &c.buf),
            None,
            &gp,
        )?;
        Ok(out)
    }
}
