//! Kernel signatures of the neural-network family: the `attention` group, and the
//! constants of the attention contract (docs/ops/attention.md), shared by the operator
//! family, the reference oracle and every backend.
//!
//! The fused kernel (`attention`) is the online softmax over fixed key tiles of
//! [`KEY_TILE`] keys. Per query row `i` of head `h` (compute type `R`; `q`, `k`, `v`, `mask`
//! loaded exactly):
//!
//! ```text
//! m = -inf, l = +0.0, acc[0..hd] = +0.0
//! for each key tile t (keys t*KEY_TILE .. min(nkv, (t+1)*KEY_TILE)), in order:
//!     kept keys j of the tile = those whose mask value is not <= MASK_DROP (all without a mask)
//!     s_j   = +0.0; for d ascending: s_j = fma(q[i][d], k[j][d], s_j)
//!     s_j   = s_j * scale;  with a mask: s_j = s_j + mask[j]
//!     m_new = max_nan(m, max_nan over the tile's kept s_j)   (m when none is kept)
//!     c     = 1 if m_new == -inf else exp(m - m_new)
//!     p_j   = 0 if m_new == -inf else exp(s_j - m_new)
//!     l     = l * c;       then for kept j ascending: l = l + p_j
//!     acc_d = acc_d * c;   then for kept j ascending: acc_d = fma(p_j, v[j][d], acc_d)
//!     m     = m_new
//! out[i][d] = store(acc_d / l)
//! ```
//!
//! A dropped key is never read (neither K nor V). A row with no kept key gives
//! `0 / 0 = NaN` in every element (as ONNX Attention's reference for a fully `-inf`
//! masked row).

use super::KernelSig;
use crate::DType;
use crate::numeric::FLOAT_DTYPES;

const FLOATS: &[DType] = &FLOAT_DTYPES;

/// Keys per tile of the fused attention's online softmax: the tile boundaries are part
/// of the contract (a tile's maximum and rescaling happen once per tile).
pub const KEY_TILE: usize = 64;

/// The largest head width the fused kernel supports (a GPU block keeps one K and one V
/// tile of `KEY_TILE x MAX_HEAD_DIM` in shared memory).
pub const MAX_HEAD_DIM: usize = 256;

/// A mask value `<= MASK_DROP` (in the compute type) drops its key in the fused kernel:
/// the key never reaches the running maximum, contributes nothing to the denominator and
/// its K and V rows are never read. `-2^99` (about `-6.3e29`) is exact in every compute
/// type, and `-1e30` and `-inf` are below it in every float dtype (in f16, `-1e30` rounds
/// to `-inf`).
pub const MASK_DROP: f64 = -633_825_300_114_114_700_748_351_602_688.0;

const _: () = assert!(MASK_DROP == -((1u128 << 99) as f64));

/// The default softmax scale for a head width: `1.0 / (head_dim as f64).sqrt()` in f64
/// (correctly rounded `sqrt`, then one division); kernels round it once to the compute
/// type.
pub fn default_scale(head_dim: usize) -> f64 {
    1.0 / (head_dim as f64).sqrt()
}

/// Whether the fused attention runs for this head width: `1 <= head_dim <= MAX_HEAD_DIM`.
pub fn fused_supported(head_dim: usize) -> bool {
    (1..=MAX_HEAD_DIM).contains(&head_dim)
}

