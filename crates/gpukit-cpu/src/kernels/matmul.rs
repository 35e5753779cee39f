//! Batched matmul on the shared packed GEMM engine ([`crate::gemm`]).
//!
//! Contract: `c[r][j]` is the fma chain `acc = fma(a[r][t], b[t][j], acc)` over
//! `t = 0..k` ascending from `+0.0` in the compute type, stored once. The engine keeps
//! every output's chain intact across k-blocks, tiles and threads (see its docs).

use gpukit_core::numeric::FloatElement;
use gpukit_core::{Element, Result};

use super::reduce::CpuFloat;
use super::{arg_err, input_slice, mul};
use crate::args::{BuiltinArgs, RawBuf};
use crate::gemm::{self, Dims, GemmReal, RowMajor, Sink};

/// Stores finished chains into the contiguous `[batch, m, n]` output.
struct Store<'a, T> {
    c: RawBuf<'a, T>,
    m: usize,
    n: usize,
}

impl<T: FloatElement + Element> Sink<T::Real> for Store<'_, T> {
    #[inline(always)]
    fn finish(
        &self,
        bi: usize,
        r0: usize,
        c0: usize,
        rows: usize,
        cols: usize,
        acc: &[T::Real],
        ld: usize,
    ) {
        for r in 0..rows {
            let start = (bi * self.m + r0 + r) * self.n + c0;
            // SAFETY: the engine delivers each output exactly once and concurrent calls
            // cover disjoint tiles; this row segment of matrix bi lies inside
            // c[..batch*m*n] (checked by the caller).
            let dst = unsafe { self.c.slice_mut(start, start + cols) };
            for (o, &v) in dst.iter_mut().zip(&acc[r * ld..r * ld + cols]) {
                *o = T::store(v);
            }
        }
    }
}

/// Batched matmul. Args: c, a, b, batch, m, k, n, a_bstride, b_bstride.
pub(crate) fn bmm<T>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T: CpuFloat + Element,
    T::Real: GemmReal,
{
    let batch = args.usize(3)?;
    let m = args.usize(4)?;
    let k = args.usize(5)?;
    let n = args.usize(6)?;
    let a_bs = args.usize(7)?;
    let b_bs = args.usize(8)?;
    let c = args.buf::<T>(0)?;
    let a = args.buf::<T>(1)?;
    let b = args.buf::<T>(2)?;
    let mn = mul(args, 6, m, n)?;
    let nc_total = mul(args, 3, batch, mn)?;
    let span = |idx: usize, bs: usize, per: usize| -> Result<usize> {
        if batch == 0 || per == 0 {
            return Ok(0);
        }
        match bs.checked_mul(batch - 1).and_then(|x| x.checked_add(per)) {
            Some(v) => Ok(v),
            None => arg_err(args, idx, "batch stride * batch overflows"),
        }
    };
    let na = span(1, a_bs, mul(args, 5, m, k)?)?;
    let nb = span(2, b_bs, mul(args, 5, k, n)?)?;
    args.need(0, &c, nc_total)?;
    args.need(1, &a, na)?;
    args.need(2, &b, nb)?;
    if nc_total == 0 {
        return Ok(());
    }
    let c0 = c.ptr() as usize;
    let outs = [(c0, c0 + nc_total * std::mem::size_of::<T>())];
    // SAFETY: a and b hold na and nb elements; copied if they overlap c[..nc_total].
    let (av, bv) = unsafe { (input_slice(&a, na, &outs), input_slice(&b, nb, &outs)) };
    let (av, bv) = (&*av, &*bv);
    let d = Dims { batch, m, n, k };
    let a = RowMajor {
        data: av,
        ld: k,
        bstride: a_bs,
    };
    let b = RowMajor {
        data: bv,
        ld: n,
        bstride: b_bs,
    };
    gemm::run(d, &a, &b, &Store { c, m, n })
}
