//! Portable `sin` and `cos` (f32 and f64).
//!
//! Both types share one reduction idea, with no table lookup by float value and
//! nothing but IEEE operations (`+ - *`, fma, `roundToIntegralTiesToEven`) and bit
//! manipulation:
//!
//! * `2/pi` is held as 26-bit integer chunks `D_i` ([`TWO_OVER_PI_26`]), so
//!   `2/pi = sum_i D_i * 2^(-26(i+1))`. The argument `a = |x|` is cut into pieces of at
//!   most 27 significant bits (one piece for an f32 input, two for an f64), so every
//!   product `piece * D_i * 2^(-26(i+1))` is **exact** in f64 (at most 53 bits).
//! * Each exact product `p` is split exactly into `round(p) mod 4` (an integer in
//!   `[-2, 2]`) and `p - round(p)` (in `[-0.5, 0.5]`); the integers sum exactly to the
//!   quadrant, the fractions are summed in double-double (f32) / triple-double (f64)
//!   with the integer part removed as it appears. This is Payne–Hanek reduction without
//!   its big-integer arithmetic: it is exact up to the last sum, for every finite input,
//!   including the largest.
//! * The reduced fraction `f` (`|f| <= 1/2`) times `pi/2` (double-double) gives
//!   `y = yh + yl`, `|y| <= pi/4`; `sin(y)` and `cos(y)` are Taylor polynomials of degree
//!   17 / 16 evaluated by Horner fmas with the `yl` correction.
//!
//! f32 computes in f64 (the exact products need it) and rounds once at the end, so its
//! result is within a hair of correct rounding; f64 skips the reduction below `pi/4`
//! and takes its chunks from the input's exponent. The f32 functions are branch-free
//! (value selects only), so the CPU's SIMD lanes run them as they are.

use super::{horner_f64, two_sum_f64};

/// `2/pi` in 26-bit chunks: `2/pi = sum_i TWO_OVER_PI_26[i] * 2^(-26(i+1))`
/// (48 chunks = 1248 bits, enough for the largest f64). Integer-valued f64s, exact.
pub const TWO_OVER_PI_26: [f64; 48] = [
    42722829.0, 48555073.0, 21659401.0, 56087029.0, 13858563.0, 28715353.0, 38736100.0, 4324945.0,
    26128250.0, 62674459.0, 29957006.0, 37899730.0, 58726692.0, 49193117.0, 6588223.0, 35515164.0,
    46442140.0, 65964067.0, 24988590.0, 54822121.0, 41009306.0, 54917092.0, 5137525.0, 37323603.0,
    15192690.0, 4585659.0, 58608142.0, 52426903.0, 67074070.0, 25231090.0, 63202006.0, 34237727.0,
    28629499.0, 15891632.0, 40752081.0, 37709470.0, 25143477.0, 55737260.0, 33225084.0, 24853767.0,
    15195689.0, 19476134.0, 50255852.0, 18845021.0, 2185228.0, 50622407.0, 47901436.0, 13614112.0,
];

/// `pi/2` rounded to f64 (`0x1.921fb54442d18p+0`).
pub const PIO2_HI: f64 = std::f64::consts::FRAC_PI_2;
/// `pi/2 - PIO2_HI` rounded to f64 (`0x1.1a62633145c07p-54`).
pub const PIO2_LO: f64 = 6.123233995736766e-17;

/// `sin(y) = y + y^3 * S(y^2)`: Taylor coefficients `(-1)^k / (2k+1)!`, k = 1..8.
pub const SIN_TAYLOR: [f64; 8] = [
    -0.16666666666666666,
    0.008333333333333333,
    -0.0001984126984126984,
    2.7557319223985893e-06,
    -2.505210838544172e-08,
    1.6059043836821613e-10,
    -7.647163731819816e-13,
    2.8114572543455206e-15,
];

/// `cos(y) = 1 - y^2/2 + y^4 * C(y^2)`: Taylor coefficients `(-1)^k / (2k)!`, k = 2..9.
pub const COS_TAYLOR: [f64; 8] = [
    0.041666666666666664,
    -0.001388888888888889,
    2.48015873015873e-05,
    -2.755731922398589e-07,
    2.08767569878681e-09,
    -1.1470745597729725e-11,
    4.779477332387385e-14,
    -1.5619206968586225e-16,
];

/// Number of chunks the f32 reduction uses (`234` bits of `2/pi`).
const CHUNKS_F32: usize = 9;
/// Number of chunks the f64 reduction uses from its first chunk on (`260` bits).
const CHUNKS_F64: usize = 10;