/// The `attention` group's kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // Fused scaled-dot-product attention, the online softmax of the module docs.
    // Layout: interleaved = 0 is head-major: q, o [batch, heads, n, hd], k, v
    // [batch, heads, nkv, hd] (the ops pass batch = 1). interleaved = 1: q, o [batch*n, heads*hd], k, v
    // [batch*nkv, heads*hd] (row stride heads*hd, head h at column h*hd).
    // has_mask = 0: unmasked (mask is not read; pass the absent buffer). has_mask = 1:
    // mask holds batch * (heads / hpb) rows of nkv values; (b, h) reads row
    // b * (heads / hpb) + h / hpb (head-major: row h / hpb; interleaved with hpb = heads:
    // row b). hpb >= 1 divides heads; 1 <= hd <= MAX_HEAD_DIM. scale is an f64 scalar
    // rounded once to the compute type. o overlaps no input.
    KernelSig {
        op: "attention",
        dtypes: FLOATS,
        args: "o: buf, q: buf, k: buf, v: buf, mask: buf, has_mask, batch, heads, n, nkv, hd, hpb, interleaved, scale: f64",
    },
    // Scores of the composed attention, head-major: s[h, i, j] = (fma chain over d
    // ascending from +0.0 of q[h, i, d] * k[h, j, d]) * scale, then + mask[h / hpb, j]
    // when has_mask = 1 (plain IEEE addition: no key is dropped), stored once into s
    // [heads, n, nkv]. s overlaps no input.
    KernelSig {
        op: "attention_scores",
        dtypes: FLOATS,
        args: "s: buf, q: buf, k: buf, mask: buf, has_mask, heads, n, nkv, hd, hpb, scale: f64",
    },
    // The general fused attention: the online softmax of the module docs with per-query
    // masks, a causal flag, grouped K/V heads and a separate V width; see [`GeneralSpec`]
    // for the argument meanings (`mask_kind` is [`MaskKind::code`], `causal` and
    // `interleaved` 0 / 1, `msb, msh, msi` the mask strides). A row with no kept key
    // writes `+0.0`. o overlaps no input.
    KernelSig {
        op: "attention_general",
        dtypes: FLOATS,
        args: "o: buf, q: buf, k: buf, v: buf, mask: buf, mask_kind, causal, batch, heads, kv_heads, n, nkv, hd, vd, interleaved, msb, msh, msi, scale: f64",
    },
];

/// What the mask of the general fused attention (the `attention_general` kernel) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaskKind {
    /// No mask: every key is kept (the mask buffer is not read).
    None,
    /// Additive: a value `<= MASK_DROP` drops its key, any other value is added to the
    /// scaled score (as the masks of the existing entries).
    Additive,
    /// Boolean keep-flags (1 / 0 in the kernel's float dtype, as gpukit's comparison ops
    /// produce them): a nonzero value (NaN included) keeps the key with no addition, a
    /// zero (`+0.0` or `-0.0`) drops it exactly as a `MASK_DROP` value does.
    Boolean,
}

impl MaskKind {
    /// The kernel's `mask_kind` code: 0 none, 1 additive, 2 boolean.
    pub fn code(self) -> i64 {
        match self {
            MaskKind::None => 0,
            MaskKind::Additive => 1,
            MaskKind::Boolean => 2,
        }
    }

    /// The kind of a `mask_kind` code, `None` for a code outside `0..=2`.
    pub fn from_code(code: i64) -> Option<MaskKind> {
        match code {
            0 => Some(MaskKind::None),
            1 => Some(MaskKind::Additive),
            2 => Some(MaskKind::Boolean),
            _ => None,
        }
    }
}

