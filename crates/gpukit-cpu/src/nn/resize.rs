//! CPU kernel of the general resize (`resize`): reads the per-axis tap tables of
//! [`gpukit_core::resize::plan_resize`] and evaluates each output in the contract's
//! order (the last axis innermost; on each axis `acc = w0·v0`, then
//! `acc = fma(w_t, v_t, acc)`), so nothing here decides a coordinate or a weight.
//! Outputs run in parallel over contiguous ranges of about [`PAR_GRAIN`] elements.

use gpukit_core::abi::kernel_name;
use gpukit_core::abi::resize::{KERNELS, resize_layout, resize_scalars};
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::resize::MAX_RANK;
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn};
use crate::kernels::{PAR_GRAIN, arg_err, input_slice, out_range};

/// `(name, entry point)` for every kernel of [`KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = Vec::new();
    for sig in KERNELS {
        for &d in sig.dtypes {
            let f: BuiltinFn = match d {
                DType::F32 => resize_float::<f32>,
                DType::F64 => resize_float::<f64>,
                DType::F16 => resize_float::<f16>,
                DType::BF16 => resize_float::<bf16>,
                DType::I64 => resize_copy::<i64>,
                DType::I32 => resize_copy::<i32>,
            };
            v.push((kernel_name(sig.op, d), f));
        }
    }
    v
}

/// The checked tables of a launch.
struct Tables {
    in_dims: Vec<usize>,
    out_dims: Vec<usize>,
    /// Input strides (row-major).
    strides: Vec<usize>,
    /// First table row of each axis.
    row0: Vec<usize>,
    k: usize,
    /// (1 + k) entries per row: count, then k indices.
    taps: Vec<usize>,
    /// k f64 weights per row (empty when copying).
    weights: Vec<f64>,
    n_out: usize,
    x_len: usize,
}

/// Reads and checks the scalars and the tables (the shared content check).
fn tables<T: Element>(args: &BuiltinArgs<'_>, float: bool) -> Result<Tables> {
    let (ndim, k, rows) = (args.usize(5)?, args.usize(6)?, args.usize(7)?);
    let (n_out, interp) = (args.usize(8)?, args.usize(9)?);
    resize_scalars(args.kernel(), float, ndim as u64, k as u64, interp as u64)?;
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let dims_b = args.buf::<i64>(2)?;
    let taps_b = args.buf::<i64>(3)?;
    let w_b = args.buf::<f64>(4)?;
    let Some(n_taps) = rows.checked_mul(1 + k) else {
        return arg_err(args, 7, "rows overflow");
    };
    args.need(0, &out, n_out)?;
    args.need(2, &dims_b, 2 * ndim)?;
    args.need(3, &taps_b, n_taps)?;
    args.need(4, &w_b, rows * k)?;
    // SAFETY: each holds the elements checked above; copied before anything is written.
    let (dims, taps, weights) = unsafe {
        (
            dims_b.slice()[..2 * ndim].to_vec(),
            taps_b.slice()[..n_taps].to_vec(),
            if interp == 1 {
                w_b.slice()[..rows * k].to_vec()
            } else {
                Vec::new()
            },
        )
    };
    let l = resize_layout(
        args.kernel(),
        &dims,
        &taps,
        k,
        rows,
        n_out,
        interp == 1,
        x.len(),
    )?;
    let mut strides = vec![1usize; ndim];
    for a in (0..ndim - 1).rev() {
        strides[a] = strides[a + 1] * l.in_dims[a + 1];
    }
    Ok(Tables {
        in_dims: l.in_dims,
        out_dims: l.out_dims,
        strides,
        row0: l.row0,
        k,
        // Non-negative (resize_layout checked every used entry; unused ones are not read).
        taps: taps.iter().map(|&t| t.max(0) as usize).collect(),
        weights,
        n_out,
        x_len: x.len(),
    })
}

impl Tables {
    /// Table row of output index `j` on axis `a`.
    #[inline(always)]
    fn row(&self, a: usize, j: usize) -> usize {
        self.row0[a] + j
    }

