//! Lane forms of `log`, `tanh`, `sigmoid` and `erf` (f32 and f64): the operations of
//! [`gpukit_core::math`] in the same order, each branch a select between fully computed
//! paths, each path computed on an input clamped into its domain.

use super::{
    LN2_HI_F32, LN2_HI_F64, LN2_LO_F32, LN2_LO_F64, exp_kernel_f32, exp_kernel_f64, horner_f32,
    horner_f64, pow2i_f32, pow2i_f64, scale_f32, scale_f64, sel32, sel64, seli,
};

// Same coefficients as `gpukit_core::math` (checked by the bit-equality tests).
const LOG_F32: [f32; 4] = [6.666667e-01, 3.9999455e-01, 2.8596687e-01, 2.2449134e-01];
const LOG_F64: [f64; 7] = [
    0.666666666666667,
    0.39999999999837943,
    0.2857142867034356,
    0.2222220331418622,
    0.18183442102755076,
    0.15314552370153356,
    0.1481189902828212,
];
const SQRT_HALF_BITS_F32: u32 = 0x3f35_04f3;
const SQRT_HALF_BITS_F64: u64 = 0x3fe6_a09e_667f_3bcd;

const TANH_F32: [f32; 6] = [
    -3.3333334e-01,
    1.3333496e-01,
    -5.399916e-02,
    2.2072058e-02,
    -9.3202125e-03,
    3.4215571e-03,
];
const TANH_F64: [f64; 12] = [
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

const ERF_F32: [f32; 7] = [
    1.2837917e-01,
    -3.761263e-01,
    1.1283623e-01,
    -2.6855364e-02,
    5.190942e-03,
    -8.02644e-04,
    7.867855e-05,
];
const ERF_F64: [f64; 12] = [
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
const ERFC_F32_0: [f32; 7] = [
    3.8130406e-01,
    -2.2278225e-01,
    1.167513e-01,
    -5.6077503e-02,
    2.5038023e-02,
    -1.08308885e-02,
    4.4855936e-03,
];
const ERFC_F32_1: [f32; 7] = [
    2.5539568e-01,
    -1.0679681e-01,
    4.180249e-02,
    -1.5449556e-02,
    5.441049e-03,
    -1.9176528e-03,
    6.092204e-04,
];
const ERFC_F32_2: [f32; 6] = [
    1.6633566e-01,
    -4.718985e-02,
    1.2927355e-02,
    -3.501702e-03,
    9.330823e-04,
    -1.3475954e-04,
];
const ERFC_F64_0: [f64; 17] = [
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
const ERFC_F64_1: [f64; 14] = [
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
const ERFC_F64_2: [f64; 12] = [
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
const ERFC_F64_3: [f64; 9] = [
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
const ERFC_F64_4: [f64; 7] = [
    0.10561273548435031,
    -0.019445455771739152,
    0.0035241522926040976,
    -0.0006289438396136747,
    0.00011066013289052707,
    -1.976157401520065e-05,
    3.3777301425334852e-06,
];

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
    let yl = sel32(under, 0.0, scale_f32(hi + lo, k));
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
    let yl = sel64(under, 0.0, scale_f64(hi + lo, k));
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
