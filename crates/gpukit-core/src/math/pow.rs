//! `pow(x, y)`: gpukit's portable power function, f32 and f64.
//!
//! `x^y = exp(y · log|x|)` is only as good as the product `y · log|x|`: its absolute
//! error becomes the result's relative error, and it reaches 104 (f32) or 746 (f64)
//! before the result overflows or underflows. So `log|x|` is computed as a
//! double-word `(hi, lo)` with about 2^-35 (f32) or 2^-64 (f64) relative error, the
//! product is formed exactly with an fma, and the exponential takes the pair through
//! the shared exp kernel (`exp_kernel_*`, which accepts a low part). Every step is an
//! operation of rule 1 (`+ - * /`, fma, comparisons, bit manipulation), so the result
//! is the same bits wherever the algorithm is run; the CUDA mirror is `gk_pow` in
//! `kernels-cuda/gpukit_math.cuh`.
//!
//! The log: `|x| = 2^k · m`, `m ∈ [√½, √2)`, `f = m − 1` (exact),
//! `s = f / (2 + f)` as a pair (the division's remainder is exact with an fma), and
//! `log m = 2·atanh(s) = 2s + s³·(2/3 + z·Q(z))`, `z = s²`, with `Q` the Taylor
//! series `2/5 + 2/7 z + …` (`|z| ≤ 0.0295`: six terms for f32, eleven for f64 leave a
//! truncation below 2^-36 / 2^-65). `2s` and `s³·(2/3 + …)` are carried as pairs;
//! only `z·Q(z)`, 2^-12 of the result, is evaluated in plain arithmetic.
//!
//! Special values follow C99 / IEEE 754 `pow` (what numpy and ONNX `Pow` give):
//! `pow(x, ±0) = 1` and `pow(1, y) = 1` for every `x`, `y` (NaN included);
//! otherwise a NaN operand gives NaN; `pow(-1, ±inf) = 1`; `pow(x, ±inf)` is `+inf` or
//! `+0` by whether `|x| < 1` and the sign of `y`; `pow(±0, y)` and `pow(±inf, y)` keep
//! the base's sign exactly when `y` is an odd integer; a finite negative base with a
//! finite non-integer exponent gives NaN; a negative base with an odd integer
//! exponent gives the negated power.

use super::{
    LN2_HI_F32, LN2_HI_F64, LN2_LO_F32, LN2_LO_F64, SQRT_HALF_BITS_F32, SQRT_HALF_BITS_F64,
    exp_kernel_f32, exp_kernel_f64, horner_f32, horner_f64, scale_f32, scale_f64,
};

/// 2/3 = `POW_C3_HI_F32 + POW_C3_LO_F32` (each rounded to nearest), f32.
pub const POW_C3_HI_F32: f32 = 0.6666667; // 0x3f2aaaab
/// The low part of 2/3 (see [`POW_C3_HI_F32`]).
pub const POW_C3_LO_F32: f32 = -1.9868216e-8; // -0x1.555556p-26
/// 2/3 = `POW_C3_HI_F64 + POW_C3_LO_F64` (each rounded to nearest), f64.
pub const POW_C3_HI_F64: f64 = 0.6666666666666666; // 0x3fe5555555555555
/// The low part of 2/3 (see [`POW_C3_HI_F64`]).
pub const POW_C3_LO_F64: f64 = 3.700743415417188e-17; // 0x1.5555555555555p-55

/// `Q(z) = 2/5 + 2/7 z + … + 2/15 z^5` (Taylor coefficients of `2·atanh`, each rounded
/// to nearest), f32.
pub const POW_LOG_F32: [f32; 6] = [
    0.4, 0.2857143, 0.22222222, 0.18181819, 0.15384616, 0.13333334,
];
/// `Q(z) = 2/5 + 2/7 z + … + 2/25 z^10`, f64.
pub const POW_LOG_F64: [f64; 11] = [
    0.4,
    0.2857142857142857,
    0.2222222222222222,
    0.18181818181818182,
    0.15384615384615385,
    0.13333333333333333,
    0.11764705882352941,
    0.10526315789473684,
    0.09523809523809523,
    0.08695652173913043,
    0.08,
];

/// How an exponent classifies for `pow`: not an integer (or infinite), an odd
/// integer, an even integer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum YClass {
    NotInt,
    Odd,
    Even,
}

