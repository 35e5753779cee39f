//! The fused attention's softmax weights of one key tile in f32, written with explicit
//! AVX-512 instructions: for every key row `j` in order and every query row `r`,
//! `p = exp(s[j][r] - m[r])` ([`super::exp_f32`], as [`super::exp_x86`]'s two-vector
//! form), `0` where `m[r] = -inf` (a row with no finite score yet), stored over the
//! score, and `l[r] = l[r] + p`: the values of the attention's scalar loop, with the
//! query rows in the lanes (32 at a time) and `m` and `l` kept in registers across the
//! key rows.
//!
//! The entry point is safe: [`attn_weights_f32`] runs at the calling thread's
//! [`simd_level`] and returns `false`, touching nothing, below AVX-512 or when the
//! slices do not have the shapes it names.

use std::arch::x86_64::*;

use super::exp_x86::{both, exp2v, masks2};
use crate::kernels::simd::{SimdLevel, simd_level};

/// The weights of `nk` key rows of the scores `st` (row `j` at `st[j*ld..j*ld+rp]`,
/// `rp = m.len()`), in place, with the denominators `l` (`rp` values) accumulated in
/// key order. `false`, touching nothing, below AVX-512, when `l` and `m` differ in
/// length, when `rp > ld`, or when `st` is too short for `nk` rows.
pub(crate) fn attn_weights_f32(
    st: &mut [f32],
    ld: usize,
    nk: usize,
    m: &[f32],
    l: &mut [f32],
) -> bool {
    let rp = m.len();
    let fits = nk == 0
        || (nk - 1)
            .checked_mul(ld)
            .and_then(|v| v.checked_add(rp))
            .is_some_and(|end| end <= st.len());
    if l.len() != rp || rp > ld || !fits || simd_level() != SimdLevel::Avx512 {
        return false;
    }
    // SAFETY: `simd_level` never exceeds what the CPU supports; row j < nk of `st`
    // spans j*ld..j*ld+rp, inside `st` (checked), and `l` has `m`'s length.
    unsafe { weights_loop(st, ld, nk, m, l) };
    true
}

