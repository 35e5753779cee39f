//! The cast contract for one element: [`CastTo`], implemented for every pair of the six
//! dtypes, as the CPU kernel computes it (the CUDA kernels in `kernels-cuda/cast.cu`
//! mirror these functions line for line; the reference oracle computes the same
//! results by an independent exact algorithm).
//!
//! The rules (docs/numerics.md, "Casts"):
//!
//! - **to a float** (from a float or an integer): the exact source value rounded *once*
//!   to nearest, ties to even, in the target format; subnormals are kept (never
//!   flushed), ±inf stays ±inf, -0.0 keeps its sign, a NaN gives a NaN (sign and
//!   payload unspecified), a finite value beyond the target's range gives ±inf as
//!   round-to-nearest does (|x| >= max + half an ulp);
//! - **float to integer**: truncation toward zero, NaN → 0, values beyond the integer
//!   type's range saturate at its min / max (Rust's `as`, PTX `cvt.rzi` with a NaN
//!   fix-up);
//! - **integer to integer**: i64 → i32 wraps (two's complement truncation), i32 → i64
//!   sign-extends;
//! - **same dtype**: a copy of the bits.
//!
//! One rounding where a direct hardware conversion would round twice: f64 → f16/bf16
//! and i64/i32 → f16/bf16 first narrow to f32 with *round to odd* ([`f64_to_f32_odd`],
//! [`i64_to_f32_odd`]), then round to nearest even into 16 bits. Round to odd at 24
//! bits keeps every bit the second rounding needs (it has at least 2 more bits than
//! f16's 11 and bf16's 8, also at f32's subnormal spacing of 2^-149 against bf16's
//! 2^-133), so the pair rounds as one correct rounding would (Boldo and Melquiond,
//! "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
//! odd", 2008). The functions are branch-free selects, so a slice loop vectorises.

use half::{bf16, f16};

use crate::Element;
use crate::halfconv::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// Conversion of one element to `D` by the cast contract (module docs).
pub trait CastTo<D: Element>: Element {
    /// `self` converted to `D`.
    fn cast_to(self) -> D;
}

/// `x` rounded to f32 *to odd*: truncated toward zero, and the lowest significand bit
/// set when the truncation was inexact. Finite values beyond f32's range give ±f32::MAX
/// (odd), ±inf stays ±inf, NaN stays NaN (payload unspecified).
#[inline(always)]
pub fn f64_to_f32_odd(x: f64) -> f32 {
    let r = x as f32; // to nearest even
    let back = r as f64;
    let bits = r.to_bits();
    // Rounded away from zero (|r| > |x|, infinity included): one step back toward
    // zero on the magnitude (the sign bit is untouched: |r| > 0 there).
    let over = back.abs() > x.abs();
    let t = if over { bits.wrapping_sub(1) } else { bits };
    // Inexact: jam the lowest bit (NaN: back != x too; it stays a NaN).
    let inexact = back != x;
    f32::from_bits(t | inexact as u32)
}

/// `v` rounded to f32 *to odd* (exact below 2^24 in magnitude): the top 24 significant
/// bits of |v| kept, the lowest of them set when any dropped bit was set.
#[inline(always)]
pub fn i64_to_f32_odd(v: i64) -> f32 {
    let a = v.unsigned_abs();
    // Significant bits beyond 24 (0 when |v| < 2^24; at most 40).
    let s = 40u32.saturating_sub(a.leading_zeros());
    let dropped = a & ((1u64 << s) - 1);
    // At most 24 significant bits: converting is exact.
    let m = ((a >> s) | (dropped != 0) as u64) << s;
    let f = m as f32;
    f32::from_bits(f.to_bits() | (((v < 0) as u32) << 31))
}

#[inline(always)]
fn h(x: f32) -> f16 {
    f16::from_bits(f32_to_f16(x))
}

#[inline(always)]
fn b(x: f32) -> bf16 {
    bf16::from_bits(f32_to_bf16(x))
}

#[inline(always)]
fn wf16(x: f16) -> f32 {
    f16_to_f32(x.to_bits())
}

#[inline(always)]
fn wbf16(x: bf16) -> f32 {
    bf16_to_f32(x.to_bits())
}

macro_rules! cast {
    ($s:ty => $d:ty, |$x:ident| $e:expr) => {
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast_to(self) -> $d {
                let $x = self;
                $e
            }
        }
    };
}

// From f32: every float target is one rounding of the exact value; integers by `as`
// (truncation, saturation, NaN -> 0).
cast!(f32 => f32, |x| x);
cast!(f32 => f64, |x| x as f64);
cast!(f32 => f16, |x| h(x));
cast!(f32 => bf16, |x| b(x));
cast!(f32 => i64, |x| x as i64);
cast!(f32 => i32, |x| x as i32);

// From f64: f32 directly; the 16-bit formats through round-to-odd f32.
cast!(f64 => f32, |x| x as f32);
cast!(f64 => f64, |x| x);
cast!(f64 => f16, |x| h(f64_to_f32_odd(x)));
cast!(f64 => bf16, |x| b(f64_to_f32_odd(x)));
cast!(f64 => i64, |x| x as i64);
cast!(f64 => i32, |x| x as i32);

// From f16 / bf16: widened exactly to f32, then as from f32.
cast!(f16 => f32, |x| wf16(x));
cast!(f16 => f64, |x| wf16(x) as f64);
cast!(f16 => f16, |x| x);
cast!(f16 => bf16, |x| b(wf16(x)));
cast!(f16 => i64, |x| wf16(x) as i64);
cast!(f16 => i32, |x| wf16(x) as i32);
cast!(bf16 => f32, |x| wbf16(x));
cast!(bf16 => f64, |x| wbf16(x) as f64);
cast!(bf16 => f16, |x| h(wbf16(x)));
cast!(bf16 => bf16, |x| x);
cast!(bf16 => i64, |x| wbf16(x) as i64);
cast!(bf16 => i32, |x| wbf16(x) as i32);

// From i64: Rust's int-to-float `as` rounds once to nearest even; the 16-bit formats
// through round-to-odd f32; i32 wraps.
cast!(i64 => f32, |v| v as f32);
cast!(i64 => f64, |v| v as f64);
cast!(i64 => f16, |v| h(i64_to_f32_odd(v)));
cast!(i64 => bf16, |v| b(i64_to_f32_odd(v)));
cast!(i64 => i64, |v| v);
cast!(i64 => i32, |v| v as i32);

// From i32: f32 rounds once (`as`), f64 is exact; the 16-bit formats as from i64.
cast!(i32 => f32, |v| v as f32);
cast!(i32 => f64, |v| v as f64);
cast!(i32 => f16, |v| h(i64_to_f32_odd(v as i64)));
cast!(i32 => bf16, |v| b(i64_to_f32_odd(v as i64)));
cast!(i32 => i64, |v| v as i64);
cast!(i32 => i32, |v| v);

/// An element type that casts to every dtype: `CastTo<D>` for all six `D`.
pub trait CastElement:
    CastTo<f32> + CastTo<f64> + CastTo<f16> + CastTo<bf16> + CastTo<i64> + CastTo<i32>
{
}

impl<T> CastElement for T where
    T: CastTo<f32> + CastTo<f64> + CastTo<f16> + CastTo<bf16> + CastTo<i64> + CastTo<i32>
{
}

#[cfg(test)]
mod tests;
