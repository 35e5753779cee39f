//! A value of a running graph: a tensor and its ONNX element type.

use gpukit_core::{DType, Result};
use gpukit_ops::CmpOp;
use gpukit_tensor::Tensor;

use crate::elem::ElemType;

/// A tensor with its ONNX element type: the type tells `bool` (stored as 0/1 in i32)
/// from `int32`; every other type is the tensor's dtype.
#[derive(Clone, Debug)]
pub struct Value {
    pub(crate) t: Tensor,
    pub(crate) ty: ElemType,
}

impl Value {
    /// A value of the tensor's own dtype.
    pub fn new(t: Tensor) -> Value {
        let ty = ElemType::of_dtype(t.dtype());
        Value { t, ty }
    }

    /// A bool value from a 0/1 i32 tensor (any other dtype is converted first).
    ///
    /// Errors: those of the conversion.
    pub fn bool_mask(t: Tensor) -> Result<Value> {
        let t = if t.dtype() == DType::I32 {
            t
        } else {
            t.to_dtype(DType::I32)?
        };
        Ok(Value {
            t,
            ty: ElemType::Bool,
        })
    }

    /// A bool value that is true where `t` is nonzero (NaN included): ONNX's cast to
    /// bool, and how a bool input is read from any integer tensor.
    pub(crate) fn nonzero(t: &Tensor) -> Result<Value> {
        Ok(Value {
            t: mask(t, CmpOp::Ne, 0.0)?,
            ty: ElemType::Bool,
        })
    }

    /// The tensor (for `Bool`: i32 0/1).
    pub fn tensor(&self) -> &Tensor {
        &self.t
    }

    /// The tensor, by value.
    pub fn into_tensor(self) -> Tensor {
        self.t
    }

    /// The ONNX element type.
    pub fn ty(&self) -> ElemType {
        self.ty
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        self.t.dims()
    }
}

/// The 0/1 i32 mask of `t op v`, `v` converted once to `t`'s dtype.
pub(crate) fn mask(t: &Tensor, op: CmpOp, v: f64) -> Result<Tensor> {
    t.compare_as(op, &Tensor::full(t.kit(), &[], v, t.dtype())?, DType::I32)
}
