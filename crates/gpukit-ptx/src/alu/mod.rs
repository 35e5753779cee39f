//! Lane-wise semantics of every [`Alu`] operation, comparisons and the float helpers.
//! Registers hold a value's bits in their low bits; readers truncate to the width the
//! instruction names, so upper bits never matter.
//!
//! Files: `common` (the lane type and helpers), `fp` (floating-point semantics),
//! `bits` (bit fields and permutes); this file holds the dispatcher [`compute`] and
//! the comparisons.

mod bits;
mod common;
mod fp;

pub(crate) use common::{Lanes, blend_lanes, lane_masks, lanes, sx, zx};
pub(crate) use fp::{BHALF, HALF, fadd, min_max};

use gpukit_core::halfconv;

use crate::float::{self, F32, F64, Fmt, Rnd};
use crate::program::*;

use bits::*;
use common::*;
use fp::*;

/// Runs one lane-wise operation on a warp's registers: `regs[d] = f(regs[s[0]], ...)`
/// in the lanes of `exec` (the other lanes keep their values; `d` may be [`SINK`] or
/// any of the sources). Carry-chain operations are handled by the caller (they need
/// the carry flags); `s[k]` for an unused source is any register in range.
///
/// On x86-64 the whole step (the lane loops, and the temporary and masked write when
/// the destination is a source or some lanes are idle) is compiled for AVX-512 or
/// AVX2 with FMA when the CPU has them: 8 or 4 lanes per vector instruction, `fma`
/// inline rather than a library call per lane, and the 256-byte register copies as a
/// few vector moves rather than `memcpy` calls. The results are the same bits on
/// every path (IEEE arithmetic, integer operations).
pub(crate) fn exec(f: &Alu, regs: &mut [Lanes], d: u32, s: &[u32; 4], exec: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports every feature the function enables (checked
            // just above).
            unsafe { exec_avx512(f, regs, d, s, exec) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above), the only
            // features the function enables.
            unsafe { exec_avx2(f, regs, d, s, exec) };
            return;
        }
    }
    exec_lanes(f, regs, d, s, exec);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn exec_avx2(f: &Alu, regs: &mut [Lanes], d: u32, s: &[u32; 4], exec: u32) {
    exec_lanes(f, regs, d, s, exec);
}

/// [`exec`] compiled for AVX-512 (eight 64-bit lanes or sixteen f32 per vector).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
fn exec_avx512(f: &Alu, regs: &mut [Lanes], d: u32, s: &[u32; 4], exec: u32) {
    exec_lanes(f, regs, d, s, exec);
}

/// [`exec`] compiled into the caller, for a caller that is itself compiled for a
/// vector instruction set (the interpreter's per-ISA warp loops): no run-time choice,
/// no call.
#[inline(always)]
pub(crate) fn exec_inline(f: &Alu, regs: &mut [Lanes], d: u32, s: &[u32; 4], exec: u32) {
    exec_lanes(f, regs, d, s, exec);
}

/// [`compare_lanes`] compiled into the caller (as [`exec_inline`]).
#[inline(always)]
pub(crate) fn compare_inline(c: Cmp, a: &Lanes, b: &Lanes) -> u32 {
    compare_masks(c, a, b)
}

