//! CPU kernels of the neural-network family: the `conv` group (gemm, conv2d,
//! conv_transpose2d, max_pool2d). Contracts: [`gpukit_core::abi::conv`].
//!
//! gemm and conv2d share one blocked product: an output block `[rows × cols]` is
//! computed from a packed A block (`[kc][MR]` panels, compute type) and packed B strips
//! (`[kc][NR]`, compute type) by a register-tiled microkernel; for gemm B is the matrix
//! (either layout), for conv2d B is the im2col panel of the input (padded taps packed as
//! `+0.0`, the contract's explicit zero operand), built strip by strip and never
//! materialised whole. Every output lives in one accumulator slot and sees its terms in
//! ascending `t` (k-blocks in ascending order, partial sums kept exactly in the compute
//! type between them), so blocking, vector width and the rayon split never change an
//! output's operation sequence.
//!
//! conv_transpose2d gathers per output pixel with all of the group's output channels in
//! a vector (weights repacked `[ic][kh][kw][o]`), skipping the taps that land between
//! input elements; max_pool2d folds rows of the window with `max_nan`, which is
//! order-independent.

use std::borrow::Cow;

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real, max_nan};
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::builtins::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::simd::{SimdLevel, dispatch, simd_level};
use crate::kernels::{arg_err, input_slice, mul, out_range};

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::conv::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v: Vec<(String, BuiltinFn)> = Vec::new();
    for sig in gpukit_core::abi::conv::KERNELS {
        for &d in sig.dtypes {
            let f: Option<BuiltinFn> = match (sig.op, d) {
                ("gemm", DType::F32) => Some(gemm::<f32>),
                ("gemm", DType::F64) => Some(gemm::<f64>),
                ("gemm", DType::F16) => Some(gemm::<f16>),
                ("gemm", DType::BF16) => Some(gemm::<bf16>),
                ("conv2d", DType::F32) => Some(conv2d::<f32>),
                ("conv2d", DType::F64) => Some(conv2d::<f64>),
                ("conv2d", DType::F16) => Some(conv2d::<f16>),
                ("conv2d", DType::BF16) => Some(conv2d::<bf16>),
                ("conv_transpose2d", DType::F32) => Some(conv_transpose2d::<f32>),
                ("conv_transpose2d", DType::F64) => Some(conv_transpose2d::<f64>),
                ("conv_transpose2d", DType::F16) => Some(conv_transpose2d::<f16>),
                ("conv_transpose2d", DType::BF16) => Some(conv_transpose2d::<bf16>),
                ("max_pool2d", DType::F32) => Some(max_pool2d::<f32>),
                ("max_pool2d", DType::F64) => Some(max_pool2d::<f64>),
                ("max_pool2d", DType::F16) => Some(max_pool2d::<f16>),
                ("max_pool2d", DType::BF16) => Some(max_pool2d::<bf16>),
                _ => None,
            };
            if let Some(f) = f {
                v.push((gpukit_core::abi::kernel_name(sig.op, d), f));
            }
        }
    }
    v
}

/// A float storage type of these kernels.
trait Float: FloatElement + Element {}
impl<T: FloatElement + Element> Float for T {}

// ---------------------------------------------------------------------------------
// The blocked product
// ---------------------------------------------------------------------------------

/// k-block length: the packed A block is `mc × KC`, a B strip `KC × NR`.
const KC: usize = 256;