/// IEEE `roundToIntegralTiesToEven` (`cvt.rni` in PTX; `vroundpd $8` on x86).
#[inline(always)]
fn rint(x: f64) -> f64 {
    x.round_ties_even()
}

/// `2^(-26(j+1))` for `j < 39` (from the bits, exact).
#[inline(always)]
fn chunk_scale(j: usize) -> f64 {
    f64::from_bits((1023 - 26 * (j as u64 + 1)) << 52)
}

/// Splits an exact product `p` into `(round(p) mod 4, p - round(p))`, both exact: the
/// first an integer in `[-2, 2]`, the second in `[-1/2, 1/2]`.
#[inline(always)]
fn split_term(p: f64) -> (f64, f64) {
    let n = rint(p);
    (n - 4.0 * rint(n * 0.25), p - n)
}

/// `(a + b, exact error)` for `|a| >= |b|` (Fast2Sum).
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `y = (fh + fl) * pi/2` as a double-double `(yh, yl)`.
#[inline(always)]
fn times_pio2(fh: f64, fl: f64) -> (f64, f64) {
    let yh = fh * PIO2_HI;
    let yl = fh.mul_add(PIO2_HI, -yh) + fh.mul_add(PIO2_LO, fl * PIO2_HI);
    fast_two_sum(yh, yl)
}

/// `sin(yh + yl)` for `|yh + yl| <= pi/4 + 2^-40`:
/// `yh + fma(yh^3, S(yh^2), yl - yh^2/2 * yl)`.
#[inline(always)]
fn sin_kernel(yh: f64, yl: f64) -> f64 {
    let z = yh * yh;
    let v = z * yh;
    let s = horner_f64(z, &SIN_TAYLOR);
    let t = v.mul_add(s, (-0.5 * z).mul_add(yl, yl));
    yh + t
}

/// `cos(yh + yl)` for `|yh + yl| <= pi/4 + 2^-40`, with `z = yh^2` as an exact pair
/// `(z, zl)`: `w = 1 - z/2`, then `w + (((1 - w) - z/2) + fma(z^2, C(z), fma(-1/2, zl,
/// -(yh * yl))))` (`1 - w` and the next subtraction are exact).
#[inline(always)]
fn cos_kernel(yh: f64, yl: f64) -> f64 {
    let z = yh * yh;
    let zl = yh.mul_add(yh, -z);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = horner_f64(z, &COS_TAYLOR);
    let tail = (z * z).mul_add(c, (-0.5f64).mul_add(zl, -(yh * yl)));
    w + (((1.0 - w) - hz) + tail)
}

/// The quadrant `n mod 4` in `{0, 1, 2, 3}` (as f64) of a small integer-valued `n`.
#[inline(always)]
fn quadrant(n: f64) -> f64 {
    let q = n - 4.0 * rint(n * 0.25);
    if q < 0.0 { q + 4.0 } else { q }
}

/// `sin` of the reduced argument in quadrant `q` (`q = 0..3`) from the two kernels.
#[inline(always)]
fn pick_sin(q: f64, s: f64, c: f64) -> f64 {
    let r = if q == 1.0 || q == 3.0 { c } else { s };
    if q >= 2.0 { -r } else { r }
}

/// `cos` of the reduced argument in quadrant `q` (`q = 0..3`) from the two kernels.
#[inline(always)]
fn pick_cos(q: f64, s: f64, c: f64) -> f64 {
    let r = if q == 1.0 || q == 3.0 { s } else { c };
    if q == 1.0 || q == 2.0 { -r } else { r }
}

/// The f32 reduction of `a = |x|` (exact f64, `0 <= a < 2^128`): `(yh, yl, q)` with
/// `a = (q + 4k) * pi/2 + yh + yl`. Branch-free: nine exact products, their exact
/// splits, a double-double sum.
#[inline(always)]
fn reduce_f32(a: f64) -> (f64, f64, f64) {
    let mut n = 0.0f64;
    let mut h = 0.0f64;
    let mut l = 0.0f64;
    let mut j = 0;
    while j < CHUNKS_F32 {
        let p = a * (TWO_OVER_PI_26[j] * chunk_scale(j));
        let (nj, g) = split_term(p);
        n += nj;
        let (s, e) = two_sum_f64(h, g);
        h = s;
        l += e;
        j += 1;
    }
    let k = rint(h);
    h -= k;
    n += k;
    let (fh, fl) = two_sum_f64(h, l);
    let (yh, yl) = times_pio2(fh, fl);
    (yh, yl, quadrant(n))
}

