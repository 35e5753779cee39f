//! Gather, scatter and the index check. Indices are resolved (negative from the end)
//! and range-checked before anything is written; an index still out of range gives
//! [`Error::IndexOutOfRange`], never an access outside the buffers.

use gpukit_core::abi::contents::resolve_indices;
use gpukit_core::numeric::resolve_index;
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::{PAR_GRAIN, input_slice, mul};
use crate::args::{BuiltinArgs, RawBuf};

/// Reads `idx[..n]` and resolves every index against `axis_len`: the shared content
/// check ([`gpukit_core::abi::contents::resolve_indices`], which the emulator applies
/// too).
fn resolve_all(op: &str, idx: &RawBuf<'_, i64>, n: usize, axis_len: usize) -> Result<Vec<usize>> {
    // SAFETY: idx holds n elements (checked by the caller); nothing is written yet.
    let raw = unsafe { &idx.slice()[..n] };
    resolve_indices(op, raw, axis_len)
}

/// Gather. Args: out, data, idx, outer, axis_len, inner, nidx.
pub(crate) fn gather<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let outer = args.usize(3)?;
    let axis_len = args.usize(4)?;
    let inner = args.usize(5)?;
    let nidx = args.usize(6)?;
    let out = args.buf::<T>(0)?;
    let data = args.buf::<T>(1)?;
    let idx = args.buf::<i64>(2)?;
    let nout = mul(args, 6, mul(args, 6, outer, nidx)?, inner)?;
    let ndata = mul(args, 4, mul(args, 4, outer, axis_len)?, inner)?;
    args.need(0, &out, nout)?;
    args.need(1, &data, ndata)?;
    args.need(2, &idx, nidx)?;
    let rows = resolve_all("gather", &idx, nidx, axis_len)?;
    if nout == 0 {
        return Ok(());
    }
    let o0 = out.ptr() as usize;
    let outs = [(o0, o0 + nout * std::mem::size_of::<T>())];
    // SAFETY: data holds ndata elements; copied if it overlaps out[..nout].
    let src = unsafe { input_slice(&data, ndata, &outs) };
    let src = &*src;
    let rows = &rows;
    let copy = |row: usize| {
        let (o, g) = (row / nidx, row % nidx);
        let s = (o * axis_len + rows[g]) * inner;
        // SAFETY: output rows are disjoint across tasks, inside out[..nout].
        let dst = unsafe { out.slice_mut(row * inner, (row + 1) * inner) };
        dst.copy_from_slice(&src[s..s + inner]);
    };
    let nrows = outer * nidx;
    if nout <= PAR_GRAIN {
        (0..nrows).for_each(copy);
    } else {
        (0..nrows)
            .into_par_iter()
            .with_min_len((PAR_GRAIN / inner).max(1))
            .for_each(copy);
    }
    Ok(())
}

/// Columns per scatter task.
const SCATTER_COLS: usize = 4096;

/// Scatter. Args: y, idx, upd, outer, axis_len, inner, nidx.
pub(crate) fn scatter<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let outer = args.usize(3)?;
    let axis_len = args.usize(4)?;
    let inner = args.usize(5)?;
    let nidx = args.usize(6)?;
    let y = args.buf::<T>(0)?;
    let idx = args.buf::<i64>(1)?;
    let upd = args.buf::<T>(2)?;
    let ny = mul(args, 4, mul(args, 4, outer, axis_len)?, inner)?;
    let nupd = mul(args, 6, mul(args, 6, outer, nidx)?, inner)?;
    args.need(0, &y, ny)?;
    args.need(1, &idx, nidx)?;
    args.need(2, &upd, nupd)?;
    let rows = resolve_all("scatter", &idx, nidx, axis_len)?;
    if nupd == 0 {
        return Ok(());
    }
    let y0 = y.ptr() as usize;
    let outs = [(y0, y0 + ny * std::mem::size_of::<T>())];
    // SAFETY: upd holds nupd elements; copied if it overlaps y[..ny].
    let src = unsafe { input_slice(&upd, nupd, &outs) };
    let src = &*src;
    let rows = &rows;
    let cblocks = inner.div_ceil(SCATTER_COLS);
    let task = |t: usize| {
        let (o, cb) = (t / cblocks, t % cblocks);
        let c0 = cb * SCATTER_COLS;
        let c1 = (c0 + SCATTER_COLS).min(inner);
        for (g, &r) in rows.iter().enumerate() {
            let s = (o * nidx + g) * inner;
            let d = (o * axis_len + r) * inner;
            let part = &src[s + c0..s + c1];
            // SAFETY: d + c1 <= ny (r < axis_len, o < outer); tasks own disjoint
            // (o, column range) sets, and within a task rows are written in ascending
            // g, so the largest g wins; `part` never aliases y (copied if it did).
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), y.ptr().add(d + c0), c1 - c0) };
        }
    };
    let tasks = outer * cblocks;
    if nupd <= PAR_GRAIN {
        (0..tasks).for_each(task);
    } else {
        let per = (PAR_GRAIN / (nidx * inner.min(SCATTER_COLS)).max(1)).max(1);
        (0..tasks).into_par_iter().with_min_len(per).for_each(task);
    }
    Ok(())
}

/// Index check. Args: idx, n, axis_len, result.
pub(crate) fn check_index(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(1)?;
    let axis_len = args.usize(2)?;
    let idx = args.buf::<i64>(0)?;
    let result = args.buf::<i64>(3)?;
    args.need(0, &idx, n)?;
    args.need(3, &result, 1)?;
    let first = {
        // SAFETY: idx holds n elements; nothing is written until the slice is dropped.
        let x = unsafe { input_slice(&idx, n, &[]) };
        let bad = |&i: &i64| resolve_index(i, axis_len).is_none();
        if n <= PAR_GRAIN {
            x.iter().position(bad)
        } else {
            x.par_iter().with_min_len(PAR_GRAIN).position_first(bad)
        }
    };
    let v = first.map_or(-1, |p| p as i64);
    // SAFETY: result holds one element (checked); all reads are done.
    unsafe { result.write(0, v) };
    Ok(())
}
