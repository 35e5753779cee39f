//! Lane-wise semantics of every [`Alu`] operation, comparisons and the float helpers.
//! Registers hold a value's bits in their low bits; readers truncate to the width the
//! instruction names, so upper bits never matter.

use crate::float::{self, BF16, F16, F32, F64, Fmt, Rnd};
use crate::program::*;

/// One register across the 32 lanes of a warp.
pub(crate) type Lanes = [u64; 32];

#[inline(always)]
pub(crate) fn zx(x: u64, w: W) -> u64 {
    match w {
        W::W8 => u64::from(x as u8),
        W::W16 => u64::from(x as u16),
        W::W32 => u64::from(x as u32),
        W::W64 => x,
    }
}

#[inline(always)]
pub(crate) fn sx(x: u64, w: W) -> i64 {
    match w {
        W::W8 => i64::from(x as i8),
        W::W16 => i64::from(x as i16),
        W::W32 => i64::from(x as i32),
        W::W64 => x as i64,
    }
}

#[inline(always)]
fn map1(a: &Lanes, f: impl Fn(u64) -> u64) -> Lanes {
    let mut o = [0u64; 32];
    for i in 0..32 {
        o[i] = f(a[i]);
    }
    o
}

#[inline(always)]
fn map2(a: &Lanes, b: &Lanes, f: impl Fn(u64, u64) -> u64) -> Lanes {
    let mut o = [0u64; 32];
    for i in 0..32 {
        o[i] = f(a[i], b[i]);
    }
    o
}

#[inline(always)]
fn map3(a: &Lanes, b: &Lanes, c: &Lanes, f: impl Fn(u64, u64, u64) -> u64) -> Lanes {
    let mut o = [0u64; 32];
    for i in 0..32 {
        o[i] = f(a[i], b[i], c[i]);
    }
    o
}

#[inline(always)]
fn map4(
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    d: &Lanes,
    f: impl Fn(u64, u64, u64, u64) -> u64,
) -> Lanes {
    let mut o = [0u64; 32];
    for i in 0..32 {
        o[i] = f(a[i], b[i], c[i], d[i]);
    }
    o
}

const CANON32: u32 = 0x7FFF_FFFF;
const CANON64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

#[inline(always)]
fn f32r(x: f32) -> u64 {
    if x.is_nan() {
        u64::from(CANON32)
    } else {
        u64::from(x.to_bits())
    }
}

#[inline(always)]
fn f64r(x: f64) -> u64 {
    if x.is_nan() { CANON64 } else { x.to_bits() }
}

