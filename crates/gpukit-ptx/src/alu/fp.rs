//! Floating-point semantics: the generic float operation (any format, rounding, `.ftz`,
//! `.sat`, `.relu`), `min`/`max` with PTX's NaN and signed-zero rules, the `.approx`
//! functions, float-to-float conversion and the integer clamps of float-to-integer
//! conversion, and the float add of atomics.

use crate::float::{self, BF16, F16, F32, F64, Fmt, Rnd};
use crate::program::*;

use super::common::*;

/// The generic float operation (any format, rounding, ftz, sat, relu).
pub(super) fn float_op(op: FOp, m: FMods, a: u64, b: u64, c: u64) -> u64 {
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

pub(super) fn approx(k: Approx, fmt: Fmt, ftz: bool, a: u64, b: u64) -> u64 {
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

pub(super) fn int_max(w: W, signed: bool) -> i128 {
    if signed {
        (1i128 << (w.bits() - 1)) - 1
    } else {
        (1i128 << w.bits()) - 1
    }
}

pub(super) fn int_min(w: W, signed: bool) -> i128 {
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
pub(super) fn cvt_f2f(
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
