//! Kernel signatures of the element-wise index group (ONNX GatherElements and
//! ScatterElements; the scalar rules are [`crate::elements`]).
//!
//! Both view the data as `[outer, axis_len, inner]` and the indices (i64, already
//! checked in `[-axis_len, axis_len)`; negative counts from the end) as
//! `[outer, nidx, inner]`, one index per element:
//!
//! - `gather_elements(out, data, idx, outer, axis_len, inner, nidx)`:
//!   `out[o, g, i] = data[o, idx[o, g, i], i]`, `out` `[outer, nidx, inner]`, bits
//!   copied. `out` overlaps nothing.
//! - `scatter_elements(y, idx, upd, outer, axis_len, inner, nidx, reduction)`: `y`
//!   already holds the data; for each `(o, i)` column, for `g = 0..nidx` ascending (the
//!   row-major order of `upd`), `y[o, r, i] = combine(reduction, y[o, r, i],
//!   upd[o, g, i])` with `r = idx[o, g, i]` ([`crate::elements::ScatterElem::combine`],
//!   `reduction` a [`crate::elements::ScatterReduction`] code `0..=4`). `y` overlaps
//!   neither `idx` nor `upd`.
//! - `pad(out, x, value, layout, ndim, mode, n_out)` (ONNX Pad): `layout` holds
//!   `[out | in | start | len | before]`, `ndim` i64 each; `x` is contiguous over `in`;
//!   per axis output coordinate `c` reads cropped coordinate
//!   `mode.source(c - before, len)` ([`crate::pad::PadMode::source`], `mode` a code
//!   `0..=3`) at `start + that`, or `value[0]` where any axis gives none; bits copied.
//!   `out` (`n_out` elements) overlaps nothing. Contents: [`super::contents::pad_layout`].
//! - `cumsum(y, x, outer, len, inner, exclusive, reverse)` (ONNX CumSum): `x` and `y`
//!   `[outer, len, inner]`; along each `(o, i)` line, in ascending position (descending
//!   when `reverse` is 1), the running sum `acc` starts as the line's first element
//!   loaded into the compute type ([`crate::numeric::Arith::acc_load`]) and folds each next one
//!   in with one rounding ([`crate::numeric::Arith::acc_step`]; integers wrap); the inclusive
//!   output is `acc_store(acc)` after each element, the exclusive one (`exclusive` 1)
//!   the value before it (`+0` / `0` for the line's first). `y` overlaps nothing.
//! - `topk(values, indices, x, outer, len, inner, k, largest)` (ONNX TopK, sorted): `x`
//!   `[outer, len, inner]`, `values` and `indices` (i64) `[outer, k, inner]`, `k <= len`,
//!   `largest` 0 or 1. Along each `(o, i)` line, output position `r` holds the element
//!   that exactly `r` others of the line beat ([`crate::topk::TopkElem::beats`]: by
//!   value, NaN above every number, ties to the lower position) and its position along the axis;
//!   values are bit copies. Neither output overlaps anything.

use super::{ALL_DTYPES, KernelSig};

const ALL: &[crate::DType] = &ALL_DTYPES;

/// The element-wise index kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    KernelSig {
        op: "gather_elements",
        dtypes: ALL,
        args: "out: buf, data: buf, idx: buf<i64>, outer, axis_len, inner, nidx",
    },
    KernelSig {
        op: "scatter_elements",
        dtypes: ALL,
        args: "y: buf, idx: buf<i64>, upd: buf, outer, axis_len, inner, nidx, reduction",
    },
    KernelSig {
        op: "pad",
        dtypes: ALL,
        args: "out: buf, x: buf, value: buf, layout: buf<i64>, ndim, mode, n_out",
    },
    KernelSig {
        op: "cumsum",
        dtypes: ALL,
        args: "y: buf, x: buf, outer, len, inner, exclusive, reverse",
    },
    KernelSig {
        op: "topk",
        dtypes: ALL,
        args: "values: buf, indices: buf<i64>, x: buf, outer, len, inner, k, largest",
    },
];