/// [`exec`]'s body. When every lane runs, the result goes straight into the
/// destination register; a source that is the destination is read from a copy of it
/// (the operations are lane-wise, so the copy holds exactly what the lanes read).
/// Otherwise the result goes through a temporary written into the executing lanes.
#[inline(always)]
fn exec_lanes(f: &Alu, regs: &mut [Lanes], d: u32, s: &[u32; 4], exec: u32) {
    let n = regs.len();
    if exec == FULL_MASK && (d as usize) < n && s.iter().all(|&x| (x as usize) < n) {
        let copy: Lanes;
        let mut copy_ref: &Lanes = &[0; 32];
        if s.contains(&d) {
            copy = regs[d as usize];
            copy_ref = &copy;
        }
        let base = regs.as_mut_ptr();
        // Every index is in bounds (checked above). A source equal to the destination
        // is replaced by `copy` (a separate local), so the shared references to the
        // sources (which may coincide with each other) never overlap the exclusive one
        // to the destination; all derive from one raw pointer and nothing else touches
        // `regs` while they live.
        let pick = |x: u32| -> &Lanes {
            if x == d {
                copy_ref
            } else {
                // SAFETY: `x` is in bounds and is not `d` (see above).
                unsafe { &*base.add(x as usize) }
            }
        };
        let src = [pick(s[0]), pick(s[1]), pick(s[2]), pick(s[3])];
        // SAFETY: `d` is in bounds and no source reference points at it (see above).
        let dst = unsafe { &mut *base.add(d as usize) };
        compute_lanes(f, src, dst);
    } else {
        let mut out = [0u64; 32];
        let src = [
            &regs[s[0] as usize],
            &regs[s[1] as usize],
            &regs[s[2] as usize],
            &regs[s[3] as usize],
        ];
        compute_lanes(f, src, &mut out);
        if d == SINK {
            return;
        }
        blend_lanes(&mut regs[d as usize], &out, exec);
    }
}

/// Every lane executing (the interpreter's `FULL`).
pub(crate) const FULL_MASK: u32 = u32::MAX;

