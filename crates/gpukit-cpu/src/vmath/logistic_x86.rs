//! `tanh` and `sigmoid` in f32 over a slice, written with explicit AVX-512
//! instructions: the lane forms [`super::tanh_f32`] and [`super::sigmoid_f32`],
//! operation for operation, two vectors at a time with every step written for both.
//!
//! Each function is one long dependency chain per vector (the exp kernel, then a
//! double-word quotient with two correctly rounded divisions). The lane forms' loops,
//! and explicit loops that call a one-vector function twice per iteration, leave LLVM
//! to schedule the two chains; it runs them one after the other, and too few
//! independent operations are in flight to keep the ports busy. Here each step is
//! written for both vectors side by side ([`both`]), so the two chains interleave in
//! the instruction stream itself.
//!
//! The scalings by `2^k` differ in form, not in value: they are `vscalefps` with the
//! exp kernel's float `kf`. Sigmoid's `scale_f32(hi, k)` (the `x < -24` path, `hi · 2^k`
//! rounded once) is the correctly rounded `hi · 2^k` in one instruction, as the lane
//! form's two exact scalings give; the other paths' `hi · 2^k` and `lo · 2^k` are exact
//! either way (normal results), as the lane form's products by `pow2i(k)` are.
//!
//! The entry points are safe: [`tanh_f32_slice`] and [`sigmoid_f32_slice`] run at the
//! calling thread's [`simd_level`] and return `false`, touching nothing, below
//! AVX-512 (where the lane forms run) or when `src` is shorter than `out`.

use std::arch::x86_64::*;

use gpukit_core::math::TANH_F32;

use super::exp_x86::{V2, both, exp_kernel2, horner2, run2};

use crate::kernels::simd::{SimdLevel, simd_level};

/// `tanh` over `src` (or `out` itself, in place, when `src` is `None`) into `out`:
/// the bits of [`super::tanh_f32`] for every element. `false`, touching nothing, below
/// AVX-512 or when `src` is shorter than `out`.
pub(crate) fn tanh_f32_slice(src: Option<&[f32]>, out: &mut [f32]) -> bool {
    run(src, out, false)
}

/// `sigmoid` over `src` (or `out` in place) into `out`: the bits of
/// [`super::sigmoid_f32`] for every element. `false` as [`tanh_f32_slice`].
pub(crate) fn sigmoid_f32_slice(src: Option<&[f32]>, out: &mut [f32]) -> bool {
    run(src, out, true)
}

fn run(src: Option<&[f32]>, out: &mut [f32], sigmoid: bool) -> bool {
    if src.is_some_and(|s| s.len() < out.len()) || simd_level() != SimdLevel::Avx512 {
        return false;
    }
    // SAFETY: `simd_level` never exceeds what the CPU supports; `src` is long enough.
    unsafe {
        if sigmoid {
            sigmoid_loop(src, out)
        } else {
            tanh_loop(src, out)
        }
    }
    true
}

/// The tanh loop.
///
/// # Safety
/// AVX-512F; `src`, when given, at least as long as `out`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn tanh_loop(src: Option<&[f32]>, out: &mut [f32]) {
    // SAFETY: as the caller guarantees.
    unsafe { run2(src, out, |x| tanh2(x)) }
}

/// The sigmoid loop.
///
/// # Safety
/// AVX-512F; `src`, when given, at least as long as `out`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn sigmoid_loop(src: Option<&[f32]>, out: &mut [f32]) {
    // SAFETY: as the caller guarantees.
    unsafe { run2(src, out, |x| sigmoid2(x)) }
}

