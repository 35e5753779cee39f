//! Lane forms of `log`, `tanh`, `sigmoid` and `erf` (f32 and f64): the operations of
//! [`gpukit_core::math`] in the same order, each branch a select between fully computed
//! paths, each path computed on an input clamped into its domain.

use super::{
    LN2_HI_F32, LN2_HI_F64, LN2_LO_F32, LN2_LO_F64, exp_kernel_f32, exp_kernel_f64, horner_f32,
    horner_f64, pow2i_f32, pow2i_f64, scale_f32, scale_f64, sel32, sel64, seli,
};

use gpukit_core::math::{
    ERF_F32, ERF_F64, ERFC_F32_0, ERFC_F32_1, ERFC_F32_2, ERFC_F64_0, ERFC_F64_1, ERFC_F64_2,
    ERFC_F64_3, ERFC_F64_4, LOG_F32, LOG_F64, SQRT_HALF_BITS_F32, SQRT_HALF_BITS_F64, TANH_F32,
    TANH_F64,
};

/// `|x|` from the bits.
#[inline(always)]
fn abs32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0x7fff_ffff)
}

/// `|x|` from the bits.
#[inline(always)]
fn abs64(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff)
}

/// `copysign(m, x)` for `m >= 0` (the scalar `with_sign_of_f32`).
#[inline(always)]
fn with_sign_of_f32(m: f32, x: f32) -> f32 {
    f32::from_bits(m.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// `copysign(m, x)` for `m >= 0` (the scalar `with_sign_of_f64`).
#[inline(always)]
fn with_sign_of_f64(m: f64, x: f64) -> f64 {
    f64::from_bits(m.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000))
}

// ---------------------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::log_f32`] in lane form (same bits for every input).
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    let nan = x.is_nan();
    let neg = x < 0.0;
    let zero = x == 0.0;
    let inf = x == f32::INFINITY;
    // The main path's domain: finite x > 0 (subnormals included).
    let xc = sel32(nan | neg | zero | inf, 1.0, x);
    let ix0 = xc.to_bits();
    let sub = ix0 < 0x0080_0000;
    let ix = if sub {
        (xc * 33554432.0).to_bits()
    } else {
        ix0
    };
    let kadj = seli(sub, -25, 0);
    let ix = ix.wrapping_add(0x3f80_0000 - SQRT_HALF_BITS_F32);
    let k = ((ix >> 23) as i32).wrapping_sub(127).wrapping_add(kadj);
    let m = f32::from_bits((ix & 0x007f_ffff) + SQRT_HALF_BITS_F32);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner_f32(z, &LOG_F32);
    let hfsq = 0.5 * f * f;
    let kf = k as f32;
    let w = s.mul_add(hfsq + r, kf * LN2_LO_F32);
    let v = hfsq - w;
    let y = kf.mul_add(LN2_HI_F32, f - v);
    let y = sel32(inf, x, y);
    let y = sel32(zero, f32::NEG_INFINITY, y);
    let y = sel32(neg, f32::NAN, y);
    sel32(nan, x, y)
}

/// [`gpukit_core::math::log_f64`] in lane form (same bits for every input).
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    let nan = x.is_nan();
    let neg = x < 0.0;
    let zero = x == 0.0;
    let inf = x == f64::INFINITY;
    let xc = sel64(nan | neg | zero | inf, 1.0, x);
    let ix0 = xc.to_bits();
    let sub = ix0 < 0x0010_0000_0000_0000;
    let ix = if sub {
        (xc * 18014398509481984.0).to_bits()
    } else {
        ix0
    };
    let ix = ix.wrapping_add(0x3ff0_0000_0000_0000 - SQRT_HALF_BITS_F64);
    // k = (ix >> 52) - 1023 + kadj as an exact f64 (the scalar's `k as f64`): the
    // biased exponent (< 2^11) placed in the mantissa of 2^52, then exact integer
    // steps, so no 64-bit integer conversion is needed.
    let biased = f64::from_bits((ix >> 52) | 0x4330_0000_0000_0000) - 4503599627370496.0;
    let kf = (biased - 1023.0) + sel64(sub, -54.0, 0.0);
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + SQRT_HALF_BITS_F64);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner_f64(z, &LOG_F64);
    let hfsq = 0.5 * f * f;
    let w = s.mul_add(hfsq + r, kf * LN2_LO_F64);
    let v = hfsq - w;
    let y = kf.mul_add(LN2_HI_F64, f - v);
    let y = sel64(inf, x, y);
    let y = sel64(zero, f64::NEG_INFINITY, y);
    let y = sel64(neg, f64::NAN, y);
    sel64(nan, x, y)
}

