//! Row softmax: per row `m = max_nan(row)`, `e_j = exp(x_j - m)`, `s` = the reduction
//! shape's sum of `e_j`, `out_j = store(e_j / s)`, all in the compute type.

use std::borrow::Cow;

use gpukit_core::numeric::{FloatElement, Real, max_nan};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use gpukit_core::reduce::{self, CHUNK, LANES};

use super::reduce::{CpuFloat, LaneReal};
use super::simd::dispatch;
use super::{PAR_GRAIN, input_slice, mul};
use crate::args::{BuiltinArgs, RawBuf};
use crate::vmath::{LaneMath, SoftmaxStep};

/// A compute type softmax runs in: reduction lanes, bulk loads, lane math.
pub(crate) trait SoftReal:
    Real + LaneReal + CpuFloat + FloatElement<Real = Self> + LaneMath + OrderKey
{
}
impl<R: Real + LaneReal + CpuFloat + FloatElement<Real = R> + LaneMath + OrderKey> SoftReal for R {}

/// A float's bits as a signed integer key in the float's total order (`-NaN < -inf <
/// ... < -0 < +0 < ... < +inf < +NaN`): the magnitude bits of negative values flipped.
/// The map is its own inverse.
pub(crate) trait OrderKey: Copy {
    /// The key's integer type.
    type K: Copy + Ord;
    /// The key of `-inf`.
    const NEG_INF_KEY: Self::K;
    /// The key of `self`.
    fn key(self) -> Self::K;
    /// The float of a key.
    fn from_key(k: Self::K) -> Self;
    /// The bits of `|self|` as the key type: above [`Self::INF_BITS`] exactly for NaNs.
    fn abs_bits(self) -> Self::K;
    /// The bits of `+inf`.
    const INF_BITS: Self::K;
}

/// `OrderKey` for a float type `$f` with bits `$u` and key `$i` (same width).
macro_rules! order_key {
    ($f:ty, $i:ty) => {
        impl OrderKey for $f {
            type K = $i;
            const NEG_INF_KEY: $i = (<$f>::NEG_INFINITY.to_bits() as $i) ^ <$i>::MAX;
            const INF_BITS: $i = <$f>::INFINITY.to_bits() as $i;
            #[inline(always)]
            fn key(self) -> $i {
                let b = self.to_bits() as $i;
                b ^ ((b >> (<$i>::BITS - 1)) & <$i>::MAX)
            }
            #[inline(always)]
            fn from_key(k: $i) -> $f {
                <$f>::from_bits((k ^ ((k >> (<$i>::BITS - 1)) & <$i>::MAX)) as _)
            }
            #[inline(always)]
            fn abs_bits(self) -> $i {
                (self.to_bits() as $i) & <$i>::MAX
            }
        }
    };
}
order_key!(f32, i32);
order_key!(f64, i64);

/// The maximum softmax subtracts from a row: `max_nan` over `x` (`-inf` when empty).
/// Where [`LaneMath::row_max`] has a loop, its value: the fold's up to the sign of a
/// zero maximum, which softmax never shows (it only uses `x_j - m`: `x - (±0)` is `x`
/// for `x ≠ 0`, and for `x = ±0` a zero whose `exp` is 1 either way). Elsewhere the
/// fold's value exactly: without NaNs the maximum does not depend on the order and is
/// the element with the largest [`OrderKey`] (which puts +0 above -0, as `max_nan`
/// prefers it), found in 32 independent integer-max lanes that stay in registers. A
/// NaN (tracked beside as the largest magnitude bits, above `+inf`'s only for NaNs)
/// sends the row to the sequential fold, whose result is its first NaN.
#[inline(always)]
pub(crate) fn max_lanes<R: SoftReal>(x: &[R]) -> R {
    // An explicit-SIMD loop where there is one (f32 at AVX-512): LLVM's form of the
    // loop below kept its lanes on the stack in some calling contexts.
    if let Some(m) = R::row_max(x) {
        return m;
    }
    const W: usize = 32;
    let mut acc = [R::NEG_INF_KEY; W];
    let mut mag = [R::INF_BITS; W];
    let mut it = x.chunks_exact(W);
    for c in &mut it {
        for l in 0..W {
            acc[l] = acc[l].max(c[l].key());
            mag[l] = mag[l].max(c[l].abs_bits());
        }
    }
    let mut k = R::NEG_INF_KEY;
    let mut m = R::INF_BITS;
    for l in 0..W {
        k = k.max(acc[l]);
        m = m.max(mag[l]);
    }
    for &v in it.remainder() {
        k = k.max(v.key());
        m = m.max(v.abs_bits());
    }
    if m > R::INF_BITS {
        return x.iter().fold(R::NEG_INFINITY, |m, &v| max_nan(m, v));
    }
    R::from_key(k)
}

