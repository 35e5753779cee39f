//! Comparisons, `where_` and logical ops on tensors, with numpy broadcasting: the
//! operands are broadcast to one shape (stride-0 views made contiguous), then one op of
//! `gpukit_ops` ([`gpukit_ops::compare`], [`gpukit_ops::where_`],
//! [`gpukit_ops::logical`], [`gpukit_ops::logical_not`]) computes the bits.
//!
//! There is no bool dtype: a mask is a tensor of any dtype, 1 / 0 when written, nonzero
//! = true when read (NaN true, -0.0 false). A comparison's mask has the operands' dtype
//! by default (so it multiplies straight into them) and any dtype with the `_as` forms.

#[cfg(doc)]
use gpukit_core::Error;
use gpukit_core::{DType, Result};
use gpukit_ops::{CmpOp, LogicOp};

use crate::Tensor;
use crate::layout;

impl Tensor {
    /// `ts` broadcast to one shape by numpy's rules and made contiguous, with the shape.
    fn broadcast_all(op: &str, ts: &[&Tensor]) -> Result<(Vec<usize>, Vec<Tensor>)> {
        let mut dims = ts[0].dims.to_vec();
        for t in &ts[1..] {
            dims = layout::broadcast_shapes(op, &dims, &t.dims)?;
        }
        let mut out = Vec::with_capacity(ts.len());
        for t in ts {
            out.push(t.broadcast_to(&dims)?.contiguous()?);
        }
        Ok((dims, out))
    }

