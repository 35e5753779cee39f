//! Reductions along any set of axes: [`reduce_axes`] with a [`ReduceOp`] (sum, mean,
//! max, min, prod, L1, L2, log-sum-exp; ONNX's Reduce* operators).

use gpukit_core::numeric::FLOAT_DTYPES;
use gpukit_core::reduce_axes::plan_axes;
pub use gpukit_core::reduce_axes::{AxesPlan, ReduceOp};
use gpukit_core::{Buf, DevArg, Error, Kit, Result};

use crate::check;

/// Reduction `op` of `x` (shape `dims`, row-major, contiguous) along `axes`, into `out`
/// (row-major over the kept axes: `out` has the product of the kept extents; keepdims
/// changes only the shape a caller gives it, not the elements).
///
/// Axes: negative axes count from the end; an empty `axes` reduces every axis (ONNX's
/// `noop_with_empty_axes = 0`); a rank-0 `x` (empty `dims`) is one element. For each
/// output the reduced items `x_j`, `j = 0..n`, run row-major over the reduced axes, and
/// every sum-like part (sum, mean, prod, L1, L2's sum of squares, log-sum-exp's sum)
/// follows the contract's reduction shape over that sequence, so the bits depend on
/// neither the backend nor the thread count (docs/numerics.md, "Reductions along
/// axes"; [`gpukit_core::reduce_axes`] has the table of each op).
///
/// * floats (f32, f64; f16/bf16 computed in f32, stored rounded once): every op;
///   empty reductions give sum/L1/L2 +0, mean NaN (`0 / 0`), max -inf, min +inf,
///   prod 1, log-sum-exp -inf; max/min follow the NaN rule of `max_nan`/`min_nan` (any
///   NaN gives NaN, +0 beats -0 in max and -0 beats +0 in min);
/// * L2 is scaled: with `m = max |x_j|` and `2^e <= m < 2^(e+1)`, the squares are
///   summed of `x_j · 2^-e` (an exact power-of-two scaling) and the result is
///   `sqrt(s) · 2^e`: neither huge nor tiny values overflow or underflow on the way;
///   any NaN gives NaN, else any ±inf gives +inf (as `sqrt(Σ x²)` in ONNX and numpy);
/// * log-sum-exp is `m + log(Σ exp(x_j - m))` with `m = max`; a NaN gives NaN, +inf
///   gives +inf, all -inf (or none) gives -inf;
/// * i32, i64: sum, prod (wrapping), max, min (empty: 0, 1, MIN, MAX).
///
/// Errors: [`Error::DType`] (`out` and `x` differ, or an integer dtype with mean, L1,
/// L2 or log-sum-exp), [`Error::Length`] (`x` is not the product of `dims`, `out` not
/// the product of the kept extents), [`Error::InvalidArgument`] (an axis out of range
/// or repeated, more than 8 alternating runs of kept and reduced axes, `out` overlaps
/// `x`), [`Error::SizeOverflow`], [`Error::Absent`], [`Error::DeviceMismatch`] and
/// device errors. Each names the op (`reduce_sum`, `reduce_l2`, ...) and the shape.
pub fn reduce_axes(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    dims: &[usize],
    axes: &[i64],
    op: ReduceOp,
) -> Result<()> {
    let name = format!("reduce_{}", op.name());
    let name = name.as_str();
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    if !op.supports_ints() && !FLOAT_DTYPES.contains(&d) {
        return Err(Error::DType {
            op: name.to_string(),
            expected: format!("f32, f64, f16 or bf16 ({op} is defined for floats only)"),
            got: d,
        });
    }
    let n = check::product(name, &format!("x of shape {dims:?}"), dims)?;
    check::len(name, &format!("x of shape {dims:?}"), x, n)?;
    let plan = plan_axes(name, dims, axes)?;
    check::len(
        name,
        &format!(
            "out of shape {:?} (x {dims:?}, axes {axes:?})",
            plan.out_dims
        ),
        out,
        plan.n_out,
    )?;
    check::no_overlap(name, out, &[(x, "x")], false)?;
    if plan.n_out == 0 {
        return Ok(());
    }
    let (mut ld, mut ls) = (plan.dims.clone(), plan.strides.clone());
    if ld.is_empty() {
        // One output of one item: a reduced extent of 1 (the kernels take ndim >= 1).
        ld.push(1);
        ls.push(0);
    }
    let conv = |v: &[usize]| -> Result<Vec<i64>> {
        v.iter()
            .map(|&e| check::i64_of(name, "shape entry", e))
            .collect()
    };
    let (bd, bs) = (kit.upload(&conv(&ld)?)?, kit.upload(&conv(&ls)?)?);
    kit.launch_builtin(
        &check::name("reduce_axes", d),
        check::launch_1d(plan.n_out)?,
        &[
            out.into(),
            x.into(),
            (&bd).into(),
            (&bs).into(),
            DevArg::I64(ld.len() as i64),
            DevArg::I64(plan.nkeep as i64),
            DevArg::I64(check::i64_of(name, "n_out", plan.n_out)?),
            DevArg::I64(check::i64_of(name, "n_red", plan.n_red)?),
            DevArg::I64(op.code()),
        ],
    )
}

/// The output shapes of [`reduce_axes`] for `dims` and `axes`: `(without, with)` the
/// reduced axes kept as 1 (keepdims false / true).
///
/// Errors: [`Error::InvalidArgument`] (an axis out of range or repeated),
/// [`Error::SizeOverflow`].
pub fn reduce_out_dims(dims: &[usize], axes: &[i64]) -> Result<(Vec<usize>, Vec<usize>)> {
    let p = plan_axes("reduce", dims, axes)?;
    Ok((p.out_dims, p.keep_dims))
}