/// `e_j = exp(x_j - m)` for the items of one chunk of the reduction shape (at most
/// [`CHUNK`] of them), folded into the shape's 32 lanes as they are computed
/// (`acc_l + e_j` for `j % 32 == l`, in order), then the shape's tree: the same
/// value as [`shape_sum`](super::reduce::shape_sum) of the stored `e` (the lanes start at zero, as there).
/// `src` is the input (`None`: `e` holds it and is overwritten).
#[inline(always)]
fn exp_sum_chunk<R: SoftReal>(m: R, src: Option<&[R]>, e: &mut [R]) -> R {
    let mut acc = [R::ZERO; LANES];
    // An explicit-SIMD loop where there is one (f32 at AVX-512), else the lane form.
    if R::exp_sum(m, src, e, &mut acc) {
        return reduce::tree(acc, |a, b| a + b);
    }
    let full = e.len() / LANES * LANES;
    match src {
        Some(x) => {
            for (c, xc) in e[..full]
                .chunks_exact_mut(LANES)
                .zip(x[..full].chunks_exact(LANES))
            {
                for l in 0..LANES {
                    let v = (xc[l] - m).exp_l();
                    c[l] = v;
                    acc[l] = acc[l] + v;
                }
            }
            for (l, (d, &v)) in e[full..].iter_mut().zip(&x[full..]).enumerate() {
                let v = (v - m).exp_l();
                *d = v;
                acc[l] = acc[l] + v;
            }
        }
        None => {
            for c in e[..full].chunks_exact_mut(LANES) {
                for l in 0..LANES {
                    let v = (c[l] - m).exp_l();
                    c[l] = v;
                    acc[l] = acc[l] + v;
                }
            }
            for (l, d) in e[full..].iter_mut().enumerate() {
                let v = (*d - m).exp_l();
                *d = v;
                acc[l] = acc[l] + v;
            }
        }
    }
    reduce::tree(acc, |a, b| a + b)
}

/// `e_j = exp(x_j - m)` over the whole line, and the reduction shape's sum of the
/// `e_j` (chunks of [`CHUNK`], each [`exp_sum_chunk`], then the chunk sums combined
/// by the shape), in one pass: the same values as the exp loop followed by
/// [`shape_sum`](super::reduce::shape_sum).
#[inline(always)]
fn exp_sum<R: SoftReal>(m: R, src: Option<&[R]>, e: &mut [R]) -> R {
    let n = e.len();
    debug_assert!(n <= LONG_ROW);
    if n <= CHUNK {
        return exp_sum_chunk(m, src, e);
    }
    // Chunk sums on the stack: rows this long are at most LONG_ROW items.
    const MAX_PARTS: usize = LONG_ROW / CHUNK;
    let mut stack = [R::ZERO; MAX_PARTS];
    let parts = &mut stack[..n.div_ceil(CHUNK).min(MAX_PARTS)];
    for (c, (p, ec)) in parts.iter_mut().zip(e.chunks_mut(CHUNK)).enumerate() {
        let s = src.map(|x| &x[c * CHUNK..c * CHUNK + ec.len()]);
        *p = exp_sum_chunk(m, s, ec);
    }
    reduce::combine_partials(parts, R::ZERO, |a, b| a + b)
}

