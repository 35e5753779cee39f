//! CPU kernels of the neural-network family: the `attention` group.
//!
//! * `attention`: the fused online-softmax attention of
//!   [`gpukit_core::abi::attention`] ([`fused`]): one rayon task per (sequence, head,
//!   block of [`BQ`] query rows), register-tiled micro-kernels for the scores and for
//!   P·V, the softmax steps vectorised across rows (see `fused.rs`).
//! * `attention_scores`: the composed attention's scores ([`scores`]), the same
//!   micro-kernel with the keys across lanes (see `scores.rs`).
//!
//! Each output's chain of operations is the contract's (docs/ops/attention.md); the
//! vectors only run many chains at once, so every SIMD level gives the same bits.

mod fused;
mod general;
mod lanes;
mod micro;
mod scores;

use gpukit_core::abi::attention::{KEY_TILE, fused_supported};
use gpukit_core::abi::kernel_name;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FLOAT_DTYPES, FloatElement, Real};
use gpukit_core::{DType, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::{arg_err, input_slice, mul, out_range};
use lanes::{LaneReal, run_lanes};

/// Query rows per rayon task: one packed K/V tile serves this many rows. A multiple of
/// every vector width (16) and of the 4-row register blocks.
const BQ: usize = 64;

/// Query rows per task of the composed scores: the keys are packed transposed once per
/// tile for this many rows.
const BQS: usize = 256;

/// Below this many multiply-adds (`rows · nkv · hd` summed) a launch runs on the calling
/// thread: rayon's fork/join would cost more than it saves.
const SERIAL_WORK: usize = 1 << 17;

/// Runs `task(scratch, t)` for `t in 0..tasks`, in parallel unless the work is small,
/// with one scratch per rayon job (reused across its tasks).
fn run_tasks<R: Real>(tasks: usize, work: usize, task: impl Fn(&mut Scratch<R>, usize) + Sync) {
    if tasks <= 1 || work < SERIAL_WORK {
        let mut w = Scratch::default();
        (0..tasks).for_each(|t| task(&mut w, t));
    } else {
        (0..tasks)
            .into_par_iter()
            .for_each_init(Scratch::default, |w, t| task(w, t));
    }
}

/// The scratch of one task, in the compute type; sized by [`BQ`], [`KEY_TILE`] and the
/// head width only (never by the sequence lengths), grown once per rayon job.
#[derive(Default)]
struct Scratch<R> {
    /// Queries transposed, `[hd][rows]`.
    qt: Vec<R>,
    /// Fused: the kept keys `[KEY_TILE][hd]`; scores: the keys transposed
    /// `[hd][KEY_TILE]`.
    kp: Vec<R>,
    /// The kept values `[KEY_TILE][hd padded]`.
    vp: Vec<R>,
    /// Fused: scores then weights `[KEY_TILE][rows]`; scores: `[rows][KEY_TILE]`.
    st: Vec<R>,
    /// Output accumulators `[rows][hd padded]`.
    acc: Vec<R>,
    /// Running maximum per row.
    m: Vec<R>,
    /// The tile's new maximum per row.
    mnew: Vec<R>,
    /// The tile's rescale factor per row.
    c: Vec<R>,
    /// Running denominator per row.
    l: Vec<R>,
    /// The mask values of the tile's (kept) keys.
    bias: Vec<R>,
    /// [`TG`] input rows in the compute type, before a transposed store.
    row: Vec<R>,
    /// The general kernel's per-row keep flags of the tile's kept keys `[KEY_TILE][BQ]`.
    keep: Vec<bool>,
    /// The general kernel's per-row mask values `[KEY_TILE][BQ]`.
    bt: Vec<R>,
    /// The tile's kept keys (indices into the sequence).
    keys: Vec<usize>,
    /// Whether each row kept a key so far.
    any: Vec<bool>,
}

impl<R: Real> Scratch<R> {
    /// Makes every buffer large enough for `bq` rows of head width `hd` (`hdp` padded).
    fn ensure(&mut self, bq: usize, hd: usize, hdp: usize) {
        let grow = |v: &mut Vec<R>, len: usize| {
            if v.len() < len {
                v.resize(len, R::ZERO);
            }
        };
        grow(&mut self.qt, bq * hd);
        grow(&mut self.kp, KEY_TILE * hd);
        grow(&mut self.vp, KEY_TILE * hdp);
        grow(&mut self.st, KEY_TILE * bq);
        grow(&mut self.acc, bq * hdp);
        for v in [&mut self.m, &mut self.mnew, &mut self.c, &mut self.l] {
            grow(v, bq);
        }
        grow(&mut self.bias, KEY_TILE);
        grow(&mut self.row, TG * hd);
        grow(&mut self.bt, KEY_TILE * BQ);
        if self.keep.len() < KEY_TILE * BQ {
            self.keep.resize(KEY_TILE * BQ, false);
        }
        if self.keys.len() < KEY_TILE {
            self.keys.resize(KEY_TILE, 0);
        }
        if self.any.len() < bq {
            self.any.resize(bq, false);
        }
    }
}

/// Rows per group of [`load_transposed`].
const TG: usize = 8;

/// Writes `n` rows of `hd` elements transposed into `dst` (row stride `ld`):
/// `dst[d·ld + r] = row(r)[d]` as the compute type, where `row(r)` is the source row, or
/// `None` for a row of zeros. The rows go through `buf` ([`TG`]`·hd` elements) in groups
/// of [`TG`], so each column of a group is written as one contiguous run rather than
/// element by element at stride `ld`.
fn load_transposed<'a, T: FloatElement + 'a>(
    (n, hd): (usize, usize),
    row: impl Fn(usize) -> Option<&'a [T]>,
    buf: &mut [T::Real],
    (dst, ld): (&mut [T::Real], usize),
) {
    let zero = <T::Real as Real>::ZERO;
    for r0 in (0..n).step_by(TG) {
        let g = TG.min(n - r0);
        for i in 0..g {
            let b = &mut buf[i * hd..(i + 1) * hd];
            match row(r0 + i) {
                Some(src) => load_row(&src[..hd], b),
                None => b.fill(zero),
            }
        }
        let rows = &buf[..TG * hd];
        for d in 0..hd {
            let o = &mut dst[d * ld + r0..d * ld + r0 + g];
            // A full group as a fixed-size array (unrolled, one contiguous store), the
            // last partial group as a slice: the same assignments.
            if let Ok(o) = <&mut [T::Real; TG]>::try_from(&mut *o) {
                for (i, x) in o.iter_mut().enumerate() {
                    *x = rows[i * hd + d];
                }
            } else {
                for (i, x) in o.iter_mut().enumerate() {
                    *x = rows[i * hd + d];
                }
            }
        }
    }
}

/// `dst[i] = src[i].load()` for every `i` (equal lengths): f16 and bf16 in bulk through
/// the `half` crate's vectorised conversions (exact, like `load`), f32 and f64 copied.
#[inline(always)]
fn load_row<T: FloatElement>(src: &[T], dst: &mut [T::Real]) {
    use gpukit_core::half::slice::HalfFloatSliceExt;
    use std::any::TypeId;
    let n = src.len().min(dst.len());
    let to_f32 = TypeId::of::<T::Real>() == TypeId::of::<f32>();
    if to_f32 && TypeId::of::<T>() == TypeId::of::<f16>() {
        // SAFETY: `T` is f16 and `T::Real` is f32 (checked just above), so these are the
        // same `n` elements of both slices under their own types.
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(src.as_ptr().cast::<f16>(), n),
                std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<f32>(), n),
            )
        };
        s.convert_to_f32_slice(d);
    } else if to_f32 && TypeId::of::<T>() == TypeId::of::<bf16>() {
        // SAFETY: as above, with `T` bf16.
        let (s, d) = unsafe {
            (
                std::slice::from_raw_parts(src.as_ptr().cast::<bf16>(), n),
                std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<f32>(), n),
            )
        };
        s.convert_to_f32_slice(d);
    } else {
        for (o, x) in dst.iter_mut().zip(src) {
            *o = x.load();
        }
    }
}

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
        v.push((kernel_name("attention_general", d), general::entry(d)));
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
pub(super) struct Rows {
    pub(super) base: usize,
    pub(super) stride: usize,
}

