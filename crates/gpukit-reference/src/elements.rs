//! Element-wise gather and scatter (ONNX GatherElements, ScatterElements): one index
//! per element, the loops of the contract in gpukit_core::abi::elements.

use gpukit_core::elements::{ScatterElem, ScatterReduction};
use gpukit_core::numeric::resolve_index;
use gpukit_core::{Element, Result};

use super::{assert_len, check_indices, numel};

/// Element-wise gather: `data` is `[outer, axis_len, inner]`, `idx` (one index per
/// output element) and the output `[outer, nidx, inner]`, with
/// `out[o, g, i] = data[o, idx[o, g, i], i]` (negative indices count from the end).
/// Bits are copied.
///
/// # Errors
/// [`gpukit_core::Error::IndexOutOfRange`] for the first index (in row-major order)
/// outside `[-axis_len, axis_len)`.
///
/// # Panics
/// When `data` or `idx` does not hold the elements the extents say.
pub fn gather_elements<T: Element>(
    data: &[T],
    idx: &[i64],
    outer: usize,
    axis_len: usize,
    inner: usize,
    nidx: usize,
) -> Result<Vec<T>> {
    let what = "gather_elements";
    assert_len(
        what,
        "data",
        data.len(),
        numel(&[outer, axis_len, inner], what),
    );
    assert_len(what, "idx", idx.len(), numel(&[outer, nidx, inner], what));
    check_indices(what, idx, axis_len)?;
    let mut out = Vec::with_capacity(idx.len());
    for o in 0..outer {
        for g in 0..nidx {
            for i in 0..inner {
                let v = idx[(o * nidx + g) * inner + i];
                let r = resolve_index(v, axis_len).expect("checked above");
                out.push(data[(o * axis_len + r) * inner + i]);
            }
        }
    }
    Ok(out)
}

/// Element-wise scatter: the output starts as a copy of `data` (`[outer, axis_len,
/// inner]`); then, for every update in the row-major order of `upd` (`[outer, nidx,
/// inner]`, like `idx`), `out[o, r, i] = combine(reduction, out[o, r, i], upd[o, g, i])`
/// with `r = idx[o, g, i]` resolved (negative from the end). With duplicate targets the
/// order is that row-major order: under `None` the last update wins, the others fold in
/// that order ([`ScatterElem::combine`], one rounding per step).
///
/// # Errors
/// [`gpukit_core::Error::IndexOutOfRange`] for the first index outside
/// `[-axis_len, axis_len)`; nothing is returned then.
///
/// # Panics
/// When a slice does not hold the elements the extents say.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements<T: ScatterElem>(
    data: &[T],
    idx: &[i64],
    upd: &[T],
    outer: usize,
    axis_len: usize,
    inner: usize,
    nidx: usize,
    reduction: ScatterReduction,
) -> Result<Vec<T>> {
    let what = "scatter_elements";
    assert_len(
        what,
        "data",
        data.len(),
        numel(&[outer, axis_len, inner], what),
    );
    assert_len(what, "idx", idx.len(), numel(&[outer, nidx, inner], what));
    assert_len(what, "upd", upd.len(), idx.len());
    check_indices(what, idx, axis_len)?;
    let mut out = data.to_vec();
    // Row-major order of the updates, literally.
    for o in 0..outer {
        for g in 0..nidx {
            for i in 0..inner {
                let e = (o * nidx + g) * inner + i;
                let r = resolve_index(idx[e], axis_len).expect("checked above");
                let t = (o * axis_len + r) * inner + i;
                out[t] = T::combine(reduction, out[t], upd[e]);
            }
        }
    }
    Ok(out)
}

/// Running sum along an axis (ONNX CumSum): `x` and the output are `[outer, len,
/// inner]`. Along each `(o, i)` line, visited in ascending position (descending when
/// `reverse`), the accumulator starts as the first visited element in the compute type
/// and adds each next one with one rounding (integers wrap); the inclusive output at a
/// position is the stored accumulator after its element, the exclusive one (when
/// `exclusive`) the stored accumulator before it, zero at the line's first position.
///
/// # Panics
/// When `x` does not hold `outer * len * inner` elements.
pub fn cumsum<T: gpukit_core::numeric::Arith>(
    x: &[T],
    outer: usize,
    len: usize,
    inner: usize,
    exclusive: bool,
    reverse: bool,
) -> Vec<T> {
    let what = "cumsum";
    assert_len(what, "x", x.len(), numel(&[outer, len, inner], what));
    let mut out = vec![T::acc_store(T::acc_zero()); x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc: Option<T::Acc> = None;
            for step in 0..len {
                let p = if reverse { len - 1 - step } else { step };
                let e = (o * len + p) * inner + i;
                let before = acc;
                acc = Some(match acc {
                    None => T::acc_load(x[e]),
                    Some(a) => T::acc_step(a, x[e]),
                });
                let shown = if exclusive { before } else { acc };
                out[e] = match shown {
                    Some(a) => T::acc_store(a),
                    None => T::acc_store(T::acc_zero()),
                };
            }
        }
    }
    out
}

/// Sorted top-`k` along an axis (ONNX TopK): `x` is `[outer, len, inner]`, both
/// outputs `[outer, k, inner]`. Each `(o, i)` line's positions are sorted with a
/// *stable* sort by [`gpukit_core::topk::TopkElem::rank_order`] (descending for
/// `largest`, ascending otherwise; NaN above every number; `-0 == +0`), so equal values keep
/// the lower position first; the first `k` give the values (bit copies) and their
/// positions.
///
/// # Panics
/// When `x` does not hold `outer * len * inner` elements or `k > len`.
pub fn topk<T: gpukit_core::topk::TopkElem>(
    x: &[T],
    outer: usize,
    len: usize,
    inner: usize,
    k: usize,
    largest: bool,
) -> (Vec<T>, Vec<i64>) {
    let what = "topk";
    assert_len(what, "x", x.len(), numel(&[outer, len, inner], what));
    assert!(k <= len, "topk: k = {k} > len = {len}");
    let mut values = Vec::with_capacity(outer * k * inner);
    let mut indices = vec![0i64; outer * k * inner];
    values.resize(outer * k * inner, T::default());
    for o in 0..outer {
        for i in 0..inner {
            let at = |p: usize| x[(o * len + p) * inner + i];
            let mut pos: Vec<usize> = (0..len).collect();
            pos.sort_by(|&a, &b| T::rank_order(at(a), at(b), largest));
            for (r, &p) in pos.iter().take(k).enumerate() {
                let e = (o * k + r) * inner + i;
                values[e] = at(p);
                indices[e] = p as i64;
            }
        }
    }
    (values, indices)
}