/// The microkernel: `c[r*ldc + j] = fma(a[t*MR + r], b[t*NR + j], c[r*ldc + j])` for
/// `t = 0..kc` in order, every `r < MR`, `j < NR`. `a` holds `kc*MR`, `b` `kc*NR`
/// values and `c` at least `(MR-1)*ldc + NR`.
#[inline(always)]
fn micro<R: Real, const MR: usize, const NR: usize>(
    kc: usize,
    a: &[R],
    b: &[R],
    c: &mut [R],
    ldc: usize,
) {
    let mut acc = [[R::ZERO; NR]; MR];
    for (r, row) in acc.iter_mut().enumerate() {
        if let Some(src) = c.get(r * ldc..r * ldc + NR) {
            row.copy_from_slice(src);
        }
    }
    for (ak, bk) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
        let (Ok(ak), Ok(bk)) = (<&[R; MR]>::try_from(ak), <&[R; NR]>::try_from(bk)) else {
            continue;
        };
        for r in 0..MR {
            let x = ak[r];
            for j in 0..NR {
                acc[r][j] = x.fma(bk[j], acc[r][j]);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        if let Some(dst) = c.get_mut(r * ldc..r * ldc + NR) {
            dst.copy_from_slice(row);
        }
    }
}

/// Fills B strips: `dst[t*NR + j] = B(t0 + t, p0 + j)` for `t < kc`, `j < np`, and
/// `+0.0` for `np <= j < NR` (columns past the block are never stored).
trait PackB<R>: Sync {
    fn pack(&self, t0: usize, kc: usize, p0: usize, np: usize, nr: usize, dst: &mut [R]);
}

/// Computes `cbuf[r*ldc + j] = Σ_t a(r0 + r, t) · B(t, c0 + j)` (the fma chain from the
/// value already in `cbuf`, `+0.0` on entry, over `t = 0..k` ascending) for `r < mc`,
/// `j < nc`. `a` is row-major with row stride `lda` (storage type, loaded exactly);
/// `cbuf` holds `mc.div_ceil(MR)*MR` rows of `ldc = nc.div_ceil(NR)*NR` values.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block<T: Float, const MR: usize, const NR: usize>(
    a: &[T],
    lda: usize,
    (r0, mc): (usize, usize),
    (c0, nc): (usize, usize),
    k: usize,
    pb: &impl PackB<T::Real>,
    cbuf: &mut [T::Real],
    ldc: usize,
) {
    let zero = <T::Real as Real>::ZERO;
    let mp = mc.div_ceil(MR);
    let np = nc.div_ceil(NR);
    let mut apack = vec![zero; mp * MR * KC.min(k)];
    let mut bpack = vec![zero; NR * KC.min(k)];
    let mut t0 = 0;
    while t0 < k {
        let kc = KC.min(k - t0);
        // Pack A: panel ir holds [kc][MR]; rows past mc stay +0.0 (never stored).
        apack[..mp * MR * kc].fill(zero);
        for r in 0..mc {
            let (ir, rr) = (r / MR, r % MR);
            let row = &a[(r0 + r) * lda + t0..(r0 + r) * lda + t0 + kc];
            let panel = &mut apack[ir * MR * kc..(ir + 1) * MR * kc];
            for (t, v) in row.iter().enumerate() {
                panel[t * MR + rr] = v.load();
            }
        }
        for jr in 0..np {
            let p0 = jr * NR;
            pb.pack(t0, kc, c0 + p0, NR.min(nc - p0), NR, &mut bpack[..kc * NR]);
            for ir in 0..mp {
                micro::<T::Real, MR, NR>(
                    kc,
                    &apack[ir * MR * kc..(ir + 1) * MR * kc],
                    &bpack[..kc * NR],
                    &mut cbuf[ir * MR * ldc + p0..],
                    ldc,
                );
            }
        }
        t0 += kc;
    }
}

/// Register tile shapes per SIMD level and compute-type width.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tile {
    /// 8 × 32 f32 (AVX-512: 16 accumulators).
    F32W,
    /// 6 × 16 f32 (AVX2: 12 accumulators; also the portable tile).
    F32N,
    /// 8 × 16 f64 (AVX-512).
    F64W,
    /// 6 × 8 f64.
    F64N,
}

fn tile<R: Real>(level: SimdLevel) -> Tile {
    let wide = level == SimdLevel::Avx512;
    match (std::mem::size_of::<R>() == 4, wide) {
        (true, true) => Tile::F32W,
        (true, false) => Tile::F32N,
        (false, true) => Tile::F64W,
        (false, false) => Tile::F64N,
    }
}

/// `(MR, NR)` of a tile.
fn tile_dims(t: Tile) -> (usize, usize) {
    match t {
        Tile::F32W => (8, 32),
        Tile::F32N => (6, 16),
        Tile::F64W => (8, 16),
        Tile::F64N => (6, 8),
    }
}

/// [`block`] at the tile's shape, under the SIMD level's target features.
#[allow(clippy::too_many_arguments)]
fn block_at<T: Float, P: PackB<T::Real>>(
    t: Tile,
    a: &[T],
    lda: usize,
    rows: (usize, usize),
    cols: (usize, usize),
    k: usize,
    pb: &P,
    cbuf: &mut [T::Real],
    ldc: usize,
) {
    dispatch(
        #[inline(always)]
        || match t {
            Tile::F32W => block::<T, 8, 32>(a, lda, rows, cols, k, pb, cbuf, ldc),
            Tile::F32N => block::<T, 6, 16>(a, lda, rows, cols, k, pb, cbuf, ldc),
            Tile::F64W => block::<T, 8, 16>(a, lda, rows, cols, k, pb, cbuf, ldc),
            Tile::F64N => block::<T, 6, 8>(a, lda, rows, cols, k, pb, cbuf, ldc),
        },
    )
}

