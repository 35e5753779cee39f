//! The cast oracle: every conversion between the six dtypes computed from the exact
//! value of the source element, with integer arithmetic only.
//!
//! It shares no code with the CPU kernel's conversions (`gpukit_core::cast`, which use
//! the hardware's float conversions and round-to-odd narrowing): here each element is
//! decoded from its bits into `±mag · 2^exp` (an exact integer significand), rounded
//! once in `u128` to the target format by the textbook rule (keep the bits above the
//! target's quantum, round half to even on the remainder), and encoded into the
//! target's bits. The rules are those of docs/numerics.md, "Casts".

use gpukit_core::bytemuck;
use gpukit_core::{DType, Element};

/// An element's exact value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Exact {
    Nan,
    Inf {
        neg: bool,
    },
    /// `±mag · 2^exp` (`mag = 0` is a zero of that sign).
    Num {
        neg: bool,
        mag: u128,
        exp: i32,
    },
}

/// Stored significand bits and exponent bits of a float dtype.
fn layout(d: DType) -> Option<(u32, u32)> {
    match d {
        DType::F64 => Some((52, 11)),
        DType::F32 => Some((23, 8)),
        DType::F16 => Some((10, 5)),
        DType::BF16 => Some((7, 8)),
        DType::I64 | DType::I32 => None,
    }
}

