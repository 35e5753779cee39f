//! Reductions along a set of axes (ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin,
//! ReduceProd, ReduceL1, ReduceL2, ReduceLogSumExp): the op codes, the axis rules and
//! the scalar pieces of the contract every backend shares (docs/numerics.md,
//! "Reductions along axes").
//!
//! For an input of shape `dims` and a set of axes, every output element `o` (row-major
//! over the kept axes) reduces the items `x_j`, `j = 0..n` (`n` = the product of the
//! reduced extents), enumerated in row-major order of the reduced axes. Every sum-like
//! part (sum, mean, prod, L1, L2's sum of squares, log-sum-exp's sum of exponentials)
//! runs in the reduction shape of [`crate::reduce`] over that sequence, so the result
//! depends on nothing but the values and their order:
//!
//! | op | lanes start at | step | combine | finish |
//! |---|---|---|---|---|
//! | sum | +0 | `acc + x` | `+` | — |
//! | mean | +0 | `acc + x` | `+` | `s / R(n)` (n = 0: NaN) |
//! | prod | 1 | `acc * x` | `*` | — |
//! | l1 | +0 | `acc + |x|` | `+` | — |
//! | l2 | +0 | `fma(y, y, acc)`, `y = scale(x, -e)` | `+` | `sqrt(s) * 2^e` |
//! | logsumexp | +0 | `acc + exp(x - m)` | `+` | `m + log(s)` |
//! | max / min | -inf / +inf | `max_nan` / `min_nan` | same | — |
//!
//! `m` is the `max_nan` of the items, for L2 of their absolute values; `e` is `m`'s
//! binary exponent ([`AxisReal::exponent`]) and `scale` an exact power-of-two scaling
//! ([`AxisReal::scale`]). Integers (sum, prod, max, min only) wrap.

use crate::numeric::Real;
use crate::{Error, Result};

/// The most axes the reduction kernels take after merging ([`AxesPlan::dims`]).
pub const MAX_RANK: usize = 8;

/// Which reduction along the axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Σ x (ReduceSum).
    Sum,
    /// Σ x / n (ReduceMean).
    Mean,
    /// The largest item with the NaN rule of [`crate::numeric::max_nan`] (ReduceMax).
    Max,
    /// The smallest item with the NaN rule of [`crate::numeric::min_nan`] (ReduceMin).
    Min,
    /// Π x (ReduceProd).
    Prod,
    /// Σ |x| (ReduceL1).
    L1,
    /// sqrt(Σ x²), scaled so that it neither overflows nor underflows early (ReduceL2).
    L2,
    /// log(Σ exp(x)) as `m + log(Σ exp(x - m))` (ReduceLogSumExp).
    LogSumExp,
}

impl ReduceOp {
    /// Every reduction, in code order.
    pub const ALL: [ReduceOp; 8] = [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Prod,
        ReduceOp::L1,
        ReduceOp::L2,
        ReduceOp::LogSumExp,
    ];

    /// The kernel's `code` argument (0..8, in [`ReduceOp::ALL`] order).
    pub fn code(self) -> i64 {
        Self::ALL.iter().position(|&o| o == self).unwrap_or(0) as i64
    }

    /// The reduction of a kernel `code`; `None` outside 0..8.
    pub fn from_code(code: i64) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|c| Self::ALL.get(c).copied())
    }

    /// The lower-case name (`sum`, `mean`, `max`, `min`, `prod`, `l1`, `l2`,
    /// `logsumexp`).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "prod",
            ReduceOp::L1 => "l1",
            ReduceOp::L2 => "l2",
            ReduceOp::LogSumExp => "logsumexp",
        }
    }

    /// Whether the integer dtypes (i32, i64) support it: sum, prod, max, min.
    pub fn supports_ints(self) -> bool {
        matches!(
            self,
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min
        )
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A reduction's axes resolved against a shape, and the kernel layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxesPlan {
    /// Per input axis: whether it is reduced.
    pub reduced: Vec<bool>,
    /// The output shape without the reduced axes (`keepdims = false`).
    pub out_dims: Vec<usize>,
    /// The output shape with each reduced axis kept as 1 (`keepdims = true`).
    pub keep_dims: Vec<usize>,
    /// Output elements: the product of the kept extents.
    pub n_out: usize,
    /// Items per output: the product of the reduced extents.
    pub n_red: usize,
    /// The kernel layout: the first [`AxesPlan::nkeep`] entries are the kept axes (the
    /// output index decomposes over them row-major), the rest the reduced axes (`j`
    /// decomposes over them row-major); extents of 1 are dropped and an axis is merged
    /// into the previous one of its group when their elements are contiguous (the same
    /// element sequence, fewer digits). A group whose product is 0 is one entry `0`.
    pub dims: Vec<usize>,
    /// Input strides (elements) of [`AxesPlan::dims`].
    pub strides: Vec<usize>,
    /// How many leading entries of `dims` are kept axes.
    pub nkeep: usize,
}