/// Runs `task(i)` for `i < tasks`, in parallel when there is more than one.
fn for_tasks(tasks: usize, task: impl Fn(usize) + Sync + Send) {
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}

/// Row and column block sizes for an `m × n` product split `outer` ways: at most
/// `mc0 × nc0`, shrunk (in whole tiles) until there are about `2 × threads` tasks.
fn split(m: usize, n: usize, outer: usize, (mr, nr): (usize, usize)) -> (usize, usize) {
    let threads = rayon::current_num_threads().max(1);
    let mut mc = (96usize).div_ceil(mr) * mr;
    let mut nc = 512usize.div_ceil(nr) * nr;
    let count = |mc: usize, nc: usize| outer * m.div_ceil(mc) * n.div_ceil(nc);
    while count(mc, nc) < 2 * threads && (mc > mr || nc > nr) {
        if nc > nr && (n.div_ceil(nc) <= m.div_ceil(mc) || mc <= mr) {
            nc = (nc / 2).div_ceil(nr) * nr;
        } else {
            mc = (mc / 2).div_ceil(mr) * mr;
        }
    }
    (mc.max(mr), nc.max(nr))
}

// ---------------------------------------------------------------------------------
// gemm
// ---------------------------------------------------------------------------------

/// B of a gemm as a row-major `[k, n]` matrix of storage type `U` (for a transposed
/// B: the compute-type copy made once per call).
struct GemmB<'a, U> {
    b: &'a [U],
    n: usize,
}

impl<U: Float> PackB<U::Real> for GemmB<'_, U> {
    #[inline(always)]
    fn pack(&self, t0: usize, kc: usize, p0: usize, np: usize, nr: usize, dst: &mut [U::Real]) {
        let zero = <U::Real as Real>::ZERO;
        for (t, d) in dst.chunks_exact_mut(nr).take(kc).enumerate() {
            let row = &self.b[(t0 + t) * self.n + p0..(t0 + t) * self.n + p0 + np];
            for (o, v) in d.iter_mut().zip(row) {
                *o = v.load();
            }
            d[np..].fill(zero);
        }
    }
}

/// `[n, k]` (storage type) to `[k, n]` (compute type), loaded exactly, in parallel over
/// blocks of 16 rows of the result.
fn transpose_load<T: Float>(b: &[T], k: usize, n: usize) -> Vec<T::Real> {
    const ROWS: usize = 16;
    let mut bt = vec![<T::Real as Real>::ZERO; k * n];
    bt.par_chunks_mut(ROWS * n)
        .enumerate()
        .for_each(|(blk, chunk)| {
            let t0 = blk * ROWS;
            let rows = chunk.len() / n;
            for j in 0..n {
                let src = &b[j * k + t0..j * k + t0 + rows];
                for (tt, v) in src.iter().enumerate() {
                    chunk[tt * n + j] = v.load();
                }
            }
        });
    bt
}

/// gemm. Args: y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta.
fn gemm<T: Float>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: FloatElement<Real = T::Real> + Element,
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
    let (av, cv, biasv): (&[T], &[T], &[T]) = (&av, &cv, &biasv);
    // A transposed B is loaded into [k, n] once per call (not once per row block).
    let bt: Option<Vec<T::Real>> = (trans && k > 0).then(|| transpose_load(&bv, k, n));
    let bv: &[T] = &bv;
    let t = tile::<T::Real>(simd_level());
    let (mr, nr) = tile_dims(t);
    let (mc, nc) = split(m, n, 1, (mr, nr));
    let (mblocks, nblocks) = (m.div_ceil(mc), n.div_ceil(nc));
    let task = |i: usize| {
        let (r0, c0) = ((i / nblocks) * mc, (i % nblocks) * nc);
        let (mcb, ncb) = (mc.min(m - r0), nc.min(n - c0));
        let ldc = ncb.div_ceil(nr) * nr;
        let mut cbuf = vec![<T::Real as Real>::ZERO; mcb.div_ceil(mr) * mr * ldc];
        if k > 0 {
            let (rows, cols) = ((r0, mcb), (c0, ncb));
            match &bt {
                Some(bt) => {
                    let pb = GemmB::<T::Real> { b: bt, n };
                    block_at::<T, _>(t, av, k, rows, cols, k, &pb, &mut cbuf, ldc)
                }
                None => {
                    let pb = GemmB::<T> { b: bv, n };
                    block_at::<T, _>(t, av, k, rows, cols, k, &pb, &mut cbuf, ldc)
                }
            }
        }
        for r in 0..mcb {
            let start = (r0 + r) * n + c0;
            // SAFETY: tasks own disjoint (row block, column block) tiles of y[..mn];
            // this row segment lies inside the task's tile.
            let dst = unsafe { y.slice_mut(start, start + ncb) };
            for (j, (o, &acc)) in dst
                .iter_mut()
                .zip(&cbuf[r * ldc..r * ldc + ncb])
                .enumerate()
            {
                let mut v = alpha * acc;
                if has_c {
                    v = beta.fma(cv[start + j].load(), v);
                }
                if has_bias {
                    v = v + biasv[c0 + j].load();
                }
                *o = T::store(v);
            }
        }
    };
    for_tasks(mblocks * nblocks, task);
    Ok(())
}

