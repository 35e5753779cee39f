//! gpukit's reference oracle: the numerics contract as an executable specification.
//!
//! Every function here is a plain, sequential loop that follows the contract literally
//! (design brief §3, docs/numerics.md). It is written for reading, not speed: every
//! backend (the CPU kernels, the CUDA kernels) is tested against it bit for bit, with the
//! equality of rule 8 ([`gpukit_core::numeric::same_bits`]: `to_bits()` equality for
//! every non-NaN value, signed zeros included; any NaN equals any NaN).
//!
//! The scalar rules are not restated here: each loop calls the one implementation of
//! them in [`gpukit_core::numeric`] (load/store of storage types, the binary and unary
//! ops, [`max_nan`], integer division) and the one implementation of the reduction shape
//! in [`gpukit_core::reduce`]. What this crate fixes is the loop structure around them:
//! which element is read, in which order partial results combine, and where the one
//! rounding store happens.
//!
//! Conventions shared by every function:
//!
//! * Host slices in, a freshly allocated `Vec` out; arrays are row-major.
//! * Float storage types follow rule 6: `load` is exact into the compute type
//!   ([`FloatElement::Real`]: f32 for f16/bf16/f32, f64 for f64), all arithmetic
//!   happens in the compute type, and the result is stored (rounded to nearest even for
//!   f16/bf16) exactly once per output element.
//! * Shape pre-conditions (slice lengths matching the dimensions) are the caller's job:
//!   the operator family validates them before it launches anything. The oracle checks
//!   them with `assert!` and panics with a message naming the function when they do not
//!   hold (see each function's `# Panics`). The one data-dependent failure that a valid
//!   shape can still hit, an out-of-range gather/scatter index, is returned as
//!   [`Error::IndexOutOfRange`], as the ops do (rule 7).

#![forbid(unsafe_code)]

mod attention;
mod attention_general;
mod cast;
mod compare;
mod conv;
mod elements;
mod linear;
mod movement;
mod norm;
mod norm_ext;
mod pad;
mod reduce_axes;
mod resize;

pub use attention::*;
pub use attention_general::attention_general;
pub use cast::cast;
pub use compare::{compare, logical, where_};
pub use conv::*;
pub use elements::{cumsum, gather_elements, scatter_elements, topk};
pub use linear::{linear, matmul_broadcast};
pub use movement::*;
pub use norm::*;
pub use norm_ext::*;
pub use pad::pad;
pub use reduce_axes::{ReduceElem, reduce_axes};
pub use resize::{resize_nd, resize_nearest_nd, resize_out_dims};

use gpukit_core::numeric::{Arith, BinaryOp, FloatElement, Real, UnaryOp, max_nan, resolve_index};
use gpukit_core::reduce::fold;
use gpukit_core::{Element, Error, Result};

/// The product of `dims`, panicking with `what` if it overflows `usize`.
fn numel(dims: &[usize], what: &str) -> usize {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or_else(|| {
            panic!("gpukit-reference::{what}: element count of {dims:?} overflows usize")
        })
}

/// Asserts that `slice_len == expected`, naming the function and the operand.
fn assert_len(what: &str, operand: &str, slice_len: usize, expected: usize) {
    assert!(
        slice_len == expected,
        "gpukit-reference::{what}: `{operand}` has {slice_len} elements, expected {expected}"
    );
}

/// Elementwise binary op on two same-shape arrays: `out[i] = op(a[i], b[i])`.
///
/// Rules: each element is one application of [`Arith::binary`]. Floats (rules 1 and 6):
/// load both operands, one correctly rounded IEEE `+ - * /` in the compute type, store;
/// NaN propagates as IEEE arithmetic makes it (ONNX Add/Sub/Mul/Div). Integers (rule 6):
/// wrapping `+ - *`; division truncates toward zero with `a / 0 = 0` and
/// `MIN / -1 = MIN` ([`gpukit_core::numeric::int_div`]).
///
/// Empty inputs give an empty output.
///
/// # Panics
/// If `a.len() != b.len()` (a pre-condition: the op validates shapes first).
pub fn binary<T: Arith>(op: BinaryOp, a: &[T], b: &[T]) -> Vec<T> {
    assert_len("binary", "b", b.len(), a.len());
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        out.push(T::binary(op, a[i], b[i]));
    }
    out
}