macro_rules! pow_impl {
    (
        $R:ty, $U:ty, $log_dw:ident, $classify:ident, $pow:ident,
        mant_bits = $MB:expr, bias = $BIAS:expr, sub_scale = $SUB:expr, sub_k = $SUBK:expr,
        one_bits = $ONE:expr, sqrt_half = $SQH:expr, ln2_hi = $LN2H:expr, ln2_lo = $LN2L:expr,
        c3_hi = $C3H:expr, c3_lo = $C3L:expr, q = $Q:expr, horner = $horner:ident,
        exp_kernel = $expk:ident, scale = $scale:ident, ovf = $OVF:expr, unf = $UNF:expr
    ) => {
        /// `log(ax)` for finite `ax > 0` (subnormals included) as a pair `(hi, lo)`.
        #[inline(always)]
        fn $log_dw(ax: $R) -> ($R, $R) {
            let mut ix = ax.to_bits();
            let mut kadj: i32 = 0;
            if ix < (1 as $U) << $MB {
                // Subnormal: scale into the normal range (exact).
                ix = (ax * $SUB).to_bits();
                kadj = $SUBK;
            }
            ix += $ONE - $SQH;
            let k = (ix >> $MB) as i32 - $BIAS + kadj;
            let m = <$R>::from_bits((ix & (((1 as $U) << $MB) - 1)) + $SQH);
            let f = m - 1.0; // exact (Sterbenz)
            // d = 2 + f as an exact pair (Fast2Sum, |2| >= |f|).
            let d = 2.0 + f;
            let d_lo = f - (d - 2.0);
            // s = f / d as a pair: the first remainder is exact.
            let s = f / d;
            let rem = (-s).mul_add(d_lo, (-s).mul_add(d, f));
            let s_lo = rem / d;
            // z = s^2 and s^3 = s z as pairs.
            let z = s * s;
            let z_lo = (s + s).mul_add(s_lo, s.mul_add(s, -z));
            let s3 = s * z;
            let s3_lo = s_lo.mul_add(z, s.mul_add(z_lo, s.mul_add(z, -s3)));
            // b = 2/3 + z Q(z) as a pair (Fast2Sum, 2/3 > |z Q|).
            let p = z * $horner(z, &$Q);
            let b = $C3H + p;
            let b_lo = (($C3H - b) + p) + $C3L;
            // t = s^3 b as a pair.
            let t = s3 * b;
            let t_lo = s3_lo.mul_add(b, s3.mul_add(b_lo, s3.mul_add(b, -t)));
            // log m = 2s + t (Fast2Sum, |2s| > |t|).
            let s2 = s + s;
            let h = s2 + t;
            let h_lo = ((s2 - h) + t) + (s_lo + s_lo + t_lo);
            // k ln2 as a pair (the product's error is exact with an fma).
            let kf = k as $R;
            let a = kf * $LN2H;
            let a_lo = kf.mul_add($LN2L, kf.mul_add($LN2H, -a));
            // log x = k ln2 + log m (Fast2Sum: |k ln2| >= ln2 > |log m| unless k = 0).
            let lh = a + h;
            let ll = ((a - lh) + h) + (a_lo + h_lo);
            (lh, ll)
        }

        /// Whether finite or infinite `y` is an odd integer, an even integer, or
        /// neither (infinities are neither), from the bits alone.
        #[inline(always)]
        fn $classify(y: $R) -> YClass {
            let bits = y.to_bits() & !((1 as $U) << (<$U>::BITS - 1));
            let e = (bits >> $MB) as i32 - $BIAS; // unbiased exponent
            if e > $BIAS {
                return YClass::NotInt; // inf or NaN
            }
            if e < 0 {
                return YClass::NotInt; // 0 < |y| < 1 (y = 0 never reaches here)
            }
            if e > $MB {
                return YClass::Even; // ulp(y) >= 2
            }
            let frac_bits = $MB - e; // bits of the mantissa below the binary point
            let mant = bits & (((1 as $U) << $MB) - 1);
            if frac_bits > 0 && mant & (((1 as $U) << frac_bits) - 1) != 0 {
                return YClass::NotInt;
            }
            // The units bit: the implicit one when e == 0, else mantissa bit frac_bits.
            let odd = e == 0 || (mant >> frac_bits) & 1 == 1;
            if odd { YClass::Odd } else { YClass::Even }
        }

        /// `x^y` (C99 / IEEE 754 `pow` special values; the module doc has them all).
        #[inline(always)]
        pub fn $pow(x: $R, y: $R) -> $R {
            if y == 0.0 || x == 1.0 {
                return 1.0;
            }
            if x.is_nan() || y.is_nan() {
                return x + y;
            }
            let ax = <$R>::from_bits(x.to_bits() & !((1 as $U) << (<$U>::BITS - 1)));
            let neg = x.is_sign_negative();
            if y.is_infinite() {
                if ax == 1.0 {
                    return 1.0; // x == -1
                }
                return if (ax < 1.0) == (y < 0.0) {
                    <$R>::INFINITY
                } else {
                    0.0
                };
            }
            let yc = $classify(y);
            let odd = yc == YClass::Odd;
            if x == 0.0 || x.is_infinite() {
                // 0^y and inf^y: the magnitude is 0 or inf, the sign the base's for an
                // odd integer exponent.
                let big = (x == 0.0) == (y < 0.0);
                let mag = if big { <$R>::INFINITY } else { 0.0 };
                return if odd && neg { -mag } else { mag };
            }
            if neg && yc == YClass::NotInt {
                return <$R>::NAN;
            }
            let (lh, ll) = $log_dw(ax);
            let th = y * lh;
            let tl = y.mul_add(ll, y.mul_add(lh, -th));
            let r = if th > $OVF {
                <$R>::INFINITY
            } else if th < $UNF {
                0.0
            } else {
                let (k, hi, lo) = $expk(th, tl);
                $scale(hi + lo, k)
            };
            if odd && neg { -r } else { r }
        }
    };
}

