//! gpukit's operator family: validation, shape rules and dispatch, written against
//! `gpukit-core` only.
//!
//! Every op validates everything (that each buffer is present and on the kit, dtypes,
//! lengths against the shape, forbidden overlaps, index ranges) before any memory is
//! touched, then launches the backend's built-in kernel `{op}_{dtype}` from the table
//! in [`gpukit_core::abi`]. The numerics of each op are the contract's
//! (docs/numerics.md); the reference oracle (`gpukit-reference`) is its executable form.
//!
//! The arithmetic core lives here: elementwise binary ops (same shape and N-D stride
//! broadcast), unary maps (and user maps), matmul and batched matmul, gather and
//! scatter along an axis, row softmax, sum and dot; `cast` between every pair of
//! dtypes; comparisons, `where_` and logical ops on masks.

mod attention;
mod attention_general;
mod cast;
mod check;
mod compare;
mod conv;
mod elements;
mod elementwise;
mod index;
mod linalg;
mod linear;
mod movement;
mod norm;
mod norm_ext;
mod reduce;
mod reduce_axes;
mod resize;

pub use attention::*;
pub use attention_general::*;
pub use cast::cast;
pub use check::numel;
pub use compare::{CmpOp, LogicOp, compare, logical, logical_not, where_};
pub use conv::*;
pub use elements::{cumsum, gather_elements, pad, pad_out_dims, scatter_elements, topk};
pub use elementwise::{
    MapFn, abs, add, binary, binary_broadcast, div, exp, log, map, mul, neg, relu, rsqrt, sigmoid,
    silu, softplus, sqrt, sub, tanh, unary,
};
pub use elementwise::{cos, pow, sin};
pub use gpukit_core::elements::ScatterReduction;
pub use gpukit_core::numeric::{BinaryOp, UnaryOp};
pub use gpukit_core::pad::PadMode;
pub use index::{gather, scatter};
pub use linalg::{bmm, matmul};
pub use linear::{linear, linear_out_dims, matmul_broadcast, matmul_broadcast_dims};
pub use movement::*;
pub use norm::*;
pub use norm_ext::*;
pub use reduce::{dot, softmax_rows, sum};
pub use reduce_axes::{AxesPlan, ReduceOp, reduce_axes, reduce_out_dims};
pub use resize::{
    CoordMode, NearestMode, ResizeMode, ResizePlan, ResizeSpec, ResizeTarget, resize,
    resize_out_dims,
};
