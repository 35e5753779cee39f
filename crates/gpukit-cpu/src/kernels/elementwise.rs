//! Elementwise kernels: binary ops on equal shapes, binary ops with N-D stride
//! broadcast, unary maps. Each output element is exactly `T::binary(op, a, b)` or
//! `UnaryOp::float(x)`; vectorisation only spreads different elements over lanes.

use std::borrow::Cow;

use gpukit_core::abi::contents::broadcast_dims;
use gpukit_core::numeric::{Arith, BinaryOp, Real, UnaryOp, abs, neg, relu, rsqrt};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::reduce::CpuFloat;
use super::simd::dispatch;
use super::{PAR_GRAIN, arg_err, input_slice};
use crate::args::{BuiltinArgs, RawBuf};
use crate::vmath::{LaneMath, SliceOp};

const fn bop(c: u8) -> BinaryOp {
    match c {
        0 => BinaryOp::Add,
        1 => BinaryOp::Sub,
        2 => BinaryOp::Mul,
        3 => BinaryOp::Div,
        _ => BinaryOp::Pow,
    }
}

const fn uop(c: u8) -> UnaryOp {
    match c {
        0 => UnaryOp::Relu,
        1 => UnaryOp::Sigmoid,
        2 => UnaryOp::Exp,
        3 => UnaryOp::Tanh,
        4 => UnaryOp::Sqrt,
        5 => UnaryOp::Log,
        6 => UnaryOp::Abs,
        7 => UnaryOp::Neg,
        8 => UnaryOp::Rsqrt,
        9 => UnaryOp::Silu,
        10 => UnaryOp::Softplus,
        11 => UnaryOp::Sin,
        _ => UnaryOp::Cos,
    }
}

/// An input of an elementwise op: the output itself (exact in-place) or a slice no
/// task writes.
enum Src<'a, T: Clone> {
    Out,
    Slice(Cow<'a, [T]>),
}

/// Classifies input `inp` of an op writing `out[..n]`.
///
/// # Safety
/// Both buffers hold at least `n` elements; only `out` is written during the launch.
unsafe fn source<'a, T: Element>(out: &RawBuf<'a, T>, inp: &RawBuf<'a, T>, n: usize) -> Src<'a, T> {
    if n > 0 && out.ptr() == inp.ptr() {
        return Src::Out;
    }
    let o = out.ptr() as usize;
    let outs = [(o, o + n * std::mem::size_of::<T>())];
    // SAFETY: n <= inp.len (caller); the only buffer written is `out[..n]`.
    Src::Slice(unsafe { input_slice(inp, n, &outs) })
}

/// Runs `body(start, out_chunk)` over `out[..n]` in parallel chunks.
///
/// # Safety
/// `n <= out.len()`, and nothing else reads or writes `out[..n]` during the call
/// except through the chunk handed to `body`.
pub(super) unsafe fn par_chunks<T: Element>(
    out: &RawBuf<'_, T>,
    n: usize,
    body: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    let tasks = n.div_ceil(PAR_GRAIN);
    let out = *out;
    let run = |t: usize| {
        let s = t * PAR_GRAIN;
        let e = (s + PAR_GRAIN).min(n);
        // SAFETY: chunks are disjoint and inside out[..n] (caller); each task holds
        // only its own chunk.
        let chunk = unsafe { out.slice_mut(s, e) };
        body(s, chunk);
    };
    if tasks <= 1 {
        (0..tasks).for_each(run);
    } else {
        (0..tasks).into_par_iter().for_each(run);
    }
}