// ---------------------------------------------------------------------------------------
// tanh
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::tanh_f32`] in lane form (same bits for every input).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let nan = x.is_nan();
    let a = abs32(x);
    let small = a < 0.5625;
    let big = a >= 9.5;
    // |x| < 0.5625 (any x: other lanes are discarded).
    let z = x * x;
    let p = horner_f32(z, &TANH_F32);
    let ys = sel32(a == 0.0, x, (x * z).mul_add(p, x));
    // 0.5625 <= |x| < 9.5, on a clamped stand-in elsewhere.
    let ac = sel32(small | big | nan, 1.0, a);
    let (k, hi, lo) = exp_kernel_f32(2.0 * ac, 0.0);
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    let dh = eh + 1.0;
    let dl = ((eh - dh) + 1.0) + el;
    let qh = 2.0 / dh;
    let rr = (-qh).mul_add(dh, 2.0) - qh * dl;
    let ql = rr / dh;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    let ym = yh + yl;
    let y = with_sign_of_f32(sel32(big, 1.0, ym), x);
    let y = sel32(small, ys, y);
    sel32(nan, x, y)
}

/// [`gpukit_core::math::tanh_f64`] in lane form (same bits for every input).
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let nan = x.is_nan();
    let a = abs64(x);
    let small = a < 0.5625;
    let big = a >= 22.0;
    let z = x * x;
    let p = horner_f64(z, &TANH_F64);
    let ys = sel64(a == 0.0, x, (x * z).mul_add(p, x));
    let ac = sel64(small | big | nan, 1.0, a);
    let (k, hi, lo) = exp_kernel_f64(2.0 * ac, 0.0);
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
    let ym = yh + yl;
    let y = with_sign_of_f64(sel64(big, 1.0, ym), x);
    let y = sel64(small, ys, y);
    sel64(nan, x, y)
}

// ---------------------------------------------------------------------------------------
// sigmoid
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::sigmoid_f32`] in lane form (same bits for every input).
///
/// One exp kernel serves both paths: the main path evaluates it at `-|x|`, and below
/// `-24` the scalar's `exp_f32(x)` evaluates it at `x`, which is the same value.
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    let nan = x.is_nan();
    let over = x > 18.0;
    let low = x < -24.0;
    // exp_f32's underflow limit (its overflow limit is above 18).
    let under = x < f32::from_bits(0xc2cf_f1b4);
    let xc = sel32(nan | over, 0.0, sel32(under, -50.0, x));
    let a = abs32(xc);
    let (k, hi, lo) = exp_kernel_f32(-a, 0.0);
    // x < -24: exp_f32(x).
    // (`RN(hi + lo) = hi`: `lo` is the exact error of `hi`, see `exp_f32`.)
    let yl = sel32(under, 0.0, scale_f32(hi, k));
    // -24 <= x <= 18.
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    let dh = 1.0 + eh;
    let dl = ((1.0 - dh) + eh) + el;
    let pos = xc >= 0.0;
    let nh = sel32(pos, 1.0, eh);
    let nl = sel32(pos, 0.0, el);
    let y0 = nh / dh;
    let rr = (-y0).mul_add(dh, nh) + (nl - y0 * dl);
    let ym = y0 + rr / dh;
    let y = sel32(low, yl, ym);
    let y = sel32(over, 1.0, y);
    sel32(nan, x, y)
}

