//! Element-wise gather and scatter (abi::elements; ONNX GatherElements and
//! ScatterElements), Pad and CumSum. Every index is resolved and range-checked (the shared content
//! check, which the emulator applies too) before anything is written: an index out of
//! range is [`gpukit_core::Error::IndexOutOfRange`], never an access outside a buffer.

use gpukit_core::abi::contents::{pad_layout, resolve_indices};
use gpukit_core::abi::kernel_name;
use gpukit_core::elements::{ScatterElem, ScatterReduction};
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::Arith;
use gpukit_core::pad::PadMode;
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use super::elementwise::par_chunks;
use super::{PAR_GRAIN, arg_err, input_slice, mul, out_range};
use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};

/// Reads `idx[..n]` and resolves every index against `axis_len`.
fn resolve(op: &str, idx: &RawBuf<'_, i64>, n: usize, axis_len: usize) -> Result<Vec<usize>> {
    // SAFETY: idx holds n elements (checked by the caller); nothing is written yet.
    let raw = unsafe { &idx.slice()[..n] };
    resolve_indices(op, raw, axis_len)
}

/// `out[o, g, i] = data[o, idx[o, g, i], i]`. Args: out, data, idx, outer, axis_len,
/// inner, nidx.
fn gather_elements<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (outer, axis_len) = (args.usize(3)?, args.usize(4)?);
    let (inner, nidx) = (args.usize(5)?, args.usize(6)?);
    let out = args.buf::<T>(0)?;
    let data = args.buf::<T>(1)?;
    let idx = args.buf::<i64>(2)?;
    let n = mul(args, 6, mul(args, 6, outer, nidx)?, inner)?;
    let ndata = mul(args, 4, mul(args, 4, outer, axis_len)?, inner)?;
    args.need(0, &out, n)?;
    args.need(1, &data, ndata)?;
    args.need(2, &idx, n)?;
    let rows = resolve("gather_elements", &idx, n, axis_len)?;
    if n == 0 {
        return Ok(());
    }
    let (o0, _) = out_range(&out);
    let outs = [(o0, o0 + n * std::mem::size_of::<T>())];
    // SAFETY: data holds ndata elements (checked); copied if it overlaps out[..n].
    let src = unsafe { input_slice(&data, ndata, &outs) };
    let (src, rows) = (&*src, &rows);
    let per_o = nidx * inner;
    let body = |s: usize, o: &mut [T]| {
        for (k, v) in o.iter_mut().enumerate() {
            let e = s + k;
            let (oo, i) = (e / per_o, e % inner);
            *v = src[(oo * axis_len + rows[e]) * inner + i];
        }
    };
    // SAFETY: n <= out.len (checked); data is never written (or is a copy).
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// Columns per scatter task.
const COLS: usize = 4096;

/// `y[o, idx[o, g, i], i] = combine(r, y[..], upd[o, g, i])`, `g` ascending. Args: y,
/// idx, upd, outer, axis_len, inner, nidx, reduction.
fn scatter_elements<T: ScatterElem>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (outer, axis_len) = (args.usize(3)?, args.usize(4)?);
    let (inner, nidx) = (args.usize(5)?, args.usize(6)?);
    let code = args.i64(7)?;
    let Some(red) = ScatterReduction::from_code(code) else {
        return arg_err(args, 7, format!("reduction code {code} is not in 0..=4"));
    };
    let y = args.buf::<T>(0)?;
    let idx = args.buf::<i64>(1)?;
    let upd = args.buf::<T>(2)?;
    let ny = mul(args, 4, mul(args, 4, outer, axis_len)?, inner)?;
    let n = mul(args, 6, mul(args, 6, outer, nidx)?, inner)?;
    args.need(0, &y, ny)?;
    args.need(1, &idx, n)?;
    args.need(2, &upd, n)?;
    let rows = resolve("scatter_elements", &idx, n, axis_len)?;
    if n == 0 {
        return Ok(());
    }
    let (y0, _) = out_range(&y);
    let outs = [(y0, y0 + ny * std::mem::size_of::<T>())];
    // SAFETY: upd holds n elements (checked); copied if it overlaps y[..ny].
    let src = unsafe { input_slice(&upd, n, &outs) };
    let (src, rows) = (&*src, &rows);
    let cblocks = inner.div_ceil(COLS);
    let task = |t: usize| {
        let (o, cb) = (t / cblocks, t % cblocks);
        let c0 = cb * COLS;
        let c1 = (c0 + COLS).min(inner);
        for g in 0..nidx {
            let e0 = (o * nidx + g) * inner;
            for i in c0..c1 {
                let d = (o * axis_len + rows[e0 + i]) * inner + i;
                // SAFETY: d < ny (the row is resolved in range, o < outer, i < inner);
                // a task owns the (o, c0..c1) columns of y alone, and within it the
                // updates go in ascending g: the row-major order of upd.
                unsafe { y.write(d, T::combine(red, y.read(d), src[e0 + i])) };
            }
        }
    };
    let tasks = outer * cblocks;
    if n <= PAR_GRAIN {
        (0..tasks).for_each(task);
    } else {
        let per = (PAR_GRAIN / (nidx * inner.min(COLS)).max(1)).max(1);
        (0..tasks).into_par_iter().with_min_len(per).for_each(task);
    }
    Ok(())
}

