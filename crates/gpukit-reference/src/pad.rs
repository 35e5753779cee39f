//! ONNX Pad: the loop of the contract (gpukit_core::pad).

use gpukit_core::Element;
use gpukit_core::pad::PadMode;

use super::numel;

/// Pads `x` (contiguous over `dims`) by `pads` (`[begin_0 .. begin_{r-1}, end_0 ..
/// end_{r-1}]`, ONNX's order; negative values crop, applied before padding) under
/// `mode`, with `value` for `Constant`. Returns the output dims and elements.
///
/// # Panics
/// When `x` does not hold `dims`' elements, `pads` is not `2 * dims.len()` long, an
/// axis is cropped below zero, or a non-constant mode pads an axis left empty.
pub fn pad<T: Element>(
    x: &[T],
    dims: &[usize],
    pads: &[i64],
    mode: PadMode,
    value: T,
) -> (Vec<usize>, Vec<T>) {
    let r = dims.len();
    assert_eq!(
        x.len(),
        numel(dims, "pad"),
        "gpukit-reference::pad: x length"
    );
    assert_eq!(pads.len(), 2 * r, "gpukit-reference::pad: pads length");
    let mut out_dims = Vec::with_capacity(r);
    let mut start = Vec::with_capacity(r);
    let mut len = Vec::with_capacity(r);
    for d in 0..r {
        let (b, e) = (pads[d], pads[r + d]);
        let s = (-b).max(0);
        let l = dims[d] as i64 - s - (-e).max(0);
        assert!(l >= 0, "gpukit-reference::pad: axis {d} cropped below zero");
        out_dims.push((l + b.max(0) + e.max(0)) as usize);
        start.push(s);
        len.push(l);
    }
    let n = numel(&out_dims, "pad");
    let mut out = Vec::with_capacity(n);
    for e in 0..n {
        // Row-major coordinates of output element e, one axis at a time.
        let mut rem = e;
        let mut coords = vec![0usize; r];
        for d in (0..r).rev() {
            coords[d] = rem % out_dims[d];
            rem /= out_dims[d];
        }
        let mut off = Some(0usize);
        for d in 0..r {
            let t = coords[d] as i64 - pads[d].max(0);
            assert!(
                mode == PadMode::Constant || len[d] > 0,
                "gpukit-reference::pad: empty axis {d}"
            );
            off = match (off, mode.source(t, len[d])) {
                (Some(o), Some(s)) => Some(o * dims[d] + (start[d] + s) as usize),
                _ => None,
            };
        }
        out.push(off.map_or(value, |o| x[o]));
    }
    (out_dims, out)
}
