//! Portable, bit-reproducible transcendental functions.
//!
//! Every function in this module is a fixed sequence of correctly rounded
//! IEEE-754 operations (`+ - * /`, fused multiply-add via [`f32::mul_add`] /
//! [`f64::mul_add`], comparisons, exact conversions and bit manipulation of
//! the integer representation). No platform transcendental is ever called, so
//! the same input produces the same output bits on every IEEE-754 machine,
//! including a CUDA device running the line-by-line mirror of this file
//! (`*` -> `__fmul_rn`, `+` -> `__fadd_rn`, `/` -> `__fdiv_rn`,
//! `a.mul_add(b, c)` -> `__fmaf_rn(a, b, c)`, and the `f64` equivalents).
//!
//! * f32 functions compute in f32 only; f64 functions compute in f64 only.
//! * Subnormal inputs and outputs are handled (no flush to zero).
//! * Polynomial coefficients were derived with a Remez exchange
//!   (`tools/portable-math/`, mpmath);
//!   they are written as decimal literals that round to the intended value.
//!
//! Rust never contracts `a * b + c` into an fma, so plain `a * b + c` below
//! always means two roundings, and `a.mul_add(b, c)` always means one.

mod pow;
mod trig;
pub use pow::{
    POW_C3_HI_F32, POW_C3_HI_F64, POW_C3_LO_F32, POW_C3_LO_F64, POW_LOG_F32, POW_LOG_F64, pow_f32,
    pow_f64,
};
pub use trig::{
    COS_TAYLOR, PIO2_HI, PIO2_LO, SIN_TAYLOR, TWO_OVER_PI_26, cos_f32, cos_f64, sin_f32, sin_f64,
};

// ---------------------------------------------------------------------------
// Small helpers (each is a fixed sequence of IEEE operations).
// ---------------------------------------------------------------------------