    /// `op(self, other)` elementwise with numpy broadcasting: 1 where it holds, 0 where
    /// not, as a tensor of `dtype` (any of the six). Both operands share one dtype. IEEE
    /// rules: any comparison with NaN is false except `ne`; `-0.0 == +0.0`; integers
    /// compare exactly (see [`gpukit_ops::compare`]).
    ///
    /// Errors: [`Error::Shape`] naming the op, both shapes and the axis that does not
    /// broadcast; [`Error::DType`] for operands of different dtypes;
    /// [`Error::DeviceMismatch`] for tensors on different kits.
    pub fn compare_as(&self, op: CmpOp, other: &Tensor, dtype: DType) -> Result<Tensor> {
        let name = op.name();
        self.same_dtype(name, other)?;
        let (dims, xs) = Tensor::broadcast_all(name, &[self, other])?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(dtype, layout::numel(name, &dims)?)?,
            self.kit.clone(),
            &dims,
        );
        gpukit_ops::compare(&self.kit, &out.buf, &xs[0].buf, &xs[1].buf, op)?;
        Ok(out)
    }

    /// [`Tensor::compare_as`] with the mask in the operands' dtype.
    /// Errors: as [`Tensor::compare_as`].
    pub fn compare(&self, op: CmpOp, other: &Tensor) -> Result<Tensor> {
        self.compare_as(op, other, self.dtype())
    }

    /// [`Tensor::compare`] against `v` converted once to this tensor's dtype (floats
    /// round to nearest even), broadcast from one element.
    ///
    /// Errors: [`Error::Conversion`] for a value an integer dtype cannot hold exactly;
    /// those of [`Tensor::compare_as`].
    pub fn compare_scalar(&self, op: CmpOp, v: f64) -> Result<Tensor> {
        self.compare(op, &self.scalar_like(v)?)
    }

    fn scalar_like(&self, v: f64) -> Result<Tensor> {
        Ok(Tensor::contiguous_from(
            self.kit.upload_f64(self.dtype(), &[v])?,
            self.kit.clone(),
            &[],
        ))
    }

    /// `self == other` as a 1 / 0 mask in the operands' dtype, with broadcasting.
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let a = Tensor::from_slice(&kit, &[1.0f32, f32::NAN, -0.0], &[3, 1])?;
    /// let b = Tensor::from_slice(&kit, &[1.0f32, 0.0], &[2])?;
    /// assert_eq!(a.eq(&b)?.to_vec::<f32>()?, [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: as [`Tensor::compare_as`].
    pub fn eq(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Eq, other)
    }

    /// `self != other` (true where either is NaN). Errors: as [`Tensor::compare_as`].
    pub fn ne(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Ne, other)
    }

    /// `self < other`. Errors: as [`Tensor::compare_as`].
    pub fn lt(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Lt, other)
    }

    /// `self <= other`. Errors: as [`Tensor::compare_as`].
    pub fn le(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Le, other)
    }

    /// `self > other`. Errors: as [`Tensor::compare_as`].
    pub fn gt(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Gt, other)
    }

    /// `self >= other`. Errors: as [`Tensor::compare_as`].
    pub fn ge(&self, other: &Tensor) -> Result<Tensor> {
        self.compare(CmpOp::Ge, other)
    }

    /// `self == v`. Errors: as [`Tensor::compare_scalar`].
    pub fn eq_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Eq, v)
    }

    /// `self != v`. Errors: as [`Tensor::compare_scalar`].
    pub fn ne_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Ne, v)
    }

    /// `self < v`. Errors: as [`Tensor::compare_scalar`].
    pub fn lt_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Lt, v)
    }

    /// `self <= v`. Errors: as [`Tensor::compare_scalar`].
    pub fn le_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Le, v)
    }

    /// `self > v`.
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[-1.0f32, 0.0, 2.5], &[3])?;
    /// assert_eq!(x.gt_scalar(0.0)?.to_vec::<f32>()?, [0.0, 0.0, 1.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: as [`Tensor::compare_scalar`].
    pub fn gt_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Gt, v)
    }

    /// `self >= v`. Errors: as [`Tensor::compare_scalar`].
    pub fn ge_scalar(&self, v: f64) -> Result<Tensor> {
        self.compare_scalar(CmpOp::Ge, v)
    }

    /// numpy's `where(self, a, b)` with `self` the condition (any dtype; nonzero, NaN
    /// included, is true): `a` where true, `b` elsewhere, the three broadcast to one
    /// shape; `a` and `b` share one dtype, the result's. Callable as
    /// `Tensor::where_(&cond, &a, &b)` or `cond.where_(&a, &b)`.
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[-1.0f32, 2.0, -3.0, 4.0], &[2, 2])?;
    /// let zero = Tensor::from_slice(&kit, &[0.0f32], &[])?;
    /// // relu by hand: x where x > 0, else 0 (a scalar broadcast).
    /// let y = Tensor::where_(&x.gt_scalar(0.0)?, &x, &zero)?;
    /// assert_eq!(y.to_vec::<f32>()?, [0.0, 2.0, 0.0, 4.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`] naming `where` and the shapes that do not broadcast;
    /// [`Error::DType`] when `a` and `b` differ in dtype; [`Error::DeviceMismatch`].
    pub fn where_(&self, a: &Tensor, b: &Tensor) -> Result<Tensor> {
        let name = "where";
        let d = a.same_dtype(name, b)?;
        let (dims, xs) = Tensor::broadcast_all(name, &[self, a, b])?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(d, layout::numel(name, &dims)?)?,
            self.kit.clone(),
            &dims,
        );
        gpukit_ops::where_(&self.kit, &out.buf, &xs[0].buf, &xs[1].buf, &xs[2].buf)?;
        Ok(out)
    }

    /// `op(self != 0, other != 0)` as a 1 / 0 mask in the operands' dtype, with
    /// broadcasting (`not` ignores `other`: use [`Tensor::not`]).
    ///
    /// Errors: as [`Tensor::compare_as`].
    pub fn logical(&self, op: LogicOp, other: &Tensor) -> Result<Tensor> {
        if op == LogicOp::Not {
            return self.not();
        }
        let name = op.name();
        let d = self.same_dtype(name, other)?;
        let (dims, xs) = Tensor::broadcast_all(name, &[self, other])?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(d, layout::numel(name, &dims)?)?,
            self.kit.clone(),
            &dims,
        );
        gpukit_ops::logical(&self.kit, &out.buf, &xs[0].buf, &xs[1].buf, op)?;
        Ok(out)
    }

    /// Both nonzero (masks of one dtype), 1 / 0. Errors: as [`Tensor::logical`].
    pub fn and(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicOp::And, other)
    }

    /// Either nonzero, 1 / 0. Errors: as [`Tensor::logical`].
    pub fn or(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicOp::Or, other)
    }

    /// Exactly one nonzero, 1 / 0. Errors: as [`Tensor::logical`].
    pub fn xor(&self, other: &Tensor) -> Result<Tensor> {
        self.logical(LogicOp::Xor, other)
    }

    /// 1 where zero (-0.0 included), 0 elsewhere (NaN is true, so 0), in this tensor's
    /// dtype.
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let m = Tensor::from_slice(&kit, &[0i32, 3, -1, 0], &[4])?;
    /// assert_eq!(m.not()?.to_vec::<i32>()?, [1, 0, 0, 1]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: allocation and op errors of the kit.
    #[allow(clippy::should_implement_trait)]
    pub fn not(&self) -> Result<Tensor> {
        let x = self.contiguous()?;
        let out = self.alloc_mask(&self.dims, self.dtype())?;
        gpukit_ops::logical_not(&self.kit, &out.buf, &x.buf)?;
        Ok(out)
    }

    fn alloc_mask(&self, dims: &[usize], dtype: DType) -> Result<Tensor> {
        Ok(Tensor::contiguous_from(
            self.kit.alloc(dtype, layout::numel("not", dims)?)?,
            self.kit.clone(),
            dims,
        ))
    }
}
