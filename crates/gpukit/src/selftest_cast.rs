//! Self-checks of the `cast` group: every (source, target) pair of the six dtypes on
//! one random case (random bit patterns of the source, so NaN payloads, ±inf, -0.0,
//! subnormals and every magnitude; and as many values at the target's rounding
//! decisions: midpoints between neighbouring target values a few f64 steps off, integer
//! range edges and half-way fractions), compared bit for bit with the reference oracle. Each check is
//! named after its kernel family (`cast_{src}_to`) at the target dtype, so emu-check
//! reports it on the kernel `cast_{src}_to_{dst}`.

use gpukit_core::abi::cast::op_from;
use gpukit_core::half::{bf16, f16};
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, from_bits, mismatch};

/// A value at a rounding decision of target `d`, as an f64: the midpoint between two
/// neighbouring f32/f16/bf16 values (exact in f64) a few f64 steps off, an integer
/// type's range edge or a half-way fraction, or a large integer with a tie in its low
/// bits (for f64 targets).
fn boundary(d: DType, r: u64) -> f64 {
    let sign = if r >> 63 == 1 { -1.0 } else { 1.0 };
    let (man, expb) = match d {
        DType::F32 => (23, 8),
        DType::F16 => (10, 5),
        DType::BF16 => (7, 8),
        DType::F64 => return sign * (((r >> 11) | 1 << 52) as f64 * 2f64.powi((r % 11) as i32)),
        DType::I64 | DType::I32 => {
            let edge = if d == DType::I32 {
                2_147_483_648.0
            } else {
                9_223_372_036_854_775_808.0
            };
            let frac = [0.0, 0.5, -0.5, 1.0, -1.0][(r % 5) as usize];
            return match (r >> 3) % 3 {
                0 => sign * edge + frac,
                1 => ((r >> 8) as i32) as f64 + frac,
                _ => sign * ((r >> 8) % 100) as f64 + frac / 2.0,
            };
        }
    };
    let bias = (1i32 << (expb - 1)) - 1;
    let value = |m: u64| -> f64 {
        let (e, f) = ((m >> man) as i32, m & ((1 << man) - 1));
        if e == 0 {
            f as f64 * 2f64.powi(1 - bias - man)
        } else {
            (f | 1 << man) as f64 * 2f64.powi(e - bias - man)
        }
    };
    let m = (r >> 8) % (((1u64 << expb) - 1) << man);
    let mid = sign * (value(m) + value(m + 1)) / 2.0;
    // 0, 1 or 2 f64 steps either way.
    f64::from_bits((mid.to_bits() as i64 + (r % 5) as i64 - 2) as u64)
}

fn cast_check<S: Element, D: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0xca57 ^ ((S::DTYPE as u64) << 8) ^ D::DTYPE as u64);
    let n = 10_007;
    let a: Vec<S> = (0..n)
        .map(|_| {
            let r = rng.next_u64();
            if r & 1 == 0 {
                from_bits::<S>(rng.next_u64(), (r % 64) as u32)
            } else {
                // The boundary rounded once into the source (by the oracle).
                reference::cast::<f64, S>(&[boundary(D::DTYPE, rng.next_u64())])[0]
            }
        })
        .collect();
    let (ba, out) = (kit.upload(&a)?, kit.alloc(D::DTYPE, n)?);
    ops::cast(kit, &out, &ba)?;
    Ok(mismatch(
        &out.download::<D>()?,
        &reference::cast::<S, D>(&a),
    ))
}

macro_rules! from {
    ($v:ident, $s:ty, $src:expr) => {
        for (d, run) in [
            (DType::F32, cast_check::<$s, f32> as fn(&Kit, u64) -> _),
            (DType::F64, cast_check::<$s, f64>),
            (DType::F16, cast_check::<$s, f16>),
            (DType::BF16, cast_check::<$s, bf16>),
            (DType::I64, cast_check::<$s, i64>),
            (DType::I32, cast_check::<$s, i32>),
        ] {
            $v.push(Check {
                op: op_from($src),
                dtype: d,
                run,
            });
        }
    };
}

/// The cast group's checks: 36, one per kernel, in DType::ALL order.
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(36);
    from!(v, f32, DType::F32);
    from!(v, f64, DType::F64);
    from!(v, f16, DType::F16);
    from!(v, bf16, DType::BF16);
    from!(v, i64, DType::I64);
    from!(v, i32, DType::I32);
    v
}
