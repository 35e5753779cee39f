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

// The constants and coefficient tables are gpukit_core::math's own: one copy of the
// contract's numbers.
use gpukit_core::math::{
    EXP_F32, EXP_F64, LN2_HI_F32, LN2_HI_F64, LN2_LO_F32, LN2_LO_F64, LOG2E_F32, LOG2E_F64,
    MAGIC_F32, MAGIC_F64, horner_f32, horner_f64,
};
use gpukit_core::numeric::Real;
use gpukit_core::reduce::LANES;

#[cfg(target_arch = "x86_64")]
mod erf_x86;
#[cfg(target_arch = "x86_64")]
mod exp_x86;
mod funcs;
#[cfg(target_arch = "x86_64")]
mod logistic_x86;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(target_arch = "x86_64")]
mod weights_x86;

pub use funcs::{erf_f32, erf_f64, log_f32, log_f64, sigmoid_f32, sigmoid_f64, tanh_f32, tanh_f64};

/// The lane forms, generically over the compute type (f32 or f64).
///
/// Each method returns exactly the bits of the [`Real`] method of the same name
/// (gpukit's portable function), but is branch-free so that loops vectorise.
pub trait LaneMath: Real {
    /// `if m { a } else { b }` on values (a vector blend once vectorised).
    fn select(m: bool, a: Self, b: Self) -> Self;
    /// [`Real::exp`] in lane form.
    fn exp_l(self) -> Self;
    /// [`Real::log`] in lane form.
    fn log_l(self) -> Self;
    /// [`Real::tanh`] in lane form.
    fn tanh_l(self) -> Self;
    /// [`Real::sigmoid`] in lane form.
    fn sigmoid_l(self) -> Self;
    /// [`Real::erf`] in lane form.
    fn erf_l(self) -> Self;
    /// `out[i] = op(src[i])` (`src` `None`: in place) with an explicit-SIMD loop, where
    /// this type and the calling thread's SIMD level have one (f32: erf and GELU at AVX2
    /// or AVX-512, tanh, sigmoid and exp at AVX-512): the bits of the lane form
    /// ([`LaneMath::erf_l`], [`LaneMath::gelu_l`], [`LaneMath::tanh_l`],
    /// [`LaneMath::sigmoid_l`], [`LaneMath::exp_l`]). Returns `false`, touching nothing, where there is none
    /// (the caller then loops over the lane form) or `src` is shorter than `out`.
    fn slice(op: SliceOp, src: Option<&[Self]>, out: &mut [Self]) -> bool;
    /// Softmax's exp-and-sum pass over one chunk with an explicit-SIMD loop, where this
    /// type and the calling thread's SIMD level have one (f32 at AVX-512):
    /// `e_j = exp(x_j - m)` ([`LaneMath::exp_l`]) for the input `x` (`src`, or `e`
    /// itself in place when `None`), each added to `acc[j % 32]` in order of `j`.
    /// Returns `false`, touching nothing, where there is none (the caller then runs the
    /// lane form) or `src` is shorter than `e`.
    fn exp_sum(m: Self, src: Option<&[Self]>, e: &mut [Self], acc: &mut [Self; LANES]) -> bool;
    /// One step of softmax's software-pipelined rows with an explicit-SIMD loop, where
    /// this type and the calling thread's SIMD level have one (f32 at AVX-512): in one
    /// loop over the row, [`LaneMath::exp_sum`] of `step.x` into `step.e` and
    /// `step.acc`, and the previous row's division `out_j = prev_j / s` (`step.div`).
    /// Returns `false`, touching nothing, where there is no such loop or the slices'
    /// lengths differ from `step.e`'s.
    fn softmax_step(step: SoftmaxStep<'_, Self>) -> bool;
    /// The maximum softmax subtracts from a row with an explicit-SIMD loop, where this
    /// type and the calling thread's SIMD level have one (f32 at AVX-512): the
    /// `max_nan` fold's value up to the sign of a zero, a NaN where the row has one,
    /// `-inf` when empty. `None` where there is no such loop.
    fn row_max(x: &[Self]) -> Option<Self>;
    /// The fused attention's softmax weights of one key tile with an explicit-SIMD
    /// loop, where this type and the calling thread's SIMD level have one (f32 at
    /// AVX-512): for key rows `j < nk` of `st` in order (row `j` at
    /// `st[j*ld..j*ld + m.len()]`) and every query row `r`,
    /// `p = exp(st[j][r] - m[r])` ([`LaneMath::exp_l`]), `0` where `m[r]` is `-inf`,
    /// written over the score, and `l[r] = l[r] + p`. Returns `false`, touching
    /// nothing, where there is no such loop, `l` and `m` differ in length, `m` is longer
    /// than `ld`, or `st` is too short.
    fn attn_weights(st: &mut [Self], ld: usize, nk: usize, m: &[Self], l: &mut [Self]) -> bool;
    /// [`Real::sin`] in lane form (f32: the scalar function itself, which is
    /// branch-free; f64: the scalar function, one element at a time).
    fn sin_l(self) -> Self;
    /// [`Real::cos`] in lane form (as [`LaneMath::sin_l`]).
    fn cos_l(self) -> Self;

    /// [`gpukit_core::numeric::max_nan`] as selects (same result, vectorises).
    #[inline(always)]
    fn max_nan_l(self, b: Self) -> Self {
        let a = self;
        let eq = Self::select(a.is_sign_negative(), b, a);
        let r = Self::select(b > a, b, eq);
        let r = Self::select(a > b, a, r);
        let r = Self::select(b.is_nan(), b, r);
        Self::select(a.is_nan(), a, r)
    }

    /// [`gpukit_core::numeric::silu`] in lane form: `x * sigmoid(x)`, `-inf` gives
    /// `-0.0`.
    #[inline(always)]
    fn silu_l(self) -> Self {
        let y = self * self.sigmoid_l();
        Self::select(self == Self::NEG_INFINITY, -Self::ZERO, y)
    }

    /// [`gpukit_core::numeric::softplus`] in lane form: both branches of `log1p(u)`
    /// computed (the `w == 1` lanes' `log(1) * (u / 0)` is discarded), then selected.
    #[inline(always)]
    fn softplus_l(self) -> Self {
        let x = self;
        let u = (-x.abs()).exp_l();
        let w = Self::ONE + u;
        let l = Self::select(w == Self::ONE, u, w.log_l() * (u / (w - Self::ONE)));
        let r = Self::select(x > Self::ZERO, x + l, l);
        Self::select(x.is_nan(), x, r)
    }

    /// GELU, erf form (the `gelu` op): `x * fma(0.5, erf(x * R(1/sqrt 2)), 0.5)`,
    /// `-inf` gives `-0.0`.
    #[inline(always)]
    fn gelu_l(self) -> Self {
        let half = Self::from_f64(0.5);
        let e = (self * Self::from_f64(std::f64::consts::FRAC_1_SQRT_2)).erf_l();
        let y = self * half.fma(e, half);
        Self::select(self == Self::NEG_INFINITY, -Self::ZERO, y)
    }

    /// GELU, tanh form (the `gelu_tanh` op): `u = R(sqrt(2/pi)) * fma(R(0.044715),
    /// (x*x)*x, x)`, `x * fma(0.5, tanh(u), 0.5)`; `-inf` gives `-0.0`.
    #[inline(always)]
    fn gelu_tanh_l(self) -> Self {
        let half = Self::from_f64(0.5);
        let c = Self::from_f64((2.0 / std::f64::consts::PI).sqrt());
        let k = Self::from_f64(0.044715);
        let u = c * k.fma((self * self) * self, self);
        let y = self * half.fma(u.tanh_l(), half);
        Self::select(self == Self::NEG_INFINITY, -Self::ZERO, y)
    }
}

macro_rules! lane_math {
    ($t:ty, $sel:ident, $exp:ident, $log:ident, $tanh:ident, $sig:ident, $erf:ident, $sin:path, $cos:path,
     $slice:path, $exp_sum:path, $softmax_step:path, $row_max:path, $weights:path) => {
        impl LaneMath for $t {
            #[inline(always)]
            fn select(m: bool, a: $t, b: $t) -> $t {
                $sel(m, a, b)
            }
            #[inline(always)]
            fn exp_l(self) -> $t {
                $exp(self)
            }
            #[inline(always)]
            fn log_l(self) -> $t {
                $log(self)
            }
            #[inline(always)]
            fn tanh_l(self) -> $t {
                $tanh(self)
            }
            #[inline(always)]
            fn sigmoid_l(self) -> $t {
                $sig(self)
            }
            #[inline(always)]
            fn erf_l(self) -> $t {
                $erf(self)
            }
            #[inline(always)]
            fn slice(op: SliceOp, src: Option<&[$t]>, out: &mut [$t]) -> bool {
                $slice(op, src, out)
            }
            #[inline(always)]
            fn exp_sum(m: $t, src: Option<&[$t]>, e: &mut [$t], acc: &mut [$t; LANES]) -> bool {
                $exp_sum(m, src, e, acc)
            }
            #[inline(always)]
            fn softmax_step(step: SoftmaxStep<'_, $t>) -> bool {
                $softmax_step(step)
            }
            #[inline(always)]
            fn row_max(x: &[$t]) -> Option<$t> {
                $row_max(x)
            }
            #[inline(always)]
            fn attn_weights(st: &mut [$t], ld: usize, nk: usize, m: &[$t], l: &mut [$t]) -> bool {
                $weights(st, ld, nk, m, l)
            }
            #[inline(always)]
            fn sin_l(self) -> $t {
                $sin(self)
            }
            #[inline(always)]
            fn cos_l(self) -> $t {
                $cos(self)
            }
        }
    };
}

lane_math!(
    f32,
    sel32,
    exp_f32,
    log_f32,
    tanh_f32,
    sigmoid_f32,
    erf_f32,
    gpukit_core::math::sin_f32,
    gpukit_core::math::cos_f32,
    slice_f32,
    exp_sum_f32,
    softmax_step_f32,
    row_max_f32,
    attn_weights_f32
);
lane_math!(
    f64,
    sel64,
    exp_f64,
    log_f64,
    tanh_f64,
    sigmoid_f64,
    erf_f64,
    gpukit_core::math::sin_f64,
    gpukit_core::math::cos_f64,
    no_slice,
    no_exp_sum,
    no_softmax_step,
    no_row_max,
    no_attn_weights
);

/// A function with an explicit-SIMD slice loop ([`LaneMath::slice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceOp {
    /// `erf`.
    Erf,
    /// GELU, erf form.
    Gelu,
    /// `tanh`.
    Tanh,
    /// `sigmoid`.
    Sigmoid,
    /// `exp`.
    Exp,
}

