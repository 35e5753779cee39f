//! The reference oracle of the general fused attention (`attention_general`): per-query
//! masks (additive or boolean) with broadcast strides, a causal flag, grouped K/V heads
//! and a separate V width, on the one row algorithm of [`crate::attention`].

use gpukit_core::abi::attention::{GeneralSpec, MASK_DROP, MaskKind};
use gpukit_core::numeric::{FloatElement, Real};

use crate::attention::fused_row_keys;

/// General fused attention ([`GeneralSpec`] gives the layouts and the mask indexing).
///
/// Per query row `i` of head `h` of sequence `b`, key `j` is kept when (with `causal`)
/// `j <= i`, and (with a mask value `x = mask[b·sb + h·sh + i·si + j]`) an additive `x`
/// is not `<= MASK_DROP` (then `x` is added to the scaled score) or a boolean `x` is
/// nonzero. Query head `h` reads K/V head `h / (heads / kv_heads)`. The kept keys run
/// through the contract's online softmax; a row that keeps no key is `+0.0`.
///
/// # Panics
/// If the spec is invalid ([`GeneralSpec::invalid`]) or a slice is shorter than the
/// spec needs.
pub fn attention_general<T: FloatElement>(
    q: &[T],
    k: &[T],
    v: &[T],
    mask: Option<&[T]>,
    spec: &GeneralSpec,
) -> Vec<T> {
    if let Some(why) = spec.invalid() {
        panic!("gpukit-reference::attention_general: {why}");
    }
    let (ql, kl, vl, ol) = spec.lens().expect("attention_general: sizes overflow");
    let ml = spec.mask_len().expect("attention_general: mask overflows");
    assert!(
        q.len() >= ql && k.len() >= kl && v.len() >= vl,
        "attention_general: short input"
    );
    let mask = match spec.mask {
        MaskKind::None => None,
        _ => {
            let mk = mask.expect("attention_general: a mask kind without a mask");
            assert!(mk.len() >= ml, "attention_general: short mask");
            Some(mk)
        }
    };
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
    } = *spec;
    let group = spec.group();
    let scale = <T::Real as Real>::from_f64(spec.scale);
    let drop_below = <T::Real as Real>::from_f64(MASK_DROP);
    // Element offsets of (b, head, row) for a tensor of `h_count` heads of width `w`
    // over `rows` rows per sequence.
    let at = |b: usize, head: usize, row: usize, rows: usize, h_count: usize, w: usize| {
        if interleaved {
            (b * rows + row) * h_count * w + head * w
        } else {
            ((b * h_count + head) * rows + row) * w
        }
    };
    let mut out = vec![T::default(); ol];
    for b in 0..batch {
        for h in 0..heads {
            let kh = h / group;
            for i in 0..n {
                let key = |j: usize| -> Option<Option<T::Real>> {
                    if causal && j > i {
                        return None;
                    }
                    match (spec.mask, mask) {
                        (MaskKind::Additive, Some(mk)) => {
                            let x = mk[b * sb + h * sh + i * si + j].load();
                            (x > drop_below || x.is_nan()).then_some(Some(x))
                        }
                        (MaskKind::Boolean, Some(mk)) => {
                            let x = mk[b * sb + h * sh + i * si + j].load();
                            (x != <T::Real as Real>::ZERO).then_some(None)
                        }
                        _ => Some(None),
                    }
                };
                let (row, any) = fused_row_keys(
                    nkv,
                    (hd, vd),
                    scale,
                    |d| q[at(b, h, i, n, heads, hd) + d].load(),
                    |j, d| k[at(b, kh, j, nkv, kv_heads, hd) + d].load(),
                    |j, d| v[at(b, kh, j, nkv, kv_heads, vd) + d].load(),
                    key,
                );
                let o = at(b, h, i, n, heads, vd);
                for (d, x) in row.into_iter().enumerate() {
                    out[o + d] = if any {
                        T::store(x)
                    } else {
                        T::store(<T::Real as Real>::ZERO)
                    };
                }
            }
        }
    }
    out
}
