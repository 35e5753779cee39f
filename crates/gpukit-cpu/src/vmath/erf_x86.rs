//! `erf` and GELU (erf form) in f32 over a slice, written with explicit AVX-512 and
//! AVX2 instructions: the lane form [`super::erf_f32`] with its four polynomials
//! folded into one.
//!
//! The scalar function evaluates one of four polynomials of degree at most 6: `ERF_F32`
//! in `x²` for `|x| < 0.875`, else the erfc piece of `|x|`'s interval in `|x| - c`. The
//! lane form evaluates all four in every lane and selects one result (23 fused
//! multiply-adds, which bind the loop to the FMA ports). Here every lane computes its
//! own path's index (0 for `ERF_F32`, 1–3 for the erfc pieces) and runs one Horner
//! evaluation of degree 6, whose argument and coefficients are its own path's: each
//! coefficient is an in-lane permute of a small table (`vpermilps`). The fused
//! multiply-adds are the same operations on the same values, so every lane has the lane
//! form's bits.
//! The one piece of degree 5 (`ERFC_F32_2`) gets a leading zero coefficient, whose first
//! step `fma(0, t, c₅)` is exactly `c₅` (its argument `|x| - 3.25` is finite). LLVM does
//! not keep this shape when it is written as selects in the lane form (it splits the
//! polynomials again), hence the intrinsics.
//!
//! Everything else is the lane form's operation sequence, instruction for instruction:
//! the exp kernel at `(-x², -err(x²))`, the double-word `1 - e·R`, the sign, the small
//! path `fma(x, P, x)`, and the selects of `|x| >= 4` and NaN.
//!
//! The entry points are safe: [`erf_f32_slice`] and [`gelu_f32_slice`] run at the
//! current [`simd_level`](crate::kernels::simd::simd_level) (so `GPUKIT_CPU_SIMD` and
//! the tests' limits apply) and return `false` below AVX2, where the caller runs the
//! lane form.

use std::arch::x86_64::*;

use gpukit_core::math::{
    ERF_F32, ERFC_F32_0, ERFC_F32_1, ERFC_F32_2, EXP_F32, LN2_HI_F32, LN2_LO_F32, LOG2E_F32,
    MAGIC_F32,
};

use crate::kernels::simd::{SimdLevel, simd_level};

const _: () = assert!(
    ERF_F32.len() == 7 && ERFC_F32_0.len() == 7 && ERFC_F32_1.len() == 7 && ERFC_F32_2.len() == 6
);

/// `TABLES[i]` lane `j`: the degree-`i` coefficient of path `j % 4` (0: `ERF_F32`, 1–3:
/// the erfc pieces, `ERFC_F32_2` padded with a leading zero); `TABLES[7]`: each path's
/// centre (0 for `ERF_F32`, whose argument is `x²` instead). Each 128-bit lane holds
/// the same four values, so an in-lane permute (`vpermilps`, cheaper than a
/// cross-lane one) selects them.
#[repr(align(64))]
struct Tables([[f32; 16]; 8]);

static TABLES: Tables = {
    let mut t = [[0.0f32; 16]; 8];
    let mut j = 0;
    while j < 16 {
        let mut i = 0;
        while i < 7 {
            t[i][j] = match j % 4 {
                0 => ERF_F32[i],
                1 => ERFC_F32_0[i],
                2 => ERFC_F32_1[i],
                _ if i < 6 => ERFC_F32_2[i],
                _ => 0.0,
            };
            i += 1;
        }
        t[7][j] = [0.0, 1.1875, 2.0, 3.25][j % 4];
        j += 1;
    }
    Tables(t)
};

/// `FRAC_1_SQRT_2` rounded to f32: GELU's `R(1/√2)`.
const FRAC_1_SQRT_2_F32: f32 = std::f64::consts::FRAC_1_SQRT_2 as f32;