/// [`gpukit_core::math::sigmoid_f64`] in lane form (same bits for every input).
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    let nan = x.is_nan();
    let over = x > 40.0;
    let low = x < -45.0;
    let under = x < f64::from_bits(0xc087_4910_d52d_3051);
    let xc = sel64(nan | over, 0.0, sel64(under, -100.0, x));
    let a = abs64(xc);
    let (k, hi, lo) = exp_kernel_f64(-a, 0.0);
    let yl = sel64(under, 0.0, scale_f64(hi, k));
    let sc = pow2i_f64(k);
    let eh = hi * sc;
    let el = lo * sc;
    let dh = 1.0 + eh;
    let dl = ((1.0 - dh) + eh) + el;
    let pos = xc >= 0.0;
    let nh = sel64(pos, 1.0, eh);
    let nl = sel64(pos, 0.0, el);
    let y0 = nh / dh;
    let rr = (-y0).mul_add(dh, nh) + (nl - y0 * dl);
    let ym = y0 + rr / dh;
    let y = sel64(low, yl, ym);
    let y = sel64(over, 1.0, y);
    sel64(nan, x, y)
}

// ---------------------------------------------------------------------------------------
// erf
// ---------------------------------------------------------------------------------------

/// [`gpukit_core::math::erf_f32`] in lane form (same bits for every input).
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    let nan = x.is_nan();
    let a = abs32(x);
    let small = a < 0.875;
    let big = a >= 4.0;
    // |x| < 0.875.
    let z = x * x;
    let ys = x.mul_add(horner_f32(z, &ERF_F32), x);
    // 0.875 <= |x| < 4: every piece evaluated, the lane's piece selected.
    let ac = sel32(small | big | nan, 1.0, a);
    let r0 = horner_f32(ac - 1.1875, &ERFC_F32_0);
    let r1 = horner_f32(ac - 2.0, &ERFC_F32_1);
    let r2 = horner_f32(ac - 3.25, &ERFC_F32_2);
    let r = sel32(ac < 1.5, r0, sel32(ac < 2.5, r1, r2));
    let x2h = ac * ac;
    let x2l = ac.mul_add(ac, -x2h);
    let (k, hi, lo) = exp_kernel_f32(-x2h, -x2l);
    let sc = pow2i_f32(k);
    let eh = hi * sc;
    let el = lo * sc;
    let qh = eh * r;
    let ql = eh.mul_add(r, -qh) + el * r;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    let ym = yh + yl;
    let y = with_sign_of_f32(sel32(big, 1.0, ym), x);
    let y = sel32(small, ys, y);
    sel32(nan, x, y)
}

/// [`gpukit_core::math::erf_f64`] in lane form (same bits for every input).
#[inline(always)]
pub fn erf_f64(x: f64) -> f64 {
    let nan = x.is_nan();
    let a = abs64(x);
    let small = a < 0.875;
    let big = a >= 6.0;
    let z = x * x;
    let ys = x.mul_add(horner_f64(z, &ERF_F64), x);
    let ac = sel64(small | big | nan, 1.0, a);
    let r0 = horner_f64(ac - 1.1875, &ERFC_F64_0);
    let r1 = horner_f64(ac - 2.0, &ERFC_F64_1);
    let r2 = horner_f64(ac - 3.0, &ERFC_F64_2);
    let r3 = horner_f64(ac - 4.0, &ERFC_F64_3);
    let r4 = horner_f64(ac - 5.25, &ERFC_F64_4);
    let r = sel64(
        ac < 1.5,
        r0,
        sel64(ac < 2.5, r1, sel64(ac < 3.5, r2, sel64(ac < 4.5, r3, r4))),
    );
    let x2h = ac * ac;
    let x2l = ac.mul_add(ac, -x2h);
    let (k, hi, lo) = exp_kernel_f64(-x2h, -x2l);
    let sc = pow2i_f64(k);
    let eh = hi * sc;
    let el = lo * sc;
    let qh = eh * r;
    let ql = eh.mul_add(r, -qh) + el * r;
    let yh = 1.0 - qh;
    let yl = ((1.0 - yh) - qh) - ql;
    let ym = yh + yl;
    let y = with_sign_of_f64(sel64(big, 1.0, ym), x);
    let y = sel64(small, ys, y);
    sel64(nan, x, y)
}
