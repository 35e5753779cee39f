//! ONNX Attention (opset 23+): gpukit's fused attention, or, for what it does not
//! cover (`softcap`, the `qk_matmul_output` output), the reference's composition of
//! matmul, softcap, mask, softmax and matmul.

use gpukit_core::DType;
use gpukit_ops::CmpOp;
use gpukit_tensor::{AttentionOptions, PadMode, ReduceOp, Tensor};

use super::{Ctx, X, host_ints, opt, req, val};
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::Value;

/// ONNX Attention: 4-D `[batch, heads, seq, dim]` inputs, or 3-D `[batch, seq,
/// heads·dim]` with `q_num_heads` / `kv_num_heads`; past key/value concatenated before
/// the new ones (the `present_*` outputs); an additive or bool mask (padded with
/// dropped keys when shorter than the keys); causal, sliding-window and per-batch
/// valid-length frontiers offset by the cache as the reference places them.
pub(super) fn attention(c: &Ctx<'_>, x: X<'_>) -> OpResult<Vec<Value>> {
    let a = c.attrs;
    if !matches!(a.int("softmax_precision", 0)?, 0 | 1) {
        return Err(OpError::Unsupported(
            "softmax_precision other than float".into(),
        ));
    }
    let mode = a.int("qk_matmul_output_mode", 0)?;
    if !(0..=3).contains(&mode) {
        return Err(OpError::Invalid(format!("qk_matmul_output_mode = {mode}")));
    }
    let softcap = a.float("softcap", 0.0)?;
    let (q, k, v) = (&req(x, 0)?.t, &req(x, 1)?.t, &req(x, 2)?.t);
    let three_d = q.rank() == 3;
    // [b, s, h·d] -> [b, h, s, d]
    let heads = |t: &Tensor, key: &str| -> OpResult<Tensor> {
        if !three_d {
            return Ok(t.clone());
        }
        let h = a.int(key, 0)?;
        let d = t.dims();
        if t.rank() != 3 || h <= 0 || !d[2].is_multiple_of(h as usize) {
            return Err(OpError::Invalid(format!(
                "3-D input of dims {d:?} with {key} = {h}"
            )));
        }
        Ok(
            t.reshape(&[d[0] as i64, d[1] as i64, h, (d[2] / h as usize) as i64])?
                .permute(&[0, 2, 1, 3])?,
        )
    };
    let q4 = heads(q, "q_num_heads")?;
    let mut k4 = heads(k, "kv_num_heads")?;
    let mut v4 = heads(v, "kv_num_heads")?;
    match (opt(x, 4), opt(x, 5)) {
        (Some(pk), Some(pv)) => {
            k4 = Tensor::concat(&[&pk.t, &k4], 2)?;
            v4 = Tensor::concat(&[&pv.t, &v4], 2)?;
        }
        (None, None) => {}
        _ => {
            return Err(OpError::Invalid(
                "past_key and past_value must be given together".into(),
            ));
        }
    }
    if q4.rank() != 4 || k4.rank() != 4 || v4.rank() != 4 {
        return Err(OpError::Invalid(format!(
            "q, k, v of dims {:?}, {:?}, {:?}",
            q4.dims(),
            k4.dims(),
            v4.dims()
        )));
    }
    let past = opt(x, 4).map_or(0, |p| p.t.dims().get(2).copied().unwrap_or(0));
    let nonpad = opt(x, 6)
        .map(|n| host_ints(n, "nonpad_kv_seqlen"))
        .transpose()?;
    if nonpad.is_some() && past > 0 {
        return Err(OpError::Invalid(
            "nonpad_kv_seqlen cannot be combined with past key/value".into(),
        ));
    }
    let causal = a.flag("is_causal", false)?;
    let (left, right) = (
        a.int("left_window_size", -1)?,
        a.int("right_window_size", -1)?,
    );
    let (mut mask, boolean_mask) = match opt(x, 3) {
        Some(m) if m.ty == ElemType::Bool => (Some(m.t.to_dtype(q.dtype())?), true),
        Some(m) => (Some(m.t.clone()), false),
        None => (None, false),
    };
    let nkv = k4.dims()[2];
    // A mask shorter than the keys (a padded cache) is padded: dropped keys.
    if let Some(m) = &mask
        && let Some(&ml) = m.dims().last()
        && ml < nkv
    {
        let fill = if boolean_mask { 0.0 } else { f64::NEG_INFINITY };
        let pad = [0, (nkv - ml) as i64];
        mask = Some(m.pad(&pad, PadMode::Constant, fill, Some(&[-1]))?);
    }
    // Top-left causal without a cache is the fused op's own flag; every other frontier
    // becomes a 0/1 keep-mask `[b, 1, q, kv]`.
    let composed = softcap != 0.0 || c.nout > 3;
    let native_causal =
        causal && !composed && past == 0 && nonpad.is_none() && left < 0 && right < 0;
    let frontier = Frontier {
        causal: causal && !native_causal,
        left,
        right,
        past,
        nonpad,
    };
    let keep = frontier.keep(c, q4.dims()[0], q4.dims()[2], nkv)?;
    let (y, qk) = if composed {
        let bias = additive_bias(c, q.dtype(), mask, boolean_mask, keep)?;
        let (y, qk) = composed_attention(c, &q4, &k4, &v4, bias, softcap, mode)?;
        (y, Some(qk))
    } else {
        let (mask, boolean_mask) = match (mask, keep) {
            (m, None) => (m, boolean_mask),
            (None, Some(k)) => (Some(k.to_dtype(q.dtype())?), true),
            (Some(m), Some(k)) if boolean_mask => (Some(k.to_dtype(q.dtype())?.mul(&m)?), true),
            (Some(m), Some(k)) => (Some(m.add(&drop_to_ninf(c, &k, q.dtype())?)?), false),
        };
        let o = AttentionOptions {
            mask,
            boolean_mask,
            causal: native_causal,
            scale: a.opt_float("scale")?,
        };
        (Tensor::attention(&q4, &k4, &v4, &o)?, None)
    };
    let y = if three_d {
        let d = y.dims().to_vec();
        y.permute(&[0, 2, 1, 3])?
            .reshape(&[d[0] as i64, d[2] as i64, (d[1] * d[3]) as i64])?
    } else {
        y
    };
    let mut out = vec![val(y.contiguous()?)];
    if c.nout > 1 {
        out.push(val(k4.contiguous()?));
        out.push(val(v4.contiguous()?));
    }
    if let Some(qk) = qk.filter(|_| c.nout > 3) {
        out.push(val(qk.contiguous()?));
    }
    Ok(out)
}

