//! Math on tensors: numpy-broadcast binary ops (and `std::ops`), scalar operands, unary
//! maps and activations, softmax, layer norm, sum, argmax, L2 norm (matmul, linear and
//! gemm are in `linalg.rs`).
//! Each method computes shapes and strides and calls one op of `gpukit_ops`, so the
//! bits are that op's.

#[cfg(doc)]
use gpukit_core::Error;
use gpukit_core::numeric::{BinaryOp, UnaryOp};
use gpukit_core::{DType, Result};
use gpukit_ops::{LayerNorm, MapFn};

use crate::Tensor;
use crate::layout::{self, shape_err};

impl Tensor {
    /// A fresh contiguous output of `dims` and `dtype` on this tensor's kit.
    pub(crate) fn alloc_like(&self, dims: &[usize], dtype: DType) -> Result<Tensor> {
        let n = layout::numel("alloc", dims)?;
        Ok(Tensor::contiguous_from(
            self.kit.alloc(dtype, n)?,
            self.kit.clone(),
            dims,
        ))
    }

    /// The tensor itself when its strides are all non-negative (readable by strided
    /// ops), otherwise a contiguous copy.
    fn nonneg(&self) -> Result<Tensor> {
        if self.strides.iter().all(|&s| s >= 0) {
            Ok(self.clone())
        } else {
            self.contiguous()
        }
    }

    /// `op(self, other)` elementwise with numpy broadcasting, through the
    /// `binary_broadcast` op (one IEEE operation per element; integer division by the
    /// contract's rule). Both operands must have one dtype (any of the six).
    ///
    /// Errors: [`Error::Shape`] naming the op, both shapes and the axis that does not
    /// broadcast; [`Error::DType`] for mixed dtypes; [`Error::DeviceMismatch`] for
    /// tensors on different kits.
    pub fn binary(&self, op: BinaryOp, other: &Tensor) -> Result<Tensor> {
        let name = op.name();
        let d = self.same_dtype(name, other)?;
        let dims = layout::broadcast_shapes(name, &self.dims, &other.dims)?;
        let out = self.alloc_like(&dims, d)?;
        let (a, b) = (self.nonneg()?, other.nonneg()?);
        let conv = |t: &Tensor| -> Vec<usize> {
            layout::broadcast_strides(&t.dims, &t.strides, &dims)
                .into_iter()
                .map(|s| s as usize)
                .collect()
        };
        let (sa, sb) = (conv(&a), conv(&b));
        gpukit_ops::binary_broadcast(
            &self.kit,
            op,
            &out.buf,
            &dims,
            &a.span_buf()?,
            &sa,
            &b.span_buf()?,
            &sb,
        )?;
        Ok(out)
    }