// ---------------------------------------------------------------------------------
// conv2d and conv_transpose2d arguments
// ---------------------------------------------------------------------------------

/// The scalars of a conv launch, checked so that every index the kernels form fits.
#[derive(Clone, Copy)]
struct ConvArgs {
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    pt: usize,
    pl: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    groups: usize,
    has_bias: bool,
}

/// Reads args 4..=20 of conv2d / conv_transpose2d and checks the buffers: x, y hold
/// their shapes, w holds `w_len(c_in, c_out, groups, kh, kw)`, bias `c_out` if present.
fn conv_args<'a, T: Float>(
    args: &BuiltinArgs<'a>,
    transposed: bool,
) -> Result<(ConvArgs, [RawBuf<'a, T>; 4])> {
    let u = |i| args.usize(i);
    let p = ConvArgs {
        n: u(4)?,
        c_in: u(5)?,
        h: u(6)?,
        w: u(7)?,
        c_out: u(8)?,
        kh: u(9)?,
        kw: u(10)?,
        oh: u(11)?,
        ow: u(12)?,
        pt: u(13)?,
        pl: u(14)?,
        sh: u(15)?,
        sw: u(16)?,
        dh: u(17)?,
        dw: u(18)?,
        groups: u(19)?,
        has_bias: u(20)? != 0,
    };
    if p.groups == 0 || !p.c_in.is_multiple_of(p.groups) || !p.c_out.is_multiple_of(p.groups) {
        return arg_err(args, 19, "groups must be >= 1 and divide c_in and c_out");
    }
    if p.sh == 0 || p.sw == 0 || p.dh == 0 || p.dw == 0 || p.kh == 0 || p.kw == 0 {
        return arg_err(args, 9, "kernel sizes, strides and dilations must be >= 1");
    }
    // Every position the kernels form (i*stride + k*dil, plus a pad) fits in i64.
    for (i, len, s, k, d, pad) in [
        (11, p.oh, p.sh, p.kh, p.dh, p.pt),
        (12, p.ow, p.sw, p.kw, p.dw, p.pl),
    ] {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return arg_err(args, i, "positions overflow");
        }
    }
    let y = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let w = args.buf::<T>(2)?;
    let bias = args.buf::<T>(3)?;
    let sz = |i, dims: &[usize]| -> Result<usize> {
        dims.iter().try_fold(1usize, |acc, &d| mul(args, i, acc, d))
    };
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    args.need(0, &y, sz(0, &[p.n, p.c_out, p.oh, p.ow])?)?;
    args.need(1, &x, sz(1, &[p.n, p.c_in, p.h, p.w])?)?;
    let wdims = if transposed {
        [p.c_in, og, p.kh, p.kw]
    } else {
        [p.c_out, cg, p.kh, p.kw]
    };
    args.need(2, &w, sz(2, &wdims)?)?;
    args.need(3, &bias, if p.has_bias { p.c_out } else { 0 })?;
    Ok((p, [y, x, w, bias]))
}

// ---------------------------------------------------------------------------------
// conv2d
// ---------------------------------------------------------------------------------