/// Bits of an f32 with the sign of `x` xored in.
#[inline(always)]
fn xor_sign_f32(r: f32, x: f32) -> f32 {
    f32::from_bits(r.to_bits() ^ (x.to_bits() & 0x8000_0000))
}

/// gpukit's portable `sin` for f32: the reduction and kernels of this module in f64,
/// one rounding to f32 at the end (measured error in docs/numerics.md). `sin(±0) = ±0`,
/// `sin(±inf) = NaN`, NaN passes through; subnormals are kept (`sin(x) = x` there).
/// Branch-free.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    let fin = f32::from_bits(x.to_bits() & 0x7fff_ffff) < f32::INFINITY;
    let a = if fin {
        f32::from_bits(x.to_bits() & 0x7fff_ffff) as f64
    } else {
        0.0
    };
    let (yh, yl, q) = reduce_f32(a);
    let r = pick_sin(q, sin_kernel(yh, yl), cos_kernel(yh, yl)) as f32;
    let r = xor_sign_f32(r, x);
    let nan_or = if x.is_nan() { x } else { f32::NAN };
    if fin { r } else { nan_or }
}

/// gpukit's portable `cos` for f32 (as [`sin_f32`]). `cos(±0) = 1`, `cos(±inf) = NaN`,
/// NaN passes through. Branch-free.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let fin = f32::from_bits(x.to_bits() & 0x7fff_ffff) < f32::INFINITY;
    let a = if fin {
        f32::from_bits(x.to_bits() & 0x7fff_ffff) as f64
    } else {
        0.0
    };
    let (yh, yl, q) = reduce_f32(a);
    let r = pick_cos(q, sin_kernel(yh, yl), cos_kernel(yh, yl)) as f32;
    let nan_or = if x.is_nan() { x } else { f32::NAN };
    if fin { r } else { nan_or }
}

/// The f64 reduction of `a = |x|`, `pi/4 < a < 2^1024`: `(yh, yl, q)` as in
/// [`reduce_f32`]. The chunks whose products with `a` are multiples of 4 (all chunks
/// `i < i0`, `i0 = max(0, floor((e - 54) / 26))` for the exponent `e` of `a`) are
/// skipped by scaling `a` by `2^(-26 i0)` (exact); `a` is cut into a top piece of 26
/// bits and the exact rest (27 bits), ten chunks from `i0` on; the fractions are summed
/// in triple-double, the integer part removed after every term.
#[inline(always)]
fn reduce_f64(a: f64) -> (f64, f64, f64) {
    let e = ((a.to_bits() >> 52) as i64) - 1023;
    let i0 = if e >= 54 { ((e - 54) / 26) as usize } else { 0 };
    let a_s = a * f64::from_bits((1023 - 26 * i0 as u64) << 52);
    let a1 = f64::from_bits(a_s.to_bits() & !0x7ff_ffff);
    let a2 = a_s - a1;
    let mut n = 0.0f64;
    let (mut h, mut m, mut l) = (0.0f64, 0.0f64, 0.0f64);
    for j in 0..CHUNKS_F64 {
        let c = TWO_OVER_PI_26[i0 + j] * chunk_scale(j);
        for piece in [a1, a2] {
            let (nj, g) = split_term(piece * c);
            n += nj;
            let (s, e1) = two_sum_f64(h, g);
            let (t, e2) = two_sum_f64(m, e1);
            h = s;
            m = t;
            l += e2;
            let k = rint(h);
            h -= k;
            n += k;
        }
    }
    let (s1, s2) = two_sum_f64(m, l);
    let (fh, e3) = two_sum_f64(h, s1);
    let (yh, yl) = times_pio2(fh, e3 + s2);
    (yh, yl, quadrant(n))
}

/// `|x|` below which `sin(x)` rounds to `x` and `cos(x)` to 1 (`2^-27`).
const TINY_F64: f64 = 7.450580596923828e-9;
/// `|x|` up to which no reduction is needed (`0.785`, just below `pi/4`).
const PIO4_F64: f64 = 0.785;

/// gpukit's portable `sin` for f64 (Payne–Hanek style reduction for every finite
/// input, double-double kernel; measured error in docs/numerics.md). `sin(±0) = ±0`,
/// `sin(±inf) = NaN`, NaN passes through; `|x| < 2^-27` gives `x`.
#[inline]
pub fn sin_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    if a == f64::INFINITY {
        return f64::NAN;
    }
    if a < TINY_F64 {
        return x;
    }
    let (yh, yl, q) = if a <= PIO4_F64 {
        (a, 0.0, 0.0)
    } else {
        reduce_f64(a)
    };
    let r = if q == 1.0 || q == 3.0 {
        cos_kernel(yh, yl)
    } else {
        sin_kernel(yh, yl)
    };
    let r = if q >= 2.0 { -r } else { r };
    f64::from_bits(r.to_bits() ^ (x.to_bits() & 0x8000_0000_0000_0000))
}

