//! Row softmax: per row `m = max_nan(row)`, `e_j = exp(x_j - m)`, `s` = the reduction
//! shape's sum of `e_j`, `out_j = store(e_j / s)`, all in the compute type.

use std::borrow::Cow;

use gpukit_core::numeric::{FloatElement, Real, max_nan};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::reduce::{CpuFloat, LaneReal, shape_sum};
use super::simd::{SimdLevel, dispatch, simd_level};
use super::{PAR_GRAIN, input_slice, mul};
use crate::args::{BuiltinArgs, RawBuf};
use crate::vmath::LaneMath;

/// A compute type softmax runs in: reduction lanes, bulk loads, lane math.
pub(crate) trait SoftReal:
    Real + LaneReal + CpuFloat + FloatElement<Real = Self> + LaneMath
{
}
impl<R: Real + LaneReal + CpuFloat + FloatElement<Real = R> + LaneMath> SoftReal for R {}

/// `max_nan` over `x` (`-inf` when empty) in 16 independent lanes, then over the
/// lanes. The same value as the sequential fold: without NaNs the maximum does not
/// depend on the order (`max_nan` prefers +0 over -0 in either order), and with one
/// the result is a NaN either way.
#[inline(always)]
pub(crate) fn max_lanes<R: LaneMath>(x: &[R]) -> R {
    const W: usize = 16;
    let mut acc = [R::NEG_INFINITY; W];
    let mut it = x.chunks_exact(W);
    for c in &mut it {
        for l in 0..W {
            acc[l] = acc[l].max_nan_l(c[l]);
        }
    }
    let mut m = R::NEG_INFINITY;
    for &v in acc.iter().chain(it.remainder()) {
        m = max_nan(m, v);
    }
    m
}

/// One softmax line: `e` holds the loaded line (compute type); `e_j = exp(x_j - m)`,
/// the reduction shape's sum `s`, `o_j = store(e_j / s)`. Runs in the caller's
/// `dispatch` context so the loops vectorise.
#[inline(always)]
pub(crate) fn softmax_loaded<T, R>(level: SimdLevel, e: &mut [R], o: &mut [T])
where
    T: FloatElement<Real = R>,
    R: SoftReal,
{
    let m = max_lanes(e);
    for v in e.iter_mut() {
        *v = (*v - m).exp_l();
    }
    let s = shape_sum(level, e);
    for (d, &v) in o.iter_mut().zip(e.iter()) {
        *d = T::store(v / s);
    }
}

/// One row: `x` (or, in place, `o` itself when `x` is `None`) loaded into the
/// per-task scratch `e`, then [`softmax_loaded`] into `o`.
#[inline(always)]
pub(crate) fn softmax_row<T, R>(level: SimdLevel, e: &mut Vec<R>, x: Option<&[T]>, o: &mut [T])
where
    T: CpuFloat<Real = R>,
    R: SoftReal,
{
    let n = o.len();
    if e.len() != n {
        e.resize(n, R::ZERO);
    }
    T::load_slice(x.unwrap_or(o), e);
    softmax_loaded(level, e, o);
}

/// Rows of a `[rows, cols]` softmax (the input is `src`, or `out` itself when `None`),
/// rows split over tasks with a reused scratch row each.
pub(crate) fn softmax_rows<T>(src: Option<&[T]>, out: &RawBuf<'_, T>, rows: usize, cols: usize)
where
    T: CpuFloat + Element,
    T::Real: SoftReal,
{
    if rows == 0 || cols == 0 {
        return;
    }
    let level = simd_level();
    let per_task = (PAR_GRAIN / cols).max(1);
    let tasks = rows.div_ceil(per_task);
    let task = |t: usize| {
        let mut e: Vec<T::Real> = Vec::with_capacity(cols);
        let r1 = ((t + 1) * per_task).min(rows);
        for r in t * per_task..r1 {
            // SAFETY: rows are disjoint across tasks and inside out[..rows * cols]
            // (caller); in place, the row is read (into `e`) before it is written.
            let o = unsafe { out.slice_mut(r * cols, (r + 1) * cols) };
            let x = src.map(|x| &x[r * cols..(r + 1) * cols]);
            dispatch(
                #[inline(always)]
                || softmax_row(level, &mut e, x, o),
            );
        }
    };
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}

/// Row softmax over `[rows, cols]`. Args: out, a, rows, cols.
pub(crate) fn softmax<T>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T: CpuFloat + Element,
    T::Real: SoftReal,
{
    let rows = args.usize(2)?;
    let cols = args.usize(3)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let total = mul(args, 3, rows, cols)?;
    args.need(0, &out, total)?;
    args.need(1, &a, total)?;
    if total == 0 {
        return Ok(());
    }
    let in_place = out.ptr() == a.ptr();
    let o0 = out.ptr() as usize;
    let outs = [(o0, o0 + total * std::mem::size_of::<T>())];
    let src: Option<Cow<'_, [T]>> = if in_place {
        None
    } else {
        // SAFETY: a holds `total` elements; copied if it overlaps out[..total].
        Some(unsafe { input_slice(&a, total, &outs) })
    };
    let out: RawBuf<'_, T> = out;
    softmax_rows(src.as_deref(), &out, rows, cols);
    Ok(())
}