/// The implicit im2col panel of one image and group: `B(t, p)` with
/// `t = (icl*kh + i)*kw + j` and `p = oy*ow + ox` is the input at
/// `(oy*sh - pt + i*dh, ox*sw - pl + j*dw)` of channel `g*cg + icl`, or `+0.0` in the
/// padding.
struct Im2col<'a, T> {
    /// The group's input channels: `[cg, h, w]`.
    x: &'a [T],
    p: ConvArgs,
}

impl<T: Float> PackB<T::Real> for Im2col<'_, T> {
    #[inline(always)]
    fn pack(&self, t0: usize, kc: usize, p0: usize, np: usize, nr: usize, dst: &mut [T::Real]) {
        let zero = <T::Real as Real>::ZERO;
        let p = &self.p;
        let khw = p.kh * p.kw;
        // Per column: the window's top-left input position (may be negative).
        let mut base = [(0i64, 0i64); 64];
        for (j, b) in base.iter_mut().enumerate().take(np.min(64)) {
            let (oy, ox) = ((p0 + j) / p.ow, (p0 + j) % p.ow);
            *b = (
                (oy * p.sh) as i64 - p.pt as i64,
                (ox * p.sw) as i64 - p.pl as i64,
            );
        }
        let (h, w) = (p.h as i64, p.w as i64);
        for (t, d) in dst.chunks_exact_mut(nr).take(kc).enumerate() {
            let tt = t0 + t;
            let (icl, r) = (tt / khw, tt % khw);
            let (i, j) = (r / p.kw, r % p.kw);
            let plane = &self.x[icl * p.h * p.w..(icl + 1) * p.h * p.w];
            let (dy, dx) = ((i * p.dh) as i64, (j * p.dw) as i64);
            for (o, &(by, bx)) in d.iter_mut().zip(&base[..np]) {
                let (iy, ix) = (by + dy, bx + dx);
                *o = if iy >= 0 && iy < h && ix >= 0 && ix < w {
                    plane[(iy * w + ix) as usize].load()
                } else {
                    zero
                };
            }
            d[np..].fill(zero);
        }
    }
}

/// conv2d. Args: y, x, w, bias, n, c_in, h, w, c_out, kh, kw, oh, ow, pad_t, pad_l,
/// stride_h, stride_w, dil_h, dil_w, groups, has_bias.
fn conv2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (p, [y, x, w, bias]) = conv_args::<T>(args, false)?;
    let npix = p.oh * p.ow;
    let y_len = p.n * p.c_out * npix;
    if y_len == 0 {
        return Ok(());
    }
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let k = cg * p.kh * p.kw;
    let outs = [out_range(&y)];
    // SAFETY: each input holds the counts checked by conv_args; copied if it overlaps y.
    let (xv, wv, bv) = unsafe {
        (
            input_slice(&x, p.n * p.c_in * p.h * p.w, &outs),
            input_slice(&w, p.c_out * k, &outs),
            input_slice(&bias, if p.has_bias { p.c_out } else { 0 }, &outs),
        )
    };
    let (xv, wv, bv): (&[T], &[T], &[T]) = (&xv, &wv, &bv);
    if og <= DIRECT_MAX_OG {
        conv2d_direct(&p, xv, wv, bv, y);
        return Ok(());
    }
    let t = tile::<T::Real>(simd_level());
    let (mr, nr) = tile_dims(t);
    // Im2col packs at most 64 columns per strip.
    debug_assert!(nr <= 64);
    let (mc, nc) = split(og, npix, p.n * p.groups, (mr, nr));
    let (mblocks, nblocks) = (og.div_ceil(mc), npix.div_ceil(nc));
    let per_img = mblocks * nblocks;
    let task = |i: usize| {
        let (ng, rest) = (i / per_img, i % per_img);
        let (b, g) = (ng / p.groups, ng % p.groups);
        let (r0, c0) = ((rest / nblocks) * mc, (rest % nblocks) * nc);
        let (mcb, ncb) = (mc.min(og - r0), nc.min(npix - c0));
        let ldc = ncb.div_ceil(nr) * nr;
        let mut cbuf = vec![<T::Real as Real>::ZERO; mcb.div_ceil(mr) * mr * ldc];
        if k > 0 {
            let plane = p.h * p.w;
            let x0 = (b * p.c_in + g * cg) * plane;
            let pb = Im2col {
                x: &xv[x0..x0 + cg * plane],
                p,
            };
            let wg = &wv[g * og * k..(g + 1) * og * k];
            block_at::<T, _>(t, wg, k, (r0, mcb), (c0, ncb), k, &pb, &mut cbuf, ldc);
        }
        for r in 0..mcb {
            let oc = g * og + r0 + r;
            let start = (b * p.c_out + oc) * npix + c0;
            // SAFETY: tasks own disjoint (image, group, channel block, pixel block)
            // tiles of y; this channel's pixel segment lies inside the task's tile.
            let dst = unsafe { y.slice_mut(start, start + ncb) };
            let add = if p.has_bias {
                Some(bv[oc].load())
            } else {
                None
            };
            for (o, &acc) in dst.iter_mut().zip(&cbuf[r * ldc..r * ldc + ncb]) {
                *o = T::store(match add {
                    Some(bias) => acc + bias,
                    None => acc,
                });
            }
        }
    };
    for_tasks(p.n * p.groups * per_img, task);
    Ok(())
}

