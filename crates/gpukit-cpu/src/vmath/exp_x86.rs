//! `exp` in f32 over a slice, and softmax's exp-and-sum pass, with explicit AVX-512
//! instructions; and the two-vector helpers the other explicit loops
//! ([`super::logistic_x86`]) share: [`V2`], [`both`], [`run2`], [`masks2`], [`horner2`],
//! [`exp_kernel2`].
//!
//! [`exp2v`] is the lane form [`super::exp_f32`] on two vectors, every step written
//! for both side by side, with two steps in another form and the same value:
//!
//! * the stand-ins for out-of-range inputs are clamps (`min(x, 100)`, then
//!   `max(x, -104)`; a NaN passes through both): on `(88.72…, 100]` the kernel's own
//!   `2^k · hi` overflows to `+inf` as the stand-in's does, and on `[-104, -103.97…)`
//!   it rounds to `+0` as the stand-in's does;
//! * `scale_f32(hi, k)` is `vscalefps`, the correctly rounded `hi · 2^k` in one
//!   instruction (the lane form's two exact scalings give the same correctly rounded
//!   product), with the exponent taken as the float `kf` the kernel already has (the
//!   integer-valued `t - MAGIC`), so `k` itself is never formed.
//!
//! The tests check both loops against [`gpukit_core::math::exp_f32`] on specials,
//! boundaries, random bits and ragged lengths, and over all 2^32 inputs on request.
//!
//! The entry points are safe: they run at the calling thread's [`simd_level`] and
//! return `false`, touching nothing, below AVX-512 or when `src` is shorter than the
//! output.

use std::arch::x86_64::*;

use gpukit_core::math::{EXP_F32, LN2_HI_F32, LN2_LO_F32, LOG2E_F32, MAGIC_F32};
use gpukit_core::reduce::LANES;

use super::SoftmaxStep;
use crate::kernels::simd::{SimdLevel, simd_level};

/// `exp` over `src` (or `out` itself, in place, when `src` is `None`) into `out`: the
/// bits of [`super::exp_f32`] for every element. `false`, touching nothing, below
/// AVX-512 or when `src` is shorter than `out`.
pub(crate) fn exp_f32_slice(src: Option<&[f32]>, out: &mut [f32]) -> bool {
    if src.is_some_and(|s| s.len() < out.len()) || simd_level() != SimdLevel::Avx512 {
        return false;
    }
    // SAFETY: `simd_level` never exceeds what the CPU supports; `src` is long enough.
    unsafe { exp_loop(src, out) };
    true
}

/// Softmax's pass over one chunk of the reduction shape: `e_j = exp(x_j - m)` for the
/// input `x` (`src`, or `e` itself in place when `None`), each added to lane
/// `acc[j % 32]` in order of `j` (`acc_l + e_j`): the values of that scalar loop.
/// `false`, touching nothing, below AVX-512 or when `src` is shorter than `e`.
pub(crate) fn exp_sum_f32(
    m: f32,
    src: Option<&[f32]>,
    e: &mut [f32],
    acc: &mut [f32; LANES],
) -> bool {
    if src.is_some_and(|s| s.len() < e.len()) || simd_level() != SimdLevel::Avx512 {
        return false;
    }
    // SAFETY: as in exp_f32_slice.
    unsafe { exp_sum_loop(m, src, e, acc) };
    true
}

/// One step of softmax's pipelined rows ([`SoftmaxStep`]): `exp_sum` of the row and
/// the previous row's division (correctly rounded) in one loop, so the divider works
/// beside the exp's arithmetic.
/// `false`, touching nothing, below AVX-512 or unless every slice has `e`'s length.
pub(crate) fn softmax_step_f32(step: SoftmaxStep<'_, f32>) -> bool {
    let n = step.e.len();
    if step.x.len() != n
        || step
            .div
            .as_ref()
            .is_some_and(|(p, _, o)| p.len() != n || o.len() != n)
        || simd_level() != SimdLevel::Avx512
    {
        return false;
    }
    let SoftmaxStep { m, x, e, acc, div } = step;
    // SAFETY: `simd_level` never exceeds what the CPU supports; every slice has `e`'s
    // length (checked), and `out` (an exclusive borrow) overlaps none of the others;
    // without a division the null pointers are never used.
    unsafe {
        match div {
            Some((p, s, o)) => step_loop::<true>(m, Some(x), e, acc, p.as_ptr(), s, o.as_mut_ptr()),
            None => step_loop::<false>(
                m,
                Some(x),
                e,
                acc,
                std::ptr::null(),
                0.0,
                std::ptr::null_mut(),
            ),
        }
    }
    true
}

