//! Row softmax: per row `m = max_nan(row)`, `e_j = exp(x_j - m)`, `s` = the reduction
//! shape's sum of `e_j`, `out_j = store(e_j / s)`, all in the compute type.

use std::borrow::Cow;

use gpukit_core::numeric::{FloatElement, Real, max_nan};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::reduce::{CpuFloat, LaneReal, shape_sum};
use super::simd::{dispatch, simd_level};
use super::{PAR_GRAIN, input_slice, mul};
use crate::builtins::{BuiltinArgs, RawBuf};

/// One row: `x` loaded into `e` (compute type), then softmax written to `o`.
#[inline(always)]
fn row<T, R>(level: super::simd::SimdLevel, e: &mut Vec<R>, x: &[T], o: &mut [T])
where
    T: FloatElement<Real = R>,
    R: Real + LaneReal + CpuFloat + FloatElement<Real = R>,
{
    e.clear();
    e.extend(x.iter().map(|v| v.load()));
    let m = e.iter().fold(R::NEG_INFINITY, |m, &v| max_nan(m, v));
    for v in e.iter_mut() {
        *v = (*v - m).exp();
    }
    let s = shape_sum(level, e);
    for (d, &v) in o.iter_mut().zip(e.iter()) {
        *d = T::store(v / s);
    }
}

/// Row softmax over `[rows, cols]`. Args: out, a, rows, cols.
pub(crate) fn softmax<T>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T: CpuFloat + Element,
    T::Real: CpuFloat + FloatElement<Real = T::Real>,
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
    let level = simd_level();
    let in_place = out.ptr() == a.ptr();
    let o0 = out.ptr() as usize;
    let outs = [(o0, o0 + total * std::mem::size_of::<T>())];
    let src: Option<Cow<'_, [T]>> = if in_place {
        None
    } else {
        // SAFETY: a holds `total` elements; copied if it overlaps out[..total].
        Some(unsafe { input_slice(&a, total, &outs) })
    };
    let src = src.as_deref();
    let out: RawBuf<'_, T> = out;
    let per_task = (PAR_GRAIN / cols).max(1);
    let tasks = rows.div_ceil(per_task);
    let task = |t: usize| {
        let mut e: Vec<T::Real> = Vec::with_capacity(cols);
        let r1 = ((t + 1) * per_task).min(rows);
        for r in t * per_task..r1 {
            // SAFETY: rows are disjoint across tasks and inside out[..total]; with an
            // in-place launch the row is read (into `e`) before it is written.
            let o = unsafe { out.slice_mut(r * cols, (r + 1) * cols) };
            dispatch(
                #[inline(always)]
                || match src {
                    Some(x) => row(level, &mut e, &x[r * cols..(r + 1) * cols], o),
                    None => {
                        let x: Vec<T> = o.to_vec();
                        row(level, &mut e, &x, o)
                    }
                },
            );
        }
    };
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    Ok(())
}