/// Groups with at most this many output channels (depthwise and the like) take the
/// direct path: too few rows for the register tile to pay for packing.
const DIRECT_MAX_OG: usize = 2;

/// `acc[o] = fma(x(o), w, acc[o])` for one kernel tap over a row of outputs, where
/// `x(o)` is `row[o*sw + off - pl]` for `lo <= o < hi` and `+0.0` elsewhere (the
/// padding; the whole row when `row` is `None`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tap_row<T: Float>(
    acc: &mut [T::Real],
    row: Option<&[T]>,
    wv: T::Real,
    sw: usize,
    off: usize,
    pl: usize,
    lo: usize,
    hi: usize,
) {
    let zero = <T::Real as Real>::ZERO;
    let (lo, hi) = match row {
        Some(_) => (lo.min(acc.len()), hi.min(acc.len()).max(lo.min(acc.len()))),
        None => (acc.len(), acc.len()),
    };
    let (head, rest) = acc.split_at_mut(lo);
    let (mid, tail) = rest.split_at_mut(hi - lo);
    for a in head.iter_mut().chain(tail.iter_mut()) {
        *a = zero.fma(wv, *a);
    }
    if let Some(row) = row
        && hi > lo
    {
        let base = lo * sw + off - pl;
        if sw == 1 {
            for (a, v) in mid.iter_mut().zip(&row[base..base + (hi - lo)]) {
                *a = v.load().fma(wv, *a);
            }
        } else {
            for (i, a) in mid.iter_mut().enumerate() {
                *a = row[base + i * sw].load().fma(wv, *a);
            }
        }
    }
}

/// conv2d computed directly, one output row at a time, the row's outputs in a vector
/// and the taps in the contract's order `(ic, kh, kw)`; padded taps are `+0.0`
/// operands. One task per (image, output channel, block of rows).
fn conv2d_direct<T: Float>(p: &ConvArgs, xv: &[T], wv: &[T], bv: &[T], y: RawBuf<'_, T>) {
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let (kh, kw, ow, oh) = (p.kh, p.kw, p.ow, p.oh);
    let threads = rayon::current_num_threads().max(1);
    let planes = p.n * p.c_out;
    let row_blocks = (2 * threads).div_ceil(planes).clamp(1, oh);
    let rows_per = oh.div_ceil(row_blocks);
    let row_blocks = oh.div_ceil(rows_per);
    // Valid output-column range per kernel column.
    let ranges: Vec<(usize, usize)> = (0..kw)
        .map(|j| {
            let off = j * p.dw;
            let lo = p.pl.saturating_sub(off).div_ceil(p.sw);
            let hi = if p.w + p.pl > off {
                ((p.w + p.pl - off - 1) / p.sw + 1).min(ow)
            } else {
                0
            };
            (lo, hi)
        })
        .collect();
    let ranges = &ranges;
    let task = |i: usize| {
        let (plane, rb) = (i / row_blocks, i % row_blocks);
        let (b, oc) = (plane / p.c_out, plane % p.c_out);
        let g = oc / og;
        let (r0, r1) = (rb * rows_per, ((rb + 1) * rows_per).min(oh));
        let wk = &wv[oc * cg * kh * kw..(oc + 1) * cg * kh * kw];
        let add = if p.has_bias {
            Some(bv[oc].load())
        } else {
            None
        };
        let mut acc = vec![<T::Real as Real>::ZERO; ow];
        for oy in r0..r1 {
            acc.fill(<T::Real as Real>::ZERO);
            dispatch(
                #[inline(always)]
                || {
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        let xp = &xv[(b * p.c_in + ic) * p.h * p.w..][..p.h * p.w];
                        for ki in 0..kh {
                            let row = (oy * p.sh + ki * p.dh)
                                .checked_sub(p.pt)
                                .filter(|&iy| iy < p.h)
                                .map(|iy| &xp[iy * p.w..(iy + 1) * p.w]);
                            for (kj, &(lo, hi)) in ranges.iter().enumerate() {
                                let w = wk[(icl * kh + ki) * kw + kj].load();
                                tap_row::<T>(&mut acc, row, w, p.sw, kj * p.dw, p.pl, lo, hi);
                            }
                        }
                    }
                },
            );
            let start = ((b * p.c_out + oc) * oh + oy) * ow;
            // SAFETY: tasks own disjoint (image, channel, row block) ranges of y; this
            // output row lies inside the task's range.
            let dst = unsafe { y.slice_mut(start, start + ow) };
            for (d, &v) in dst.iter_mut().zip(&acc) {
                *d = T::store(match add {
                    Some(bias) => v + bias,
                    None => v,
                });
            }
        }
    };
    for_tasks(planes * row_blocks, task);
}

