//! Batched matmul: cache-blocked (packed A and B panels, blocked over k, m and n),
//! register-tiled microkernels (AVX-512, AVX2+FMA, portable), rayon over output blocks.
//!
//! Contract: `c[r][j]` is the fma chain `acc = fma(a[r][t], b[t][j], acc)` over
//! `t = 0..k` ascending from `+0.0` in the compute type, stored once. Each output lives
//! in one vector lane of one accumulator; between k-blocks its partial sum is kept in a
//! compute-type scratch block (exact), and k-blocks run in ascending order, so blocking
//! and vectorisation never change an output's operation sequence.

use gpukit_core::numeric::Real;
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::reduce::CpuFloat;
use super::simd::{SimdLevel, simd_level};
use super::{arg_err, input_slice, mul};
use crate::builtins::BuiltinArgs;

/// A microkernel: for `r < mr`, `j < nr`, with `a` packed `[kc][mr]` and `b` packed
/// `[kc][nr]`: `c[r*ldc + j] = fma(a[t*mr + r], b[t*nr + j], c[r*ldc + j])` for
/// `t = 0..kc` in order.
type MicroFn<R> = unsafe fn(usize, *const R, *const R, *mut R, usize);

/// A microkernel and the blocking it is tuned for.
#[derive(Clone, Copy)]
pub(crate) struct Micro<R> {
    mr: usize,
    nr: usize,
    kc: usize,
    mc: usize,
    nc: usize,
    f: MicroFn<R>,
}

/// The portable microkernel.
///
/// # Safety
/// `a` holds `kc * MR`, `b` holds `kc * NR` readable values; `c` is valid for reads
/// and writes of `MR` rows of `NR` values at stride `ldc`, and nothing else accesses them.
unsafe fn micro_scalar<R: Real, const MR: usize, const NR: usize>(
    kc: usize,
    a: *const R,
    b: *const R,
    c: *mut R,
    ldc: usize,
) {
    let mut acc = [[R::ZERO; NR]; MR];
    // SAFETY: the bounds are the function's contract.
    unsafe {
        for (r, row) in acc.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = *c.add(r * ldc + j);
            }
        }
        for t in 0..kc {
            let ap = a.add(t * MR);
            let bp = b.add(t * NR);
            for (r, row) in acc.iter_mut().enumerate() {
                let x = *ap.add(r);
                for (j, v) in row.iter_mut().enumerate() {
                    *v = x.fma(*bp.add(j), *v);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                *c.add(r * ldc + j) = *v;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    macro_rules! micro {
        ($name:ident, $feat:literal, $t:ty, $v:ty, $w:literal, $mr:literal, $nv:literal,
         $load:ident, $store:ident, $set1:ident, $fmadd:ident) => {
            /// A `$mr` x `$nv * $w` microkernel (see `MicroFn`).
            ///
            /// # Safety
            /// As `MicroFn`'s contract, and the CPU supports the target features.
            #[target_feature(enable = $feat)]
            pub(super) unsafe fn $name(
                kc: usize,
                a: *const $t,
                b: *const $t,
                c: *mut $t,
                ldc: usize,
            ) {
                const MR: usize = $mr;
                const NV: usize = $nv;
                const NR: usize = NV * $w;
                // SAFETY: `a` holds kc*MR, `b` kc*NR values; `c` holds MR rows of NR
                // values at stride ldc (the contract); unaligned loads and stores.
                unsafe {
                    let mut acc: [[$v; NV]; MR] = [[$load(c); NV]; MR];
                    for r in 0..MR {
                        for v in 0..NV {
                            acc[r][v] = $load(c.add(r * ldc + v * $w));
                        }
                    }
                    let mut ap = a;
                    let mut bp = b;
                    for _ in 0..kc {
                        let mut bv: [$v; NV] = [$load(bp); NV];
                        for v in 1..NV {
                            bv[v] = $load(bp.add(v * $w));
                        }
                        for r in 0..MR {
                            let x = $set1(*ap.add(r));
                            for v in 0..NV {
                                acc[r][v] = $fmadd(x, bv[v], acc[r][v]);
                            }
                        }
                        ap = ap.add(MR);
                        bp = bp.add(NR);
                    }
                    for r in 0..MR {
                        for v in 0..NV {
                            $store(c.add(r * ldc + v * $w), acc[r][v]);
                        }
                    }
                }
            }
        };
    }

    micro!(
        f32_avx512,
        "avx512f,fma",
        f32,
        __m512,
        16,
        12,
        2,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps
    );
    micro!(
        f64_avx512,
        "avx512f,fma",
        f64,
        __m512d,
        8,
        12,
        2,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_fmadd_pd
    );
    micro!(
        f32_avx2,
        "avx2,fma",
        f32,
        __m256,
        8,
        6,
        2,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_fmadd_ps
    );
    micro!(
        f64_avx2,
        "avx2,fma",
        f64,
        __m256d,
        4,
        6,
        2,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_set1_pd,
        _mm256_fmadd_pd
    );
}

/// Compute types with microkernels.
pub(crate) trait MatReal: Real {
    /// The microkernel for `level`.
    fn micro(level: SimdLevel) -> Micro<Self>;
}

const fn spec<R>(mr: usize, nr: usize, kc: usize, nc: usize, f: MicroFn<R>) -> Micro<R> {
    Micro {
        mr,
        nr,
        kc,
        mc: mr * 96usize.div_ceil(mr),
        nc,
        f,
    }
}

impl MatReal for f32 {
    fn micro(level: SimdLevel) -> Micro<f32> {
        match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => spec(12, 32, 256, 512, x86::f32_avx512),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => spec(6, 16, 256, 256, x86::f32_avx2),
            _ => spec(4, 4, 256, 256, micro_scalar::<f32, 4, 4>),
        }
    }
}

impl MatReal for f64 {
    fn micro(level: SimdLevel) -> Micro<f64> {
        match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => spec(12, 16, 256, 256, x86::f64_avx512),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => spec(6, 8, 256, 256, x86::f64_avx2),
            _ => spec(4, 4, 256, 256, micro_scalar::<f64, 4, 4>),
        }
    }
}

