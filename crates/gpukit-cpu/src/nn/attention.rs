//! CPU kernels of the neural-network family: the `attention` group.
//!
//! * `attention`: the fused online-softmax attention of
//!   [`gpukit_core::abi::attention`]. One rayon task per (sequence, head, block of
//!   [`BQ`] query rows); the task walks the key tiles in order, packs the tile's kept keys
//!   transposed (`kt[d][j]`) and its values (`vt[j][d]`) in the compute type, and for each
//!   of its rows runs the contract's steps. Each score's fma chain over `d` lives in one
//!   lane of the `j` loop (different scores in different lanes), and each output
//!   element's fma chain over keys lives in one lane of the `d` loop, so vectorisation
//!   never reorders one value's operations.
//! * `attention_scores`: the composed attention's scores, the same fma chains per score.

use gpukit_core::abi::attention::{KEY_TILE, MASK_DROP, fused_supported};
use gpukit_core::abi::kernel_name;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FLOAT_DTYPES, FloatElement, Real, max_nan};
use gpukit_core::{DType, Result};
use rayon::prelude::*;

use crate::builtins::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::simd::dispatch;
use crate::kernels::{arg_err, input_slice, mul, out_range};

/// Query rows per rayon task: one packed K/V tile serves this many rows.
const BQ: usize = 32;

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::attention::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v: Vec<(String, BuiltinFn)> = Vec::new();
    for d in FLOAT_DTYPES {
        let (fused, scores): (BuiltinFn, BuiltinFn) = match d {
            DType::F32 => (fused::<f32>, scores::<f32>),
            DType::F64 => (fused::<f64>, scores::<f64>),
            DType::F16 => (fused::<f16>, scores::<f16>),
            DType::BF16 => (fused::<bf16>, scores::<bf16>),
            DType::I64 | DType::I32 => continue,
        };
        v.push((kernel_name("attention", d), fused));
        v.push((kernel_name("attention_scores", d), scores));
    }
    v
}

/// Reads scalar argument `index` as a 0/1 flag.
fn flag(args: &BuiltinArgs<'_>, index: usize) -> Result<bool> {
    match args.i64(index)? {
        0 => Ok(false),
        1 => Ok(true),
        v => arg_err(args, index, format!("expected 0 or 1, got {v}")),
    }
}

/// Where one (sequence, head)'s rows live: element `d` of row `i` is at
/// `base + i * stride + d`.
#[derive(Clone, Copy)]
struct Rows {
    base: usize,
    stride: usize,
}

/// `s[j] = fma chain over d ascending from +0.0 of q[d] * kt[d * KEY_TILE + j]` for
/// `j < nk`, then `* scale`, then `+ bias[j]` when given.
#[inline(always)]
fn tile_scores<R: Real>(
    q: &[R],
    kt: &[R],
    nk: usize,
    scale: R,
    bias: Option<&[R]>,
    s: &mut [R; KEY_TILE],
) {
    let s = &mut s[..nk];
    s.fill(R::ZERO);
    for (d, &qd) in q.iter().enumerate() {
        let col = &kt[d * KEY_TILE..d * KEY_TILE + nk];
        for (sj, &kj) in s.iter_mut().zip(col) {
            *sj = qd.fma(kj, *sj);
        }
    }
    for sj in s.iter_mut() {
        *sj = *sj * scale;
    }
    if let Some(b) = bias {
        for (sj, &bj) in s.iter_mut().zip(&b[..nk]) {
            *sj = *sj + bj;
        }
    }
}

/// The scratch of one fused task, in the compute type.
struct Scratch<R> {
    q: Vec<R>,
    acc: Vec<R>,
    m: Vec<R>,
    l: Vec<R>,
    kt: Vec<R>,
    vt: Vec<R>,
    bias: Vec<R>,
    s: [R; KEY_TILE],
}