/// Columns per cumsum task (the accumulators live on the stack).
const CUMSUM_COLS: usize = 256;

/// ONNX CumSum (abi::elements): the running sum along each `(o, i)` line of `[outer,
/// len, inner]`. Args: y, x, outer, len, inner, exclusive, reverse.
fn cumsum<T: Arith>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (outer, len, inner) = (args.usize(2)?, args.usize(3)?, args.usize(4)?);
    let mut flags = [false; 2];
    for (f, at) in flags.iter_mut().zip([5, 6]) {
        *f = match args.i64(at)? {
            0 => false,
            1 => true,
            v => return arg_err(args, at, format!("flag {v} is not 0 or 1")),
        };
    }
    let [exclusive, reverse] = flags;
    let y = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let n = mul(args, 4, mul(args, 3, outer, len)?, inner)?;
    args.need(0, &y, n)?;
    args.need(1, &x, n)?;
    if n == 0 {
        return Ok(());
    }
    let outs = [out_range(&y)];
    // SAFETY: x holds n elements (checked); copied if it overlaps y.
    let src = unsafe { input_slice(&x, n, &outs) };
    let src = &*src;
    let cblocks = inner.div_ceil(CUMSUM_COLS);
    let zero = T::acc_store(T::acc_zero());
    let task = |t: usize| {
        let (o, cb) = (t / cblocks, t % cblocks);
        let c0 = cb * CUMSUM_COLS;
        let w = CUMSUM_COLS.min(inner - c0);
        let mut acc = [T::acc_zero(); CUMSUM_COLS];
        let acc = &mut acc[..w];
        for step in 0..len {
            let p = if reverse { len - 1 - step } else { step };
            let e0 = (o * len + p) * inner + c0;
            let xs = &src[e0..e0 + w];
            // SAFETY: e0 + w <= n <= y.len(); a task owns the columns c0..c0+w of line
            // block o alone, so no two tasks write the same element, and nothing reads y.
            let ys = unsafe { y.slice_mut(e0, e0 + w) };
            if step == 0 {
                for ((a, yv), &xv) in acc.iter_mut().zip(ys.iter_mut()).zip(xs) {
                    *a = T::acc_load(xv);
                    *yv = if exclusive { zero } else { T::acc_store(*a) };
                }
            } else if exclusive {
                for ((a, yv), &xv) in acc.iter_mut().zip(ys.iter_mut()).zip(xs) {
                    *yv = T::acc_store(*a);
                    *a = T::acc_step(*a, xv);
                }
            } else {
                for ((a, yv), &xv) in acc.iter_mut().zip(ys.iter_mut()).zip(xs) {
                    *a = T::acc_step(*a, xv);
                    *yv = T::acc_store(*a);
                }
            }
        }
    };
    let tasks = outer * cblocks;
    if n <= PAR_GRAIN {
        (0..tasks).for_each(task);
    } else {
        let per = (PAR_GRAIN / (len * inner.min(CUMSUM_COLS)).max(1)).max(1);
        (0..tasks).into_par_iter().with_min_len(per).for_each(task);
    }
    Ok(())
}

