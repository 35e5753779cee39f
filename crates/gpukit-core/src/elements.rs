//! The scalar rules of the element-wise index ops (ONNX GatherElements /
//! ScatterElements): the reductions of `scatter_elements` and how each one combines an
//! existing element with an update, per dtype. Every backend and the reference oracle
//! call [`ScatterElem::combine`] (the CUDA kernels restate it in kernels-cuda/elements.cu),
//! so the combination is one rule.
//!
//! Order of duplicates: updates are applied in the row-major order of the updates
//! tensor. Two updates can only hit the same output element when they share every
//! coordinate except the scatter axis, so this is the same as applying, for each
//! `(outer, inner)` column, the updates of that column in ascending position along the
//! axis. With `None` the last update in that order wins; `Add`/`Mul`/`Max`/`Min` fold
//! the updates into the existing element in that order, one rounding per step.

use crate::numeric::{Arith, BinaryOp, FloatElement, max_nan, min_nan};
use half::{bf16, f16};

/// How `scatter_elements` combines an update `u` with the element `y` it lands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScatterReduction {
    /// `y = u` (the last update in row-major order wins).
    None,
    /// `y = y + u` (floats: load, add in the compute type, store; integers wrap).
    Add,
    /// `y = y * u` (floats: load, multiply in the compute type, store; integers wrap).
    Mul,
    /// `y = max(y, u)` (floats: NaN if either is NaN, `max(-0, +0) = +0`).
    Max,
    /// `y = min(y, u)` (floats: NaN if either is NaN, `min(-0, +0) = -0`).
    Min,
}

impl ScatterReduction {
    /// Every reduction, in code order.
    pub const ALL: [ScatterReduction; 5] = [
        ScatterReduction::None,
        ScatterReduction::Add,
        ScatterReduction::Mul,
        ScatterReduction::Max,
        ScatterReduction::Min,
    ];

    /// The kernel code (`0..=4`).
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The reduction of kernel code `c`, `None` (the Option) outside `0..=4`.
    pub fn from_code(c: i64) -> Option<ScatterReduction> {
        usize::try_from(c)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// ONNX's attribute value: `none`, `add`, `mul`, `max`, `min`.
    pub const fn name(self) -> &'static str {
        match self {
            ScatterReduction::None => "none",
            ScatterReduction::Add => "add",
            ScatterReduction::Mul => "mul",
            ScatterReduction::Max => "max",
            ScatterReduction::Min => "min",
        }
    }

    /// The reduction named `s` (ONNX's attribute value), if any.
    pub fn parse(s: &str) -> Option<ScatterReduction> {
        Self::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// An element `scatter_elements` can combine: all six dtypes.
pub trait ScatterElem: Arith {
    /// `max` under this dtype's rules (floats: [`max_nan`] in the compute type, exact).
    fn max_rule(a: Self, b: Self) -> Self;
    /// `min` under this dtype's rules (floats: [`min_nan`] in the compute type, exact).
    fn min_rule(a: Self, b: Self) -> Self;

    /// The element `y` becomes when update `u` lands on it under `r`.
    #[inline(always)]
    fn combine(r: ScatterReduction, y: Self, u: Self) -> Self {
        match r {
            ScatterReduction::None => u,
            ScatterReduction::Add => Self::binary(BinaryOp::Add, y, u),
            ScatterReduction::Mul => Self::binary(BinaryOp::Mul, y, u),
            ScatterReduction::Max => Self::max_rule(y, u),
            ScatterReduction::Min => Self::min_rule(y, u),
        }
    }
}

macro_rules! scatter_float {
    ($t:ty) => {
        impl ScatterElem for $t {
            #[inline(always)]
            fn max_rule(a: Self, b: Self) -> Self {
                <$t as FloatElement>::store(max_nan(a.load(), b.load()))
            }
            #[inline(always)]
            fn min_rule(a: Self, b: Self) -> Self {
                <$t as FloatElement>::store(min_nan(a.load(), b.load()))
            }
        }
    };
}
scatter_float!(f32);
scatter_float!(f64);
scatter_float!(f16);
scatter_float!(bf16);

macro_rules! scatter_int {
    ($t:ty) => {
        impl ScatterElem for $t {
            #[inline(always)]
            fn max_rule(a: Self, b: Self) -> Self {
                a.max(b)
            }
            #[inline(always)]
            fn min_rule(a: Self, b: Self) -> Self {
                a.min(b)
            }
        }
    };
}
scatter_int!(i64);
scatter_int!(i32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_names_parse() {
        for r in ScatterReduction::ALL {
            assert_eq!(ScatterReduction::from_code(r.code()), Some(r));
            assert_eq!(ScatterReduction::parse(r.name()), Some(r));
        }
        assert_eq!(ScatterReduction::from_code(5), None);
        assert_eq!(ScatterReduction::from_code(-1), None);
        assert_eq!(ScatterReduction::parse("sum"), None);
    }

    #[test]
    fn combine_rules() {
        use ScatterReduction as R;
        assert_eq!(f32::combine(R::None, 1.0, 2.0), 2.0);
        assert_eq!(f32::combine(R::Add, 1.0, 2.0), 3.0);
        assert_eq!(f32::combine(R::Mul, 1.5, 2.0), 3.0);
        assert!(f32::combine(R::Max, f32::NAN, 2.0).is_nan());
        assert!(f32::combine(R::Min, 2.0, f32::NAN).is_nan());
        assert_eq!(f32::combine(R::Max, -0.0, 0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(
            f32::combine(R::Min, 0.0, -0.0).to_bits(),
            (-0.0f32).to_bits()
        );
        assert_eq!(i32::combine(R::Add, i32::MAX, 1), i32::MIN);
        assert_eq!(i64::combine(R::Mul, i64::MAX, 2), -2);
        assert_eq!(i64::combine(R::Max, -5, 3), 3);
        assert_eq!(i64::combine(R::Min, -5, 3), -5);
        // f16: one rounding of the f32 sum (2048 + 1 is not representable: ties to even).
        let s = f16::combine(R::Add, f16::from_f32(2048.0), f16::from_f32(1.0));
        assert_eq!(s, f16::from_f32(2048.0));
    }
}
