//! Sum and dot in the reduction shape of [`gpukit_core::reduce`]: chunks of
//! [`CHUNK`] items (in parallel), 32 lanes per chunk (SIMD registers: lane `l` is one
//! vector lane, fed items `l, l+32, ...` in order), the fixed tree, then the chunk
//! partials combined with [`reduce::combine_partials`]. Bit-identical to
//! [`reduce::fold`] at every SIMD level.

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{Arith, FloatElement, Real};
use gpukit_core::reduce::{self, CHUNK, LANES};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::simd::{SimdLevel, simd_level};
use super::{input_slice, out_range};
use crate::args::BuiltinArgs;

/// A compute type with SIMD lane primitives of the reduction shape.
pub(crate) trait LaneReal: Real {
    /// Folds `x` into the lanes: item `j` goes to lane `j % 32` (`acc + x`), in order.
    fn lanes_add(level: SimdLevel, acc: &mut [Self; LANES], x: &[Self]);
    /// Folds `a[j] * b[j]` into lane `j % 32` with one fma (`fma(a, b, acc)`), in order.
    fn lanes_fma(level: SimdLevel, acc: &mut [Self; LANES], a: &[Self], b: &[Self]);
}

/// Storage float types: bulk loads into the compute type.
pub(crate) trait CpuFloat: FloatElement<Real: LaneReal> {
    /// `x` itself when the storage type is the compute type (f32, f64).
    fn as_real(x: &[Self]) -> Option<&[Self::Real]>;
    /// `x` itself, writable, when the storage type is the compute type (f32, f64).
    fn as_real_mut(x: &mut [Self]) -> Option<&mut [Self::Real]>;
    /// `out[i] = load(x[i])` for `i < x.len()` (`out` at least as long).
    #[inline(always)]
    fn load_slice(x: &[Self], out: &mut [Self::Real]) {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = v.load();
        }
    }
}

impl CpuFloat for f32 {
    fn as_real(x: &[f32]) -> Option<&[f32]> {
        Some(x)
    }
    fn as_real_mut(x: &mut [f32]) -> Option<&mut [f32]> {
        Some(x)
    }
}
impl CpuFloat for f64 {
    fn as_real(x: &[f64]) -> Option<&[f64]> {
        Some(x)
    }
    fn as_real_mut(x: &mut [f64]) -> Option<&mut [f64]> {
        Some(x)
    }
}
impl CpuFloat for f16 {
    fn as_real(_: &[f16]) -> Option<&[f32]> {
        None
    }
    fn as_real_mut(_: &mut [f16]) -> Option<&mut [f32]> {
        None
    }
    fn load_slice(x: &[f16], out: &mut [f32]) {
        gpukit_core::half::slice::HalfFloatSliceExt::convert_to_f32_slice(x, &mut out[..x.len()]);
    }
}
impl CpuFloat for bf16 {
    // `load_slice`: the default, whose `load` (gpukit_core::halfconv) is branch-free.
    fn as_real(_: &[bf16]) -> Option<&[f32]> {
        None
    }
    fn as_real_mut(_: &mut [bf16]) -> Option<&mut [f32]> {
        None
    }
}

macro_rules! scalar_lanes {
    () => {
        fn scalar_add(acc: &mut [Self; LANES], x: &[Self]) {
            for (j, &v) in x.iter().enumerate() {
                acc[j % LANES] += v;
            }
        }
        fn scalar_fma(acc: &mut [Self; LANES], a: &[Self], b: &[Self]) {
            for (j, (&x, &y)) in a.iter().zip(b).enumerate() {
                acc[j % LANES] = x.fma(y, acc[j % LANES]);
            }
        }
    };
}

trait ScalarLanes: Real {
    fn scalar_add(acc: &mut [Self; LANES], x: &[Self]);
    fn scalar_fma(acc: &mut [Self; LANES], a: &[Self], b: &[Self]);
}
impl ScalarLanes for f32 {
    scalar_lanes!();
}
impl ScalarLanes for f64 {
    scalar_lanes!();
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{LANES, ScalarLanes};
    use std::arch::x86_64::*;

