//! The reference oracle of the neural-network family: the `movement` group.
//!
//! Concat / copy into an axis slot, slice along an axis, N-D permute, expand (ONNX
//! Expand with a resolved output shape, and the last-axis form), bilinear and nearest
//! resize (NCHW), and the EOS gather. Everything except bilinear resize is a pure copy
//! of bits; the definitions are in docs/ops/movement.md.

use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{Element, Error, Result};

use crate::{assert_len, numel};

/// `dst` with `src` written into the slot `[offset, offset + src_axis)` of its axis:
/// `src` viewed as `[outer, src_axis, inner]`, `dst` as `[outer, dst_axis, inner]`,
/// `out[o, offset + a, i] = src[o, a, i]`; every other element is `dst`'s.
///
/// # Panics
/// If a length does not match its shape or the slot does not fit in the axis.
pub fn copy_into_axis<T: Element>(
    dst: &[T],
    src: &[T],
    outer: usize,
    src_axis: usize,
    inner: usize,
    dst_axis: usize,
    offset: usize,
) -> Vec<T> {
    let what = "copy_into_axis";
    assert_len(
        what,
        "src",
        src.len(),
        numel(&[outer, src_axis, inner], what),
    );
    assert_len(
        what,
        "dst",
        dst.len(),
        numel(&[outer, dst_axis, inner], what),
    );
    assert!(
        offset + src_axis <= dst_axis,
        "gpukit-reference::{what}: slot {offset}+{src_axis} past axis {dst_axis}"
    );
    let mut out = dst.to_vec();
    for o in 0..outer {
        for a in 0..src_axis {
            for i in 0..inner {
                out[(o * dst_axis + offset + a) * inner + i] = src[(o * src_axis + a) * inner + i];
            }
        }
    }
    out
}

/// Concatenation along an axis: input `k` viewed as `[outer, axis_lens[k], inner]`,
/// the output `[outer, Σ axis_lens, inner]` holds the inputs one after another along
/// the axis (ONNX Concat).
///
/// # Panics
/// If `inputs` and `axis_lens` differ in length or a length does not match its shape.
pub fn concat<T: Element>(
    inputs: &[&[T]],
    outer: usize,
    axis_lens: &[usize],
    inner: usize,
) -> Vec<T> {
    let what = "concat";
    assert_len(what, "axis_lens", axis_lens.len(), inputs.len());
    let total: usize = axis_lens.iter().sum();
    let mut out = Vec::with_capacity(numel(&[outer, total, inner], what));
    for o in 0..outer {
        for (x, &len) in inputs.iter().zip(axis_lens) {
            assert_len(what, "input", x.len(), numel(&[outer, len, inner], what));
            out.extend_from_slice(&x[o * len * inner..(o + 1) * len * inner]);
        }
    }
    out
}

/// Slice along an axis: `x` viewed as `[outer, axis_len, inner]`, the output
/// `[outer, len, inner]` with `out[o, a, i] = x[o, start + a·step, i]`. A negative
/// `start` counts from the end (`start + axis_len`, as ONNX Slice); unlike ONNX
/// nothing is clamped: the resolved start must lie in `[0, axis_len]` and, when
/// `len > 0`, the last element read `start + (len-1)·step` must be inside the axis.
///
/// Errors: [`Error::IndexOutOfRange`] when the resolved start is outside
/// `[0, axis_len]`, [`Error::Shape`] when the slice runs past the end of the axis.
///
/// # Panics
/// If `step == 0` or `x`'s length does not match its shape.
#[allow(clippy::too_many_arguments)]
pub fn slice_axis<T: Element>(
    x: &[T],
    outer: usize,
    axis_len: usize,
    inner: usize,
    start: i64,
    len: usize,
    step: usize,
) -> Result<Vec<T>> {
    let what = "slice_axis";
    assert!(step >= 1, "gpukit-reference::{what}: step 0");
    assert_len(what, "x", x.len(), numel(&[outer, axis_len, inner], what));
    let axis = i64::try_from(axis_len).expect("axis fits in i64");
    let s = if start < 0 { start + axis } else { start };
    if !(0..=axis).contains(&s) {
        return Err(Error::IndexOutOfRange {
            op: "slice".into(),
            index: start,
            axis_len,
        });
    }
    let s = s as usize;
    if len > 0 && s + (len - 1) * step >= axis_len {
        return Err(Error::Shape {
            op: "slice".into(),
            detail: format!("{len} elements from {s} by {step} run past axis {axis_len}"),
        });
    }
    let mut out = Vec::with_capacity(outer * len * inner);
    for o in 0..outer {
        for a in 0..len {
            for i in 0..inner {
                out.push(x[(o * axis_len + s + a * step) * inner + i]);
            }
        }
    }
    Ok(out)
}

/// The row-major coordinates of element `linear` of a tensor of `dims`.
fn coords(mut linear: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        c[d] = linear % dims[d];
        linear /= dims[d];
    }
    c
}

