//! The neural-network family: the `attention` group.
//!
//! * Fused scaled-dot-product attention ([`attention`], [`attention_masked`],
//!   [`attention_batch`]): `O = softmax(scale·Q·Kᵀ + mask)·V` by the online softmax over
//!   fixed tiles of [`ATTENTION_KEY_TILE`] keys; the `[heads, n, nkv]` score matrix never
//!   exists. One order of operations on every backend (docs/ops/attention.md).
//! * Composed attention ([`attention_composed`]): scores, row softmax and matmul as three
//!   kernels through a caller-provided score buffer; a different (also exact) bit pattern.

use gpukit_core::abi::attention as abi_att;
use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;

/// Keys per tile of the fused attention's online softmax (part of the contract).
pub const ATTENTION_KEY_TILE: usize = abi_att::KEY_TILE;

/// The largest head width the fused attention supports.
pub const ATTENTION_MAX_HEAD_DIM: usize = abi_att::MAX_HEAD_DIM;

/// A mask value at or below this (in the compute type) drops its key in the fused
/// attention (`-2^99`; `-1e30` and `-inf` are below it in every float dtype).
pub const ATTENTION_MASK_DROP: f64 = abi_att::MASK_DROP;

/// Whether the fused attention runs for this head width on every backend:
/// `1 <= head_dim <= ATTENTION_MAX_HEAD_DIM` (256). A caller that gets `false` needs
/// [`attention_composed`] and its `[heads, n, nkv]` score buffer.
pub fn attention_supported(head_dim: usize) -> bool {
    abi_att::fused_supported(head_dim)
}

/// The default softmax scale, `1.0 / (head_dim as f64).sqrt()` computed in f64 (the
/// kernels round it once to the compute type).
pub fn attention_default_scale(head_dim: usize) -> f64 {
    abi_att::default_scale(head_dim)
}

/// The shape and scale of one attention call: `heads` heads of `n` queries attending
/// over `nkv` keys, each of `head_dim` elements; scores are multiplied by `scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttentionShape {
    /// Number of heads (per sequence).
    pub heads: usize,
    /// Queries per head (per sequence).
    pub n: usize,
    /// Keys (and values) per head (per sequence).
    pub nkv: usize,
    /// Elements per query, key, value and output row.
    pub head_dim: usize,
    /// The factor applied to every `q·k` (finite; rounded once to the compute type).
    pub scale: f64,
}

impl AttentionShape {
    /// A shape with the default scale [`attention_default_scale`]`(head_dim)`.
    pub fn new(heads: usize, n: usize, nkv: usize, head_dim: usize) -> AttentionShape {
        AttentionShape {
            heads,
            n,
            nkv,
            head_dim,
            scale: attention_default_scale(head_dim),
        }
    }

    /// The same shape with another scale.
    pub fn with_scale(self, scale: f64) -> AttentionShape {
        AttentionShape { scale, ..self }
    }
}

fn check_scale(op: &str, d: DType, scale: f64) -> Result<()> {
    let ok = if d == DType::F64 {
        scale.is_finite()
    } else {
        (scale as f32).is_finite()
    };
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!("scale {scale} is not finite in the compute type"),
        })
    }
}

fn check_head_dim(op: &str, hd: usize) -> Result<()> {
    if attention_supported(hd) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!(
                "head_dim {hd} is outside 1..={ATTENTION_MAX_HEAD_DIM} (see attention_supported)"
            ),
        })
    }
}

fn check_hpb(op: &str, heads: usize, hpb: usize) -> Result<()> {
    if hpb >= 1 && heads.is_multiple_of(hpb) {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            op: op.to_string(),
            reason: format!("heads_per_mask_row {hpb} must be >= 1 and divide heads {heads}"),
        })
    }
}

/// Everything the fused kernel needs, validated; `None` mask = unmasked.
struct Fused<'a> {
    out: &'a Buf,
    q: &'a Buf,
    k: &'a Buf,
    v: &'a Buf,
    mask: Option<&'a Buf>,
    batch: usize,
    hpb: usize,
    interleaved: bool,
    shape: AttentionShape,
}

