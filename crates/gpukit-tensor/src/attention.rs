//! Fused scaled-dot-product attention on `[batch, heads, n, d]` tensors
//! ([`Tensor::attention`]): one call of `gpukit_ops::attention_general`, so its bits are
//! that op's (docs/ops/attention.md). The mask broadcasts by numpy rules to
//! `[batch, heads, n, nkv]`; grouped-query K/V heads are read in place.

use gpukit_core::Result;
use gpukit_ops::{AttentionMaskKind, AttentionSpec, attention_default_scale, attention_general};

use crate::Tensor;
use crate::layout::{self, shape_err};

/// Options of [`Tensor::attention`].
#[derive(Debug, Clone, Default)]
pub struct AttentionOptions {
    /// A mask broadcastable (numpy rules) to `[batch, heads, n, nkv]`, of the queries'
    /// dtype: additive values, or 0/1 keep-flags when `boolean_mask`.
    pub mask: Option<Tensor>,
    /// The mask holds keep-flags (nonzero keeps a key, zero drops it), as gpukit's
    /// comparison ops produce them, instead of additive values.
    pub boolean_mask: bool,
    /// Top-left causal masking: query `i` keeps keys `j <= i` (as ONNX opset 23).
    pub causal: bool,
    /// The scale of `q·k`; `None` is `1 / sqrt(head_dim)`.
    pub scale: Option<f64>,
}