/// The maximum softmax subtracts from a row (`-inf` when empty): the `max_nan` fold's
/// value up to the sign of a zero, and NaN (not necessarily the fold's NaN) where the
/// row has one. 64 `vmaxps` lanes in four registers, NaNs tracked beside as the
/// largest magnitude bits. `None` below AVX-512.
pub(crate) fn max_f32(x: &[f32]) -> Option<f32> {
    if simd_level() != SimdLevel::Avx512 {
        return None;
    }
    // SAFETY: `simd_level` never exceeds what the CPU supports.
    Some(unsafe { max_loop(x) })
}

/// The exp loop.
///
/// # Safety
/// AVX-512F; `src`, when given, at least as long as `out`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn exp_loop(src: Option<&[f32]>, out: &mut [f32]) {
    // SAFETY: as the caller guarantees.
    unsafe { run2(src, out, |x| exp2v(x)) }
}

/// The exp-and-sum loop without a division or a next row.
///
/// # Safety
/// AVX-512F; `src`, when given, at least as long as `e`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn exp_sum_loop(m: f32, src: Option<&[f32]>, e: &mut [f32], acc: &mut [f32; LANES]) {
    // SAFETY: as the caller guarantees; the null pointers are never used.
    unsafe { step_loop::<false>(m, src, e, acc, std::ptr::null(), 0.0, std::ptr::null_mut()) }
}

/// The exp-and-sum loop: 32 elements (one row of the 32 lanes, two vectors) at a
/// time, then the rest through masked loads, stores and adds (lanes past the end
/// compute on zeros, and are neither stored nor added). With `DIV`, each step also
/// divides the same 32 elements of `prev` by `s` into `out`.
///
/// # Safety
/// AVX-512F; `src`, when given, at least as long as `e`; with `DIV`, `prev` and
/// `out` valid for `e.len()` elements, `out` not overlapping `e`, `src` or `prev`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn step_loop<const DIV: bool>(
    m: f32,
    src: Option<&[f32]>,
    e: &mut [f32],
    acc: &mut [f32; LANES],
    prev: *const f32,
    s: f32,
    out: *mut f32,
) {
    const _: () = assert!(LANES == 32);
    let n = e.len();
    let dst = e.as_mut_ptr();
    let inp = src.map_or(dst.cast_const(), <[f32]>::as_ptr);
    let mv = _mm512_set1_ps(m);
    let sv = _mm512_set1_ps(s);
    // SAFETY: `acc` holds 32 floats.
    let mut a: V2 = unsafe { both(|j| _mm512_loadu_ps(acc.as_ptr().add(16 * j))) };
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 <= n, and `inp` holds at least n elements (`e`, or `src` by
        // the caller's guarantee); the loads of a range happen before its stores;
        // with DIV, `prev` and `out` hold n elements (caller).
        unsafe {
            let x: V2 = both(|j| _mm512_loadu_ps(inp.add(i + 16 * j)));
            let y = exp2v(both(|j| _mm512_sub_ps(x[j], mv)));
            _mm512_storeu_ps(dst.add(i), y[0]);
            _mm512_storeu_ps(dst.add(i + 16), y[1]);
            a = both(|j| _mm512_add_ps(a[j], y[j]));
            if DIV {
                let p: V2 = both(|j| _mm512_loadu_ps(prev.add(i + 16 * j)));
                _mm512_storeu_ps(out.add(i), _mm512_div_ps(p[0], sv));
                _mm512_storeu_ps(out.add(i + 16), _mm512_div_ps(p[1], sv));
            }
        }
        i += 32;
    }
    if i < n {
        let r = n - i;
        let k: [__mmask16; 2] = [
            if r >= 16 { u16::MAX } else { (1u16 << r) - 1 },
            if r > 16 { (1u16 << (r - 16)) - 1 } else { 0 },
        ];
        let at = [i, (i + 16).min(n)];
        // SAFETY: masked-off lanes are neither read nor written (they do not fault);
        // the lanes kept are inside all the ranges.
        unsafe {
            let x: V2 = both(|j| _mm512_maskz_loadu_ps(k[j], inp.add(at[j])));
            let y = exp2v(both(|j| _mm512_sub_ps(x[j], mv)));
            _mm512_mask_storeu_ps(dst.add(at[0]), k[0], y[0]);
            _mm512_mask_storeu_ps(dst.add(at[1]), k[1], y[1]);
            a = both(|j| _mm512_mask_add_ps(a[j], k[j], a[j], y[j]));
            if DIV {
                for j in 0..2 {
                    let p = _mm512_maskz_loadu_ps(k[j], prev.add(at[j]));
                    _mm512_mask_storeu_ps(out.add(at[j]), k[j], _mm512_div_ps(p, sv));
                }
            }
        }
    }
    // SAFETY: `acc` holds 32 floats.
    unsafe {
        _mm512_storeu_ps(acc.as_mut_ptr(), a[0]);
        _mm512_storeu_ps(acc.as_mut_ptr().add(16), a[1]);
    }
}

