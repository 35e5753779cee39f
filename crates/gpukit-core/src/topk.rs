//! The order of `topk` (ONNX TopK): which of two elements of a line comes first.
//!
//! NaN counts as larger than every number (any two NaNs are equal, whatever their
//! payloads): it comes first in a `largest` selection and last in a smallest one, as in
//! ONNX's reference implementation (numpy's sort order) and `torch.topk`. Numbers come
//! in descending (`largest`) or ascending order, with `-0.0` equal to `+0.0`, f16 / bf16
//! compared as their exact f32 values and integers as integers. (So `k = 1` with
//! `largest` agrees with argmax, where NaN wins too; a smallest `k = 1` skips NaN, which
//! argmin would pick.) Equal values keep their positions' order: the lower index
//! comes first (ONNX's rule). So the `k` selected elements and their order are one
//! answer, whatever algorithm finds them: every backend and the reference oracle use
//! [`TopkElem::rank_order`] / [`TopkElem::beats`] (the CUDA kernel restates them in
//! kernels-cuda/elements.cu), and the outputs are bit copies of the inputs.

use core::cmp::Ordering;
use half::{bf16, f16};

use crate::Element;

/// An element `topk` can order: every gpukit dtype.
pub trait TopkElem: Element {
    /// Whether the value is NaN (never for integers).
    fn is_nan_value(self) -> bool;

    /// The numeric order of two non-NaN values (`-0.0 == +0.0`).
    fn num_order(a: Self, b: Self) -> Ordering;

    /// The order of two values in a selection's output, by value alone: `Less` when
    /// `a` comes first: descending values for `largest`, ascending otherwise, with NaN
    /// above every number (first when `largest`, last otherwise; all NaNs equal).
    #[inline(always)]
    fn rank_order(a: Self, b: Self, largest: bool) -> Ordering {
        let nan_first = if largest {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        match (a.is_nan_value(), b.is_nan_value()) {
            (true, true) => Ordering::Equal,
            (true, false) => nan_first,
            (false, true) => nan_first.reverse(),
            (false, false) if largest => Self::num_order(b, a),
            (false, false) => Self::num_order(a, b),
        }
    }

    /// Whether element `a` at position `ia` comes before `b` at `ib` in the output:
    /// [`TopkElem::rank_order`] puts `a` first, or the values are equal and `ia < ib`.
    #[inline(always)]
    fn beats(a: Self, ia: usize, b: Self, ib: usize, largest: bool) -> bool {
        match Self::rank_order(a, b, largest) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => ia < ib,
        }
    }
}

macro_rules! topk_float {
    ($t:ty, $wide:expr) => {
        impl TopkElem for $t {
            #[inline(always)]
            fn is_nan_value(self) -> bool {
                $wide(self).is_nan()
            }
            #[inline(always)]
            fn num_order(a: $t, b: $t) -> Ordering {
                // Neither is NaN here: the IEEE comparison is total (and -0 == +0).
                $wide(a).partial_cmp(&$wide(b)).unwrap_or(Ordering::Equal)
            }
        }
    };
}
topk_float!(f32, |v: f32| v);
topk_float!(f64, |v: f64| v);
topk_float!(f16, |v: f16| v.to_f32());
topk_float!(bf16, |v: bf16| v.to_f32());

macro_rules! topk_int {
    ($t:ty) => {
        impl TopkElem for $t {
            #[inline(always)]
            fn is_nan_value(self) -> bool {
                false
            }
            #[inline(always)]
            fn num_order(a: $t, b: $t) -> Ordering {
                a.cmp(&b)
            }
        }
    };
}
topk_int!(i64);
topk_int!(i32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_is_largest_and_zeros_are_equal() {
        let nan2 = f32::from_bits(0x7fc0_0001);
        let (less, greater) = (Ordering::Less, Ordering::Greater);
        assert_eq!(f32::rank_order(f32::NAN, f32::INFINITY, true), less);
        assert_eq!(f32::rank_order(f32::NAN, f32::NEG_INFINITY, false), greater);
        assert_eq!(f32::rank_order(f32::NEG_INFINITY, nan2, true), greater);
        assert_eq!(f32::rank_order(f32::INFINITY, nan2, false), less);
        for largest in [true, false] {
            assert_eq!(f32::rank_order(-f32::NAN, nan2, largest), Ordering::Equal);
            assert_eq!(f32::rank_order(-0.0, 0.0, largest), Ordering::Equal);
        }
        assert_eq!(f64::rank_order(2.0, 1.0, true), less);
        assert_eq!(f64::rank_order(2.0, 1.0, false), greater);
        let h = |v: f32| f16::from_f32(v);
        assert_eq!(f16::rank_order(h(f32::NAN), h(65504.0), false), greater);
        let b = |v: f32| bf16::from_f32(v);
        assert_eq!(bf16::rank_order(b(-1.0), b(0.0), true), greater);
        assert_eq!(i64::rank_order(i64::MIN, -1, false), less);
    }

    #[test]
    fn ties_keep_the_lower_index_first_both_ways() {
        for largest in [true, false] {
            assert!(f32::beats(2.0, 3, 2.0, 5, largest));
            assert!(!f32::beats(2.0, 5, 2.0, 3, largest));
            assert!(f32::beats(-0.0, 1, 0.0, 2, largest));
            assert!(!f32::beats(1.0, 0, 1.0, 0, largest), "irreflexive");
            assert!(f32::beats(f32::NAN, 1, f32::NAN, 2, largest));
        }
        assert!(f32::beats(f32::NAN, 9, f32::INFINITY, 0, true));
        assert!(f32::beats(f32::INFINITY, 9, f32::NAN, 0, false));
        assert!(i32::beats(-5, 1, 3, 0, false) && !i32::beats(-5, 1, 3, 0, true));
    }
}
