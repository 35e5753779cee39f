//! The float8 and float4 formats ONNX names: decoding a bit pattern to its value, and
//! rounding a value to a format as ONNX's reference does (numpy with `ml_dtypes`). Every
//! value of these formats is exact in f32, which is how gpukit stores them; both
//! directions run on the host, so their bits are the same whatever the device.

use crate::elem::ElemType;

/// A float8 / float4 format: the fields the rounding needs.
#[derive(Debug, Clone, Copy)]
struct Format {
    /// Explicit mantissa bits.
    mant: i32,
    /// Exponent bias.
    bias: i32,
    /// Exponent bits.
    exp_bits: i32,
    /// The largest finite value.
    max: f64,
    /// Whether the all-ones exponent with a zero mantissa is an infinity (E5M2).
    has_inf: bool,
    /// Whether the format has a negative zero (the FNUZ formats use its pattern for
    /// their single NaN).
    neg_zero: bool,
}

fn format(ty: ElemType) -> Option<Format> {
    use ElemType::*;
    let f = |mant, bias, exp_bits, max, has_inf, neg_zero| Format {
        mant,
        bias,
        exp_bits,
        max,
        has_inf,
        neg_zero,
    };
    Some(match ty {
        F8E4M3FN => f(3, 7, 4, 448.0, false, true),
        F8E4M3FNUZ => f(3, 8, 4, 240.0, false, false),
        F8E5M2 => f(2, 15, 5, 57344.0, true, true),
        F8E5M2FNUZ => f(2, 16, 5, 57344.0, false, false),
        F4E2M1 => f(1, 1, 2, 6.0, false, true),
        _ => return None,
    })
}

/// The value of bit pattern `b` (the low bits of the byte) in format `ty` (a float8 or
/// float4 type; `None` for any other type).
pub(crate) fn decode(ty: ElemType, b: u8) -> Option<f32> {
    if ty == ElemType::F8E8M0 {
        // 2^(b - 127); all ones is NaN.
        return Some(if b == 0xff {
            f32::NAN
        } else {
            (2f64).powi(i32::from(b) - 127) as f32
        });
    }
    let f = format(ty)?;
    let width = 1 + f.exp_bits + f.mant;
    let b = u32::from(b) & ((1u32 << width) - 1);
    let sign = b >> (width - 1) == 1;
    let e = ((b >> f.mant) & ((1 << f.exp_bits) - 1)) as i32;
    let m = b & ((1 << f.mant) - 1);
    let all_ones = (1 << f.exp_bits) - 1;
    match ty {
        ElemType::F8E4M3FN if e == all_ones && m == (1 << f.mant) - 1 => return Some(f32::NAN),
        ElemType::F8E5M2 if e == all_ones => {
            return Some(if m != 0 {
                f32::NAN
            } else if sign {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            });
        }
        ElemType::F8E4M3FNUZ | ElemType::F8E5M2FNUZ if sign && e == 0 && m == 0 => {
            return Some(f32::NAN);
        }
        _ => {}
    }
    let mag = if e == 0 {
        f64::from(m) * 2f64.powi(1 - f.bias - f.mant)
    } else {
        (1.0 + f64::from(m) / f64::from(1u32 << f.mant)) * 2f64.powi(e - f.bias)
    };
    Some((if sign { -mag } else { mag }) as f32)
}