/// The maximum of `x` for softmax (see [`max_f32`]).
///
/// # Safety
/// AVX-512F.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn max_loop(x: &[f32]) -> f32 {
    const INF_BITS: i32 = 0x7f80_0000;
    let n = x.len();
    let p = x.as_ptr();
    let abs = _mm512_set1_epi32(i32::MAX);
    let mut mx = [_mm512_set1_ps(f32::NEG_INFINITY); 4];
    let mut mg = [_mm512_set1_epi32(INF_BITS); 4];
    let mut i = 0;
    while i + 64 <= n {
        for j in 0..4 {
            // SAFETY: i + 64 <= n.
            let v = unsafe { _mm512_loadu_ps(p.add(i + 16 * j)) };
            mx[j] = _mm512_max_ps(v, mx[j]);
            mg[j] = _mm512_max_epi32(mg[j], _mm512_and_si512(_mm512_castps_si512(v), abs));
        }
        i += 64;
    }
    while i < n {
        let r = n - i;
        let k: __mmask16 = if r >= 16 { u16::MAX } else { (1u16 << r) - 1 };
        // SAFETY: masked-off lanes are not read (they do not fault); the others are
        // inside `x`.
        let v = unsafe { _mm512_maskz_loadu_ps(k, p.add(i)) };
        mx[0] = _mm512_mask_max_ps(mx[0], k, v, mx[0]);
        mg[0] = _mm512_max_epi32(mg[0], _mm512_and_si512(_mm512_castps_si512(v), abs));
        i += 16;
    }
    let g = _mm512_max_epi32(
        _mm512_max_epi32(mg[0], mg[1]),
        _mm512_max_epi32(mg[2], mg[3]),
    );
    if _mm512_cmpgt_epi32_mask(g, _mm512_set1_epi32(INF_BITS)) != 0 {
        return f32::NAN;
    }
    let v = _mm512_max_ps(_mm512_max_ps(mx[0], mx[1]), _mm512_max_ps(mx[2], mx[3]));
    let mut lanes = [0.0f32; 16];
    // SAFETY: `lanes` holds 16 floats.
    unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), v) };
    lanes
        .iter()
        .fold(f32::NEG_INFINITY, |k, &v| if v > k { v } else { k })
}

/// The lane form [`super::exp_f32`] on two vectors (see the module's notes).
#[inline]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn exp2v(x: V2) -> V2 {
    // min(100, x) and max(-104, ·): with the constant first, a NaN x is returned.
    let xc = both(|j| _mm512_min_ps(_mm512_set1_ps(100.0), x[j]));
    let xc = both(|j| _mm512_max_ps(_mm512_set1_ps(-104.0), xc[j]));
    let (_, kf, hi, _) = exp_kernel2(xc);
    both(|j| _mm512_scalef_ps(hi[j], kf[j]))
}

/// Two vectors.
pub(super) type V2 = [__m512; 2];

/// `[f(0), f(1)]`: one step written for both vectors.
#[inline(always)]
pub(super) fn both<U>(f: impl Fn(usize) -> U) -> [U; 2] {
    [f(0), f(1)]
}