/// The lane loops of [`exec`], writing every lane of `o` (which must not be any of
/// the sources).
#[inline(always)]
fn compute_lanes(f: &Alu, src: [&Lanes; 4], o: &mut Lanes) {
    let r = |k: usize| src[k];
    match *f {
        Alu::Mov => *o = *r(0),
        Alu::Add => map2(o, r(0), r(1), |x, y| x.wrapping_add(y)),
        Alu::Sub => map2(o, r(0), r(1), |x, y| x.wrapping_sub(y)),
        Alu::AddSatS32 => map2(o, r(0), r(1), |x, y| {
            (i64::from(x as i32) + i64::from(y as i32)).clamp(i32::MIN.into(), i32::MAX.into())
                as u64
        }),
        Alu::SubSatS32 => map2(o, r(0), r(1), |x, y| {
            (i64::from(x as i32) - i64::from(y as i32)).clamp(i32::MIN.into(), i32::MAX.into())
                as u64
        }),
        Alu::MulLo => map2(o, r(0), r(1), |x, y| x.wrapping_mul(y)),
        Alu::MulHiU(w) => map2(o, r(0), r(1), move |x, y| {
            ((u128::from(zx(x, w)) * u128::from(zx(y, w))) >> w.bits()) as u64
        }),
        Alu::MulHiS(w) => map2(o, r(0), r(1), move |x, y| {
            ((i128::from(sx(x, w)) * i128::from(sx(y, w))) >> w.bits()) as u64
        }),
        Alu::MulWideU(w) => map2(o, r(0), r(1), move |x, y| zx(x, w).wrapping_mul(zx(y, w))),
        Alu::MulWideS(w) => map2(o, r(0), r(1), move |x, y| {
            sx(x, w).wrapping_mul(sx(y, w)) as u64
        }),
        Alu::Mul24LoU => map2(o, r(0), r(1), |x, y| {
            (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF)
        }),
        Alu::Mul24HiU => map2(o, r(0), r(1), |x, y| {
            ((x & 0xFF_FFFF) * (y & 0xFF_FFFF)) >> 16
        }),
        Alu::Mul24LoS => map2(o, r(0), r(1), |x, y| {
            let (a, b) = (((x << 40) as i64) >> 40, ((y << 40) as i64) >> 40);
            a.wrapping_mul(b) as u64
        }),
        Alu::Mul24HiS => map2(o, r(0), r(1), |x, y| {
            let (a, b) = (((x << 40) as i64) >> 40, ((y << 40) as i64) >> 40);
            (a.wrapping_mul(b) >> 16) as u64
        }),
        Alu::MadLo => map3(o, r(0), r(1), r(2), |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z)
        }),
        Alu::MadHiU(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            (((u128::from(zx(x, w)) * u128::from(zx(y, w))) >> w.bits()) as u64).wrapping_add(z)
        }),
        Alu::MadHiS(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            (((i128::from(sx(x, w)) * i128::from(sx(y, w))) >> w.bits()) as u64).wrapping_add(z)
        }),
        Alu::MadWideU(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            zx(x, w).wrapping_mul(zx(y, w)).wrapping_add(z)
        }),
        Alu::MadWideS(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            (sx(x, w).wrapping_mul(sx(y, w)) as u64).wrapping_add(z)
        }),
        // Division by zero is unspecified in PTX: the emulator gives all ones for the
        // quotient and the dividend for the remainder.
        Alu::DivU(w) => map2(o, r(0), r(1), move |x, y| {
            let (a, b) = (zx(x, w), zx(y, w));
            a.checked_div(b).unwrap_or(u64::MAX)
        }),
        Alu::DivS(w) => map2(o, r(0), r(1), move |x, y| {
            let (a, b) = (sx(x, w), sx(y, w));
            if b == 0 {
                u64::MAX
            } else {
                zx(a.wrapping_div(b) as u64, w)
            }
        }),
        Alu::RemU(w) => map2(o, r(0), r(1), move |x, y| {
            let (a, b) = (zx(x, w), zx(y, w));
            if b == 0 { a } else { a % b }
        }),
        Alu::RemS(w) => map2(o, r(0), r(1), move |x, y| {
            let (a, b) = (sx(x, w), sx(y, w));
            if b == 0 {
                a as u64
            } else {
                zx(a.wrapping_rem(b) as u64, w)
            }
        }),
        Alu::AbsS(w) => map1(o, r(0), move |x| sx(x, w).wrapping_abs() as u64),
        Alu::Neg => map1(o, r(0), |x| x.wrapping_neg()),
        Alu::MinU(w) => map2(o, r(0), r(1), move |x, y| zx(x, w).min(zx(y, w))),
        Alu::MaxU(w) => map2(o, r(0), r(1), move |x, y| zx(x, w).max(zx(y, w))),
        Alu::MinS(w) => map2(o, r(0), r(1), move |x, y| sx(x, w).min(sx(y, w)) as u64),
        Alu::MaxS(w) => map2(o, r(0), r(1), move |x, y| sx(x, w).max(sx(y, w)) as u64),
        Alu::SadU(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            zx(x, w).abs_diff(zx(y, w)).wrapping_add(z)
        }),
        Alu::SadS(w) => map3(o, r(0), r(1), r(2), move |x, y, z| {
            sx(x, w).abs_diff(sx(y, w)).wrapping_add(z)
        }),
        Alu::And => map2(o, r(0), r(1), |x, y| x & y),
        Alu::Or => map2(o, r(0), r(1), |x, y| x | y),
        Alu::Xor => map2(o, r(0), r(1), |x, y| x ^ y),
        Alu::Not => map1(o, r(0), |x| !x),
        Alu::Cnot(w) => map1(o, r(0), move |x| u64::from(zx(x, w) == 0)),
        Alu::Shl(w) => map2(o, r(0), r(1), move |x, y| {
            let n = y as u32;
            if n >= w.bits() { 0 } else { x << n }
        }),
        Alu::ShrU(w) => map2(o, r(0), r(1), move |x, y| {
            let n = y as u32;
            if n >= w.bits() { 0 } else { zx(x, w) >> n }
        }),
        Alu::ShrS(w) => map2(o, r(0), r(1), move |x, y| {
            let n = (y as u32).min(w.bits() - 1);
            (sx(x, w) >> n) as u64
        }),
        Alu::Popc(w) => map1(o, r(0), move |x| u64::from(zx(x, w).count_ones())),
        Alu::Clz(w) => map1(o, r(0), move |x| {
            u64::from(zx(x, w).leading_zeros() - (64 - w.bits()))
        }),
        Alu::Brev(w) => map1(o, r(0), move |x| zx(x, w).reverse_bits() >> (64 - w.bits())),
        Alu::Bfind {
            w,
            signed,
            shiftamt,
        } => map1(o, r(0), move |x| bfind(w, signed, shiftamt, x)),
        Alu::Bfe { w, signed } => map3(o, r(0), r(1), r(2), move |x, y, z| bfe(w, signed, x, y, z)),
        Alu::Bfi(w) => map4(o, r(0), r(1), r(2), r(3), move |a, b, c, d| {
            bfi(w, a, b, c, d)
        }),
        Alu::Prmt(mode) => map3(o, r(0), r(1), r(2), move |a, b, c| prmt(mode, a, b, c)),
        Alu::Lop3 => map4(o, r(0), r(1), r(2), r(3), |a, b, c, l| {
            lop3(a, b, c, l & 0xFF)
        }),
        Alu::Shf { left, clamp } => map3(o, r(0), r(1), r(2), move |a, b, c| {
            let c = c as u32;
            let n = if clamp { c.min(32) } else { c & 31 };
            let v = (u64::from(b as u32) << 32) | u64::from(a as u32);
            if left {
                ((v << n) >> 32) & 0xFFFF_FFFF
            } else {
                (v >> n) & 0xFFFF_FFFF
            }
        }),
        Alu::AddCc { .. } | Alu::MadCc { .. } => *o = *r(0),
        Alu::AddF32 => map2(o, r(0), r(1), |x, y| f32r(f32a(x) + f32a(y))),
        Alu::SubF32 => map2(o, r(0), r(1), |x, y| f32r(f32a(x) - f32a(y))),
        Alu::MulF32 => map2(o, r(0), r(1), |x, y| f32r(f32a(x) * f32a(y))),
        Alu::FmaF32 => map3(o, r(0), r(1), r(2), |x, y, z| {
            f32r(f32a(x).mul_add(f32a(y), f32a(z)))
        }),
        Alu::DivF32 => map2(o, r(0), r(1), |x, y| f32r(f32a(x) / f32a(y))),
        Alu::SqrtF32 => map1(o, r(0), |x| f32r(f32a(x).sqrt())),
        Alu::AddF64 => map2(o, r(0), r(1), |x, y| f64r(f64a(x) + f64a(y))),
        Alu::SubF64 => map2(o, r(0), r(1), |x, y| f64r(f64a(x) - f64a(y))),
        Alu::MulF64 => map2(o, r(0), r(1), |x, y| f64r(f64a(x) * f64a(y))),
        Alu::FmaF64 => map3(o, r(0), r(1), r(2), |x, y, z| {
            f64r(f64a(x).mul_add(f64a(y), f64a(z)))
        }),
        Alu::DivF64 => map2(o, r(0), r(1), |x, y| f64r(f64a(x) / f64a(y))),
        Alu::SqrtF64 => map1(o, r(0), |x| f64r(f64a(x).sqrt())),
        Alu::Float(op, m) => match op {
            FOp::Sqrt | FOp::Rcp => map1(o, r(0), move |x| float_op(op, m, x, 0, 0)),
            FOp::Fma => map3(o, r(0), r(1), r(2), move |x, y, z| float_op(op, m, x, y, z)),
            _ => map2(o, r(0), r(1), move |x, y| float_op(op, m, x, y, 0)),
        },
        Alu::MinMax(mm) => map2(o, r(0), r(1), move |x, y| min_max(mm, x, y)),
        Alu::AbsF { fmt, ftz, x2 } => map1(
            o,
            r(0),
            #[inline(always)]
            move |x| {
                halves(x2, x, 0, 0, |a, _, _| {
                    let a = a & fmt_mask(fmt);
                    let a = if ftz { fmt.ftz(a) } else { a };
                    fmt.abs(a)
                })
            },
        ),
        Alu::NegF { fmt, ftz, x2 } => map1(
            o,
            r(0),
            #[inline(always)]
            move |x| {
                halves(x2, x, 0, 0, |a, _, _| {
                    let a = a & fmt_mask(fmt);
                    let a = if ftz { fmt.ftz(a) } else { a };
                    fmt.neg(a)
                })
            },
        ),
        Alu::Copysign(fmt) => map2(o, r(0), r(1), move |a, b| {
            let sign = 1u64 << (fmt.exp_bits + fmt.man_bits);
            (b & fmt_mask(fmt) & !sign) | (a & sign)
        }),
        Alu::Approx(k, fmt, ftz) => map2(o, r(0), r(1), move |a, b| approx(k, fmt, ftz, a, b)),
        Alu::CvtInt {
            from,
            from_signed,
            to,
            to_signed,
            sat,
        } if !sat => {
            // Without saturation the conversion is an extension from `from` and one
            // to the register from `to` (`sx(zx(v, to), to) == sx(v, to)`): shift pairs
            // by amounts fixed for the instruction, one loop per signedness pair so
            // each vectorises (the saturating form below works in i128, lane by lane).
            match (from_signed, to_signed) {
                (false, false) => map1(o, r(0), move |x| zx(zx(x, from), to)),
                (false, true) => map1(o, r(0), move |x| sx(zx(x, from), to) as u64),
                (true, false) => map1(o, r(0), move |x| zx(sx(x, from) as u64, to)),
                (true, true) => map1(o, r(0), move |x| sx(sx(x, from) as u64, to) as u64),
            }
        }
        Alu::CvtInt {
            from,
            from_signed,
            to,
            to_signed,
            ..
        } => map1(o, r(0), move |x| {
            // Saturating: clamped to `to`'s range in i128.
            let v: i128 = if from_signed {
                i128::from(sx(x, from))
            } else {
                i128::from(zx(x, from))
            };
            let v = v.clamp(int_min(to, to_signed), int_max(to, to_signed));
            let t = zx(v as u64, to);
            if to_signed { sx(t, to) as u64 } else { t }
        }),
        Alu::CvtF2F {
            from,
            to,
            rnd,
            ftz,
            sat,
            relu,
            satfinite,
        } => {
            // Exact widenings without modifiers: the value as it is (NaN canonical).
            let plain = !(ftz || sat || relu || satfinite);
            let canon = |v: f32| {
                if v.is_nan() {
                    F32.canonical_nan
                } else {
                    u64::from(v.to_bits())
                }
            };
            if plain && from == float::F16 && to == F32 {
                map1(o, r(0), |x| canon(f16_as_f32(x)))
            } else if plain && from == float::BF16 && to == F32 {
                map1(o, r(0), |x| canon(bf16_as_f32(x)))
            } else if plain && from == F32 && to == F64 {
                map1(o, r(0), |x| f64r(f64::from(f32a(x))))
            } else if plain
                && rnd == Rnd::Rn
                && from == F32
                && (to == float::F16 || to == float::BF16)
            {
                // Round to nearest even through gpukit-core's branch-free narrowing
                // (IEEE: overflow to infinity, gradual underflow), NaN canonical; one
                // loop per format so each inlines its conversion.
                macro_rules! narrow_with {
                    ($f:path) => {
                        map1(
                            o,
                            r(0),
                            #[inline(always)]
                            |x| {
                                let v = f32a(x);
                                if v.is_nan() {
                                    to.canonical_nan
                                } else {
                                    u64::from($f(v))
                                }
                            },
                        )
                    };
                }
                if to == float::F16 {
                    narrow_with!(halfconv::f32_to_f16)
                } else {
                    narrow_with!(halfconv::f32_to_bf16)
                }
            } else {
                map1(o, r(0), move |x| {
                    cvt_f2f(from, to, rnd, ftz, sat, relu, satfinite, x)
                })
            }
        }
        // f32 or f64 to a 32- or 64-bit integer without flushing: the hardware's exact
        // rounding to an integral value, then Rust's saturating conversion (the range
        // clamp of `float::to_int`); NaN gives the instruction's NaN value.
        Alu::CvtF2I {
            from,
            rnd,
            to,
            signed,
            ftz: false,
            nan,
        } if (from == F64 || from == F32) && rnd != Rnd::Rna && matches!(to, W::W32 | W::W64) => {
            let round: fn(f64) -> f64 = match rnd {
                Rnd::Rn => f64::round_ties_even,
                Rnd::Rz => f64::trunc,
                Rnd::Rm => f64::floor,
                _ => f64::ceil,
            };
            let wide = |x: u64| -> f64 {
                if from == F64 {
                    f64a(x)
                } else {
                    f64::from(f32a(x))
                }
            };
            macro_rules! to_int_with {
                ($t:ty, $u:ty) => {
                    map1(
                        o,
                        r(0),
                        #[inline(always)]
                        |x| {
                            let v = wide(x);
                            if v.is_nan() {
                                nan
                            } else {
                                round(v) as $t as $u as u64
                            }
                        },
                    )
                };
            }
            match (to, signed) {
                (W::W32, true) => to_int_with!(i32, i64),
                (W::W32, false) => to_int_with!(u32, u64),
                (_, true) => to_int_with!(i64, i64),
                _ => to_int_with!(u64, u64),
            }
        }
        Alu::CvtF2I {
            from,
            rnd,
            to,
            signed,
            ftz,
            nan,
        } => map1(o, r(0), move |x| {
            let mut x = x & fmt_mask(from);
            if ftz && from == F32 {
                x = from.ftz(x);
            }
            let v = float::to_int(from, x, rnd, to.bits(), signed, nan);
            if signed { sx(v, to) as u64 } else { v }
        }),
        // To f32 or f64, round to nearest, no saturation: Rust's `as` conversions,
        // which round to nearest even (exact IEEE conversions), in vector lanes.
        Alu::CvtI2F {
            from,
            signed,
            to,
            rnd: Rnd::Rn,
            sat: false,
        } if to == F32 || to == F64 => {
            // One loop per signedness and format, each with its conversion inlined.
            macro_rules! from_int_with {
                ($ext:path, $t:ty, $bits:path) => {
                    map1(
                        o,
                        r(0),
                        #[inline(always)]
                        |x| $bits($ext(x, from) as $t),
                    )
                };
            }
            match (signed, to == F64) {
                (true, true) => from_int_with!(sx, f64, f64r),
                (false, true) => from_int_with!(zx, f64, f64r),
                (true, false) => from_int_with!(sx, f32, f32r),
                (false, false) => from_int_with!(zx, f32, f32r),
            }
        }
        Alu::CvtI2F {
            from,
            signed,
            to,
            rnd,
            sat,
        } => map1(o, r(0), move |x| {
            let (neg, mag) = if signed {
                let v = sx(x, from);
                (v < 0, u128::from(v.unsigned_abs()))
            } else {
                (false, u128::from(zx(x, from)))
            };
            let r = float::from_int(to, neg, mag, rnd);
            if sat { float::saturate(to, r) } else { r }
        }),
        // f32 and f64 without modifiers: the hardware's exact roundToIntegral (sign
        // of zero kept, as the soft-float core does), NaN canonical.
        Alu::CvtRoundInt {
            fmt,
            rnd,
            ftz: false,
            sat: false,
        } if (fmt == F64 || fmt == F32) && rnd != Rnd::Rna => {
            macro_rules! round_with {
                ($f:expr) => {
                    if fmt == F64 {
                        map1(o, r(0), |x| f64r($f(f64a(x))))
                    } else {
                        map1(o, r(0), |x| f32r(($f)(f64::from(f32a(x))) as f32))
                    }
                };
            }
            match rnd {
                Rnd::Rn => round_with!(f64::round_ties_even),
                Rnd::Rz => round_with!(f64::trunc),
                Rnd::Rm => round_with!(f64::floor),
                _ => round_with!(f64::ceil),
            }
        }
        Alu::CvtRoundInt { fmt, rnd, ftz, sat } => map1(o, r(0), move |x| {
            let mut x = x & fmt_mask(fmt);
            if ftz {
                x = fmt.ftz(x);
            }
            let mut v = float::round_to_integral(fmt, x, rnd);
            if sat {
                v = float::saturate(fmt, v);
            }
            if ftz { fmt.ftz(v) } else { v }
        }),
        Alu::CvtPack2 {
            to,
            rnd,
            relu,
            satfinite,
        } => map2(o, r(0), r(1), move |a, b| {
            let hi = cvt_f2f(F32, to, rnd, false, false, relu, satfinite, a);
            let lo = cvt_f2f(F32, to, rnd, false, false, relu, satfinite, b);
            (hi << 16) | lo
        }),
        Alu::Pack { bits, n } => {
            let mask = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            *o = [0u64; 32];
            for k in 0..usize::from(n).min(4) {
                let src = r(k);
                for l in 0..32 {
                    o[l] |= (src[l] & mask) << (u32::from(bits) * k as u32);
                }
            }
        }
    }
}