/// The key frontiers other than the fused op's top-left causal flag.
struct Frontier {
    causal: bool,
    left: i64,
    right: i64,
    past: usize,
    nonpad: Option<Vec<i64>>,
}

impl Frontier {
    /// The 0/1 keep-mask `[b, 1, nq, nkv]` (i32), `None` when nothing is dropped.
    /// Query `i` of batch `b` sits at `i + offset` (offset: the cache length, or
    /// `nonpad[b] - nq`).
    fn keep(&self, c: &Ctx<'_>, b: usize, nq: usize, nkv: usize) -> OpResult<Option<Tensor>> {
        if !self.causal && self.left < 0 && self.right < 0 && self.nonpad.is_none() {
            return Ok(None);
        }
        let offsets: Vec<i64> = match &self.nonpad {
            Some(n) if n.len() == b => n.iter().map(|&l| l - nq as i64).collect(),
            Some(n) => {
                return Err(OpError::Invalid(format!(
                    "nonpad_kv_seqlen has {} values for batch {b}",
                    n.len()
                )));
            }
            None => vec![self.past as i64; b],
        };
        let mut keep = Vec::with_capacity(b * nq * nkv);
        for (bi, &off) in offsets.iter().enumerate() {
            for i in 0..nq as i64 {
                for j in 0..nkv as i64 {
                    let mut k = true;
                    if self.causal {
                        k &= j <= i + off;
                    }
                    if self.left >= 0 {
                        k &= j >= i + off - self.left;
                    }
                    if self.right >= 0 {
                        k &= j <= i + off + self.right;
                    }
                    if let Some(n) = &self.nonpad {
                        k &= j < n[bi];
                    }
                    keep.push(i32::from(k));
                }
            }
        }
        Ok(Some(Tensor::from_slice(c.kit, &keep, &[b, 1, nq, nkv])?))
    }
}