/// One fused task: rows `i0..i1` of one (sequence, head). `mask` is the head's mask row.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fused_block<T: FloatElement>(
    q: &[T],
    k: &[T],
    v: &[T],
    mask: Option<&[T]>,
    (qr, kr): (Rows, Rows),
    (i0, i1): (usize, usize),
    nkv: usize,
    hd: usize,
    scale: T::Real,
    w: &mut Scratch<T::Real>,
    mut store: impl FnMut(usize, &[T::Real], T::Real),
) {
    let rows = i1 - i0;
    let zero = <T::Real as Real>::ZERO;
    let drop_below = <T::Real as Real>::from_f64(MASK_DROP);
    w.q.clear();
    for i in i0..i1 {
        let at = qr.base + i * qr.stride;
        w.q.extend(q[at..at + hd].iter().map(|x| x.load()));
    }
    w.acc.clear();
    w.acc.resize(rows * hd, zero);
    w.m.clear();
    w.m.resize(rows, <T::Real as Real>::NEG_INFINITY);
    w.l.clear();
    w.l.resize(rows, zero);

    let mut start = 0;
    while start < nkv {
        let end = nkv.min(start + KEY_TILE);
        // Pack the tile's kept keys, in ascending key order.
        w.bias.clear();
        let mut nk = 0;
        for j in start..end {
            if let Some(mk) = mask {
                let b = mk[j].load();
                if b <= drop_below {
                    continue;
                }
                w.bias.push(b);
            }
            let at = kr.base + j * kr.stride;
            for (d, x) in k[at..at + hd].iter().enumerate() {
                w.kt[d * KEY_TILE + nk] = x.load();
            }
            for (o, x) in w.vt[nk * hd..(nk + 1) * hd].iter_mut().zip(&v[at..at + hd]) {
                *o = x.load();
            }
            nk += 1;
        }
        let bias = mask.map(|_| &w.bias[..]);
        for r in 0..rows {
            tile_scores(&w.q[r * hd..(r + 1) * hd], &w.kt, nk, scale, bias, &mut w.s);
            let s = &mut w.s[..nk];
            let m = w.m[r];
            let m_new = s.iter().fold(m, |a, &x| max_nan(a, x));
            let all_neg_inf = m_new == <T::Real as Real>::NEG_INFINITY;
            let c = if all_neg_inf {
                <T::Real as Real>::ONE
            } else {
                (m - m_new).exp()
            };
            for sj in s.iter_mut() {
                *sj = if all_neg_inf {
                    zero
                } else {
                    (*sj - m_new).exp()
                };
            }
            let mut l = w.l[r] * c;
            for &p in s.iter() {
                l = l + p;
            }
            w.l[r] = l;
            w.m[r] = m_new;
            let acc = &mut w.acc[r * hd..(r + 1) * hd];
            for a in acc.iter_mut() {
                *a = *a * c;
            }
            for (jj, &p) in s.iter().enumerate() {
                let vrow = &w.vt[jj * hd..(jj + 1) * hd];
                for (a, &x) in acc.iter_mut().zip(vrow) {
                    *a = p.fma(x, *a);
                }
            }
        }
        start = end;
    }
    for r in 0..rows {
        store(i0 + r, &w.acc[r * hd..(r + 1) * hd], w.l[r]);
    }
}

/// The fused attention. Args: o, q, k, v, mask, has_mask, batch, heads, n, nkv, hd,
/// hpb, interleaved, scale.
pub(crate) fn fused<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let has_mask = flag(args, 5)?;
    let batch = args.usize(6)?;
    let heads = args.usize(7)?;
    let n = args.usize(8)?;
    let nkv = args.usize(9)?;
    let hd = args.usize(10)?;
    let hpb = args.usize(11)?;
    let interleaved = flag(args, 12)?;
    let scale = <T::Real as Real>::from_f64(args.f64(13)?);
    if !fused_supported(hd) {
        return arg_err(args, 10, format!("head width {hd} is not supported"));
    }
    if hpb == 0 || !heads.is_multiple_of(hpb) {
        return arg_err(args, 11, format!("hpb {hpb} does not divide heads {heads}"));
    }
    let o = args.buf::<T>(0)?;
    let qb = args.buf::<T>(1)?;
    let kb = args.buf::<T>(2)?;
    let vb = args.buf::<T>(3)?;
    let mb = args.buf::<T>(4)?;
    let bh = mul(args, 7, batch, heads)?;
    let q_len = mul(args, 10, mul(args, 8, bh, n)?, hd)?;
    let kv_len = mul(args, 10, mul(args, 9, bh, nkv)?, hd)?;
    let mrows = mul(args, 11, batch, heads / hpb)?;
    let m_len = if has_mask {
        mul(args, 9, mrows, nkv)?
    } else {
        0
    };
    args.need(0, &o, q_len)?;
    args.need(1, &qb, q_len)?;
    args.need(2, &kb, kv_len)?;
    args.need(3, &vb, kv_len)?;
    args.need(4, &mb, m_len)?;
    if q_len == 0 {
        return Ok(());
    }
    let outs = [out_range(&o)];
    // SAFETY: each buffer holds the counts checked above; an input overlapping the
    // output is copied before anything is written, and nothing else writes them.
    let (q, k, v, mask) = unsafe {
        (
            input_slice(&qb, q_len, &outs),
            input_slice(&kb, kv_len, &outs),
            input_slice(&vb, kv_len, &outs),
            input_slice(&mb, m_len, &outs),
        )
    };
    let (q, k, v, mask) = (&q[..], &k[..], &v[..], &mask[..]);
    let o: RawBuf<'_, T> = o;

    let blocks = n.div_ceil(BQ);
    let tasks = bh * blocks;
    let task = |t: usize| {
        let (bhi, blk) = (t / blocks, t % blocks);
        let (b, h) = (bhi / heads, bhi % heads);
        let (qr, kr) = if interleaved {
            let width = heads * hd;
            (
                Rows {
                    base: b * n * width + h * hd,
                    stride: width,
                },
                Rows {
                    base: b * nkv * width + h * hd,
                    stride: width,
                },
            )
        } else {
            (
                Rows {
                    base: bhi * n * hd,
                    stride: hd,
                },
                Rows {
                    base: bhi * nkv * hd,
                    stride: hd,
                },
            )
        };
        let mrow = has_mask.then(|| {
            let row = b * (heads / hpb) + h / hpb;
            &mask[row * nkv..(row + 1) * nkv]
        });
        let i0 = blk * BQ;
        let i1 = n.min(i0 + BQ);
        let mut w = Scratch {
            q: Vec::with_capacity(BQ * hd),
            acc: Vec::with_capacity(BQ * hd),
            m: Vec::with_capacity(BQ),
            l: Vec::with_capacity(BQ),
            kt: vec![<T::Real as Real>::ZERO; hd * KEY_TILE],
            vt: vec![<T::Real as Real>::ZERO; KEY_TILE * hd],
            bias: Vec::with_capacity(KEY_TILE),
            s: [<T::Real as Real>::ZERO; KEY_TILE],
        };
        dispatch(|| {
            fused_block(
                q,
                k,
                v,
                mrow,
                (qr, kr),
                (i0, i1),
                nkv,
                hd,
                scale,
                &mut w,
                |i, acc, l| {
                    let at = qr.base + i * qr.stride;
                    // SAFETY: (sequence, head, row) is unique to this task, so the
                    // row's `hd` elements are written by no other task; inside o[..q_len].
                    let dst = unsafe { o.slice_mut(at, at + hd) };
                    for (x, &a) in dst.iter_mut().zip(acc) {
                        *x = T::store(a / l);
                    }
                },
            )
        });
    };
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    Ok(())
}

