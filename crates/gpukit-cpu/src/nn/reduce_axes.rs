//! CPU kernel of the reductions along axes (`reduce_axes`): sum, mean, max, min, prod,
//! L1, L2, log-sum-exp, in the order of [`gpukit_core::reduce_axes`].
//!
//! Outputs run in parallel (rayon tasks of about [`PAR_GRAIN`] items). A line's items
//! `j` are gathered through the layout's strides into a stack block of
//! [`BLOCK`] compute-type values (a contiguous innermost run is converted in one slice
//! load), transformed in place (`|x|`, `x·2^-e`, `exp(x - m)`), then folded into the 32
//! lanes of the reduction shape: item `j` of a chunk goes to lane `j % 32`, so a block
//! (a multiple of 32 items, starting at a multiple of 32) feeds lane `l` with its items
//! `l, l+32, ...` in order, and the lanes' loop is a plain element-wise vector loop.
//! Chunks of [`CHUNK`] items combine as [`reduce::combine_partials`] does. Nothing is
//! allocated per line (lines of more than 64 chunks keep their chunk results in a
//! `Vec`).

use gpukit_core::abi::reduce_axes::reduce_layout;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::Real;

use gpukit_core::reduce::{self, CHUNK, LANES};
use gpukit_core::reduce_axes::{
    AxisReal, MAX_RANK, ReduceOp, l2_exponent, l2_finish, lse_max, mean_finish,
};
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn};
use crate::kernels::reduce::CpuFloat;
use crate::kernels::simd::dispatch;
use crate::kernels::softmax::SoftReal;
use crate::kernels::{PAR_GRAIN, arg_err, input_slice, out_range};

/// Items gathered and converted per step (a multiple of [`LANES`] dividing [`CHUNK`]).
const BLOCK: usize = 512;
const _: () = assert!(BLOCK.is_multiple_of(LANES) && CHUNK.is_multiple_of(BLOCK));

/// Chunk results kept on the stack up to this many chunks per line.
const STACK_PARTS: usize = 64;

/// One output's items: `x[base + offset(j)]` for `j < n`, the offset row-major over the
/// reduced `dims` with `strides`.
struct Line<'a, T> {
    x: &'a [T],
    base: usize,
    dims: &'a [usize],
    strides: &'a [usize],
    n: usize,
}

impl<T: Copy> Line<'_, T> {
    /// `out[i] = f(item j0 + i)` for `i < out.len()`; `slice` converts a contiguous run
    /// at once (the innermost reduced axis with stride 1).
    #[inline(always)]
    fn gather<R: Copy>(
        &self,
        j0: usize,
        out: &mut [R],
        f: impl Fn(T) -> R,
        slice: impl Fn(&[T], &mut [R]),
    ) {
        let len = out.len();
        let k = self.dims.len();
        if k == 0 {
            // One item (every reduced extent 1): offset 0.
            for o in out.iter_mut() {
                *o = f(self.x[self.base]);
            }
            return;
        }
        let (dl, sl) = (self.dims[k - 1], self.strides[k - 1]);
        // Digits of j0 over the reduced dims.
        let mut dig = [0usize; MAX_RANK];
        let mut v = j0;
        for i in (0..k).rev() {
            dig[i] = v % self.dims[i];
            v /= self.dims[i];
        }
        let mut i = 0;
        while i < len {
            let off = self.base
                + dig[..k]
                    .iter()
                    .zip(self.strides)
                    .map(|(&g, &s)| g * s)
                    .sum::<usize>();
            // The rest of the innermost run, or of the block.
            let run = (dl - dig[k - 1]).min(len - i);
            if sl == 1 {
                slice(&self.x[off..off + run], &mut out[i..i + run]);
            } else {
                for (t, o) in out[i..i + run].iter_mut().enumerate() {
                    *o = f(self.x[off + t * sl]);
                }
            }
            i += run;
            // Advance the digits by `run` (the innermost wraps at most once).
            dig[k - 1] += run;
            let mut d = k - 1;
            while d > 0 && dig[d] >= self.dims[d] {
                dig[d] -= self.dims[d];
                dig[d - 1] += 1;
                d -= 1;
            }
        }
    }
}

/// `acc[l] = step(acc[l], t[32 b + l])` over `t` (item `i` to lane `i % 32`, in order).
#[inline(always)]
fn lanes<R: Copy>(acc: &mut [R; LANES], t: &[R], step: impl Fn(R, R) -> R) {
    let mut blocks = t.chunks_exact(LANES);
    for b in &mut blocks {
        for l in 0..LANES {
            acc[l] = step(acc[l], b[l]);
        }
    }
    for (l, &v) in blocks.remainder().iter().enumerate() {
        acc[l] = step(acc[l], v);
    }
}