impl Tensor {
    /// `softmax(scale·q·kᵀ + mask)·v` for `q` `[batch, heads, n, d]`, `k`
    /// `[batch, kv_heads, nkv, d]` and `v` `[batch, kv_heads, nkv, dv]` (`kv_heads`
    /// dividing `heads`: grouped-query / multi-query attention without copies); returns
    /// `[batch, heads, n, dv]`. A row that keeps no key is `+0.0` (as ONNX opset 23).
    ///
    /// Heads split off a `[batch, seq, heads·dim]` activation by
    /// `reshape([batch, seq, heads, dim])` and `permute([0, 2, 1, 3])` are read in place
    /// (no copy) when q, k and v all are such views; the result is then the same view of
    /// a `[batch, n, heads, dv]` buffer, so `permute([0, 2, 1, 3])` and a reshape merge
    /// the heads back without a copy. The bits are the same either way.
    ///
    /// ```
    /// # fn main() -> gpukit_core::Result<()> {
    /// use gpukit_tensor::{AttentionOptions, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let q = Tensor::from_slice(&kit, &[1.0f32, 0.0, 0.0, 1.0], &[1, 1, 2, 2])?;
    /// let o = Tensor::attention(&q, &q, &q, &AttentionOptions { causal: true, ..Default::default() })?;
    /// assert_eq!(o.to_vec::<f32>()?[..2], [1.0, 0.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`gpukit_core::Error::Shape`] when an operand is not rank 4, the batch or
    /// widths disagree, `heads` is not a multiple of `kv_heads`, or the mask does not
    /// broadcast to `[batch, heads, n, nkv]`; the op's errors (dtypes, head widths
    /// outside `1..=256`, a non-finite scale).
    pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, o: &AttentionOptions) -> Result<Tensor> {
        let op = "attention";
        for (name, t) in [("q", q), ("k", k), ("v", v)] {
            if t.rank() != 4 {
                return Err(shape_err(
                    op,
                    format!(
                        "{name} must be [batch, heads, seq, dim], got {:?}",
                        t.dims()
                    ),
                ));
            }
        }
        let ([b, h, n, d], [kb, kvh, nkv, kd], [vb, vh, vn, vd]) =
            (dims4(q.dims()), dims4(k.dims()), dims4(v.dims()));
        if kb != b || vb != b || kd != d || vh != kvh || vn != nkv || (kvh == 0 && h != 0) {
            return Err(shape_err(
                op,
                format!(
                    "q {:?}, k {:?}, v {:?} do not agree (want k [{b}, kv_heads, nkv, {d}], v [{b}, kv_heads, nkv, dv])",
                    q.dims(),
                    k.dims(),
                    v.dims()
                ),
            ));
        }
        if kvh != 0 && !h.is_multiple_of(kvh) {
            return Err(shape_err(
                op,
                format!("heads {h} of q is not a multiple of kv_heads {kvh} of k"),
            ));
        }
        let mut spec = AttentionSpec::new(b, h, n, nkv, d)
            .with_kv_heads(kvh.max(1))
            .with_v_head_dim(vd)
            .with_causal(o.causal)
            .with_scale(o.scale.unwrap_or_else(|| attention_default_scale(d)));
        let mut mask_buf = None;
        if let Some(m) = &o.mask {
            if m.rank() > 4 {
                return Err(shape_err(op, format!("mask {:?} has rank > 4", m.dims())));
            }
            let mut md = vec![1usize; 4 - m.rank()];
            md.extend_from_slice(m.dims());
            let full = [b, h, n, nkv];
            for (a, (&x, &y)) in md.iter().zip(&full).enumerate() {
                if x != 1 && x != y {
                    return Err(shape_err(
                        op,
                        format!(
                            "mask {:?} does not broadcast to [batch, heads, n, nkv] = {full:?} (axis {a})",
                            m.dims()
                        ),
                    ));
                }
            }
            // The key axis is read in place: broadcast it (a copy) only when it is 1.
            let mshape = [md[0], md[1], md[2], nkv];
            let m = m.reshape(&md.iter().map(|&x| x as i64).collect::<Vec<_>>())?;
            let m = if md[3] != nkv {
                m.broadcast_to(&mshape)?
            } else {
                m
            };
            mask_buf = Some(m.to_buf()?);
            let kind = if o.boolean_mask {
                AttentionMaskKind::Boolean
            } else {
                AttentionMaskKind::Additive
            };
            spec = spec.with_mask_shape(kind, [md[0], md[1], md[2]]);
        }
        let out = q
            .kit()
            .alloc(q.dtype(), layout::numel(op, &[b, h, n, vd])?)?;
        let absent = gpukit_core::Buf::absent(q.dtype());
        let mask = mask_buf.as_ref().unwrap_or(&absent);
        // Heads split off the linear layers' `[batch, seq, heads·dim]` by a reshape and
        // a permute are read in place (the kernel's interleaved layout), and the output
        // is then a view of `[batch, n, heads, dv]`: merging the heads back is free.
        if let (Some(qb), Some(kb), Some(vb)) = (interleaved(q)?, interleaved(k)?, interleaved(v)?)
        {
            let spec = spec.with_interleaved(true);
            attention_general(q.kit(), &out, &qb, &kb, &vb, mask, &spec)?;
            return Tensor::from_buf(out, &[b, n, h, vd])?.permute(&[0, 2, 1, 3]);
        }
        attention_general(
            q.kit(),
            &out,
            &q.to_buf()?,
            &k.to_buf()?,
            &v.to_buf()?,
            mask,
            &spec,
        )?;
        Tensor::from_buf(out, &[b, h, n, vd])
    }
}

/// The buffer of a `[batch, heads, seq, dim]` view whose elements lie as a contiguous
/// `[batch, seq, heads, dim]` (the permute of a reshaped linear layer's output), or
/// `None` when they do not. Axes of length 1 may have any stride.
fn interleaved(t: &Tensor) -> Result<Option<gpukit_core::Buf>> {
    let [b, h, n, d] = dims4(t.dims());
    if b * h * n * d == 0 {
        return Ok(None);
    }
    let want = [n * h * d, d, h * d, 1];
    let fits = t
        .dims()
        .iter()
        .zip(t.strides())
        .zip(want)
        .all(|((&len, &st), w)| len == 1 || st == w as isize);
    if !fits {
        return Ok(None);
    }
    Ok(Some(t.buf.view(t.offset(), b * h * n * d)?))
}

fn dims4(d: &[usize]) -> [usize; 4] {
    [d[0], d[1], d[2], d[3]]
}