fn launch_fused(kit: &Kit, op: &str, f: Fused<'_>) -> Result<()> {
    let Fused {
        out,
        q,
        k,
        v,
        mask,
        batch,
        hpb,
        interleaved,
        shape,
    } = f;
    let AttentionShape {
        heads,
        n,
        nkv,
        head_dim: hd,
        scale,
    } = shape;
    let mut ops = vec![(out, "out"), (q, "q"), (k, "k"), (v, "v")];
    if let Some(m) = mask {
        ops.push((m, "mask"));
    }
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    check_head_dim(op, hd)?;
    check_hpb(op, heads, hpb)?;
    check_scale(op, d, scale)?;
    let q_len = check::product(op, "[batch, heads, n, head_dim]", &[batch, heads, n, hd])?;
    let kv_len = check::product(
        op,
        "[batch, heads, nkv, head_dim]",
        &[batch, heads, nkv, hd],
    )?;
    check::len(op, "q", q, q_len)?;
    check::len(op, "k", k, kv_len)?;
    check::len(op, "v", v, kv_len)?;
    check::len(op, "out", out, q_len)?;
    if let Some(m) = mask {
        let rows = check::product(op, "[batch, heads / hpb]", &[batch, heads / hpb])?;
        let m_len = check::product(op, "[mask rows, nkv]", &[rows, nkv])?;
        check::len(op, "mask", m, m_len)?;
    }
    let mut inputs = vec![(q, "q"), (k, "k"), (v, "v")];
    if let Some(m) = mask {
        inputs.push((m, "mask"));
    }
    check::no_overlap(op, out, &inputs, false)?;
    if q_len == 0 {
        return Ok(());
    }
    let absent = Buf::absent(d);
    let s = |what, x| check::i64_of(op, what, x).map(DevArg::I64);
    kit.launch_builtin(
        &check::name("attention", d),
        check::launch_1d(check::product(op, "rows", &[batch, heads, n])?)?,
        &[
            out.into(),
            q.into(),
            k.into(),
            v.into(),
            mask.unwrap_or(&absent).into(),
            DevArg::I64(i64::from(mask.is_some())),
            s("batch", batch)?,
            s("heads", heads)?,
            s("n", n)?,
            s("nkv", nkv)?,
            s("head_dim", hd)?,
            s("hpb", hpb)?,
            DevArg::I64(i64::from(interleaved)),
            DevArg::F64(scale),
        ],
    )
}

/// Fused attention, unmasked, head-major: `q` and `out` are `[heads, n, head_dim]`, `k`
/// and `v` `[heads, nkv, head_dim]` (float dtypes, all the same);
/// `out[h, i] = Σ_j softmax_j(scale·q[h,i]·k[h,j]) · v[h,j]`, computed by the online
/// softmax over tiles of [`ATTENTION_KEY_TILE`] keys in the order of
/// docs/ops/attention.md (not bit-identical to [`attention_composed`]). `nkv = 0` gives
/// NaN rows (no key to attend to); `heads = 0` or `n = 0` writes nothing.
///
/// Errors: [`Error::InvalidArgument`] when `head_dim` is outside `1..=256` (see
/// [`attention_supported`]), the scale is not finite, or `out` overlaps an input;
/// [`Error::Length`] when a buffer does not hold its tensor; [`Error::DType`];
/// [`Error::SizeOverflow`]; [`Error::Absent`]; [`Error::DeviceMismatch`].
pub fn attention(
    kit: &Kit,
    out: &Buf,
    q: &Buf,
    k: &Buf,
    v: &Buf,
    shape: AttentionShape,
) -> Result<()> {
    launch_fused(
        kit,
        "attention",
        Fused {
            out,
            q,
            k,
            v,
            mask: None,
            batch: 1,
            hpb: 1,
            interleaved: false,
            shape,
        },
    )
}

/// Fused attention with an additive per-key mask, head-major (layout as [`attention`]):
/// `mask` is `[heads / heads_per_mask_row, nkv]` of the same dtype and head `h` reads
/// row `h / heads_per_mask_row`. A mask value `<= ATTENTION_MASK_DROP` (`-1e30`, `-inf`)
/// drops the key: it never reaches the running maximum, adds nothing to the denominator
/// and its K and V rows are not read, so a row padded with dropped keys at the end is
/// bit-identical to the unpadded row. Other values (0 keeps a key) are added to the
/// scaled score. A row whose keys are all dropped is NaN (as ONNX Attention's reference
/// gives for a fully `-inf`-masked row). A NaN mask value makes its row NaN.
///
/// Errors: those of [`attention`]; [`Error::InvalidArgument`] when
/// `heads_per_mask_row` is 0 or does not divide `heads`; [`Error::Absent`] when `mask` is
/// absent; [`Error::Length`] when `mask` does not hold its rows.
#[allow(clippy::too_many_arguments)]
pub fn attention_masked(
    kit: &Kit,
    out: &Buf,
    q: &Buf,
    k: &Buf,
    v: &Buf,
    mask: &Buf,
    heads_per_mask_row: usize,
    shape: AttentionShape,
) -> Result<()> {
    launch_fused(
        kit,
        "attention_masked",
        Fused {
            out,
            q,
            k,
            v,
            mask: Some(mask),
            batch: 1,
            hpb: heads_per_mask_row,
            interleaved: false,
            shape,
        },
    )
}

