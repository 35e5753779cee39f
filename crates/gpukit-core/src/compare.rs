//! The comparison, select and logical contract (docs/numerics.md, "Comparisons and
//! masks"): the op codes the kernels take and, per element type, the exact rule every
//! backend follows.
//!
//! There is no bool dtype: a mask is a buffer of any dtype, 1 for true and 0 for
//! false when gpukit writes it, and nonzero = true when gpukit reads it (NaN is true,
//! -0.0 is false, as numpy's `bool(x)`).
//!
//! - Comparisons are IEEE: every comparison with a NaN operand is false except `ne`
//!   (true); `-0.0 == +0.0`; f16 and bf16 compare by their exact value (widened to f32
//!   exactly); integers compare as integers (never through a float).
//! - `where(cond, a, b)` is `a` where `cond` is nonzero and `b` elsewhere, bits copied
//!   (NaN payloads kept).
//! - `and`, `or`, `xor`, `not` read their operands as masks and write 1 / 0.

use half::{bf16, f16};

/// A comparison, with its op code (the `op` scalar of the `compare_{src}_to_{dst}`
/// kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `a == b` (code 0).
    Eq,
    /// `a != b` (code 1; true when either is NaN).
    Ne,
    /// `a < b` (code 2).
    Lt,
    /// `a <= b` (code 3).
    Le,
    /// `a > b` (code 4).
    Gt,
    /// `a >= b` (code 5).
    Ge,
}

impl CmpOp {
    /// Every comparison, in code order.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    /// The op code the kernels take.
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The comparison with op code `code`, `None` outside 0..6.
    pub fn from_code(code: i64) -> Option<CmpOp> {
        usize::try_from(code)
            .ok()
            .and_then(|c| Self::ALL.get(c).copied())
    }

    /// The lower-case name (`eq`, `ne`, `lt`, `le`, `gt`, `ge`).
    pub const fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}

/// A logical op on masks, with its op code (the `op` scalar of the
/// `logical_{src}_to_{dst}` kernels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogicOp {
    /// Both nonzero (code 0).
    And,
    /// Either nonzero (code 1).
    Or,
    /// Exactly one nonzero (code 2).
    Xor,
    /// `a` is zero (code 3; `b` is ignored).
    Not,
}

impl LogicOp {
    /// Every logical op, in code order.
    pub const ALL: [LogicOp; 4] = [LogicOp::And, LogicOp::Or, LogicOp::Xor, LogicOp::Not];

    /// The op code the kernels take.
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The op with op code `code`, `None` outside 0..4.
    pub fn from_code(code: i64) -> Option<LogicOp> {
        usize::try_from(code)
            .ok()
            .and_then(|c| Self::ALL.get(c).copied())
    }

    /// The lower-case name (`and`, `or`, `xor`, `not`).
    pub const fn name(self) -> &'static str {
        match self {
            LogicOp::And => "and",
            LogicOp::Or => "or",
            LogicOp::Xor => "xor",
            LogicOp::Not => "not",
        }
    }
}

/// The contract of one element type: comparison, truth, and the 1 / 0 it writes.
pub trait MaskElement: Copy {
    /// `op(self, other)` by the contract (IEEE for floats, exact for f16/bf16,
    /// integer order for integers).
    fn compare(self, other: Self, op: CmpOp) -> bool;
    /// Nonzero (NaN included; -0.0 is zero).
    fn truthy(self) -> bool;
    /// 1 for `true`, 0 for `false` (+0.0 for floats).
    fn from_bool(b: bool) -> Self;
}

#[inline(always)]
fn cmp_by<T: PartialOrd>(a: T, b: T, op: CmpOp) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}

macro_rules! native {
    ($t:ty, $zero:expr, $one:expr) => {
        impl MaskElement for $t {
            #[inline(always)]
            fn compare(self, other: Self, op: CmpOp) -> bool {
                cmp_by(self, other, op)
            }
            #[inline(always)]
            #[allow(clippy::float_cmp)]
            fn truthy(self) -> bool {
                // `!=` is true for NaN, false for -0.0.
                self != $zero
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                if b { $one } else { $zero }
            }
        }
    };
}
native!(f32, 0.0, 1.0);
native!(f64, 0.0, 1.0);
native!(i64, 0, 1);
native!(i32, 0, 1);

macro_rules! half16 {
    ($t:ty) => {
        impl MaskElement for $t {
            #[inline(always)]
            fn compare(self, other: Self, op: CmpOp) -> bool {
                // Widening to f32 is exact.
                cmp_by(self.to_f32(), other.to_f32(), op)
            }
            #[inline(always)]
            fn truthy(self) -> bool {
                // Any bit outside the sign: nonzero or NaN.
                self.to_bits() & 0x7fff != 0
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                <$t>::from_bits(if b { <$t>::ONE.to_bits() } else { 0 })
            }
        }
    };
}
half16!(f16);
half16!(bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for op in CmpOp::ALL {
            assert_eq!(CmpOp::from_code(op.code()), Some(op));
        }
        for op in LogicOp::ALL {
            assert_eq!(LogicOp::from_code(op.code()), Some(op));
        }
        assert_eq!(CmpOp::from_code(6), None);
        assert_eq!(CmpOp::from_code(-1), None);
        assert_eq!(LogicOp::from_code(4), None);
    }

    #[test]
    fn ieee_rules() {
        let nan = f32::NAN;
        for op in CmpOp::ALL {
            assert_eq!(nan.compare(1.0, op), op == CmpOp::Ne, "{op:?}");
            assert_eq!(1.0f32.compare(nan, op), op == CmpOp::Ne, "{op:?}");
        }
        assert!((-0.0f32).compare(0.0, CmpOp::Eq));
        assert!(!(-0.0f32).compare(0.0, CmpOp::Lt));
        assert!(f16::NEG_INFINITY.compare(f16::MIN, CmpOp::Lt));
        assert!(bf16::from_bits(1).compare(bf16::ZERO, CmpOp::Gt));
        assert!(f16::from_bits(0x8000).compare(f16::ZERO, CmpOp::Eq));
        // i64 beyond 2^53 still compares exactly.
        assert!((1i64 << 60).compare((1 << 60) + 1, CmpOp::Lt));
        assert!(!f32::NAN.truthy().eq(&false));
        assert!(!(-0.0f64).truthy());
        assert!(f16::NAN.truthy() && !f16::from_bits(0x8000).truthy());
        assert!(bf16::from_bits(1).truthy());
        assert_eq!(f16::from_bool(true), f16::ONE);
        assert_eq!(bf16::from_bool(false).to_bits(), 0);
        assert_eq!(i32::from_bool(true), 1);
    }
}