    macro_rules! lanes {
        ($add:ident, $fma:ident, $feat:literal, $t:ty, $v:ty, $w:literal,
         $load:ident, $store:ident, $vadd:ident, $vfma:ident) => {
            /// Lane add (see `LaneReal::lanes_add`).
            ///
            /// # Safety
            /// The CPU supports the target features.
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $add(acc: &mut [$t; LANES], x: &[$t]) {
                const R: usize = LANES / $w;
                let full = x.len() / LANES;
                // SAFETY: `acc` holds LANES elements and `x` holds `full * LANES`
                // (plus a tail); unaligned loads and stores.
                unsafe {
                    let p = acc.as_mut_ptr();
                    let mut v: [$v; R] = [$load(p); R];
                    for r in 0..R {
                        v[r] = $load(p.add(r * $w));
                    }
                    let xp = x.as_ptr();
                    for blk in 0..full {
                        let q = xp.add(blk * LANES);
                        for r in 0..R {
                            v[r] = $vadd(v[r], $load(q.add(r * $w)));
                        }
                    }
                    for r in 0..R {
                        $store(p.add(r * $w), v[r]);
                    }
                }
                <$t as ScalarLanes>::scalar_add(acc, &x[full * LANES..]);
            }

            /// Lane fma (see `LaneReal::lanes_fma`).
            ///
            /// # Safety
            /// The CPU supports the target features; `a.len() == b.len()`.
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $fma(acc: &mut [$t; LANES], a: &[$t], b: &[$t]) {
                const R: usize = LANES / $w;
                let n = a.len().min(b.len());
                let full = n / LANES;
                // SAFETY: `acc` holds LANES elements, `a` and `b` at least
                // `full * LANES`; unaligned loads and stores.
                unsafe {
                    let p = acc.as_mut_ptr();
                    let mut v: [$v; R] = [$load(p); R];
                    for r in 0..R {
                        v[r] = $load(p.add(r * $w));
                    }
                    let (ap, bp) = (a.as_ptr(), b.as_ptr());
                    for blk in 0..full {
                        let (qa, qb) = (ap.add(blk * LANES), bp.add(blk * LANES));
                        for r in 0..R {
                            v[r] = $vfma($load(qa.add(r * $w)), $load(qb.add(r * $w)), v[r]);
                        }
                    }
                    for r in 0..R {
                        $store(p.add(r * $w), v[r]);
                    }
                }
                let t = full * LANES;
                <$t as ScalarLanes>::scalar_fma(acc, &a[t..n], &b[t..n]);
            }
        };
    }

    lanes!(
        add_f32_avx512,
        fma_f32_avx512,
        "avx512f,fma",
        f32,
        __m512,
        16,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_add_ps,
        _mm512_fmadd_ps
    );
    lanes!(
        add_f64_avx512,
        fma_f64_avx512,
        "avx512f,fma",
        f64,
        __m512d,
        8,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_add_pd,
        _mm512_fmadd_pd
    );
    lanes!(
        add_f32_avx2,
        fma_f32_avx2,
        "avx2,fma",
        f32,
        __m256,
        8,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_add_ps,
        _mm256_fmadd_ps
    );
    lanes!(
        add_f64_avx2,
        fma_f64_avx2,
        "avx2,fma",
        f64,
        __m256d,
        4,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_add_pd,
        _mm256_fmadd_pd
    );
}

macro_rules! lane_real {
    ($t:ty, $a512:ident, $f512:ident, $a2:ident, $f2:ident) => {
        impl LaneReal for $t {
            fn lanes_add(level: SimdLevel, acc: &mut [Self; LANES], x: &[Self]) {
                match level {
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: `level` is at most what the CPU supports (simd_level).
                    SimdLevel::Avx512 => unsafe { x86::$a512(acc, x) },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as above.
                    SimdLevel::Avx2 => unsafe { x86::$a2(acc, x) },
                    _ => <$t as ScalarLanes>::scalar_add(acc, x),
                }
            }
            fn lanes_fma(level: SimdLevel, acc: &mut [Self; LANES], a: &[Self], b: &[Self]) {
                let n = a.len().min(b.len());
                let (a, b) = (&a[..n], &b[..n]);
                match level {
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as in `lanes_add`; equal lengths.
                    SimdLevel::Avx512 => unsafe { x86::$f512(acc, a, b) },
                    #[cfg(target_arch = "x86_64")]
                    // SAFETY: as above.
                    SimdLevel::Avx2 => unsafe { x86::$f2(acc, a, b) },
                    _ => <$t as ScalarLanes>::scalar_fma(acc, a, b),
                }
            }
        }
    };
}

lane_real!(
    f32,
    add_f32_avx512,
    fma_f32_avx512,
    add_f32_avx2,
    fma_f32_avx2
);
lane_real!(
    f64,
    add_f64_avx512,
    fma_f64_avx512,
    add_f64_avx2,
    fma_f64_avx2
);

