//! Exact IEEE 754 arithmetic for every format and rounding mode PTX names.
//!
//! Each operation computes the exact result (as a wide integer significand, an
//! exponent and a sticky bit) and rounds it once with [`round_pack`]. The `.rn` f32 and
//! f64 paths of the interpreter use the host's native operations (which are exactly
//! these IEEE operations); this module serves the directed roundings (`.rz .rm .rp`),
//! the 16-bit formats and the conversions, and the tests check the two against each
//! other. Subnormals are always kept here; `.ftz` is applied by the callers.

/// A binary floating-point format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Fmt {
    /// Exponent field width.
    pub exp_bits: u32,
    /// Fraction field width (significand bits minus the implicit one).
    pub man_bits: u32,
    /// The NaN every arithmetic NaN result becomes (NVIDIA's canonical NaN).
    pub canonical_nan: u64,
}

/// IEEE binary16.
pub(crate) const F16: Fmt = Fmt {
    exp_bits: 5,
    man_bits: 10,
    canonical_nan: 0x7FFF,
};
/// bfloat16.
pub(crate) const BF16: Fmt = Fmt {
    exp_bits: 8,
    man_bits: 7,
    canonical_nan: 0x7FFF,
};
/// IEEE binary32.
pub(crate) const F32: Fmt = Fmt {
    exp_bits: 8,
    man_bits: 23,
    canonical_nan: 0x7FFF_FFFF,
};
/// IEEE binary64.
pub(crate) const F64: Fmt = Fmt {
    exp_bits: 11,
    man_bits: 52,
    canonical_nan: 0x7FFF_FFFF_FFFF_FFFF,
};

/// A rounding mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rnd {
    /// To nearest, ties to even.
    Rn,
    /// Toward zero.
    Rz,
    /// Toward negative infinity.
    Rm,
    /// Toward positive infinity.
    Rp,
    /// To nearest, ties away from zero.
    Rna,
}

impl Fmt {
    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    fn exp_mask(self) -> u64 {
        (1u64 << self.exp_bits) - 1
    }
    fn man_mask(self) -> u64 {
        (1u64 << self.man_bits) - 1
    }
    fn sign_bit(self) -> u64 {
        1u64 << (self.exp_bits + self.man_bits)
    }
    /// Exponent of the least significant bit of a subnormal.
    fn min_exp(self) -> i32 {
        1 - self.bias() - self.man_bits as i32
    }
    pub(crate) fn inf(self, neg: bool) -> u64 {
        (self.exp_mask() << self.man_bits) | if neg { self.sign_bit() } else { 0 }
    }
    fn max_finite(self, neg: bool) -> u64 {
        ((self.exp_mask() - 1) << self.man_bits)
            | self.man_mask()
            | if neg { self.sign_bit() } else { 0 }
    }
    pub(crate) fn zero(self, neg: bool) -> u64 {
        if neg { self.sign_bit() } else { 0 }
    }
    pub(crate) fn is_nan(self, x: u64) -> bool {
        (x >> self.man_bits) & self.exp_mask() == self.exp_mask() && x & self.man_mask() != 0
    }
    pub(crate) fn is_inf(self, x: u64) -> bool {
        (x >> self.man_bits) & self.exp_mask() == self.exp_mask() && x & self.man_mask() == 0
    }
    pub(crate) fn is_zero(self, x: u64) -> bool {
        x & !self.sign_bit() == 0
    }
    pub(crate) fn is_subnormal(self, x: u64) -> bool {
        (x >> self.man_bits) & self.exp_mask() == 0 && x & self.man_mask() != 0
    }
    pub(crate) fn sign(self, x: u64) -> bool {
        x & self.sign_bit() != 0
    }
    /// Flushes a subnormal to a zero of the same sign.
    pub(crate) fn ftz(self, x: u64) -> u64 {
        if self.is_subnormal(x) {
            x & self.sign_bit()
        } else {
            x
        }
    }
    pub(crate) fn abs(self, x: u64) -> u64 {
        x & !self.sign_bit()
    }
    pub(crate) fn neg(self, x: u64) -> u64 {
        x ^ self.sign_bit()
    }
    /// A finite nonzero value as (significand, exponent of its least significant bit).
    fn decode(self, x: u64) -> (u128, i32) {
        let e = ((x >> self.man_bits) & self.exp_mask()) as i32;
        let m = x & self.man_mask();
        if e == 0 {
            (u128::from(m), self.min_exp())
        } else {
            (
                u128::from(m | (1u64 << self.man_bits)),
                e - self.bias() - self.man_bits as i32,
            )
        }
    }
}

