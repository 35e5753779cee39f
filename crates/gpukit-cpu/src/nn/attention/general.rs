//! The general fused attention (`attention_general`): the fused task of `fused.rs` with
//! per-query masks (additive or boolean, broadcast by strides), a causal flag, grouped
//! K/V heads and a separate V width (gpukit_core::abi::attention::GeneralSpec).

use gpukit_core::abi::attention::{GeneralSpec, MaskKind, general_spec_of};
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{DType, Result};

use super::fused::{FusedTask, MaskSrc};
use super::lanes::{LaneReal, run_lanes};
use super::{BQ, Rows, run_tasks};
use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::{arg_err, input_slice, out_range};

/// The entry point of `attention_general` at a float dtype (f32 for the integer
/// dtypes, which have no such kernel and are never asked for).
pub(super) fn entry(d: DType) -> BuiltinFn {
    match d {
        DType::F64 => general::<f64>,
        DType::F16 => general::<f16>,
        DType::BF16 => general::<bf16>,
        _ => general::<f32>,
    }
}

/// Reads and validates the spec. Args: o, q, k, v, mask, mask_kind, causal, batch,
/// heads, kv_heads, n, nkv, hd, vd, interleaved, msb, msh, msi, scale.
fn spec_of(args: &BuiltinArgs<'_>) -> Result<GeneralSpec> {
    let mut s = [0u64; 18];
    for (i, x) in s.iter_mut().enumerate().skip(5) {
        let v = args.i64(i)?;
        if v < 0 {
            return arg_err(args, i, format!("{v} is negative"));
        }
        *x = v as u64;
    }
    let spec = match general_spec_of(&s, args.f64(18)?) {
        Ok(spec) => spec,
        Err((i, reason)) => return arg_err(args, i, reason),
    };
    if let Some(reason) = spec.invalid() {
        return arg_err(args, 12, reason);
    }
    Ok(spec)
}

/// The general fused attention (see the module docs).
fn general<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: LaneReal,
{
    let spec = spec_of(args)?;
    let Some((q_len, k_len, v_len, o_len)) = spec.lens() else {
        return arg_err(args, 7, "the tensor sizes overflow");
    };
    let Some(m_len) = spec.mask_len() else {
        return arg_err(args, 15, "the mask extent overflows");
    };
    let o = args.buf::<T>(0)?;
    let qb = args.buf::<T>(1)?;
    let kb = args.buf::<T>(2)?;
    let vb = args.buf::<T>(3)?;
    let mb = args.buf::<T>(4)?;
    args.need(0, &o, o_len)?;
    args.need(1, &qb, q_len)?;
    args.need(2, &kb, k_len)?;
    args.need(3, &vb, v_len)?;
    args.need(4, &mb, m_len)?;
    if o_len == 0 {
        return Ok(());
    }
    let outs = [out_range(&o)];
    // SAFETY: each buffer holds the counts checked above; an input overlapping the
    // output is copied before anything is written, and nothing else writes them.
    let (q, k, v, mask) = unsafe {
        (
            input_slice(&qb, q_len, &outs),
            input_slice(&kb, k_len, &outs),
            input_slice(&vb, v_len, &outs),
            input_slice(&mb, m_len, &outs),
        )
    };
    let (q, k, v, mask) = (&q[..], &k[..], &v[..], &mask[..]);
    let o: RawBuf<'_, T> = o;
    let GeneralSpec {
        batch,
        heads,
        kv_heads,
        n,
        nkv,
        head_dim: hd,
        v_head_dim: vd,
        interleaved,
        causal,
        mask_strides: [sb, sh, si],
        ..
    } = spec;
    let group = spec.group();
    let scale = <T::Real as Real>::from_f64(spec.scale);
    let bh = batch * heads;
    let blocks = n.div_ceil(BQ);
    let tasks = bh * blocks;
    let work = bh
        .saturating_mul(n)
        .saturating_mul(nkv)
        .saturating_mul(hd + vd);
    // Rows of (sequence b, head `head` of `hc`, width `w`) over `len` rows per sequence.
    let rows_of = |b: usize, head: usize, hc: usize, w: usize, len: usize| {
        if interleaved {
            Rows {
                base: b * len * hc * w + head * w,
                stride: hc * w,
            }
        } else {
            Rows {
                base: (b * hc + head) * len * w,
                stride: w,
            }
        }
    };
    run_tasks(tasks, work, |w, t| {
        let (bhi, blk) = (t / blocks, t % blocks);
        let (b, h) = (bhi / heads, bhi % heads);
        let kh = h / group;
        let src = match spec.mask {
            MaskKind::None => MaskSrc::None,
            MaskKind::Additive if si == 0 => {
                let at = b * sb + h * sh;
                MaskSrc::Row(&mask[at..at + nkv])
            }
            kind => MaskSrc::PerRow {
                data: mask,
                base: b * sb + h * sh,
                stride: si,
                additive: kind == MaskKind::Additive,
            },
        };
        let i0 = blk * BQ;
        run_lanes(FusedTask {
            q,
            k,
            v,
            mask: src,
            causal,
            zero_empty: true,
            rows: [
                rows_of(b, h, heads, hd, n),
                rows_of(b, kh, kv_heads, hd, nkv),
                rows_of(b, kh, kv_heads, vd, nkv),
                rows_of(b, h, heads, vd, n),
            ],
            block: (i0, n.min(i0 + BQ) - i0),
            nkv,
            hd: (hd, vd),
            scale,
            out: o,
            w,
        });
    });
    Ok(())
}