/// Items converted per step when the storage type is not the compute type.
const CONVERT_BLOCK: usize = 512;
const _: () = assert!(CONVERT_BLOCK.is_multiple_of(LANES) && CHUNK.is_multiple_of(CONVERT_BLOCK));

/// One chunk's sum (at most [`CHUNK`] items) of a float storage type.
pub(crate) fn chunk_sum<T: CpuFloat>(level: SimdLevel, x: &[T]) -> T::Real {
    let mut acc = [T::Real::ZERO; LANES];
    match T::as_real(x) {
        Some(r) => T::Real::lanes_add(level, &mut acc, r),
        None => {
            let mut tmp = [T::Real::ZERO; CONVERT_BLOCK];
            for blk in x.chunks(CONVERT_BLOCK) {
                T::load_slice(blk, &mut tmp);
                T::Real::lanes_add(level, &mut acc, &tmp[..blk.len()]);
            }
        }
    }
    reduce::tree(acc, |a, b| a + b)
}

/// One chunk's dot (at most [`CHUNK`] items, equal lengths).
fn chunk_dot<T: CpuFloat>(level: SimdLevel, a: &[T], b: &[T]) -> T::Real {
    let mut acc = [T::Real::ZERO; LANES];
    match (T::as_real(a), T::as_real(b)) {
        (Some(x), Some(y)) => T::Real::lanes_fma(level, &mut acc, x, y),
        _ => {
            let mut ta = [T::Real::ZERO; CONVERT_BLOCK];
            let mut tb = [T::Real::ZERO; CONVERT_BLOCK];
            for (xa, xb) in a.chunks(CONVERT_BLOCK).zip(b.chunks(CONVERT_BLOCK)) {
                T::load_slice(xa, &mut ta);
                T::load_slice(xb, &mut tb);
                let k = xa.len();
                T::Real::lanes_fma(level, &mut acc, &ta[..k], &tb[..k]);
            }
        }
    }
    reduce::tree(acc, |x, y| x + y)
}

/// The per-chunk partials of `n` items, chunks in parallel, in chunk order.
fn partials<A: Send>(n: usize, f: impl Fn(usize, usize) -> A + Sync + Send) -> Vec<A> {
    let nc = reduce::chunks(n);
    let one = |c: usize| f(c * CHUNK, ((c + 1) * CHUNK).min(n));
    if nc <= 2 {
        (0..nc).map(one).collect()
    } else {
        (0..nc).into_par_iter().with_min_len(4).map(one).collect()
    }
}

/// The shape's result from the chunk partials.
fn finish<A: Copy>(parts: &[A], zero: A, combine: impl Fn(A, A) -> A + Copy) -> A {
    if parts.len() == 1 {
        parts[0]
    } else {
        reduce::combine_partials(parts, zero, combine)
    }
}

/// Chunk partials kept on the stack up to this many chunks (longer lines allocate).
const STACK_PARTS: usize = 64;

/// The shape's result over `n` items from `chunk(start, end)` per chunk, sequentially,
/// without a heap allocation for up to [`STACK_PARTS`] chunks.
#[inline(always)]
fn shape_seq<R: Real>(n: usize, chunk: impl Fn(usize, usize) -> R) -> R {
    if n <= CHUNK {
        return chunk(0, n);
    }
    let nc = reduce::chunks(n);
    let one = |c: usize| chunk(c * CHUNK, ((c + 1) * CHUNK).min(n));
    if nc <= STACK_PARTS {
        let mut parts = [R::ZERO; STACK_PARTS];
        for (c, p) in parts[..nc].iter_mut().enumerate() {
            *p = one(c);
        }
        finish(&parts[..nc], R::ZERO, |a, b| a + b)
    } else {
        let parts: Vec<R> = (0..nc).map(one).collect();
        finish(&parts, R::ZERO, |a, b| a + b)
    }
}

/// The reduction-shape sum of a whole slice of compute-type values (sequential; used by
/// softmax for its denominators and layer norm for its mean).
pub(crate) fn shape_sum<R>(level: SimdLevel, x: &[R]) -> R
where
    R: LaneReal + FloatElement<Real = R> + CpuFloat,
{
    shape_seq(x.len(), |s, e| chunk_sum::<R>(level, &x[s..e]))
}

/// The reduction-shape dot of two compute-type slices of equal length (each lane
/// `fma(a_j, b_j, acc)`; sequential; layer norm's variance, the L2 norm).
pub(crate) fn shape_dot<R>(level: SimdLevel, a: &[R], b: &[R]) -> R
where
    R: LaneReal + FloatElement<Real = R> + CpuFloat,
{
    let n = a.len().min(b.len());
    shape_seq(n, |s, e| chunk_dot::<R>(level, &a[s..e], &b[s..e]))
}

