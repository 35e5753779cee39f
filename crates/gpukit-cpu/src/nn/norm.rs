//! CPU kernels of the neural-network family: the `norm` group (batch norm, layer norm,
//! activations, softmax along an axis, argmax, L2 norm). The order of operations of
//! each is in [`gpukit_core::abi::norm`] and docs/ops/norm.md.
//!
//! Independent outputs (elements, rows, lines) run in parallel with rayon; every long
//! reduction follows [`gpukit_core::reduce`]'s shape exactly: 32 independent lane
//! accumulators (which the compiler keeps in SIMD registers: lanes never mix until the
//! fixed tree), chunks of [`CHUNK`] items combined with
//! [`reduce::combine_partials`]. Softmax along a middle axis processes a tile of
//! adjacent lines together so memory is read contiguously, each line keeping its own
//! lanes and order.

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real, max_nan, min_nan};
use gpukit_core::reduce::{self, CHUNK, LANES};
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::elementwise::slice_task;
use crate::kernels::reduce::{CpuFloat, shape_dot, shape_dot_stored, shape_sum};
use crate::kernels::simd::{dispatch, simd_level};
use crate::kernels::softmax::{SoftReal, softmax_rows};
use crate::kernels::{PAR_GRAIN, arg_err, input_slice, mul, out_range};
use crate::vmath::{LaneMath, SliceOp};

/// Runs `task(t)` for `t < tasks`, in parallel when there is more than one.
pub(super) fn for_tasks(tasks: usize, task: impl Fn(usize) + Sync + Send) {
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}

/// The input of a launch whose output may be exactly the input: `None` when `x` is
/// `out` itself (then the output range is read before it is written), else a slice that
/// no output of the launch writes (copied if it overlaps `out` in any other way).
///
/// # Safety
/// `x` and `out` hold at least `n` elements; nothing writes `x` during the launch except
/// through `out`.
pub(super) unsafe fn source<'a, T: Element>(
    out: &RawBuf<'a, T>,
    x: &RawBuf<'a, T>,
    n: usize,
) -> Option<std::borrow::Cow<'a, [T]>> {
    if out.ptr() == x.ptr() {
        None
    } else {
        // SAFETY: x holds n elements (caller); copied if it overlaps out.
        Some(unsafe { input_slice(x, n, &[out_range(out)]) })
    }
}

/// `o[i] = f(src[i])`, where the source is `o` itself (in place) or `src`.
#[inline(always)]
fn map_into<T: Copy>(o: &mut [T], src: Option<&[T]>, f: impl Fn(T) -> T) {
    match src {
        None => o.iter_mut().for_each(|v| *v = f(*v)),
        Some(s) => o.iter_mut().zip(s).for_each(|(d, &v)| *d = f(v)),
    }
}

// ---------------------------------------------------------------------------------------
// Elementwise activations. Args: out, x, len[, scalars].
// ---------------------------------------------------------------------------------------

/// Applies `f` elementwise over `len` elements (out may be exactly x), in parallel.
fn eltwise<T: FloatElement>(
    args: &BuiltinArgs<'_>,
    f: impl Fn(T::Real) -> T::Real + Sync + Send + Copy,
) -> Result<()> {
    eltwise_with::<T>(args, f, |_, _| false)
}

/// [`eltwise`], where each task first offers its output range and input range (`None`:
/// in place) to `fast`, which returns `true` when it has written the range with the
/// bits of `f`; otherwise the task runs `f`.
fn eltwise_with<T: FloatElement>(
    args: &BuiltinArgs<'_>,
    f: impl Fn(T::Real) -> T::Real + Sync + Send + Copy,
    fast: impl Fn(&mut [T], Option<&[T]>) -> bool + Sync + Send,
) -> Result<()> {
    let n = args.usize(2)?;
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    args.need(0, &out, n)?;
    args.need(1, &x, n)?;
    // SAFETY: both hold n elements (checked); only out[..n] is written.
    let src = unsafe { source(&out, &x, n) };
    let src = src.as_deref();
    let tasks = n.div_ceil(PAR_GRAIN);
    for_tasks(tasks, |t| {
        let (s, e) = (t * PAR_GRAIN, ((t + 1) * PAR_GRAIN).min(n));
        // SAFETY: tasks write disjoint ranges inside out[..n]; in place, each task reads
        // only its own range, before writing each element.
        let o = unsafe { out.slice_mut(s, e) };
        if fast(o, src.map(|x| &x[s..e])) {
            return;
        }
        // Plain loops with `f` called directly: it must inline into the target-feature
        // context to vectorise (a closure left out of line runs scalar code that calls
        // the library fma; same bits, ~50x slower).
        dispatch(
            #[inline(always)]
            || match src {
                None => {
                    for v in o.iter_mut() {
                        *v = T::store(f(v.load()));
                    }
                }
                Some(x) => {
                    for (d, &v) in o.iter_mut().zip(&x[s..e]) {
                        *d = T::store(f(v.load()));
                    }
                }
            },
        );
    });
    Ok(())
}

