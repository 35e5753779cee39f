//! The general fused attention ([`attention_general`]): per-query masks (additive or
//! boolean, broadcast by strides), a causal flag, grouped-query / multi-query attention
//! (fewer K/V heads, no copies) and a V width different from Q/K's, in the head-major
//! `[batch, heads, n, d]` or the interleaved `[batch·n, heads·d]` layout.

use gpukit_core::abi::attention as abi_att;
use gpukit_core::{Buf, DevArg, Error, Kit, Result};

use crate::check;

/// The shape, layout, mask kind and scale of one [`attention_general`] call (see
/// [`gpukit_core::abi::attention::GeneralSpec`] for every field).
pub type AttentionSpec = abi_att::GeneralSpec;

/// What the mask of [`attention_general`] holds: none, additive values, or boolean 0/1
/// keep-flags.
pub type AttentionMaskKind = abi_att::MaskKind;

/// General fused attention: `out = softmax(scale·Q·Kᵀ + mask)·V` per (sequence, head,
/// query) with the online softmax of docs/ops/attention.md.
///
/// Shapes by `spec` ([`AttentionSpec`]): head-major q `[batch, heads, n, head_dim]`,
/// k `[batch, kv_heads, nkv, head_dim]`, v `[batch, kv_heads, nkv, v_head_dim]`, out
/// `[batch, heads, n, v_head_dim]`; interleaved q `[batch·n, heads·head_dim]`, k / v
/// `[batch·nkv, kv_heads·(head_dim | v_head_dim)]`, out `[batch·n, heads·v_head_dim]`.
/// Query head `h` reads K/V head `h / (heads / kv_heads)`. The mask (absent buffer when
/// `spec.mask` is `None`) is read at `b·sb + h·sh + i·si + j`; additive values `<=
/// ATTENTION_MASK_DROP` drop a key, others are added to the scaled score; boolean
/// values keep a key when nonzero and drop it when zero. `causal` keeps keys `j <= i`
/// (top-left, as ONNX opset 23 without a cache). A row that keeps no key is `+0.0`
/// (as ONNX opset 23 and onnxruntime 1.32).
///
/// Errors: [`Error::InvalidArgument`] (a head width outside `1..=256`, `kv_heads` 0 or
/// not dividing `heads`, a non-finite scale, `out` overlapping an input, a mask kind
/// without a mask); [`Error::Length`] (q, k, v, out not exactly their tensors, a mask
/// shorter than its largest index + 1); [`Error::SizeOverflow`]; [`Error::DType`];
/// [`Error::Absent`]; [`Error::DeviceMismatch`].
pub fn attention_general(
    kit: &Kit,
    out: &Buf,
    q: &Buf,
    k: &Buf,
    v: &Buf,
    mask: &Buf,
    spec: &AttentionSpec,
) -> Result<()> {
    let op = "attention_general";
    let has_mask = spec.mask != AttentionMaskKind::None;
    let mut ops = vec![(out, "out"), (q, "q"), (k, "k"), (v, "v")];
    if has_mask {
        ops.push((mask, "mask"));
    }
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    if let Some(reason) = spec.invalid() {
        return Err(Error::InvalidArgument {
            op: op.to_string(),
            reason,
        });
    }
    check::finite_param(op, "scale", d, spec.scale, false)?;
    let (q_len, k_len, v_len, o_len) = spec.lens().ok_or_else(|| Error::SizeOverflow {
        what: format!("{op}: tensor sizes of {spec:?}"),
    })?;
    let m_len = spec.mask_len().ok_or_else(|| Error::SizeOverflow {
        what: format!("{op}: mask extent of {spec:?}"),
    })?;
    check::len(op, "q", q, q_len)?;
    check::len(op, "k", k, k_len)?;
    check::len(op, "v", v, v_len)?;
    check::len(op, "out", out, o_len)?;
    if has_mask && mask.len() < m_len {
        return Err(Error::Length {
            what: format!("{op}: mask (strides {:?})", spec.mask_strides),
            expected: m_len,
            got: mask.len(),
        });
    }
    let mut inputs = vec![(q, "q"), (k, "k"), (v, "v")];
    if has_mask {
        inputs.push((mask, "mask"));
    }
    check::no_overlap(op, out, &inputs, false)?;
    if o_len == 0 {
        return Ok(());
    }
    let absent = Buf::absent(d);
    let s = |what, x| check::i64_of(op, what, x).map(DevArg::I64);
    let [sb, sh, si] = spec.mask_strides;
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(check::product(
            op,
            "rows",
            &[spec.batch, spec.heads, spec.n],
        )?)?,
        &[
            out.into(),
            q.into(),
            k.into(),
            v.into(),
            if has_mask { mask } else { &absent }.into(),
            DevArg::I64(spec.mask.code()),
            DevArg::I64(i64::from(spec.causal)),
            s("batch", spec.batch)?,
            s("heads", spec.heads)?,
            s("kv_heads", spec.kv_heads)?,
            s("n", spec.n)?,
            s("nkv", spec.nkv)?,
            s("head_dim", spec.head_dim)?,
            s("v_head_dim", spec.v_head_dim)?,
            DevArg::I64(i64::from(spec.interleaved)),
            s("mask batch stride", if has_mask { sb } else { 0 })?,
            s("mask head stride", if has_mask { sh } else { 0 })?,
            s("mask query stride", if has_mask { si } else { 0 })?,
            DevArg::F64(spec.scale),
        ],
    )
}
