//! Host checks of the cast functions against independent reasoning: the nearest-value
//! property checked with exact midpoints (f64 for float sources, i128 for integer
//! sources), the `half` crate's `from_f32` (correctly rounded) where the source is an
//! f32 value, and hand-made double-rounding cases.

use super::*;

/// A target float format's values as f64 (every f32/f16/bf16 value and every midpoint
/// between two neighbours is exact in f64).
#[derive(Clone, Copy)]
struct Fmt {
    name: &'static str,
    /// Significand bits stored (without the hidden bit).
    man: u32,
    /// Exponent bits.
    exp: u32,
}

const F32: Fmt = Fmt {
    name: "f32",
    man: 23,
    exp: 8,
};
const F16: Fmt = Fmt {
    name: "f16",
    man: 10,
    exp: 5,
};
const BF16: Fmt = Fmt {
    name: "bf16",
    man: 7,
    exp: 8,
};

impl Fmt {
    fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }
    /// The value of magnitude bits `m` (no sign bit), `m` below the infinity pattern;
    /// `m` = the infinity pattern gives 2^(emax+1), the virtual next value.
    fn mag(self, m: u64) -> f64 {
        let e = (m >> self.man) as i32;
        let f = m & ((1 << self.man) - 1);
        if e == 0 {
            f as f64 * 2f64.powi(1 - self.bias() - self.man as i32)
        } else {
            (f | (1 << self.man)) as f64 * 2f64.powi(e - self.bias() - self.man as i32)
        }
    }
    fn inf(self) -> u64 {
        ((1u64 << self.exp) - 1) << self.man
    }
    /// Checks that magnitude bits `r` (sign given separately) are `x` rounded to
    /// nearest even (x is not NaN, and has the sign already removed: `x >= 0`).
    fn check_nearest(self, x: f64, r: u64, what: &str) {
        assert!(x >= 0.0);
        if r == self.inf() {
            // Overflow: at or beyond max + half an ulp (a tie goes to the even
            // infinity: max has an odd significand).
            let max = self.mag(r - 1);
            let virt = self.mag(r);
            assert!(
                x >= (max + virt) / 2.0,
                "{what}: {x:e} gave inf in {}",
                self.name
            );
            return;
        }
        assert!(r < self.inf(), "{what}: {x:e} gave NaN in {}", self.name);
        let v = self.mag(r);
        let hi = (v + self.mag(r + 1)) / 2.0;
        let lo = if r == 0 {
            0.0
        } else {
            (v + self.mag(r - 1)) / 2.0
        };
        let even = r & 1 == 0;
        let ok_hi = x < hi || (x == hi && even);
        let ok_lo = x > lo || (x == lo && (even || r == 0));
        assert!(
            ok_hi && ok_lo,
            "{what}: {x:e} rounded to {v:e} ({r:#x}) in {}, not the nearest even",
            self.name
        );
    }
}

/// Checks one float result (bits `bits` of format `f`) of source value `x` (f64).
fn check_float(f: Fmt, x: f64, bits: u64, what: &str) {
    let sign = bits >> (f.man + f.exp) & 1 == 1;
    let m = bits & ((1u64 << (f.man + f.exp)) - 1);
    if x.is_nan() {
        assert!(m > f.inf(), "{what}: NaN gave {bits:#x} in {}", f.name);
        return;
    }
    assert_eq!(
        sign,
        x.is_sign_negative(),
        "{what}: sign of {x:e} in {}",
        f.name
    );
    if x.is_infinite() {
        assert_eq!(m, f.inf(), "{what}: {x} in {}", f.name);
        return;
    }
    f.check_nearest(x.abs(), m, what);
}