/// `erf` over `src` (or `out` itself, in place, when `src` is `None`) into `out`, at
/// the calling thread's SIMD level: the bits of [`super::erf_f32`] for every element.
/// Returns `false`, touching nothing, when the level is below AVX2 or `src` is shorter
/// than `out`.
pub(crate) fn erf_f32_slice(src: Option<&[f32]>, out: &mut [f32]) -> bool {
    run(src, out, false)
}

/// GELU (erf form) over `src` (or `out` in place) into `out`: the bits of
/// [`LaneMath::gelu_l`](super::LaneMath::gelu_l) for every element. Returns `false`,
/// touching nothing, as [`erf_f32_slice`] does.
pub(crate) fn gelu_f32_slice(src: Option<&[f32]>, out: &mut [f32]) -> bool {
    run(src, out, true)
}

fn run(src: Option<&[f32]>, out: &mut [f32], gelu: bool) -> bool {
    if src.is_some_and(|s| s.len() < out.len()) {
        return false;
    }
    match simd_level() {
        // SAFETY: `simd_level` never exceeds what the CPU supports.
        SimdLevel::Avx512 => unsafe { slice_avx512(src, out, gelu) },
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { slice_avx2(src, out, gelu) },
        SimdLevel::Scalar => return false,
    }
    true
}

// ---------------------------------------------------------------------------------------
// AVX-512
// ---------------------------------------------------------------------------------------

/// The AVX-512 loop: two vectors at a time (the function is one long dependency
/// chain per vector; two independent chains keep the ports busy: 15% faster than one on
/// a Zen 4, three gain nothing more), then one, then the tail through masked loads and
/// stores.
///
/// # Safety
/// The CPU must support AVX-512F; `src`, when given, is at least as long as `out`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn slice_avx512(src: Option<&[f32]>, out: &mut [f32], gelu: bool) {
    let n = out.len();
    let tabs = load_tables_512();
    let dst = out.as_mut_ptr();
    let inp = src.map_or(dst.cast_const(), <[f32]>::as_ptr);
    let f = |x: __m512| {
        if gelu {
            gelu16(x, &tabs)
        } else {
            erf16(x, &tabs)
        }
    };
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: i + 32 <= n, and `inp` holds at least n elements (`out`, or `src` by
        // the caller's guarantee); the loads of a range happen before its stores.
        unsafe {
            let x0 = _mm512_loadu_ps(inp.add(i));
            let x1 = _mm512_loadu_ps(inp.add(i + 16));
            let (y0, y1) = (f(x0), f(x1));
            _mm512_storeu_ps(dst.add(i), y0);
            _mm512_storeu_ps(dst.add(i + 16), y1);
        }
        i += 32;
    }
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, and `inp` holds at least n elements (`out`, or `src` by
        // the caller's guarantee); the load of a range happens before its store.
        unsafe { _mm512_storeu_ps(dst.add(i), f(_mm512_loadu_ps(inp.add(i)))) };
        i += 16;
    }
    if i < n {
        let k: __mmask16 = (1u16 << (n - i)) - 1;
        // SAFETY: masked-off lanes are neither read nor written (they do not fault);
        // the `n - i` lanes kept are inside both slices.
        unsafe {
            let x = _mm512_maskz_loadu_ps(k, inp.add(i));
            _mm512_mask_storeu_ps(dst.add(i), k, f(x));
        }
    }
}

/// The eight tables of [`TABLES`] in registers.
#[target_feature(enable = "avx512f")]
fn load_tables_512() -> [__m512; 8] {
    // SAFETY: each row is 16 f32 (64 aligned bytes) of a static.
    std::array::from_fn(|i| unsafe { _mm512_load_ps(TABLES.0[i].as_ptr()) })
}