/// Resolves `axes` against an input of shape `dims`: negative axes count from the end,
/// an empty set reduces every axis (ONNX's `noop_with_empty_axes = 0`), a rank-0 input
/// (empty `dims`) has one element and reduces to one. `op` names the caller in errors.
///
/// Errors: [`Error::InvalidArgument`] for an axis outside `-rank..rank` or one given
/// twice (also as `i` and `i - rank`), or a layout needing more than [`MAX_RANK`]
/// merged axes; [`Error::SizeOverflow`] when the shape's product overflows.
pub fn plan_axes(op: &str, dims: &[usize], axes: &[i64]) -> Result<AxesPlan> {
    let rank = dims.len();
    let mut reduced = vec![axes.is_empty(); rank];
    let mut given: Vec<Option<i64>> = vec![None; rank];
    for &a in axes {
        let r = rank as i64;
        let k = if a < 0 { a.checked_add(r) } else { Some(a) };
        let Some(k) = k.filter(|k| (0..r).contains(k)) else {
            return Err(Error::InvalidArgument {
                op: op.to_string(),
                reason: format!(
                    "axis {a} is out of range for shape {dims:?} (rank {rank}: axes {}..{rank})",
                    -r
                ),
            });
        };
        let k = k as usize;
        if let Some(prev) = given[k] {
            return Err(Error::InvalidArgument {
                op: op.to_string(),
                reason: format!("axis {a} repeats axis {prev} of shape {dims:?}"),
            });
        }
        given[k] = Some(a);
        reduced[k] = true;
    }
    let overflow = || Error::SizeOverflow {
        what: format!("{op}: shape {dims:?}"),
    };
    dims.iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .ok_or_else(overflow)?;
    // Row-major input strides (the product fits, so every stride does).
    let mut strides = vec![1usize; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    let mut out_dims = Vec::new();
    let mut keep_dims = Vec::new();
    for (i, &d) in dims.iter().enumerate() {
        if reduced[i] {
            keep_dims.push(1);
        } else {
            out_dims.push(d);
            keep_dims.push(d);
        }
    }
    let group = |want: bool| -> (usize, Vec<usize>, Vec<usize>) {
        let n: usize = (0..rank)
            .filter(|&i| reduced[i] == want)
            .map(|i| dims[i])
            .product();
        if n == 0 {
            return (0, vec![0], vec![0]);
        }
        let (mut gd, mut gs): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for i in (0..rank).filter(|&i| reduced[i] == want && dims[i] != 1) {
            let (d, s) = (dims[i], strides[i]);
            match (gd.last_mut(), gs.last_mut()) {
                (Some(pd), Some(ps)) if *ps == s * d => {
                    *pd *= d;
                    *ps = s;
                }
                _ => {
                    gd.push(d);
                    gs.push(s);
                }
            }
        }
        (n, gd, gs)
    };
    let (n_out, mut kd, mut ks) = group(false);
    let (n_red, rd, rs) = group(true);
    let nkeep = kd.len();
    kd.extend(rd);
    ks.extend(rs);
    if kd.len() > MAX_RANK {
        return Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!(
                "axes {axes:?} of shape {dims:?} leave {} alternating runs of kept and \
                 reduced axes; at most {MAX_RANK} are supported",
                kd.len()
            ),
        });
    }
    Ok(AxesPlan {
        reduced,
        out_dims,
        keep_dims,
        n_out,
        n_red,
        dims: kd,
        strides: ks,
        nkeep,
    })
}

/// The input offset of item `j` of output `o` in a kernel layout (`dims`, `strides`,
/// `nkeep` as in [`AxesPlan`]): `o` decomposed row-major over the kept entries, `j` over
/// the reduced ones, each digit times its stride.
#[inline]
pub fn offset(dims: &[usize], strides: &[usize], nkeep: usize, o: usize, j: usize) -> usize {
    let mut off = 0;
    for (idx, mut v) in [(0..nkeep, o), (nkeep..dims.len(), j)] {
        for i in idx.rev() {
            let d = dims[i].max(1);
            off += (v % d) * strides[i];
            v /= d;
        }
    }
    off
}