/// Evaluates a comparison for one lane.
#[inline]
pub(crate) fn compare(c: Cmp, x: u64, y: u64) -> bool {
    match c.ty {
        CmpTy::U(w) => {
            let (a, b) = (zx(x, w), zx(y, w));
            int_cmp(c.op, a.cmp(&b))
        }
        CmpTy::S(w) => {
            let (a, b) = (sx(x, w), sx(y, w));
            int_cmp(c.op, a.cmp(&b))
        }
        CmpTy::F(fmt) => {
            let (mut x, mut y) = (x & fmt_mask(fmt), y & fmt_mask(fmt));
            if c.ftz {
                x = fmt.ftz(x);
                y = fmt.ftz(y);
            }
            let (a, b) = (to_f64(fmt, x), to_f64(fmt, y));
            let nan = a.is_nan() || b.is_nan();
            match c.op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b && !nan,
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                CmpOp::Ge => a >= b,
                CmpOp::Equ => nan || a == b,
                CmpOp::Neu => nan || a != b,
                CmpOp::Ltu => nan || a < b,
                CmpOp::Leu => nan || a <= b,
                CmpOp::Gtu => nan || a > b,
                CmpOp::Geu => nan || a >= b,
                CmpOp::Num => !nan,
                CmpOp::Nan => nan,
            }
        }
    }
}

