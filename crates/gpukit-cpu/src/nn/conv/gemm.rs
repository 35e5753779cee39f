//! The gemm op: `y = alpha·(A·op(B)) + beta·C + bias` on the packed GEMM engine.
//!
//! Order per output (the contract): the chain `acc` over `t` ascending from `+0.0`,
//! then `v = alpha*acc`, `v = fma(beta, c, v)` when C is given, `v = v + bias[j]` when
//! bias is given, one store.

use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{Element, Result};

use super::Float;
use crate::args::{BuiltinArgs, RawBuf};
use crate::gemm::{self, Dims, GemmReal, RowMajor, Sink, TransA, TransB};
use crate::kernels::{arg_err, input_slice, mul, out_range};

/// The epilogue of gemm. C's element `(r, j)` is `c[r*c_rs + j*c_cs]` (a stride of 0
/// broadcasts a row, a column or a scalar).
struct Epilogue<'a, T: FloatElement> {
    y: RawBuf<'a, T>,
    c: Option<&'a [T]>,
    c_rs: usize,
    c_cs: usize,
    bias: Option<&'a [T]>,
    alpha: T::Real,
    beta: T::Real,
    n: usize,
}

impl<T: Float> Epilogue<'_, T> {
    /// `v = alpha*acc`, then `fma(beta, c, v)` with C, then `+ bias` with a bias.
    #[inline(always)]
    fn value(&self, a: T::Real, c: Option<&T>, b: Option<&T>) -> T::Real {
        let mut v = self.alpha * a;
        if let Some(c) = c {
            v = self.beta.fma(c.load(), v);
        }
        if let Some(b) = b {
            v = v + b.load();
        }
        v
    }
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
            let bias = self.bias.map(|b| &b[c0..c0 + cols]);
            match (self.c, bias) {
                (None, None) => {
                    for (o, &a) in dst.iter_mut().zip(acc) {
                        *o = T::store(self.alpha * a);
                    }
                }
                (None, Some(bias)) => {
                    for ((o, &a), b) in dst.iter_mut().zip(acc).zip(bias) {
                        *o = T::store(self.value(a, None, Some(b)));
                    }
                }
                (Some(c), bias) => {
                    let cbase = (r0 + r) * self.c_rs + c0 * self.c_cs;
                    if self.c_cs == 1 {
                        // A full C or a broadcast row: contiguous along the row.
                        let cs = &c[cbase..cbase + cols];
                        for (j, ((o, &a), cv)) in dst.iter_mut().zip(acc).zip(cs).enumerate() {
                            *o = T::store(self.value(a, Some(cv), bias.map(|b| &b[j])));
                        }
                    } else {
                        for (j, (o, &a)) in dst.iter_mut().zip(acc).enumerate() {
                            let cv = &c[cbase + j * self.c_cs];
                            *o = T::store(self.value(a, Some(cv), bias.map(|b| &b[j])));
                        }
                    }
                }
            }
        }
    }
}

/// gemm. Args: y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta,
/// trans_a, c_rs, c_cs.
pub(super) fn gemm<T: Float>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: GemmReal + FloatElement<Real = T::Real> + Element,
{
    let (m, k, n) = (args.usize(5)?, args.usize(6)?, args.usize(7)?);
    let trans_b = args.usize(8)? != 0;
    let has_c = args.usize(9)? != 0;
    let has_bias = args.usize(10)? != 0;
    let alpha = <T::Real as Real>::from_f64(args.f64(11)?);
    let beta = <T::Real as Real>::from_f64(args.f64(12)?);
    let trans_a = args.usize(13)? != 0;
    let (c_rs, c_cs) = (args.usize(14)?, args.usize(15)?);
    let y = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    let c = args.buf::<T>(3)?;
    let bias = args.buf::<T>(4)?;
    let mn = mul(args, 7, m, n)?;
    args.need(0, &y, mn)?;
    args.need(1, &a, mul(args, 6, m, k)?)?;
    args.need(2, &b, mul(args, 6, k, n)?)?;
    // C is read up to (m-1)*c_rs + (n-1)*c_cs (check_args has bounded this already).
    let c_len = if has_c && mn != 0 {
        let last = mul(args, 14, m - 1, c_rs)?
            .checked_add(mul(args, 15, n - 1, c_cs)?)
            .and_then(|v| v.checked_add(1));
        match last {
            Some(v) => v,
            None => return arg_err(args, 14, "C's strides overflow"),
        }
    } else {
        0
    };
    args.need(3, &c, c_len)?;
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
            input_slice(&c, c_len, &outs),
            input_slice(&bias, if has_bias { n } else { 0 }, &outs),
        )
    };
    let (av, bv, cv, biasv): (&[T], &[T], &[T], &[T]) = (&av, &bv, &cv, &biasv);
    let out = Epilogue {
        y,
        c: has_c.then_some(cv),
        c_rs,
        c_cs,
        bias: has_bias.then_some(biasv),
        alpha,
        beta,
        n,
    };
    let d = Dims { batch: 1, m, n, k };
    let (ra, ta) = (
        RowMajor {
            data: av,
            ld: k,
            bstride: 0,
        },
        TransA {
            data: av,
            ld: m,
            bstride: 0,
        },
    );
    let (rb, tb) = (
        RowMajor {
            data: bv,
            ld: n,
            bstride: 0,
        },
        TransB {
            data: bv,
            ld: k,
            bstride: 0,
        },
    );
    // One packing routine per operand layout, the same engine and micro-kernel.
    match (trans_a, trans_b) {
        (false, false) => gemm::run(d, &ra, &rb, &out),
        (false, true) => gemm::run(d, &ra, &tb, &out),
        (true, false) => gemm::run(d, &ta, &rb, &out),
        (true, true) => gemm::run(d, &ta, &tb, &out),
    }
}