/// Sizes of one batched matmul.
#[derive(Clone, Copy)]
struct Dims {
    k: usize,
    n: usize,
    a_bs: usize,
    b_bs: usize,
}

/// Computes the output block rows `r0..r0+mc`, cols `c0..c0+nc` of batch `bi` into
/// `cbuf` (compute type, row stride `ldc`), which must hold +0.0 on entry.
#[allow(clippy::too_many_arguments)]
fn block<T: CpuFloat>(
    u: &Micro<T::Real>,
    d: Dims,
    a: &[T],
    b: &[T],
    (r0, mc): (usize, usize),
    (c0, nc): (usize, usize),
    cbuf: &mut [T::Real],
    ldc: usize,
    apack: &mut Vec<T::Real>,
    bpack: &mut Vec<T::Real>,
) {
    let (mr, nr) = (u.mr, u.nr);
    let mp = mc.div_ceil(mr);
    let np = nc.div_ceil(nr);
    let mut p0 = 0;
    while p0 < d.k {
        let kc = u.kc.min(d.k - p0);
        apack.clear();
        apack.resize(mp * mr * kc, T::Real::ZERO);
        bpack.clear();
        bpack.resize(np * nr * kc, T::Real::ZERO);
        // Pack A: panel ir holds [kc][mr]; rows past m stay +0.0 (never stored).
        let mut tmp = vec![T::Real::ZERO; kc];
        for r in 0..mc {
            let (ir, rr) = (r / mr, r % mr);
            let src = &a[(r0 + r) * d.k + p0..(r0 + r) * d.k + p0 + kc];
            T::load_slice(src, &mut tmp);
            let dst = &mut apack[ir * mr * kc..(ir + 1) * mr * kc];
            for (t, &v) in tmp.iter().enumerate() {
                dst[t * mr + rr] = v;
            }
        }
        // Pack B: panel jr holds [kc][nr]; columns past n stay +0.0 (never stored).
        for t in 0..kc {
            let row = &b[(p0 + t) * d.n + c0..(p0 + t) * d.n + c0 + nc];
            for jr in 0..np {
                let j0 = jr * nr;
                let j1 = (j0 + nr).min(nc);
                let dst = &mut bpack[jr * nr * kc + t * nr..jr * nr * kc + t * nr + (j1 - j0)];
                T::load_slice(&row[j0..j1], dst);
            }
        }
        for jr in 0..np {
            for ir in 0..mp {
                let cp = &mut cbuf[ir * mr * ldc + jr * nr..];
                debug_assert!(cp.len() > (mr - 1) * ldc + nr - 1);
                // SAFETY: apack holds mp*mr*kc and bpack np*nr*kc values, so the panels
                // at ir and jr hold kc*mr and kc*nr; cbuf holds mp*mr rows of
                // ldc = np*nr values, so the tile at (ir, jr) is inside `cp`; the
                // microkernel's CPU features are those of the level it was picked for.
                unsafe {
                    (u.f)(
                        kc,
                        apack.as_ptr().add(ir * mr * kc),
                        bpack.as_ptr().add(jr * nr * kc),
                        cp.as_mut_ptr(),
                        ldc,
                    )
                };
            }
        }
        p0 += kc;
    }
}