/// GELU on 16 lanes: `x * fma(0.5, erf(x * R(1/√2)), 0.5)`, `-inf` gives `-0.0`.
#[inline]
#[target_feature(enable = "avx512f,fma")]
fn gelu16(x: __m512, tabs: &[__m512; 8]) -> __m512 {
    let half = _mm512_set1_ps(0.5);
    let e = erf16(_mm512_mul_ps(x, _mm512_set1_ps(FRAC_1_SQRT_2_F32)), tabs);
    let y = _mm512_mul_ps(x, _mm512_fmadd_ps(half, e, half));
    let ninf = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(x, _mm512_set1_ps(f32::NEG_INFINITY));
    _mm512_mask_blend_ps(ninf, y, _mm512_set1_ps(-0.0))
}

/// `erf` on 16 lanes (see the module's text for the order of operations).
#[inline]
#[target_feature(enable = "avx512f,fma")]
fn erf16(x: __m512, tabs: &[__m512; 8]) -> __m512 {
    let one = _mm512_set1_ps(1.0);
    let sign = _mm512_set1_epi32(i32::MIN);
    let xi = _mm512_castps_si512(x);
    let a = _mm512_castsi512_ps(_mm512_andnot_si512(sign, xi));
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(x, x);
    let small = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, _mm512_set1_ps(0.875));
    let big = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, _mm512_set1_ps(4.0));
    // The erfc path's input, on the stand-in 1.0 where it is not taken.
    let ac = _mm512_mask_blend_ps(small | big | nan, a, one);
    let p0 = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ac, _mm512_set1_ps(1.5));
    let p1 = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(ac, _mm512_set1_ps(2.5));
    // The path: 3, minus one for each of p1, p0 and small (small lanes have ac = 1, so
    // all three hold there).
    let step = _mm512_set1_epi32(1);
    let idx = _mm512_set1_epi32(3);
    let idx = _mm512_mask_sub_epi32(idx, p1, idx, step);
    let idx = _mm512_mask_sub_epi32(idx, p0, idx, step);
    let idx = _mm512_mask_sub_epi32(idx, small, idx, step);
    // The polynomial's argument: x² on the small path, |x| - c on an erfc piece.
    let centre = _mm512_permutevar_ps(tabs[7], idx);
    let t = _mm512_mask_blend_ps(small, _mm512_sub_ps(ac, centre), _mm512_mul_ps(x, x));
    let mut p = _mm512_permutevar_ps(tabs[6], idx);
    for tab in tabs[..6].iter().rev() {
        p = _mm512_fmadd_ps(p, t, _mm512_permutevar_ps(*tab, idx));
    }
    // |x| < 0.875: x + x·P(x²).
    let ys = _mm512_fmadd_ps(x, p, x);
    // 0.875 <= |x| < 4: 1 - exp(-x²)·R(|x| - c) in double words.
    let r = p;
    let x2h = _mm512_mul_ps(ac, ac);
    // -x2l = -(fma(ac, ac, -x2h)), rounded once: the same value negated.
    let nx2l = _mm512_fnmadd_ps(ac, ac, x2h);
    let nx2h = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x2h), sign));
    let (k, hi, lo) = exp_kernel16(nx2h, nx2l);
    let sc = _mm512_castsi512_ps(_mm512_slli_epi32::<23>(_mm512_add_epi32(
        k,
        _mm512_set1_epi32(127),
    )));
    let eh = _mm512_mul_ps(hi, sc);
    let el = _mm512_mul_ps(lo, sc);
    let qh = _mm512_mul_ps(eh, r);
    let ql = _mm512_add_ps(_mm512_fmsub_ps(eh, r, qh), _mm512_mul_ps(el, r));
    let yh = _mm512_sub_ps(one, qh);
    let yl = _mm512_sub_ps(_mm512_sub_ps(_mm512_sub_ps(one, yh), qh), ql);
    let ym = _mm512_add_ps(yh, yl);
    let m = _mm512_mask_blend_ps(big, ym, one);
    // m | (x & sign): m >= 0, with x's sign.
    let y = _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0xf8>(
        _mm512_castps_si512(m),
        xi,
        sign,
    ));
    let y = _mm512_mask_blend_ps(small, y, ys);
    _mm512_mask_blend_ps(nan, y, x)
}

