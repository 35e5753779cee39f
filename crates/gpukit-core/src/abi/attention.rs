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
];
