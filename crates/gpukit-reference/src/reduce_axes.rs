//! Reductions along a set of axes: [`reduce_axes`] (sum, mean, max, min, prod, L1, L2,
//! log-sum-exp), literally as [`gpukit_core::reduce_axes`] and docs/numerics.md
//! ("Reductions along axes") state them.

use gpukit_core::Element;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real, max_nan, min_nan};
use gpukit_core::reduce::fold;
use gpukit_core::reduce_axes::{
    AxisReal, ReduceOp, l2_exponent, l2_finish, lse_max, mean_finish, plan_axes,
};

/// An element type [`reduce_axes`] takes: the four float dtypes (every op) and i32/i64
/// (sum, prod, max, min, wrapping).
pub trait ReduceElem: Element {
    /// The reduction `op` of `items` (in their order `j = 0..n`), or `None` when the
    /// dtype does not define `op`.
    fn reduce_line(op: ReduceOp, items: &[Self]) -> Option<Self>;
}

/// The float line: load every item, then the op's table row of
/// [`gpukit_core::reduce_axes`], stored once.
fn float_line<T: FloatElement>(op: ReduceOp, items: &[T]) -> T
where
    T::Real: AxisReal,
{
    let v: Vec<T::Real> = items.iter().map(|x| x.load()).collect();
    let n = v.len();
    let zero = <T::Real as Real>::ZERO;
    let add = |a: T::Real, b: T::Real| a + b;
    let sum = || fold(n, zero, |a, i| a + v[i], add);
    let max = || (0..n).fold(T::Real::NEG_INFINITY, |a, i| max_nan(a, v[i]));
    let r = match op {
        ReduceOp::Sum => sum(),
        ReduceOp::Mean => mean_finish(sum(), n),
        ReduceOp::Max => max(),
        ReduceOp::Min => (0..n).fold(T::Real::INFINITY, |a, i| min_nan(a, v[i])),
        ReduceOp::Prod => fold(n, T::Real::ONE, |a, i| a * v[i], |a, b| a * b),
        ReduceOp::L1 => fold(n, zero, |a, i| a + v[i].abs(), add),
        ReduceOp::L2 => {
            // m from +0: the empty reduction and all zeros give +0.
            let m = (0..n).fold(zero, |a, i| max_nan(a, v[i].abs()));
            match l2_exponent(m) {
                Err(r) => r,
                Ok(e) => {
                    let s = fold(
                        n,
                        zero,
                        |a, i| {
                            let y = v[i].scale(-e);
                            y.fma(y, a)
                        },
                        add,
                    );
                    l2_finish(s, e)
                }
            }
        }
        ReduceOp::LogSumExp => match lse_max(max()) {
            Err(r) => r,
            Ok(m) => {
                let s = fold(n, zero, |a, i| a + (v[i] - m).exp(), add);
                m + s.log()
            }
        },
    };
    T::store(r)
}

macro_rules! float_elem {
    ($t:ty) => {
        impl ReduceElem for $t {
            fn reduce_line(op: ReduceOp, items: &[Self]) -> Option<Self> {
                Some(float_line(op, items))
            }
        }
    };
}
float_elem!(f32);
float_elem!(f64);
float_elem!(f16);
float_elem!(bf16);

macro_rules! int_elem {
    ($t:ty) => {
        impl ReduceElem for $t {
            fn reduce_line(op: ReduceOp, items: &[Self]) -> Option<Self> {
                let it = items.iter().copied();
                match op {
                    ReduceOp::Sum => Some(it.fold(0, <$t>::wrapping_add)),
                    ReduceOp::Prod => Some(it.fold(1, <$t>::wrapping_mul)),
                    ReduceOp::Max => Some(it.fold(<$t>::MIN, <$t>::max)),
                    ReduceOp::Min => Some(it.fold(<$t>::MAX, <$t>::min)),
                    _ => None,
                }
            }
        }
    };
}
int_elem!(i64);
int_elem!(i32);