/// Elementwise binary op with N-D stride broadcasting (numpy / ONNX multidirectional
/// broadcasting, expressed through strides).
///
/// The output is contiguous (row-major) over `out_dims`. For every output coordinate
/// `coord` (last dimension fastest), `a` is read at `sum(coord[d] * a_strides[d])` and
/// `b` at `sum(coord[d] * b_strides[d])`, strides in elements; a stride of 0 broadcasts
/// that dimension. Strides may describe any view (broadcast, transposed, ...). The scalar
/// rule is [`binary`]'s (rules 1 and 6).
///
/// `out_dims` empty means a 0-D result: one element, `op(a[0], b[0])`. A zero anywhere
/// in `out_dims` gives an empty output and reads nothing.
///
/// # Panics
/// If `a_strides` or `b_strides` does not have `out_dims.len()` entries, if the output's
/// element count overflows, or if a computed offset lies outside `a` or `b`.
pub fn binary_broadcast<T: Arith>(
    op: BinaryOp,
    out_dims: &[usize],
    a: &[T],
    a_strides: &[usize],
    b: &[T],
    b_strides: &[usize],
) -> Vec<T> {
    let ndim = out_dims.len();
    assert_len("binary_broadcast", "a_strides", a_strides.len(), ndim);
    assert_len("binary_broadcast", "b_strides", b_strides.len(), ndim);
    let n_out = numel(out_dims, "binary_broadcast");

    let mut out = Vec::with_capacity(n_out);
    let mut coord = vec![0usize; ndim];
    for linear in 0..n_out {
        // Row-major coordinates of output element `linear`: last dimension fastest.
        let mut rest = linear;
        for d in (0..ndim).rev() {
            coord[d] = rest % out_dims[d];
            rest /= out_dims[d];
        }
        let mut a_off = 0usize;
        let mut b_off = 0usize;
        for d in 0..ndim {
            a_off += coord[d] * a_strides[d];
            b_off += coord[d] * b_strides[d];
        }
        assert!(
            a_off < a.len() && b_off < b.len(),
            "gpukit-reference::binary_broadcast: offset (a {a_off}, b {b_off}) outside \
             a ({}) or b ({}) at coordinate {coord:?}",
            a.len(),
            b.len()
        );
        out.push(T::binary(op, a[a_off], b[b_off]));
    }
    out
}

/// Elementwise unary map: `out[i] = store(op(load(a[i])))`.
///
/// Rules: `Relu` is [`gpukit_core::numeric::relu`] (rule 7: NaN passes through, every
/// non-positive value including `-0.0` and `-inf` gives `+0.0`); `Sqrt` is IEEE `sqrt`
/// (rule 1: `sqrt(-0) = -0`, negative gives NaN); `Exp`, `Log`, `Tanh`, `Sigmoid` are
/// gpukit's portable functions (rule 3; their special values are documented in
/// [`gpukit_core::math`]); `Abs` and `Neg` clear / flip the sign bit only; `Rsqrt` is
/// `1 / sqrt(x)` with two roundings; `Silu` and `Softplus` are the chains of
/// [`gpukit_core::numeric::silu`] and [`gpukit_core::numeric::softplus`]. Computed in
/// the compute type, stored once (rule 6).
///
/// Empty input gives an empty output.
pub fn unary<T: FloatElement>(op: UnaryOp, a: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len());
    for &x in a {
        out.push(T::store(op.real(x.load())));
    }
    out
}

/// A user map: `out[i] = store(f(load(a[i])))`.
///
/// Rule 6: `f` sees the exactly loaded value in the compute type and its result is
/// stored once (rounded to nearest even for f16/bf16). Whether the result is the same on
/// every backend depends on `f` keeping rules 1 to 3 itself.
///
/// Empty input gives an empty output.
pub fn map<T: FloatElement>(f: impl Fn(T::Real) -> T::Real, a: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len());
    for &x in a {
        out.push(T::store(f(x.load())));
    }
    out
}