/// As [`eltwise`], but each task first tries `op`'s explicit-SIMD loop, with the bits
/// of `f` ([`slice_task`]).
fn eltwise_slice<T: CpuFloat<Real: LaneMath>>(
    args: &BuiltinArgs<'_>,
    f: impl Fn(T::Real) -> T::Real + Sync + Send + Copy,
    op: SliceOp,
) -> Result<()> {
    eltwise_with::<T>(args, f, move |o: &mut [T], xs: Option<&[T]>| {
        slice_task(op, f, o, xs)
    })
}

fn leaky_relu<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let alpha = T::Real::from_f64(args.f64(3)?);
    eltwise::<T>(args, move |r| {
        if r.is_nan() || r > T::Real::ZERO {
            r
        } else {
            alpha * r
        }
    })
}

fn clip<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let lo = T::Real::from_f64(args.f64(3)?);
    let hi = T::Real::from_f64(args.f64(4)?);
    eltwise::<T>(args, move |r| min_nan(max_nan(r, lo), hi))
}

fn erf<T: CpuFloat<Real: LaneMath>>(args: &BuiltinArgs<'_>) -> Result<()> {
    eltwise_slice::<T>(
        args,
        #[inline(always)]
        |r| r.erf_l(),
        SliceOp::Erf,
    )
}

/// GELU (erf form): `x * fma(0.5, erf(x * R(1/√2)), 0.5)`; `-inf` gives `-0.0`.
/// The kernel runs its lane form [`LaneMath::gelu_l`] (same bits; this is the
/// reference the tests compare it with).
#[cfg_attr(not(test), allow(dead_code))]
#[inline(always)]
pub(crate) fn gelu_scalar<R: Real>(x: R) -> R {
    if x == R::NEG_INFINITY {
        return -R::ZERO;
    }
    let half = R::from_f64(0.5);
    let e = (x * R::from_f64(std::f64::consts::FRAC_1_SQRT_2)).erf();
    x * half.fma(e, half)
}

/// GELU (tanh): `u = R(√(2/π)) * fma(R(0.044715), (x*x)*x, x)`,
/// `x * fma(0.5, tanh(u), 0.5)`; `-inf` gives `-0.0`. The kernel runs
/// [`LaneMath::gelu_tanh_l`].
#[cfg_attr(not(test), allow(dead_code))]
#[inline(always)]
pub(crate) fn gelu_tanh_scalar<R: Real>(x: R) -> R {
    if x == R::NEG_INFINITY {
        return -R::ZERO;
    }
    let half = R::from_f64(0.5);
    let c = R::from_f64((2.0 / std::f64::consts::PI).sqrt());
    let k = R::from_f64(0.044715);
    let u = c * k.fma((x * x) * x, x);
    x * half.fma(u.tanh(), half)
}

fn gelu<T: CpuFloat<Real: LaneMath>>(args: &BuiltinArgs<'_>) -> Result<()> {
    eltwise_slice::<T>(
        args,
        #[inline(always)]
        |r| r.gelu_l(),
        SliceOp::Gelu,
    )
}

fn gelu_tanh<T: FloatElement<Real: LaneMath>>(args: &BuiltinArgs<'_>) -> Result<()> {
    eltwise::<T>(
        args,
        #[inline(always)]
        |r| r.gelu_tanh_l(),
    )
}

// ---------------------------------------------------------------------------------------
// Batch norm. Args: out, x, scale, bias, mean, var, n, c, s, eps.
// ---------------------------------------------------------------------------------------

