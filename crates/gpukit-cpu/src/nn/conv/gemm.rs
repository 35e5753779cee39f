//! The gemm op: `y = alpha·(A·op(B)) + beta·C + bias` on the packed GEMM engine.
//!
//! Order per output (the contract): the chain `acc` over `t` ascending from `+0.0`,
//! then `v = alpha*acc`, `v = fma(beta, c, v)` when C is given, `v = v + bias[j]` when
//! bias is given, one store.

use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{Element, Result};

use super::Float;
use crate::args::{BuiltinArgs, RawBuf};
use crate::gemm::{self, Dims, GemmReal, RowMajor, Sink, TransB};
use crate::kernels::{input_slice, mul, out_range};

/// The epilogue of gemm.
struct Epilogue<'a, T: FloatElement> {
    y: RawBuf<'a, T>,
    c: Option<&'a [T]>,
    bias: Option<&'a [T]>,
    alpha: T::Real,
    beta: T::Real,
    n: usize,
}

impl<T: Float> Sink<T::Real> for Epilogue<'_, T> {
    #[inline(always)]
    fn finish(
        &self,
        _bi: usize,
        r0: usize,
        c0: usize,
        rows: usize,
        cols: usize,
        acc: &[T::Real],
        ld: usize,
    ) {
        for r in 0..rows {
            let start = (r0 + r) * self.n + c0;
            // SAFETY: the engine delivers each output exactly once and concurrent calls
            // cover disjoint tiles; this row segment lies inside y[..m*n] (checked).
            let dst = unsafe { self.y.slice_mut(start, start + cols) };
            let acc = &acc[r * ld..r * ld + cols];
            match (self.c, self.bias) {
                (None, None) => {
                    for (o, &a) in dst.iter_mut().zip(acc) {
                        *o = T::store(self.alpha * a);
                    }
                }
                (None, Some(bias)) => {
                    for ((o, &a), b) in dst.iter_mut().zip(acc).zip(&bias[c0..c0 + cols]) {
                        *o = T::store(self.alpha * a + b.load());
                    }
                }
                (Some(c), None) => {
                    for ((o, &a), cv) in dst.iter_mut().zip(acc).zip(&c[start..start + cols]) {
                        *o = T::store(self.beta.fma(cv.load(), self.alpha * a));
                    }
                }
                (Some(c), Some(bias)) => {
                    let it = dst
                        .iter_mut()
                        .zip(acc)
                        .zip(&c[start..start + cols])
                        .zip(&bias[c0..c0 + cols]);
                    for (((o, &a), cv), b) in it {
                        *o = T::store(self.beta.fma(cv.load(), self.alpha * a) + b.load());
                    }
                }
            }
        }
    }
}

/// gemm. Args: y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta.
pub(super) fn gemm<T: Float>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: GemmReal + FloatElement<Real = T::Real> + Element,
{
    let (m, k, n) = (args.usize(5)?, args.usize(6)?, args.usize(7)?);
    let trans = args.usize(8)? != 0;
    let has_c = args.usize(9)? != 0;
    let has_bias = args.usize(10)? != 0;
    let alpha = <T::Real as Real>::from_f64(args.f64(11)?);
    let beta = <T::Real as Real>::from_f64(args.f64(12)?);
    let y = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    let c = args.buf::<T>(3)?;
    let bias = args.buf::<T>(4)?;
    let mn = mul(args, 7, m, n)?;
    args.need(0, &y, mn)?;
    args.need(1, &a, mul(args, 6, m, k)?)?;
    args.need(2, &b, mul(args, 6, k, n)?)?;
    args.need(3, &c, if has_c { mn } else { 0 })?;
    args.need(4, &bias, if has_bias { n } else { 0 })?;
    if mn == 0 {
        return Ok(());
    }
    let outs = [out_range(&y)];
    // SAFETY: each input holds the counts just checked; copied if it overlaps y (c may
    // be exactly y: the copy is taken before anything is written).
    let (av, bv, cv, biasv) = unsafe {
        (
            input_slice(&a, m * k, &outs),
            input_slice(&b, k * n, &outs),
            input_slice(&c, if has_c { mn } else { 0 }, &outs),
            input_slice(&bias, if has_bias { n } else { 0 }, &outs),
        )
    };
    let (av, bv, cv, biasv): (&[T], &[T], &[T], &[T]) = (&av, &bv, &cv, &biasv);
    let out = Epilogue {
        y,
        c: has_c.then_some(cv),
        bias: has_bias.then_some(biasv),
        alpha,
        beta,
        n,
    };
    let d = Dims { batch: 1, m, n, k };
    let a = RowMajor {
        data: av,
        ld: k,
        bstride: 0,
    };
    if trans {
        gemm::run(
            d,
            &a,
            &TransB {
                data: bv,
                ld: k,
                bstride: 0,
            },
            &out,
        )
    } else {
        gemm::run(
            d,
            &a,
            &RowMajor {
                data: bv,
                ld: n,
                bstride: 0,
            },
            &out,
        )
    }
}