/// ONNX Pad. Args: out, x, value, layout, ndim, mode, n_out (abi::elements).
fn pad<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let ndim = args.usize(4)?;
    let code = args.i64(5)?;
    let n = args.usize(6)?;
    let Some(mode) = PadMode::from_code(code) else {
        return arg_err(args, 5, format!("pad mode {code} is not in 0..=3"));
    };
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let value = args.buf::<T>(2)?;
    let layout = args.buf::<i64>(3)?;
    let nl = mul(args, 4, ndim, 5)?;
    args.need(0, &out, n)?;
    args.need(2, &value, 1)?;
    args.need(3, &layout, nl)?;
    // SAFETY: layout holds nl elements (checked); nothing is written yet.
    let raw = unsafe { &layout.slice()[..nl] };
    let l = pad_layout(
        args.kernel(),
        raw,
        ndim,
        mode == PadMode::Constant,
        n,
        x.len(),
    )?;
    if n == 0 {
        return Ok(());
    }
    let nx: usize = l.input.iter().product();
    let (o0, _) = out_range(&out);
    let outs = [(o0, o0 + n * std::mem::size_of::<T>())];
    // SAFETY: x holds nx elements (pad_layout checked) and value one; copied if they
    // overlap out[..n].
    let (src, val) = unsafe { (input_slice(&x, nx, &outs), input_slice(&value, 1, &outs)) };
    let (src, fill, l) = (&*src, val[0], &l);
    let body = |s: usize, o: &mut [T]| {
        for (k, v) in o.iter_mut().enumerate() {
            let mut rem = s + k;
            // Walk the axes from the last: the source offset accumulates with the
            // input strides (suffix products of the input dims).
            let (mut off, mut stride, mut inside) = (0usize, 1usize, true);
            for d in (0..ndim).rev() {
                let c = rem % l.out[d];
                rem /= l.out[d];
                let t = c as i64 - l.before[d] as i64;
                match mode.source(t, l.len[d] as i64) {
                    Some(p) => off += (l.start[d] + p as usize) * stride,
                    None => {
                        inside = false;
                        break;
                    }
                }
                stride *= l.input[d];
            }
            *v = if inside { src[off] } else { fill };
        }
    };
    // SAFETY: n <= out.len (checked); the inputs are never written (or are copies).
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// `(name, entry point)` of every element-wise gather / scatter kernel and `pad`.
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let gather: [BuiltinFn; 6] = [
        gather_elements::<f32>,
        gather_elements::<f64>,
        gather_elements::<f16>,
        gather_elements::<bf16>,
        gather_elements::<i64>,
        gather_elements::<i32>,
    ];
    let scatter: [BuiltinFn; 6] = [
        scatter_elements::<f32>,
        scatter_elements::<f64>,
        scatter_elements::<f16>,
        scatter_elements::<bf16>,
        scatter_elements::<i64>,
        scatter_elements::<i32>,
    ];
    let pad: [BuiltinFn; 6] = [
        pad::<f32>,
        pad::<f64>,
        pad::<f16>,
        pad::<bf16>,
        pad::<i64>,
        pad::<i32>,
    ];
    let cumsum: [BuiltinFn; 6] = [
        cumsum::<f32>,
        cumsum::<f64>,
        cumsum::<f16>,
        cumsum::<bf16>,
        cumsum::<i64>,
        cumsum::<i32>,
    ];
    let mut v = Vec::with_capacity(24);
    for (op, fns) in [
        ("gather_elements", gather),
        ("scatter_elements", scatter),
        ("pad", pad),
        ("cumsum", cumsum),
    ] {
        for (d, f) in DType::ALL.into_iter().zip(fns) {
            v.push((kernel_name(op, d), f));
        }
    }
    v
}
