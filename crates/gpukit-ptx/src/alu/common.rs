//! Lane plumbing shared by the ALU families: the [`Lanes`] register type, zero and sign
//! extension, lane-wise maps, NaN canonicalisation and format helpers.

use crate::float::{self, F32, F64, Fmt, Rnd};
use crate::program::*;

/// One register across the 32 lanes of a warp.
pub(crate) type Lanes = [u64; 32];

/// `x` zero-extended from width `w` (two shifts by the same amount in every lane, so
/// a lane loop over a run-time width still vectorises).
#[inline(always)]
pub(crate) fn zx(x: u64, w: W) -> u64 {
    let s = 64 - w.bits();
    (x << s) >> s
}

/// `x` sign-extended from width `w` (as [`zx`], branch-free).
#[inline(always)]
pub(crate) fn sx(x: u64, w: W) -> i64 {
    let s = 64 - w.bits();
    ((x << s) as i64) >> s
}

/// Bit `l` of `bits` as lane `l`'s all-ones or all-zeros mask (lane blends as bitwise
/// operations, which vectorise).
#[inline(always)]
pub(crate) fn lane_masks(bits: u32) -> [u64; 32] {
    lanes(|l| 0u64.wrapping_sub(u64::from((bits >> l) & 1)))
}

/// `[f(0), f(1), .., f(31)]` as a plain loop into the caller (`std::array::from_fn`
/// can stay an out-of-line call, which inside the interpreter's per-ISA warp loops is
/// compiled for the baseline ISA and does not vectorise).
#[inline(always)]
pub(crate) fn lanes(f: impl Fn(usize) -> u64) -> Lanes {
    let mut out = [0u64; 32];
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(l);
    }
    out
}

/// `dst[l] = src[l]` in the lanes of `exec`, the others kept (as one blend).
#[inline(always)]
pub(crate) fn blend_lanes(dst: &mut Lanes, src: &Lanes, exec: u32) {
    let m = lane_masks(exec);
    for l in 0..32 {
        dst[l] = (src[l] & m[l]) | (dst[l] & !m[l]);
    }
}

#[inline(always)]
pub(super) fn map1(o: &mut Lanes, a: &Lanes, f: impl Fn(u64) -> u64) {
    for i in 0..32 {
        o[i] = f(a[i]);
    }
}

#[inline(always)]
pub(super) fn map2(o: &mut Lanes, a: &Lanes, b: &Lanes, f: impl Fn(u64, u64) -> u64) {
    for i in 0..32 {
        o[i] = f(a[i], b[i]);
    }
}

#[inline(always)]
pub(super) fn map3(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    for i in 0..32 {
        o[i] = f(a[i], b[i], c[i]);
    }
}

#[inline(always)]
pub(super) fn map4(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    d: &Lanes,
    f: impl Fn(u64, u64, u64, u64) -> u64,
) {
    for i in 0..32 {
        o[i] = f(a[i], b[i], c[i], d[i]);
    }
}

pub(super) const CANON32: u32 = 0x7FFF_FFFF;

const CANON64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

#[inline(always)]
pub(super) fn f32r(x: f32) -> u64 {
    if x.is_nan() {
        u64::from(CANON32)
    } else {
        u64::from(x.to_bits())
    }
}

#[inline(always)]
pub(super) fn f64r(x: f64) -> u64 {
    if x.is_nan() { CANON64 } else { x.to_bits() }
}

#[inline(always)]
pub(super) fn f32a(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
pub(super) fn f64a(x: u64) -> f64 {
    f64::from_bits(x)
}

pub(super) fn fmt_mask(fmt: Fmt) -> u64 {
    let bits = 1 + fmt.exp_bits + fmt.man_bits;
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Exact conversion of any supported format to f64 (for comparisons).
#[inline]
pub(super) fn to_f64(fmt: Fmt, x: u64) -> f64 {
    if fmt == F64 {
        f64::from_bits(x)
    } else if fmt == F32 {
        f64::from(f32::from_bits(x as u32))
    } else {
        f64::from_bits(float::convert(fmt, F64, x & fmt_mask(fmt), Rnd::Rn))
    }
}

/// Applies `f` to one element, or to both 16-bit halves when `x2`.
#[inline(always)]
pub(super) fn halves(x2: bool, a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    if x2 {
        let lo = f(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF) & 0xFFFF;
        let hi = f((a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF, (c >> 16) & 0xFFFF) & 0xFFFF;
        (hi << 16) | lo
    } else {
        f(a, b, c)
    }
}