fn batch_norm<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (n, c, s) = (args.usize(6)?, args.usize(7)?, args.usize(8)?);
    let eps = T::Real::from_f64(args.f64(9)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let planes = mul(args, 7, n, c)?;
    let total = mul(args, 8, planes, s)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    // Every buffer is checked before anything is allocated: a lying `c` is an error,
    // never a `c`-sized allocation (and the table's own allocation is fallible).
    for slot in 2..6 {
        args.need(slot, &args.buf::<T>(slot)?, c)?;
    }
    if total == 0 {
        return Ok(());
    }
    let mut params: Vec<[T::Real; 4]> = Vec::new();
    params
        .try_reserve_exact(c)
        .map_err(|_| gpukit_core::Error::OutOfMemory {
            requested: c.saturating_mul(std::mem::size_of::<[T::Real; 4]>()),
            available: crate::available_memory() as usize,
        })?;
    params.resize(c, [T::Real::ZERO; 4]);
    for (i, slot) in (2..6).enumerate() {
        let b = args.buf::<T>(slot)?;
        // SAFETY: b holds c elements (checked); it is only read, and the op forbids any
        // overlap with out, so nothing writes it while the slice lives.
        let v = unsafe { input_slice(&b, c, &[out_range(&out)]) };
        for (p, &e) in params.iter_mut().zip(v.iter()) {
            p[i] = e.load();
        }
    }
    // [scale, bias, mean, den]: den = sqrt(var + eps), once per channel.
    for p in &mut params {
        p[3] = (p[3] + eps).sqrt();
    }
    // SAFETY: both hold total elements (checked); only out[..total] is written.
    let src = unsafe { source(&out, &x, total) };
    let src = src.as_deref();
    let per_task = (PAR_GRAIN / s).max(1);
    let params = &params;
    for_tasks(planes.div_ceil(per_task), |t| {
        for pl in t * per_task..((t + 1) * per_task).min(planes) {
            let [sc, bi, mean, den] = params[pl % c];
            let (b, e) = (pl * s, (pl + 1) * s);
            // SAFETY: planes are disjoint across tasks and inside out[..total]; in
            // place, each plane is read before each element is written.
            let o = unsafe { out.slice_mut(b, e) };
            dispatch(
                #[inline(always)]
                || {
                    map_into(
                        o,
                        src.map(|x| &x[b..e]),
                        #[inline(always)]
                        |v| T::store(((v.load() - mean) / den).fma(sc, bi)),
                    )
                },
            );
        }
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Layer norm. Args: out, x, scale, bias, rows, n, eps.
// ---------------------------------------------------------------------------------------

/// One row: `e` holds the loaded row; writes the normalised row to `o`. `e` is
/// overwritten with `v - mean` (computed once, used by the variance and the output).
#[inline(always)]
fn layer_norm_row<T: FloatElement<Real = R>, R: SoftReal>(
    level: crate::kernels::simd::SimdLevel,
    e: &mut [R],
    o: &mut [T],
    sb: &[(R, R)],
    count: R,
    eps: R,
) {
    let mean = shape_sum(level, e) / count;
    for v in e.iter_mut() {
        *v = *v - mean;
    }
    // Each lane: d = v - mean, fma(d, d, acc).
    let var = shape_dot(level, e, e) / count;
    let den = (var + eps).sqrt();
    for ((d, &v), &(sc, bi)) in o.iter_mut().zip(e.iter()).zip(sb) {
        *d = T::store((v / den).fma(sc, bi));
    }
}

fn layer_norm<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (rows, n) = (args.usize(4)?, args.usize(5)?);
    let eps = <T::Real as Real>::from_f64(args.f64(6)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let scale = args.buf::<T>(2)?;
    let bias = args.buf::<T>(3)?;
    let total = mul(args, 5, rows, n)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    args.need(2, &scale, n)?;
    args.need(3, &bias, n)?;
    if total == 0 {
        return Ok(());
    }
    let sb: Vec<(T::Real, T::Real)> = {
        // SAFETY: scale and bias hold n elements (checked) and are only read; copied if
        // they overlap out (the op forbids it).
        let (s, b) = unsafe {
            (
                input_slice(&scale, n, &[out_range(&out)]),
                input_slice(&bias, n, &[out_range(&out)]),
            )
        };
        s.iter()
            .zip(b.iter())
            .map(|(a, b)| (a.load(), b.load()))
            .collect()
    };
    let count = <T::Real as Real>::from_f64(n as f64);
    // SAFETY: both hold total elements (checked); only out[..total] is written.
    let src = unsafe { source(&out, &x, total) };
    let src = src.as_deref();
    let per_task = (PAR_GRAIN / n).max(1);
    let sb = &sb;
    let level = simd_level();
    for_tasks(rows.div_ceil(per_task), |t| {
        let mut e: Vec<T::Real> = vec![T::Real::ZERO; n];
        for r in t * per_task..((t + 1) * per_task).min(rows) {
            // SAFETY: rows are disjoint across tasks and inside out[..total]; in place,
            // the row is loaded into `e` before it is written.
            let o = unsafe { out.slice_mut(r * n, (r + 1) * n) };
            dispatch(
                #[inline(always)]
                || {
                    match src {
                        Some(x) => T::load_slice(&x[r * n..(r + 1) * n], &mut e),
                        None => T::load_slice(o, &mut e),
                    }
                    layer_norm_row::<T, T::Real>(level, &mut e, o, sb, count, eps);
                },
            );
        }
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Softmax along an axis. Args: out, x, outer, axis, inner.
// ---------------------------------------------------------------------------------------

/// Lines of `w` adjacent columns `i0..i0+w` of one outer slab, processed together: the
/// tile `[axis, w]` is read row by row (contiguous), each column keeps its own lanes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn softmax_tile<T: FloatElement<Real: LaneMath>>(
    x: &[T],
    out: &RawBuf<'_, T>,
    base: usize,
    axis: usize,
    inner: usize,
    w: usize,
    e: &mut Vec<T::Real>,
    acc: &mut Vec<T::Real>,
) {
    let zero = T::Real::ZERO;
    e.clear();
    for j in 0..axis {
        let row = base + j * inner;
        e.extend(x[row..row + w].iter().map(|v| v.load()));
    }
    let mut m: Vec<T::Real> = e[..w].to_vec();
    for j in 1..axis {
        for (mt, &v) in m.iter_mut().zip(&e[j * w..(j + 1) * w]) {
            *mt = mt.max_nan_l(v);
        }
    }
    for j in 0..axis {
        for (v, &mt) in e[j * w..(j + 1) * w].iter_mut().zip(&m) {
            *v = (*v - mt).exp_l();
        }
    }
    // The reduction shape per column: per chunk of j, lane l = (j - start) % 32.
    let nchunks = reduce::chunks(axis);
    let mut parts: Vec<T::Real> = Vec::with_capacity(nchunks * w);
    for c in 0..nchunks {
        acc.clear();
        acc.resize(LANES * w, zero);
        let (j0, j1) = (c * CHUNK, ((c + 1) * CHUNK).min(axis));
        for j in j0..j1 {
            let l = (j - j0) % LANES;
            for (a, &v) in acc[l * w..(l + 1) * w]
                .iter_mut()
                .zip(&e[j * w..(j + 1) * w])
            {
                *a = *a + v;
            }
        }
        let mut half = LANES / 2;
        while half > 0 {
            for l in 0..half {
                let (lo, hi) = acc.split_at_mut((l + half) * w);
                for (a, &b) in lo[l * w..(l + 1) * w].iter_mut().zip(&hi[..w]) {
                    *a = *a + b;
                }
            }
            half /= 2;
        }
        parts.extend_from_slice(&acc[..w]);
    }
    let s: Vec<T::Real> = if nchunks == 1 {
        parts
    } else {
        (0..w)
            .map(|t| {
                let col: Vec<T::Real> = (0..nchunks).map(|c| parts[c * w + t]).collect();
                reduce::combine_partials(&col, zero, |a, b| a + b)
            })
            .collect()
    };
    for j in 0..axis {
        let row = base + j * inner;
        for (t, (&v, &st)) in e[j * w..(j + 1) * w].iter().zip(&s).enumerate() {
            // SAFETY: the tile's elements are inside out[..total] (row + t < total) and
            // written by this task only; x is a separate slice (a copy when in place).
            unsafe { out.write(row + t, T::store(v / st)) };
        }
    }
}

fn softmax_axis<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (outer, axis, inner) = (args.usize(2)?, args.usize(3)?, args.usize(4)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let lines = mul(args, 2, outer, axis)?;
    let total = mul(args, 4, lines, inner)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    if total == 0 {
        return Ok(());
    }
    if inner == 1 {
        // Rows: contiguous lines, in place or not (the `softmax` kernel's rows).
        // SAFETY: both hold total elements (checked); only out[..total] is written.
        let src = unsafe { source(&out, &x, total) };
        softmax_rows(src.as_deref(), &out, outer, axis);
        return Ok(());
    }
    // A middle axis: tiles of `tw` adjacent lines. The input is a separate slice (copied
    // first when the launch is in place), the output written element by element.
    // SAFETY: x holds total elements; copied if it overlaps out.
    let src = unsafe { input_slice(&x, total, &[out_range(&out)]) };
    let src: &[T] = &src;
    let tw = inner.min(((1usize << 15) / axis).max(16));
    let tiles = inner.div_ceil(tw);
    let out = &out;
    let tasks = mul(args, 4, outer, tiles)?;
    for_tasks(tasks, |t| {
        let (o, k) = (t / tiles, t % tiles);
        let i0 = k * tw;
        let w = tw.min(inner - i0);
        let (mut e, mut acc) = (Vec::new(), Vec::new());
        dispatch(
            #[inline(always)]
            || {
                softmax_tile(
                    src,
                    out,
                    o * axis * inner + i0,
                    axis,
                    inner,
                    w,
                    &mut e,
                    &mut acc,
                )
            },
        );
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Argmax. Args: out (i64), x, rows, n.
// ---------------------------------------------------------------------------------------

/// Comparison of argmax: NaN detection and `>` on non-NaN values.
trait ArgElem: Element {
    fn nan(self) -> bool;
    fn gt(self, other: Self) -> bool;
}

macro_rules! arg_float {
    ($t:ty) => {
        impl ArgElem for $t {
            #[inline(always)]
            fn nan(self) -> bool {
                self.load().is_nan()
            }
            #[inline(always)]
            fn gt(self, other: Self) -> bool {
                self.load() > other.load()
            }
        }
    };
}
arg_float!(f32);
arg_float!(f64);
arg_float!(f16);
arg_float!(bf16);

macro_rules! arg_int {
    ($t:ty) => {
        impl ArgElem for $t {
            #[inline(always)]
            fn nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn gt(self, other: Self) -> bool {
                self > other
            }
        }
    };
}
arg_int!(i64);
arg_int!(i32);

/// The first index of the maximum of a non-empty row (the first NaN wins).
#[inline(always)]
fn argmax_row<T: ArgElem>(row: &[T]) -> i64 {
    let (mut best, mut bv) = (0usize, row[0]);
    if !bv.nan() {
        for (j, &v) in row.iter().enumerate().skip(1) {
            if v.nan() {
                best = j;
                break;
            }
            if v.gt(bv) {
                best = j;
                bv = v;
            }
        }
    }
    best as i64
}

fn argmax<T: ArgElem>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (rows, n) = (args.usize(2)?, args.usize(3)?);
    let out = args.buf::<i64>(0)?;
    let x = args.buf::<T>(1)?;
    let total = mul(args, 3, rows, n)?;
    args.need(0, &out, rows)?;
    args.need(1, &x, total)?;
    if rows == 0 {
        return Ok(());
    }
    if n == 0 {
        return arg_err(args, 3, "argmax over an empty axis");
    }
    // SAFETY: x holds total elements (checked); copied if it overlaps out[..rows].
    let src = unsafe { input_slice(&x, total, &[out_range(&out)]) };
    let src: &[T] = &src;
    let per_task = (PAR_GRAIN / n).max(1);
    for_tasks(rows.div_ceil(per_task), |t| {
        let (r0, r1) = (t * per_task, ((t + 1) * per_task).min(rows));
        // SAFETY: row ranges are disjoint across tasks and inside out[..rows].
        let o = unsafe { out.slice_mut(r0, r1) };
        for (d, r) in o.iter_mut().zip(r0..r1) {
            *d = argmax_row(&src[r * n..(r + 1) * n]);
        }
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------
// L2 norm. Args: out, x, rows, n.
// ---------------------------------------------------------------------------------------

fn reduce_l2<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (rows, n) = (args.usize(2)?, args.usize(3)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let total = mul(args, 3, rows, n)?;
    args.need(0, &out, rows)?;
    args.need(1, &x, total)?;
    if rows == 0 {
        return Ok(());
    }
    // SAFETY: x holds total elements (checked); copied if it overlaps out[..rows].
    let src = unsafe { input_slice(&x, total, &[out_range(&out)]) };
    let src: &[T] = &src;
    let per_task = (PAR_GRAIN / n.max(1)).max(1);
    for_tasks(rows.div_ceil(per_task), |t| {
        let (r0, r1) = (t * per_task, ((t + 1) * per_task).min(rows));
        // SAFETY: row ranges are disjoint across tasks and inside out[..rows].
        let o = unsafe { out.slice_mut(r0, r1) };
        let level = simd_level();
        for (d, r) in o.iter_mut().zip(r0..r1) {
            let row = &src[r * n..(r + 1) * n];
            dispatch(
                #[inline(always)]
                || *d = T::store(shape_dot_stored(level, row, row).sqrt()),
            );
        }
    });
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Registration.
// ---------------------------------------------------------------------------------------

/// The entry point of `op` at `dtype`.
fn entry(op: &str, dtype: DType) -> Option<BuiltinFn> {
    macro_rules! floats {
        ($f:ident) => {
            match dtype {
                DType::F32 => $f::<f32> as BuiltinFn,
                DType::F64 => $f::<f64>,
                DType::F16 => $f::<f16>,
                DType::BF16 => $f::<bf16>,
                DType::I64 | DType::I32 => return None,
            }
        };
    }
    let f = match op {
        "batch_norm" => floats!(batch_norm),
        "layer_norm" => floats!(layer_norm),
        "leaky_relu" => floats!(leaky_relu),
        "clip" => floats!(clip),
        "erf" => floats!(erf),
        "gelu" => floats!(gelu),
        "gelu_tanh" => floats!(gelu_tanh),
        "softmax_axis" => floats!(softmax_axis),
        "reduce_l2" => floats!(reduce_l2),
        "argmax" => match dtype {
            DType::F32 => argmax::<f32> as BuiltinFn,
            DType::F64 => argmax::<f64>,
            DType::F16 => argmax::<f16>,
            DType::BF16 => argmax::<bf16>,
            DType::I64 => argmax::<i64>,
            DType::I32 => argmax::<i32>,
        },
        _ => return None,
    };
    Some(f)
}

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::norm::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = Vec::new();
    for sig in gpukit_core::abi::norm::KERNELS {
        for &d in sig.dtypes {
            if let Some(f) = entry(sig.op, d) {
                v.push((gpukit_core::abi::kernel_name(sig.op, d), f));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_norm_kernel_is_registered() {
        for sig in gpukit_core::abi::norm::KERNELS {
            for &d in sig.dtypes {
                assert!(entry(sig.op, d).is_some(), "{}_{d}", sig.op);
            }
        }
    }

    #[test]
    fn gelu_lanes_match_the_scalar_forms() {
        use crate::vmath::LaneMath;
        use crate::vmath::tests::{check32, check64};
        check32("gelu", |x: f32| x.gelu_l(), gelu_scalar::<f32>);
        check64("gelu", |x: f64| x.gelu_l(), gelu_scalar::<f64>);
        check32(
            "gelu_tanh",
            |x: f32| x.gelu_tanh_l(),
            gelu_tanh_scalar::<f32>,
        );
        check64(
            "gelu_tanh",
            |x: f64| x.gelu_tanh_l(),
            gelu_tanh_scalar::<f64>,
        );
    }

    /// All 2^32 f32 inputs, only with `GPUKIT_VMATH_EXHAUSTIVE=1`.
    #[test]
    fn gelu_exhaustive_f32_when_asked() {
        use crate::vmath::LaneMath;
        use crate::vmath::tests::{exhaustive_wanted, exhaustive32};
        if exhaustive_wanted("gelu") {
            exhaustive32("gelu", |x: f32| x.gelu_l(), gelu_scalar::<f32>);
        }
        if exhaustive_wanted("gelu_tanh") {
            exhaustive32(
                "gelu_tanh",
                |x: f32| x.gelu_tanh_l(),
                gelu_tanh_scalar::<f32>,
            );
        }
    }
}