/// Index of the most significant set bit (`v != 0`).
fn msb(v: u128) -> i32 {
    127 - v.leading_zeros() as i32
}

/// Rounds the exact value `(-1)^neg * (mant + frac) * 2^exp` to `fmt`, where `frac` is
/// 0 if `!sticky` and strictly between 0 and 1 if `sticky`.
pub(crate) fn round_pack(fmt: Fmt, neg: bool, mant: u128, exp: i32, sticky: bool, rnd: Rnd) -> u64 {
    if mant == 0 && !sticky {
        return fmt.zero(neg);
    }
    let p = fmt.man_bits as i32; // fraction bits
    // Exponent (of the leading bit) of the exact value; for mant == 0 with sticky the
    // value is below 2^exp.
    let lead = if mant == 0 { exp - 1 } else { exp + msb(mant) };
    // Exponent of the result's least significant bit.
    let q = (lead - p).max(fmt.min_exp());
    let shift = q - exp;
    let (mut m, round, st) = if shift <= 0 {
        // Exact: no bits below the result's LSB (other than the sticky fraction).
        let s = (-shift) as u32;
        if s >= 128 || (mant != 0 && mant.leading_zeros() < s) {
            // Cannot happen for values we produce (q >= lead - p means few bits).
            (mant, false, sticky)
        } else {
            (mant << s, false, sticky)
        }
    } else {
        let s = shift as u32;
        if s > 128 {
            (0u128, false, mant != 0 || sticky)
        } else if s == 128 {
            (0u128, mant >> 127 != 0, (mant << 1) != 0 || sticky)
        } else {
            let kept = mant >> s;
            let half = 1u128 << (s - 1);
            let rest = mant & ((1u128 << s) - 1);
            (kept, rest & half != 0, (rest & (half - 1)) != 0 || sticky)
        }
    };
    let inexact = round || st;
    let up = match rnd {
        Rnd::Rn => round && (st || m & 1 == 1),
        Rnd::Rna => round,
        Rnd::Rz => false,
        Rnd::Rp => inexact && !neg,
        Rnd::Rm => inexact && neg,
    };
    let mut q = q;
    if up {
        m += 1;
        if m >> (p + 1) != 0 {
            m >>= 1;
            q += 1;
        }
    }
    // Encode.
    let max_q = fmt.bias() - p; // LSB exponent of the largest binade
    if q > max_q || (q == max_q && m >> (p + 1) != 0) {
        return overflow(fmt, neg, rnd);
    }
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if m >> p == 0 {
        // Subnormal (or zero): q == min_exp.
        return sign | m as u64;
    }
    let biased = (q - fmt.min_exp() + 1) as u64;
    if biased >= fmt.exp_mask() {
        return overflow(fmt, neg, rnd);
    }
    sign | (biased << fmt.man_bits) | (m as u64 & fmt.man_mask())
}

fn overflow(fmt: Fmt, neg: bool, rnd: Rnd) -> u64 {
    match rnd {
        Rnd::Rn | Rnd::Rna => fmt.inf(neg),
        Rnd::Rz => fmt.max_finite(neg),
        Rnd::Rp => {
            if neg {
                fmt.max_finite(true)
            } else {
                fmt.inf(false)
            }
        }
        Rnd::Rm => {
            if neg {
                fmt.inf(true)
            } else {
                fmt.max_finite(false)
            }
        }
    }
}