/// [`shape_dot`] of two storage-type slices of equal length, converted to the compute
/// type in small blocks on the stack (no row-sized scratch: memory independent of the
/// length).
pub(crate) fn shape_dot_stored<T: CpuFloat>(level: SimdLevel, a: &[T], b: &[T]) -> T::Real {
    let n = a.len().min(b.len());
    shape_seq(n, |s, e| chunk_dot::<T>(level, &a[s..e], &b[s..e]))
}

/// Per-dtype sum: floats in SIMD lanes, integers wrapping (any grouping gives the same
/// integer, so the shape's order is followed trivially).
pub(crate) trait SumElem: Arith {
    /// The shape's sum of `x` (any length).
    fn shape_sum_of(level: SimdLevel, x: &[Self]) -> Self::Acc;
}

macro_rules! sum_float {
    ($t:ty) => {
        impl SumElem for $t {
            fn shape_sum_of(level: SimdLevel, x: &[Self]) -> Self::Acc {
                let parts = partials(x.len(), |s, e| chunk_sum::<$t>(level, &x[s..e]));
                finish(&parts, Real::ZERO, |a, b| a + b)
            }
        }
    };
}
sum_float!(f32);
sum_float!(f64);
sum_float!(f16);
sum_float!(bf16);

macro_rules! sum_int {
    ($t:ty) => {
        impl SumElem for $t {
            fn shape_sum_of(_: SimdLevel, x: &[Self]) -> Self::Acc {
                let parts = partials(x.len(), |s, e| {
                    x[s..e].iter().fold(0 as $t, |a, &v| a.wrapping_add(v))
                });
                parts.iter().fold(0 as $t, |a, &v| a.wrapping_add(v))
            }
        }
    };
}
sum_int!(i64);
sum_int!(i32);

/// `out[0] = sum(a[..n])`. Args: out, a, n.
pub(crate) fn sum<T: SumElem>(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(2)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    args.need(0, &out, 1)?;
    args.need(1, &a, n)?;
    let level = simd_level();
    let s = {
        // SAFETY: a holds n elements; nothing is written until the slice is dropped.
        let x = unsafe { input_slice(&a, n, &[]) };
        T::shape_sum_of(level, &x)
    };
    // SAFETY: out holds one element (checked); all reads are done.
    unsafe { out.write(0, T::acc_store(s)) };
    Ok(())
}

/// `out[0] = dot(a[..n], b[..n])`. Args: out, a, b, n.
pub(crate) fn dot<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(3)?;
    let out = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    args.need(0, &out, 1)?;
    args.need(1, &a, n)?;
    args.need(2, &b, n)?;
    let level = simd_level();
    let _ = out_range(&out);
    let s = {
        // SAFETY: a and b hold n elements; nothing is written until they are dropped.
        let (x, y) = unsafe { (input_slice(&a, n, &[]), input_slice(&b, n, &[])) };
        let parts = partials(n, |s, e| chunk_dot::<T>(level, &x[s..e], &y[s..e]));
        finish(&parts, T::Real::ZERO, |p, q| p + q)
    };
    // SAFETY: out holds one element (checked); all reads are done.
    unsafe { out.write(0, T::store(s)) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_sum_and_dot_match_the_reduction_shape() {
        for level in super::super::simd::levels() {
            for n in [
                0usize,
                1,
                31,
                32,
                33,
                100,
                CHUNK,
                CHUNK + 1,
                3 * CHUNK + 77,
                70 * CHUNK + 5,
            ] {
                let x: Vec<f32> = (0..n)
                    .map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 91.0)
                    .collect();
                let want = reduce::fold(n, 0.0f32, |a, i| a + x[i], |a, b| a + b);
                assert_eq!(shape_sum(level, &x).to_bits(), want.to_bits(), "n = {n}");
                let want = reduce::fold(n, 0.0f32, |a, i| x[i].mul_add(x[i], a), |a, b| a + b);
                assert_eq!(
                    shape_dot(level, &x, &x).to_bits(),
                    want.to_bits(),
                    "n = {n}"
                );
                let y: Vec<f64> = x.iter().map(|&v| v as f64 * 1.1).collect();
                let want = reduce::fold(n, 0.0f64, |a, i| y[i].mul_add(y[i], a), |a, b| a + b);
                assert_eq!(
                    shape_dot(level, &y, &y).to_bits(),
                    want.to_bits(),
                    "n = {n}"
                );
            }
        }
    }
}