/// [`compare`] over all 32 lanes: bit `l` of the result is lane `l`'s outcome. The
/// operand type and the operator are chosen once, outside the lane loop (the common
/// types compare natively: f32 and f64 order exactly as their f64 images do).
pub(crate) fn compare_lanes(c: Cmp, a: &Lanes, b: &Lanes) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only feature the
        // function enables.
        return unsafe { compare_avx2(c, a, b) };
    }
    compare_masks(c, a, b)
}

/// [`compare_lanes`] compiled for AVX2 (the same comparisons, wider vectors).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn compare_avx2(c: Cmp, a: &Lanes, b: &Lanes) -> u32 {
    compare_masks(c, a, b)
}

#[inline(always)]
fn compare_masks(c: Cmp, a: &Lanes, b: &Lanes) -> u32 {
    match c.ty {
        CmpTy::U(W::W32) => int_mask(c.op, a, b, |x| x as u32),
        CmpTy::S(W::W32) => int_mask(c.op, a, b, |x| x as i32),
        CmpTy::U(W::W64) => int_mask(c.op, a, b, |x| x),
        CmpTy::S(W::W64) => int_mask(c.op, a, b, |x| x as i64),
        CmpTy::U(w) => int_mask(c.op, a, b, |x| zx(x, w)),
        CmpTy::S(w) => int_mask(c.op, a, b, |x| sx(x, w)),
        CmpTy::F(fmt) if fmt == F32 && !c.ftz => {
            float_mask(c.op, a, b, |x| f32::from_bits(x as u32))
        }
        CmpTy::F(fmt) if fmt == F64 && !c.ftz => float_mask(c.op, a, b, f64::from_bits),
        // Halves compare exactly as their f32 images.
        CmpTy::F(fmt) if fmt == float::F16 && !c.ftz => float_mask(c.op, a, b, f16_as_f32),
        CmpTy::F(fmt) if fmt == float::BF16 && !c.ftz => float_mask(c.op, a, b, bf16_as_f32),
        CmpTy::F(_) => {
            let mut m = 0u32;
            for l in 0..32 {
                m |= u32::from(compare(c, a[l], b[l])) << l;
            }
            m
        }
    }
}

