//! Reductions along axes on tensors: [`Tensor::reduce`] and the sugar
//! [`Tensor::sum_axes`], [`Tensor::mean_axes`], [`Tensor::max_axes`],
//! [`Tensor::min_axes`], [`Tensor::prod_axes`], [`Tensor::l1_axes`],
//! [`Tensor::l2_axes`], [`Tensor::logsumexp_axes`]. Each is one call of
//! [`gpukit_ops::reduce_axes`], so the bits are that op's (docs/numerics.md,
//! "Reductions along axes").

use gpukit_core::Result;
pub use gpukit_ops::ReduceOp;

use crate::Tensor;

impl Tensor {
    /// Reduction `op` along `axes` (negative axes count from the end; an empty slice
    /// reduces every axis, as ONNX with `noop_with_empty_axes = 0`). With `keepdims`
    /// each reduced axis stays as an axis of 1, otherwise it is removed (a full
    /// reduction gives a rank-0 tensor). The elements are the same either way.
    ///
    /// Floats take every op (f16/bf16 computed in f32, stored once); i32/i64 take sum,
    /// prod (wrapping), max and min. Empty reductions: sum, L1, L2 0; mean NaN; max
    /// -inf (integers MIN); min +inf (MAX); prod 1; logsumexp -inf.
    ///
    /// Errors: [`gpukit_core::Error::InvalidArgument`] naming the op, the shape and the
    /// axis (out of range, repeated); [`gpukit_core::Error::DType`] for mean, L1, L2 or
    /// logsumexp on integers; allocation and device errors.
    ///
    /// ```
    /// use gpukit_tensor::{ReduceOp, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let s = t.reduce(ReduceOp::Sum, &[0], true)?;
    /// assert_eq!(s.dims(), [1, 3]);
    /// assert_eq!(s.to_vec::<f32>()?, [5.0, 7.0, 9.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn reduce(&self, op: ReduceOp, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        let (out_dims, keep_dims) = gpukit_ops::reduce_out_dims(&self.dims, axes)?;
        let x = self.contiguous()?;
        let n = out_dims.iter().product();
        let buf = self.kit.alloc(self.dtype(), n)?;
        gpukit_ops::reduce_axes(&self.kit, &buf, &x.buf, &self.dims, axes, op)?;
        let dims = if keepdims { keep_dims } else { out_dims };
        Ok(Tensor::contiguous_from(buf, self.kit.clone(), &dims))
    }

    /// Σ along `axes` ([`Tensor::reduce`] with [`ReduceOp::Sum`]).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1i64, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.sum_axes(&[-1], false)?.to_vec::<i64>()?, [3, 7]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn sum_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Sum, axes, keepdims)
    }

    /// The mean along `axes`: the sum divided once by the item count (NaN for none).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 6.0], &[2, 2])?;
    /// let m = t.mean_axes(&[], true)?;
    /// assert_eq!((m.dims().to_vec(), m.to_vec::<f32>()?), (vec![1, 1], vec![3.0]));
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn mean_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Mean, axes, keepdims)
    }

    /// The maximum along `axes` (any NaN gives NaN; +0 beats -0).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 5.0, -3.0, 2.0], &[2, 2])?;
    /// assert_eq!(t.max_axes(&[0], false)?.to_vec::<f32>()?, [1.0, 5.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn max_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Max, axes, keepdims)
    }

    /// The minimum along `axes` (any NaN gives NaN; -0 beats +0).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 5.0, -3.0, 2.0], &[2, 2])?;
    /// assert_eq!(t.min_axes(&[1], false)?.to_vec::<f32>()?, [1.0, -3.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn min_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Min, axes, keepdims)
    }

    /// Π along `axes` (integers wrap).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1i32, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.prod_axes(&[0], false)?.to_vec::<i32>()?, [3, 8]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn prod_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Prod, axes, keepdims)
    }

    /// Σ |x| along `axes` (floats).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f64, -2.0, 3.0, -4.0], &[4])?;
    /// assert_eq!(t.l1_axes(&[0], false)?.to_vec::<f64>()?, [10.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn l1_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::L1, axes, keepdims)
    }

    /// sqrt(Σ x²) along `axes` (floats), scaled by an exact power of two so that huge
    /// and tiny values neither overflow nor underflow on the way.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[3e30f32, -4e30], &[2])?;
    /// assert_eq!(t.l2_axes(&[0], false)?.to_vec::<f32>()?, [5e30]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn l2_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::L2, axes, keepdims)
    }

    /// log(Σ exp(x)) along `axes` (floats), as `m + log(Σ exp(x - m))` with `m` the
    /// maximum: large values do not overflow.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1000.0f32, 1000.0], &[2])?;
    /// let v = t.logsumexp_axes(&[0], false)?.to_vec::<f32>()?[0];
    /// assert!((v - (1000.0 + std::f32::consts::LN_2)).abs() < 1e-3);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn logsumexp_axes(&self, axes: &[i64], keepdims: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::LogSumExp, axes, keepdims)
    }
}
