//! The kernel ABI: every built-in kernel's name and argument list, in one table that
//! the operator family (which launches them) and every backend (which implements them)
//! read, so names and argument orders cannot drift.
//!
//! Names are `{op}_{dtype}` ([`kernel_name`]). Arguments are passed in the order given;
//! `buf` arguments are device buffers of the kernel's dtype unless marked otherwise,
//! scalars are i64. Shapes are row-major and contiguous unless a stride says otherwise.
//! Ops validate everything (shapes, lengths, dtypes, overlaps, index ranges) before a
//! launch; kernels may assume valid arguments, but a CPU kernel still never reads or
//! writes outside the buffers it was given. A raw launch is checked by
//! [`check_args`] (lengths against scalars, every backend) and [`check_contents`]
//! (what index buffers hold, on the backends that can read them: CPU, emulator).

use crate::DType;

pub mod attention;
pub mod cast;
mod check;
pub mod compare;
pub mod contents;
pub mod conv;
pub mod elements;
pub mod movement;
pub mod norm;
pub mod norm_ext;
pub mod reduce_axes;
pub mod resize;
use crate::numeric::{FLOAT_DTYPES, INT_DTYPES};
pub use check::check_args;
pub use contents::check_contents;

/// One built-in kernel family: the op, the dtypes it is instantiated for, its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSig {
    /// The op part of the name.
    pub op: &'static str,
    /// Dtypes it exists for (`{op}_{dtype}` for each).
    pub dtypes: &'static [DType],
    /// The argument list, in order, as documentation.
    pub args: &'static str,
}

/// All six dtypes.
pub const ALL_DTYPES: [DType; 6] = DType::ALL;
const FLOATS: &[DType] = &FLOAT_DTYPES;
const ALL: &[DType] = &ALL_DTYPES;
const I64_ONLY: &[DType] = &[DType::I64];
const _: [DType; 2] = INT_DTYPES;