/// One row: `x` (or, in place, `o` itself when `x` is `None`) into `o`. For f32/f64
/// the input is read directly (max, then exp and the sum in one pass into the
/// per-task scratch `e`); f16/bf16 are first loaded into `e`. Then
/// `o_j = store(e_j / s)`. Runs in the caller's `dispatch` context so the loops
/// vectorise.
#[inline(always)]
pub(crate) fn softmax_row<T, R>(e: &mut Vec<R>, x: Option<&[T]>, o: &mut [T])
where
    T: CpuFloat<Real = R>,
    R: SoftReal,
{
    let n = o.len();
    if e.len() != n {
        e.resize(n, R::ZERO);
    }
    let s = {
        let src: &[T] = x.unwrap_or(o);
        match T::as_real(src) {
            Some(xr) => exp_sum(max_lanes(xr), Some(xr), e),
            None => {
                T::load_slice(src, e);
                exp_sum(max_lanes(e), None, e)
            }
        }
    };
    for (d, &v) in o.iter_mut().zip(e.iter()) {
        *d = T::store(v / s);
    }
}

/// Rows `r0..r1` (`r1 - r0 >= 2`, at most [`CHUNK`] columns) of a storage type that is
/// its compute type (f32), software-pipelined ([`LaneMath::softmax_step`]): one loop
/// per row computes its exps and their sum and divides the previous row, so the
/// divider works beside the exp's arithmetic. Each row gets [`softmax_row`]'s bits
/// (the same maximum, `e_j`, sum over one chunk of the reduction shape, and
/// `e_j / s`). Returns `false`, touching nothing, where the type or the SIMD level
/// has no such loop. Runs in the caller's `dispatch` context.
#[inline(always)]
fn softmax_rows_pipelined<T, R>(
    src: Option<&[T]>,
    out: &RawBuf<'_, T>,
    r0: usize,
    r1: usize,
    cols: usize,
) -> bool
where
    T: CpuFloat<Real = R> + Element,
    R: SoftReal,
{
    let mut acc = [R::ZERO; LANES];
    let probe = SoftmaxStep {
        m: R::ZERO,
        x: &[],
        e: &mut [],
        acc: &mut acc,
        div: None,
    };
    if cols > CHUNK || r1 < r0 + 2 || T::as_real(&[]).is_none() || !R::softmax_step(probe) {
        return false;
    }
    let mut ea = vec![R::ZERO; cols];
    let mut eb = vec![R::ZERO; cols];
    let mut s = R::ZERO;
    for r in r0..r1 {
        let x: &[T] = match src {
            Some(x) => &x[r * cols..(r + 1) * cols],
            // SAFETY: row r is inside out[..rows * cols] and belongs to this task
            // (caller); in place it is only read in this step, and written (as the
            // previous row) in the next one, after this borrow ends.
            None => unsafe { out.slice_mut(r * cols, (r + 1) * cols) },
        };
        // SAFETY: row r - 1 (when r > r0) belongs to this task and is not row r.
        let mut prev_out = (r > r0).then(|| unsafe { out.slice_mut((r - 1) * cols, r * cols) });
        acc = [R::ZERO; LANES];
        let stepped = match (T::as_real(x), prev_out.as_deref_mut().map(T::as_real_mut)) {
            (Some(x), None) => R::softmax_step(SoftmaxStep {
                m: max_lanes(x),
                x,
                e: &mut eb,
                acc: &mut acc,
                div: None,
            }),
            (Some(x), Some(Some(o))) => R::softmax_step(SoftmaxStep {
                m: max_lanes(x),
                x,
                e: &mut eb,
                acc: &mut acc,
                div: Some((&ea, s, o)),
            }),
            _ => false,
        };
        if !stepped {
            // Not reached in practice: the level changed since the check above (a
            // process-wide limit set meanwhile), or the row is not of the compute
            // type. The rest of the task row by row, with the same values.
            if let Some(o) = prev_out {
                for (d, &v) in o.iter_mut().zip(ea.iter()) {
                    *d = T::store(v / s);
                }
            }
            let mut e = Vec::new();
            for q in r..r1 {
                // SAFETY: row q belongs to this task; in place, it is read (into `e`)
                // before it is written.
                let o = unsafe { out.slice_mut(q * cols, (q + 1) * cols) };
                softmax_row(&mut e, src.map(|x| &x[q * cols..(q + 1) * cols]), o);
            }
            return true;
        }
        s = reduce::tree(acc, |a, b| a + b);
        std::mem::swap(&mut ea, &mut eb);
    }
    // SAFETY: row r1 - 1 belongs to this task; its input was read above.
    let o = unsafe { out.slice_mut((r1 - 1) * cols, r1 * cols) };
    for (d, &v) in o.iter_mut().zip(ea.iter()) {
        *d = T::store(v / s);
    }
    true
}