#[inline(always)]
fn f32a(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
fn f64a(x: u64) -> f64 {
    f64::from_bits(x)
}

fn fmt_mask(fmt: Fmt) -> u64 {
    let bits = 1 + fmt.exp_bits + fmt.man_bits;
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Exact conversion of any supported format to f64 (for comparisons).
#[inline]
pub(crate) fn to_f64(fmt: Fmt, x: u64) -> f64 {
    if fmt == F64 {
        f64::from_bits(x)
    } else if fmt == F32 {
        f64::from(f32::from_bits(x as u32))
    } else {
        f64::from_bits(float::convert(fmt, F64, x & fmt_mask(fmt), Rnd::Rn))
    }
}

/// Applies `f` to one element, or to both 16-bit halves when `x2`.
#[inline]
fn halves(x2: bool, a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    if x2 {
        let lo = f(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF) & 0xFFFF;
        let hi = f((a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF, (c >> 16) & 0xFFFF) & 0xFFFF;
        (hi << 16) | lo
    } else {
        f(a, b, c)
    }
}

/// The generic float operation (any format, rounding, ftz, sat, relu).
pub(crate) fn float_op(op: FOp, m: FMods, a: u64, b: u64, c: u64) -> u64 {
    let fmt = m.fmt;
    let mask = fmt_mask(fmt);
    halves(m.x2, a, b, c, |a, b, c| {
        let (mut a, mut b, mut c) = (a & mask, b & mask, c & mask);
        if m.ftz {
            a = fmt.ftz(a);
            b = fmt.ftz(b);
            c = fmt.ftz(c);
        }
        let mut r = match op {
            FOp::Add => float::add(fmt, a, b, m.rnd),
            FOp::Sub => {
                if fmt.is_nan(b) {
                    fmt.canonical_nan
                } else {
                    float::add(fmt, a, fmt.neg(b), m.rnd)
                }
            }
            FOp::Mul => float::mul(fmt, a, b, m.rnd),
            FOp::Fma => float::fma(fmt, a, b, c, m.rnd),
            FOp::Div => float::div(fmt, a, b, m.rnd),
            FOp::Sqrt => float::sqrt(fmt, a, m.rnd),
            FOp::Rcp => {
                let one = float::convert(F64, fmt, 1.0f64.to_bits(), Rnd::Rn);
                float::div(fmt, one, a, m.rnd)
            }
        };
        if m.relu {
            if fmt.is_nan(r) {
                r = fmt.canonical_nan;
            } else if fmt.sign(r) {
                r = 0;
            }
        }
        if m.sat {
            r = float::saturate(fmt, r);
        }
        if m.ftz {
            r = fmt.ftz(r);
        }
        r
    })
}

/// `min`/`max` with PTX's rules: a NaN operand is ignored unless `.NaN`; +0 > -0.
pub(crate) fn min_max(mm: MinMax, a: u64, b: u64) -> u64 {
    let fmt = mm.fmt;
    let mask = fmt_mask(fmt);
    halves(mm.x2, a, b, 0, |a, b, _| {
        let (mut a, mut b) = (a & mask, b & mask);
        if mm.ftz {
            a = fmt.ftz(a);
            b = fmt.ftz(b);
        }
        let xor = fmt.sign(a) != fmt.sign(b);
        if mm.xorsign_abs {
            a = fmt.abs(a);
            b = fmt.abs(b);
        }
        let (na, nb) = (fmt.is_nan(a), fmt.is_nan(b));
        let r = if (na && nb) || (mm.nan && (na || nb)) {
            return fmt.canonical_nan;
        } else if na {
            b
        } else if nb {
            a
        } else {
            let (x, y) = (to_f64(fmt, a), to_f64(fmt, b));
            if x == y {
                // Equal values differ only for ±0: +0 > -0.
                let a_neg = fmt.sign(a);
                if mm.max == a_neg { b } else { a }
            } else if (x > y) == mm.max {
                a
            } else {
                b
            }
        };
        let mut r = if mm.xorsign_abs {
            if xor { r | (mask & !(mask >> 1)) } else { r }
        } else {
            r
        };
        if mm.ftz {
            r = fmt.ftz(r);
        }
        r
    })
}

fn approx(k: Approx, fmt: Fmt, ftz: bool, a: u64, b: u64) -> u64 {
    let fl = |x: u64| if ftz { fmt.ftz(x) } else { x };
    let (a, b) = (fl(a & fmt_mask(fmt)), fl(b & fmt_mask(fmt)));
    let x = to_f64(fmt, a);
    let y = to_f64(fmt, b);
    let r = match k {
        Approx::Rcp => 1.0 / x,
        Approx::Rsqrt => 1.0 / x.sqrt(),
        Approx::Sqrt => x.sqrt(),
        Approx::Ex2 => x.exp2(),
        Approx::Lg2 => x.log2(),
        Approx::Sin => x.sin(),
        Approx::Cos => x.cos(),
        Approx::Tanh => x.tanh(),
        Approx::Div => x / y,
    };
    let bits = if fmt == F64 {
        f64r(r)
    } else {
        float::convert(F64, fmt, f64r(r), Rnd::Rn)
    };
    fl(bits)
}

fn bfe(w: W, signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let msb = w.bits() - 1;
    let pos = (b & 0xFF) as u32;
    let len = (c & 0xFF) as u32;
    let a = zx(a, w);
    let sbit = if !signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

fn bfi(w: W, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = w.bits() - 1;
    let pos = (c & 0xFF) as u32;
    let len = (d & 0xFF) as u32;
    let mut f = zx(b, w);
    let mut i = 0;
    while i < len && pos + i <= msb {
        let bit = (a >> i) & 1;
        f = (f & !(1u64 << (pos + i))) | (bit << (pos + i));
        i += 1;
    }
    f
}

fn bfind(w: W, signed: bool, shiftamt: bool, a: u64) -> u64 {
    let msb = w.bits() - 1;
    let mut a = zx(a, w);
    if signed && (a >> msb) & 1 == 1 {
        a = zx(!a, w);
    }
    if a == 0 {
        return 0xFFFF_FFFF;
    }
    let d = 63 - a.leading_zeros();
    u64::from(if shiftamt { msb - d } else { d })
}

fn prmt(mode: u8, a: u64, b: u64, c: u64) -> u64 {
    let tmp64 = (u64::from(b as u32) << 32) | u64::from(a as u32);
    let byte = |i: u64| (tmp64 >> (8 * (i & 7))) & 0xFF;
    let c = c as u32;
    let mut d = 0u64;
    if mode == 0 {
        for k in 0..4 {
            let sel = u64::from((c >> (4 * k)) & 0xF);
            let v = byte(sel & 7);
            let v = if sel & 8 != 0 {
                if v & 0x80 != 0 { 0xFF } else { 0 }
            } else {
                v
            };
            d |= v << (8 * k);
        }
        return d;
    }
    let s = u64::from(c & 3);
    let sel: [u64; 4] = match mode {
        // f4e: forward 4 extract
        1 => [0u64, 1, 2, 3].map(|k| s + k),
        // b4e: backward 4 extract
        2 => [0u64, 1, 2, 3].map(|k| s.wrapping_sub(k) & 7),
        // rc8: replicate 8
        3 => [s; 4],
        // ecl: edge clamp left
        4 => [0u64, 1, 2, 3].map(|k| k.max(s)),
        // ecr: edge clamp right
        5 => [0u64, 1, 2, 3].map(|k| k.min(s)),
        // rc16: replicate 16
        _ => {
            let h = s & 1;
            [2 * h, 2 * h + 1, 2 * h, 2 * h + 1]
        }
    };
    for (k, sv) in sel.iter().enumerate() {
        d |= byte(*sv & 7) << (8 * k);
    }
    d
}

fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut r = 0u64;
    for i in 0..8u64 {
        if (lut >> i) & 1 == 1 {
            let ta = if i & 4 != 0 { a } else { !a };
            let tb = if i & 2 != 0 { b } else { !b };
            let tc = if i & 1 != 0 { c } else { !c };
            r |= ta & tb & tc;
        }
    }
    r & 0xFFFF_FFFF
}

fn int_max(w: W, signed: bool) -> i128 {
    if signed {
        (1i128 << (w.bits() - 1)) - 1
    } else {
        (1i128 << w.bits()) - 1
    }
}

fn int_min(w: W, signed: bool) -> i128 {
    if signed {
        -(1i128 << (w.bits() - 1))
    } else {
        0
    }
}

fn max_norm(fmt: Fmt) -> u64 {
    ((((1u64 << fmt.exp_bits) - 2) << fmt.man_bits) | ((1u64 << fmt.man_bits) - 1)) & fmt_mask(fmt)
}

#[allow(clippy::too_many_arguments)]
fn cvt_f2f(
    from: Fmt,
    to: Fmt,
    rnd: Rnd,
    ftz: bool,
    sat: bool,
    relu: bool,
    satfinite: bool,
    x: u64,
) -> u64 {
    let mut x = x & fmt_mask(from);
    if ftz && from == F32 {
        x = from.ftz(x);
    }
    let mut r =
        if satfinite && !from.is_nan(x) && to_f64(from, from.abs(x)) > to_f64(to, max_norm(to)) {
            max_norm(to)
                | if from.sign(x) {
                    1u64 << (to.exp_bits + to.man_bits)
                } else {
                    0
                }
        } else if from == to {
            if from.is_nan(x) { to.canonical_nan } else { x }
        } else {
            float::convert(from, to, x, rnd)
        };
    if relu {
        if to.is_nan(r) {
            r = to.canonical_nan;
        } else if to.sign(r) {
            r = 0;
        }
    }
    if sat {
        r = float::saturate(to, r);
    }
    if ftz && to == F32 {
        r = to.ftz(r);
    }
    r
}

/// Computes one lane-wise operation over all 32 lanes. `regs[s[k]]` are the sources.
/// Carry-chain operations are handled by the caller (they need the carry flags).
pub(crate) fn compute(f: &Alu, regs: &[Lanes], s: &[u32; 4]) -> Lanes {
    let r = |k: usize| &regs[s[k] as usize];
    match *f {
        Alu::Mov => *r(0),
        Alu::Add => map2(r(0), r(1), |x, y| x.wrapping_add(y)),
        Alu::Sub => map2(r(0), r(1), |x, y| x.wrapping_sub(y)),
        Alu::AddSatS32 => map2(r(0), r(1), |x, y| {
            (i64::from(x as i32) + i64::from(y as i32)).clamp(i32::MIN.into(), i32::MAX.into())
                as u64
        }),
        Alu::SubSatS32 => map2(r(0), r(1), |x, y| {
            (i64::from(x as i32) - i64::from(y as i32)).clamp(i32::MIN.into(), i32::MAX.into())
                as u64
        }),
        Alu::MulLo => map2(r(0), r(1), |x, y| x.wrapping_mul(y)),
        Alu::MulHiU(w) => map2(r(0), r(1), move |x, y| {
            ((u128::from(zx(x, w)) * u128::from(zx(y, w))) >> w.bits()) as u64
        }),
        Alu::MulHiS(w) => map2(r(0), r(1), move |x, y| {
            ((i128::from(sx(x, w)) * i128::from(sx(y, w))) >> w.bits()) as u64
        }),
        Alu::MulWideU(w) => map2(r(0), r(1), move |x, y| zx(x, w).wrapping_mul(zx(y, w))),
        Alu::MulWideS(w) => map2(r(0), r(1), move |x, y| {
            sx(x, w).wrapping_mul(sx(y, w)) as u64
        }),
        Alu::Mul24LoU => map2(r(0), r(1), |x, y| {
            (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF)
        }),
        Alu::Mul24HiU => map2(r(0), r(1), |x, y| ((x & 0xFF_FFFF) * (y & 0xFF_FFFF)) >> 16),
        Alu::Mul24LoS => map2(r(0), r(1), |x, y| {
            let (a, b) = (((x << 40) as i64) >> 40, ((y << 40) as i64) >> 40);
            a.wrapping_mul(b) as u64
        }),
        Alu::Mul24HiS => map2(r(0), r(1), |x, y| {
            let (a, b) = (((x << 40) as i64) >> 40, ((y << 40) as i64) >> 40);
            (a.wrapping_mul(b) >> 16) as u64
        }),
        Alu::MadLo => map3(r(0), r(1), r(2), |x, y, z| {
            x.wrapping_mul(y).wrapping_add(z)
        }),
        Alu::MadHiU(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            (((u128::from(zx(x, w)) * u128::from(zx(y, w))) >> w.bits()) as u64).wrapping_add(z)
        }),
        Alu::MadHiS(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            (((i128::from(sx(x, w)) * i128::from(sx(y, w))) >> w.bits()) as u64).wrapping_add(z)
        }),
        Alu::MadWideU(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            zx(x, w).wrapping_mul(zx(y, w)).wrapping_add(z)
        }),
        Alu::MadWideS(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            (sx(x, w).wrapping_mul(sx(y, w)) as u64).wrapping_add(z)
        }),
        // Division by zero is unspecified in PTX: the emulator gives all ones for the
        // quotient and the dividend for the remainder.
        Alu::DivU(w) => map2(r(0), r(1), move |x, y| {
            let (a, b) = (zx(x, w), zx(y, w));
            a.checked_div(b).unwrap_or(u64::MAX)
        }),
        Alu::DivS(w) => map2(r(0), r(1), move |x, y| {
            let (a, b) = (sx(x, w), sx(y, w));
            if b == 0 {
                u64::MAX
            } else {
                zx(a.wrapping_div(b) as u64, w)
            }
        }),
        Alu::RemU(w) => map2(r(0), r(1), move |x, y| {
            let (a, b) = (zx(x, w), zx(y, w));
            if b == 0 { a } else { a % b }
        }),
        Alu::RemS(w) => map2(r(0), r(1), move |x, y| {
            let (a, b) = (sx(x, w), sx(y, w));
            if b == 0 {
                a as u64
            } else {
                zx(a.wrapping_rem(b) as u64, w)
            }
        }),
        Alu::AbsS(w) => map1(r(0), move |x| sx(x, w).wrapping_abs() as u64),
        Alu::Neg => map1(r(0), |x| x.wrapping_neg()),
        Alu::MinU(w) => map2(r(0), r(1), move |x, y| zx(x, w).min(zx(y, w))),
        Alu::MaxU(w) => map2(r(0), r(1), move |x, y| zx(x, w).max(zx(y, w))),
        Alu::MinS(w) => map2(r(0), r(1), move |x, y| sx(x, w).min(sx(y, w)) as u64),
        Alu::MaxS(w) => map2(r(0), r(1), move |x, y| sx(x, w).max(sx(y, w)) as u64),
        Alu::SadU(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            zx(x, w).abs_diff(zx(y, w)).wrapping_add(z)
        }),
        Alu::SadS(w) => map3(r(0), r(1), r(2), move |x, y, z| {
            sx(x, w).abs_diff(sx(y, w)).wrapping_add(z)
        }),
        Alu::And => map2(r(0), r(1), |x, y| x & y),
        Alu::Or => map2(r(0), r(1), |x, y| x | y),
        Alu::Xor => map2(r(0), r(1), |x, y| x ^ y),
        Alu::Not => map1(r(0), |x| !x),
        Alu::Cnot(w) => map1(r(0), move |x| u64::from(zx(x, w) == 0)),
        Alu::Shl(w) => map2(r(0), r(1), move |x, y| {
            let n = y as u32;
            if n >= w.bits() { 0 } else { x << n }
        }),
        Alu::ShrU(w) => map2(r(0), r(1), move |x, y| {
            let n = y as u32;
            if n >= w.bits() { 0 } else { zx(x, w) >> n }
        }),
        Alu::ShrS(w) => map2(r(0), r(1), move |x, y| {
            let n = (y as u32).min(w.bits() - 1);
            (sx(x, w) >> n) as u64
        }),
        Alu::Popc(w) => map1(r(0), move |x| u64::from(zx(x, w).count_ones())),
        Alu::Clz(w) => map1(r(0), move |x| {
            u64::from(zx(x, w).leading_zeros() - (64 - w.bits()))
        }),
        Alu::Brev(w) => map1(r(0), move |x| zx(x, w).reverse_bits() >> (64 - w.bits())),
        Alu::Bfind {
            w,
            signed,
            shiftamt,
        } => map1(r(0), move |x| bfind(w, signed, shiftamt, x)),
        Alu::Bfe { w, signed } => map3(r(0), r(1), r(2), move |x, y, z| bfe(w, signed, x, y, z)),
        Alu::Bfi(w) => map4(r(0), r(1), r(2), r(3), move |a, b, c, d| bfi(w, a, b, c, d)),
        Alu::Prmt(mode) => map3(r(0), r(1), r(2), move |a, b, c| prmt(mode, a, b, c)),
        Alu::Lop3 => map4(r(0), r(1), r(2), r(3), |a, b, c, l| lop3(a, b, c, l & 0xFF)),
        Alu::Shf { left, clamp } => map3(r(0), r(1), r(2), move |a, b, c| {
            let c = c as u32;
            let n = if clamp { c.min(32) } else { c & 31 };
            let v = (u64::from(b as u32) << 32) | u64::from(a as u32);
            if left {
                ((v << n) >> 32) & 0xFFFF_FFFF
            } else {
                (v >> n) & 0xFFFF_FFFF
            }
        }),
        Alu::AddCc { .. } | Alu::MadCc { .. } => *r(0),
        Alu::AddF32 => map2(r(0), r(1), |x, y| f32r(f32a(x) + f32a(y))),
        Alu::SubF32 => map2(r(0), r(1), |x, y| f32r(f32a(x) - f32a(y))),
        Alu::MulF32 => map2(r(0), r(1), |x, y| f32r(f32a(x) * f32a(y))),
        Alu::FmaF32 => map3(r(0), r(1), r(2), |x, y, z| {
            f32r(f32a(x).mul_add(f32a(y), f32a(z)))
        }),
        Alu::DivF32 => map2(r(0), r(1), |x, y| f32r(f32a(x) / f32a(y))),
        Alu::SqrtF32 => map1(r(0), |x| f32r(f32a(x).sqrt())),
        Alu::AddF64 => map2(r(0), r(1), |x, y| f64r(f64a(x) + f64a(y))),
        Alu::SubF64 => map2(r(0), r(1), |x, y| f64r(f64a(x) - f64a(y))),
        Alu::MulF64 => map2(r(0), r(1), |x, y| f64r(f64a(x) * f64a(y))),
        Alu::FmaF64 => map3(r(0), r(1), r(2), |x, y, z| {
            f64r(f64a(x).mul_add(f64a(y), f64a(z)))
        }),
        Alu::DivF64 => map2(r(0), r(1), |x, y| f64r(f64a(x) / f64a(y))),
        Alu::SqrtF64 => map1(r(0), |x| f64r(f64a(x).sqrt())),
        Alu::Float(op, m) => match op {
            FOp::Sqrt | FOp::Rcp => map1(r(0), move |x| float_op(op, m, x, 0, 0)),
            FOp::Fma => map3(r(0), r(1), r(2), move |x, y, z| float_op(op, m, x, y, z)),
            _ => map2(r(0), r(1), move |x, y| float_op(op, m, x, y, 0)),
        },
        Alu::MinMax(mm) => map2(r(0), r(1), move |x, y| min_max(mm, x, y)),
        Alu::AbsF { fmt, ftz, x2 } => map1(r(0), move |x| {
            halves(x2, x, 0, 0, |a, _, _| {
                let a = a & fmt_mask(fmt);
                let a = if ftz { fmt.ftz(a) } else { a };
                fmt.abs(a)
            })
        }),
        Alu::NegF { fmt, ftz, x2 } => map1(r(0), move |x| {
            halves(x2, x, 0, 0, |a, _, _| {
                let a = a & fmt_mask(fmt);
                let a = if ftz { fmt.ftz(a) } else { a };
                fmt.neg(a)
            })
        }),
        Alu::Copysign(fmt) => map2(r(0), r(1), move |a, b| {
            let sign = 1u64 << (fmt.exp_bits + fmt.man_bits);
            (b & fmt_mask(fmt) & !sign) | (a & sign)
        }),
        Alu::Approx(k, fmt, ftz) => map2(r(0), r(1), move |a, b| approx(k, fmt, ftz, a, b)),
        Alu::CvtInt {
            from,
            from_signed,
            to,
            to_signed,
            sat,
        } => map1(r(0), move |x| {
            let v: i128 = if from_signed {
                i128::from(sx(x, from))
            } else {
                i128::from(zx(x, from))
            };
            let v = if sat {
                v.clamp(int_min(to, to_signed), int_max(to, to_signed))
            } else {
                v
            };
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
        } => map1(r(0), move |x| {
            cvt_f2f(from, to, rnd, ftz, sat, relu, satfinite, x)
        }),
        Alu::CvtF2I {
            from,
            rnd,
            to,
            signed,
            ftz,
            nan,
        } => map1(r(0), move |x| {
            let mut x = x & fmt_mask(from);
            if ftz && from == F32 {
                x = from.ftz(x);
            }
            let v = float::to_int(from, x, rnd, to.bits(), signed, nan);
            if signed { sx(v, to) as u64 } else { v }
        }),
        Alu::CvtI2F {
            from,
            signed,
            to,
            rnd,
            sat,
        } => map1(r(0), move |x| {
            let (neg, mag) = if signed {
                let v = sx(x, from);
                (v < 0, u128::from(v.unsigned_abs()))
            } else {
                (false, u128::from(zx(x, from)))
            };
            let r = float::from_int(to, neg, mag, rnd);
            if sat { float::saturate(to, r) } else { r }
        }),
        Alu::CvtRoundInt { fmt, rnd, ftz, sat } => map1(r(0), move |x| {
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
        } => map2(r(0), r(1), move |a, b| {
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
            let mut o = [0u64; 32];
            for k in 0..usize::from(n).min(4) {
                let src = r(k);
                for l in 0..32 {
                    o[l] |= (src[l] & mask) << (u32::from(bits) * k as u32);
                }
            }
            o
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

/// A float's bits in `fmt` as f64, rounded back: used by atomics.
pub(crate) fn fadd(fmt: Fmt, ftz: bool, a: u64, b: u64) -> u64 {
    let (mut a, mut b) = (a & fmt_mask(fmt), b & fmt_mask(fmt));
    if ftz {
        a = fmt.ftz(a);
        b = fmt.ftz(b);
    }
    let r = if fmt == F32 && !ftz {
        f32r(f32a(a) + f32a(b))
    } else if fmt == F64 {
        f64r(f64a(a) + f64a(b))
    } else {
        float::add(fmt, a, b, Rnd::Rn)
    };
    if ftz { fmt.ftz(r) } else { r }
}

/// f16/bf16 formats for atomics.
pub(crate) const HALF: Fmt = F16;
/// bf16 format for atomics.
pub(crate) const BHALF: Fmt = BF16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_field_ops() {
        assert_eq!(bfe(W::W32, false, 0xABCD_1234, 8, 8), 0x12);
        assert_eq!(
            bfe(W::W32, true, 0xABCD_F234, 12, 8),
            0xFFFF_FFFF_FFFF_FFDF & 0xFFFF_FFFF
        );
        assert_eq!(bfe(W::W32, true, 0x8000_0000, 31, 8), 0xFFFF_FFFF);
        assert_eq!(bfe(W::W32, false, 0xFFFF_FFFF, 40, 8), 0);
        assert_eq!(bfi(W::W32, 0xF, 0, 4, 4), 0xF0);
        assert_eq!(bfind(W::W32, false, false, 0x10), 4);
        assert_eq!(bfind(W::W32, false, true, 0x10), 27);
        assert_eq!(bfind(W::W32, false, false, 0), 0xFFFF_FFFF);
        assert_eq!(prmt(0, 0x3322_1100, 0x7766_5544, 0x5410), 0x5544_1100);
        assert_eq!(prmt(0, 0x0000_0080, 0, 0x8880), 0xFFFF_FF80);
        assert_eq!(lop3(0b1100, 0b1010, 0b0111, 0x96), 0b0001);
    }

    #[test]
    fn min_max_rules() {
        let mm = |max, nan| MinMax {
            max,
            nan,
            xorsign_abs: false,
            ftz: false,
            fmt: F32,
            x2: false,
        };
        let b = |x: f32| u64::from(x.to_bits());
        assert_eq!(min_max(mm(false, false), b(-0.0), b(0.0)), b(-0.0));
        assert_eq!(min_max(mm(false, false), b(0.0), b(-0.0)), b(-0.0));
        assert_eq!(min_max(mm(true, false), b(-0.0), b(0.0)), b(0.0));
        assert_eq!(min_max(mm(true, false), b(0.0), b(-0.0)), b(0.0));
        assert_eq!(min_max(mm(true, false), b(f32::NAN), b(1.0)), b(1.0));
        assert_eq!(min_max(mm(false, false), b(2.0), b(f32::NAN)), b(2.0));
        assert_eq!(
            min_max(mm(true, true), b(f32::NAN), b(1.0)),
            u64::from(CANON32)
        );
        assert_eq!(min_max(mm(true, false), b(3.0), b(-7.0)), b(3.0));
    }

    #[test]
    fn comparisons_with_nan() {
        let c = |op| Cmp {
            op,
            ty: CmpTy::F(F32),
            ftz: false,
        };
        let (n, one) = (u64::from(f32::NAN.to_bits()), u64::from(1.0f32.to_bits()));
        assert!(!compare(c(CmpOp::Ne), n, one));
        assert!(compare(c(CmpOp::Neu), n, one));
        assert!(compare(c(CmpOp::Nan), n, one));
        assert!(!compare(c(CmpOp::Num), n, one));
        assert!(compare(c(CmpOp::Ne), one, 0));
        let s = Cmp {
            op: CmpOp::Lt,
            ty: CmpTy::S(W::W32),
            ftz: false,
        };
        assert!(compare(s, 0xFFFF_FFFF, 0));
        let u = Cmp {
            op: CmpOp::Lt,
            ty: CmpTy::U(W::W32),
            ftz: false,
        };
        assert!(!compare(u, 0xFFFF_FFFF, 0));
    }
}