/// `f` over the slice, 32 elements at a time, then the rest (up to 31) through
/// masked loads and stores (lanes past the end compute on zeros and are not stored).
///
/// # Safety
/// Inlined into a caller with AVX-512F; `src`, when given, at least as long as `out`.
#[inline(always)]
pub(super) unsafe fn run2(src: Option<&[f32]>, out: &mut [f32], f: impl Fn(V2) -> V2) {
    let n = out.len();
    let dst = out.as_mut_ptr();
    let inp = src.map_or(dst.cast_const(), <[f32]>::as_ptr);
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 <= n, and `inp` holds at least n elements (`out`, or `src` by
        // the caller's guarantee); the loads of a range happen before its stores.
        unsafe {
            let y = f([
                _mm512_loadu_ps(inp.add(i)),
                _mm512_loadu_ps(inp.add(i + 16)),
            ]);
            _mm512_storeu_ps(dst.add(i), y[0]);
            _mm512_storeu_ps(dst.add(i + 16), y[1]);
        }
        i += 32;
    }
    if i < n {
        let [k0, k1] = masks2(n - i);
        // SAFETY: masked-off lanes are neither read nor written (they do not fault);
        // the lanes kept are inside both slices.
        unsafe {
            let x0 = _mm512_maskz_loadu_ps(k0, inp.add(i));
            let x1 = _mm512_maskz_loadu_ps(k1, inp.add((i + 16).min(n)));
            let y = f([x0, x1]);
            _mm512_mask_storeu_ps(dst.add(i), k0, y[0]);
            _mm512_mask_storeu_ps(dst.add((i + 16).min(n)), k1, y[1]);
        }
    }
}

/// The lane masks of two 16-lane vectors over the first `min(r, 32)` of `r` elements:
/// the first vector's lanes for elements `0..16`, the second's for `16..32`.
#[inline(always)]
pub(super) fn masks2(r: usize) -> [__mmask16; 2] {
    let k0 = if r >= 16 { u16::MAX } else { (1u16 << r) - 1 };
    let k1 = if r >= 32 {
        u16::MAX
    } else if r > 16 {
        (1u16 << (r - 16)) - 1
    } else {
        0
    };
    [k0, k1]
}

/// `c[0] + x·(c[1] + x·(…))`, one fused multiply-add per step (the scalar
/// `horner_f32`), on both vectors.
#[inline]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn horner2(x: V2, c: &[f32]) -> V2 {
    let mut acc = both(|_| _mm512_set1_ps(c[c.len() - 1]));
    for &ci in c[..c.len() - 1].iter().rev() {
        let cv = _mm512_set1_ps(ci);
        acc = both(|j| _mm512_fmadd_ps(acc[j], x[j], cv));
    }
    acc
}