/// Rows longer than this run in bounded memory ([`softmax_row_long`]) instead of
/// through a row-sized scratch.
pub(crate) const LONG_ROW: usize = 1 << 22;

/// A row of any length in chunks of [`CHUNK`] items with one chunk of scratch: the
/// maximum chunk by chunk; then per chunk `e_j = exp(x_j - m)` and its chunk sum (one
/// value kept per chunk); the chunk sums combined by the reduction shape; then per
/// chunk `e_j` again (the same values) and `o_j = store(e_j / s)`. The same bits as
/// [`softmax_row`], with `exp` evaluated twice per item, and memory independent of
/// the row length but for the chunk sums (one value per 8192 items). Runs in the
/// caller's `dispatch` context.
#[inline(always)]
pub(crate) fn softmax_row_long<T, R>(x: Option<&[T]>, o: &mut [T])
where
    T: CpuFloat<Real = R>,
    R: SoftReal,
{
    let mut buf: Vec<R> = Vec::new();
    buf.resize(CHUNK, R::ZERO);
    // The maximum: without NaNs it does not depend on the grouping (see max_lanes);
    // with one it is a NaN either way.
    let mut m = R::NEG_INFINITY;
    for ch in x.unwrap_or(o).chunks(CHUNK) {
        let b = &mut buf[..ch.len()];
        T::load_slice(ch, b);
        m = max_nan(m, max_lanes(b));
    }
    let parts: Vec<R> = x
        .unwrap_or(o)
        .chunks(CHUNK)
        .map(|ch| {
            let b = &mut buf[..ch.len()];
            T::load_slice(ch, b);
            exp_sum_chunk(m, None, b)
        })
        .collect();
    let s = reduce::combine_partials(&parts, R::ZERO, |a, b| a + b);
    for (c, oc) in o.chunks_mut(CHUNK).enumerate() {
        let b = &mut buf[..oc.len()];
        match x {
            Some(x) => T::load_slice(&x[c * CHUNK..c * CHUNK + oc.len()], b),
            // In place: this chunk of the input is read before it is overwritten.
            None => T::load_slice(oc, b),
        }
        for (d, &v) in oc.iter_mut().zip(b.iter()) {
            *d = T::store((v - m).exp_l() / s);
        }
    }
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
    let per_task = (PAR_GRAIN / cols).max(1);
    let tasks = rows.div_ceil(per_task);
    let task = |t: usize| {
        let r0 = t * per_task;
        let r1 = ((t + 1) * per_task).min(rows);
        if dispatch(
            #[inline(always)]
            || softmax_rows_pipelined(src, out, r0, r1, cols),
        ) {
            return;
        }
        let mut e: Vec<T::Real> = Vec::new();
        for r in r0..r1 {
            // SAFETY: rows are disjoint across tasks and inside out[..rows * cols]
            // (caller); in place, the row is read (into `e`) before it is written.
            let o = unsafe { out.slice_mut(r * cols, (r + 1) * cols) };
            let x = src.map(|x| &x[r * cols..(r + 1) * cols]);
            if cols > LONG_ROW {
                dispatch(
                    #[inline(always)]
                    || softmax_row_long(x, o),
                );
            } else {
                dispatch(
                    #[inline(always)]
                    || softmax_row(&mut e, x, o),
                );
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit_core::half::{bf16, f16};
    use gpukit_core::numeric::same_bits;

    /// The bounded-memory path gives the row-scratch path's bits, in place and not.
    fn long_matches_short<T: CpuFloat<Real = R> + Element, R: SoftReal>() {
        for n in [1usize, 31, CHUNK, CHUNK + 1, 3 * CHUNK + 77] {
            let mut x: Vec<T> = (0..n)
                .map(|i| {
                    T::store(<R as Real>::from_f64(
                        ((i * 7919) % 2003) as f64 * 0.01 - 9.0,
                    ))
                })
                .collect();
            if n > 40 {
                x[3] = T::store(<R as Real>::from_f64(-0.0));
                x[17] = T::store(R::NEG_INFINITY);
                x[n - 2] = T::store(<R as Real>::from_f64(1e-40));
            }
            for special in [None, Some(f64::INFINITY), Some(f64::NAN)] {
                let mut x = x.clone();
                if let Some(v) = special {
                    x[n / 2] = T::store(<R as Real>::from_f64(v));
                }
                let mut short = vec![T::store(R::ZERO); n];
                let mut e = Vec::new();
                softmax_row(&mut e, Some(&x), &mut short);
                let mut long = vec![T::store(R::ZERO); n];
                softmax_row_long(Some(&x), &mut long);
                let mut inplace = x.clone();
                softmax_row_long(None, &mut inplace);
                for (j, ((&a, &b), &c)) in short.iter().zip(&long).zip(&inplace).enumerate() {
                    assert!(
                        same_bits(a, b) && same_bits(a, c),
                        "n = {n}, j = {j}, {special:?}"
                    );
                }
            }
        }
    }

    /// `max_lanes` against the sequential `max_nan` fold (a zero maximum of either
    /// sign), at every SIMD level: signed zeros in either order, infinities,
    /// subnormals, NaNs of both signs anywhere, ragged and empty lengths.
    fn max_lanes_is_the_fold<R: SoftReal>(specials: &[R]) {
        for level in crate::kernels::simd::levels() {
            for n in [0usize, 1, 5, 31, 32, 33, 64, 100, 1029] {
                for (s, &sp) in specials.iter().enumerate() {
                    for at in [0, n / 3, n.saturating_sub(1)] {
                        let mut x: Vec<R> = (0..n)
                            .map(|i| <R as Real>::from_f64(((i * 37 + s) % 19) as f64 - 12.0))
                            .collect();
                        if n > 0 {
                            x[at] = sp;
                        }
                        let want = x.iter().fold(R::NEG_INFINITY, |m, &v| max_nan(m, v));
                        let mut got = R::ZERO;
                        crate::kernels::simd::run_at(
                            level,
                            #[inline(always)]
                            || got = max_lanes(&x),
                        );
                        // `==`: the same value, a zero of either sign.
                        assert!(
                            got == want || (got.is_nan() && want.is_nan()),
                            "{level:?} n = {n}, special {s} at {at}"
                        );
                    }
                }
                // Only zeros: a zero (of either sign; -inf when empty).
                let z: Vec<R> = (0..n)
                    .map(|i| <R as Real>::from_f64(if i % 3 == 1 { 0.0 } else { -0.0 }))
                    .collect();
                let want = z.iter().fold(R::NEG_INFINITY, |m, &v| max_nan(m, v));
                let mut got = R::ZERO;
                crate::kernels::simd::run_at(
                    level,
                    #[inline(always)]
                    || got = max_lanes(&z),
                );
                assert!(got == want, "zeros, n = {n}");
            }
        }
    }

    /// Pipelined rows (each row's division in the next row's exp loop) against
    /// [`softmax_row`] row by row, out of place and in place, at every SIMD level:
    /// ragged column counts, 2 to 5 rows, NaN, infinities, signed zeros, subnormals
    /// and fully `-inf` rows. At AVX-512 the f32 path must run; f64 declines.
    #[test]
    fn pipelined_rows_give_softmax_row_bits() {
        use crate::kernels::simd::{
            SimdLevel, detected_simd_level, levels, run_at, set_thread_simd_limit,
        };
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            1e-40,
            80.0,
        ];
        for level in levels() {
            for cols in [1usize, 2, 31, 32, 33, 64, 95, 1000, CHUNK] {
                for rows in 2..=5usize {
                    let mut x: Vec<f32> = (0..rows * cols)
                        .map(|i| ((i * 7919) % 2003) as f32 * 0.013 - 11.0)
                        .collect();
                    for (k, &v) in specials.iter().enumerate() {
                        let r = k % rows;
                        if k < 3 && r == 0 {
                            continue; // keep row 0 finite
                        }
                        x[r * cols + (k * 13) % cols] = v;
                    }
                    if rows > 3 {
                        x[3 * cols..4 * cols].fill(f32::NEG_INFINITY);
                    }
                    let mut want = vec![0.0f32; rows * cols];
                    let mut e = Vec::new();
                    for r in 0..rows {
                        softmax_row(
                            &mut e,
                            Some(&x[r * cols..(r + 1) * cols]),
                            &mut want[r * cols..(r + 1) * cols],
                        );
                    }
                    let mut got = vec![7.0f32; rows * cols];
                    let mut inplace = x.clone();
                    set_thread_simd_limit(Some(level));
                    let ran = run_at(level, || {
                        let a = softmax_rows_pipelined(
                            Some(&x),
                            &RawBuf::from_mut_slice(&mut got),
                            0,
                            rows,
                            cols,
                        );
                        let b = softmax_rows_pipelined(
                            None,
                            &RawBuf::from_mut_slice(&mut inplace),
                            0,
                            rows,
                            cols,
                        );
                        assert_eq!(a, b);
                        a
                    });
                    set_thread_simd_limit(None);
                    assert_eq!(
                        ran,
                        level == SimdLevel::Avx512 && detected_simd_level() == SimdLevel::Avx512,
                        "{level:?}"
                    );
                    if !ran {
                        assert!(got.iter().all(|&v| v == 7.0) && same_bits_all(&inplace, &x));
                        continue;
                    }
                    for i in 0..rows * cols {
                        assert!(
                            same_bits(got[i], want[i]) && same_bits(inplace[i], want[i]),
                            "{level:?} rows {rows} cols {cols} at {i}: {} {} want {}",
                            got[i],
                            inplace[i],
                            want[i]
                        );
                    }
                }
            }
        }
        // f64 has no such loop.
        let mut o = vec![0.0f64; 8];
        let x = vec![1.0f64; 8];
        assert!(!softmax_rows_pipelined(
            Some(&x),
            &RawBuf::from_mut_slice(&mut o),
            0,
            2,
            4
        ));
    }

    fn same_bits_all(a: &[f32], b: &[f32]) -> bool {
        a.iter().zip(b).all(|(&p, &q)| p.to_bits() == q.to_bits())
    }

    #[test]
    fn max_lanes_gives_the_sequential_fold() {
        max_lanes_is_the_fold::<f32>(&[
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            -1e-40,
            100.0,
        ]);
        max_lanes_is_the_fold::<f64>(&[
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1e-310,
            -1e-310,
            100.0,
        ]);
    }

    #[test]
    fn long_rows_in_bounded_memory_give_the_same_bits() {
        long_matches_short::<f32, f32>();
        long_matches_short::<f64, f64>();
        long_matches_short::<f16, f32>();
        long_matches_short::<bf16, f32>();
    }
}