/// The f16 (bf16) in the low 16 bits of a register as the f32 of the same value: exact,
/// NaNs stay NaNs (gpukit-core's branch-free conversions, which vectorise).
#[inline(always)]
fn f16_as_f32(x: u64) -> f32 {
    halfconv::f16_to_f32(x as u16)
}

#[inline(always)]
fn bf16_as_f32(x: u64) -> f32 {
    halfconv::bf16_to_f32(x as u16)
}

/// The lanes where `p(key(x[l]), key(y[l]))` holds, as a mask.
#[inline(always)]
fn mask_of<T: Copy>(x: &Lanes, y: &Lanes, key: impl Fn(u64) -> T, p: impl Fn(T, T) -> bool) -> u32 {
    let mut m = 0u32;
    for l in 0..32 {
        m |= u32::from(p(key(x[l]), key(y[l]))) << l;
    }
    m
}

/// Integer comparisons (the unordered operators do not apply: false, as [`int_cmp`]).
#[inline(always)]
fn int_mask<T: Ord + Copy>(op: CmpOp, x: &Lanes, y: &Lanes, k: impl Fn(u64) -> T) -> u32 {
    match op {
        CmpOp::Eq => mask_of(x, y, k, |a, b| a == b),
        CmpOp::Ne => mask_of(x, y, k, |a, b| a != b),
        CmpOp::Lt => mask_of(x, y, k, |a, b| a < b),
        CmpOp::Le => mask_of(x, y, k, |a, b| a <= b),
        CmpOp::Gt => mask_of(x, y, k, |a, b| a > b),
        CmpOp::Ge => mask_of(x, y, k, |a, b| a >= b),
        _ => 0,
    }
}