/// The table of every built-in kernel.
pub const KERNELS: &[KernelSig] = &[
    // Elementwise binary, same shape: out[i] = op(a[i], b[i]) for i < n. `out` may be
    // exactly `a` or `b` (in place); no other overlap.
    KernelSig {
        op: "add",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, n",
    },
    KernelSig {
        op: "sub",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, n",
    },
    KernelSig {
        op: "mul",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, n",
    },
    KernelSig {
        op: "div",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, n",
    },
    // a^b: gpukit's portable pow for floats (C99 special values), numeric::int_pow for
    // integers.
    KernelSig {
        op: "pow",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, n",
    },
    // Elementwise binary with N-D stride broadcast: out is contiguous over `dims`
    // (ndim entries, ndim >= 1); a and b are read at sum(coord[d] * stride[d]) with
    // strides in elements (0 = broadcast). `dims`, `astr`, `bstr` are i64 buffers.
    KernelSig {
        op: "add_bc",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, dims: buf<i64>, astr: buf<i64>, bstr: buf<i64>, ndim, n_out",
    },
    KernelSig {
        op: "sub_bc",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, dims: buf<i64>, astr: buf<i64>, bstr: buf<i64>, ndim, n_out",
    },
    KernelSig {
        op: "mul_bc",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, dims: buf<i64>, astr: buf<i64>, bstr: buf<i64>, ndim, n_out",
    },
    KernelSig {
        op: "div_bc",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, dims: buf<i64>, astr: buf<i64>, bstr: buf<i64>, ndim, n_out",
    },
    KernelSig {
        op: "pow_bc",
        dtypes: ALL,
        args: "out: buf, a: buf, b: buf, dims: buf<i64>, astr: buf<i64>, bstr: buf<i64>, ndim, n_out",
    },
    // Unary maps: out[i] = f(a[i]) for i < n; `out` may be exactly `a`.
    KernelSig {
        op: "relu",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "sigmoid",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "exp",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "tanh",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "sqrt",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "log",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    // The maps added for models (numeric::{abs, neg, rsqrt, silu, softplus}): abs and
    // neg change only the sign bit; rsqrt = 1 / sqrt(x) (two roundings); silu = x *
    // sigmoid(x); softplus = log(1 + exp(x)) in the overflow-free form of the contract.
    KernelSig {
        op: "abs",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "neg",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "rsqrt",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "silu",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "softplus",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    // Trigonometric maps (math::{sin, cos}_{f32, f64}): exact Payne-Hanek style
    // reduction by 26-bit chunks of 2/pi, Taylor kernels in f64 (f32 rounds once).
    KernelSig {
        op: "sin",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    KernelSig {
        op: "cos",
        dtypes: FLOATS,
        args: "out: buf, a: buf, n",
    },
    // Batched matmul: for each batch i < batch, C_i[m×n] = A_i[m×k] · B_i[k×n] with
    // A_i at a + i*a_bstride and B_i at b + i*b_bstride (elements; 0 = broadcast), C
    // contiguous [batch, m, n]. c[r][j] = fma chain over t = 0..k ascending from +0.0,
    // in the compute type; stored once. Matmul is batch = 1. `c` overlaps nothing.
    KernelSig {
        op: "bmm",
        dtypes: FLOATS,
        args: "c: buf, a: buf, b: buf, batch, m, k, n, a_bstride, b_bstride",
    },
    // Gather along an axis: data [outer, axis_len, inner], idx [nidx] (i64, already
    // checked in range; negative counts from the end), out [outer, nidx, inner].
    KernelSig {
        op: "gather",
        dtypes: ALL,
        args: "out: buf, data: buf, idx: buf<i64>, outer, axis_len, inner, nidx",
    },
    // Scatter along an axis: y [outer, axis_len, inner] already holds the data;
    // y[o, idx[g], i] = upd[o, g, i]; with duplicate indices the largest g wins (each
    // (o, i) column is written in ascending g). `y` overlaps neither idx nor upd.
    KernelSig {
        op: "scatter",
        dtypes: ALL,
        args: "y: buf, idx: buf<i64>, upd: buf, outer, axis_len, inner, nidx",
    },
    // Index check: result[0] = the first position p < n with idx[p] outside
    // [-axis_len, axis_len), or -1 if none. `result` is an i64 buffer of one element.
    KernelSig {
        op: "check_index",
        dtypes: I64_ONLY,
        args: "idx: buf, n, axis_len, result: buf",
    },
    // Row softmax over a [rows, cols] matrix: per row, m = max_nan over the row (any
    // order: max_nan is order-independent), e_j = exp(x_j - m), s = the reduction shape's
    // sum of e_j (j ascending), out_j = e_j / s; computed in the compute type, stored once.
    // `out` may be exactly `a`.
    KernelSig {
        op: "softmax",
        dtypes: FLOATS,
        args: "out: buf, a: buf, rows, cols",
    },
    // Sum: out[0] = the reduction shape's sum of a[0..n] in the compute type (i64/i32:
    // wrapping), stored once. `out` has one element.
    KernelSig {
        op: "sum",
        dtypes: ALL,
        args: "out: buf, a: buf, n",
    },
    // Dot: out[0] = the reduction shape with step acc = fma(a[i], b[i], acc) and combine
    // +, in the compute type, stored once.
    KernelSig {
        op: "dot",
        dtypes: FLOATS,
        args: "out: buf, a: buf, b: buf, n",
    },
];

/// The kernel name for `op` at `dtype`: `{op}_{dtype}` (`add_f32`).
pub fn kernel_name(op: &str, dtype: DType) -> String {
    format!("{op}_{}", dtype.name())
}

/// Every kernel signature: the arithmetic core ([`KERNELS`]), the neural-network
/// groups ([`conv`], [`norm`], [`attention`], [`movement`]), the casts ([`cast`]), the
/// reductions along axes ([`reduce_axes`]), the comparison / select / logical groups
/// ([`compare`]) and the general resize ([`resize`]).
pub fn all_kernels() -> impl Iterator<Item = &'static KernelSig> {
    KERNELS
        .iter()
        .chain(conv::KERNELS)
        .chain(norm::KERNELS)
        .chain(norm_ext::KERNELS)
        .chain(attention::KERNELS)
        .chain(movement::KERNELS)
        .chain(cast::KERNELS)
        .chain(reduce_axes::KERNELS)
        .chain(compare::KERNELS)
        .chain(resize::KERNELS)
        // Element-wise gather / scatter (ONNX GatherElements, ScatterElements).
        .chain(elements::KERNELS)
}

/// Every built-in kernel name, in table order.
pub fn all_kernel_names() -> Vec<String> {
    all_kernels()
        .flat_map(|s| s.dtypes.iter().map(move |&d| kernel_name(s.op, d)))
        .collect()
}

/// The signature of `op`, if it is in the table.
pub fn signature(op: &str) -> Option<&'static KernelSig> {
    all_kernels().find(|s| s.op == op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut v = all_kernel_names();
        let n = v.len();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), n);
        assert!(v.contains(&"bmm_bf16".to_string()));
        assert!(v.contains(&"check_index_i64".to_string()));
    }
}