/// `tanh` on two vectors.
#[inline]
#[target_feature(enable = "avx512f,fma")]
fn tanh2(x: V2) -> V2 {
    let one = _mm512_set1_ps(1.0);
    let two = _mm512_set1_ps(2.0);
    let sign = _mm512_set1_epi32(i32::MIN);
    let xi = both(|j| _mm512_castps_si512(x[j]));
    let a = both(|j| _mm512_castsi512_ps(_mm512_andnot_si512(sign, xi[j])));
    let nan = both(|j| _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x[j], x[j]));
    let small = both(|j| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a[j], _mm512_set1_ps(0.5625)));
    let big = both(|j| _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a[j], _mm512_set1_ps(9.5)));
    let zero = both(|j| _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a[j], _mm512_setzero_ps()));
    // |x| < 0.5625: x + x³·P(x²) (x itself at ±0).
    let z = both(|j| _mm512_mul_ps(x[j], x[j]));
    let p = horner2(z, &TANH_F32);
    let ys = both(|j| {
        _mm512_mask_blend_ps(
            zero[j],
            _mm512_fmadd_ps(_mm512_mul_ps(x[j], z[j]), p[j], x[j]),
            x[j],
        )
    });
    // 0.5625 <= |x| < 9.5: 1 - 2/(e^{2|x|} + 1) in double words, on the stand-in 1.0
    // elsewhere.
    let ac = both(|j| _mm512_mask_blend_ps(small[j] | big[j] | nan[j], a[j], one));
    let (_, kf, hi, lo) = exp_kernel2(both(|j| _mm512_mul_ps(two, ac[j])));
    // hi · 2^k and lo · 2^k, exact (0 <= k <= 28).
    let eh = both(|j| _mm512_scalef_ps(hi[j], kf[j]));
    let el = both(|j| _mm512_scalef_ps(lo[j], kf[j]));
    let dh = both(|j| _mm512_add_ps(eh[j], one));
    let dl = both(|j| _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(eh[j], dh[j]), one), el[j]));
    let qh = both(|j| _mm512_div_ps(two, dh[j]));
    let rr = both(|j| {
        _mm512_sub_ps(
            _mm512_fnmadd_ps(qh[j], dh[j], two),
            _mm512_mul_ps(qh[j], dl[j]),
        )
    });
    let ql = both(|j| _mm512_div_ps(rr[j], dh[j]));
    let yh = both(|j| _mm512_sub_ps(one, qh[j]));
    let yl = both(|j| _mm512_sub_ps(_mm512_sub_ps(_mm512_sub_ps(one, yh[j]), qh[j]), ql[j]));
    let ym = both(|j| _mm512_add_ps(yh[j], yl[j]));
    let m = both(|j| _mm512_mask_blend_ps(big[j], ym[j], one));
    // m | (x & sign): m >= 0, with x's sign.
    let y = both(|j| {
        _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xf8>(
            _mm512_castps_si512(m[j]),
            xi[j],
            sign,
        ))
    });
    let y = both(|j| _mm512_mask_blend_ps(small[j], y[j], ys[j]));
    both(|j| _mm512_mask_blend_ps(nan[j], y[j], x[j]))
}