/// Matrix product `C[m×n] = A[m×k] · B[k×n]`, all contiguous row-major.
///
/// Rule 2: for each `(r, j)`, `acc = +0.0` in the compute type, then
/// `acc = fma(load(A[r][t]), load(B[t][j]), acc)` for `t = 0, 1, ..., k-1` ascending,
/// then `C[r][j] = store(acc)` once (rule 6). No reduction shape is used: the chain is
/// sequential in `t`.
///
/// Consequences: `k = 0` gives `+0.0` everywhere; because the chain starts from `+0.0`,
/// a sum of products that are all `-0.0` gives `+0.0`; a NaN or `inf * 0` anywhere in a
/// chain gives NaN. `m = 0` or `n = 0` gives an empty output.
///
/// This is [`bmm`] with `batch = 1`.
///
/// # Panics
/// If `a.len() != m*k`, `b.len() != k*n`, or a size overflows.
pub fn matmul<T: FloatElement>(a: &[T], b: &[T], m: usize, k: usize, n: usize) -> Vec<T> {
    assert_len("matmul", "a", a.len(), numel(&[m, k], "matmul"));
    assert_len("matmul", "b", b.len(), numel(&[k, n], "matmul"));
    bmm(a, b, 1, m, k, n, 0, 0)
}

/// Batched matrix product: for each `i < batch`, `C_i[m×n] = A_i[m×k] · B_i[k×n]`.
///
/// `A_i` starts at element `i * a_bstride` of `a` and `B_i` at `i * b_bstride` of `b`
/// (each matrix itself contiguous row-major); a batch stride of 0 broadcasts one matrix
/// to every batch. `C` is contiguous `[batch, m, n]`.
///
/// Rule 2, per output element, exactly as [`matmul`]: `acc = +0.0`, then
/// `acc = fma(load(A_i[r][t]), load(B_i[t][j]), acc)` for `t` ascending from 0 to
/// `k-1`, then one store. `k = 0` gives `+0.0` everywhere.
///
/// # Panics
/// If a matrix that is read does not lie inside its slice (`a` must hold
/// `(batch-1)*a_bstride + m*k` elements when `batch > 0` and `m*k > 0`; `b` likewise with
/// `k*n`), or a size overflows. Nothing is read when `batch`, `m` or `n` is 0.
#[allow(clippy::too_many_arguments)]
pub fn bmm<T: FloatElement>(
    a: &[T],
    b: &[T],
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    a_bstride: usize,
    b_bstride: usize,
) -> Vec<T> {
    let per_c = numel(&[m, n], "bmm");
    let n_out = numel(&[batch, per_c], "bmm");
    if n_out > 0 && k > 0 {
        let last = batch - 1;
        let a_need = numel(&[last, a_bstride], "bmm") + numel(&[m, k], "bmm");
        let b_need = numel(&[last, b_bstride], "bmm") + numel(&[k, n], "bmm");
        assert!(
            a.len() >= a_need && b.len() >= b_need,
            "gpukit-reference::bmm: a has {} elements (needs {a_need}), b has {} (needs {b_need})",
            a.len(),
            b.len()
        );
    }

    let mut out = Vec::with_capacity(n_out);
    for i in 0..batch {
        let a_i = i * a_bstride;
        let b_i = i * b_bstride;
        for r in 0..m {
            for j in 0..n {
                let mut acc = <T::Real as Real>::ZERO;
                for t in 0..k {
                    let x = a[a_i + r * k + t].load();
                    let y = b[b_i + t * n + j].load();
                    acc = x.fma(y, acc);
                }
                out.push(T::store(acc));
            }
        }
    }
    out
}

/// Checks every index of `idx` against an axis of length `axis_len` (rule 7): returns
/// the first one in `idx` order that is out of range as an error for `op`.
fn check_indices(op: &str, idx: &[i64], axis_len: usize) -> Result<()> {
    for &i in idx {
        if resolve_index(i, axis_len).is_none() {
            return Err(Error::IndexOutOfRange {
                op: op.to_string(),
                index: i,
                axis_len,
            });
        }
    }
    Ok(())
}