/// The element's bits, zero-extended.
fn bits_of<T: Element>(x: T) -> u64 {
    let b = bytemuck::bytes_of(&x);
    match b.len() {
        2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
        4 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

/// The element with the low `size` bytes of `bits`.
fn from_bits<T: Element>(bits: u64) -> T {
    match T::DTYPE.size() {
        2 => bytemuck::pod_read_unaligned(&(bits as u16).to_ne_bytes()),
        4 => bytemuck::pod_read_unaligned(&(bits as u32).to_ne_bytes()),
        _ => bytemuck::pod_read_unaligned(&bits.to_ne_bytes()),
    }
}

fn decode<T: Element>(x: T) -> Exact {
    let bits = bits_of(x);
    match layout(T::DTYPE) {
        Some((man, expb)) => {
            let neg = (bits >> (man + expb)) & 1 == 1;
            let e = ((bits >> man) & ((1 << expb) - 1)) as i32;
            let f = (bits & ((1 << man) - 1)) as u128;
            let bias = (1i32 << (expb - 1)) - 1;
            if e == (1 << expb) - 1 {
                if f == 0 {
                    Exact::Inf { neg }
                } else {
                    Exact::Nan
                }
            } else if e == 0 {
                Exact::Num {
                    neg,
                    mag: f,
                    exp: 1 - bias - man as i32,
                }
            } else {
                Exact::Num {
                    neg,
                    mag: f | (1 << man),
                    exp: e - bias - man as i32,
                }
            }
        }
        None => {
            // Sign-extend the integer from its width.
            let w = T::DTYPE.size() as u32 * 8;
            let v = ((bits << (64 - w)) as i64) >> (64 - w);
            Exact::Num {
                neg: v < 0,
                mag: v.unsigned_abs() as u128,
                exp: 0,
            }
        }
    }
}

/// `v` rounded once to nearest even in the float format (`man`, `expb`): its bits.
fn encode_float(man: u32, expb: u32, v: Exact) -> u64 {
    let sign_bit = 1u64 << (man + expb);
    let inf = ((1u64 << expb) - 1) << man;
    let (neg, mag, exp) = match v {
        // The quiet NaN (payloads are not part of the contract).
        Exact::Nan => return inf | (1 << (man - 1)),
        Exact::Inf { neg } => return inf | if neg { sign_bit } else { 0 },
        Exact::Num { neg, mag, exp } => (neg, mag, exp),
    };
    let sign = if neg { sign_bit } else { 0 };
    if mag == 0 {
        return sign;
    }
    let bias = (1i32 << (expb - 1)) - 1;
    let emin = 1 - bias;
    // The value's binary exponent: 2^top <= |v| < 2^(top+1).
    let top = (127 - mag.leading_zeros()) as i32 + exp;
    // The target's quantum (weight of its last significand bit) at this magnitude:
    // fixed below the normal range (subnormals), else `man` bits below the top bit.
    let q = top.max(emin) - man as i32;
    let shift = q - exp;
    // m = |v| / 2^q rounded; m <= 2^(man+1) since |v| < 2^(top+1) and q >= top - man.
    let m: u128 = if shift <= 0 {
        // Exact: the value is a multiple of the quantum.
        mag << (-shift) as u32
    } else if shift > 120 {
        // Far below half the smallest subnormal (mag < 2^65): rounds to zero.
        0
    } else {
        let s = shift as u32;
        let kept = mag >> s;
        let rem = mag - (kept << s);
        let half = 1u128 << (s - 1);
        if rem > half || (rem == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    // bits = ((biased exponent of the quantum's binade) - 1) << man, plus m (eb >= 0:
    // q >= emin - man). A carry of m into 2^(man+1) moves to the next binade, and a
    // subnormal m reaching 2^man becomes the smallest normal, by the same sum; a sum
    // at or past the infinity pattern is an overflow.
    let eb = (q + man as i32 + bias - 1) as u64;
    let bits = (eb << man) + m as u64;
    if bits >= inf {
        return inf | sign;
    }
    bits | sign
}

/// `v` truncated toward zero into a signed integer of `w` bits, saturating; NaN -> 0.
fn encode_int(w: u32, v: Exact) -> u64 {
    let max = (1i128 << (w - 1)) - 1;
    let min = -(1i128 << (w - 1));
    let r: i128 = match v {
        Exact::Nan => 0,
        Exact::Inf { neg } => {
            if neg {
                min
            } else {
                max
            }
        }
        Exact::Num { neg, mag, exp } => {
            // |value| truncated, capped at 2^64 (beyond every target's range).
            let cap = 1u128 << 64;
            let t = if exp >= 0 {
                if exp >= 64 || mag.leading_zeros() < 64 + exp as u32 {
                    if mag == 0 { 0 } else { cap }
                } else {
                    mag << exp as u32
                }
            } else if -exp >= 128 {
                0
            } else {
                mag >> (-exp) as u32
            };
            let t = t.min(cap) as i128;
            if neg { (-t).max(min) } else { t.min(max) }
        }
    };
    (r as u64) & (u64::MAX >> (64 - w))
}

/// One element of `S` cast to `D` by the contract.
fn cast_one<S: Element, D: Element>(x: S) -> D {
    if S::DTYPE == D::DTYPE {
        // The same dtype: a copy of the bits.
        return from_bits(bits_of(x));
    }
    let v = decode(x);
    let bits = match (layout(D::DTYPE), S::DTYPE.is_float()) {
        (Some((man, expb)), _) => encode_float(man, expb, v),
        (None, true) => encode_int(D::DTYPE.size() as u32 * 8, v),
        (None, false) => {
            // Integer to integer: the value modulo 2^w, as a two's complement pattern
            // (i64 -> i32 wraps; i32 -> i64 is the value itself).
            let Exact::Num { neg, mag, .. } = v else {
                unreachable!("integers decode to numbers")
            };
            let w = D::DTYPE.size() as u32 * 8;
            let value: i128 = if neg { -(mag as i128) } else { mag as i128 };
            (value.rem_euclid(1i128 << w)) as u64
        }
    };
    from_bits(bits)
}

/// `a` converted element by element to `D` (docs/numerics.md, "Casts"): to a float, one
/// rounding of the exact value to nearest even (subnormals kept, overflow to ±inf, -0.0
/// kept, NaN to a NaN); float to integer, truncation toward zero with saturation and
/// NaN → 0; i64 → i32 wraps; i32 → i64 sign-extends; the same dtype copies the bits.
pub fn cast<S: Element, D: Element>(a: &[S]) -> Vec<D> {
    a.iter().map(|&x| cast_one::<S, D>(x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpukit_core::half::{bf16, f16};

    #[test]
    fn decode_encode_round_trip_every_16_bit_pattern() {
        for b in 0..=u16::MAX {
            let (x, y) = (f16::from_bits(b), bf16::from_bits(b));
            if !x.is_nan() {
                assert_eq!(encode_float(10, 5, decode(x)), b as u64);
                assert_eq!(encode_float(7, 8, decode(y)), b as u64);
            }
        }
        assert_eq!(
            decode(-3i32),
            Exact::Num {
                neg: true,
                mag: 3,
                exp: 0
            }
        );
        assert_eq!(
            decode(i64::MIN),
            Exact::Num {
                neg: true,
                mag: 1 << 63,
                exp: 0
            }
        );
    }

    #[test]
    fn saturation_and_wrapping() {
        assert_eq!(
            cast::<f64, i32>(&[3e9, -3e9, f64::NAN, -0.9, 2.5]),
            [i32::MAX, i32::MIN, 0, 0, 2]
        );
        assert_eq!(
            cast::<f32, i64>(&[f32::INFINITY, 1e19, -1e19]),
            [i64::MAX, i64::MAX, i64::MIN]
        );
        assert_eq!(
            cast::<i64, i32>(&[1 << 32, (1 << 31) + 5, -1]),
            [0, i32::MIN + 5, -1]
        );
        assert_eq!(cast::<i32, i64>(&[i32::MIN]), [i32::MIN as i64]);
    }
}
