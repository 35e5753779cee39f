//! Trigonometric maps and powers on tensors: `sin`, `cos` (the portable functions of
//! `gpukit_core::math`, for rotary embeddings and ONNX Sin / Cos).

use gpukit_core::Result;
use gpukit_core::numeric::UnaryOp;

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
}