/// Checks one float result of integer source `v`, exactly in i128: every value involved
/// (the result, its neighbours, their midpoints, |v|) is scaled by 2^55, which makes
/// each an integer (the smallest spacing met is f64's 2^-53 just below 1) below 2^120.
fn check_int_to_float(f: Fmt, v: i64, bits: u64, what: &str) {
    let sign = bits >> (f.man + f.exp) & 1 == 1;
    let m = bits & ((1u64 << (f.man + f.exp)) - 1);
    assert!(m <= f.inf(), "{what}: {v} gave NaN in {}", f.name);
    if v == 0 {
        assert_eq!(bits, 0, "{what}: 0 must give +0.0 in {}", f.name);
        return;
    }
    assert_eq!(sign, v < 0, "{what}: sign of {v} in {}", f.name);
    let a = v.unsigned_abs() as i128;
    if m == f.inf() {
        let max = f.mag(m - 1);
        let virt = f.mag(m);
        assert!(a as f64 >= (max + virt) / 2.0, "{what}: {v} gave inf");
        return;
    }
    let val = |mm: u64| -> i128 {
        let x = f.mag(mm) * 2f64.powi(55);
        assert!(x.fract() == 0.0 && x < 2f64.powi(120));
        x as i128
    };
    let r2 = val(m);
    let a2 = a << 55;
    let hi2 = (r2 + val(m + 1)) / 2;
    let lo2 = if m == 0 { 0 } else { (r2 + val(m - 1)) / 2 };
    let even = m & 1 == 0;
    let ok = (a2 < hi2 || (a2 == hi2 && even)) && (a2 > lo2 || (a2 == lo2 && even));
    assert!(ok, "{what}: {v} rounded to {:e} in {}", f.mag(m), f.name);
}

fn bits32(x: f32) -> u64 {
    x.to_bits() as u64
}

struct Xs(u64);
impl Xs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// f64 values near every rounding decision of format `f`: each midpoint between two
/// neighbours (and the overflow threshold) and a few f64 ulps either side, both signs.
fn boundary_f64s(f: Fmt, step: u64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut m = 0u64;
    while m < f.inf() {
        let mid = (f.mag(m) + f.mag(m + 1)) / 2.0;
        for d in -2i64..=2 {
            let x = f64::from_bits((mid.to_bits() as i64 + d) as u64);
            v.push(x);
            v.push(-x);
        }
        v.push(f.mag(m));
        m += step;
    }
    v
}