/// `x` rounded to format `ty` (a float8 or float4 type), returned as the format's value
/// in f32 (NaN for its NaN): round to nearest even on the format's grid; a result above
/// the largest finite value becomes that value when `saturate` (ONNX Cast's default,
/// always for float4, which has no infinity or NaN), else the format's infinity (E5M2)
/// or NaN. A NaN gives the format's NaN (float4: -0, as `ml_dtypes`). The FNUZ formats
/// have no -0: a negative result that rounds to zero is +0. FLOAT8E8M0 takes the
/// exponent of `x` as f32, rounded by `round_mode` (`up`, `down` or `nearest`), as
/// ONNX's `to_float8e8m0`.
pub(crate) fn round(ty: ElemType, x: f64, saturate: bool, round_mode: &str) -> f32 {
    if ty == ElemType::F8E8M0 {
        return round_e8m0(x as f32, saturate, round_mode);
    }
    let Some(f) = format(ty) else {
        return f32::NAN;
    };
    let float4 = ty == ElemType::F4E2M1;
    let saturate = saturate || float4;
    if x.is_nan() {
        // ml_dtypes gives float4 -0 for a NaN with the sign clear, +0 for one with it set.
        return match (float4, x.is_sign_negative()) {
            (false, _) => f32::NAN,
            (true, false) => -0.0,
            (true, true) => 0.0,
        };
    }
    let neg = x.is_sign_negative();
    let a = x.abs();
    let overflow = || -> f32 {
        let v = if saturate {
            f.max
        } else if f.has_inf {
            f64::INFINITY
        } else {
            return f32::NAN;
        };
        (if neg { -v } else { v }) as f32
    };
    if a.is_infinite() {
        return overflow();
    }
    // The grid spacing at a's binade, never below the subnormal spacing.
    let emin = 1 - f.bias;
    let e = if a == 0.0 {
        emin
    } else {
        (a.log2().floor() as i32).max(emin)
    };
    // log2 of a power-of-two neighbour can land one binade off; correct it.
    let e = if a >= 2f64.powi(e + 1) {
        e + 1
    } else if e > emin && a < 2f64.powi(e) {
        e - 1
    } else {
        e
    };
    let ulp = 2f64.powi(e - f.mant);
    let q = (a / ulp).round_ties_even() * ulp;
    if q > f.max {
        return overflow();
    }
    if q == 0.0 && !f.neg_zero {
        return 0.0;
    }
    (if neg { -q } else { q }) as f32
}

/// ONNX's `to_float8e8m0` for one f32: the exponent field, NaN and infinities to the
/// NaN pattern, rounded up (any fraction), down, or to nearest on the guard, round and
/// sticky bits; with `saturate` the largest exponent does not round past 254.
fn round_e8m0(x: f32, saturate: bool, round_mode: &str) -> f32 {
    let bits = x.to_bits();
    let exponent = (bits >> 23) & 0xff;
    if exponent == 0xff {
        return f32::NAN;
    }
    let round_up = match round_mode {
        "nearest" => {
            let g = bits & 0x40_0000 != 0;
            let r = bits & 0x20_0000 != 0;
            let s = bits & 0x1f_ffff != 0;
            let lsb = exponent > 0;
            g && (r || s || lsb)
        }
        "up" => bits & 0x7f_ffff != 0,
        _ => false,
    };
    let mut e = exponent;
    if round_up && !(saturate && exponent == 0xfe) {
        e += 1;
    }
    decode(ElemType::F8E8M0, e as u8).unwrap_or(f32::NAN)
}