/// `a + b`.
pub(crate) fn add(fmt: Fmt, a: u64, b: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return fmt.canonical_nan;
    }
    let (sa, sb) = (fmt.sign(a), fmt.sign(b));
    match (fmt.is_inf(a), fmt.is_inf(b)) {
        (true, true) => return if sa == sb { a } else { fmt.canonical_nan },
        (true, false) => return a,
        (false, true) => return b,
        _ => {}
    }
    match (fmt.is_zero(a), fmt.is_zero(b)) {
        (true, true) => {
            let neg = if sa == sb { sa } else { rnd == Rnd::Rm };
            return fmt.zero(neg);
        }
        (true, false) => return b,
        (false, true) => return a,
        _ => {}
    }
    let (ma, ea) = fmt.decode(a);
    let (mb, eb) = fmt.decode(b);
    exact_sum(fmt, (sa, ma, ea), (sb, mb, eb), rnd)
}

/// Rounds `x + y` for two exact nonzero terms (sign, significand, LSB exponent) whose
/// significands have at most 106 bits.
fn exact_sum(fmt: Fmt, x: (bool, u128, i32), y: (bool, u128, i32), rnd: Rnd) -> u64 {
    // Order by leading-bit exponent.
    let lead = |t: &(bool, u128, i32)| t.2 + msb(t.1);
    let (big, small) = if lead(&x) >= lead(&y) { (x, y) } else { (y, x) };
    // Place big's leading bit at bit 125.
    let sh_big = 125 - msb(big.1);
    let base_exp = big.2 - sh_big;
    let wb = big.1 << sh_big;
    // Small relative to the window.
    let rel = small.2 - base_exp;
    let (ws, sticky) = if rel >= 0 {
        (small.1 << rel, false)
    } else {
        let s = (-rel) as u32;
        if s >= 128 {
            (0u128, true)
        } else {
            (small.1 >> s, small.1 & ((1u128 << s) - 1) != 0)
        }
    };
    if big.0 == small.0 {
        let sum = wb + ws;
        round_pack(fmt, big.0, sum | u128::from(sticky), base_exp, false, rnd)
    } else {
        // big >= small in magnitude by leading bit, but not necessarily by value.
        if wb > ws || (wb == ws && sticky) {
            // |big| - |small|; when bits were cut, subtract one more unit and jam.
            let d = wb - ws - u128::from(sticky);
            round_pack(fmt, big.0, d | u128::from(sticky), base_exp, false, rnd)
        } else if wb == ws {
            fmt.zero(rnd == Rnd::Rm)
        } else {
            round_pack(fmt, small.0, ws - wb, base_exp, false, rnd)
        }
    }
}

/// `a * b`.
pub(crate) fn mul(fmt: Fmt, a: u64, b: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return fmt.canonical_nan;
    }
    let neg = fmt.sign(a) != fmt.sign(b);
    let (ia, ib) = (fmt.is_inf(a), fmt.is_inf(b));
    let (za, zb) = (fmt.is_zero(a), fmt.is_zero(b));
    if ia || ib {
        return if za || zb {
            fmt.canonical_nan
        } else {
            fmt.inf(neg)
        };
    }
    if za || zb {
        return fmt.zero(neg);
    }
    let (ma, ea) = fmt.decode(a);
    let (mb, eb) = fmt.decode(b);
    round_pack(fmt, neg, ma * mb, ea + eb, false, rnd)
}

/// `a * b + c` with one rounding.
pub(crate) fn fma(fmt: Fmt, a: u64, b: u64, c: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(a) || fmt.is_nan(b) || fmt.is_nan(c) {
        return fmt.canonical_nan;
    }
    let pneg = fmt.sign(a) != fmt.sign(b);
    let (ia, ib, ic) = (fmt.is_inf(a), fmt.is_inf(b), fmt.is_inf(c));
    let (za, zb, zc) = (fmt.is_zero(a), fmt.is_zero(b), fmt.is_zero(c));
    if ia || ib {
        if za || zb {
            return fmt.canonical_nan;
        }
        if ic && fmt.sign(c) != pneg {
            return fmt.canonical_nan;
        }
        return fmt.inf(pneg);
    }
    if ic {
        return c;
    }
    if za || zb {
        // Exact zero product: 0 + c.
        if zc {
            let neg = if pneg == fmt.sign(c) {
                pneg
            } else {
                rnd == Rnd::Rm
            };
            return fmt.zero(neg);
        }
        return c;
    }
    let (ma, ea) = fmt.decode(a);
    let (mb, eb) = fmt.decode(b);
    let prod = (pneg, ma * mb, ea + eb);
    if zc {
        return round_pack(fmt, pneg, prod.1, prod.2, false, rnd);
    }
    let (mc, ec) = fmt.decode(c);
    exact_sum(fmt, prod, (fmt.sign(c), mc, ec), rnd)
}

