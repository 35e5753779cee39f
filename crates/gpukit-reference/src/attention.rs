//! The reference oracle of the neural-network family: the `attention` group.
//!
//! Two ops with two bit patterns (contract rule 5, docs/ops/attention.md):
//!
//! * the **fused** attention ([`attention`], [`attention_batch`]): the online softmax over
//!   fixed key tiles of [`KEY_TILE`] keys, written once here in `fused_row`;
//! * the **composed** attention ([`attention_composed`]): scores, row softmax, matmul,
//!   each stored in the dtype between the steps, exactly as three separate ops give.

use gpukit_core::abi::attention::{KEY_TILE, MASK_DROP};
use gpukit_core::numeric::{FloatElement, Real, max_nan};

use crate::{assert_len, bmm, numel, softmax_rows};

/// One query row of the fused attention: the contract's algorithm, literally.
///
/// `q(d)` is the query row, `k(j, d)` and `v(j, d)` the keys and values, `mask(j)` the
/// mask value of key `j` (`None` without a mask); all already loaded into the compute
/// type `R`. Returns the `hd` outputs in the compute type (the caller stores them).
fn fused_row<R: Real>(
    nkv: usize,
    hd: usize,
    scale: R,
    q: impl Fn(usize) -> R,
    k: impl Fn(usize, usize) -> R,
    v: impl Fn(usize, usize) -> R,
    mask: impl Fn(usize) -> Option<R>,
) -> Vec<R> {
    let drop_below = R::from_f64(MASK_DROP);
    let key = |j: usize| match mask(j) {
        Some(b) if b <= drop_below => None,
        bias => Some(bias),
    };
    fused_row_keys(nkv, (hd, hd), scale, q, k, v, key).0
}

/// The contract's row algorithm with the keep decision given per key: `key(j)` is
/// `None` when key `j` is dropped, `Some(bias)` when it is kept (`bias` added to the
/// scaled score when present). `hd.0` is the Q/K width, `hd.1` the V width. Returns the
/// `hd.1` outputs `acc / l` and whether any key was kept.
pub(crate) fn fused_row_keys<R: Real>(
    nkv: usize,
    (hd, vd): (usize, usize),
    scale: R,
    q: impl Fn(usize) -> R,
    k: impl Fn(usize, usize) -> R,
    v: impl Fn(usize, usize) -> R,
    key: impl Fn(usize) -> Option<Option<R>>,
) -> (Vec<R>, bool) {
    let mut m = R::NEG_INFINITY;
    let mut l = R::ZERO;
    let mut acc = vec![R::ZERO; vd];
    let mut any = false;

    let tiles = nkv.div_ceil(KEY_TILE);
    for t in 0..tiles {
        let start = t * KEY_TILE;
        let end = nkv.min(start + KEY_TILE);

        // 1. Scores of the tile's kept keys (a key whose mask is <= MASK_DROP is dropped:
        //    it is never read and takes no part in anything below).
        let mut kept: Vec<(usize, R)> = Vec::new();
        for j in start..end {
            let Some(bias) = key(j) else {
                continue;
            };
            any = true;
            let mut s = R::ZERO;
            for d in 0..hd {
                s = q(d).fma(k(j, d), s);
            }
            s = s * scale;
            if let Some(b) = bias {
                s = s + b;
            }
            kept.push((j, s));
        }

        // 2. The new running maximum.
        let mut m_new = m;
        for &(_, s) in &kept {
            m_new = max_nan(m_new, s);
        }

        // 3. Rescale factor and weights; -inf - -inf never happens.
        let all_neg_inf = m_new == R::NEG_INFINITY;
        let c = if all_neg_inf {
            R::ONE
        } else {
            (m - m_new).exp()
        };

        // 4. Denominator: rescale, then add the tile's weights in ascending key order.
        // 5. Accumulator: rescale, then one fma per kept key in ascending key order.
        l = l * c;
        for a in acc.iter_mut() {
            *a = *a * c;
        }
        for &(j, s) in &kept {
            let p = if all_neg_inf {
                R::ZERO
            } else {
                (s - m_new).exp()
            };
            l = l + p;
            for (d, a) in acc.iter_mut().enumerate() {
                *a = p.fma(v(j, d), *a);
            }
        }
        m = m_new;
    }

    (acc.into_iter().map(|a| a / l).collect(), any)
}