/// Gather along an axis: `data` is `[outer, axis_len, inner]`, `idx` is `[nidx]`, the
/// output is `[outer, nidx, inner]` with `out[o, g, i] = data[o, idx[g], i]`.
///
/// Rule 7 (and ONNX Gather): an index `v` in `[-axis_len, axis_len)` selects position `v`
/// if `v >= 0` and `v + axis_len` if negative ([`resolve_index`]). Every index is checked
/// before anything is read, even when `outer` or `inner` is 0; the first out-of-range
/// index in `idx` order is returned as [`Error::IndexOutOfRange`] with `op = "gather"`,
/// the index as given and `axis_len` (the same position the `check_index` kernel
/// reports). An empty `idx` gives an empty output. Values are copied bit for bit (NaN
/// payloads included).
///
/// # Panics
/// If `data.len() != outer * axis_len * inner`, or a size overflows.
pub fn gather<T: Element>(
    data: &[T],
    idx: &[i64],
    outer: usize,
    axis_len: usize,
    inner: usize,
) -> Result<Vec<T>> {
    assert_len(
        "gather",
        "data",
        data.len(),
        numel(&[outer, axis_len, inner], "gather"),
    );
    check_indices("gather", idx, axis_len)?;
    let nidx = idx.len();

    let mut out = Vec::with_capacity(numel(&[outer, nidx, inner], "gather"));
    for o in 0..outer {
        for &v in idx {
            let p = resolve_index(v, axis_len).expect("checked above");
            for i in 0..inner {
                out.push(data[(o * axis_len + p) * inner + i]);
            }
        }
    }
    Ok(out)
}

/// Scatter along an axis: the output starts as a copy of `data` (`[outer, axis_len,
/// inner]`), then `out[o, idx[g], i] = upd[o, g, i]` for `upd` of shape
/// `[outer, nidx, inner]`.
///
/// Rule 7: indices resolve as in [`gather`] (negative counts from the end); every index
/// is checked before anything is written, and the first out-of-range one in `idx` order
/// is returned as [`Error::IndexOutOfRange`] with `op = "scatter"`. With duplicate
/// indices the **largest `g` wins**: each `(o, i)` column is written in ascending `g`,
/// so a later write replaces an earlier one (ONNX ScatterElements with
/// `reduction = "none"` leaves duplicates undefined; gpukit defines them). Positions no
/// index names keep `data`'s bits. Values are copied bit for bit.
///
/// # Panics
/// If `data.len() != outer * axis_len * inner`, `upd.len() != outer * idx.len() * inner`,
/// or a size overflows.
pub fn scatter<T: Element>(
    data: &[T],
    idx: &[i64],
    upd: &[T],
    outer: usize,
    axis_len: usize,
    inner: usize,
) -> Result<Vec<T>> {
    let nidx = idx.len();
    assert_len(
        "scatter",
        "data",
        data.len(),
        numel(&[outer, axis_len, inner], "scatter"),
    );
    assert_len(
        "scatter",
        "upd",
        upd.len(),
        numel(&[outer, nidx, inner], "scatter"),
    );
    check_indices("scatter", idx, axis_len)?;

    let mut out = data.to_vec();
    for o in 0..outer {
        for (g, &v) in idx.iter().enumerate() {
            let p = resolve_index(v, axis_len).expect("checked above");
            for i in 0..inner {
                out[(o * axis_len + p) * inner + i] = upd[(o * nidx + g) * inner + i];
            }
        }
    }
    Ok(out)
}