/// Batched matmul. Args: c, a, b, batch, m, k, n, a_bstride, b_bstride.
pub(crate) fn bmm<T>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T: CpuFloat + Element,
    T::Real: MatReal,
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
    let u = T::Real::micro(simd_level());
    let d = Dims { k, n, a_bs, b_bs };
    // Block sizes: shrink the row block until there are enough tasks for the pool.
    let threads = rayon::current_num_threads().max(1);
    let nblocks = n.div_ceil(u.nc);
    let mut mc = u.mc;
    while mc > u.mr && batch * m.div_ceil(mc) * nblocks < 2 * threads {
        mc = (mc / 2).div_ceil(u.mr) * u.mr;
    }
    let mblocks = m.div_ceil(mc);
    let tasks = batch * mblocks * nblocks;
    let task = |t: usize| {
        let bi = t / (mblocks * nblocks);
        let rb = (t / nblocks) % mblocks;
        let cb = t % nblocks;
        let (r0, c0) = (rb * mc, cb * u.nc);
        let mcb = mc.min(m - r0);
        let ncb = u.nc.min(n - c0);
        let ldc = ncb.div_ceil(u.nr) * u.nr;
        let rows = mcb.div_ceil(u.mr) * u.mr;
        let mut cbuf = vec![T::Real::ZERO; rows * ldc];
        if k > 0 {
            let a_i = &av[bi * d.a_bs..bi * d.a_bs + m * k];
            let b_i = &bv[bi * d.b_bs..bi * d.b_bs + k * n];
            let (mut ap, mut bp) = (Vec::new(), Vec::new());
            block::<T>(
                &u,
                d,
                a_i,
                b_i,
                (r0, mcb),
                (c0, ncb),
                &mut cbuf,
                ldc,
                &mut ap,
                &mut bp,
            );
        }
        for r in 0..mcb {
            let start = bi * mn + (r0 + r) * n + c0;
            // SAFETY: tasks own disjoint (batch, row block, column block) tiles of
            // c[..nc_total]; each row segment is inside it.
            let dst = unsafe { c.slice_mut(start, start + ncb) };
            for (o, &v) in dst.iter_mut().zip(&cbuf[r * ldc..r * ldc + ncb]) {
                *o = T::store(v);
            }
        }
    };
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    Ok(())
}