/// `out[i] = op(a[i], b[i])`, `i < n`. Args: out, a, b, n.
pub(crate) fn binary<T: Arith, const OP: u8>(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(3)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    args.need(0, &out, n)?;
    args.need(1, &a, n)?;
    args.need(2, &b, n)?;
    // SAFETY: all three hold n elements (checked); only out[..n] is written.
    let (sa, sb) = unsafe { (source(&out, &a, n), source(&out, &b, n)) };
    // The op as a constant inside the loop (see `binary_bc`).
    let f = |x: T, y: T| T::binary(const { bop(OP) }, x, y);
    let body = |s: usize, o: &mut [T]| {
        let e = s + o.len();
        dispatch(
            #[inline(always)]
            || match (&sa, &sb) {
                (Src::Out, Src::Out) => o.iter_mut().for_each(|v| *v = f(*v, *v)),
                (Src::Out, Src::Slice(b)) => {
                    o.iter_mut().zip(&b[s..e]).for_each(|(v, &y)| *v = f(*v, y))
                }
                (Src::Slice(a), Src::Out) => {
                    o.iter_mut().zip(&a[s..e]).for_each(|(v, &x)| *v = f(x, *v))
                }
                (Src::Slice(a), Src::Slice(b)) => o
                    .iter_mut()
                    .zip(a[s..e].iter().zip(&b[s..e]))
                    .for_each(|(v, (&x, &y))| *v = f(x, y)),
            },
        )
    };
    // SAFETY: n <= out.len; inputs are either the chunk itself or never written.
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// [`UnaryOp::real`] of op `OP` with the portable functions in lane form (same bits,
/// branch-free so the loop around it vectorises). The op is a const parameter so that
/// the match folds away inside the loop (a run-time op left a switch per element,
/// which blocks vectorisation).
#[inline(always)]
fn unary_lane<R: LaneMath, const OP: u8>(x: R) -> R {
    match const { uop(OP) } {
        UnaryOp::Relu => relu(x),
        UnaryOp::Sigmoid => x.sigmoid_l(),
        UnaryOp::Exp => x.exp_l(),
        UnaryOp::Tanh => x.tanh_l(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Log => x.log_l(),
        UnaryOp::Abs => abs(x),
        UnaryOp::Neg => neg(x),
        UnaryOp::Rsqrt => rsqrt(x),
        UnaryOp::Silu => x.silu_l(),
        UnaryOp::Softplus => x.softplus_l(),
        UnaryOp::Sin => x.sin_l(),
        UnaryOp::Cos => x.cos_l(),
    }
}

/// One task's range through [`LaneMath::slice`]`(op, …)` (an explicit-SIMD loop with
/// the bits of `f`):
/// directly when the storage type is the compute type, else through a stack buffer of
/// the compute type (f16, bf16: load, `slice` in place, store). `xs` is the input range
/// (`None`: `o` in place). Returns `false`, touching nothing, where `op` has no loop
/// at the calling thread's SIMD level: the caller then runs `f` itself.
pub(crate) fn slice_task<T: CpuFloat<Real: LaneMath>>(
    op: SliceOp,
    f: impl Fn(T::Real) -> T::Real,
    o: &mut [T],
    xs: Option<&[T]>,
) -> bool {
    let slice = |src: Option<&[T::Real]>, out: &mut [T::Real]| T::Real::slice(op, src, out);
    // An empty call says whether the loop exists at this thread's level.
    if !slice(None, &mut []) {
        return false;
    }
    match xs {
        None => {
            if let Some(or) = T::as_real_mut(o) {
                return slice(None, or);
            }
        }
        Some(x) => {
            if let (Some(xr), Some(or)) = (T::as_real(x), T::as_real_mut(o)) {
                return slice(Some(xr), or);
            }
        }
    }
    const B: usize = 256;
    let mut buf = [T::Real::ZERO; B];
    for c0 in (0..o.len()).step_by(B) {
        let c1 = (c0 + B).min(o.len());
        let b = &mut buf[..c1 - c0];
        T::load_slice(xs.map_or(&o[c0..c1], |x| &x[c0..c1]), b);
        if !slice(None, b) {
            // The level changed since the check above (a process-wide limit set
            // meanwhile): the same bits from `f` (earlier chunks are written, so the
            // range cannot go back to the caller when in place).
            b.iter_mut().for_each(|v| *v = f(*v));
        }
        for (d, &v) in o[c0..c1].iter_mut().zip(b.iter()) {
            *d = T::store(v);
        }
    }
    true
}

/// `out[i] = f(a[i])`, `i < n`. Args: out, a, n.
pub(crate) fn unary<T: CpuFloat<Real: LaneMath>, const OP: u8>(
    args: &BuiltinArgs<'_>,
) -> Result<()> {
    // tanh, sigmoid and exp have explicit-SIMD loops (f32 at AVX-512).
    let slice_op = match const { uop(OP) } {
        UnaryOp::Tanh => Some(SliceOp::Tanh),
        UnaryOp::Sigmoid => Some(SliceOp::Sigmoid),
        UnaryOp::Exp => Some(SliceOp::Exp),
        _ => None,
    };
    let n = args.usize(2)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    args.need(0, &out, n)?;
    args.need(1, &a, n)?;
    // SAFETY: both hold n elements (checked); only out[..n] is written.
    let sa = unsafe { source(&out, &a, n) };
    let body = |s: usize, o: &mut [T]| {
        let e = s + o.len();
        if let Some(op) = slice_op {
            let xs = match &sa {
                Src::Out => None,
                Src::Slice(a) => Some(&a[s..e]),
            };
            if slice_task(op, unary_lane::<T::Real, OP>, o, xs) {
                return;
            }
        }
        dispatch(
            #[inline(always)]
            // Plain loops, no inner closures: the lane forms must inline into this
            // target-feature context to vectorise (a closure compiled on its own would
            // run scalar code calling the library fma per operation; same bits).
            || match &sa {
                Src::Out => {
                    for v in o.iter_mut() {
                        *v = T::store(unary_lane::<T::Real, OP>(v.load()));
                    }
                }
                Src::Slice(a) => {
                    for (v, &x) in o.iter_mut().zip(&a[s..e]) {
                        *v = T::store(unary_lane::<T::Real, OP>(x.load()));
                    }
                }
            },
        )
    };
    // SAFETY: n <= out.len; the input is either the chunk itself or never written.
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// Drops size-1 dims and merges dims that are contiguous for both operands.
fn simplify(dims: &[usize], sa: &[i64], sb: &[i64]) -> (Vec<usize>, Vec<isize>, Vec<isize>) {
    let (mut d, mut a, mut b) = (Vec::new(), Vec::<isize>::new(), Vec::<isize>::new());
    for i in 0..dims.len() {
        if dims[i] == 1 {
            continue;
        }
        let (x, y) = (sa[i] as isize, sb[i] as isize);
        if let (Some(&ld), Some(&la), Some(&lb)) = (d.last(), a.last(), b.last()) {
            // The previous (outer) dim continues this one for both operands.
            let _ = ld;
            if la == x.wrapping_mul(dims[i] as isize) && lb == y.wrapping_mul(dims[i] as isize) {
                let k = d.len() - 1;
                d[k] *= dims[i];
                a[k] = x;
                b[k] = y;
                continue;
            }
        }
        d.push(dims[i]);
        a.push(x);
        b.push(y);
    }
    if d.is_empty() {
        d.push(1);
        a.push(0);
        b.push(0);
    }
    (d, a, b)
}

/// Broadcast binary op. Args: out, a, b, dims, astr, bstr, ndim, n_out.
pub(crate) fn binary_bc<T: Arith, const OP: u8>(args: &BuiltinArgs<'_>) -> Result<()> {
    let ndim = args.usize(6)?;
    let n_out = args.usize(7)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    let dims_b = args.buf::<i64>(3)?;
    let astr_b = args.buf::<i64>(4)?;
    let bstr_b = args.buf::<i64>(5)?;
    if ndim == 0 {
        return arg_err(args, 6, "ndim must be at least 1");
    }
    args.need(3, &dims_b, ndim)?;
    args.need(4, &astr_b, ndim)?;
    args.need(5, &bstr_b, ndim)?;
    args.need(0, &out, n_out)?;
    // SAFETY: each holds ndim elements (checked); nothing has been written yet and the
    // copies are taken now.
    let (dims_i, astr, bstr) = unsafe {
        (
            dims_b.slice()[..ndim].to_vec(),
            astr_b.slice()[..ndim].to_vec(),
            bstr_b.slice()[..ndim].to_vec(),
        )
    };
    // The shared content check (the emulator applies the same before its launch).
    let dims = broadcast_dims(
        args.kernel(),
        &dims_i,
        &astr,
        &bstr,
        n_out,
        a.len(),
        b.len(),
    )?;
    if n_out == 0 {
        return Ok(());
    }
    let o = out.ptr() as usize;
    let outs = [(o, o + n_out * std::mem::size_of::<T>())];
    // SAFETY: whole buffers; a copy is taken if one overlaps out[..n_out].
    let (av, bv) = unsafe {
        (
            input_slice(&a, a.len(), &outs),
            input_slice(&b, b.len(), &outs),
        )
    };
    let (dims, sa, sb) = simplify(&dims, &astr, &bstr);
    let nd = dims.len();
    // The op as a constant inside the loop (a captured run-time op leaves a match per
    // element in the loop, which blocks vectorisation).
    let f = |x: T, y: T| T::binary(const { bop(OP) }, x, y);
    let (av, bv) = (&*av, &*bv);
    let body = |s: usize, o: &mut [T]| {
        // Coordinates and offsets of element s.
        let mut coord = vec![0usize; nd];
        let (mut ao, mut bo) = (0isize, 0isize);
        let mut rem = s;
        for d in (0..nd).rev() {
            coord[d] = rem % dims[d];
            rem /= dims[d];
            ao += coord[d] as isize * sa[d];
            bo += coord[d] as isize * sb[d];
        }
        let (ia, ib) = (sa[nd - 1], sb[nd - 1]);
        let inner = dims[nd - 1];
        let mut i = 0;
        while i < o.len() {
            let run = (inner - coord[nd - 1]).min(o.len() - i);
            let dst = &mut o[i..i + run];
            // In range: every offset lies in the checked [lo, hi] range.
            let (a0, b0) = (ao as usize, bo as usize);
            dispatch(
                #[inline(always)]
                || match (ia, ib) {
                    (1, 1) => dst
                        .iter_mut()
                        .zip(av[a0..a0 + run].iter().zip(&bv[b0..b0 + run]))
                        .for_each(|(v, (&x, &y))| *v = f(x, y)),
                    (1, 0) => {
                        let y = bv[b0];
                        dst.iter_mut()
                            .zip(&av[a0..a0 + run])
                            .for_each(|(v, &x)| *v = f(x, y))
                    }
                    (0, 1) => {
                        let x = av[a0];
                        dst.iter_mut()
                            .zip(&bv[b0..b0 + run])
                            .for_each(|(v, &y)| *v = f(x, y))
                    }
                    _ => {
                        for (j, v) in dst.iter_mut().enumerate() {
                            let x = av[(ao + j as isize * ia) as usize];
                            let y = bv[(bo + j as isize * ib) as usize];
                            *v = f(x, y);
                        }
                    }
                },
            );
            i += run;
            // Advance the coordinates by `run` along the innermost dim, carrying.
            coord[nd - 1] += run;
            ao += run as isize * ia;
            bo += run as isize * ib;
            let mut d = nd - 1;
            while coord[d] == dims[d] && d > 0 {
                ao -= dims[d] as isize * sa[d];
                bo -= dims[d] as isize * sb[d];
                coord[d] = 0;
                d -= 1;
                coord[d] += 1;
                ao += sa[d];
                bo += sb[d];
            }
        }
    };
    // SAFETY: n_out <= out.len (checked); inputs are never written or are copies.
    unsafe { par_chunks(&out, n_out, body) };
    Ok(())
}