/// The lane form's `exp_kernel_f32(x, xl)` on 16 lanes: `(k, hi, lo)`.
#[inline]
#[target_feature(enable = "avx512f,fma")]
fn exp_kernel16(x: __m512, xl: __m512) -> (__m512i, __m512, __m512) {
    let magic = _mm512_set1_ps(MAGIC_F32);
    let one = _mm512_set1_ps(1.0);
    let t = _mm512_fmadd_ps(x, _mm512_set1_ps(LOG2E_F32), magic);
    let kf = _mm512_sub_ps(t, magic);
    let k = _mm512_sub_epi32(
        _mm512_castps_si512(t),
        _mm512_set1_epi32(MAGIC_F32.to_bits() as i32),
    );
    // fma(-kf, c, v) = fnmadd(kf, c, v): the product's sign flips exactly.
    let r_hi = _mm512_fnmadd_ps(kf, _mm512_set1_ps(LN2_HI_F32), x);
    let r_lo = _mm512_fnmadd_ps(kf, _mm512_set1_ps(LN2_LO_F32), xl);
    let r = _mm512_add_ps(r_hi, r_lo);
    let r_err = _mm512_sub_ps(r_lo, _mm512_sub_ps(r, r_hi));
    let r2 = _mm512_mul_ps(r, r);
    let mut q = _mm512_set1_ps(EXP_F32[EXP_F32.len() - 1]);
    for &c in EXP_F32[..EXP_F32.len() - 1].iter().rev() {
        q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(c));
    }
    let p = _mm512_fmadd_ps(r2, q, _mm512_fmadd_ps(r_err, r, r_err));
    let s = _mm512_add_ps(one, r);
    let e = _mm512_add_ps(_mm512_sub_ps(one, s), r);
    let t = _mm512_add_ps(e, p);
    let hi = _mm512_add_ps(s, t);
    let lo = _mm512_add_ps(_mm512_sub_ps(s, hi), t);
    (k, hi, lo)
}

// ---------------------------------------------------------------------------------------
// AVX2
// ---------------------------------------------------------------------------------------

/// The AVX2 loop: two vectors at a time (as the AVX-512 loop), then one, then the
/// tail through a zero-padded copy.
///
/// # Safety
/// The CPU must support AVX2 and FMA; `src`, when given, is at least as long as `out`.
#[target_feature(enable = "avx2,fma")]
unsafe fn slice_avx2(src: Option<&[f32]>, out: &mut [f32], gelu: bool) {
    let n = out.len();
    let tabs = load_tables_256();
    let dst = out.as_mut_ptr();
    let inp = src.map_or(dst.cast_const(), <[f32]>::as_ptr);
    let f = |x: __m256| {
        if gelu {
            gelu8(x, &tabs)
        } else {
            erf8(x, &tabs)
        }
    };
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n, and `inp` holds at least n elements; the loads of a
        // range happen before its stores.
        unsafe {
            let x0 = _mm256_loadu_ps(inp.add(i));
            let x1 = _mm256_loadu_ps(inp.add(i + 8));
            let (y0, y1) = (f(x0), f(x1));
            _mm256_storeu_ps(dst.add(i), y0);
            _mm256_storeu_ps(dst.add(i + 8), y1);
        }
        i += 16;
    }
    while i + 8 <= n {
        // SAFETY: i + 8 <= n, and `inp` holds at least n elements; the load of a range
        // happens before its store.
        unsafe { _mm256_storeu_ps(dst.add(i), f(_mm256_loadu_ps(inp.add(i)))) };
        i += 8;
    }
    if i < n {
        let mut buf = [0.0f32; 8];
        for (j, b) in buf.iter_mut().enumerate().take(n - i) {
            // SAFETY: i + j < n.
            *b = unsafe { *inp.add(i + j) };
        }
        // SAFETY: `buf` holds 8 f32.
        let y = f(unsafe { _mm256_loadu_ps(buf.as_ptr()) });
        // SAFETY: as above.
        unsafe { _mm256_storeu_ps(buf.as_mut_ptr(), y) };
        for (j, &b) in buf.iter().enumerate().take(n - i) {
            // SAFETY: i + j < n.
            unsafe { *dst.add(i + j) = b };
        }
    }
}