/// The bit pattern of value `v` in format `ty` (for writing a float8 / float4 tensor):
/// the pattern whose [`decode`] is `v` (NaN: the format's NaN). `None` when `v` is not
/// a value of the format.
#[cfg(test)]
pub(crate) fn encode(ty: ElemType, v: f32) -> Option<u8> {
    let width = match ty {
        ElemType::F4E2M1 => 4,
        _ => 8,
    };
    (0u16..1 << width).map(|b| b as u8).find(|&b| {
        decode(ty, b).is_some_and(|d| {
            if v.is_nan() {
                d.is_nan()
            } else {
                d.to_bits() == v.to_bits()
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemType::*;

    const TYPES: [ElemType; 6] = [F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1, F8E8M0];

    #[test]
    fn known_values() {
        assert_eq!(decode(F8E4M3FN, 0x7e), Some(448.0));
        assert!(decode(F8E4M3FN, 0x7f).unwrap().is_nan());
        assert_eq!(decode(F8E4M3FN, 0x01), Some(2f32.powi(-9)));
        assert_eq!(decode(F8E4M3FNUZ, 0x7f), Some(240.0));
        assert!(decode(F8E4M3FNUZ, 0x80).unwrap().is_nan());
        assert_eq!(decode(F8E5M2, 0x7b), Some(57344.0));
        assert_eq!(decode(F8E5M2, 0x7c), Some(f32::INFINITY));
        assert_eq!(decode(F8E5M2, 0xfc), Some(f32::NEG_INFINITY));
        assert_eq!(decode(F8E5M2FNUZ, 0x7f), Some(57344.0));
        assert_eq!(decode(F4E2M1, 0x7), Some(6.0));
        assert_eq!(decode(F4E2M1, 0x1), Some(0.5));
        assert_eq!(decode(F4E2M1, 0xf), Some(-6.0));
        assert_eq!(decode(F8E8M0, 127), Some(1.0));
        assert_eq!(decode(F8E8M0, 0), Some(2f32.powi(-127)));
        assert_eq!(decode(F32, 0), None);
        // Rounding, as ml_dtypes: ties to even, overflow by type and saturation.
        assert_eq!(round(F8E4M3FN, 464.0, false, "up"), 448.0);
        assert!(round(F8E4M3FN, 465.0, false, "up").is_nan());
        assert_eq!(round(F8E4M3FN, 1e6, true, "up"), 448.0);
        assert_eq!(round(F8E4M3FN, f64::NEG_INFINITY, true, "up"), -448.0);
        assert_eq!(round(F8E5M2, 61439.0, false, "up"), 57344.0);
        assert_eq!(round(F8E5M2, 61440.0, false, "up"), f32::INFINITY);
        assert!(round(F8E5M2FNUZ, f64::INFINITY, false, "up").is_nan());
        assert_eq!(round(F8E4M3FNUZ, -0.0, true, "up").to_bits(), 0);
        assert_eq!(
            round(F8E4M3FN, -1e-7, true, "up").to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(round(F4E2M1, 2.5, false, "up"), 2.0);
        assert_eq!(round(F4E2M1, 3.5, false, "up"), 4.0);
        assert_eq!(round(F4E2M1, 1e6, false, "up"), 6.0);
        assert_eq!(
            round(F4E2M1, f64::NAN, false, "up").to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(round(F8E8M0, 1.1, true, "up"), 2.0);
        assert_eq!(round(F8E8M0, 1.1, true, "down"), 1.0);
        assert_eq!(round(F8E8M0, 1.6, true, "nearest"), 2.0);
    }

    /// Every pattern decodes to a value that rounds back to itself, and encodes back
    /// to a pattern of the same value (the formats' only duplicate values are NaNs).
    #[test]
    fn every_pattern_round_trips() {
        for ty in TYPES {
            let width = if ty == F4E2M1 { 4 } else { 8 };
            for b in 0u16..1 << width {
                let v = decode(ty, b as u8).unwrap();
                let back = encode(ty, v).unwrap();
                let w = decode(ty, back).unwrap();
                assert!(v.to_bits() == w.to_bits() || (v.is_nan() && w.is_nan()));
                if !v.is_nan() && ty != F8E8M0 {
                    let r = round(ty, f64::from(v), false, "up");
                    assert_eq!(r.to_bits(), v.to_bits(), "{ty:?} {b:#x} {v}");
                }
            }
        }
    }

    /// Rounding gives the nearest format value (ties to the even pattern), checked
    /// against a search over every pattern for values between the grid points.
    #[test]
    fn rounding_is_nearest_even() {
        for ty in [F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F4E2M1] {
            let width = if ty == F4E2M1 { 4 } else { 8 };
            let vals: Vec<(u8, f64)> = (0u16..1 << width)
                .filter_map(|b| {
                    let v = decode(ty, b as u8)?;
                    (v.is_finite()).then_some((b as u8, f64::from(v)))
                })
                .collect();
            let max = vals.iter().map(|v| v.1).fold(0.0, f64::max);
            for i in -4000..=4000 {
                let x = f64::from(i) * max / 3000.0 + 1e-9 * f64::from(i % 7);
                if x.abs() > max {
                    continue;
                }
                let best = vals
                    .iter()
                    .min_by(|a, b| {
                        let (da, db) = ((a.1 - x).abs(), (b.1 - x).abs());
                        da.partial_cmp(&db).unwrap().then((a.0 & 1).cmp(&(b.0 & 1)))
                    })
                    .unwrap();
                let got = f64::from(round(ty, x, true, "up"));
                assert!(
                    got == best.1 || (got == 0.0 && best.1 == 0.0),
                    "{ty:?}: {x} -> {got}, nearest {}",
                    best.1
                );
            }
        }
    }
}