/// `0` where `keep` is nonzero, `-inf` elsewhere, in `dtype`.
fn drop_to_ninf(c: &Ctx<'_>, keep: &Tensor, dtype: DType) -> OpResult<Tensor> {
    let ninf = Tensor::full(c.kit, &[], f64::NEG_INFINITY, dtype)?;
    let zero = Tensor::zeros(c.kit, &[], dtype)?;
    Ok(keep.where_(&zero, &ninf)?)
}

/// The reference's additive bias: a bool mask as `0 / -inf`, an additive one as is,
/// plus `-inf` where a frontier drops the key; `None` without either.
fn additive_bias(
    c: &Ctx<'_>,
    dtype: DType,
    mask: Option<Tensor>,
    boolean_mask: bool,
    keep: Option<Tensor>,
) -> OpResult<Option<Tensor>> {
    let m = match mask {
        Some(m) if boolean_mask => Some(drop_to_ninf(c, &m, dtype)?),
        m => m,
    };
    Ok(match (m, keep) {
        (m, None) => m,
        (None, Some(k)) => Some(drop_to_ninf(c, &k, dtype)?),
        (Some(m), Some(k)) => Some(m.add(&drop_to_ninf(c, &k, dtype)?)?),
    })
}

/// The reference's composition: `qk = (q·√s)·(k·√s)ᵀ` (the scale's square root in the
/// input type on both sides), `softcap·tanh(qk / softcap)` when set, `+ bias`,
/// softmax, rows whose bias drops every key zeroed, `·v`. Returns `y` and the
/// `qk_matmul_output` of `mode` as the reference gives it (0 and 1: the product, after
/// softcap when set; 2: with the bias; 3: the probabilities).
fn composed_attention(
    c: &Ctx<'_>,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    bias: Option<Tensor>,
    softcap: f64,
    mode: i64,
) -> OpResult<(Tensor, Tensor)> {
    let dt = q.dtype();
    let (hq, hk) = (q.dims()[1], k.dims()[1]);
    if hk == 0 || hq % hk != 0 || v.dims()[1] != hk {
        return Err(OpError::Invalid(format!(
            "{hq} query heads for {hk} key and {} value heads",
            v.dims()[1]
        )));
    }
    // Grouped-query heads: each K/V head repeated for its consecutive query heads.
    let repeat = |t: &Tensor| -> OpResult<Tensor> {
        if hq == hk {
            return Ok(t.clone());
        }
        let d = t.dims().to_vec();
        Ok(t.unsqueeze(2)?
            .broadcast_to(&[d[0], hk, hq / hk, d[2], d[3]])?
            .reshape(&[d[0] as i64, hq as i64, d[2] as i64, d[3] as i64])?)
    };
    let (k, v) = (repeat(k)?, repeat(v)?);
    let scale = match c.attrs.opt_float("scale")? {
        Some(s) => s,
        None => 1.0 / (q.dims()[3] as f64).sqrt(),
    };
    let root = Tensor::full(c.kit, &[], scale.sqrt(), dt)?;
    let mut qk = q
        .mul(&root)?
        .matmul(&k.mul(&root)?.permute(&[0, 1, 3, 2])?)?;
    if softcap != 0.0 {
        let cap = Tensor::full(c.kit, &[], softcap, dt)?;
        qk = qk.div(&cap)?.tanh()?.mul(&cap)?;
    }
    let with_bias = match &bias {
        Some(b) => qk.add(b)?,
        None => qk.clone(),
    };
    let mut probs = with_bias.softmax(-1)?;
    if let Some(b) = &bias {
        let row_max = b
            .broadcast_to(with_bias.dims())?
            .reduce(ReduceOp::Max, &[-1], true)?;
        let ninf = Tensor::full(c.kit, &[], f64::NEG_INFINITY, dt)?;
        let dropped = row_max.compare_as(CmpOp::Eq, &ninf, DType::I32)?;
        let zero = Tensor::zeros(c.kit, &[], dt)?;
        probs = dropped.where_(&zero.broadcast_to(probs.dims())?, &probs)?;
    }
    let y = probs.matmul(&v)?;
    let out = match mode {
        2 => with_bias,
        3 => probs,
        _ => qk,
    };
    Ok((y, out))
}