/// `a / b`.
pub(crate) fn div(fmt: Fmt, a: u64, b: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return fmt.canonical_nan;
    }
    let neg = fmt.sign(a) != fmt.sign(b);
    let (ia, ib) = (fmt.is_inf(a), fmt.is_inf(b));
    let (za, zb) = (fmt.is_zero(a), fmt.is_zero(b));
    if (ia && ib) || (za && zb) {
        return fmt.canonical_nan;
    }
    if ia || zb {
        return fmt.inf(neg);
    }
    if ib || za {
        return fmt.zero(neg);
    }
    let (ma, ea) = fmt.decode(a);
    let (mb, eb) = fmt.decode(b);
    // Normalise both significands to a leading bit at 63.
    let sa = 63 - msb(ma);
    let sb = 63 - msb(mb);
    let na = ma << sa;
    let nb = mb << sb;
    let q = (na << 64) / nb;
    let r = (na << 64) % nb;
    let exp = (ea - sa) - (eb - sb) - 64;
    round_pack(fmt, neg, q, exp, r != 0, rnd)
}

/// Integer square root of `n` and whether it was exact.
fn isqrt(n: u128) -> (u128, bool) {
    if n == 0 {
        return (0, true);
    }
    let mut x: u128 = 0;
    let mut bit: u128 = 1u128 << ((msb(n) as u32) & !1);
    let mut rem = n;
    while bit != 0 {
        if rem >= x + bit {
            rem -= x + bit;
            x = (x >> 1) + bit;
        } else {
            x >>= 1;
        }
        bit >>= 2;
    }
    (x, rem == 0)
}

/// `sqrt(a)`.
pub(crate) fn sqrt(fmt: Fmt, a: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(a) {
        return fmt.canonical_nan;
    }
    if fmt.is_zero(a) {
        return a;
    }
    if fmt.sign(a) {
        return fmt.canonical_nan;
    }
    if fmt.is_inf(a) {
        return a;
    }
    let (m, e) = fmt.decode(a);
    // Scale the significand to ~120 bits with an even exponent.
    let mut s = 120 - msb(m);
    if (e - s) % 2 != 0 {
        s -= 1;
    }
    let n = m << s;
    let (r, exact) = isqrt(n);
    round_pack(fmt, false, r, (e - s) / 2, !exact, rnd)
}

/// Converts between float formats (exact widening or rounded narrowing).
pub(crate) fn convert(from: Fmt, to: Fmt, x: u64, rnd: Rnd) -> u64 {
    if from.is_nan(x) {
        return to.canonical_nan;
    }
    let neg = from.sign(x);
    if from.is_inf(x) {
        return to.inf(neg);
    }
    if from.is_zero(x) {
        return to.zero(neg);
    }
    let (m, e) = from.decode(x);
    round_pack(to, neg, m, e, false, rnd)
}

/// Converts an integer (given as sign and magnitude) to a float format.
pub(crate) fn from_int(to: Fmt, neg: bool, mag: u128, rnd: Rnd) -> u64 {
    round_pack(to, neg, mag, 0, false, rnd)
}

/// Rounds a float to an integral value in the same format (`cvt.rni.f32.f32`).
pub(crate) fn round_to_integral(fmt: Fmt, x: u64, rnd: Rnd) -> u64 {
    if fmt.is_nan(x) {
        return fmt.canonical_nan;
    }
    if fmt.is_inf(x) || fmt.is_zero(x) {
        return x;
    }
    let neg = fmt.sign(x);
    let (m, e) = fmt.decode(x);
    if e >= 0 {
        return x;
    }
    let (i, _) = to_integer(neg, m, e, rnd);
    if i == 0 {
        return fmt.zero(neg);
    }
    round_pack(fmt, neg, i, 0, false, Rnd::Rn)
}