/// Fused scaled-dot-product attention, head-major (the `attention` kernel with
/// `interleaved = 0`): `q` and the output are `[heads, n, hd]`, `k` and `v`
/// `[heads, nkv, hd]`.
///
/// `mask`, when given, holds `heads / hpb` rows of `nkv` values; head `h` reads row
/// `h / hpb`; a value `<= MASK_DROP` (`-1e30`, `-inf`) drops the key, any other value is
/// added to the scaled score. Without a mask `hpb` is ignored. `scale` is rounded once to
/// the compute type. The order of operations is `fused_row`'s (docs/ops/attention.md):
/// online softmax over tiles of [`KEY_TILE`] keys; a row without a kept key (fully
/// masked, or `nkv = 0`) is NaN.
///
/// # Panics
/// If a slice length does not match the shape, `hpb` is 0 or does not divide `heads`,
/// or a size overflows.
#[allow(clippy::too_many_arguments)]
pub fn attention<T: FloatElement>(
    q: &[T],
    k: &[T],
    v: &[T],
    mask: Option<&[T]>,
    heads: usize,
    n: usize,
    nkv: usize,
    hd: usize,
    hpb: usize,
    scale: f64,
) -> Vec<T> {
    let what = "attention";
    assert_len(what, "q", q.len(), numel(&[heads, n, hd], what));
    assert_len(what, "k", k.len(), numel(&[heads, nkv, hd], what));
    assert_len(what, "v", v.len(), numel(&[heads, nkv, hd], what));
    if let Some(mk) = mask {
        assert!(
            hpb >= 1 && heads.is_multiple_of(hpb),
            "gpukit-reference::attention: hpb {hpb} must be >= 1 and divide heads {heads}"
        );
        assert_len(what, "mask", mk.len(), numel(&[heads / hpb, nkv], what));
    }
    let scale = <T::Real as Real>::from_f64(scale);

    let mut out = Vec::with_capacity(q.len());
    for h in 0..heads {
        for i in 0..n {
            let row = fused_row(
                nkv,
                hd,
                scale,
                |d| q[(h * n + i) * hd + d].load(),
                |j, d| k[(h * nkv + j) * hd + d].load(),
                |j, d| v[(h * nkv + j) * hd + d].load(),
                |j| mask.map(|mk| mk[(h / hpb) * nkv + j].load()),
            );
            out.extend(row.into_iter().map(T::store));
        }
    }
    out
}

/// Fused attention over a batch in the interleaved layout (the `attention` kernel with
/// `interleaved = 1`): `q` and the output are `[batch*n, heads*hd]`, `k` and `v`
/// `[batch*nkv, heads*hd]`; token `i` of sequence `b`, head `h`, element `d` is at
/// `(b*n + i) * heads*hd + h*hd + d`. `mask`, when given, is `[batch, nkv]`: sequence
/// `b` reads row `b` for every head. Same per-row algorithm as [`attention`], so a
/// sequence at batch `b` gives the bits the head-major entry gives for it.
///
/// # Panics
/// If a slice length does not match the shape, or a size overflows.
#[allow(clippy::too_many_arguments)]
pub fn attention_batch<T: FloatElement>(
    q: &[T],
    k: &[T],
    v: &[T],
    mask: Option<&[T]>,
    batch: usize,
    heads: usize,
    n: usize,
    nkv: usize,
    hd: usize,
    scale: f64,
) -> Vec<T> {
    let what = "attention_batch";
    let width = numel(&[heads, hd], what);
    assert_len(what, "q", q.len(), numel(&[batch, n, width], what));
    assert_len(what, "k", k.len(), numel(&[batch, nkv, width], what));
    assert_len(what, "v", v.len(), numel(&[batch, nkv, width], what));
    if let Some(mk) = mask {
        assert_len(what, "mask", mk.len(), numel(&[batch, nkv], what));
    }
    let scale = <T::Real as Real>::from_f64(scale);

    let mut out = vec![T::default(); q.len()];
    for b in 0..batch {
        for h in 0..heads {
            for i in 0..n {
                let row = fused_row(
                    nkv,
                    hd,
                    scale,
                    |d| q[(b * n + i) * width + h * hd + d].load(),
                    |j, d| k[(b * nkv + j) * width + h * hd + d].load(),
                    |j, d| v[(b * nkv + j) * width + h * hd + d].load(),
                    |j| mask.map(|mk| mk[b * nkv + j].load()),
                );
                for (d, x) in row.into_iter().enumerate() {
                    out[(b * n + i) * width + h * hd + d] = T::store(x);
                }
            }
        }
    }
    out
}