/// The composed attention's scores. Args: s, q, k, mask, has_mask, heads, n, nkv, hd,
/// hpb, scale.
pub(crate) fn scores<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let has_mask = flag(args, 4)?;
    let heads = args.usize(5)?;
    let n = args.usize(6)?;
    let nkv = args.usize(7)?;
    let hd = args.usize(8)?;
    let hpb = args.usize(9)?;
    let scale = <T::Real as Real>::from_f64(args.f64(10)?);
    if hpb == 0 || !heads.is_multiple_of(hpb) {
        return arg_err(args, 9, format!("hpb {hpb} does not divide heads {heads}"));
    }
    let sb = args.buf::<T>(0)?;
    let qb = args.buf::<T>(1)?;
    let kb = args.buf::<T>(2)?;
    let mb = args.buf::<T>(3)?;
    let rows = mul(args, 6, heads, n)?;
    let s_len = mul(args, 7, rows, nkv)?;
    let q_len = mul(args, 8, rows, hd)?;
    let k_len = mul(args, 8, mul(args, 7, heads, nkv)?, hd)?;
    let m_len = if has_mask {
        mul(args, 7, heads / hpb, nkv)?
    } else {
        0
    };
    args.need(0, &sb, s_len)?;
    args.need(1, &qb, q_len)?;
    args.need(2, &kb, k_len)?;
    args.need(3, &mb, m_len)?;
    if s_len == 0 {
        return Ok(());
    }
    let outs = [out_range(&sb)];
    // SAFETY: as in `fused`.
    let (q, k, mask) = unsafe {
        (
            input_slice(&qb, q_len, &outs),
            input_slice(&kb, k_len, &outs),
            input_slice(&mb, m_len, &outs),
        )
    };
    let (q, k, mask) = (&q[..], &k[..], &mask[..]);
    let sb: RawBuf<'_, T> = sb;

    let blocks = n.div_ceil(BQ);
    let task = |t: usize| {
        let (h, blk) = (t / blocks, t % blocks);
        let i0 = blk * BQ;
        let i1 = n.min(i0 + BQ);
        let zero = <T::Real as Real>::ZERO;
        let qrows: Vec<T::Real> = q[(h * n + i0) * hd..(h * n + i1) * hd]
            .iter()
            .map(|x| x.load())
            .collect();
        let mut kt = vec![zero; hd * KEY_TILE];
        let mut bias = [zero; KEY_TILE];
        let mut s = [zero; KEY_TILE];
        dispatch(|| {
            let mut start = 0;
            while start < nkv {
                let end = nkv.min(start + KEY_TILE);
                let nk = end - start;
                for jj in 0..nk {
                    let at = (h * nkv + start + jj) * hd;
                    for (d, x) in k[at..at + hd].iter().enumerate() {
                        kt[d * KEY_TILE + jj] = x.load();
                    }
                }
                let b = has_mask.then(|| {
                    let row = (h / hpb) * nkv;
                    for (o, x) in bias.iter_mut().zip(&mask[row + start..row + end]) {
                        *o = x.load();
                    }
                    &bias[..]
                });
                for i in i0..i1 {
                    let qi = &qrows[(i - i0) * hd..(i - i0 + 1) * hd];
                    tile_scores(qi, &kt, nk, scale, b, &mut s);
                    let at = (h * n + i) * nkv + start;
                    // SAFETY: row (h, i) belongs to this task alone; inside s[..s_len].
                    let dst = unsafe { sb.slice_mut(at, at + nk) };
                    for (x, &v) in dst.iter_mut().zip(&s[..nk]) {
                        *x = T::store(v);
                    }
                }
                start = end;
            }
        });
    };
    let tasks = heads * blocks;
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
    Ok(())
}
