//! Lane forms of gpukit's portable math: the exact operation sequence of
//! [`gpukit_core::math`], written without branches so that a loop over a slice
//! compiles to SIMD code.
//!
//! Each function here returns the same bits as its [`gpukit_core::math`] twin for
//! every input (the tests check this over random bit patterns, every special and
//! every branch boundary, and exhaustively over all 2^32 f32 inputs with
//! `GPUKIT_VMATH_EXHAUSTIVE=1`). The rewrite is purely structural:
//!
//! * a branch of the scalar algorithm becomes a *select* between fully computed
//!   paths (`if c { a } else { b }` on plain values, which LLVM turns into a vector
//!   blend); every path is computed on an input clamped into that path's domain, so
//!   the discarded lanes cost time but never change a kept lane;
//! * integer steps (the exponent `k`) are computed from the bit pattern instead of a
//!   float-to-int conversion: `k = bits(x·log2e + 1.5·2^23) − bits(1.5·2^23)` is the
//!   same integer as `(t − 1.5·2^23) as i32`, without the saturating conversion that
//!   blocks vectorisation;
//! * every floating-point operation of the scalar path is kept, in the same order,
//!   with the same fused multiply-adds; Rust never contracts or reassociates.
//!
//! A kernel calls these inside a [`dispatch`](crate::kernels::simd) closure, in a
//! plain loop over its elements: the closure is compiled for the detected
//! instruction set, so the loop becomes 16 (AVX-512) or 8 (AVX2) f32 lanes per
//! instruction, and remains the scalar algorithm at the scalar level.
//!
//! [`LaneMath`] exposes the functions generically over the compute type, so a kernel
//! written for `T::Real` gets the lane form for both f32 and f64.

use gpukit_core::numeric::Real;

/// The lane forms, generically over the compute type (f32 or f64).
///
/// Each method returns exactly the bits of the [`Real`] method of the same name
/// (gpukit's portable function), but is branch-free so that loops vectorise.
pub trait LaneMath: Real {
    /// [`Real::exp`] in lane form.
    fn exp_l(self) -> Self;
}

impl LaneMath for f32 {
    #[inline(always)]
    fn exp_l(self) -> f32 {
        exp_f32(self)
    }
}

impl LaneMath for f64 {
    #[inline(always)]
    fn exp_l(self) -> f64 {
        exp_f64(self)
    }
}

// ---------------------------------------------------------------------------------------
// Helpers: selects and exponent construction.
// ---------------------------------------------------------------------------------------

/// `if m { a } else { b }` on values (a vector blend once vectorised).
#[inline(always)]
fn sel32(m: bool, a: f32, b: f32) -> f32 {
    if m { a } else { b }
}

/// `if m { a } else { b }` on values (a vector blend once vectorised).
#[inline(always)]
fn sel64(m: bool, a: f64, b: f64) -> f64 {
    if m { a } else { b }
}

/// `if m { a } else { b }` on integers.
#[inline(always)]
fn seli(m: bool, a: i32, b: i32) -> i32 {
    if m { a } else { b }
}

/// `if m { a } else { b }` on integers.
#[inline(always)]
fn seli64(m: bool, a: i64, b: i64) -> i64 {
    if m { a } else { b }
}

/// `2^k` from the bit pattern; exact for `-126 <= k <= 127`, garbage (never UB)
/// outside, where the caller discards it.
#[inline(always)]
fn pow2i_f32(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) as u32) << 23)
}

/// `2^k` from the bit pattern; exact for `-1022 <= k <= 1023`.
#[inline(always)]
fn pow2i_f64(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) as u64) << 52)
}

/// 1.5 * 2^23.
const MAGIC_F32: f32 = 12582912.0;
/// 1.5 * 2^52.
const MAGIC_F64: f64 = 6755399441055744.0;
const LOG2E_F32: f32 = std::f32::consts::LOG2_E;
const LOG2E_F64: f64 = std::f64::consts::LOG2_E;
const LN2_HI_F32: f32 = std::f32::consts::LN_2;
const LN2_LO_F32: f32 = -1.9046542e-09;
const LN2_HI_F64: f64 = std::f64::consts::LN_2;
const LN2_LO_F64: f64 = 2.3190468138462996e-17;

/// Same coefficients as `gpukit_core::math` (checked by the bit-equality tests).
const EXP_F32: [f32; 5] = [
    4.9999994e-01,
    1.666652e-01,
    4.1668408e-02,
    8.368919e-03,
    1.3814181e-03,
];
const EXP_F64: [f64; 11] = [
    0.5,
    0.16666666666666685,
    0.041666666666666075,
    0.008333333333316659,
    0.0013888888889120867,
    0.00019841269897333459,
    2.480158692014383e-05,
    2.7557233895001537e-06,
    2.755758487694327e-07,
    2.5112379548377275e-08,
    2.0826336017154413e-09,
];