/// The composed attention's scores (the `attention_scores` kernel), head-major
/// `[heads, n, nkv]`: `s = fma chain over d ascending from +0.0 of q·k`, then
/// `s = s * scale`, then (with a mask) `s = s + mask[h / hpb][j]` — plain IEEE
/// addition, no key is dropped — stored once in the dtype.
///
/// # Panics
/// As [`attention`].
#[allow(clippy::too_many_arguments)]
pub fn attention_scores<T: FloatElement>(
    q: &[T],
    k: &[T],
    mask: Option<&[T]>,
    heads: usize,
    n: usize,
    nkv: usize,
    hd: usize,
    hpb: usize,
    scale: f64,
) -> Vec<T> {
    let what = "attention_scores";
    assert_len(what, "q", q.len(), numel(&[heads, n, hd], what));
    assert_len(what, "k", k.len(), numel(&[heads, nkv, hd], what));
    if let Some(mk) = mask {
        assert!(
            hpb >= 1 && heads.is_multiple_of(hpb),
            "gpukit-reference::attention_scores: hpb {hpb} must be >= 1 and divide heads {heads}"
        );
        assert_len(what, "mask", mk.len(), numel(&[heads / hpb, nkv], what));
    }
    let scale = <T::Real as Real>::from_f64(scale);

    let mut out = Vec::with_capacity(numel(&[heads, n, nkv], what));
    for h in 0..heads {
        for i in 0..n {
            for j in 0..nkv {
                let mut s = <T::Real as Real>::ZERO;
                for d in 0..hd {
                    s = q[(h * n + i) * hd + d]
                        .load()
                        .fma(k[(h * nkv + j) * hd + d].load(), s);
                }
                s = s * scale;
                if let Some(mk) = mask {
                    s = s + mk[(h / hpb) * nkv + j].load();
                }
                out.push(T::store(s));
            }
        }
    }
    out
}

/// Composed attention, head-major (shapes and mask as [`attention`]): the three ops
/// `P = softmax_rows(attention_scores(q, k, mask))` (rows of `nkv`) and
/// `O = bmm(P, V)` per head, each result stored in the dtype before the next step reads
/// it. Numerics: [`attention_scores`], then [`crate::softmax_rows`] (a row of all `-inf`,
/// or any NaN / `+inf` score, gives NaN; a fully `-1e30`-masked row gives the plain
/// softmax of nearly equal scores, as ONNX), then [`crate::bmm`] (fma chain over keys
/// ascending from +0.0). `nkv = 0` gives +0.0 everywhere (an empty matmul).
///
/// Returns `(out, p)`: the output and the probabilities `P` (what the op leaves in its
/// scratch buffer).
///
/// # Panics
/// As [`attention`].
#[allow(clippy::too_many_arguments)]
pub fn attention_composed<T: FloatElement>(
    q: &[T],
    k: &[T],
    v: &[T],
    mask: Option<&[T]>,
    heads: usize,
    n: usize,
    nkv: usize,
    hd: usize,
    hpb: usize,
    scale: f64,
) -> (Vec<T>, Vec<T>) {
    let what = "attention_composed";
    assert_len(what, "v", v.len(), numel(&[heads, nkv, hd], what));
    let s = attention_scores(q, k, mask, heads, n, nkv, hd, hpb, scale);
    let p = softmax_rows(&s, numel(&[heads, n], what), nkv);
    let out = bmm(&p, v, heads, n, nkv, hd, n * nkv, nkv * hd);
    (out, p)
}