#[test]
fn f64_to_16_bit_and_f32_is_one_correct_rounding() {
    // Every f16 midpoint and every 7th bf16 / 4093rd f32 midpoint, ±2 f64 ulps.
    for x in boundary_f64s(F16, 1) {
        check_float(
            F16,
            x,
            CastTo::<f16>::cast_to(x).to_bits() as u64,
            "f64->f16",
        );
    }
    for x in boundary_f64s(BF16, 7) {
        check_float(
            BF16,
            x,
            CastTo::<bf16>::cast_to(x).to_bits() as u64,
            "f64->bf16",
        );
        check_float(F32, x, bits32(CastTo::<f32>::cast_to(x)), "f64->f32");
    }
    for x in boundary_f64s(F32, 4093) {
        check_float(F32, x, bits32(CastTo::<f32>::cast_to(x)), "f64->f32");
        check_float(
            BF16,
            x,
            CastTo::<bf16>::cast_to(x).to_bits() as u64,
            "f64->bf16",
        );
    }
    // Random bit patterns over the whole f64 range (NaN, inf, subnormals included).
    let mut r = Xs(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2_000_000 {
        let x = f64::from_bits(r.next());
        check_float(
            F16,
            x,
            CastTo::<f16>::cast_to(x).to_bits() as u64,
            "f64->f16",
        );
        check_float(
            BF16,
            x,
            CastTo::<bf16>::cast_to(x).to_bits() as u64,
            "f64->bf16",
        );
        check_float(F32, x, bits32(CastTo::<f32>::cast_to(x)), "f64->f32");
    }
}

#[test]
fn the_double_rounding_cases_round_once() {
    // 1 + 2^-11 + 2^-40: just above the f16 tie between 1 and 1 + 2^-10. Through f32
    // with round to nearest it would become the tie 1 + 2^-11 and then 1.0 (even);
    // rounded once it is 1 + 2^-10.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(
        CastTo::<f16>::cast_to(x),
        f16::from_f32(1.0 + 2f32.powi(-10))
    );
    assert_eq!((x as f32) as f64, 1.0 + 2f64.powi(-11)); // what double rounding sees
    assert_eq!(f16::from_f32(x as f32), f16::ONE);
    // The same below the tie: 1 + 2^-11 - 2^-40 rounds down to 1 either way.
    assert_eq!(
        CastTo::<f16>::cast_to(1.0 + 2f64.powi(-11) - 2f64.powi(-40)),
        f16::ONE
    );
    // bf16: 1 + 2^-8 + 2^-30 (f32 would round it to the tie 1 + 2^-8, then 1.0).
    let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-30);
    assert_eq!(CastTo::<bf16>::cast_to(y).to_bits(), 0x3f81);
    assert_eq!(bf16::from_f32(y as f32).to_bits(), 0x3f80);
    // Negative and subnormal ties: -(2^-25 + 2^-60) (just above half the smallest f16
    // subnormal in magnitude) gives -2^-24; exactly -2^-25 ties to -0.0.
    let z = -(2f64.powi(-25) + 2f64.powi(-60));
    assert_eq!(CastTo::<f16>::cast_to(z).to_bits(), 0x8001);
    assert_eq!(CastTo::<f16>::cast_to(-2f64.powi(-25)).to_bits(), 0x8000);
    // bf16 subnormals: 2^-134 + 2^-170 (above half of bf16's smallest, 2^-133).
    let w = 2f64.powi(-134) + 2f64.powi(-170);
    assert_eq!(CastTo::<bf16>::cast_to(w).to_bits(), 0x0001);
    assert_eq!(CastTo::<bf16>::cast_to(2f64.powi(-134)).to_bits(), 0x0000);
    // Overflow: f16 max is 65504, the threshold 65520: 65520 - 2^-30 stays 65504,
    // 65520 ties to inf; an f64 beyond f32's range gives inf in f16 and bf16.
    assert_eq!(CastTo::<f16>::cast_to(65520.0 - 2f64.powi(-30)), f16::MAX);
    assert_eq!(CastTo::<f16>::cast_to(65520.0f64), f16::INFINITY);
    assert_eq!(CastTo::<bf16>::cast_to(1e300f64), bf16::INFINITY);
    assert_eq!(CastTo::<bf16>::cast_to(-1e300f64), bf16::NEG_INFINITY);
    // bf16 max is (2 - 2^-7) 2^127; the threshold (2 - 2^-8) 2^127.
    let t = (2.0 - 2f64.powi(-8)) * 2f64.powi(127);
    assert_eq!(CastTo::<bf16>::cast_to(t), bf16::INFINITY);
    assert_eq!(CastTo::<bf16>::cast_to(t - 2f64.powi(80)), bf16::MAX);
    // i64: 2^24 + 1 ties in f32 (to 2^24); 2^24 + 3 ties up to 2^24 + 4.
    assert_eq!(CastTo::<f32>::cast_to((1i64 << 24) + 1), 16_777_216.0);
    assert_eq!(CastTo::<f32>::cast_to((1i64 << 24) + 3), 16_777_220.0);
    // i64 -> bf16: 2^40 + 2^32 + 1 is above the bf16 tie 2^40 + 2^32 (spacing 2^33):
    // once it is 2^40 + 2^33; through f32 (which drops the +1) it would tie to 2^40.
    let v = (1i64 << 40) + (1 << 32) + 1;
    let want = bf16::from_f32(((1u64 << 40) + (1 << 33)) as f32);
    assert_eq!(CastTo::<bf16>::cast_to(v), want);
    assert_eq!(
        bf16::from_f32(v as f32),
        bf16::from_f32((1u64 << 40) as f32)
    );
    assert_eq!(CastTo::<bf16>::cast_to(-v), -want);
    // i32 -> f16: 2049 (tie: 2048), 2051 (tie up: 2052), 65519 (below the threshold)
    // and 65520 (inf); i32::MIN gives -inf.
    assert_eq!(CastTo::<f16>::cast_to(2049i32), f16::from_f32(2048.0));
    assert_eq!(CastTo::<f16>::cast_to(2051i32), f16::from_f32(2052.0));
    assert_eq!(CastTo::<f16>::cast_to(65519i32), f16::MAX);
    assert_eq!(CastTo::<f16>::cast_to(65520i32), f16::INFINITY);
    assert_eq!(CastTo::<f16>::cast_to(i32::MIN), f16::NEG_INFINITY);
    // i32 -> bf16: 2^24 + 2^16 + 1 (above the bf16 tie 2^24 + 2^16; f32 keeps it, but
    // i64 -> f32 -> bf16 on a value with more bits would not).
    let u = (1i32 << 24) + (1 << 16) + 1;
    assert_eq!(
        CastTo::<bf16>::cast_to(u).to_bits(),
        bf16::from_f32(16_908_288.0).to_bits()
    );
}