/// Reduction `op` of `x` (shape `dims`, row-major) along `axes`: negative axes count
/// from the end, an empty `axes` reduces every axis, a rank-0 `x` (empty `dims`) is one
/// element. The output is row-major over the kept axes (its shape is
/// [`gpukit_core::reduce_axes::AxesPlan::out_dims`], or `keep_dims` with keepdims: the
/// same elements). Output element `o` reduces the items `x_j` whose reduced coordinates
/// run row-major over the reduced axes, `j = 0..n`, with the op's row of the table in
/// [`gpukit_core::reduce_axes`] (the reduction shape for every sum-like part).
///
/// Empty reductions: sum, L1, L2 +0; mean NaN; max -inf (integers: MIN); min +inf
/// (MAX); prod 1; log-sum-exp -inf.
///
/// # Panics
/// If `x.len()` is not the product of `dims`, the axes are invalid (out of range,
/// repeated), or `op` is not defined for an integer dtype (mean, L1, L2, log-sum-exp).
pub fn reduce_axes<T: ReduceElem>(x: &[T], dims: &[usize], axes: &[i64], op: ReduceOp) -> Vec<T> {
    crate::assert_len(
        "reduce_axes",
        "x",
        x.len(),
        crate::numel(dims, "reduce_axes"),
    );
    let plan = plan_axes("reduce_axes", dims, axes)
        .unwrap_or_else(|e| panic!("gpukit-reference::reduce_axes: {e}"));
    let rank = dims.len();
    let mut strides = vec![1usize; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    let kept: Vec<usize> = (0..rank).filter(|&i| !plan.reduced[i]).collect();
    let red: Vec<usize> = (0..rank).filter(|&i| plan.reduced[i]).collect();
    let n_out: usize = kept.iter().map(|&i| dims[i]).product();
    let n_red: usize = red.iter().map(|&i| dims[i]).product();
    // The input offset of row-major index `v` over the axes `axes_of`.
    let part = |axes_of: &[usize], mut v: usize| {
        let mut off = 0;
        for &i in axes_of.iter().rev() {
            off += (v % dims[i]) * strides[i];
            v /= dims[i];
        }
        off
    };
    let mut items = Vec::with_capacity(n_red);
    (0..n_out)
        .map(|o| {
            let base = part(&kept, o);
            items.clear();
            items.extend((0..n_red).map(|j| x[base + part(&red, j)]));
            T::reduce_line(op, &items).unwrap_or_else(|| {
                panic!(
                    "gpukit-reference::reduce_axes: {op} is not defined for {}",
                    T::DTYPE
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cases_by_hand() {
        let x: Vec<f32> = (0..6).map(|i| i as f32).collect();
        assert_eq!(
            reduce_axes(&x, &[2, 3], &[0], ReduceOp::Sum),
            vec![3.0, 5.0, 7.0]
        );
        assert_eq!(
            reduce_axes(&x, &[2, 3], &[-1], ReduceOp::Max),
            vec![2.0, 5.0]
        );
        assert_eq!(reduce_axes(&x, &[2, 3], &[], ReduceOp::Mean), vec![2.5]);
        assert_eq!(
            reduce_axes(&x, &[2, 3], &[1], ReduceOp::Prod),
            vec![0.0, 60.0]
        );
        assert_eq!(
            reduce_axes(&[3.0f64, -4.0], &[2], &[0], ReduceOp::L2),
            vec![5.0]
        );
        assert_eq!(
            reduce_axes(&[3i32, -4], &[2], &[0], ReduceOp::Min),
            vec![-4]
        );
        let e: Vec<f32> = vec![];
        assert_eq!(
            reduce_axes(&e, &[2, 0], &[1], ReduceOp::Max),
            vec![f32::NEG_INFINITY; 2]
        );
        assert_eq!(reduce_axes(&e, &[0, 2], &[0], ReduceOp::Prod), vec![1.0; 2]);
        assert!(reduce_axes(&e, &[0], &[0], ReduceOp::Mean)[0].is_nan());
        assert_eq!(reduce_axes(&[7.0f32], &[], &[], ReduceOp::Sum), vec![7.0]);
    }
}