/// Horner evaluation `c[0] + x*(c[1] + x*(c[2] + ...))`, every step one fma
/// (branch-free: the CPU's SIMD lane forms share it). `c` must not be empty.
#[inline(always)]
pub fn horner_f32(x: f32, c: &[f32]) -> f32 {
    let mut acc = c[c.len() - 1];
    let mut i = c.len() - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

/// Horner evaluation `c[0] + x*(c[1] + x*(c[2] + ...))`, every step one fma
/// (branch-free: the CPU's SIMD lane forms share it). `c` must not be empty.
#[inline(always)]
pub fn horner_f64(x: f64, c: &[f64]) -> f64 {
    let mut acc = c[c.len() - 1];
    let mut i = c.len() - 1;
    while i > 0 {
        i -= 1;
        acc = acc.mul_add(x, c[i]);
    }
    acc
}

/// `2^k` for `-126 <= k <= 127`, built from the bit pattern.
#[inline(always)]
fn pow2i_f32(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `2^k` for `-1022 <= k <= 1023`, built from the bit pattern.
#[inline(always)]
fn pow2i_f64(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `y * 2^k` for `y` in about `[0.7, 1.5]` and `-152 <= k <= 128`, with a
/// single rounding (only when the result is subnormal) and correct overflow.
#[inline(always)]
fn scale_f32(y: f32, k: i32) -> f32 {
    if k > 127 {
        (y * pow2i_f32(k - 1)) * 2.0
    } else if k < -126 {
        // First product is exact (normal), the second rounds once.
        (y * pow2i_f32(k + 64)) * pow2i_f32(-64)
    } else {
        y * pow2i_f32(k)
    }
}

/// `y * 2^k` for `y` in about `[0.7, 1.5]` and `-1077 <= k <= 1024`, with a
/// single rounding (only when the result is subnormal) and correct overflow.
#[inline(always)]
fn scale_f64(y: f64, k: i32) -> f64 {
    if k > 1023 {
        (y * pow2i_f64(k - 1)) * 2.0
    } else if k < -1022 {
        (y * pow2i_f64(k + 512)) * pow2i_f64(-512)
    } else {
        y * pow2i_f64(k)
    }
}

/// Error-free sum (Knuth TwoSum): returns `(s, e)` with `s = fl(a + b)` and
/// `a + b = s + e` exactly. No ordering requirement on `|a|`, `|b|`.
#[inline(always)]
fn two_sum_f32(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    let aa = s - bb;
    (s, (a - aa) + (b - bb))
}

/// Error-free sum (Knuth TwoSum), f64.
#[inline(always)]
fn two_sum_f64(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let aa = s - bb;
    (s, (a - aa) + (b - bb))
}

/// `copysign(m, x)` for `m >= 0` via bit manipulation.
#[inline(always)]
fn with_sign_of_f32(m: f32, x: f32) -> f32 {
    f32::from_bits(m.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// `copysign(m, x)` for `m >= 0` via bit manipulation.
#[inline(always)]
fn with_sign_of_f64(m: f64, x: f64) -> f64 {
    f64::from_bits(m.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000))
}

// ---------------------------------------------------------------------------
// Constants. Public because they are part of the contract: another evaluation of
// the same algorithms (the CPU backend's SIMD lane forms) uses these very tables.
// ---------------------------------------------------------------------------

/// 1.5 * 2^23: adding and subtracting it rounds an f32 to the nearest integer.
pub const MAGIC_F32: f32 = 12582912.0;
/// 1.5 * 2^52: adding and subtracting it rounds an f64 to the nearest integer.
pub const MAGIC_F64: f64 = 6755399441055744.0;
/// log2(e) rounded to f32.
pub const LOG2E_F32: f32 = std::f32::consts::LOG2_E; // 0x3fb8aa3b
/// log2(e) rounded to f64.
pub const LOG2E_F64: f64 = std::f64::consts::LOG2_E; // 0x3ff71547652b82fe
/// ln(2) = LN2_HI + LN2_LO (each rounded to nearest), f32.
pub const LN2_HI_F32: f32 = std::f32::consts::LN_2; // 0x3f317218
/// The low part of ln(2) (see the `LN2_HI` constant of the same type).
pub const LN2_LO_F32: f32 = -1.9046542e-09;
/// ln(2) = LN2_HI + LN2_LO (each rounded to nearest), f64.
pub const LN2_HI_F64: f64 = std::f64::consts::LN_2; // 0x3fe62e42fefa39ef
/// The low part of ln(2) (see the `LN2_HI` constant of the same type).
pub const LN2_LO_F64: f64 = 2.3190468138462996e-17;

/// exp(r) ~= 1 + r + r^2 * (c2 + c3 r + ...), |r| <= 0.3476; rel. err 2^-27.9.
pub const EXP_F32: [f32; 5] = [
    4.9999994e-01,
    1.666652e-01,
    4.1668408e-02,
    8.368919e-03,
    1.3814181e-03,
];
/// exp(r) ~= 1 + r + r^2 * (c2 + c3 r + ... + c12 r^10), |r| <= 0.3476; rel. err 2^-59.1.
pub const EXP_F64: [f64; 11] = [
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

/// 2*atanh(s) = 2s + s*R(s^2), R(z) = z*(c1 + c2 z + ...), z <= 0.02944; abs. err 2^-33.
pub const LOG_F32: [f32; 4] = [6.666667e-01, 3.9999455e-01, 2.8596687e-01, 2.2449134e-01];
/// Same as [`LOG_F32`] for f64, degree 7 in z; abs. err 2^-55.3.
pub const LOG_F64: [f64; 7] = [
    0.666666666666667,
    0.39999999999837943,
    0.2857142867034356,
    0.2222220331418622,
    0.18183442102755076,
    0.15314552370153356,
    0.1481189902828212,
];
/// Bit pattern of sqrt(1/2) rounded to f32 (mantissa split point for log).
pub const SQRT_HALF_BITS_F32: u32 = 0x3f35_04f3;
/// Bit pattern of sqrt(1/2) rounded to f64 (mantissa split point for log).
pub const SQRT_HALF_BITS_F64: u64 = 0x3fe6_a09e_667f_3bcd;

/// tanh(x) = x + x^3 P(x^2), |x| < 0.5625; rel. err 2^-30.
pub const TANH_F32: [f32; 6] = [
    -3.3333334e-01,
    1.3333496e-01,
    -5.399916e-02,
    2.2072058e-02,
    -9.3202125e-03,
    3.4215571e-03,
];
/// tanh(x) = x + x^3 P(x^2), |x| < 0.5625; rel. err 2^-57.4.
pub const TANH_F64: [f64; 12] = [
    -0.3333333333333333,
    0.13333333333333325,
    -0.0539682539682263,
    0.021869488533506187,
    -0.00886323542608321,
    0.0035921259231167643,
    -0.0014558090045235742,
    0.0005898346737543335,
    -0.00023817131176802307,
    9.377795101607166e-05,
    -3.262276100046691e-05,
    7.210481330552033e-06,
];

/// erf(x) = x + x P(x^2), |x| < 0.875; rel. err 2^-30.
pub const ERF_F32: [f32; 7] = [
    1.2837917e-01,
    -3.761263e-01,
    1.1283623e-01,
    -2.6855364e-02,
    5.190942e-03,
    -8.02644e-04,
    7.867855e-05,
];
/// erf(x) = x + x P(x^2), |x| < 0.875; rel. err 2^-55.
pub const ERF_F64: [f64; 12] = [
    0.1283791670955126,
    -0.37612638903183737,
    0.11283791670954303,
    -0.026866170644932616,
    0.005223977622956192,
    -0.000854832683944881,
    0.00012055324326256331,
    -1.492538149303576e-05,
    1.6456518624162545e-06,
    -1.628838106024303e-07,
    1.4118060884438384e-08,
    -8.655120795132252e-10,
];

// erfc(x) = exp(-x^2) * R(x - c) on pieces of [0.875, 4) (f32) / [0.875, 6) (f64).
// Listed: absolute error of erfc(x) after coefficient rounding.
/// erfc piece [0.875, 1.5), c = 1.1875, f32; 2^-27.5.
pub const ERFC_F32_0: [f32; 7] = [
    3.8130406e-01,
    -2.2278225e-01,
    1.167513e-01,
    -5.6077503e-02,
    2.5038023e-02,
    -1.08308885e-02,
    4.4855936e-03,
];
/// erfc piece [1.5, 2.5), c = 2, f32; 2^-28.
pub const ERFC_F32_1: [f32; 7] = [
    2.5539568e-01,
    -1.0679681e-01,
    4.180249e-02,
    -1.5449556e-02,
    5.441049e-03,
    -1.9176528e-03,
    6.092204e-04,
];
/// erfc piece [2.5, 4), c = 3.25, f32; 2^-27.8.
pub const ERFC_F32_2: [f32; 6] = [
    1.6633566e-01,
    -4.718985e-02,
    1.2927355e-02,
    -3.501702e-03,
    9.330823e-04,
    -1.3475954e-04,
];
/// erfc piece [0.875, 1.5), c = 1.1875, f64; 2^-56.5.
pub const ERFC_F64_0: [f64; 17] = [
    0.3813040589667179,
    -0.22278202704955757,
    0.11675040184536829,
    -0.056093949905455166,
    0.025069418166320138,
    -0.01052960633317779,
    0.0041885035485570215,
    -0.0015873595342186914,
    0.0005758785254454419,
    -0.0002007786140694846,
    6.749078294872516e-05,
    -2.1933423502801423e-05,
    6.9075036360484626e-06,
    -2.1113812956717694e-06,
    6.282385818031708e-07,
    -1.8816033954080176e-07,
    5.29113125606479e-08,
];
/// erfc piece [1.5, 2.5), c = 2, f64; 2^-55.1.
pub const ERFC_F64_1: [f64; 14] = [
    0.2553956763105059,
    -0.10679646185348925,
    0.04180275260345535,
    -0.015460637764317773,
    0.005440738542038514,
    -0.0018316642754535653,
    0.0005924698856701034,
    -0.00018477835928765998,
    5.5729567254586085e-05,
    -1.6293902499178002e-05,
    4.62085692621028e-06,
    -1.278103157956454e-06,
    3.6594445493030827e-07,
    -9.552356713897515e-08,
];
/// erfc piece [2.5, 3.5), c = 3, f64; 2^-57.7.
pub const ERFC_F64_2: [f64; 12] = [
    0.1790011511813881,
    -0.054372260007174156,
    0.01588437116040233,
    -0.004479431018354367,
    0.0012230390275883409,
    -0.00032412554205862084,
    8.355456231670083e-05,
    -2.098953004934815e-05,
    5.143184603637781e-06,
    -1.232760427051583e-06,
    3.0075190798985003e-07,
    -6.8843376298582e-08,
];
/// erfc piece [3.5, 4.5), c = 4, f64; 2^-57.2.
pub const ERFC_F64_3: [f64; 9] = [
    0.13699945762503957,
    -0.032383506074903666,
    0.0074654332438285195,
    -0.0016811831496196653,
    0.000370352624076157,
    -7.989345411986057e-05,
    1.690296902466561e-05,
    -3.59229418565175e-06,
    7.314794579833193e-07,
];
/// erfc piece [4.5, 6), c = 5.25, f64; 2^-58.6.
pub const ERFC_F64_4: [f64; 7] = [
    0.10561273548435031,
    -0.019445455771739152,
    0.0035241522926040976,
    -0.0006289438396136747,
    0.00011066013289052707,
    -1.976157401520065e-05,
    3.3777301425334852e-06,
];

// ---------------------------------------------------------------------------
// exp kernels: exp(x + xl) = 2^k * (hi + lo), |lo| <= ~ulp(hi).
// ---------------------------------------------------------------------------

/// Core of every exponential: returns `(k, hi, lo)` with
/// `exp(x + xl) ~= 2^k * (hi + lo)`, `hi` in `[0.70, 1.42]`, relative error
/// about 2^-28. Requires `|x| <= 104`, `|xl| <= 2^-20`.
#[inline(always)]
fn exp_kernel_f32(x: f32, xl: f32) -> (i32, f32, f32) {
    // k = round(x / ln2) with the add-and-subtract trick (ties to even).
    let t = x.mul_add(LOG2E_F32, MAGIC_F32);
    let kf = t - MAGIC_F32;
    let k = kf as i32;
    // Cody-Waite reduction: r_hi is exact (single rounding of an exact value
    // that fits in 24 bits), the rest is carried as an error-free pair.
    let r_hi = (-kf).mul_add(LN2_HI_F32, x);
    let r_lo = (-kf).mul_add(LN2_LO_F32, xl);
    let (r, r_err) = two_sum_f32(r_hi, r_lo);
    // exp(r + r_err) = 1 + r + r^2 q(r) + r_err (1 + r) + O(2^-50)
    let r2 = r * r;
    let q = horner_f32(r, &EXP_F32);
    let p = r2.mul_add(q, r_err.mul_add(r, r_err));
    let s = 1.0 + r;
    let e = (1.0 - s) + r; // exact: Fast2Sum with |1| >= |r|
    // Renormalise (Fast2Sum, |s| >= |t|) so that |lo| <= ulp(hi)/2.
    let t = e + p;
    let hi = s + t;
    (k, hi, (s - hi) + t)
}

/// f64 version of [`exp_kernel_f32`]; relative error about 2^-59.
/// Requires `|x| <= 746`, `|xl| <= 2^-40`.
#[inline(always)]
fn exp_kernel_f64(x: f64, xl: f64) -> (i32, f64, f64) {
    let t = x.mul_add(LOG2E_F64, MAGIC_F64);
    let kf = t - MAGIC_F64;
    let k = kf as i32;
    let r_hi = (-kf).mul_add(LN2_HI_F64, x);
    let r_lo = (-kf).mul_add(LN2_LO_F64, xl);
    let (r, r_err) = two_sum_f64(r_hi, r_lo);
    let r2 = r * r;
    let q = horner_f64(r, &EXP_F64);
    let p = r2.mul_add(q, r_err.mul_add(r, r_err));
    let s = 1.0 + r;
    let e = (1.0 - s) + r;
    let t = e + p;
    let hi = s + t;
    (k, hi, (s - hi) + t)
}

// ---------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------

/// Natural exponential `e^x` in f32 (max error < 1 ulp, gradual underflow kept).
///
/// Cody-Waite reduction `x = k ln2 + r`, `|r| <= ln2/2`, degree-6 polynomial,
/// result reconstructed as `2^k (hi + lo)`. `exp(NaN) = NaN`,
/// `exp(-inf) = +0`, `exp(+inf) = +inf`, `exp(+-0) = 1`.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    // Largest f32 whose exponential rounds below f32::MAX + ulp/2.
    if x > f32::from_bits(0x42b1_7217) {
        return f32::INFINITY;
    }
    // Below this, e^x < 2^-150 and the result rounds to +0.
    if x < f32::from_bits(0xc2cf_f1b4) {
        return 0.0;
    }
    let (k, hi, lo) = exp_kernel_f32(x, 0.0);
    scale_f32(hi + lo, k)
}

/// Natural exponential `e^x` in f64 (max error < 1 ulp, gradual underflow kept).
///
/// Cody-Waite reduction `x = k ln2 + r`, `|r| <= ln2/2`, degree-12
/// polynomial, result reconstructed as `2^k (hi + lo)`. Special values as
/// [`exp_f32`].
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > f64::from_bits(0x4086_2e42_fefa_39ef) {
        return f64::INFINITY;
    }
    if x < f64::from_bits(0xc087_4910_d52d_3051) {
        return 0.0;
    }
    let (k, hi, lo) = exp_kernel_f64(x, 0.0);
    scale_f64(hi + lo, k)
}

// ---------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------

/// Natural logarithm in f32 (max error < 1 ulp).
///
/// `x = 2^k m`, `m` in `[sqrt(1/2), sqrt(2))`, `f = m - 1`, `s = f/(2+f)`,
/// `log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2))` with a degree-4 polynomial `R`.
/// `log(NaN) = NaN`, `log(x<0) = NaN`, `log(+-0) = -inf`, `log(+inf) = +inf`;
/// subnormal inputs are supported.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    if x == f32::INFINITY {
        return x;
    }
    let mut ix = x.to_bits();
    let mut kadj: i32 = 0;
    if ix < 0x0080_0000 {
        // Subnormal: scale by 2^25 (exact).
        ix = (x * 33554432.0).to_bits();
        kadj = -25;
    }
    ix += 0x3f80_0000 - SQRT_HALF_BITS_F32;
    let k = (ix >> 23) as i32 - 127 + kadj;
    let m = f32::from_bits((ix & 0x007f_ffff) + SQRT_HALF_BITS_F32);
    let f = m - 1.0; // exact (Sterbenz)
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner_f32(z, &LOG_F32);
    let hfsq = 0.5 * f * f;
    let kf = k as f32;
    let w = s.mul_add(hfsq + r, kf * LN2_LO_F32);
    let v = hfsq - w;
    kf.mul_add(LN2_HI_F32, f - v)
}

/// Natural logarithm in f64 (max error < 1 ulp).
///
/// Same algorithm as [`log_f32`] with a degree-7 polynomial `R`.
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x == f64::INFINITY {
        return x;
    }
    let mut ix = x.to_bits();
    let mut kadj: i32 = 0;
    if ix < 0x0010_0000_0000_0000 {
        // Subnormal: scale by 2^54 (exact).
        ix = (x * 18014398509481984.0).to_bits();
        kadj = -54;
    }
    ix += 0x3ff0_0000_0000_0000 - SQRT_HALF_BITS_F64;
    let k = (ix >> 52) as i32 - 1023 + kadj;
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + SQRT_HALF_BITS_F64);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner_f64(z, &LOG_F64);
    let hfsq = 0.5 * f * f;
    let kf = k as f64;
    let w = s.mul_add(hfsq + r, kf * LN2_LO_F64);
    let v = hfsq - w;
    kf.mul_add(LN2_HI_F64, f - v)
}