// ---------------------------------------------------------------------------------
// conv_transpose2d
// ---------------------------------------------------------------------------------

/// The input index output position `o` reads through kernel tap `t`, if any:
/// `(o + pad - t*d) / s` when that is an exact integer in `0..len`.
#[inline(always)]
fn gather_src(o: usize, pad: usize, t: usize, d: usize, s: usize, len: usize) -> Option<usize> {
    let num = (o + pad).checked_sub(t * d)?;
    (num % s == 0 && num / s < len).then_some(num / s)
}

/// `acc[o] = fma(x, w[o], acc[o])` for every `o`.
#[inline(always)]
fn axpy<R: Real>(acc: &mut [R], x: R, w: &[R]) {
    for (a, &wv) in acc.iter_mut().zip(w) {
        *a = x.fma(wv, *a);
    }
}

/// conv_transpose2d. Args as conv2d (weight `[c_in, c_out/groups, kh, kw]`).
fn conv_transpose2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (p, [y, x, w, bias]) = conv_args::<T>(args, true)?;
    let npix = p.oh * p.ow;
    let y_len = p.n * p.c_out * npix;
    if y_len == 0 {
        return Ok(());
    }
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let khw = p.kh * p.kw;
    let outs = [out_range(&y)];
    // SAFETY: each input holds the counts checked by conv_args; copied if it overlaps y.
    let (xv, wv, bv) = unsafe {
        (
            input_slice(&x, p.n * p.c_in * p.h * p.w, &outs),
            input_slice(&w, p.c_in * og * khw, &outs),
            input_slice(&bias, if p.has_bias { p.c_out } else { 0 }, &outs),
        )
    };
    let (xv, bv): (&[T], &[T]) = (&xv, &bv);
    // Weights repacked [ic][kh][kw][o] in the compute type, so a tap's weights for all
    // of the group's output channels are contiguous.
    let mut wp = vec![<T::Real as Real>::ZERO; p.c_in * khw * og];
    for ic in 0..p.c_in {
        for o in 0..og {
            for r in 0..khw {
                wp[(ic * khw + r) * og + o] = wv[(ic * og + o) * khw + r].load();
            }
        }
    }
    let wp = &wp;
    // Per output column, the kernel columns that land on an input column: (kj, ix).
    let mut col_taps: Vec<(usize, usize)> = Vec::new();
    let mut col_start = Vec::with_capacity(p.ow + 1);
    for ox in 0..p.ow {
        col_start.push(col_taps.len());
        col_taps.extend(
            (0..p.kw).filter_map(|kj| gather_src(ox, p.pl, kj, p.dw, p.sw, p.w).map(|ix| (kj, ix))),
        );
    }
    col_start.push(col_taps.len());
    let (col_taps, col_start) = (&col_taps, &col_start);
    // One task per (image, group, output row).
    let task = |i: usize| {
        let (ng, oy) = (i / p.oh, i % p.oh);
        let (b, g) = (ng / p.groups, ng % p.groups);
        // The kernel rows that land on an input row for this output row.
        let rows: Vec<(usize, usize)> = (0..p.kh)
            .filter_map(|ki| gather_src(oy, p.pt, ki, p.dh, p.sh, p.h).map(|iy| (ki, iy)))
            .collect();
        let mut acc = vec![<T::Real as Real>::ZERO; p.ow * og];
        dispatch(
            #[inline(always)]
            || {
                for ox in 0..p.ow {
                    let cols = &col_taps[col_start[ox]..col_start[ox + 1]];
                    let a = &mut acc[ox * og..(ox + 1) * og];
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        let plane = &xv[(b * p.c_in + ic) * p.h * p.w..][..p.h * p.w];
                        for &(ki, iy) in &rows {
                            for &(kj, ix) in cols {
                                let xval = plane[iy * p.w + ix].load();
                                let wt = &wp[(ic * khw + ki * p.kw + kj) * og..][..og];
                                axpy(a, xval, wt);
                            }
                        }
                    }
                }
            },
        );
        for o in 0..og {
            let oc = g * og + o;
            let start = ((b * p.c_out + oc) * p.oh + oy) * p.ow;
            // SAFETY: tasks own disjoint (image, group, output row) sets of y; this
            // channel's row lies inside the task's set.
            let dst = unsafe { y.slice_mut(start, start + p.ow) };
            let add = if p.has_bias {
                Some(bv[oc].load())
            } else {
                None
            };
            for (ox, d) in dst.iter_mut().enumerate() {
                let v = acc[ox * og + o];
                *d = T::store(match add {
                    Some(bias) => v + bias,
                    None => v,
                });
            }
        }
    };
    for_tasks(p.n * p.groups * p.oh, task);
    Ok(())
}