/// The shape of one general fused attention (the `attention_general` kernel): `batch`
/// sequences of `heads` query heads, `n` queries over `nkv` keys; `kv_heads` K/V heads
/// (dividing `heads`: query head `h` reads K/V head `h / (heads / kv_heads)`); Q and K
/// rows of `head_dim`, V and output rows of `v_head_dim`.
///
/// Layouts (`interleaved`): `false` is head-major, q `[batch, heads, n, head_dim]`,
/// k `[batch, kv_heads, nkv, head_dim]`, v `[batch, kv_heads, nkv, v_head_dim]`, out
/// `[batch, heads, n, v_head_dim]`; `true` is the linear layers' layout, q
/// `[batch·n, heads·head_dim]`, k `[batch·nkv, kv_heads·head_dim]`, v
/// `[batch·nkv, kv_heads·v_head_dim]`, out `[batch·n, heads·v_head_dim]`.
///
/// The mask (when `mask != MaskKind::None`) is read at element
/// `b·mask_strides[0] + h·mask_strides[1] + i·mask_strides[2] + j` for query `i` of head
/// `h` of sequence `b` and key `j` (a stride 0 broadcasts that dimension). With `causal`,
/// query `i` keeps only keys `j <= i` (top-left aligned, as ONNX Attention opset 23
/// without a KV cache), combined with the mask (a key is kept only if both keep it).
/// A row that keeps no key (fully masked, or `nkv = 0`) outputs `+0.0` (as ONNX opset 23
/// and onnxruntime).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneralSpec {
    /// Sequences.
    pub batch: usize,
    /// Query heads per sequence.
    pub heads: usize,
    /// K/V heads per sequence (`>= 1`, dividing `heads`).
    pub kv_heads: usize,
    /// Queries per sequence.
    pub n: usize,
    /// Keys per sequence.
    pub nkv: usize,
    /// Elements per Q and K row (`1..=MAX_HEAD_DIM`).
    pub head_dim: usize,
    /// Elements per V and output row (`1..=MAX_HEAD_DIM`).
    pub v_head_dim: usize,
    /// The interleaved layout (see the type docs).
    pub interleaved: bool,
    /// Top-left causal masking.
    pub causal: bool,
    /// What the mask holds.
    pub mask: MaskKind,
    /// Element strides of the mask over (batch, head, query); the key stride is 1.
    pub mask_strides: [usize; 3],
    /// The factor applied to every `q·k` (rounded once to the compute type).
    pub scale: f64,
}

impl GeneralSpec {
    /// A head-major spec of `batch` sequences, `heads` heads (as many K/V heads), `n`
    /// queries over `nkv` keys, Q/K/V width `head_dim`, no mask, not causal, the default
    /// scale [`default_scale`]`(head_dim)`.
    pub fn new(batch: usize, heads: usize, n: usize, nkv: usize, head_dim: usize) -> Self {
        GeneralSpec {
            batch,
            heads,
            kv_heads: heads,
            n,
            nkv,
            head_dim,
            v_head_dim: head_dim,
            interleaved: false,
            causal: false,
            mask: MaskKind::None,
            mask_strides: [0; 3],
            scale: default_scale(head_dim),
        }
    }

    /// The same spec with `kv_heads` K/V heads (grouped-query attention).
    pub fn with_kv_heads(self, kv_heads: usize) -> Self {
        GeneralSpec { kv_heads, ..self }
    }

    /// The same spec with V (and output) rows of `v_head_dim`.
    pub fn with_v_head_dim(self, v_head_dim: usize) -> Self {
        GeneralSpec { v_head_dim, ..self }
    }

    /// The same spec with another scale.
    pub fn with_scale(self, scale: f64) -> Self {
        GeneralSpec { scale, ..self }
    }

    /// The same spec, causal (`true`) or not.
    pub fn with_causal(self, causal: bool) -> Self {
        GeneralSpec { causal, ..self }
    }

    /// The same spec in the interleaved (`true`) or head-major layout.
    pub fn with_interleaved(self, interleaved: bool) -> Self {
        GeneralSpec {
            interleaved,
            ..self
        }
    }

    /// The same spec with a mask of `kind` whose (batch, head, query) element strides
    /// are `strides` (0 broadcasts; the key stride is 1).
    pub fn with_mask(self, kind: MaskKind, strides: [usize; 3]) -> Self {
        GeneralSpec {
            mask: kind,
            mask_strides: strides,
            ..self
        }
    }

    /// The same spec with a contiguous mask of `kind` shaped
    /// `[mask_batch, mask_heads, mask_n, nkv]`, each of the first three either 1
    /// (broadcast) or the spec's own extent; the strides follow from the shape.
    pub fn with_mask_shape(self, kind: MaskKind, [mb, mh, mn]: [usize; 3]) -> Self {
        let si = if mn == 1 { 0 } else { self.nkv };
        let sh = if mh == 1 { 0 } else { mn * self.nkv };
        let sb = if mb == 1 { 0 } else { mh * mn * self.nkv };
        self.with_mask(kind, [sb, sh, si])
    }

