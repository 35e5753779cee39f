//! The equivalence suite for `ops::cast`: all 36 (source, target) dtype pairs on every
//! backend of [`gpukit_tests::backends`] (cpu, its SIMD/thread variants, ptx-emu, cuda
//! where present) against the reference oracle's exact-arithmetic casts, bit for bit
//! (any NaN equals any NaN), 256 proptest cases per pair (`GPUKIT_CASES`).
//!
//! The inputs reach every special value (NaN with any payload, ±inf, -0.0, subnormals,
//! the extremes, i64::MIN/MAX), empty and odd lengths, any bit pattern of the source,
//! and — what decides a cast — values at every rounding boundary of the target: the
//! midpoint between two neighbouring target values (and the overflow threshold) and a
//! few source ulps either side of it, integers whose dropped bits are exactly a tie or
//! one off it, and the integer range edges (MIN - 1, MAX + 1, ±0.5, ±0.999...).

use gpukit::cast::{CastElement, CastTo};
use gpukit::half::{bf16, f16};
use gpukit::{DType, Element, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, check_same_bits, len_with_edges, on_backends, value};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A source element type for the generators.
trait Src: TestElem + CastElement {
    /// The element with bits `b` (low bits; an integer: the value).
    fn from_raw(b: u64) -> Self;
    /// The element `k` steps away: the next bit pattern (floats) or value (integers).
    fn nudge(self, k: i64) -> Self;
}

macro_rules! float_src {
    ($t:ty, $u:ty) => {
        impl Src for $t {
            fn from_raw(b: u64) -> Self {
                <$t>::from_bits(b as $u)
            }
            fn nudge(self, k: i64) -> Self {
                <$t>::from_bits(self.to_bits().wrapping_add(k as $u))
            }
        }
    };
}
float_src!(f32, u32);
float_src!(f64, u64);
float_src!(f16, u16);
float_src!(bf16, u16);

impl Src for i64 {
    fn from_raw(b: u64) -> Self {
        b as i64
    }
    fn nudge(self, k: i64) -> Self {
        self.wrapping_add(k)
    }
}
impl Src for i32 {
    fn from_raw(b: u64) -> Self {
        b as i32
    }
    fn nudge(self, k: i64) -> Self {
        self.wrapping_add(k as i32)
    }
}

/// Stored significand and exponent bits of a float dtype.
fn layout(d: DType) -> Option<(u32, u32)> {
    match d {
        DType::F64 => Some((52, 11)),
        DType::F32 => Some((23, 8)),
        DType::F16 => Some((10, 5)),
        DType::BF16 => Some((7, 8)),
        _ => None,
    }
}

/// The value of magnitude pattern `m` of a float format (the infinity pattern gives the
/// virtual next value 2^(emax+1)).
fn mag(man: u32, expb: u32, m: u64) -> f64 {
    let bias = (1i32 << (expb - 1)) - 1;
    let e = (m >> man) as i32;
    let f = m & ((1 << man) - 1);
    if e == 0 {
        f as f64 * 2f64.powi(1 - bias - man as i32)
    } else {
        (f | (1 << man)) as f64 * 2f64.powi(e - bias - man as i32)
    }
}

/// One value at a rounding decision of target `d`, as an f64 "ideal" (rounded into the
/// source afterwards): a midpoint between two neighbours of a float target (exact in
/// f64 for f32/f16/bf16), or an integer target's range edge / a half-way fraction.
fn ideal(d: DType, r: u64, pick: u8) -> f64 {
    let sign = if r & 1 == 1 { -1.0 } else { 1.0 };
    match layout(d) {
        Some((man, expb)) if d != DType::F64 => {
            let inf = ((1u64 << expb) - 1) << man;
            let m = (r >> 1) % inf;
            sign * (mag(man, expb, m) + mag(man, expb, m + 1)) / 2.0
        }
        Some(_) => {
            // f64 targets: integers whose low bits are a tie at a random precision.
            let p = 54 + (r >> 1) % 9;
            let v = (r >> 10) as i64 >> (64 - p);
            sign * v as f64
        }
        None => {
            let (lo, hi) = if d == DType::I32 {
                (i32::MIN as f64, i32::MAX as f64)
            } else {
                (-9_223_372_036_854_775_808.0, 9_223_372_036_854_775_807.0)
            };
            let frac = [0.0, 0.5, 0.999_999_9, -0.5, -0.999_999_9][(r >> 8) as usize % 5];
            match pick % 4 {
                0 => lo + frac,
                1 => hi + frac,
                2 => (r >> 20) as i32 as f64 + frac,
                _ => sign * ((r >> 20) % 1000) as f64 + frac,
            }
        }
    }
}

/// An integer whose bits below a random position p are exactly a tie (a 1 followed
/// by zeros), or one off it: the rounding decisions of every float target.
fn int_tie(r: u64, k: i64) -> i64 {
    let len = 2 + (r % 62) as u32; // bit length
    let p = 1 + ((r >> 8) % len as u64) as u32;
    let v = ((r >> 16) | (1 << 47)) << 16 >> (64 - len);
    let v = (v & !((1u64 << p) - 1)) | (1 << (p - 1));
    let v = (v as i64).wrapping_add(k);
    if r >> 63 == 1 { v.wrapping_neg() } else { v }
}