#[test]
fn integers_to_floats_round_once_checked_exactly() {
    let mut r = Xs(0x1234_5678_9abc_def1);
    let mut vals: Vec<i64> = vec![0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1, 65519, 65520];
    // Values at and around every tie of every target: k * 2^s + 2^(s-1) + d.
    for s in 1..63 {
        for k in [
            1i64, 2, 3, 0x7f, 0x80, 0x81, 0x3ff, 0x401, 0xff_ffff, 0x80_0001,
        ] {
            let Some(base) = k.checked_shl(s).filter(|b| (b >> s) == k) else {
                continue;
            };
            for d in -2i64..=2 {
                if let Some(x) = base
                    .checked_add(1i64 << (s - 1))
                    .and_then(|x| x.checked_add(d))
                {
                    vals.push(x);
                    vals.push(x.wrapping_neg());
                }
            }
        }
    }
    for _ in 0..300_000 {
        let x = r.next() as i64;
        // Random magnitudes: shift by a random amount so small values occur too.
        vals.push(x >> (r.next() % 64));
    }
    for &v in &vals {
        check_int_to_float(F32, v, bits32(CastTo::<f32>::cast_to(v)), "i64->f32");
        check_int_to_float(
            F16,
            v,
            CastTo::<f16>::cast_to(v).to_bits() as u64,
            "i64->f16",
        );
        check_int_to_float(
            BF16,
            v,
            CastTo::<bf16>::cast_to(v).to_bits() as u64,
            "i64->bf16",
        );
        let w = v as i32;
        check_int_to_float(F32, w as i64, bits32(CastTo::<f32>::cast_to(w)), "i32->f32");
        check_int_to_float(
            F16,
            w as i64,
            CastTo::<f16>::cast_to(w).to_bits() as u64,
            "i32->f16",
        );
        let bb = CastTo::<bf16>::cast_to(w).to_bits() as u64;
        check_int_to_float(BF16, w as i64, bb, "i32->bf16");
        assert_eq!(CastTo::<f64>::cast_to(w), w as f64);
        assert_eq!(CastTo::<f64>::cast_to(w) as i32, w, "i32->f64 is exact");
    }
    // i64 -> f64 (53 bits) by the same exact check.
    let f64fmt = Fmt {
        name: "f64",
        man: 52,
        exp: 11,
    };
    for &v in &vals {
        let got = CastTo::<f64>::cast_to(v).to_bits();
        check_int_to_float(f64fmt, v, got, "i64->f64");
    }
}

#[test]
fn f32_sources_match_half_from_f32_and_widen_exactly() {
    let mut r = Xs(0xdead_beef_cafe_f00d);
    let mut xs: Vec<u32> = (0..2_000_000).map(|_| r.next() as u32).collect();
    xs.extend([
        0,
        0x8000_0000,
        1,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x477f_f000,
    ]);
    for b in xs {
        let x = f32::from_bits(b);
        let (h, bb) = (CastTo::<f16>::cast_to(x), CastTo::<bf16>::cast_to(x));
        let (hw, bw) = (f16::from_f32(x), bf16::from_f32(x));
        if x.is_nan() {
            assert!(h.is_nan() && bb.is_nan());
        } else {
            assert_eq!(h.to_bits(), hw.to_bits(), "f32 {b:#x} -> f16");
            assert_eq!(bb.to_bits(), bw.to_bits(), "f32 {b:#x} -> bf16");
        }
        // An f64 holding an f32 value casts like the f32.
        let d = x as f64;
        if !x.is_nan() {
            assert_eq!(CastTo::<f16>::cast_to(d).to_bits(), h.to_bits(), "{b:#x}");
            assert_eq!(CastTo::<bf16>::cast_to(d).to_bits(), bb.to_bits(), "{b:#x}");
            assert_eq!(CastTo::<f64>::cast_to(x).to_bits(), d.to_bits());
        }
    }
    // f16 <-> bf16 and the 16-bit formats to f32 / f64, over every bit pattern.
    for b in 0..=u16::MAX {
        let (x, y) = (f16::from_bits(b), bf16::from_bits(b));
        if x.is_nan() {
            assert!(CastTo::<bf16>::cast_to(x).is_nan());
            assert!(CastTo::<f64>::cast_to(x).is_nan());
        } else {
            assert_eq!(CastTo::<f32>::cast_to(x).to_bits(), x.to_f32().to_bits());
            assert_eq!(CastTo::<f64>::cast_to(x).to_bits(), x.to_f64().to_bits());
            assert_eq!(CastTo::<bf16>::cast_to(x), bf16::from_f32(x.to_f32()));
        }
        if y.is_nan() {
            assert!(CastTo::<f16>::cast_to(y).is_nan());
        } else {
            assert_eq!(CastTo::<f64>::cast_to(y).to_bits(), y.to_f64().to_bits());
            assert_eq!(CastTo::<f16>::cast_to(y), f16::from_f32(y.to_f32()));
        }
        // Same dtype: the bits, NaN payloads included.
        assert_eq!(CastTo::<f16>::cast_to(x).to_bits(), b);
        assert_eq!(CastTo::<bf16>::cast_to(y).to_bits(), b);
    }
}