/// The row-major linear index of `coord` in a tensor of `dims`.
fn linear_of(coord: &[usize], dims: &[usize]) -> usize {
    coord.iter().zip(dims).fold(0, |acc, (&c, &d)| acc * d + c)
}

/// N-D transpose (ONNX Transpose): `x` has `in_dims`; output axis `d` is input axis
/// `perm[d]`, so the output dims are `in_dims[perm[d]]` and
/// `out[c] = x[c']` with `c'[perm[d]] = c[d]`. A 0-D tensor (no dims) is one element.
///
/// # Panics
/// If `perm` is not a permutation of `0..in_dims.len()` or `x`'s length is wrong.
pub fn permute<T: Element>(x: &[T], in_dims: &[usize], perm: &[usize]) -> Vec<T> {
    let what = "permute";
    assert_len(what, "perm", perm.len(), in_dims.len());
    let mut seen = vec![false; perm.len()];
    for &p in perm {
        assert!(
            p < perm.len() && !seen[p],
            "gpukit-reference::{what}: bad perm {perm:?}"
        );
        seen[p] = true;
    }
    let n = numel(in_dims, what);
    assert_len(what, "x", x.len(), n);
    let out_dims: Vec<usize> = perm.iter().map(|&p| in_dims[p]).collect();
    let mut out = Vec::with_capacity(n);
    let mut src = vec![0usize; in_dims.len()];
    for linear in 0..n {
        let c = coords(linear, &out_dims);
        for d in 0..perm.len() {
            src[perm[d]] = c[d];
        }
        out.push(x[linear_of(&src, in_dims)]);
    }
    out
}

/// Broadcast copy (ONNX Expand, with the output shape already resolved): `in_dims`
/// align to the right of `out_dims` (missing leading axes have size 1) and each input
/// axis is either equal to the output's or 1 (then it is repeated).
///
/// # Panics
/// If the shapes do not broadcast that way or `x`'s length is wrong.
pub fn expand<T: Element>(x: &[T], in_dims: &[usize], out_dims: &[usize]) -> Vec<T> {
    let what = "expand";
    assert!(
        in_dims.len() <= out_dims.len(),
        "gpukit-reference::{what}: rank"
    );
    assert_len(what, "x", x.len(), numel(in_dims, what));
    let lead = out_dims.len() - in_dims.len();
    let n = numel(out_dims, what);
    let mut out = Vec::with_capacity(n);
    let mut src = vec![0usize; in_dims.len()];
    for linear in 0..n {
        let c = coords(linear, out_dims);
        for d in 0..in_dims.len() {
            let od = out_dims[lead + d];
            assert!(
                in_dims[d] == od || in_dims[d] == 1,
                "gpukit-reference::{what}: {in_dims:?} does not expand to {out_dims:?}"
            );
            src[d] = if in_dims[d] == 1 { 0 } else { c[lead + d] };
        }
        out.push(x[linear_of(&src, in_dims)]);
    }
    out
}

/// Expand of the last axis: `x` is `[rows, 1]`, the output `[rows, n]` with
/// `out[r, j] = x[r]`.
///
/// # Panics
/// If `x.len() != rows`.
pub fn expand_last<T: Element>(x: &[T], rows: usize, n: usize) -> Vec<T> {
    assert_len("expand_last", "x", x.len(), rows);
    let mut out = Vec::with_capacity(rows * n);
    for &v in x {
        for _ in 0..n {
            out.push(v);
        }
    }
    out
}

/// One bilinear tap along one axis: `(i0, i1, w0, w1)` for output index `dst` of
/// `out` from an axis of `inp >= 1` elements, as an exact integer fraction `num/den`:
/// align_corners `num = dst·(inp−1)`, `den = max(out−1, 1)`; half_pixel
/// `num = max((2·dst+1)·inp − out, 0)`, `den = 2·out`; `q = num div den`. When
/// `q >= inp−1` the coordinate clamps to the last index: `(inp−1, inp−1, 1, 0)`.
/// Otherwise `i0 = q`, `i1 = q+1`, `w1 = R(num mod den) / R(den)` (integer → R rounds
/// to nearest even), `w0 = 1 − w1`.
fn tap<R: Real>(dst: usize, inp: usize, out: usize, align_corners: bool) -> (usize, usize, R, R) {
    let (dst, inp, out) = (dst as i64, inp as i64, out as i64);
    let (num, den) = if align_corners {
        (dst * (inp - 1), (out - 1).max(1))
    } else {
        (((2 * dst + 1) * inp - out).max(0), 2 * out)
    };
    let q = num / den;
    if q >= inp - 1 {
        // At or past the last source index: the coordinate clamps to inp - 1.
        let last = (inp - 1) as usize;
        return (last, last, R::ONE, R::ZERO);
    }
    let rem = num - q * den;
    let w1 = int_to_real::<R>(rem) / int_to_real::<R>(den);
    (q as usize, q as usize + 1, R::ONE - w1, w1)
}

/// An integer converted to the compute type, rounding to nearest even.
fn int_to_real<R: Real>(v: i64) -> R {
    // The ops keep every numerator and denominator below 2^53, so the f64 step is
    // exact and the conversion to R rounds once.
    R::from_f64(v as f64)
}

