//! Trigonometric maps and powers on tensors: `sin`, `cos` (the portable functions of
//! `gpukit_core::math`, for rotary embeddings and ONNX Sin / Cos) and `pow` (ONNX Pow).

use gpukit_core::numeric::{BinaryOp, UnaryOp};
use gpukit_core::{Error, Result};

use crate::Tensor;

impl Tensor {
    /// `sin(x)` elementwise with gpukit's portable sin: exact argument reduction for
    /// every finite input, within 0.5 ulp plus a hair for f32 (the table in
    /// docs/numerics.md); `sin(±inf)` is NaN, `sin(-0.0) = -0.0`. f16/bf16 compute in
    /// f32. Returns a new contiguous tensor of the same shape and dtype.
    ///
    /// Errors: as [`Tensor::unary`] ([`gpukit_core::Error::DType`] for an integer dtype).
    pub fn sin(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sin)
    }

    /// `cos(x)` elementwise with gpukit's portable cos (as [`Tensor::sin`]); `cos(±inf)`
    /// is NaN, `cos(±0) = 1`. Returns a new contiguous tensor of the same shape and dtype.
    ///
    /// Errors: as [`Tensor::unary`].
    pub fn cos(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Cos)
    }

    /// `self^exponent` elementwise with numpy broadcasting: gpukit's portable `pow` for
    /// floats (faithfully rounded: under 0.65 ulp for f32 and 0.6 ulp for f64 on normal
    /// results, docs/numerics.md; C99 special values: `x^0 = 1` and `1^y = 1` even for
    /// NaN, `(-8)^(1/3)` is NaN, `(-2)^3 = -8`, `0^-1 = inf`); f16/bf16 compute in f32.
    /// Integers: the wrapping power, a negative exponent truncating `1 / x^n` to 0
    /// (except bases 1 and -1).
    ///
    /// The exponent may have another dtype, as ONNX Pow allows: a float exponent of a
    /// float base is converted to the base's dtype first (rounding to nearest even),
    /// an integer exponent of a float base is converted to the base's dtype, an integer
    /// exponent of an integer base likewise. Returns a new contiguous tensor of the
    /// broadcast shape in the base's dtype.
    ///
    /// Errors: [`Error::DType`] for an integer base with a float exponent (ONNX computes
    /// those in floating point and truncates; gpukit does not guess); those of
    /// [`Tensor::binary`] ([`Error::Shape`] for shapes that do not broadcast).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let x = gpukit_tensor::Tensor::from_slice(&kit, &[4.0f32, -2.0, 0.0], &[3])?;
    /// let e = gpukit_tensor::Tensor::from_slice(&kit, &[0.5f32, 3.0, -1.0], &[3])?;
    /// assert_eq!(x.pow(&e)?.to_vec::<f32>()?, [2.0, -8.0, f32::INFINITY]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    pub fn pow(&self, exponent: &Tensor) -> Result<Tensor> {
        let (bd, ed) = (self.dtype(), exponent.dtype());
        if bd == ed {
            return self.binary(BinaryOp::Pow, exponent);
        }
        if !bd.is_float() && ed.is_float() {
            return Err(Error::DType {
                op: format!("pow (exponent of an {bd} base)"),
                expected: "an integer exponent".into(),
                got: ed,
            });
        }
        self.binary(BinaryOp::Pow, &exponent.to_dtype(bd)?)
    }

    /// `self^v` with `v` converted once to the tensor's dtype (see
    /// [`Tensor::binary_scalar`]); `x.pow_scalar(2.0)` squares with the portable pow
    /// (a correctly rounded `x * x` is [`Tensor::mul`]).
    ///
    /// Errors: as [`Tensor::binary_scalar`].
    pub fn pow_scalar(&self, v: f64) -> Result<Tensor> {
        self.binary_scalar(BinaryOp::Pow, v)
    }
}