/// The float compute type's side of a line (loads, transforms, lanes).
trait LineReal: SoftReal + AxisReal {}
impl<R: SoftReal + AxisReal> LineReal for R {}

/// One chunk of [`shape`] (items `s..e`, at most [`CHUNK`]): blocks gathered and
/// converted, `prep` applied, folded into the lanes, then the tree.
#[inline(always)]
fn chunk_of<T: CpuFloat>(
    line: &Line<'_, T>,
    s: usize,
    e: usize,
    zero: T::Real,
    prep: &impl Fn(&mut [T::Real]),
    step: impl Fn(T::Real, T::Real) -> T::Real + Copy,
    combine: impl Fn(T::Real, T::Real) -> T::Real + Copy,
) -> T::Real {
    let mut acc = [zero; LANES];
    let mut tmp = [<T::Real as Real>::ZERO; BLOCK];
    let mut b0 = s;
    while b0 < e {
        let b1 = (b0 + BLOCK).min(e);
        let t = &mut tmp[..b1 - b0];
        line.gather(b0, t, |v| v.load(), |x, o| T::load_slice(x, o));
        prep(t);
        lanes(&mut acc, t, step);
        b0 = b1;
    }
    reduce::tree(acc, combine)
}

/// The reduction shape over a line's items: per chunk, blocks gathered and converted,
/// `prep` applied, folded into lanes from `zero` with `step`, the tree with `combine`;
/// chunks combined as [`reduce::fold`] does.
#[inline(always)]
fn shape<T: CpuFloat>(
    line: &Line<'_, T>,
    zero: T::Real,
    prep: impl Fn(&mut [T::Real]),
    step: impl Fn(T::Real, T::Real) -> T::Real + Copy,
    combine: impl Fn(T::Real, T::Real) -> T::Real + Copy,
) -> T::Real {
    let chunk = |s: usize, e: usize| chunk_of(line, s, e, zero, &prep, step, combine);
    let n = line.n;
    if n <= CHUNK {
        return chunk(0, n);
    }
    let nc = reduce::chunks(n);
    let one = |c: usize| chunk(c * CHUNK, ((c + 1) * CHUNK).min(n));
    if nc <= STACK_PARTS {
        let mut parts = [zero; STACK_PARTS];
        for (c, p) in parts[..nc].iter_mut().enumerate() {
            *p = one(c);
        }
        reduce::combine_partials(&parts[..nc], zero, combine)
    } else {
        let parts: Vec<T::Real> = (0..nc).map(one).collect();
        reduce::combine_partials(&parts, zero, combine)
    }
}

/// An order-free fold (`max_nan`, `min_nan`) over a line's items from `init`, with
/// `prep` applied to each block first.
#[inline(always)]
fn fold_all<T: CpuFloat>(
    line: &Line<'_, T>,
    init: T::Real,
    prep: impl Fn(&mut [T::Real]),
    f: impl Fn(T::Real, T::Real) -> T::Real,
) -> T::Real {
    let mut tmp = [<T::Real as Real>::ZERO; BLOCK];
    let mut acc = [init; LANES];
    let mut b0 = 0;
    while b0 < line.n {
        let b1 = (b0 + BLOCK).min(line.n);
        let t = &mut tmp[..b1 - b0];
        line.gather(b0, t, |v| v.load(), |x, o| T::load_slice(x, o));
        prep(t);
        lanes(&mut acc, t, &f);
        b0 = b1;
    }
    acc.iter().fold(init, |a, &v| f(a, v))
}

/// `t[i] = |t[i]|`.
#[inline(always)]
fn prep_abs<R: LineReal>(t: &mut [R]) {
    t.iter_mut().for_each(|v| *v = v.abs());
}

/// [`AxisReal::scale`] with its powers of two computed once: `x * p1`, or
/// `(x * p1) * p2` when the exponent is past `MAX_EXP` (`big`).
#[inline(always)]
fn prep_scale<R: LineReal>(t: &mut [R], p1: R, p2: R, big: bool) {
    if big {
        t.iter_mut().for_each(|v| *v = (*v * p1) * p2);
    } else {
        t.iter_mut().for_each(|v| *v = *v * p1);
    }
}

/// `t[i] = exp(t[i] - m)` (the lane form: the same bits as `Real::exp`).
#[inline(always)]
fn prep_exp<R: LineReal>(t: &mut [R], m: R) {
    t.iter_mut().for_each(|v| *v = (*v - m).exp_l());
}

/// `max_nan` in its branch-free lane form (the same value).
#[inline(always)]
fn max_l<R: LineReal>(a: R, b: R) -> R {
    a.max_nan_l(b)
}

/// `min_nan` as `-max_nan(-a, -b)` in lane form: the same value (`min(-0, +0) =
/// -max(+0, -0) = -0`; a NaN stays a NaN).
#[inline(always)]
fn min_l<R: LineReal>(a: R, b: R) -> R {
    -((-a).max_nan_l(-b))
}