// ---------------------------------------------------------------------------------
// max_pool2d
// ---------------------------------------------------------------------------------

/// max_pool2d. Args: y, x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h,
/// stride_w, dil_h, dil_w.
fn max_pool2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let u = |i| args.usize(i);
    let (n, c, h, w) = (u(2)?, u(3)?, u(4)?, u(5)?);
    let (kh, kw, oh, ow) = (u(6)?, u(7)?, u(8)?, u(9)?);
    let (pt, pl, sh, sw, dh, dw) = (u(10)?, u(11)?, u(12)?, u(13)?, u(14)?, u(15)?);
    if sh == 0 || sw == 0 || dh == 0 || dw == 0 {
        return arg_err(args, 12, "strides and dilations must be >= 1");
    }
    for (i, len, s, k, d, pad) in [(8, oh, sh, kh, dh, pt), (9, ow, sw, kw, dw, pl)] {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return arg_err(args, i, "positions overflow");
        }
    }
    let y = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let planes = mul(args, 3, n, c)?;
    let y_len = mul(args, 8, planes, mul(args, 9, oh, ow)?)?;
    let x_len = mul(args, 4, planes, mul(args, 5, h, w)?)?;
    args.need(0, &y, y_len)?;
    args.need(1, &x, x_len)?;
    if y_len == 0 {
        return Ok(());
    }
    let outs = [out_range(&y)];
    // SAFETY: x holds x_len elements (checked); copied if it overlaps y.
    let xv: Cow<'_, [T]> = unsafe { input_slice(&x, x_len, &outs) };
    let xv: &[T] = &xv;
    // One task per (plane, output row).
    let task = |i: usize| {
        let (pl_idx, oy) = (i / oh, i % oh);
        let plane = &xv[pl_idx * h * w..(pl_idx + 1) * h * w];
        let mut acc = vec![<T::Real as Real>::NEG_INFINITY; ow];
        dispatch(
            #[inline(always)]
            || {
                for ki in 0..kh {
                    let Some(iy) = (oy * sh + ki * dh).checked_sub(pt).filter(|&v| v < h) else {
                        continue;
                    };
                    let row = &plane[iy * w..(iy + 1) * w];
                    for kj in 0..kw {
                        // Output columns whose tap kj lands inside the row:
                        // 0 <= ox*sw + kj*dw - pl < w.
                        let off = kj * dw;
                        let lo = pl.saturating_sub(off).div_ceil(sw);
                        let hi = if w + pl > off {
                            ((w + pl - off - 1) / sw + 1).min(ow)
                        } else {
                            0
                        };
                        for (ox, a) in acc.iter_mut().enumerate().take(hi).skip(lo) {
                            let ix = ox * sw + off - pl;
                            *a = max_nan(*a, row[ix].load());
                        }
                    }
                }
            },
        );
        let start = i * ow;
        // SAFETY: tasks own disjoint output rows of y[..y_len].
        let dst = unsafe { y.slice_mut(start, start + ow) };
        for (d, &v) in dst.iter_mut().zip(&acc) {
            *d = T::store(v);
        }
    };
    for_tasks(planes * oh, task);
    Ok(())
}