/// The explicit-SIMD loops of f32 slices (x86-64; `false` elsewhere).
#[inline(always)]
fn slice_f32(op: SliceOp, src: Option<&[f32]>, out: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return match op {
        SliceOp::Erf => erf_x86::erf_f32_slice(src, out),
        SliceOp::Gelu => erf_x86::gelu_f32_slice(src, out),
        SliceOp::Tanh => logistic_x86::tanh_f32_slice(src, out),
        SliceOp::Sigmoid => logistic_x86::sigmoid_f32_slice(src, out),
        SliceOp::Exp => exp_x86::exp_f32_slice(src, out),
    };
    #[cfg(not(target_arch = "x86_64"))]
    return no_slice(op, src, out);
}

/// Softmax's explicit-SIMD exp-and-sum loop for f32 (x86-64; `false` elsewhere).
#[inline(always)]
fn exp_sum_f32(m: f32, src: Option<&[f32]>, e: &mut [f32], acc: &mut [f32; LANES]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return exp_x86::exp_sum_f32(m, src, e, acc);
    #[cfg(not(target_arch = "x86_64"))]
    return no_exp_sum(m, src, e, acc);
}

/// One step of softmax's pipelined rows ([`LaneMath::softmax_step`]): the row `x`
/// (maximum `m`) into its exps `e` and lane sums `acc`, with the previous row's
/// division in the same loop.
pub struct SoftmaxStep<'a, T> {
    /// This row's maximum.
    pub m: T,
    /// This row's input.
    pub x: &'a [T],
    /// This row's `exp(x_j - m)`, written.
    pub e: &'a mut [T],
    /// The reduction shape's 32 lanes, each `e_j` added to lane `j % 32`.
    pub acc: &'a mut [T; LANES],
    /// The previous row's exps, their sum `s`, and its output: `out_j = prev_j / s`.
    pub div: Option<(&'a [T], T, &'a mut [T])>,
}