/// The two-tap interpolation of the contract: `w0·a + w1·b` where a tap whose weight is
/// exactly zero is not read: `w1 == 0` gives `w0·a`, `w0 == 0` gives `w1·b`, otherwise
/// `fma(w1, b, w0·a)` (one rounded product, then one fma), in the compute type.
fn lerp<R: Real>(a: R, b: R, w0: R, w1: R) -> R {
    if w1 == R::ZERO {
        w0 * a
    } else if w0 == R::ZERO {
        w1 * b
    } else {
        w1.fma(b, w0 * a)
    }
}

/// Bilinear resize (ONNX Resize `linear`, PyTorch `interpolate(mode="bilinear")`):
/// `x` is `planes` planes of `[in_h, in_w]` (NCHW with N·C folded), the output
/// `planes` planes of `[out_h, out_w]`. Taps and weights per axis are `tap`'s exact
/// fractions; the value, in the compute type: `t = lerp(x[y0,x0], x[y0,x1], wx0, wx1)`,
/// `b = lerp(x[y1,x0], x[y1,x1], wx0, wx1)`, `v = lerp(t, b, wy0, wy1)` (`lerp`), stored
/// once. A row whose vertical weight is zero is still interpolated but not used.
///
/// # Panics
/// If `x`'s length is wrong, or the input is empty while the output is not.
pub fn resize_bilinear<T: FloatElement>(
    x: &[T],
    planes: usize,
    (in_h, in_w): (usize, usize),
    (out_h, out_w): (usize, usize),
    align_corners: bool,
) -> Vec<T> {
    let what = "resize_bilinear";
    assert_len(what, "x", x.len(), numel(&[planes, in_h, in_w], what));
    let n = numel(&[planes, out_h, out_w], what);
    assert!(
        n == 0 || (in_h > 0 && in_w > 0),
        "gpukit-reference::{what}: empty input"
    );
    let mut out = Vec::with_capacity(n);
    for p in 0..planes {
        for oy in 0..out_h {
            let (y0, y1, wy0, wy1) = tap::<T::Real>(oy, in_h, out_h, align_corners);
            for ox in 0..out_w {
                let (x0, x1, wx0, wx1) = tap::<T::Real>(ox, in_w, out_w, align_corners);
                let at = |y: usize, xx: usize| x[(p * in_h + y) * in_w + xx].load();
                let t = lerp(at(y0, x0), at(y0, x1), wx0, wx1);
                let b = lerp(at(y1, x0), at(y1, x1), wx0, wx1);
                let v = lerp(t, b, wy0, wy1);
                out.push(T::store(v));
            }
        }
    }
    out
}

/// Nearest resize (ONNX Resize `nearest` with `asymmetric` coordinates and `floor`,
/// computed exactly in integers): `out[p, oy, ox] = x[p, ⌊oy·in_h/out_h⌋,
/// ⌊ox·in_w/out_w⌋]`. Integer upsampling by `f` (`out = in·f`) reads `dst / f`.
///
/// # Panics
/// If `x`'s length is wrong, or the input is empty while the output is not.
pub fn resize_nearest<T: Element>(
    x: &[T],
    planes: usize,
    (in_h, in_w): (usize, usize),
    (out_h, out_w): (usize, usize),
) -> Vec<T> {
    let what = "resize_nearest";
    assert_len(what, "x", x.len(), numel(&[planes, in_h, in_w], what));
    let n = numel(&[planes, out_h, out_w], what);
    assert!(
        n == 0 || (in_h > 0 && in_w > 0),
        "gpukit-reference::{what}: empty input"
    );
    let mut out = Vec::with_capacity(n);
    for p in 0..planes {
        for oy in 0..out_h {
            let sy = oy * in_h / out_h;
            for ox in 0..out_w {
                let sx = ox * in_w / out_w;
                out.push(x[(p * in_h + sy) * in_w + sx]);
            }
        }
    }
    out
}

/// EOS gather (CLIP pooling): `ids` `[batch, seq]`, `x` `[batch, seq, d]`, the output
/// `[batch, d]` with row `b` = `x[b, s, :]`, `s` the position of the largest id of row
/// `b` (the first one on ties).
///
/// # Panics
/// If `seq == 0` or a length does not match its shape.
pub fn eos_gather<T: Element>(x: &[T], ids: &[i64], batch: usize, seq: usize, d: usize) -> Vec<T> {
    let what = "eos_gather";
    assert!(seq > 0, "gpukit-reference::{what}: seq = 0");
    assert_len(what, "ids", ids.len(), numel(&[batch, seq], what));
    assert_len(what, "x", x.len(), numel(&[batch, seq, d], what));
    let mut out = Vec::with_capacity(batch * d);
    for b in 0..batch {
        let mut best = 0;
        for s in 1..seq {
            if ids[b * seq + s] > ids[b * seq + best] {
                best = s;
            }
        }
        out.extend_from_slice(&x[(b * seq + best) * d..(b * seq + best + 1) * d]);
    }
    out
}