    /// Calls `f(start, digits)` for each task's range, digits of its first output.
    fn for_ranges(&self, f: impl Fn(usize, usize, &mut [usize; MAX_RANK]) + Sync) {
        let total = self.n_out;
        let tasks = total.div_ceil(PAR_GRAIN);
        let r = self.out_dims.len();
        let task = |t: usize| {
            let (s, e) = (t * PAR_GRAIN, ((t + 1) * PAR_GRAIN).min(total));
            let mut dig = [0usize; MAX_RANK];
            let mut v = s;
            for a in (0..r).rev() {
                dig[a] = v % self.out_dims[a];
                v /= self.out_dims[a];
            }
            f(s, e, &mut dig);
        };
        if tasks <= 1 {
            (0..tasks).for_each(task);
        } else {
            (0..tasks).into_par_iter().for_each(task);
        }
    }

    /// Advances output digits by one (row-major).
    #[inline(always)]
    fn advance(&self, dig: &mut [usize; MAX_RANK]) {
        let mut a = self.out_dims.len();
        while a > 0 {
            a -= 1;
            dig[a] += 1;
            if dig[a] < self.out_dims[a] {
                return;
            }
            dig[a] = 0;
        }
    }
}

/// Nearest (copy). Args: out, x, dims, taps, weights, ndim, k, rows, n_out, interp.
fn resize_copy<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let t = tables::<T>(args, false)?;
    run_copy::<T>(args, &t)
}

fn run_copy<T: Element>(args: &BuiltinArgs<'_>, t: &Tables) -> Result<()> {
    if t.n_out == 0 {
        return Ok(());
    }
    if args.usize(9)? != 0 {
        return arg_err(args, 9, "interp must be 0 for a copy");
    }
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    // SAFETY: x holds x_len elements; copied first if it overlaps out.
    let src = unsafe { input_slice(&x, t.x_len, &[out_range(&out)]) };
    let src: &[T] = &src;
    let r = t.out_dims.len();
    t.for_ranges(|s, e, dig| {
        // SAFETY: the tasks' ranges are disjoint, inside out[..n_out].
        let o = unsafe { out.slice_mut(s, e) };
        for v in o.iter_mut() {
            let mut off = 0;
            for (a, &d) in dig.iter().enumerate().take(r) {
                off += t.taps[t.row(a, d) * (1 + t.k) + 1] * t.strides[a];
            }
            *v = src[off];
            t.advance(dig);
        }
    });
    Ok(())
}

/// Floats: nearest copies, interp 1 interpolates.
fn resize_float<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let t = tables::<T>(args, true)?;
    if args.usize(9)? == 0 {
        return run_copy::<T>(args, &t);
    }
    if t.n_out == 0 {
        return Ok(());
    }
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    // The weights are values of the compute type: the conversion is exact.
    let w: Vec<T::Real> = t.weights.iter().map(|&v| T::Real::from_f64(v)).collect();
    // SAFETY: x holds x_len elements; copied first if it overlaps out.
    let src = unsafe { input_slice(&x, t.x_len, &[out_range(&out)]) };
    let src: &[T] = &src;
    t.for_ranges(|s, e, dig| {
        // SAFETY: the tasks' ranges are disjoint, inside out[..n_out].
        let o = unsafe { out.slice_mut(s, e) };
        for v in o.iter_mut() {
            *v = T::store(eval::<T>(src, &t, &w, dig, 0, 0));
            t.advance(dig);
        }
    });
    Ok(())
}

/// The value of axes `a..` at input offset `base` (the contract's nesting).
fn eval<T: FloatElement>(
    x: &[T],
    t: &Tables,
    w: &[T::Real],
    dig: &[usize; MAX_RANK],
    a: usize,
    base: usize,
) -> T::Real {
    let row = t.row(a, dig[a]);
    let taps = &t.taps[row * (1 + t.k)..(row + 1) * (1 + t.k)];
    let ws = &w[row * t.k..(row + 1) * t.k];
    let last = a + 1 == t.in_dims.len();
    let mut acc = T::Real::ZERO;
    for i in 0..taps[0] {
        let off = base + taps[1 + i] * t.strides[a];
        let v = if last {
            x[off].load()
        } else {
            eval::<T>(x, t, w, dig, a + 1, off)
        };
        acc = if i == 0 { ws[i] * v } else { ws[i].fma(v, acc) };
    }
    acc
}