/// The eight tables' first 8 lanes in registers.
#[target_feature(enable = "avx")]
fn load_tables_256() -> [__m256; 8] {
    // SAFETY: each row holds 16 f32, 64-byte aligned; the first 8 are read.
    std::array::from_fn(|i| unsafe { _mm256_load_ps(TABLES.0[i].as_ptr()) })
}

/// GELU on 8 lanes (as [`gelu16`]).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn gelu8(x: __m256, tabs: &[__m256; 8]) -> __m256 {
    let half = _mm256_set1_ps(0.5);
    let e = erf8(_mm256_mul_ps(x, _mm256_set1_ps(FRAC_1_SQRT_2_F32)), tabs);
    let y = _mm256_mul_ps(x, _mm256_fmadd_ps(half, e, half));
    let ninf = _mm256_cmp_ps::<_CMP_EQ_OQ>(x, _mm256_set1_ps(f32::NEG_INFINITY));
    _mm256_blendv_ps(y, _mm256_set1_ps(-0.0), ninf)
}

/// `erf` on 8 lanes (as [`erf16`], with all-ones lane masks and `blendv`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn erf8(x: __m256, tabs: &[__m256; 8]) -> __m256 {
    let one = _mm256_set1_ps(1.0);
    let sign = _mm256_set1_ps(-0.0);
    let a = _mm256_andnot_ps(sign, x);
    let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x);
    let small = _mm256_cmp_ps::<_CMP_LT_OQ>(a, _mm256_set1_ps(0.875));
    let big = _mm256_cmp_ps::<_CMP_GE_OQ>(a, _mm256_set1_ps(4.0));
    let ac = _mm256_blendv_ps(a, one, _mm256_or_ps(_mm256_or_ps(small, big), nan));
    let p0 = _mm256_cmp_ps::<_CMP_LT_OQ>(ac, _mm256_set1_ps(1.5));
    let p1 = _mm256_cmp_ps::<_CMP_LT_OQ>(ac, _mm256_set1_ps(2.5));
    // 3 plus each all-ones (-1) mask of p1, p0 and small.
    let idx = _mm256_add_epi32(
        _mm256_add_epi32(_mm256_set1_epi32(3), _mm256_castps_si256(p1)),
        _mm256_add_epi32(_mm256_castps_si256(p0), _mm256_castps_si256(small)),
    );
    let centre = _mm256_permutevar_ps(tabs[7], idx);
    let t = _mm256_blendv_ps(_mm256_sub_ps(ac, centre), _mm256_mul_ps(x, x), small);
    let mut p = _mm256_permutevar_ps(tabs[6], idx);
    for tab in tabs[..6].iter().rev() {
        p = _mm256_fmadd_ps(p, t, _mm256_permutevar_ps(*tab, idx));
    }
    let ys = _mm256_fmadd_ps(x, p, x);
    let r = p;
    let x2h = _mm256_mul_ps(ac, ac);
    let nx2l = _mm256_fnmadd_ps(ac, ac, x2h);
    let nx2h = _mm256_xor_ps(x2h, sign);
    let (k, hi, lo) = exp_kernel8(nx2h, nx2l);
    let sc = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(
        k,
        _mm256_set1_epi32(127),
    )));
    let eh = _mm256_mul_ps(hi, sc);
    let el = _mm256_mul_ps(lo, sc);
    let qh = _mm256_mul_ps(eh, r);
    let ql = _mm256_add_ps(_mm256_fmsub_ps(eh, r, qh), _mm256_mul_ps(el, r));
    let yh = _mm256_sub_ps(one, qh);
    let yl = _mm256_sub_ps(_mm256_sub_ps(_mm256_sub_ps(one, yh), qh), ql);
    let ym = _mm256_add_ps(yh, yl);
    let m = _mm256_blendv_ps(ym, one, big);
    let y = _mm256_or_ps(m, _mm256_and_ps(x, sign));
    let y = _mm256_blendv_ps(y, ys, small);
    _mm256_blendv_ps(y, x, nan)
}