/// Softmax's explicit-SIMD pipelined step for f32 (x86-64; `false` elsewhere).
#[inline(always)]
fn softmax_step_f32(step: SoftmaxStep<'_, f32>) -> bool {
    #[cfg(target_arch = "x86_64")]
    return exp_x86::softmax_step_f32(step);
    #[cfg(not(target_arch = "x86_64"))]
    return no_softmax_step(step);
}

/// No explicit-SIMD pipelined softmax step for this type.
#[inline(always)]
fn no_softmax_step<T>(_step: SoftmaxStep<'_, T>) -> bool {
    false
}

/// Softmax's explicit-SIMD row maximum for f32 (x86-64; `None` elsewhere).
#[inline(always)]
fn row_max_f32(x: &[f32]) -> Option<f32> {
    #[cfg(target_arch = "x86_64")]
    return exp_x86::max_f32(x);
    #[cfg(not(target_arch = "x86_64"))]
    return no_row_max(x);
}

/// The fused attention's explicit-SIMD weights for f32 ([`LaneMath::attn_weights`];
/// x86-64, `false` elsewhere).
#[inline(always)]
fn attn_weights_f32(st: &mut [f32], ld: usize, nk: usize, m: &[f32], l: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    return weights_x86::attn_weights_f32(st, ld, nk, m, l);
    #[cfg(not(target_arch = "x86_64"))]
    return no_attn_weights(st, ld, nk, m, l);
}