#[test]
fn floats_to_integers_truncate_saturate_and_send_nan_to_zero() {
    assert_eq!(CastTo::<i32>::cast_to(2.9f32), 2);
    assert_eq!(CastTo::<i32>::cast_to(-2.9f32), -2);
    assert_eq!(CastTo::<i32>::cast_to(-0.0f64), 0);
    assert_eq!(CastTo::<i32>::cast_to(f32::NAN), 0);
    assert_eq!(CastTo::<i64>::cast_to(f64::NAN), 0);
    assert_eq!(CastTo::<i64>::cast_to(-f64::NAN), 0);
    assert_eq!(CastTo::<i32>::cast_to(f64::INFINITY), i32::MAX);
    assert_eq!(CastTo::<i32>::cast_to(f64::NEG_INFINITY), i32::MIN);
    assert_eq!(CastTo::<i32>::cast_to(2_147_483_647.9f64), i32::MAX);
    assert_eq!(CastTo::<i32>::cast_to(2_147_483_648.0f64), i32::MAX);
    assert_eq!(CastTo::<i32>::cast_to(-2_147_483_648.9f64), i32::MIN);
    assert_eq!(CastTo::<i32>::cast_to(-2_147_483_649.0f64), i32::MIN);
    assert_eq!(CastTo::<i64>::cast_to(9.3e18f64), i64::MAX);
    assert_eq!(CastTo::<i64>::cast_to(-9.3e18f32), i64::MIN);
    assert_eq!(
        CastTo::<i64>::cast_to(9_223_371_487_098_961_920.0f32),
        9_223_371_487_098_961_920
    );
    assert_eq!(CastTo::<i64>::cast_to(f16::MAX), 65504);
    assert_eq!(CastTo::<i32>::cast_to(f16::NEG_INFINITY), i32::MIN);
    assert_eq!(CastTo::<i32>::cast_to(f16::NAN), 0);
    assert_eq!(CastTo::<i64>::cast_to(bf16::MAX), i64::MAX);
    assert_eq!(CastTo::<i32>::cast_to(bf16::from_f32(-1.5)), -1);
    assert_eq!(CastTo::<i64>::cast_to(f16::from_bits(1)), 0);
    // Integer to integer: wrap down, sign-extend up.
    assert_eq!(CastTo::<i32>::cast_to(0x1_8000_0001i64), i32::MIN + 1);
    assert_eq!(CastTo::<i32>::cast_to(-1i64), -1);
    assert_eq!(CastTo::<i32>::cast_to(i64::MIN), 0);
    assert_eq!(CastTo::<i32>::cast_to(i64::MAX), -1);
    assert_eq!(CastTo::<i64>::cast_to(-5i32), -5);
    assert_eq!(CastTo::<i64>::cast_to(i32::MIN), -2_147_483_648);
}