/// The per-type pieces of the contract's reductions along axes (f32, f64).
pub trait AxisReal: Real {
    /// +inf.
    const INFINITY: Self;
    /// The largest exponent of a finite value (127, 1023): `2^k` is a normal number for
    /// `k <= MAX_EXP`.
    const MAX_EXP: i32;
    /// `e` with `2^e <= |self| < 2^(e+1)` for a finite nonzero value (subnormals
    /// included: from the position of the leading mantissa bit).
    fn exponent(self) -> i32;
    /// `2^k` exactly, for `k` from the smallest subnormal's exponent to `MAX_EXP`.
    fn pow2(k: i32) -> Self;
    /// `n` rounded to nearest even.
    fn from_count(n: usize) -> Self;
    /// Whether this is +inf or -inf.
    fn is_inf(self) -> bool;

    /// `x · 2^k` for L2's scaling (`k = -e`, so every scaled item is below 2 in
    /// magnitude): `k <= MAX_EXP` is the one product `x * 2^k` (exact unless it
    /// underflows, which for `k < 0` rounds once); larger `k` (a subnormal maximum) is
    /// `(x * 2^(k - MAX_EXP)) * 2^MAX_EXP`, two exact products.
    #[inline(always)]
    fn scale(self, k: i32) -> Self {
        if k <= Self::MAX_EXP {
            self * Self::pow2(k)
        } else {
            (self * Self::pow2(k - Self::MAX_EXP)) * Self::pow2(Self::MAX_EXP)
        }
    }
}

impl AxisReal for f32 {
    const INFINITY: Self = f32::INFINITY;
    const MAX_EXP: i32 = 127;
    #[inline(always)]
    fn exponent(self) -> i32 {
        let b = self.to_bits() & 0x7fff_ffff;
        let be = (b >> 23) as i32;
        if be != 0 {
            be - 127
        } else {
            // Subnormal: value = mant * 2^-149, leading bit at position p.
            (31 - (b & 0x7f_ffff).leading_zeros() as i32) - 149
        }
    }
    #[inline(always)]
    fn pow2(k: i32) -> Self {
        if k >= -126 {
            f32::from_bits(((k + 127) as u32) << 23)
        } else {
            f32::from_bits(1u32 << (k + 149))
        }
    }
    #[inline(always)]
    fn from_count(n: usize) -> Self {
        n as f32
    }
    #[inline(always)]
    fn is_inf(self) -> bool {
        self.is_infinite()
    }
}

impl AxisReal for f64 {
    const INFINITY: Self = f64::INFINITY;
    const MAX_EXP: i32 = 1023;
    #[inline(always)]
    fn exponent(self) -> i32 {
        let b = self.to_bits() & 0x7fff_ffff_ffff_ffff;
        let be = (b >> 52) as i32;
        if be != 0 {
            be - 1023
        } else {
            (63 - (b & 0xf_ffff_ffff_ffff).leading_zeros() as i32) - 1074
        }
    }
    #[inline(always)]
    fn pow2(k: i32) -> Self {
        if k >= -1022 {
            f64::from_bits(((k + 1023) as u64) << 52)
        } else {
            f64::from_bits(1u64 << (k + 1074))
        }
    }
    #[inline(always)]
    fn from_count(n: usize) -> Self {
        n as f64
    }
    #[inline(always)]
    fn is_inf(self) -> bool {
        self.is_infinite()
    }
}

/// L2's scale from `m = max_nan(|x_j|)`: `Err(result)` when the result is decided
/// without a sum (`m` NaN: NaN; `m` infinite: +inf; `m` zero, the empty reduction
/// included: +0.0), else `Ok(e)` with `2^e <= m < 2^(e+1)`. Items are then scaled by
/// `2^-e` ([`AxisReal::scale`]) and the result is `sqrt(s) * 2^e`.
#[inline]
pub fn l2_exponent<R: AxisReal>(m: R) -> std::result::Result<i32, R> {
    if m.is_nan() || m.is_inf() {
        Err(m)
    } else if m == R::ZERO {
        Err(R::ZERO)
    } else {
        Ok(m.exponent())
    }
}