/// gpukit's portable `cos` for f64 (as [`sin_f64`]). `cos(±0) = 1`, `cos(±inf) = NaN`,
/// NaN passes through; `|x| < 2^-27` gives 1.
#[inline]
pub fn cos_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff);
    if a == f64::INFINITY {
        return f64::NAN;
    }
    if a < TINY_F64 {
        return 1.0;
    }
    let (yh, yl, q) = if a <= PIO4_F64 {
        (a, 0.0, 0.0)
    } else {
        reduce_f64(a)
    };
    let r = if q == 1.0 || q == 3.0 {
        sin_kernel(yh, yl)
    } else {
        cos_kernel(yh, yl)
    };
    if q == 1.0 || q == 2.0 { -r } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_two_over_pi() {
        // The first chunks against f64's 2/pi (53 bits of the 78 they hold).
        let v = TWO_OVER_PI_26[0] * chunk_scale(0)
            + TWO_OVER_PI_26[1] * chunk_scale(1)
            + TWO_OVER_PI_26[2] * chunk_scale(2);
        assert_eq!(v, std::f64::consts::FRAC_2_PI);
        assert!(
            TWO_OVER_PI_26
                .iter()
                .all(|&d| d < 67108864.0 && d.fract() == 0.0)
        );
    }

    #[test]
    fn special_values() {
        assert_eq!(sin_f32(0.0).to_bits(), 0);
        assert_eq!(sin_f32(-0.0).to_bits(), 0x8000_0000);
        assert_eq!(cos_f32(-0.0), 1.0);
        assert!(sin_f32(f32::INFINITY).is_nan() && cos_f32(f32::NEG_INFINITY).is_nan());
        assert_eq!(sin_f64(-0.0).to_bits(), 0x8000_0000_0000_0000);
        assert_eq!(cos_f64(0.0), 1.0);
        assert!(sin_f64(f64::NEG_INFINITY).is_nan() && cos_f64(f64::NAN).is_nan());
        let s = f32::from_bits(1);
        assert_eq!(sin_f32(s), s);
        assert_eq!(sin_f64(-f64::from_bits(1)), -f64::from_bits(1));
    }

    #[test]
    fn close_to_std_on_a_grid() {
        // std's sin/cos are not the contract, but they are accurate to about 1 ulp:
        // a gross mistake in a quadrant or the reduction shows up here.
        let mut x = -1.0e6f64;
        while x < 1.0e6 {
            let (s, c) = (sin_f64(x), cos_f64(x));
            assert!((s - x.sin()).abs() <= 4e-16, "sin {x}: {s} vs {}", x.sin());
            assert!((c - x.cos()).abs() <= 4e-16, "cos {x}: {c} vs {}", x.cos());
            let xf = x as f32;
            let (sf, cf) = (sin_f32(xf), cos_f32(xf));
            assert!((sf as f64 - (xf as f64).sin()).abs() <= 6e-8, "sinf {xf}");
            assert!((cf as f64 - (xf as f64).cos()).abs() <= 6e-8, "cosf {xf}");
            x += 977.123_456_7;
        }
        // Huge arguments: against std (glibc's are correctly reduced).
        for &x in &[1e22f64, 1e300, f64::MAX] {
            assert!((sin_f64(x) - x.sin()).abs() <= 2e-16 * x.sin().abs().max(1e-300) + 1e-300);
            assert!((cos_f64(x) - x.cos()).abs() <= 2e-16 * x.cos().abs().max(1e-300) + 1e-300);
        }
        // The f64 closest to a multiple of pi/2 (Muller's worst case for reduction):
        // cos = -4.6871659242546276111e-19 (mpmath at 3000 bits).
        let c = cos_f64(6381956970095103.0 * 2f64.powi(797));
        assert!(
            (c / -4.687_165_924_254_628e-19 - 1.0).abs() < 2.3e-16,
            "{c:e}"
        );
        for &x in &[f32::MAX, 1e30f32, 3.0e38, 1.0e10] {
            assert_eq!(sin_f32(x), (x as f64).sin() as f32, "sinf {x}");
            assert_eq!(cos_f32(x), (x as f64).cos() as f32, "cosf {x}");
        }
    }
}