/// The lane form's `exp_kernel_f32(x, xl)` on 8 lanes: `(k, hi, lo)`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp_kernel8(x: __m256, xl: __m256) -> (__m256i, __m256, __m256) {
    let magic = _mm256_set1_ps(MAGIC_F32);
    let one = _mm256_set1_ps(1.0);
    let t = _mm256_fmadd_ps(x, _mm256_set1_ps(LOG2E_F32), magic);
    let kf = _mm256_sub_ps(t, magic);
    let k = _mm256_sub_epi32(
        _mm256_castps_si256(t),
        _mm256_set1_epi32(MAGIC_F32.to_bits() as i32),
    );
    let r_hi = _mm256_fnmadd_ps(kf, _mm256_set1_ps(LN2_HI_F32), x);
    let r_lo = _mm256_fnmadd_ps(kf, _mm256_set1_ps(LN2_LO_F32), xl);
    let r = _mm256_add_ps(r_hi, r_lo);
    let r_err = _mm256_sub_ps(r_lo, _mm256_sub_ps(r, r_hi));
    let r2 = _mm256_mul_ps(r, r);
    let mut q = _mm256_set1_ps(EXP_F32[EXP_F32.len() - 1]);
    for &c in EXP_F32[..EXP_F32.len() - 1].iter().rev() {
        q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(c));
    }
    let p = _mm256_fmadd_ps(r2, q, _mm256_fmadd_ps(r_err, r, r_err));
    let s = _mm256_add_ps(one, r);
    let e = _mm256_add_ps(_mm256_sub_ps(one, s), r);
    let t = _mm256_add_ps(e, p);
    let hi = _mm256_add_ps(s, t);
    let lo = _mm256_add_ps(_mm256_sub_ps(s, hi), t);
    (k, hi, lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::simd::{SimdLevel, levels, set_thread_simd_limit};
    use crate::vmath::tests::{exhaustive_wanted, inputs_f32, mismatches32, same32, sweep_all_f32};
    use gpukit_core::math;

    /// GELU (erf form) from the scalar `erf`: the op's definition (docs/ops/norm.md).
    fn gelu_scalar(x: f32) -> f32 {
        if x == f32::NEG_INFINITY {
            return -0.0;
        }
        x * 0.5f32.mul_add(math::erf_f32(x * FRAC_1_SQRT_2_F32), 0.5)
    }

    /// The levels with an explicit loop that this CPU has.
    fn vector_levels() -> Vec<SimdLevel> {
        levels()
            .into_iter()
            .filter(|&l| l != SimdLevel::Scalar)
            .collect()
    }

    /// `f` over `xs` at `level` (this thread's limit), out of place and in place; both
    /// must run and agree.
    fn run_at(level: SimdLevel, xs: &[f32], f: fn(Option<&[f32]>, &mut [f32]) -> bool) -> Vec<f32> {
        set_thread_simd_limit(Some(level));
        let mut out = vec![0.0f32; xs.len()];
        let ran = f(Some(xs), &mut out);
        let mut inplace = xs.to_vec();
        let ran_inplace = f(None, &mut inplace);
        set_thread_simd_limit(None);
        assert!(ran && ran_inplace, "no loop at {level:?}");
        for (a, b) in out.iter().zip(&inplace) {
            assert_eq!(a.to_bits(), b.to_bits(), "in place differs at {level:?}");
        }
        out
    }

    fn check(name: &str, f: fn(Option<&[f32]>, &mut [f32]) -> bool, scalar: fn(f32) -> f32) {
        let mut xs = inputs_f32(300_000);
        // Dense over the pieces' range too (GELU's argument is x/√2).
        xs.extend((0..40_000).map(|i| i as f32 * 2.5e-4 - 5.0));
        for level in vector_levels() {
            let out = run_at(level, &xs, f);
            for (&x, &y) in xs.iter().zip(&out) {
                let w = scalar(x);
                assert!(
                    same32(y, w),
                    "{name} at {level:?}: x = {x:e} ({:#010x}): {:#010x}, scalar {:#010x}",
                    x.to_bits(),
                    y.to_bits(),
                    w.to_bits()
                );
            }
        }
    }

    #[test]
    fn erf_slice_matches_scalar_at_every_level() {
        check("erf", erf_f32_slice, math::erf_f32);
    }

    #[test]
    fn gelu_slice_matches_scalar_at_every_level() {
        check("gelu", gelu_f32_slice, gelu_scalar);
    }

    /// Every length up to a few vectors at every offset: the two-vector, one-vector and
    /// tail paths, with the memory around the output left alone.
    #[test]
    fn ragged_lengths_touch_only_their_range() {
        let xs = inputs_f32(200);
        for level in vector_levels() {
            set_thread_simd_limit(Some(level));
            for n in 0..=75 {
                for off in 0..3 {
                    let x = &xs[off * 7..off * 7 + n];
                    let mut buf = vec![f32::from_bits(0x7fc0_1234); n + 40];
                    assert!(erf_f32_slice(Some(x), &mut buf[20..20 + n]));
                    for (i, &v) in buf.iter().enumerate() {
                        if (20..20 + n).contains(&i) {
                            let w = math::erf_f32(x[i - 20]);
                            assert!(same32(v, w), "{level:?} n {n} off {off} at {i}");
                        } else {
                            assert_eq!(v.to_bits(), 0x7fc0_1234, "{level:?} n {n}: wrote {i}");
                        }
                    }
                }
            }
            set_thread_simd_limit(None);
        }
    }

    /// Below AVX2, and with a short source, the loops decline and touch nothing.
    #[test]
    fn declines_without_a_loop() {
        let xs = [0.5f32; 9];
        let mut out = [7.0f32; 10];
        assert!(!erf_f32_slice(Some(&xs), &mut out));
        assert!(out.iter().all(|&v| v == 7.0));
        set_thread_simd_limit(Some(SimdLevel::Scalar));
        let ran = gelu_f32_slice(None, &mut out);
        set_thread_simd_limit(None);
        assert!(!ran);
        assert!(out.iter().all(|&v| v == 7.0));
    }

    /// All 2^32 inputs through both loops at every level, only with
    /// `GPUKIT_VMATH_EXHAUSTIVE=1` (`GPUKIT_VMATH_EXHAUSTIVE_FNS=erf_slice,gelu_slice`).
    #[test]
    fn exhaustive_slices_when_asked() {
        type F = fn(Option<&[f32]>, &mut [f32]) -> bool;
        type S = fn(f32) -> f32;
        let fns: [(&str, F, S); 2] = [
            ("erf_slice", erf_f32_slice, math::erf_f32),
            ("gelu_slice", gelu_f32_slice, gelu_scalar),
        ];
        for (name, f, scalar) in fns {
            if !exhaustive_wanted(name) {
                continue;
            }
            let bad = sweep_all_f32(scalar, |xs, want| {
                vector_levels()
                    .into_iter()
                    .map(|level| mismatches32(&run_at(level, xs, f), want))
                    .sum()
            });
            eprintln!("exhaustive {name}: {bad} mismatches over 2^32 inputs");
            assert_eq!(bad, 0, "{name}");
        }
    }
}
