//! Branch-free conversions between f32 and the 16-bit float formats.
//!
//! They return exactly the bits of the `half` crate's conversions (round to nearest,
//! ties to even; a NaN keeps the top of its payload and becomes quiet; overflow gives
//! infinity; gradual underflow), but are written as selects between fully computed
//! paths, so that a loop converting a slice compiles to SIMD code inside the CPU
//! backend's dispatch contexts (the `half` crate's per-value run-time detection of F16C
//! keeps such loops scalar). The tests compare them with `half` on every f16/bf16 bit
//! pattern and on every f32 boundary; `GPUKIT_HALFCONV_EXHAUSTIVE=1` compares all 2^32
//! f32 inputs.
//!
//! They assume the default floating-point environment (round to nearest, subnormals
//! neither flushed nor treated as zero), as every kernel of gpukit does.

/// `2^112` (moves an f16 exponent bias of 15 to f32's 127).
const TWO_POW_112: f32 = f32::from_bits((127 + 112) << 23);
/// `0.5`: adding it to `|x| < 2^-14` rounds `|x|` to a multiple of `2^-24` (the f16
/// subnormal spacing), to nearest even, in the FPU.
const HALF: u32 = 126 << 23;

/// f16 bits to f32 (exact; a NaN is made quiet, its payload kept).
#[inline(always)]
pub fn f16_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let em = h & 0x7fff;
    // Finite values (subnormals included): the f16 bits placed in an f32, rescaled by an
    // exact power of two.
    let finite = (f32::from_bits(em << 13) * TWO_POW_112).to_bits();
    let man = em & 0x03ff;
    let quiet = if man != 0 { 0x0040_0000 } else { 0 };
    let special = 0x7f80_0000 | (man << 13) | quiet;
    let r = if em >= 0x7c00 { special } else { finite };
    f32::from_bits(r | sign)
}

/// f32 to f16 bits, rounded to nearest even (overflow to infinity, gradual underflow;
/// a NaN becomes the quiet NaN with the top ten payload bits kept).
#[inline(always)]
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = (b >> 16) & 0x8000;
    let a = b & 0x7fff_ffff;
    let nan = 0x7c00 | 0x0200 | ((a & 0x007f_ffff) >> 13);
    // |x| < 2^-14: the FPU rounds |x| + 0.5 at 2^-24; the bits above 0.5's are the
    // subnormal (or, after a carry, the smallest normal) f16.
    let sub = (f32::from_bits(a) + f32::from_bits(HALF))
        .to_bits()
        .wrapping_sub(HALF);
    // Normal range: rebias, then round the 13 dropped bits to nearest even (a carry
    // into the exponent is the correct next binade, or infinity).
    let odd = (a >> 13) & 1;
    let normal = a.wrapping_sub(112 << 23).wrapping_add(0x0fff + odd) >> 13;
    let r = if a > 0x7f80_0000 {
        nan
    } else if a >= 143 << 23 {
        0x7c00
    } else if a < 113 << 23 {
        sub
    } else {
        normal
    };
    (r | sign) as u16
}

/// bf16 bits to f32 (exact; a NaN is made quiet, its payload kept).
#[inline(always)]
pub fn bf16_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let quiet = if h & 0x7fff > 0x7f80 { 0x0040 } else { 0 };
    f32::from_bits((h | quiet) << 16)
}

/// f32 to bf16 bits, rounded to nearest even (a NaN keeps the top of its payload and
/// becomes quiet).
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> u16 {
    let b = x.to_bits();
    let nan = (b >> 16) | 0x0040;
    let rounded = b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16;
    let r = if b & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    };
    r as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    #[test]
    fn every_f16_and_bf16_widens_like_half() {
        for h in 0..=u16::MAX {
            assert_eq!(
                f16_to_f32(h).to_bits(),
                f16::from_bits(h).to_f32().to_bits(),
                "f16 {h:#06x}"
            );
            assert_eq!(
                bf16_to_f32(h).to_bits(),
                bf16::from_bits(h).to_f32().to_bits(),
                "bf16 {h:#06x}"
            );
            // The widening is exact: narrowing back is the identity (NaNs: quiet).
            let back = f32_to_f16(f16_to_f32(h));
            if f16::from_bits(h).is_nan() {
                assert!(f16::from_bits(back).is_nan());
            } else {
                assert_eq!(back, h);
            }
        }
    }

    fn check_narrow(b: u32) {
        let x = f32::from_bits(b);
        assert_eq!(
            f32_to_f16(x),
            f16::from_f32(x).to_bits(),
            "f16 of {b:#010x}"
        );
        assert_eq!(
            f32_to_bf16(x),
            bf16::from_f32(x).to_bits(),
            "bf16 of {b:#010x}"
        );
    }

    #[test]
    fn boundaries_and_samples_narrow_like_half() {
        // Around every f16 and bf16 value (both signs): the value, its neighbours, and
        // the midpoints' neighbourhoods, which is where rounding decides.
        for h in 0..=0x7fffu32 {
            let c = f16_to_f32(h as u16).to_bits();
            for d in [0u32, 1, 2, 0x0fff, 0x1000, 0x1001, 0x1fff] {
                for s in [0, 0x8000_0000] {
                    check_narrow((c.wrapping_add(d)) | s);
                    check_narrow((c.wrapping_sub(d)) | s);
                }
            }
            let c = h << 16;
            for d in [0u32, 1, 0x7fff, 0x8000, 0x8001, 0xffff] {
                for s in [0, 0x8000_0000] {
                    check_narrow((c.wrapping_add(d)) | s);
                }
            }
        }
        // f32 subnormals, the overflow edge, infinities and NaN payloads.
        for b in [
            0u32,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x3380_0000,
            0x3300_0000,
            0x3300_0001,
            0x477f_efff,
            0x477f_f000,
            0x477f_f001,
            0x4780_0000,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7f80_0001,
            0x7fc0_0000,
            0x7fff_ffff,
            0x7fa0_1234,
        ] {
            check_narrow(b);
            check_narrow(b | 0x8000_0000);
        }
        // A pseudo-random sweep of the whole f32 range.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2_000_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            check_narrow(s as u32);
        }
    }

    /// All 2^32 f32 inputs (`GPUKIT_HALFCONV_EXHAUSTIVE=1`; about a minute in release).
    #[test]
    fn exhaustive_narrowing() {
        if std::env::var_os("GPUKIT_HALFCONV_EXHAUSTIVE").is_none() {
            return;
        }
        for b in 0..=u32::MAX {
            check_narrow(b);
        }
    }
}