/// Rounds `(-1)^neg * m * 2^e` to an integer magnitude; also whether it was inexact.
fn to_integer(neg: bool, m: u128, e: i32, rnd: Rnd) -> (u128, bool) {
    if e >= 0 {
        if e >= 128 || m.leading_zeros() <= e as u32 {
            return (u128::MAX, false);
        }
        return (m << e, false);
    }
    let s = (-e) as u32;
    let (kept, round, sticky) = if s > 128 {
        (0, false, m != 0)
    } else if s == 128 {
        (0, m >> 127 != 0, (m << 1) != 0)
    } else {
        let half = 1u128 << (s - 1);
        let rest = m & ((1u128 << s) - 1);
        (m >> s, rest & half != 0, rest & (half - 1) != 0)
    };
    let inexact = round || sticky;
    let up = match rnd {
        Rnd::Rn => round && (sticky || kept & 1 == 1),
        Rnd::Rna => round,
        Rnd::Rz => false,
        Rnd::Rp => inexact && !neg,
        Rnd::Rm => inexact && neg,
    };
    (kept + u128::from(up), inexact)
}

/// Float to integer with an integer rounding mode, clamped to the destination range
/// (`bits` wide, `signed`); NaN gives `nan_value`.
pub(crate) fn to_int(fmt: Fmt, x: u64, rnd: Rnd, bits: u32, signed: bool, nan_value: u64) -> u64 {
    if fmt.is_nan(x) {
        return nan_value;
    }
    let neg = fmt.sign(x);
    let (max_pos, max_neg): (u128, u128) = if signed {
        ((1u128 << (bits - 1)) - 1, 1u128 << (bits - 1))
    } else {
        ((1u128 << bits) - 1, 0)
    };
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let encode = |neg: bool, mag: u128| -> u64 {
        if neg {
            (mag as u64).wrapping_neg() & mask
        } else {
            mag as u64 & mask
        }
    };
    if fmt.is_inf(x) {
        return if neg {
            encode(true, max_neg)
        } else {
            encode(false, max_pos)
        };
    }
    if fmt.is_zero(x) {
        return 0;
    }
    let (m, e) = fmt.decode(x);
    let (mag, _) = to_integer(neg, m, e, rnd);
    if neg {
        encode(true, mag.min(max_neg))
    } else {
        encode(false, mag.min(max_pos))
    }
}