/// Row softmax of a contiguous `[rows, cols]` matrix (ONNX Softmax with `axis = -1`,
/// computed max-subtracted).
///
/// Per row, in the compute type (rule 6), with `x_j = load(a[row][j])`:
///
/// 1. `m = max_nan(... max_nan(max_nan(x_0, x_1), x_2) ..., x_{cols-1})`, left to right
///    ([`max_nan`], rule 7). Starting the fold from `-inf` gives the same bits;
///    `max_nan` is order-independent (NaN if any operand is NaN, `max(-0, +0) = +0`), so
///    the kernels may reduce in any order.
/// 2. `e_j = exp(x_j - m)`: one IEEE subtraction, gpukit's `exp` (rules 1 and 3).
/// 3. `s` = the reduction shape's sum of `e_0 .. e_{cols-1}` (rule 4:
///    [`gpukit_core::reduce::fold`] with step `acc + e_j`, combine `+`, lanes from
///    `+0.0`).
/// 4. `out_j = store(e_j / s)`: one IEEE division, one store.
///
/// Specials, all following from the steps above:
/// * a NaN anywhere in a row: `m` is NaN, the whole row is NaN;
/// * a row that is all `-inf`: `m = -inf`, `-inf - -inf = NaN`, the whole row is NaN
///   (as ONNX Softmax's max-subtracted definition gives);
/// * a `+inf` in a row: `inf - inf = NaN` at that position, so `s` and the whole row are
///   NaN (also as ONNX's reference gives);
/// * `-inf` entries in an otherwise finite row give exactly `+0.0`;
/// * `cols = 0` or `rows = 0`: an empty output (an empty row has no maximum and is
///   never evaluated).
///
/// # Panics
/// If `a.len() != rows * cols`, or a size overflows.
pub fn softmax_rows<T: FloatElement>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    assert_len(
        "softmax_rows",
        "a",
        a.len(),
        numel(&[rows, cols], "softmax_rows"),
    );
    let mut out = Vec::with_capacity(a.len());
    if cols == 0 {
        return out;
    }
    for r in 0..rows {
        let row = &a[r * cols..(r + 1) * cols];

        let mut m = row[0].load();
        for &x in &row[1..] {
            m = max_nan(m, x.load());
        }

        let e: Vec<T::Real> = row.iter().map(|&x| (x.load() - m).exp()).collect();

        let s = fold(
            cols,
            <T::Real as Real>::ZERO,
            |acc, j| acc + e[j],
            |p, q| p + q,
        );

        for &e_j in &e {
            out.push(T::store(e_j / s));
        }
    }
    out
}

/// Sum of all elements: the reduction shape (rule 4) with lanes starting at
/// [`Arith::acc_zero`], step [`Arith::acc_step`] (`acc + load(a[i])`) and combine
/// [`Arith::acc_combine`] (`+`), then one [`Arith::acc_store`].
///
/// Floats accumulate in the compute type (rule 6: f16/bf16 sum in f32 and round once at
/// the end); integers wrap. Because every lane starts at `+0.0`, an empty input gives
/// `+0.0` (integers: 0) and a sum of only `-0.0`s gives `+0.0` (not `-0.0`). NaN
/// anywhere gives NaN; `+inf` and `-inf` together give NaN.
pub fn sum<T: Arith>(a: &[T]) -> T {
    let acc = fold(
        a.len(),
        T::acc_zero(),
        |acc, i| T::acc_step(acc, a[i]),
        T::acc_combine,
    );
    T::acc_store(acc)
}

/// Dot product `sum_i a[i] * b[i]`: the reduction shape (rule 4) with lanes starting at
/// `+0.0`, step `acc = fma(load(a[i]), load(b[i]), acc)` (rule 2) and combine `+`, in
/// the compute type, stored once (rule 6).
///
/// An empty input gives `+0.0`. Within a lane the products fold with fma in ascending
/// `i` (one rounding per element); lanes then combine by the shape's fixed tree.
///
/// # Panics
/// If `a.len() != b.len()`.
pub fn dot<T: FloatElement>(a: &[T], b: &[T]) -> T {
    assert_len("dot", "b", b.len(), a.len());
    let acc = fold(
        a.len(),
        <T::Real as Real>::ZERO,
        |acc, i| a[i].load().fma(b[i].load(), acc),
        |p, q| p + q,
    );
    T::store(acc)
}