// ---------------------------------------------------------------------------
// tanh
// ---------------------------------------------------------------------------

/// Hyperbolic tangent in f32 (max error < 2 ulp, odd).
///
/// `|x| < 0.5625`: `x + x^3 P(x^2)`, degree 5 in `x^2`. Otherwise
/// `1 - 2/(e^{2|x|} + 1)` in double-word arithmetic, `+-1` for `|x| >= 9.5`.
/// `tanh(NaN) = NaN`, `tanh(+-0) = +-0`, `tanh(+-inf) = +-1`.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    if a < 0.5625 {
        if a == 0.0 {
            return x;
        }
        let z = x * x;
        let p = horner_f32(z, &TANH_F32);
        return (x * z).mul_add(p, x);
    }
    if a >= 9.5 {
        return with_sign_of_f32(1.0, x);
    }
    let (k, hi, lo) = exp_kernel_f32(2.0 * a, 0.0);
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    // d = e + 1 as a double word (Fast2Sum, eh >= 1).
    let dh = eh + 1.0;
    let dl = ((eh - dh) + 1.0) + el;
    // q = 2 / d as a double word.
    let qh = 2.0 / dh;
    let rr = (-qh).mul_add(dh, 2.0) - qh * dl;
    let ql = rr / dh;
    // y = 1 - q (Fast2Sum, 1 >= qh).
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    with_sign_of_f32(yh + yl, x)
}