    /// Elements of q / out (`out` with `v_head_dim`) and of k / v, as
    /// `(q, k, v, out)`, or `None` when a product overflows.
    pub fn lens(&self) -> Option<(usize, usize, usize, usize)> {
        let bn = self.batch.checked_mul(self.n)?;
        let bk = self.batch.checked_mul(self.nkv)?;
        let q = bn.checked_mul(self.heads)?.checked_mul(self.head_dim)?;
        let o = bn.checked_mul(self.heads)?.checked_mul(self.v_head_dim)?;
        let k = bk.checked_mul(self.kv_heads)?.checked_mul(self.head_dim)?;
        let v = bk
            .checked_mul(self.kv_heads)?
            .checked_mul(self.v_head_dim)?;
        Some((q, k, v, o))
    }

    /// Elements the mask must hold: one past its largest index (0 without a mask or
    /// when nothing is computed), or `None` when that overflows.
    pub fn mask_len(&self) -> Option<usize> {
        if self.mask == MaskKind::None
            || self.batch == 0
            || self.heads == 0
            || self.n == 0
            || self.nkv == 0
        {
            return Some(0);
        }
        let [sb, sh, si] = self.mask_strides;
        (self.batch - 1)
            .checked_mul(sb)?
            .checked_add((self.heads - 1).checked_mul(sh)?)?
            .checked_add((self.n - 1).checked_mul(si)?)?
            .checked_add(self.nkv)
    }

    /// Query heads per K/V head (`heads / kv_heads`; 1 when `kv_heads` is 0).
    pub fn group(&self) -> usize {
        self.heads.checked_div(self.kv_heads).unwrap_or(1).max(1)
    }

    /// Why this spec cannot run (head widths, `kv_heads`), or `None` when it can.
    pub fn invalid(&self) -> Option<String> {
        if !fused_supported(self.head_dim) {
            return Some(format!(
                "head_dim {} is outside 1..={MAX_HEAD_DIM}",
                self.head_dim
            ));
        }
        if !fused_supported(self.v_head_dim) {
            return Some(format!(
                "v_head_dim {} is outside 1..={MAX_HEAD_DIM}",
                self.v_head_dim
            ));
        }
        if self.kv_heads == 0 || !self.heads.is_multiple_of(self.kv_heads) {
            return Some(format!(
                "kv_heads {} must be >= 1 and divide heads {}",
                self.kv_heads, self.heads
            ));
        }
        None
    }
}

/// The [`GeneralSpec`] of the `attention_general` kernel's i64 scalars (argument
/// positions 5..=17, passed as `s[5..18]`) and scale, or why they are invalid.
pub fn general_spec_of(s: &[u64], scale: f64) -> Result<GeneralSpec, (usize, String)> {
    let mask = MaskKind::from_code(s[5] as i64)
        .ok_or((5, format!("mask_kind {} is not 0, 1 or 2", s[5])))?;
    let flag = |i: usize| match s[i] {
        0 => Ok(false),
        1 => Ok(true),
        v => Err((i, format!("expected 0 or 1, got {v}"))),
    };
    let z = |i: usize| usize::try_from(s[i]).map_err(|_| (i, "does not fit usize".to_string()));
    Ok(GeneralSpec {
        causal: flag(6)?,
        batch: z(7)?,
        heads: z(8)?,
        kv_heads: z(9)?,
        n: z(10)?,
        nkv: z(11)?,
        head_dim: z(12)?,
        v_head_dim: z(13)?,
        interleaved: flag(14)?,
        mask,
        mask_strides: [z(15)?, z(16)?, z(17)?],
        scale,
    })
}