/// The fused attention. Args: o, q, k, v, mask, has_mask, batch, heads, n, nkv, hd,
/// hpb, interleaved, scale.
pub(crate) fn fused<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: LaneReal,
{
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
    let work = bh.saturating_mul(n).saturating_mul(nkv).saturating_mul(hd);
    run_tasks(tasks, work, |w, t| {
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
        let mrow = match has_mask {
            true => {
                let row = b * (heads / hpb) + h / hpb;
                fused::MaskSrc::Row(&mask[row * nkv..(row + 1) * nkv])
            }
            false => fused::MaskSrc::None,
        };
        let i0 = blk * BQ;
        run_lanes(fused::FusedTask {
            q,
            k,
            v,
            mask: mrow,
            causal: false,
            zero_empty: false,
            rows: [qr, kr, kr, qr],
            block: (i0, n.min(i0 + BQ) - i0),
            nkv,
            hd: (hd, hd),
            scale,
            out: o,
            w,
        });
    });
    Ok(())
}

/// The composed attention's scores. Args: s, q, k, mask, has_mask, heads, n, nkv, hd,
/// hpb, scale.
pub(crate) fn scores<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: LaneReal,
{
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

    let blocks = n.div_ceil(BQS);
    let tasks = heads * blocks;
    let work = s_len.saturating_mul(hd.max(1));
    run_tasks(tasks, work, |w, t| {
        let (h, blk) = (t / blocks, t % blocks);
        let i0 = blk * BQS;
        let mrow = has_mask.then(|| {
            let row = (h / hpb) * nkv;
            &mask[row..row + nkv]
        });
        run_lanes(scores::ScoresTask {
            q,
            k,
            mask: mrow,
            block: (h, i0, n.min(i0 + BQS) - i0),
            n_nkv: (n, nkv),
            hd,
            scale,
            out: sb,
            w,
        });
    });
    Ok(())
}
