//! Reductions: row softmax, sum, dot (all in the contract's reduction shape).

use gpukit_core::{Buf, DevArg, Kit, Result};

use crate::check;

/// Row softmax of a `[rows, cols]` float matrix: per row `m = max` (NaN if any NaN),
/// `e_j = exp(x_j - m)`, `s` = the reduction shape's sum of the `e_j`, `out_j = e_j / s`,
/// in the compute type, stored once. A row of all -inf gives NaN (as ONNX Softmax).
/// `out` may be exactly `a`.
///
/// Errors: [`gpukit_core::Error::Length`] when a buffer is not `rows * cols` long,
/// [`gpukit_core::Error::DType`], overlap, absent and device errors as elementwise ops.
pub fn softmax_rows(kit: &Kit, out: &Buf, a: &Buf, rows: usize, cols: usize) -> Result<()> {
    let op = "softmax";
    let ops = [(out, "out"), (a, "a")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let len = check::product(op, "[rows, cols]", &[rows, cols])?;
    check::len(op, "a", a, len)?;
    check::len(op, "out", out, len)?;
    check::no_overlap(op, out, &[(a, "a")], true)?;
    if len == 0 {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(rows)?,
        &[
            out.into(),
            a.into(),
            DevArg::I64(check::i64_of(op, "rows", rows)?),
            DevArg::I64(check::i64_of(op, "cols", cols)?),
        ],
    )
}

/// `out[0] = Σ a` in the reduction shape (floats in the compute type, stored once;
/// integers wrapping); an empty `a` sums to +0.0 (or 0). `out` has one element of `a`'s
/// dtype.
///
/// Errors: [`gpukit_core::Error::Length`] unless `out` has one element,
/// [`gpukit_core::Error::DType`], overlap, absent and device errors.
pub fn sum(kit: &Kit, out: &Buf, a: &Buf) -> Result<()> {
    let op = "sum";
    let ops = [(out, "out"), (a, "a")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::len(op, "out", out, 1)?;
    check::no_overlap(op, out, &[(a, "a")], false)?;
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(a.len())?,
        &[
            out.into(),
            a.into(),
            DevArg::I64(check::i64_of(op, "n", a.len())?),
        ],
    )
}

/// `out[0] = Σ a_i·b_i` in the reduction shape with each lane's step
/// `acc = fma(a_i, b_i, acc)` (float dtypes, compute type, stored once).
///
/// Errors: [`gpukit_core::Error::Length`] (`a`, `b` lengths differ, or `out` is not one
/// element), [`gpukit_core::Error::DType`], overlap, absent and device errors.
pub fn dot(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    let op = "dot";
    let ops = [(out, "out"), (a, "a"), (b, "b")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    check::len(op, "out", out, 1)?;
    check::len(op, "b", b, a.len())?;
    check::no_overlap(op, out, &[(a, "a"), (b, "b")], false)?;
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(a.len())?,
        &[
            out.into(),
            a.into(),
            b.into(),
            DevArg::I64(check::i64_of(op, "n", a.len())?),
        ],
    )
}