/// Float comparisons with PTX's ordered and unordered operators (as [`compare`]).
// With a NaN operand `a < b || a > b` is false while `a != b` is true, and `!(a >= b)`
// is true while `a < b` is false: the spelled-out forms are the point.
#[allow(
    clippy::eq_op,
    clippy::double_comparisons,
    clippy::neg_cmp_op_on_partial_ord
)]
#[inline(always)]
fn float_mask<T: PartialOrd + Copy>(op: CmpOp, x: &Lanes, y: &Lanes, k: impl Fn(u64) -> T) -> u32 {
    match op {
        CmpOp::Eq => mask_of(x, y, k, |a, b| a == b),
        CmpOp::Ne => mask_of(x, y, k, |a, b| a < b || a > b),
        CmpOp::Lt => mask_of(x, y, k, |a, b| a < b),
        CmpOp::Le => mask_of(x, y, k, |a, b| a <= b),
        CmpOp::Gt => mask_of(x, y, k, |a, b| a > b),
        CmpOp::Ge => mask_of(x, y, k, |a, b| a >= b),
        CmpOp::Equ => mask_of(x, y, k, |a, b| !(a < b || a > b)),
        CmpOp::Neu => mask_of(x, y, k, |a, b| a != b),
        CmpOp::Ltu => mask_of(x, y, k, |a, b| !(a >= b)),
        CmpOp::Leu => mask_of(x, y, k, |a, b| !(a > b)),
        CmpOp::Gtu => mask_of(x, y, k, |a, b| !(a <= b)),
        CmpOp::Geu => mask_of(x, y, k, |a, b| !(a < b)),
        CmpOp::Num => mask_of(x, y, k, |a, b| a == a && b == b),
        CmpOp::Nan => mask_of(x, y, k, |a, b| a != a || b != b),
    }
}

fn int_cmp(op: CmpOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CmpOp::Eq => o == Equal,
        CmpOp::Ne => o != Equal,
        CmpOp::Lt => o == Less,
        CmpOp::Le => o != Greater,
        CmpOp::Gt => o == Greater,
        CmpOp::Ge => o != Less,
        _ => false,
    }
}

/// `testp` for one lane.
pub(crate) fn testp(op: TestOp, fmt: Fmt, x: u64) -> bool {
    let x = x & fmt_mask(fmt);
    let nan = fmt.is_nan(x);
    let inf = fmt.is_inf(x);
    match op {
        TestOp::Finite => !nan && !inf,
        TestOp::Infinite => inf,
        TestOp::Number => !nan,
        TestOp::NotANumber => nan,
        TestOp::Normal => !nan && !inf && !fmt.is_subnormal(x),
        TestOp::Subnormal => fmt.is_subnormal(x),
    }
}

#[cfg(test)]
mod tests;