/// Fused attention over a batch of sequences in the interleaved layout a transformer's
/// linear layers produce: `q` and `out` are `[batch·n, heads·head_dim]`, `k` and `v`
/// `[batch·nkv, heads·head_dim]` (row stride `heads·head_dim`, head `h` at column
/// `h·head_dim`); `mask` is `[batch, nkv]` (sequence `b` reads row `b` for every head,
/// values as in [`attention_masked`]) or the absent buffer for no mask. Same per-row
/// algorithm as [`attention_masked`]: a sequence at batch `b` gives exactly the bits the
/// head-major entry gives for it.
///
/// Errors: those of [`attention`]; [`Error::Length`] when a present `mask` is not
/// `batch·nkv` long.
#[allow(clippy::too_many_arguments)]
pub fn attention_batch(
    kit: &Kit,
    out: &Buf,
    q: &Buf,
    k: &Buf,
    v: &Buf,
    mask: &Buf,
    batch: usize,
    shape: AttentionShape,
) -> Result<()> {
    launch_fused(
        kit,
        "attention_batch",
        Fused {
            out,
            q,
            k,
            v,
            mask: (!mask.is_absent()).then_some(mask),
            batch,
            hpb: shape.heads.max(1),
            interleaved: true,
            shape,
        },
    )
}

/// Composed attention, head-major (layout as [`attention`], mask as
/// [`attention_masked`] or the absent buffer for none): three kernels through the
/// caller's `scores` buffer of `heads·n·nkv` elements:
/// `scores = q·kᵀ` (fma chain over `d` ascending from +0.0) `× scale + mask` (plain IEEE
/// addition: no key is dropped), stored; `scores = softmax_rows(scores)` (the existing
/// row softmax); `out = bmm(scores, v)`. On success `scores` holds the probabilities.
/// Its bits differ from the fused ops'. As ONNX Attention: a fully `-inf`-masked row is
/// NaN, a fully `-1e30`-masked row is the softmax of the near-equal scores; a masked key
/// whose V holds inf or NaN makes the row NaN (`0 × inf`). `nkv = 0` gives +0.0 rows.
/// Any `head_dim` works (0 writes nothing).
///
/// Errors: [`Error::InvalidArgument`] (`heads_per_mask_row` with a mask, non-finite
/// scale, any overlap between `out`, `scores` and the inputs), [`Error::Length`],
/// [`Error::DType`], [`Error::SizeOverflow`], [`Error::Absent`] (q, k, v, out, scores),
/// [`Error::DeviceMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn attention_composed(
    kit: &Kit,
    out: &Buf,
    scores: &Buf,
    q: &Buf,
    k: &Buf,
    v: &Buf,
    mask: &Buf,
    heads_per_mask_row: usize,
    shape: AttentionShape,
) -> Result<()> {
    let op = "attention_composed";
    let AttentionShape {
        heads,
        n,
        nkv,
        head_dim: hd,
        scale,
    } = shape;
    let mask = (!mask.is_absent()).then_some(mask);
    let mut ops = vec![
        (out, "out"),
        (scores, "scores"),
        (q, "q"),
        (k, "k"),
        (v, "v"),
    ];
    if let Some(m) = mask {
        ops.push((m, "mask"));
    }
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let hpb = if mask.is_some() {
        check_hpb(op, heads, heads_per_mask_row)?;
        heads_per_mask_row
    } else {
        1
    };
    check_scale(op, d, scale)?;
    let q_len = check::product(op, "[heads, n, head_dim]", &[heads, n, hd])?;
    let kv_len = check::product(op, "[heads, nkv, head_dim]", &[heads, nkv, hd])?;
    let rows = check::product(op, "[heads, n]", &[heads, n])?;
    let s_len = check::product(op, "[heads, n, nkv]", &[heads, n, nkv])?;
    check::len(op, "q", q, q_len)?;
    check::len(op, "k", k, kv_len)?;
    check::len(op, "v", v, kv_len)?;
    check::len(op, "out", out, q_len)?;
    check::len(op, "scores", scores, s_len)?;
    if let Some(m) = mask {
        let m_len = check::product(op, "[heads / hpb, nkv]", &[heads / hpb, nkv])?;
        check::len(op, "mask", m, m_len)?;
    }
    let mut inputs = vec![(q, "q"), (k, "k"), (v, "v")];
    if let Some(m) = mask {
        inputs.push((m, "mask"));
    }
    check::no_overlap(op, scores, &inputs, false)?;
    inputs.push((scores, "scores"));
    check::no_overlap(op, out, &inputs, false)?;
    if q_len == 0 {
        return Ok(());
    }
    if s_len > 0 {
        let absent = Buf::absent(d);
        let s = |what, x| check::i64_of(op, what, x).map(DevArg::I64);
        kit.launch_builtin(
            &check::name("attention_scores", d),
            check::launch_1d(s_len)?,
            &[
                scores.into(),
                q.into(),
                k.into(),
                mask.unwrap_or(&absent).into(),
                DevArg::I64(i64::from(mask.is_some())),
                s("heads", heads)?,
                s("n", n)?,
                s("nkv", nkv)?,
                s("head_dim", hd)?,
                s("hpb", hpb)?,
                DevArg::F64(scale),
            ],
        )?;
        crate::softmax_rows(kit, scores, scores, rows, nkv)?;
    }
    crate::bmm(kit, out, scores, v, heads, n, nkv, hd, n * nkv, nkv * hd)
}