/// Hyperbolic tangent in f64 (max error < 2 ulp, odd).
///
/// Same algorithm as [`tanh_f32`] with a degree-11 polynomial in `x^2`,
/// `+-1` for `|x| >= 22`.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    if a < 0.5625 {
        if a == 0.0 {
            return x;
        }
        let z = x * x;
        let p = horner_f64(z, &TANH_F64);
        return (x * z).mul_add(p, x);
    }
    if a >= 22.0 {
        return with_sign_of_f64(1.0, x);
    }
    let (k, hi, lo) = exp_kernel_f64(2.0 * a, 0.0);
    let sc = pow2i_f64(k);
    let eh = hi * sc;
    let el = lo * sc;
    let dh = eh + 1.0;
    let dl = ((eh - dh) + 1.0) + el;
    let qh = 2.0 / dh;
    let rr = (-qh).mul_add(dh, 2.0) - qh * dl;
    let ql = rr / dh;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    with_sign_of_f64(yh + yl, x)
}

// ---------------------------------------------------------------------------
// sigmoid
// ---------------------------------------------------------------------------

/// Logistic sigmoid `1 / (1 + e^{-x})` in f32 (max error < 1 ulp).
///
/// With `e = e^{-|x|}` as a double word: `1/(1+e)` for `x >= 0`, `e/(1+e)`
/// for `x < 0`, each division corrected with an fma residual. `1` for
/// `x > 18`, `e^x` (via [`exp_f32`], gradual underflow) for `x < -24`.
/// `sigmoid(NaN) = NaN`, `sigmoid(-inf) = +0`, `sigmoid(+inf) = 1`.
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 18.0 {
        return 1.0;
    }
    if x < -24.0 {
        return exp_f32(x);
    }
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let (k, hi, lo) = exp_kernel_f32(-a, 0.0);
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    // d = 1 + e (Fast2Sum, 1 >= eh).
    let dh = 1.0 + eh;
    let dl = ((1.0 - dh) + eh) + el;
    let (nh, nl) = if x >= 0.0 { (1.0, 0.0) } else { (eh, el) };
    let y0 = nh / dh;
    let rr = (-y0).mul_add(dh, nh) + (nl - y0 * dl);
    y0 + rr / dh
}