/// `sigmoid` on two vectors.
#[inline]
#[target_feature(enable = "avx512f,fma")]
fn sigmoid2(x: V2) -> V2 {
    let one = _mm512_set1_ps(1.0);
    let zero = _mm512_setzero_ps();
    let nan = both(|j| _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x[j], x[j]));
    let over = both(|j| _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x[j], _mm512_set1_ps(18.0)));
    let low = both(|j| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x[j], _mm512_set1_ps(-24.0)));
    // exp_f32's underflow limit.
    let lim = _mm512_set1_ps(f32::from_bits(0xc2cf_f1b4));
    let under = both(|j| _mm512_cmp_ps_mask::<_CMP_LT_OQ>(x[j], lim));
    let xc = both(|j| _mm512_mask_blend_ps(under[j], x[j], _mm512_set1_ps(-50.0)));
    let xc = both(|j| _mm512_mask_blend_ps(nan[j] | over[j], xc[j], zero));
    // -|xc|: the sign bit set.
    let na = both(|j| {
        _mm512_castsi512_ps(_mm512_or_si512(
            _mm512_castps_si512(xc[j]),
            _mm512_set1_epi32(i32::MIN),
        ))
    });
    let (_, kf, hi, lo) = exp_kernel2(na);
    // x < -24: exp_f32(x) = hi · 2^k rounded once.
    let yl = both(|j| {
        let s = _mm512_scalef_ps(hi[j], kf[j]);
        _mm512_mask_blend_ps(under[j], s, zero)
    });
    // -24 <= x <= 18.
    // hi · 2^k and lo · 2^k, exact (-35 <= k <= 0).
    let eh = both(|j| _mm512_scalef_ps(hi[j], kf[j]));
    let el = both(|j| _mm512_scalef_ps(lo[j], kf[j]));
    let dh = both(|j| _mm512_add_ps(one, eh[j]));
    let dl = both(|j| _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(one, dh[j]), eh[j]), el[j]));
    let pos = both(|j| _mm512_cmp_ps_mask::<_CMP_GE_OQ>(xc[j], zero));
    let nh = both(|j| _mm512_mask_blend_ps(pos[j], eh[j], one));
    let nl = both(|j| _mm512_mask_blend_ps(pos[j], el[j], zero));
    let y0 = both(|j| _mm512_div_ps(nh[j], dh[j]));
    let rr = both(|j| {
        _mm512_add_ps(
            _mm512_fnmadd_ps(y0[j], dh[j], nh[j]),
            _mm512_sub_ps(nl[j], _mm512_mul_ps(y0[j], dl[j])),
        )
    });
    let ym = both(|j| _mm512_add_ps(y0[j], _mm512_div_ps(rr[j], dh[j])));
    let y = both(|j| _mm512_mask_blend_ps(low[j], ym[j], yl[j]));
    let y = both(|j| _mm512_mask_blend_ps(over[j], y[j], one));
    both(|j| _mm512_mask_blend_ps(nan[j], y[j], x[j]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::simd::{detected_simd_level, set_thread_simd_limit};
    use crate::vmath::tests::{exhaustive_wanted, inputs_f32, mismatches32, same32, sweep_all_f32};
    use gpukit_core::math;

    type F = fn(Option<&[f32]>, &mut [f32]) -> bool;
    type S = fn(f32) -> f32;
    const FNS: [(&str, F, S); 2] = [
        ("tanh_slice", tanh_f32_slice, math::tanh_f32),
        ("sigmoid_slice", sigmoid_f32_slice, math::sigmoid_f32),
    ];

    /// Whether this CPU has the loops (AVX-512F).
    fn have() -> bool {
        detected_simd_level() == SimdLevel::Avx512
    }

    /// `f` over `xs`, out of place and in place; both must run and agree.
    fn run_both(xs: &[f32], f: F) -> Vec<f32> {
        let mut out = vec![0.0f32; xs.len()];
        assert!(f(Some(xs), &mut out));
        let mut inplace = xs.to_vec();
        assert!(f(None, &mut inplace));
        for (a, b) in out.iter().zip(&inplace) {
            assert_eq!(a.to_bits(), b.to_bits(), "in place differs");
        }
        out
    }

    /// Specials, every branch boundary with neighbours, random bits and values, and a
    /// dense sweep of [-30, 30] (every path of both functions, subnormal results of
    /// sigmoid included).
    #[test]
    fn loops_match_scalar() {
        if !have() {
            return;
        }
        let mut xs = inputs_f32(300_000);
        xs.extend((0..240_000).map(|i| i as f32 * 2.5e-4 - 30.0));
        xs.extend((0..20_000).map(|i| -87.0 - i as f32 * 1e-3));
        for (name, f, scalar) in FNS {
            let out = run_both(&xs, f);
            for (&x, &y) in xs.iter().zip(&out) {
                let w = scalar(x);
                assert!(
                    same32(y, w),
                    "{name}: x = {x:e} ({:#010x}): {:#010x}, scalar {:#010x}",
                    x.to_bits(),
                    y.to_bits(),
                    w.to_bits()
                );
            }
        }
    }

    /// Every length up to a few pairs of vectors at several offsets: the full and the
    /// masked paths, with the memory around the output left alone.
    #[test]
    fn ragged_lengths_touch_only_their_range() {
        if !have() {
            return;
        }
        const SENTINEL: u32 = 0x7fc0_1234;
        let xs = inputs_f32(200);
        for (name, f, scalar) in FNS {
            for n in 0..=100 {
                for off in 0..3 {
                    let x = &xs[off * 7..off * 7 + n];
                    let mut buf = vec![f32::from_bits(SENTINEL); n + 40];
                    assert!(f(Some(x), &mut buf[20..20 + n]));
                    for (i, &v) in buf.iter().enumerate() {
                        if (20..20 + n).contains(&i) {
                            assert!(
                                same32(v, scalar(x[i - 20])),
                                "{name} n {n} off {off} at {i}"
                            );
                        } else {
                            assert_eq!(v.to_bits(), SENTINEL, "{name} n {n}: wrote {i}");
                        }
                    }
                }
            }
        }
    }

    /// Below AVX-512, and with a short source, the loops decline and touch nothing.
    #[test]
    fn declines_without_a_loop() {
        let xs = [0.5f32; 9];
        let mut out = [7.0f32; 10];
        assert!(!tanh_f32_slice(Some(&xs), &mut out));
        for level in [SimdLevel::Scalar, SimdLevel::Avx2] {
            set_thread_simd_limit(Some(level));
            let ran = sigmoid_f32_slice(None, &mut out) || tanh_f32_slice(None, &mut out);
            set_thread_simd_limit(None);
            assert!(!ran);
        }
        assert!(out.iter().all(|&v| v == 7.0));
    }

    /// All 2^32 inputs through both loops, only with `GPUKIT_VMATH_EXHAUSTIVE=1`
    /// (`GPUKIT_VMATH_EXHAUSTIVE_FNS=tanh_slice,sigmoid_slice` picks).
    #[test]
    fn exhaustive_slices_when_asked() {
        if !have() {
            return;
        }
        for (name, f, scalar) in FNS {
            if !exhaustive_wanted(name) {
                continue;
            }
            let bad = sweep_all_f32(scalar, |xs, want| mismatches32(&run_both(xs, f), want));
            eprintln!("exhaustive {name}: {bad} mismatches over 2^32 inputs");
            assert_eq!(bad, 0, "{name}");
        }
    }
}