/// One float output: the op's row of [`gpukit_core::reduce_axes`]. Every closure
/// handed down is `#[inline(always)]`, so the whole line compiles inside the SIMD
/// dispatch (FMA, vector exp).
#[inline(always)]
fn float_line<T: CpuFloat>(op: ReduceOp, line: &Line<'_, T>) -> T
where
    T::Real: LineReal,
{
    type R<T> = <T as gpukit_core::numeric::FloatElement>::Real;
    let zero = <R<T> as Real>::ZERO;
    macro_rules! sum_of {
        ($prep:expr) => {
            shape(
                line,
                zero,
                #[inline(always)]
                $prep,
                #[inline(always)]
                |a: R<T>, b: R<T>| a + b,
                #[inline(always)]
                |a: R<T>, b: R<T>| a + b,
            )
        };
    }
    let r = match op {
        ReduceOp::Sum => sum_of!(|_: &mut [R<T>]| {}),
        ReduceOp::Mean => mean_finish(sum_of!(|_: &mut [R<T>]| {}), line.n),
        ReduceOp::Max => fold_all(
            line,
            R::<T>::NEG_INFINITY,
            #[inline(always)]
            |_: &mut [R<T>]| {},
            max_l::<R<T>>,
        ),
        ReduceOp::Min => fold_all(
            line,
            R::<T>::INFINITY,
            #[inline(always)]
            |_: &mut [R<T>]| {},
            min_l::<R<T>>,
        ),
        ReduceOp::Prod => shape(
            line,
            R::<T>::ONE,
            #[inline(always)]
            |_: &mut [R<T>]| {},
            #[inline(always)]
            |a: R<T>, b: R<T>| a * b,
            #[inline(always)]
            |a: R<T>, b: R<T>| a * b,
        ),
        ReduceOp::L1 => sum_of!(|t: &mut [R<T>]| prep_abs(t)),
        ReduceOp::L2 => match l2_exponent(fold_all(line, zero, prep_abs::<R<T>>, max_l::<R<T>>)) {
            Err(r) => r,
            Ok(e) => {
                let k = -e;
                let big = k > R::<T>::MAX_EXP;
                let p1 = R::<T>::pow2(if big { k - R::<T>::MAX_EXP } else { k });
                let p2 = R::<T>::pow2(R::<T>::MAX_EXP);
                let s = shape(
                    line,
                    zero,
                    #[inline(always)]
                    |t: &mut [R<T>]| prep_scale(t, p1, p2, big),
                    #[inline(always)]
                    |a: R<T>, y: R<T>| y.fma(y, a),
                    #[inline(always)]
                    |a: R<T>, b: R<T>| a + b,
                );
                l2_finish(s, e)
            }
        },
        ReduceOp::LogSumExp => {
            let m = fold_all(
                line,
                R::<T>::NEG_INFINITY,
                #[inline(always)]
                |_: &mut [R<T>]| {},
                max_l::<R<T>>,
            );
            match lse_max(m) {
                Err(r) => r,
                Ok(m) => m + sum_of!(|t: &mut [R<T>]| prep_exp(t, m)).log(),
            }
        }
    };
    T::store(r)
}

/// A dtype of the kernel: one output from its line.
trait ReduceElem: Element {
    /// The reduction `op` of `line` (`op` is valid for the dtype: checked first).
    fn line(op: ReduceOp, line: &Line<'_, Self>) -> Self;
}

macro_rules! float_elem {
    ($t:ty) => {
        impl ReduceElem for $t {
            #[inline(always)]
            fn line(op: ReduceOp, line: &Line<'_, Self>) -> Self {
                float_line(op, line)
            }
        }
    };
}
float_elem!(f32);
float_elem!(f64);
float_elem!(f16);
float_elem!(bf16);

macro_rules! int_elem {
    ($t:ty) => {
        impl ReduceElem for $t {
            #[inline(always)]
            fn line(op: ReduceOp, line: &Line<'_, Self>) -> Self {
                // Wrapping +, * and max, min: any grouping gives the same integer.
                let (init, f): ($t, fn($t, $t) -> $t) = match op {
                    ReduceOp::Prod => (1, <$t>::wrapping_mul),
                    ReduceOp::Max => (<$t>::MIN, <$t>::max),
                    ReduceOp::Min => (<$t>::MAX, <$t>::min),
                    _ => (0, <$t>::wrapping_add),
                };
                let mut tmp = [0 as $t; BLOCK];
                let mut acc = init;
                let mut b0 = 0;
                while b0 < line.n {
                    let b1 = (b0 + BLOCK).min(line.n);
                    let t = &mut tmp[..b1 - b0];
                    line.gather(b0, t, |v| v, |x, o| o.copy_from_slice(x));
                    acc = t.iter().fold(acc, |a, &v| f(a, v));
                    b0 = b1;
                }
                acc
            }
        }
    };
}
int_elem!(i64);
int_elem!(i32);

/// Reduction along axes. Args: out, x, dims, strides, ndim, nkeep, n_out, n_red, code.
fn reduce_axes<T: ReduceElem>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (ndim, nkeep) = (args.usize(4)?, args.usize(5)?);
    let (n_out, n_red, code) = (args.usize(6)?, args.usize(7)?, args.i64(8)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let dims_b = args.buf::<i64>(2)?;
    let strides_b = args.buf::<i64>(3)?;
    if ndim == 0 || ndim > MAX_RANK {
        return arg_err(args, 4, format!("ndim {ndim} outside 1..={MAX_RANK}"));
    }
    if nkeep > ndim {
        return arg_err(args, 5, format!("nkeep {nkeep} exceeds ndim {ndim}"));
    }
    let op = match ReduceOp::from_code(code) {
        Some(op)
            if op.supports_ints()
                || matches!(T::DTYPE, DType::F32 | DType::F64 | DType::F16 | DType::BF16) =>
        {
            op
        }
        _ => {
            return arg_err(
                args,
                8,
                format!("code {code} is not a reduction of {}", T::DTYPE),
            );
        }
    };
    args.need(0, &out, n_out)?;
    args.need(2, &dims_b, ndim)?;
    args.need(3, &strides_b, ndim)?;
    // SAFETY: each holds ndim elements (checked); copied before anything is written.
    let (di, si) = unsafe {
        (
            dims_b.slice()[..ndim].to_vec(),
            strides_b.slice()[..ndim].to_vec(),
        )
    };
    // The shared content check (the emulator applies the same before its launch).
    let l = reduce_layout(args.kernel(), &di, &si, nkeep, n_out, n_red, x.len())?;
    if n_out == 0 {
        return Ok(());
    }
    // SAFETY: the whole of x is live; copied if it overlaps out.
    let src = unsafe { input_slice(&x, x.len(), &[out_range(&out)]) };
    let src: &[T] = &src;
    let (kd, ks) = (&l.dims[..nkeep], &l.strides[..nkeep]);
    // The reduced group without extents of 1 (an empty reduction reads nothing).
    let (rd, rs) = (&l.dims[nkeep..], &l.strides[nkeep..]);
    let per_task = (PAR_GRAIN / n_red.max(1)).max(1);
    let tasks = n_out.div_ceil(per_task);
    let task = |t: usize| {
        let (o0, o1) = (t * per_task, ((t + 1) * per_task).min(n_out));
        // SAFETY: output ranges are disjoint across tasks and inside out[..n_out].
        let o = unsafe { out.slice_mut(o0, o1) };
        // inline(always): the body must compile inside the dispatch's target features
        // (hardware FMA and the vector exp), not as a baseline x86-64 call.
        dispatch(
            #[inline(always)]
            || {
                for (d, oi) in o.iter_mut().zip(o0..o1) {
                    let mut base = 0;
                    let mut v = oi;
                    for i in (0..kd.len()).rev() {
                        base += (v % kd[i]) * ks[i];
                        v /= kd[i];
                    }
                    let line = Line {
                        x: src,
                        base,
                        dims: if n_red == 0 { &[] } else { rd },
                        strides: rs,
                        n: n_red,
                    };
                    *d = T::line(op, &line);
                }
            },
        );
    };
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    Ok(())
}

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::reduce_axes::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = Vec::new();
    for sig in gpukit_core::abi::reduce_axes::KERNELS {
        for &d in sig.dtypes {
            let f: BuiltinFn = match d {
                DType::F32 => reduce_axes::<f32>,
                DType::F64 => reduce_axes::<f64>,
                DType::F16 => reduce_axes::<f16>,
                DType::BF16 => reduce_axes::<bf16>,
                DType::I64 => reduce_axes::<i64>,
                DType::I32 => reduce_axes::<i32>,
            };
            v.push((gpukit_core::abi::kernel_name(sig.op, d), f));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_walks_row_major_digits() {
        let x: Vec<i32> = (0..60).collect();
        // Reduced dims [3, 4] with strides [20, 1] (axes 0 and 2 of [3, 5, 4]), base 8.
        let line = Line {
            x: &x,
            base: 8,
            dims: &[3, 4],
            strides: &[20, 1],
            n: 12,
        };
        for j0 in 0..12 {
            let mut out = vec![0i32; 12 - j0];
            line.gather(j0, &mut out, |v| v, |a, o| o.copy_from_slice(a));
            let want: Vec<i32> = (j0..12)
                .map(|j| 8 + (j / 4) as i32 * 20 + (j % 4) as i32)
                .collect();
            assert_eq!(out, want, "j0 {j0}");
        }
    }
}