/// Logistic sigmoid `1 / (1 + e^{-x})` in f64 (max error < 1 ulp).
///
/// Same algorithm as [`sigmoid_f32`]; `1` for `x > 40`, `e^x` for `x < -45`.
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 40.0 {
        return 1.0;
    }
    if x < -45.0 {
        return exp_f64(x);
    }
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    let (k, hi, lo) = exp_kernel_f64(-a, 0.0);
    let sc = pow2i_f64(k);
    let eh = hi * sc;
    let el = lo * sc;
    let dh = 1.0 + eh;
    let dl = ((1.0 - dh) + eh) + el;
    let (nh, nl) = if x >= 0.0 { (1.0, 0.0) } else { (eh, el) };
    let y0 = nh / dh;
    let rr = (-y0).mul_add(dh, nh) + (nl - y0 * dl);
    y0 + rr / dh
}

// ---------------------------------------------------------------------------
// erf
// ---------------------------------------------------------------------------

/// Error function in f32 (max error < 2 ulp, odd).
///
/// `|x| < 0.875`: `x + x P(x^2)`, degree 6. `0.875 <= |x| < 4`:
/// `1 - e^{-x^2} R(|x| - c)` with three degree-5/6 pieces, `x^2` split
/// exactly into hi + lo with an fma and `1 - erfc` in double-word arithmetic.
/// `+-1` for `|x| >= 4`. `erf(NaN) = NaN`, `erf(+-0) = +-0`, `erf(+-inf) = +-1`.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    if a < 0.875 {
        let z = x * x;
        return x.mul_add(horner_f32(z, &ERF_F32), x);
    }
    if a >= 4.0 {
        return with_sign_of_f32(1.0, x);
    }
    let r = if a < 1.5 {
        horner_f32(a - 1.1875, &ERFC_F32_0)
    } else if a < 2.5 {
        horner_f32(a - 2.0, &ERFC_F32_1)
    } else {
        horner_f32(a - 3.25, &ERFC_F32_2)
    };
    let x2h = a * a;
    let x2l = a.mul_add(a, -x2h); // exact: x^2 = x2h + x2l
    let (k, hi, lo) = exp_kernel_f32(-x2h, -x2l);
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    // q = erfc(a) = e * R as a double word.
    let qh = eh * r;
    let ql = eh.mul_add(r, -qh) + el * r;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    with_sign_of_f32(yh + yl, x)
}