pow_impl!(
    f32,
    u32,
    log_dw_f32,
    classify_f32,
    pow_f32,
    mant_bits = 23,
    bias = 127,
    sub_scale = 33554432.0,
    sub_k = -25,
    one_bits = 0x3f80_0000,
    sqrt_half = SQRT_HALF_BITS_F32,
    ln2_hi = LN2_HI_F32,
    ln2_lo = LN2_LO_F32,
    c3_hi = POW_C3_HI_F32,
    c3_lo = POW_C3_LO_F32,
    q = POW_LOG_F32,
    horner = horner_f32,
    exp_kernel = exp_kernel_f32,
    scale = scale_f32,
    ovf = 89.0,
    unf = -104.0
);

pow_impl!(
    f64,
    u64,
    log_dw_f64,
    classify_f64,
    pow_f64,
    mant_bits = 52,
    bias = 1023,
    sub_scale = 18014398509481984.0,
    sub_k = -54,
    one_bits = 0x3ff0_0000_0000_0000,
    sqrt_half = SQRT_HALF_BITS_F64,
    ln2_hi = LN2_HI_F64,
    ln2_lo = LN2_LO_F64,
    c3_hi = POW_C3_HI_F64,
    c3_lo = POW_C3_LO_F64,
    q = POW_LOG_F64,
    horner = horner_f64,
    exp_kernel = exp_kernel_f64,
    scale = scale_f64,
    ovf = 710.0,
    unf = -746.0
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_rounded_values() {
        assert_eq!(POW_C3_HI_F32, (2.0f64 / 3.0) as f32);
        assert_eq!(
            POW_C3_LO_F32,
            ((2.0f64 / 3.0) - POW_C3_HI_F32 as f64) as f32
        );
        assert_eq!(POW_C3_HI_F64, 2.0 / 3.0);
        for (j, &c) in POW_LOG_F64.iter().enumerate() {
            assert_eq!(c, 2.0 / (2 * j + 5) as f64, "coefficient {j}");
            assert_eq!(POW_LOG_F32.get(j).copied().unwrap_or(c as f32), c as f32);
        }
    }

    #[test]
    fn classify_integers() {
        use YClass::*;
        let cases32 = [
            (1.0f32, Odd),
            (2.0, Even),
            (3.0, Odd),
            (-3.0, Odd),
            (0.5, NotInt),
            (1.5, NotInt),
            (8388607.0, Odd),
            (8388608.0, Even),
            (16777216.0, Even),
            (f32::MAX, Even),
            (f32::INFINITY, NotInt),
            (f32::from_bits(1), NotInt),
        ];
        for (y, c) in cases32 {
            assert!(classify_f32(y) == c, "{y}");
        }
        let cases64 = [
            (1.0f64, Odd),
            (4503599627370495.0, Odd),
            (4503599627370496.0, Even),
            (9007199254740993.0, Even),
            (2.5, NotInt),
            (-7.0, Odd),
        ];
        for (y, c) in cases64 {
            assert!(classify_f64(y) == c, "{y}");
        }
    }

    #[test]
    fn exact_powers_are_exact() {
        for b in 2..20i32 {
            for e in 0..8 {
                let want = (b as f64).powi(e);
                if want < 16_000_000.0 {
                    assert_eq!(pow_f32(b as f32, e as f32), want as f32, "{b}^{e}");
                    assert_eq!(pow_f32(-b as f32, e as f32), (-b as f64).powi(e) as f32);
                }
                assert_eq!(pow_f64(b as f64, e as f64), want, "{b}^{e}");
            }
        }
        assert_eq!(pow_f32(4.0, 0.5), 2.0);
        assert_eq!(pow_f64(2.0, -1074.0), f64::from_bits(1));
        assert_eq!(pow_f32(2.0, -149.0), f32::from_bits(1));
        assert_eq!(pow_f32(2.0, 127.0), 2f32.powi(127));
        assert_eq!(pow_f32(2.0, 128.0), f32::INFINITY);
        assert_eq!(pow_f32(0.5, 150.0), 0.0);
    }

    #[test]
    fn specials_follow_c99() {
        let nan = f32::NAN;
        let inf = f32::INFINITY;
        assert_eq!(pow_f32(nan, 0.0), 1.0);
        assert_eq!(pow_f32(nan, -0.0), 1.0);
        assert_eq!(pow_f32(1.0, nan), 1.0);
        assert!(pow_f32(nan, 1.0).is_nan());
        assert!(pow_f32(2.0, nan).is_nan());
        assert_eq!(pow_f32(-1.0, inf), 1.0);
        assert_eq!(pow_f32(-1.0, -inf), 1.0);
        assert_eq!(pow_f32(0.5, inf), 0.0);
        assert_eq!(pow_f32(0.5, -inf), inf);
        assert_eq!(pow_f32(-2.0, inf), inf);
        assert_eq!(pow_f32(-2.0, -inf), 0.0);
        assert_eq!(pow_f32(-0.0, 3.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(pow_f32(-0.0, 2.0).to_bits(), 0);
        assert_eq!(pow_f32(-0.0, -3.0), -inf);
        assert_eq!(pow_f32(-0.0, -2.0), inf);
        assert_eq!(pow_f32(0.0, -0.5), inf);
        assert_eq!(pow_f32(-inf, 3.0), -inf);
        assert_eq!(pow_f32(-inf, -3.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(pow_f32(-inf, 2.0), inf);
        assert_eq!(pow_f32(inf, -1.0).to_bits(), 0);
        assert!(pow_f32(-2.0, 0.5).is_nan());
        assert_eq!(pow_f32(-2.0, 3.0), -8.0);
        assert_eq!(pow_f64(-2.0, -1.0), -0.5);
        assert_eq!(pow_f64(-0.0, 1e300).to_bits(), 0);
    }

    #[test]
    fn close_to_the_platform_pow() {
        // A coarse sweep (the ulp table lives in tests/pow_accuracy.rs).
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..20000 {
            let x = (next() % 4000) as f64 / 100.0 + 1e-3;
            let y = (next() % 4000) as f64 / 200.0 - 10.0;
            let want = x.powf(y);
            let got = pow_f64(x, y);
            assert!(
                ((got - want) / want).abs() < 4e-16,
                "{x}^{y}: {got} vs {want}"
            );
            let got32 = pow_f32(x as f32, y as f32) as f64;
            let want32 = (x as f32 as f64).powf(y as f32 as f64);
            if want32.is_finite() && want32 > 1e-37 && want32 < 1e38 {
                assert!(((got32 - want32) / want32).abs() < 1.2e-7, "{x}^{y}");
            }
        }
    }
}