/// The loop: blocks of 32 query rows (the last one masked), each over every key row.
///
/// # Safety
/// AVX-512F; `l.len() == m.len() <= ld`, and `st` holds `(nk-1)*ld + m.len()` values
/// when `nk > 0`.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn weights_loop(st: &mut [f32], ld: usize, nk: usize, m: &[f32], l: &mut [f32]) {
    let rp = m.len();
    let sp = st.as_mut_ptr();
    let mut i = 0;
    while i < rp {
        let r = rp - i;
        let [k0, k1] = masks2(r);
        // The second vector's offset, kept inside the row when its mask is empty.
        let h = (i + 16).min(rp);
        // SAFETY: the masks keep only lanes i..rp of each slice and of each score row
        // (inside `st`: the caller's guarantee); masked-off lanes are neither read nor
        // written, and every pointer stays inside (or one past) its slice.
        unsafe {
            let mv = [
                _mm512_maskz_loadu_ps(k0, m.as_ptr().add(i)),
                _mm512_maskz_loadu_ps(k1, m.as_ptr().add(h)),
            ];
            let mut lv = [
                _mm512_maskz_loadu_ps(k0, l.as_ptr().add(i)),
                _mm512_maskz_loadu_ps(k1, l.as_ptr().add(h)),
            ];
            let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
            let dead = both(|q| _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(mv[q], ninf));
            let zero = _mm512_setzero_ps();
            for j in 0..nk {
                let row = sp.add(j * ld);
                let (p0, p1) = (row.add(i), row.add(h));
                let x = if r >= 32 {
                    [_mm512_loadu_ps(p0), _mm512_loadu_ps(p1)]
                } else {
                    [_mm512_maskz_loadu_ps(k0, p0), _mm512_maskz_loadu_ps(k1, p1)]
                };
                let e = exp2v(both(|q| _mm512_sub_ps(x[q], mv[q])));
                let p = both(|q| _mm512_mask_blend_ps(dead[q], e[q], zero));
                if r >= 32 {
                    _mm512_storeu_ps(p0, p[0]);
                    _mm512_storeu_ps(p1, p[1]);
                } else {
                    _mm512_mask_storeu_ps(p0, k0, p[0]);
                    _mm512_mask_storeu_ps(p1, k1, p[1]);
                }
                lv = both(|q| _mm512_add_ps(lv[q], p[q]));
            }
            _mm512_mask_storeu_ps(l.as_mut_ptr().add(i), k0, lv[0]);
            _mm512_mask_storeu_ps(l.as_mut_ptr().add(h), k1, lv[1]);
        }
        i += 32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::simd::{detected_simd_level, set_thread_simd_limit};
    use crate::vmath::tests::{inputs_f32, same32};
    use gpukit_core::math;

    /// The attention's scalar loop.
    fn reference(st: &mut [f32], ld: usize, nk: usize, m: &[f32], l: &mut [f32]) {
        for j in 0..nk {
            for (r, (&mr, a)) in m.iter().zip(l.iter_mut()).enumerate() {
                let s = &mut st[j * ld + r];
                let e = math::exp_f32(*s - mr);
                let p = if mr == f32::NEG_INFINITY { 0.0 } else { e };
                *s = p;
                *a += p;
            }
        }
    }

    /// Every row count up to 70 (full and masked blocks), a few key counts and row
    /// strides, scores from specials and random bits, maxima including `-inf`, NaN and
    /// values above the scores; the memory past each row is left alone.
    #[test]
    fn weights_match_the_scalar_loop() {
        if detected_simd_level() != SimdLevel::Avx512 {
            return;
        }
        let vals = inputs_f32(20_000);
        let mut at = 0;
        let mut next = |n: usize| {
            let v: Vec<f32> = (0..n).map(|k| vals[(at + k) % vals.len()]).collect();
            at += n;
            v
        };
        for rp in 0..=70 {
            for (nk, pad) in [(0, 0), (1, 3), (5, 0), (17, 9)] {
                let ld = rp + pad;
                let mut m = next(rp);
                if rp > 2 {
                    m[0] = f32::NEG_INFINITY;
                    m[1] = f32::NAN;
                    m[2] = f32::INFINITY;
                }
                let l0: Vec<f32> = next(rp).iter().map(|v| v.abs().min(1e3)).collect();
                let st0 = {
                    let mut s = next(nk * ld + 7);
                    // Scores near their maxima as well, where the weights are not 0.
                    for j in 0..nk {
                        for r in 0..rp.min(40) {
                            if r % 3 == 0 && m[r].is_finite() {
                                s[j * ld + r] = m[r] - (r as f32) * 0.37;
                            }
                        }
                    }
                    s
                };
                let (mut st, mut l) = (st0.clone(), l0.clone());
                let (mut sw, mut lw) = (st0.clone(), l0.clone());
                assert!(attn_weights_f32(&mut st, ld, nk, &m, &mut l));
                reference(&mut sw, ld, nk, &m, &mut lw);
                for (k, (a, b)) in st.iter().zip(&sw).enumerate() {
                    assert!(same32(*a, *b), "rp {rp} nk {nk} st[{k}]: {a:e} vs {b:e}");
                }
                for (k, (a, b)) in l.iter().zip(&lw).enumerate() {
                    assert!(same32(*a, *b), "rp {rp} nk {nk} l[{k}]: {a:e} vs {b:e}");
                }
            }
        }
    }

    /// Bad shapes and levels below AVX-512 decline and touch nothing.
    #[test]
    fn declines_and_touches_nothing() {
        let m = [0.0f32; 8];
        let mut l = [1.0f32; 8];
        let mut st = [2.0f32; 30];
        assert!(!attn_weights_f32(&mut st, 8, 4, &m, &mut l)); // needs 32 values
        assert!(!attn_weights_f32(&mut st, 4, 2, &m, &mut l)); // rp > ld
        assert!(!attn_weights_f32(&mut st, 8, 1, &m, &mut l[..7])); // l too short
        for level in [SimdLevel::Scalar, SimdLevel::Avx2] {
            set_thread_simd_limit(Some(level));
            let ran = attn_weights_f32(&mut st, 8, 1, &m, &mut l);
            set_thread_simd_limit(None);
            assert!(!ran);
        }
        assert!(st.iter().all(|&v| v == 2.0) && l.iter().all(|&v| v == 1.0));
    }
}