/// L2's finish: `sqrt(s) * 2^e` (one correctly rounded product: `2^e` is exact for
/// every exponent of a nonzero finite value).
#[inline]
pub fn l2_finish<R: AxisReal>(s: R, e: i32) -> R {
    s.sqrt() * R::pow2(e)
}

/// Log-sum-exp's shortcut from `m = max_nan(x_j)`: `Err(result)` when decided without
/// a sum (NaN: NaN; +inf: +inf; -inf, the empty reduction included: -inf), else
/// `Ok(m)`; the result is then `m + log(Σ exp(x_j - m))`.
#[inline]
pub fn lse_max<R: AxisReal>(m: R) -> std::result::Result<R, R> {
    if m.is_nan() || m.is_inf() {
        Err(m)
    } else {
        Ok(m)
    }
}

/// Mean's finish: `s / R(n)` (one division; `n = 0` gives `0 / 0` = NaN).
#[inline]
pub fn mean_finish<R: AxisReal>(s: R, n: usize) -> R {
    s / R::from_count(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_resolve_merge_and_refuse() {
        let p = plan_axes("t", &[2, 3, 4], &[-1]).unwrap();
        assert_eq!(
            (p.out_dims.clone(), p.keep_dims.clone()),
            (vec![2, 3], vec![2, 3, 1])
        );
        assert_eq!(
            (p.dims.clone(), p.strides.clone(), p.nkeep),
            (vec![6, 4], vec![4, 1], 1)
        );
        assert_eq!((p.n_out, p.n_red), (6, 4));
        let p = plan_axes("t", &[2, 3, 4], &[0, 2]).unwrap();
        assert_eq!(
            (p.dims, p.strides, p.nkeep),
            (vec![3, 2, 4], vec![4, 12, 1], 1)
        );
        let p = plan_axes("t", &[2, 3, 4], &[]).unwrap();
        assert_eq!((p.n_out, p.n_red, p.out_dims.len()), (1, 24, 0));
        assert_eq!((p.dims, p.strides, p.nkeep), (vec![24], vec![1], 0));
        let p = plan_axes("t", &[], &[]).unwrap();
        assert_eq!((p.n_out, p.n_red), (1, 1));
        let p = plan_axes("t", &[2, 0, 3], &[1]).unwrap();
        assert_eq!((p.n_out, p.n_red, p.dims.clone()), (6, 0, vec![2, 3, 0]));
        let p = plan_axes("t", &[2, 0, 3], &[0]).unwrap();
        assert_eq!((p.n_out, p.n_red, p.nkeep), (0, 2, 1));
        assert!(matches!(
            plan_axes("t", &[2, 3], &[2]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            plan_axes("t", &[2, 3], &[1, -1]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            plan_axes("t", &[usize::MAX, 3], &[1]),
            Err(Error::SizeOverflow { .. })
        ));
        let dims = [2usize; 10];
        assert!(plan_axes("t", &dims, &[0, 2, 4, 6, 8]).is_err());
        assert!(plan_axes("t", &dims, &[0, 1, 2]).is_ok());
    }

    #[test]
    fn offsets_follow_row_major_digits() {
        let p = plan_axes("t", &[2, 3, 4], &[0, 2]).unwrap();
        // Output o = kept axis 1 index; j = (i0, i2) row-major.
        assert_eq!(offset(&p.dims, &p.strides, p.nkeep, 1, 0), 4);
        assert_eq!(offset(&p.dims, &p.strides, p.nkeep, 1, 5), 12 + 4 + 1);
    }

    #[test]
    fn exponents_and_powers_are_exact() {
        for k in -149..=127 {
            let p = f32::pow2(k);
            assert_eq!(p as f64, 2f64.powi(k), "{k}");
            assert_eq!(p.exponent(), k);
            if k > -149 && k < 127 {
                assert_eq!((p * 1.5).exponent(), k);
            }
        }
        for k in -1074..=1023 {
            assert_eq!(f64::pow2(k).exponent(), k);
        }
        assert_eq!(f64::pow2(-1074).to_bits(), 1);
        assert_eq!(f32::from_bits(1).scale(149), 1.0);
        assert_eq!(f32::MAX.scale(-127), f32::MAX / 2f32.powi(127));
        assert_eq!(l2_exponent(0.0f32), Err(0.0));
        assert!(l2_exponent(f32::NAN).unwrap_err().is_nan());
        assert_eq!(l2_finish(4.0f64, -3), 0.25);
        assert!(mean_finish(0.0f32, 0).is_nan());
    }
}