/// Error function in f64 (max error < 2 ulp, odd).
///
/// Same algorithm as [`erf_f32`]: degree 11 in `x^2` for `|x| < 0.875`, five
/// pieces (degrees 16, 13, 11, 8, 6) of `e^{x^2} erfc(x)` on `[0.875, 6)`,
/// `+-1` for `|x| >= 6`.
#[inline(always)]
pub fn erf_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    if a < 0.875 {
        let z = x * x;
        return x.mul_add(horner_f64(z, &ERF_F64), x);
    }
    if a >= 6.0 {
        return with_sign_of_f64(1.0, x);
    }
    let r = if a < 1.5 {
        horner_f64(a - 1.1875, &ERFC_F64_0)
    } else if a < 2.5 {
        horner_f64(a - 2.0, &ERFC_F64_1)
    } else if a < 3.5 {
        horner_f64(a - 3.0, &ERFC_F64_2)
    } else if a < 4.5 {
        horner_f64(a - 4.0, &ERFC_F64_3)
    } else {
        horner_f64(a - 5.25, &ERFC_F64_4)
    };
    let x2h = a * a;
    let x2l = a.mul_add(a, -x2h);
    let (k, hi, lo) = exp_kernel_f64(-x2h, -x2l);
    let sc = pow2i_f64(k);
    let eh = hi * sc;
    let el = lo * sc;
    let qh = eh * r;
    let ql = eh.mul_add(r, -qh) + el * r;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    with_sign_of_f64(yh + yl, x)
}