/// The lane form's `exp_kernel_f32(x, 0.0)` on both vectors: `(k, kf, hi, lo)`, with
/// `kf` the float `k` (`t - MAGIC`, an exact integer value).
#[inline]
#[target_feature(enable = "avx512f,fma")]
pub(super) fn exp_kernel2(x: V2) -> ([__m512i; 2], V2, V2, V2) {
    let magic = _mm512_set1_ps(MAGIC_F32);
    let one = _mm512_set1_ps(1.0);
    let zero = _mm512_setzero_ps();
    let t = both(|j| _mm512_fmadd_ps(x[j], _mm512_set1_ps(LOG2E_F32), magic));
    let kf = both(|j| _mm512_sub_ps(t[j], magic));
    let k = both(|j| {
        _mm512_sub_epi32(
            _mm512_castps_si512(t[j]),
            _mm512_set1_epi32(MAGIC_F32.to_bits() as i32),
        )
    });
    // fma(-kf, c, v) = fnmadd(kf, c, v): the product's sign flips exactly.
    let r_hi = both(|j| _mm512_fnmadd_ps(kf[j], _mm512_set1_ps(LN2_HI_F32), x[j]));
    let r_lo = both(|j| _mm512_fnmadd_ps(kf[j], _mm512_set1_ps(LN2_LO_F32), zero));
    let r = both(|j| _mm512_add_ps(r_hi[j], r_lo[j]));
    let r_err = both(|j| _mm512_sub_ps(r_lo[j], _mm512_sub_ps(r[j], r_hi[j])));
    let r2 = both(|j| _mm512_mul_ps(r[j], r[j]));
    let q = horner2(r, &EXP_F32);
    let p = both(|j| _mm512_fmadd_ps(r2[j], q[j], _mm512_fmadd_ps(r_err[j], r[j], r_err[j])));
    let s = both(|j| _mm512_add_ps(one, r[j]));
    let e = both(|j| _mm512_add_ps(_mm512_sub_ps(one, s[j]), r[j]));
    let t = both(|j| _mm512_add_ps(e[j], p[j]));
    let hi = both(|j| _mm512_add_ps(s[j], t[j]));
    let lo = both(|j| _mm512_add_ps(_mm512_sub_ps(s[j], hi[j]), t[j]));
    (k, kf, hi, lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::simd::{detected_simd_level, set_thread_simd_limit};
    use crate::vmath::tests::{exhaustive_wanted, inputs_f32, mismatches32, same32, sweep_all_f32};
    use gpukit_core::math;

    /// Whether this CPU has the loops (AVX-512F).
    fn have() -> bool {
        detected_simd_level() == SimdLevel::Avx512
    }

    /// `exp_f32_slice` over `xs`, out of place and in place; both must run and agree.
    fn run_both(xs: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0f32; xs.len()];
        assert!(exp_f32_slice(Some(xs), &mut out));
        let mut inplace = xs.to_vec();
        assert!(exp_f32_slice(None, &mut inplace));
        for (a, b) in out.iter().zip(&inplace) {
            assert_eq!(a.to_bits(), b.to_bits(), "in place differs");
        }
        out
    }

    /// The scalar reference of [`exp_sum_f32`]: `e` and the 32 lanes' sums.
    fn exp_sum_scalar(m: f32, x: &[f32]) -> (Vec<f32>, [f32; LANES]) {
        let mut acc = [0.0f32; LANES];
        let e: Vec<f32> = x.iter().map(|&v| math::exp_f32(v - m)).collect();
        for (j, &v) in e.iter().enumerate() {
            acc[j % LANES] += v;
        }
        (e, acc)
    }

    /// Specials, random bits and values, a dense sweep over the whole finite range of
    /// results, and the overflow and underflow edges with their neighbours.
    #[test]
    fn exp_loop_matches_scalar() {
        if !have() {
            return;
        }
        let mut xs = inputs_f32(300_000);
        xs.extend((0..400_000).map(|i| i as f32 * 5e-4 - 110.0));
        for edge in [
            0x42b1_7217u32,
            0xc2cf_f1b4,
            0xc2ae_ac50,
            0x42c8_0000,
            0xc2d0_0000,
        ] {
            for d in 0..2000u32 {
                xs.push(f32::from_bits(edge - 1000 + d));
            }
        }
        let out = run_both(&xs);
        for (&x, &y) in xs.iter().zip(&out) {
            let w = math::exp_f32(x);
            assert!(
                same32(y, w),
                "x = {x:e} ({:#010x}): {:#010x}, scalar {:#010x}",
                x.to_bits(),
                y.to_bits(),
                w.to_bits()
            );
        }
    }

    /// Every length up to a few pairs of vectors at several offsets: the full and the
    /// masked paths, with the memory around the output left alone.
    #[test]
    fn exp_ragged_lengths_touch_only_their_range() {
        if !have() {
            return;
        }
        const SENTINEL: u32 = 0x7fc0_1234;
        let xs = inputs_f32(200);
        for n in 0..=100 {
            for off in 0..3 {
                let x = &xs[off * 7..off * 7 + n];
                let mut buf = vec![f32::from_bits(SENTINEL); n + 40];
                assert!(exp_f32_slice(Some(x), &mut buf[20..20 + n]));
                for (i, &v) in buf.iter().enumerate() {
                    if (20..20 + n).contains(&i) {
                        assert!(
                            same32(v, math::exp_f32(x[i - 20])),
                            "n {n} off {off} at {i}"
                        );
                    } else {
                        assert_eq!(v.to_bits(), SENTINEL, "n {n}: wrote {i}");
                    }
                }
            }
        }
    }

    /// The exp-and-sum pass against its scalar loop, out of place and in place: every
    /// stored `e_j` and every lane sum, over ragged lengths, with the row's own maximum
    /// and other `m` (NaN, ±inf, signed zeros, subnormals among the inputs and as `m`),
    /// lanes starting from non-zero sums, and the memory around `e` left alone.
    #[test]
    fn exp_sum_matches_scalar() {
        if !have() {
            return;
        }
        const SENTINEL: u32 = 0x7fc0_4321;
        let pool: Vec<f32> = inputs_f32(2000)
            .into_iter()
            .filter(|v| v.abs() < 200.0 || !v.is_finite())
            .collect();
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1e-40,
            -88.0,
        ];
        for n in (0..=70).chain([95, 96, 97, 127, 128, 129, 1000]) {
            for (t, start) in [0usize, 13, 501].into_iter().enumerate() {
                let mut x: Vec<f32> = pool[start..start + n].to_vec();
                if t == 1 && n > 0 {
                    x[n / 2] = specials[n % specials.len()];
                }
                let row_max = x.iter().fold(f32::NEG_INFINITY, |a, &b| {
                    gpukit_core::numeric::max_nan(a, b)
                });
                for m in [
                    row_max,
                    0.0,
                    -0.0,
                    3.5,
                    f32::NAN,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    1e-40,
                ] {
                    let (want_e, mut want_acc) = exp_sum_scalar(m, &x);
                    let init: [f32; LANES] =
                        std::array::from_fn(|l| if t == 2 { l as f32 * 0.25 } else { 0.0 });
                    if t == 2 {
                        want_acc = init;
                        for (j, &v) in want_e.iter().enumerate() {
                            want_acc[j % LANES] += v;
                        }
                    }
                    let mut buf = vec![f32::from_bits(SENTINEL); n + 40];
                    let mut acc = init;
                    assert!(exp_sum_f32(m, Some(&x), &mut buf[20..20 + n], &mut acc));
                    let mut inplace = x.clone();
                    let mut acc2 = init;
                    assert!(exp_sum_f32(m, None, &mut inplace, &mut acc2));
                    for l in 0..LANES {
                        assert!(same32(acc[l], want_acc[l]), "n {n} m {m} lane {l}");
                        assert!(
                            same32(acc2[l], want_acc[l]),
                            "in place: n {n} m {m} lane {l}"
                        );
                    }
                    for (i, &v) in buf.iter().enumerate() {
                        if (20..20 + n).contains(&i) {
                            assert!(same32(v, want_e[i - 20]), "n {n} m {m} at {i}");
                            assert!(
                                same32(inplace[i - 20], want_e[i - 20]),
                                "in place: n {n} m {m}"
                            );
                        } else {
                            assert_eq!(v.to_bits(), SENTINEL, "n {n}: wrote {i}");
                        }
                    }
                }
            }
        }
    }

    /// The pipelined step with and without the division: the same `e` and lane sums as
    /// [`exp_sum_f32`], and `out_j = prev_j / s` bit for bit, over ragged lengths,
    /// with the memory around `out` left alone; a slice of another length declines.
    #[test]
    fn softmax_step_matches_its_parts() {
        if !have() {
            return;
        }
        const SENTINEL: u32 = 0x7fc0_5678;
        let pool = inputs_f32(3000);
        for n in (1..=70).chain([96, 97, 1000]) {
            for t in 0..4usize {
                let x = &pool[t * 50..t * 50 + n];
                let prev: Vec<f32> = pool[1500 + t..1500 + t + n]
                    .iter()
                    .map(|v| v.abs())
                    .collect();
                let m = 1.5f32;
                let s = 3.0f32 + t as f32 * 0.37;
                let mut want_e = vec![0.0f32; n];
                let mut want_acc = [0.0f32; LANES];
                assert!(exp_sum_f32(m, Some(x), &mut want_e, &mut want_acc));
                for with_div in [false, true] {
                    let mut e = vec![0.0f32; n];
                    let mut acc = [0.0f32; LANES];
                    let mut buf = vec![f32::from_bits(SENTINEL); n + 40];
                    assert!(softmax_step_f32(SoftmaxStep {
                        m,
                        x,
                        e: &mut e,
                        acc: &mut acc,
                        div: with_div.then(|| (&prev[..], s, &mut buf[20..20 + n])),
                    }));
                    let ctx = format!("n {n} t {t} div {with_div}");
                    assert!(
                        e.iter().zip(&want_e).all(|(a, b)| same32(*a, *b)),
                        "{ctx}: e"
                    );
                    assert!(
                        acc.iter().zip(&want_acc).all(|(a, b)| same32(*a, *b)),
                        "{ctx}: acc"
                    );
                    for (i, &v) in buf.iter().enumerate() {
                        if with_div && (20..20 + n).contains(&i) {
                            assert!(same32(v, prev[i - 20] / s), "{ctx}: out at {i}");
                        } else {
                            assert_eq!(v.to_bits(), SENTINEL, "{ctx}: wrote {i}");
                        }
                    }
                }
                let mut e = vec![9.0f32; n];
                let mut acc = [9.0f32; LANES];
                let mut o = vec![9.0f32; n + 1];
                let step = SoftmaxStep {
                    m,
                    x,
                    e: &mut e,
                    acc: &mut acc,
                    div: Some((&prev[..], s, &mut o[..])),
                };
                assert!(!softmax_step_f32(step));
                assert!(
                    e.iter()
                        .chain(acc.iter())
                        .chain(o.iter())
                        .all(|&v| v == 9.0)
                );
            }
        }
    }

    /// `max_f32` against the `max_nan` fold (a zero of either sign; a NaN for a NaN):
    /// every length to 200 with specials at several places, rows of only signed zeros,
    /// only `-inf`, and empty.
    #[test]
    fn max_is_the_fold() {
        if !have() {
            return;
        }
        let pool = inputs_f32(400);
        let specials = [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            1e-40,
            -1e-40,
            f32::MAX,
        ];
        let fold = |x: &[f32]| {
            x.iter().fold(f32::NEG_INFINITY, |a, &b| {
                gpukit_core::numeric::max_nan(a, b)
            })
        };
        let check = |x: &[f32], ctx: &str| {
            let got = max_f32(x).expect("runs at AVX-512");
            let want = fold(x);
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "{ctx}: {got} want {want}"
            );
        };
        for n in 0..=200usize {
            let base: Vec<f32> = pool[..n]
                .iter()
                .map(|v| if v.is_nan() { 1.0 } else { *v })
                .collect();
            check(&base, &format!("n {n}"));
            for (k, &sp) in specials.iter().enumerate() {
                for at in [0, n / 2, n.saturating_sub(1)] {
                    if n == 0 {
                        continue;
                    }
                    let mut x: Vec<f32> = base.iter().map(|v| -v.abs() - 1.0).collect();
                    x[at] = sp;
                    check(&x, &format!("n {n} special {k} at {at}"));
                }
            }
            let zeros: Vec<f32> = (0..n)
                .map(|i| if i % 3 == 1 { 0.0 } else { -0.0 })
                .collect();
            check(&zeros, &format!("zeros n {n}"));
            check(&vec![f32::NEG_INFINITY; n], &format!("-inf n {n}"));
        }
    }

    /// Below AVX-512, and with a short source, the loops decline and touch nothing.
    #[test]
    fn declines_without_a_loop() {
        let xs = [0.5f32; 9];
        let mut out = [7.0f32; 10];
        let mut acc = [3.0f32; LANES];
        assert!(!exp_f32_slice(Some(&xs), &mut out));
        assert!(!exp_sum_f32(0.0, Some(&xs), &mut out, &mut acc));
        for level in [SimdLevel::Scalar, SimdLevel::Avx2] {
            set_thread_simd_limit(Some(level));
            let ran = exp_f32_slice(None, &mut out) || exp_sum_f32(0.0, None, &mut out, &mut acc);
            set_thread_simd_limit(None);
            assert!(!ran);
        }
        assert!(out.iter().all(|&v| v == 7.0));
        assert!(acc.iter().all(|&v| v == 3.0));
    }

    /// All 2^32 inputs through the exp loop, only with `GPUKIT_VMATH_EXHAUSTIVE=1`
    /// (`GPUKIT_VMATH_EXHAUSTIVE_FNS=exp_slice` picks it).
    #[test]
    fn exhaustive_slices_when_asked() {
        if !have() || !exhaustive_wanted("exp_slice") {
            return;
        }
        let bad = sweep_all_f32(math::exp_f32, |xs, want| mismatches32(&run_both(xs), want));
        eprintln!("exhaustive exp_slice: {bad} mismatches over 2^32 inputs");
        assert_eq!(bad, 0, "exp_slice");
    }
}