/// One input element of a cast from `S` to target `d`.
fn cast_value<S: Src>(d: DType) -> impl Strategy<Value = S>
where
    f64: CastTo<S>,
{
    prop_oneof![
        // Moderate, tiny and huge values, and the specials of the source.
        4 => value::<S>(),
        // Any bit pattern (NaN payloads, subnormals, every magnitude); integers also
        // shifted so every bit length occurs.
        2 => (any::<u64>(), 0u32..64).prop_map(|(b, s)| {
            let x = S::from_raw(b);
            if S::DTYPE.is_float() { x } else { S::from_raw((b as i64 >> s) as u64) }
        }),
        // A rounding decision of the target, rounded into the source, then 0-2 source
        // steps either side.
        4 => (any::<u64>(), any::<u8>(), -2i64..=2).prop_map(move |(r, pick, k)| {
            let x: S = ideal(d, r, pick).cast_to();
            x.nudge(k)
        }),
        // Integer sources: exact ties at every bit position.
        2 => (any::<u64>(), -1i64..=1).prop_map(|(r, k)| {
            let v = int_tie(r, k);
            if S::DTYPE.is_float() { CastTo::<S>::cast_to(v as f64) } else { S::from_raw(v as u64) }
        }),
    ]
}

fn cast_case<S: Src>(d: DType) -> impl Strategy<Value = Vec<S>>
where
    f64: CastTo<S>,
{
    len_with_edges(5000).prop_flat_map(move |n| proptest::collection::vec(cast_value::<S>(d), n))
}

fn check_cast<S: Src + CastTo<D>, D: Element>(a: &[S]) -> Result<(), TestCaseError> {
    let want = reference::cast::<S, D>(a);
    // The CPU conversions (gpukit_core::cast) agree with the oracle on the host, too.
    let host: Vec<D> = a.iter().map(|&x| x.cast_to()).collect();
    check_same_bits("host gpukit_core::cast", &host, &want).map_err(TestCaseError::fail)?;
    let what = format!("cast {} -> {} n={}", S::DTYPE, D::DTYPE, a.len());
    on_backends(&what, &want, |kit| {
        let ba = kit.upload(a)?;
        let out = kit.alloc(D::DTYPE, a.len())?;
        ops::cast(kit, &out, &ba)?;
        out.download()
    })?;
    if S::DTYPE == D::DTYPE {
        // In place (out = a) is allowed for the same dtype and leaves the bits.
        on_backends(&format!("{what} in place"), &want, |kit| {
            let ba = kit.upload(a)?;
            ops::cast(kit, &ba, &ba)?;
            ba.download()
        })?;
    }
    Ok(())
}

macro_rules! from_src {
    ($m:ident, $s:ty) => {
        mod $m {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn to_f32(a in cast_case::<$s>(DType::F32)) { check_cast::<$s, f32>(&a)?; }
                #[test] fn to_f64(a in cast_case::<$s>(DType::F64)) { check_cast::<$s, f64>(&a)?; }
                #[test] fn to_f16(a in cast_case::<$s>(DType::F16)) { check_cast::<$s, f16>(&a)?; }
                #[test] fn to_bf16(a in cast_case::<$s>(DType::BF16)) { check_cast::<$s, bf16>(&a)?; }
                #[test] fn to_i64(a in cast_case::<$s>(DType::I64)) { check_cast::<$s, i64>(&a)?; }
                #[test] fn to_i32(a in cast_case::<$s>(DType::I32)) { check_cast::<$s, i32>(&a)?; }
            }
        }
    };
}

from_src!(from_f32, f32);
from_src!(from_f64, f64);
from_src!(from_f16, f16);
from_src!(from_bf16, bf16);
from_src!(from_i64, i64);
from_src!(from_i32, i32);

/// Large inputs (several rayon chunks on the CPU, a capped grid-stride grid on the
/// emulator) for the pairs with the most involved paths.
#[test]
fn large_inputs_split_and_agree() {
    let n = 150_001;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let f: Vec<f64> = (0..n).map(|_| f64::from_bits(next())).collect();
    let i: Vec<i64> = (0..n).map(|k| int_tie(next(), k as i64 % 3 - 1)).collect();
    let fails = [
        check_cast::<f64, f16>(&f),
        check_cast::<f64, bf16>(&f),
        check_cast::<f64, i32>(&f),
        check_cast::<i64, bf16>(&i),
        check_cast::<i64, f32>(&i),
        check_cast::<i64, i32>(&i),
    ];
    for r in fails {
        r.unwrap();
    }
}

/// A deliberately double-rounding f64 -> f16 (through a round-to-nearest f32) must be
/// caught by the comparison with the oracle on the suite's boundary inputs.
#[test]
fn a_double_rounding_cast_is_caught() {
    let x = [
        1.0 + 2f64.powi(-11) + 2f64.powi(-40),
        -(2f64.powi(-25) + 2f64.powi(-60)),
    ];
    let wrong: Vec<f16> = x.iter().map(|&v| f16::from_f32(v as f32)).collect();
    let want = reference::cast::<f64, f16>(&x);
    assert!(check_same_bits("double rounding", &wrong, &want).is_err());
    assert_eq!(want[0].to_bits(), 0x3c01);
    assert_eq!(want[1].to_bits(), 0x8001);
    for (name, kit) in backends() {
        let out = kit.alloc(DType::F16, 2).unwrap();
        ops::cast(&kit, &out, &kit.upload(&x).unwrap()).unwrap();
        let got = out.download::<f16>().unwrap();
        check_same_bits(name, &got, &want).unwrap();
    }
}