    /// `self + other` with broadcasting. Errors: as [`Tensor::binary`].
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let a = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 2.0], &[2, 1])?;
    /// let b = gpukit_tensor::Tensor::from_slice(&kit, &[10.0f32, 20.0, 30.0], &[3])?;
    /// assert_eq!(a.add(&b)?.to_vec::<f32>()?, [11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Add, other)
    }

    /// `self - other` with broadcasting. Errors: as [`Tensor::binary`].
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Sub, other)
    }

    /// `self * other` with broadcasting. Errors: as [`Tensor::binary`].
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Mul, other)
    }

    /// `self / other` with broadcasting. Errors: as [`Tensor::binary`].
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        self.binary(BinaryOp::Div, other)
    }

    /// `op(self, v)` with `v` converted once to the tensor's dtype (floats round to
    /// nearest even), broadcast from one element.
    ///
    /// Errors: [`Error::Conversion`] for a value an integer dtype cannot hold exactly;
    /// those of [`Tensor::binary`].
    pub fn binary_scalar(&self, op: BinaryOp, v: f64) -> Result<Tensor> {
        let s = Tensor::contiguous_from(
            self.kit.upload_f64(self.dtype(), &[v])?,
            self.kit.clone(),
            &[],
        );
        self.binary(op, &s)
    }

    /// `self + v`. Errors: as [`Tensor::binary_scalar`].
    pub fn add_scalar(&self, v: f64) -> Result<Tensor> {
        self.binary_scalar(BinaryOp::Add, v)
    }

    /// `self - v`. Errors: as [`Tensor::binary_scalar`].
    pub fn sub_scalar(&self, v: f64) -> Result<Tensor> {
        self.binary_scalar(BinaryOp::Sub, v)
    }

    /// `self * v`. Errors: as [`Tensor::binary_scalar`].
    pub fn mul_scalar(&self, v: f64) -> Result<Tensor> {
        self.binary_scalar(BinaryOp::Mul, v)
    }

    /// `self / v`. Errors: as [`Tensor::binary_scalar`].
    pub fn div_scalar(&self, v: f64) -> Result<Tensor> {
        self.binary_scalar(BinaryOp::Div, v)
    }

    /// [`Tensor::unary`] taking the tensor by value: when it is the only handle on its
    /// buffer (no clone or view of it alive) and covers that buffer contiguously, the
    /// result is written over it in place (no allocation, the same bits: each element
    /// is read before its result is written); otherwise exactly [`Tensor::unary`].
    ///
    /// Errors: as [`Tensor::unary`].
    pub fn unary_owned(self, op: UnaryOp) -> Result<Tensor> {
        if self.reusable() {
            gpukit_ops::unary(&self.kit, op, &self.buf, &self.buf)?;
            return Ok(self);
        }
        self.unary(op)
    }

    /// [`Tensor::binary`] taking the left operand by value: written over it in place
    /// when it is the only handle on its buffer, covers it contiguously, and `other`
    /// has the same dims and dtype (no broadcast); otherwise exactly
    /// [`Tensor::binary`]. The same bits either way.
    ///
    /// Errors: as [`Tensor::binary`].
    pub fn binary_owned(self, op: BinaryOp, other: &Tensor) -> Result<Tensor> {
        if self.reusable() && other.dims() == self.dims() && other.dtype() == self.dtype() {
            let b = other.contiguous()?;
            gpukit_ops::binary(&self.kit, op, &self.buf, &self.buf, &b.buf)?;
            return Ok(self);
        }
        self.binary(op, other)
    }

    /// Whether an op may write its result over this tensor: the only handle on its
    /// buffer, row-major from the buffer's first element to its last.
    fn reusable(&self) -> bool {
        self.buf.is_unique()
            && self.offset == 0
            && self.is_contiguous()
            && self.buf.len() == self.numel()
    }

    /// `op(self)` elementwise with the `unary` op (float dtypes).
    ///
    /// Errors: [`Error::DType`] for an integer dtype.
    pub fn unary(&self, op: UnaryOp) -> Result<Tensor> {
        let x = self.contiguous()?;
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::unary(&self.kit, op, &out.buf, &x.buf)?;
        Ok(out)
    }

    /// A user map ([`MapFn`]) elementwise (float dtypes). Errors: as [`Tensor::unary`].
    pub fn map(&self, f: &MapFn) -> Result<Tensor> {
        let x = self.contiguous()?;
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::map(&self.kit, f, &out.buf, &x.buf)?;
        Ok(out)
    }

    /// Runs an elementwise activation op `f(kit, out, x)` on a contiguous copy.
    fn activation(
        &self,
        f: impl FnOnce(&gpukit_core::Kit, &gpukit_core::Buf, &gpukit_core::Buf) -> Result<()>,
    ) -> Result<Tensor> {
        let x = self.contiguous()?;
        let out = self.alloc_like(&self.dims, self.dtype())?;
        f(&self.kit, &out.buf, &x.buf)?;
        Ok(out)
    }

    /// `exp` elementwise (gpukit's portable exp). Errors: as [`Tensor::unary`].
    pub fn exp(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Exp)
    }

    /// Natural log elementwise. Errors: as [`Tensor::unary`].
    pub fn log(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Log)
    }

    /// `tanh` elementwise. Errors: as [`Tensor::unary`].
    pub fn tanh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Tanh)
    }

    /// Sigmoid elementwise. Errors: as [`Tensor::unary`].
    pub fn sigmoid(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sigmoid)
    }

    /// ReLU elementwise (NaN passes through). Errors: as [`Tensor::unary`].
    pub fn relu(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Relu)
    }

    /// Square root elementwise (correctly rounded). Errors: as [`Tensor::unary`].
    pub fn sqrt(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sqrt)
    }

    /// Absolute value elementwise. Floats: the sign bit cleared, nothing else changed
    /// (`-0.0` gives `+0.0`; a NaN stays NaN; the `abs` map). Integers (i64, i32):
    /// `x < 0 ? 0 - x : x` with wrapping (`compare`, `sub` and `where`; `|MIN| = MIN`).
    ///
    /// Errors: none beyond a device error (every dtype is accepted).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[-1.5f32, 0.0, 2.0], &[3])?;
    /// assert_eq!(t.abs()?.to_vec::<f32>()?, [1.5, 0.0, 2.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn abs(&self) -> Result<Tensor> {
        if self.dtype().is_float() {
            self.unary(UnaryOp::Abs)
        } else {
            Tensor::where_(&self.lt_scalar(0.0)?, &self.neg()?, self)
        }
    }

    /// Negation elementwise, also `-&t`. Floats: the sign bit flipped (the `neg`
    /// map; `+0.0` gives `-0.0`). Integers (i64, i32): `0 - x` with wrapping (the
    /// `sub` op; `-MIN = MIN`).
    ///
    /// Errors: none beyond a device error (every dtype is accepted).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, -2.0], &[2])?;
    /// assert_eq!((-&t)?.to_vec::<f32>()?, [-1.0, 2.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn neg(&self) -> Result<Tensor> {
        if self.dtype().is_float() {
            self.unary(UnaryOp::Neg)
        } else {
            let zero = Tensor::contiguous_from(
                self.kit.upload_f64(self.dtype(), &[0.0])?,
                self.kit.clone(),
                &[],
            );
            zero.binary(BinaryOp::Sub, self)
        }
    }

    /// `1 / sqrt(x)` elementwise: correctly rounded square root, then correctly rounded
    /// division (two roundings). Errors: as [`Tensor::unary`].
    pub fn rsqrt(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Rsqrt)
    }

    /// SiLU (swish), `x * sigmoid(x)`, elementwise with gpukit's sigmoid; `-inf` gives
    /// `-0.0`. Errors: as [`Tensor::unary`].
    pub fn silu(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Silu)
    }

    /// Softplus, `log(1 + exp(x))` (ONNX Softplus), elementwise in the contract's
    /// overflow-free form (docs/numerics.md). Errors: as [`Tensor::unary`].
    pub fn softplus(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Softplus)
    }

    /// GELU, exact erf form (ONNX Gelu), via the `gelu` op. Errors: [`Error::DType`]
    /// for an integer dtype.
    pub fn gelu(&self) -> Result<Tensor> {
        self.activation(gpukit_ops::gelu)
    }

    /// GELU, tanh approximation, via the `gelu_tanh` op. Errors: as [`Tensor::gelu`].
    pub fn gelu_tanh(&self) -> Result<Tensor> {
        self.activation(gpukit_ops::gelu_tanh)
    }

    /// The error function elementwise, via the `erf` op. Errors: as [`Tensor::gelu`].
    pub fn erf(&self) -> Result<Tensor> {
        self.activation(gpukit_ops::erf)
    }

    /// Leaky ReLU with slope `alpha`, via the `leaky_relu` op.
    ///
    /// Errors: [`Error::InvalidArgument`] for a non-finite `alpha`; as [`Tensor::gelu`].
    pub fn leaky_relu(&self, alpha: f64) -> Result<Tensor> {
        self.activation(|k, o, x| gpukit_ops::leaky_relu(k, o, x, alpha))
    }

    /// Clamp to `[lo, hi]` (ONNX Clip), via the `clip` op; `lo > hi` gives `hi` for
    /// every non-NaN element (ONNX's rule).
    ///
    /// Errors: [`Error::InvalidArgument`] for a NaN bound; as
    /// [`Tensor::gelu`].
    pub fn clip(&self, lo: f64, hi: f64) -> Result<Tensor> {
        self.activation(|k, o, x| gpukit_ops::clip(k, o, x, lo, hi))
    }

    /// Softmax along `axis` (ONNX Softmax, opset 13) via the `softmax_axis` op.
    ///
    /// Errors: [`Error::InvalidArgument`] naming the axis and shape when the axis is
    /// out of range (a rank-0 tensor has none); [`Error::DType`] for integer dtypes.
    pub fn softmax(&self, axis: i64) -> Result<Tensor> {
        layout::axis("softmax", axis, &self.dims)?;
        let x = self.contiguous()?;
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::softmax_axis(&self.kit, &out.buf, &x.buf, &self.dims, axis)?;
        Ok(out)
    }

    /// Layer normalisation over the last axis (ONNX LayerNormalization, `axis = -1`)
    /// with `weight` (scale) and `bias` of shape `[last dim]`, via the `layer_norm` op.
    ///
    /// Errors: [`Error::Shape`] for a rank-0 tensor or a weight/bias that is not
    /// `[last dim]`; [`Error::InvalidArgument`] for a negative or non-finite `eps`;
    /// [`Error::DType`] for mixed or integer dtypes.
    pub fn layer_norm(&self, weight: &Tensor, bias: &Tensor, eps: f64) -> Result<Tensor> {
        let op = "layer_norm";
        self.same_dtype(op, weight)?;
        self.same_dtype(op, bias)?;
        let Some(&n) = self.dims.last() else {
            return Err(shape_err(op, "x must have rank >= 1, got shape []".into()));
        };
        if weight.dims[..] != [n] || bias.dims[..] != [n] {
            return Err(shape_err(
                op,
                format!(
                    "x {:?} normalises axis -1 of length {n}: weight {:?} and bias {:?} must be [{n}]",
                    self.dims, weight.dims, bias.dims
                ),
            ));
        }
        let rows = self.dims[..self.rank() - 1].iter().product();
        let (x, w, b) = (self.contiguous()?, weight.contiguous()?, bias.contiguous()?);
        let out = self.alloc_like(&self.dims, self.dtype())?;
        gpukit_ops::layer_norm(
            &self.kit,
            &out.buf,
            &x.buf,
            &w.buf,
            &b.buf,
            LayerNorm { rows, n, eps },
        )?;
        Ok(out)
    }

    /// The sum of every element as a rank-0 tensor (the `sum` op's reduction shape; an
    /// empty tensor sums to 0). Any dtype (integers wrap).
    ///
    /// Errors: allocation and op errors.
    pub fn sum(&self) -> Result<Tensor> {
        let x = self.contiguous()?;
        let out = self.alloc_like(&[], self.dtype())?;
        gpukit_ops::sum(&self.kit, &out.buf, &x.buf)?;
        Ok(out)
    }

    /// Moves `axis` last and returns the contiguous `[rows, n]` data plus the dims
    /// without the axis (and with it as 1 when `keepdim`).
    fn axis_last(
        &self,
        op: &str,
        axis: i64,
        keepdim: bool,
    ) -> Result<(Tensor, usize, usize, Vec<usize>)> {
        let a = layout::axis(op, axis, &self.dims)?;
        let mut perm: Vec<i64> = (0..self.rank() as i64).filter(|&d| d != a as i64).collect();
        perm.push(a as i64);
        let x = self.permute(&perm)?.contiguous()?;
        let n = self.dims[a];
        let rows = self.numel().checked_div(n).unwrap_or(0);
        let mut dims = self.dims.to_vec();
        if keepdim {
            dims[a] = 1;
        } else {
            dims.remove(a);
        }
        Ok((x, rows, n, dims))
    }

    /// The index (i64) of the largest element along `axis` (first one on ties; NaN
    /// counts as largest), via the `argmax` op; the axis is removed unless `keepdim`.
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range; [`Error::Shape`]
    /// for an empty axis.
    pub fn argmax(&self, axis: i64, keepdim: bool) -> Result<Tensor> {
        let (x, rows, n, dims) = self.axis_last("argmax", axis, keepdim)?;
        if n == 0 {
            return Err(shape_err(
                "argmax",
                format!("axis {axis} of shape {:?} is empty", self.dims),
            ));
        }
        let out = self.alloc_like(&dims, DType::I64)?;
        gpukit_ops::argmax(&self.kit, &out.buf, &x.buf, rows, n)?;
        Ok(out)
    }

    /// The index (i64) of the largest element along `axis` with ONNX ArgMax's
    /// `select_last_index`: `last = false` is [`Tensor::argmax`] (the first index on
    /// ties), `last = true` the last index on ties (NaN counts as largest, so the last
    /// NaN). The last index is found exactly: the `argmax` op on the axis reversed (a
    /// view), then `n - 1 - i`.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 3.0, 3.0, 2.0], &[4])?;
    /// assert_eq!(t.argmax_select(0, false, false)?.to_vec::<i64>()?, [1]);
    /// assert_eq!(t.argmax_select(0, false, true)?.to_vec::<i64>()?, [2]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: as [`Tensor::argmax`].
    pub fn argmax_select(&self, axis: i64, keepdim: bool, last: bool) -> Result<Tensor> {
        if !last {
            return self.argmax(axis, keepdim);
        }
        let a = layout::axis("argmax", axis, &self.dims)?;
        let n = self.dims[a];
        let reversed = self.slice(&[a as i64], &[-1], &[i64::MIN], &[-1])?;
        let i = reversed.argmax(a as i64, keepdim)?;
        let top = Tensor::contiguous_from(
            self.kit.upload_f64(DType::I64, &[n as f64 - 1.0])?,
            self.kit.clone(),
            &[],
        );
        top.binary(BinaryOp::Sub, &i)
    }

    /// The index (i64) of the smallest element along `axis` (ONNX ArgMin): the first on
    /// ties (`last = false`) or the last (`last = true`); `±0` compare equal and NaN
    /// counts as smallest (the first, or last, NaN wins, as numpy's `argmin`). Computed
    /// exactly as the argmax of an order-reversing map: `-x` for floats (exact; NaN
    /// stays NaN), `-1 - x` for integers (no overflow: it maps MIN to MAX).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[4i64, 1, 7, 1], &[2, 2])?;
    /// assert_eq!(t.argmin(1, false, false)?.to_vec::<i64>()?, [1, 1]);
    /// assert_eq!(t.argmin(0, true, true)?.to_vec::<i64>()?, [0, 1]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: as [`Tensor::argmax`].
    pub fn argmin(&self, axis: i64, keepdim: bool, last: bool) -> Result<Tensor> {
        let a = layout::axis("argmin", axis, &self.dims)?;
        if self.dims[a] == 0 {
            return Err(shape_err(
                "argmin",
                format!("axis {axis} of shape {:?} is empty", self.dims),
            ));
        }
        let flipped = if self.dtype().is_float() {
            self.neg()?
        } else {
            let minus_one = Tensor::contiguous_from(
                self.kit.upload_f64(self.dtype(), &[-1.0])?,
                self.kit.clone(),
                &[],
            );
            minus_one.binary(BinaryOp::Sub, self)?
        };
        flipped.argmax_select(axis, keepdim, last)
    }

    /// The L2 norm along `axis` (ONNX ReduceL2 over one axis) via the `reduce_l2` op;
    /// the axis is removed unless `keepdim`.
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range; [`Error::DType`]
    /// for integer dtypes.
    pub fn norm_l2(&self, axis: i64, keepdim: bool) -> Result<Tensor> {
        let (x, rows, n, dims) = self.axis_last("norm_l2", axis, keepdim)?;
        let out = self.alloc_like(&dims, self.dtype())?;
        gpukit_ops::reduce_l2(&self.kit, &out.buf, &x.buf, rows, n)?;
        Ok(out)
    }

    /// The tensor converted to `dtype`, same shape, through the `cast` op
    /// ([`gpukit_ops::cast`]): to a float, one rounding of the exact value to nearest
    /// even (subnormals kept, overflow to ±inf, -0.0 and ±inf kept, NaN stays NaN);
    /// float to integer, truncation toward zero with NaN → 0 and saturation at the
    /// integer type's range; i64 → i32 wraps, i32 → i64 sign-extends. The same dtype
    /// returns the tensor itself (no copy). A view is made contiguous first.
    ///
    /// ```
    /// use gpukit_core::DType;
    /// use gpukit_tensor::Tensor;
    ///
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[1.5f64, -2.7, f64::NAN, 1e300], &[2, 2])?;
    /// assert_eq!(x.to_dtype(DType::I32)?.to_vec::<i32>()?, [1, -2, 0, i32::MAX]);
    /// let h = x.to_dtype(DType::F16)?.to_vec::<gpukit_core::half::f16>()?;
    /// assert_eq!((h[0].to_f32(), h[1].to_f32()), (1.5, -2.69921875));
    /// assert!(h[2].is_nan() && h[3].is_infinite());
    /// // A boolean-style mask: i64 0/1 to f32 0.0/1.0.
    /// let m = Tensor::from_slice(&kit, &[0i64, 1, 1], &[3])?.cast(DType::F32)?;
    /// assert_eq!(m.to_vec::<f32>()?, [0.0, 1.0, 1.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: those of [`Tensor::contiguous`] and allocation errors of the kit.
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let x = self.contiguous()?;
        let out = self.alloc_like(&self.dims, dtype)?;
        gpukit_ops::cast(&self.kit, &out.buf, &x.buf)?;
        Ok(out)
    }

    /// [`Tensor::to_dtype`] by its other name. Errors: as [`Tensor::to_dtype`].
    pub fn cast(&self, dtype: DType) -> Result<Tensor> {
        self.to_dtype(dtype)
    }
}

macro_rules! std_ops {
    ($tr:ident, $f:ident, $op:ident) => {
        impl std::ops::$tr<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            /// Elementwise with numpy broadcasting; see [`Tensor::binary`].
            fn $f(self, rhs: &Tensor) -> Result<Tensor> {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl std::ops::$tr<f64> for &Tensor {
            type Output = Result<Tensor>;
            /// With a scalar; see [`Tensor::binary_scalar`].
            fn $f(self, rhs: f64) -> Result<Tensor> {
                self.binary_scalar(BinaryOp::$op, rhs)
            }
        }
    };
}

std_ops!(Add, add, Add);
std_ops!(Sub, sub, Sub);
std_ops!(Mul, mul, Mul);
std_ops!(Div, div, Div);

impl std::ops::Neg for &Tensor {
    type Output = Result<Tensor>;
    /// Elementwise negation; see [`Tensor::neg`].
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(self)
    }
}