#[test]
fn signed_zeros_infinities_and_subnormals_survive() {
    assert_eq!(CastTo::<f16>::cast_to(-0.0f64).to_bits(), 0x8000);
    assert_eq!(CastTo::<bf16>::cast_to(-0.0f32).to_bits(), 0x8000);
    assert_eq!(CastTo::<f32>::cast_to(f16::NEG_ZERO).to_bits(), 0x8000_0000);
    assert_eq!(
        CastTo::<f64>::cast_to(bf16::NEG_INFINITY),
        f64::NEG_INFINITY
    );
    assert_eq!(CastTo::<f16>::cast_to(f64::INFINITY), f16::INFINITY);
    // Subnormals kept: the smallest f16 from f64/f32; f32's smallest to bf16.
    assert_eq!(CastTo::<f16>::cast_to(2f64.powi(-24)).to_bits(), 1);
    assert_eq!(CastTo::<f32>::cast_to(2f64.powi(-149)).to_bits(), 1);
    assert_eq!(CastTo::<bf16>::cast_to(2f32.powi(-133)).to_bits(), 1);
    assert_eq!(CastTo::<f64>::cast_to(f32::from_bits(1)), 2f64.powi(-149));
    // The f32 subnormal -> bf16 edge: 2^-134 + 2^-149 rounds up to 2^-133.
    let x = 2f32.powi(-134) + f32::from_bits(1);
    assert_eq!(CastTo::<bf16>::cast_to(x).to_bits(), 1);
    assert_eq!(CastTo::<bf16>::cast_to(x as f64).to_bits(), 1);
    // NaN to every float format is a NaN.
    assert!(CastTo::<f32>::cast_to(f64::NAN).is_nan());
    assert!(CastTo::<f16>::cast_to(-f64::NAN).is_nan());
    assert!(CastTo::<bf16>::cast_to(f64::from_bits(0x7ff0_0000_0000_0001)).is_nan());
    assert!(CastTo::<f16>::cast_to(f32::from_bits(0x7f80_0001)).is_nan());
}

#[test]
fn round_to_odd_helpers() {
    // Exact values pass through; inexact ones are truncated with the last bit set.
    assert_eq!(f64_to_f32_odd(1.5), 1.5);
    let x = 1.0 + 2f64.powi(-30);
    assert_eq!(f64_to_f32_odd(x).to_bits(), 0x3f80_0001);
    assert_eq!(f64_to_f32_odd(-x).to_bits(), 0xbf80_0001);
    let y = 1.0 + 2f64.powi(-23) - 2f64.powi(-40); // rounds up to nearest, truncates down
    assert_eq!(f64_to_f32_odd(y).to_bits(), 0x3f80_0001);
    assert_eq!(f64_to_f32_odd(1e300), f32::MAX);
    assert_eq!(f64_to_f32_odd(-1e300), f32::MIN);
    assert_eq!(f64_to_f32_odd(f64::INFINITY), f32::INFINITY);
    assert_eq!(f64_to_f32_odd(1e-300).to_bits(), 1);
    assert_eq!(f64_to_f32_odd(-1e-300).to_bits(), 0x8000_0001);
    assert_eq!(f64_to_f32_odd(-0.0).to_bits(), 0x8000_0000);
    assert!(f64_to_f32_odd(f64::NAN).is_nan());
    assert_eq!(i64_to_f32_odd(0).to_bits(), 0);
    assert_eq!(i64_to_f32_odd((1 << 24) - 1), 16_777_215.0);
    // Spacing 4 at 2^25: +4 is exact, +1 and +2 truncate to 2^25 and jam to 2^25 + 4.
    assert_eq!(i64_to_f32_odd((1 << 25) + 4), 33_554_436.0);
    assert_eq!(i64_to_f32_odd((1 << 25) + 1), 33_554_436.0);
    assert_eq!(i64_to_f32_odd((1 << 25) + 2), 33_554_436.0);
    assert_eq!(
        i64_to_f32_odd((1 << 25) + 5).to_bits(),
        (33_554_436.0f32).to_bits()
    );
    assert_eq!(i64_to_f32_odd(i64::MIN), -9_223_372_036_854_775_808.0);
    assert_eq!(i64_to_f32_odd(i64::MAX).to_bits(), 0x5eff_ffff);
    assert_eq!(i64_to_f32_odd(-3), -3.0);
}