#[inline(always)]
fn horner_f32(x: f32, c: &[f32]) -> f32 {
    let mut acc = c[c.len() - 1];
    let mut i = c.len() - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

#[inline(always)]
fn horner_f64(x: f64, c: &[f64]) -> f64 {
    let mut acc = c[c.len() - 1];
    let mut i = c.len() - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

// ---------------------------------------------------------------------------------------
// exp kernel and scaling.
// ---------------------------------------------------------------------------------------

/// The scalar `exp_kernel_f32` in lane form: `(k, hi, lo)` with
/// `exp(x + xl) ~= 2^k (hi + lo)`. Same operations; `k` from the bit pattern.
#[inline(always)]
pub(crate) fn exp_kernel_f32(x: f32, xl: f32) -> (i32, f32, f32) {
    let t = x.mul_add(LOG2E_F32, MAGIC_F32);
    let kf = t - MAGIC_F32;
    let k = (t.to_bits() as i32).wrapping_sub(MAGIC_F32.to_bits() as i32);
    let r_hi = (-kf).mul_add(LN2_HI_F32, x);
    let r_lo = (-kf).mul_add(LN2_LO_F32, xl);
    // two_sum(r_hi, r_lo)
    let r = r_hi + r_lo;
    let bb = r - r_hi;
    let aa = r - bb;
    let r_err = (r_hi - aa) + (r_lo - bb);
    let r2 = r * r;
    let q = horner_f32(r, &EXP_F32);
    let p = r2.mul_add(q, r_err.mul_add(r, r_err));
    let s = 1.0 + r;
    let e = (1.0 - s) + r;
    let t = e + p;
    let hi = s + t;
    (k, hi, (s - hi) + t)
}

/// The scalar `exp_kernel_f64` in lane form.
#[inline(always)]
pub(crate) fn exp_kernel_f64(x: f64, xl: f64) -> (i64, f64, f64) {
    let t = x.mul_add(LOG2E_F64, MAGIC_F64);
    let kf = t - MAGIC_F64;
    let k = (t.to_bits() as i64).wrapping_sub(MAGIC_F64.to_bits() as i64);
    let r_hi = (-kf).mul_add(LN2_HI_F64, x);
    let r_lo = (-kf).mul_add(LN2_LO_F64, xl);
    let r = r_hi + r_lo;
    let bb = r - r_hi;
    let aa = r - bb;
    let r_err = (r_hi - aa) + (r_lo - bb);
    let r2 = r * r;
    let q = horner_f64(r, &EXP_F64);
    let p = r2.mul_add(q, r_err.mul_add(r, r_err));
    let s = 1.0 + r;
    let e = (1.0 - s) + r;
    let t = e + p;
    let hi = s + t;
    (k, hi, (s - hi) + t)
}

/// The scalar `scale_f32(y, k)`: the three cases computed as one path with selected
/// factors (each case's operations unchanged).
#[inline(always)]
pub(crate) fn scale_f32(y: f32, k: i32) -> f32 {
    let big = k > 127;
    let small = k < -126;
    let k1 = seli(big, k.wrapping_sub(1), seli(small, k.wrapping_add(64), k));
    let m = y * pow2i_f32(k1);
    sel32(big, m * 2.0, sel32(small, m * pow2i_f32(-64), m))
}

/// The scalar `scale_f64(y, k)` in lane form.
#[inline(always)]
pub(crate) fn scale_f64(y: f64, k: i64) -> f64 {
    let big = k > 1023;
    let small = k < -1022;
    let k1 = seli64(
        big,
        k.wrapping_sub(1),
        seli64(small, k.wrapping_add(512), k),
    );
    let m = y * pow2i_f64(k1);
    sel64(big, m * 2.0, sel64(small, m * pow2i_f64(-512), m))
}

// ---------------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::exp_f32`] in lane form (same bits for every input).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let hi_lim = f32::from_bits(0x42b1_7217);
    let lo_lim = f32::from_bits(0xc2cf_f1b4);
    let over = x > hi_lim;
    let under = x < lo_lim;
    let nan = x.is_nan();
    // The kernel's domain; other lanes compute on a harmless stand-in.
    let xc = sel32(over | under | nan, 0.0, x);
    let (k, hi, lo) = exp_kernel_f32(xc, 0.0);
    let r = scale_f32(hi + lo, k);
    let r = sel32(over, f32::INFINITY, sel32(under, 0.0, r));
    sel32(nan, x, r)
}

/// [`gpukit_core::math::exp_f64`] in lane form (same bits for every input).
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let hi_lim = f64::from_bits(0x4086_2e42_fefa_39ef);
    let lo_lim = f64::from_bits(0xc087_4910_d52d_3051);
    let over = x > hi_lim;
    let under = x < lo_lim;
    let nan = x.is_nan();
    let xc = sel64(over | under | nan, 0.0, x);
    let (k, hi, lo) = exp_kernel_f64(xc, 0.0);
    let r = scale_f64(hi + lo, k);
    let r = sel64(over, f64::INFINITY, sel64(under, 0.0, r));
    sel64(nan, x, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit_core::math;

    /// Inputs: specials, boundaries with neighbours, random bit patterns.
    pub(super) fn inputs_f32(random: usize) -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
        ];
        let bounds: [f32; 16] = [
            f32::from_bits(0x42b1_7217),
            f32::from_bits(0xc2cf_f1b4),
            -87.33655,
            -103.27893,
            0.5625,
            9.5,
            18.0,
            -24.0,
            0.875,
            1.5,
            2.5,
            3.25,
            4.0,
            0.34657359,
            88.0,
            -88.0,
        ];
        for b in bounds {
            for d in -8i32..=8 {
                for s in [b, -b] {
                    v.push(f32::from_bits((s.to_bits() as i32).wrapping_add(d) as u32));
                }
            }
        }
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..random {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(if i % 2 == 0 {
                f32::from_bits(s as u32)
            } else {
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 240.0 - 120.0
            });
        }
        v
    }

    pub(super) fn inputs_f64(random: usize) -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::from_bits(1),
            f64::from_bits(0x8000_0000_0000_0001),
        ];
        let bounds: [f64; 14] = [
            f64::from_bits(0x4086_2e42_fefa_39ef),
            f64::from_bits(0xc087_4910_d52d_3051),
            -708.3964185322641,
            -745.0,
            0.5625,
            22.0,
            40.0,
            -45.0,
            0.875,
            1.5,
            2.5,
            3.5,
            4.5,
            6.0,
        ];
        for b in bounds {
            for d in -4i64..=4 {
                for s in [b, -b] {
                    v.push(f64::from_bits((s.to_bits() as i64).wrapping_add(d) as u64));
                }
            }
        }
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for i in 0..random {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(if i % 2 == 0 {
                f64::from_bits(s)
            } else {
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 1600.0 - 800.0
            });
        }
        v
    }

    pub(super) fn same32(a: f32, b: f32) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    pub(super) fn same64(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }

    /// Every input through the lane form, in a loop compiled at every SIMD level the
    /// CPU has, against the scalar function.
    pub(super) fn check32(name: &str, lane: impl Fn(f32) -> f32 + Copy, scalar: fn(f32) -> f32) {
        let xs = inputs_f32(200_000);
        for level in crate::kernels::simd::levels() {
            let mut out = xs.clone();
            crate::kernels::simd::run_at(
                level,
                #[inline(always)]
                || {
                    for v in out.iter_mut() {
                        *v = lane(*v);
                    }
                },
            );
            for (&x, &y) in xs.iter().zip(&out) {
                let want = scalar(x);
                assert!(
                    same32(y, want),
                    "{name} f32 at {level:?}: x = {x:e} ({:#010x}): lane {y:e} ({:#010x}), scalar {want:e} ({:#010x})",
                    x.to_bits(),
                    y.to_bits(),
                    want.to_bits()
                );
            }
        }
    }

    pub(super) fn check64(name: &str, lane: impl Fn(f64) -> f64 + Copy, scalar: fn(f64) -> f64) {
        let xs = inputs_f64(100_000);
        for level in crate::kernels::simd::levels() {
            let mut out = xs.clone();
            crate::kernels::simd::run_at(
                level,
                #[inline(always)]
                || {
                    for v in out.iter_mut() {
                        *v = lane(*v);
                    }
                },
            );
            for (&x, &y) in xs.iter().zip(&out) {
                let want = scalar(x);
                assert!(
                    same64(y, want),
                    "{name} f64 at {level:?}: x = {x:e} ({:#018x}): lane {y:e}, scalar {want:e}",
                    x.to_bits()
                );
            }
        }
    }

    #[test]
    fn exp_lane_matches_scalar() {
        check32("exp", exp_f32, math::exp_f32);
        check64("exp", exp_f64, math::exp_f64);
    }
}