/// Clamps to [+0.0, 1.0]; NaN gives +0.0 (the `.sat` float modifier).
pub(crate) fn saturate(fmt: Fmt, x: u64) -> u64 {
    if fmt.is_nan(x) || fmt.sign(x) {
        return 0;
    }
    let one = (fmt.bias() as u64) << fmt.man_bits;
    if x > one { one } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_ops(a: f32, b: f32) {
        let (x, y) = (u64::from(a.to_bits()), u64::from(b.to_bits()));
        let same = |got: u64, want: f32| {
            let g = f32::from_bits(got as u32);
            assert!(
                (g.is_nan() && want.is_nan()) || g.to_bits() == want.to_bits(),
                "{a:e} {b:e}: got {g:e}, want {want:e}"
            );
        };
        same(add(F32, x, y, Rnd::Rn), a + b);
        same(mul(F32, x, y, Rnd::Rn), a * b);
        same(div(F32, x, y, Rnd::Rn), a / b);
        same(sqrt(F32, x, Rnd::Rn), a.sqrt());
        same(fma(F32, x, y, x, Rnd::Rn), a.mul_add(b, a));
        same(convert(F64, F32, f64::from(a).to_bits(), Rnd::Rn), a);
        let w = f64::from(a) * 1.000_000_1;
        same(convert(F64, F32, w.to_bits(), Rnd::Rn), w as f32);
    }

    fn f64_ops(a: f64, b: f64) {
        let (x, y) = (a.to_bits(), b.to_bits());
        let same = |got: u64, want: f64| {
            let g = f64::from_bits(got);
            assert!(
                (g.is_nan() && want.is_nan()) || g.to_bits() == want.to_bits(),
                "{a:e} {b:e}: got {g:e}, want {want:e}"
            );
        };
        same(add(F64, x, y, Rnd::Rn), a + b);
        same(mul(F64, x, y, Rnd::Rn), a * b);
        same(div(F64, x, y, Rnd::Rn), a / b);
        same(sqrt(F64, x, Rnd::Rn), a.sqrt());
        same(fma(F64, x, y, x, Rnd::Rn), a.mul_add(b, a));
        same(fma(F64, x, x, y, Rnd::Rn), a.mul_add(a, b));
    }

    /// A small deterministic generator of interesting bit patterns.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn f32(&mut self) -> f32 {
            let r = self.next();
            match r % 8 {
                0 => [
                    0.0,
                    -0.0,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    f32::NAN,
                    1.0,
                    f32::MAX,
                    f32::MIN_POSITIVE,
                ][(r >> 8) as usize % 8],
                1 => f32::from_bits((r >> 16) as u32 & 0x807F_FFFF), // subnormals
                2 => f32::from_bits(((r >> 16) as u32 & 0x80FF_FFFF) | 0x0080_0000), // tiny normals
                _ => f32::from_bits((r >> 20) as u32),
            }
        }
        fn f64(&mut self) -> f64 {
            let r = self.next();
            match r % 8 {
                0 => [
                    0.0,
                    -0.0,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                    1.0,
                    f64::MAX,
                    f64::MIN_POSITIVE,
                ][(r >> 8) as usize % 8],
                1 => f64::from_bits(r & 0x800F_FFFF_FFFF_FFFF),
                2 => f64::from_bits((r & 0x801F_FFFF_FFFF_FFFF) | 0x0010_0000_0000_0000),
                3 => f64::from_bits(r ^ (self.next() & 0x000F_FFFF_FFFF_FFFF)),
                _ => f64::from_bits(r),
            }
        }
    }

    #[test]
    fn rn_matches_native_f32() {
        let mut g = Gen(0x1234_5678_9abc_def1);
        for _ in 0..200_000 {
            let (a, b) = (g.f32(), g.f32());
            f32_ops(a, b);
        }
    }

    #[test]
    fn rn_matches_native_f64() {
        let mut g = Gen(0x0fed_cba9_8765_4321);
        for _ in 0..200_000 {
            let (a, b) = (g.f64(), g.f64());
            f64_ops(a, b);
        }
    }

    /// Directed roundings of f32 products checked against the exact f64 product.
    #[test]
    fn directed_f32_mul_against_exact() {
        let mut g = Gen(42);
        for _ in 0..100_000 {
            let (a, b) = (g.f32(), g.f32());
            if !a.is_finite() || !b.is_finite() {
                continue;
            }
            let exact = f64::from(a) * f64::from(b); // exact
            let (x, y) = (u64::from(a.to_bits()), u64::from(b.to_bits()));
            for rnd in [Rnd::Rz, Rnd::Rm, Rnd::Rp] {
                let got = f32::from_bits(mul(F32, x, y, rnd) as u32);
                let want = f32::from_bits(convert(F64, F32, exact.to_bits(), rnd) as u32);
                assert_eq!(got.to_bits(), want.to_bits(), "{a:e}*{b:e} {rnd:?}");
                // And the direction is right.
                if got.is_finite() {
                    match rnd {
                        Rnd::Rm => assert!(f64::from(got) <= exact),
                        Rnd::Rp => assert!(f64::from(got) >= exact),
                        _ => assert!(f64::from(got).abs() <= exact.abs()),
                    }
                }
            }
        }
    }

    #[test]
    fn f16_conversions_match_half() {
        for bits in 0..=u16::MAX {
            let h = half::f16::from_bits(bits);
            let f = f32::from_bits(convert(F16, F32, u64::from(bits), Rnd::Rn) as u32);
            assert!(f.to_bits() == h.to_f32().to_bits() || (f.is_nan() && h.is_nan()));
        }
        let mut g = Gen(7);
        for _ in 0..200_000 {
            let x = g.f32();
            let got = convert(F32, F16, u64::from(x.to_bits()), Rnd::Rn) as u16;
            let want = half::f16::from_f32(x);
            assert!(
                got == want.to_bits() || (want.is_nan() && got == 0x7FFF),
                "{x:e}: {got:#x} vs {:#x}",
                want.to_bits()
            );
            let got = convert(F32, BF16, u64::from(x.to_bits()), Rnd::Rn) as u16;
            let want = half::bf16::from_f32(x);
            assert!(
                got == want.to_bits() || (want.is_nan() && got == 0x7FFF),
                "{x:e}: {got:#x} vs {:#x}",
                want.to_bits()
            );
        }
    }

    #[test]
    fn integer_conversions() {
        let f = |v: f32| u64::from(v.to_bits());
        assert_eq!(to_int(F32, f(2.5), Rnd::Rn, 32, true, 0), 2);
        assert_eq!(to_int(F32, f(3.5), Rnd::Rn, 32, true, 0), 4);
        assert_eq!(
            to_int(F32, f(-2.5), Rnd::Rz, 32, true, 0) as u32,
            (-2i32) as u32
        );
        assert_eq!(
            to_int(F32, f(-2.5), Rnd::Rm, 32, true, 0) as u32,
            (-3i32) as u32
        );
        assert_eq!(to_int(F32, f(1e20), Rnd::Rz, 32, true, 0), 0x7FFF_FFFF);
        assert_eq!(to_int(F32, f(-1e20), Rnd::Rz, 32, true, 0), 0x8000_0000);
        assert_eq!(to_int(F32, f(-1.0), Rnd::Rz, 32, false, 0), 0);
        assert_eq!(
            to_int(F32, f(f32::INFINITY), Rnd::Rz, 64, false, 0),
            u64::MAX
        );
        assert_eq!(
            from_int(F32, false, 16_777_217, Rnd::Rz) as u32,
            16_777_216f32.to_bits()
        );
        assert_eq!(
            from_int(F32, false, 16_777_217, Rnd::Rp) as u32,
            16_777_218f32.to_bits()
        );
        assert_eq!(
            round_to_integral(F32, f(-0.3), Rnd::Rz) as u32,
            (-0.0f32).to_bits()
        );
        assert_eq!(
            round_to_integral(F32, f(2.5), Rnd::Rn) as u32,
            2.0f32.to_bits()
        );
        assert_eq!(saturate(F32, f(-0.0)), 0);
        assert_eq!(saturate(F32, f(7.0)) as u32, 1.0f32.to_bits());
    }

    #[test]
    fn overflow_and_zero_signs() {
        let f = |v: f32| u64::from(v.to_bits());
        let m = f(f32::MAX);
        assert_eq!(add(F32, m, m, Rnd::Rz) as u32, f32::MAX.to_bits());
        assert_eq!(add(F32, m, m, Rnd::Rp) as u32, f32::INFINITY.to_bits());
        assert_eq!(
            add(F32, f(-1.0), f(1.0), Rnd::Rm) as u32,
            (-0.0f32).to_bits()
        );
        assert_eq!(add(F32, f(-1.0), f(1.0), Rnd::Rn) as u32, 0);
        // 1 + tiny rounds up only toward +inf.
        let tiny = f(f32::from_bits(1));
        assert_eq!(add(F32, f(1.0), tiny, Rnd::Rp) as u32, 1.0f32.to_bits() + 1);
        assert_eq!(add(F32, f(1.0), tiny, Rnd::Rz) as u32, 1.0f32.to_bits());
        assert_eq!(
            add(F32, f(1.0), f(-f32::from_bits(1)), Rnd::Rz) as u32,
            1.0f32.to_bits() - 1
        );
        assert_eq!(
            add(F32, f(1.0), f(-f32::from_bits(1)), Rnd::Rn) as u32,
            1.0f32.to_bits()
        );
    }
}