/// No explicit-SIMD attention weights for this type.
#[inline(always)]
fn no_attn_weights<T>(_st: &mut [T], _ld: usize, _nk: usize, _m: &[T], _l: &mut [T]) -> bool {
    false
}

/// No explicit-SIMD row maximum for this type.
#[inline(always)]
fn no_row_max<T>(_x: &[T]) -> Option<T> {
    None
}

/// No explicit-SIMD exp-and-sum loop for this type: the caller runs the lane form.
#[inline(always)]
fn no_exp_sum<T>(_m: T, _src: Option<&[T]>, _e: &mut [T], _acc: &mut [T; LANES]) -> bool {
    false
}

/// No explicit-SIMD loop for this type: the caller runs the lane form.
#[inline(always)]
fn no_slice<T>(_op: SliceOp, _src: Option<&[T]>, _out: &mut [T]) -> bool {
    false
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

/// `(a + b, the exact error)` when `a`'s exponent is at least `b`'s (Fast2Sum; the
/// same pair as the scalar `two_sum` in that case).
#[inline(always)]
fn fast_two_sum_f32(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    (s, b - (s - a))
}

/// `(a + b, the exact error)` when `a`'s exponent is at least `b`'s (Fast2Sum).
#[inline(always)]
fn fast_two_sum_f64(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
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
    // The scalar two_sum(r_hi, r_lo) as Fast2Sum, three operations instead of six and
    // the same exact pair (r, r_err). Fast2Sum(a, b) is exact when |a| >= |b|, and
    // also when a is a multiple of b's last bit (then a + b, s - a and b - z are all
    // on b's grid and fit). Here r_hi is a multiple of 2^-26 (when k != 0, |x| > 0.34
    // is a multiple of 2^-25 and k*LN2_HI of 2^-24; when k == 0, r_hi = x and r_lo =
    // xl, |xl| <= |x|), and |r_lo| <= 2^-20 has its last bit at or below 2^-43.
    let (r, r_err) = fast_two_sum_f32(r_hi, r_lo);
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
    // Fast2Sum, exact as in exp_kernel_f32: r_hi is a multiple of 2^-55 (k != 0:
    // |x| > 0.34, and LN2_HI's last bit is 2^-53), and either |r_hi| >= |r_lo| or
    // r_hi is a multiple of r_lo's last bit (|r_lo| <= 2^-40 has it below 2^-92).
    let (r, r_err) = fast_two_sum_f64(r_hi, r_lo);
    let r2 = r * r;
    let q = horner_f64(r, &EXP_F64);
    let p = r2.mul_add(q, r_err.mul_add(r, r_err));
    let s = 1.0 + r;
    let e = (1.0 - s) + r;
    let t = e + p;
    let hi = s + t;
    (k, hi, (s - hi) + t)
}

/// The scalar `scale_f32(y, k)`: `y * 2^k` rounded once (only when the result is
/// subnormal), with correct overflow. Every case of the scalar function gives the
/// correctly rounded product, so any correctly rounded evaluation returns its bits;
/// here `(y * 2^(k>>1)) * 2^(k - (k>>1))`: both factors are normal for `|k| <= 252`,
/// the first product is exact (`y` is near 1) and the second rounds once. Eight
/// operations instead of the three cases' compares and selects.
#[inline(always)]
pub(crate) fn scale_f32(y: f32, k: i32) -> f32 {
    let k1 = k >> 1;
    (y * pow2i_f32(k1)) * pow2i_f32(k.wrapping_sub(k1))
}

/// The scalar `scale_f64(y, k)` in lane form, as [`scale_f32`] (both factors normal
/// for `|k| <= 2044`).
#[inline(always)]
pub(crate) fn scale_f64(y: f64, k: i64) -> f64 {
    let k1 = k >> 1;
    (y * pow2i_f64(k1)) * pow2i_f64(k.wrapping_sub(k1))
}

// ---------------------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::exp_f32`] in lane form (same bits for every input).
#[inline(always)]
///
/// Two structural shortcuts, both exact: the scalar's special cases become two
/// clamps to stand-ins whose own results are the special results (`x > 88.72...`
/// is replaced by 100, whose `2^144 (hi)` overflows to `+inf`; `x < -103.97...` by
/// -104, whose `2^-150 (0.973...)` rounds to `+0`; a NaN runs through and stays NaN),
/// and `hi + lo` is `hi`: the kernel's `lo` is the exact error of `hi = RN(s + t)`
/// (Fast2Sum, `|s| > |t|`), so `RN(hi + lo) = RN(s + t) = hi`.
pub fn exp_f32(x: f32) -> f32 {
    let xc = sel32(x > f32::from_bits(0x42b1_7217), 100.0, x);
    let xc = sel32(xc < f32::from_bits(0xc2cf_f1b4), -104.0, xc);
    let (k, hi, _) = exp_kernel_f32(xc, 0.0);
    scale_f32(hi, k)
}

/// [`gpukit_core::math::exp_f64`] in lane form (same bits for every input).
#[inline(always)]
///
/// The shortcuts of [`exp_f32`]: the stand-ins are 720 (`2^1039 (hi)` overflows to
/// `+inf`) and -746 (`e^-746 = 2^-1076.25`, below half the smallest subnormal, rounds
/// to `+0`), and `hi + lo = hi`.
pub fn exp_f64(x: f64) -> f64 {
    let xc = sel64(x > f64::from_bits(0x4086_2e42_fefa_39ef), 720.0, x);
    let xc = sel64(xc < f64::from_bits(0xc087_4910_d52d_3051), -746.0, xc);
    let (k, hi, _) = exp_kernel_f64(xc, 0.0);
    scale_f64(hi, k)
}
