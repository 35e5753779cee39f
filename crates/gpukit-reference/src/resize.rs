//! The general N-D resize (ONNX Resize without roi / antialias), written from ONNX's
//! definition: the taps of every output index are found here, not taken from
//! [`gpukit_core::resize::plan_resize`] (the ops' table builder), so the tables are
//! checked as well as the kernels.
//!
//! Per axis the source coordinate follows onnx's reference evaluator in f64; the `n`
//! taps (2, or 4 for cubic) are the `n` indices nearest the coordinate in the
//! edge-padded axis (ties to the smaller), clamped to the axis; the coefficients are
//! rounded once to the compute type and zero weights are not read. The value is
//! evaluated with the last axis innermost: on each axis `acc = w0·v0`, then
//! `acc = fma(w_t, v_t, acc)` over the remaining taps in order; stored once. Nearest
//! copies the one tap of coefficient 1.

use gpukit_core::Element;
use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::resize::{CoordMode, NearestMode, ResizeMode, ResizeSpec, ResizeTarget};

use crate::{assert_len, numel};

/// The output extents and per-axis scales of `target` for an input `in_dims`.
///
/// # Panics
/// If the target's length is not the rank.
pub fn resize_out_dims(in_dims: &[usize], target: ResizeTarget<'_>) -> (Vec<usize>, Vec<f64>) {
    let mut dims = Vec::new();
    let mut scales = Vec::new();
    for (a, &i) in in_dims.iter().enumerate() {
        match target {
            ResizeTarget::Sizes(v) => {
                dims.push(v[a]);
                scales.push(v[a] as f64 / i as f64);
            }
            ResizeTarget::Scales(v) => {
                dims.push((i as f64 * v[a]).floor() as usize);
                scales.push(v[a]);
            }
        }
    }
    (dims, scales)
}

/// The f64 coefficients and taps of output `y` of one axis: `(index, coefficient)`.
fn taps_of(spec: &ResizeSpec, y: usize, s: f64, inp: usize, out: usize) -> Vec<(usize, f64)> {
    let yf = y as f64;
    let w = s * inp as f64;
    let x = match spec.coord {
        CoordMode::AlignCorners if w == 1.0 => 0.0,
        CoordMode::AlignCorners => yf * (inp as f64 - 1.0) / (w - 1.0),
        CoordMode::Asymmetric => yf / s,
        CoordMode::PytorchHalfPixel if w == 1.0 => -0.5,
        CoordMode::PytorchHalfPixel | CoordMode::HalfPixel => (yf + 0.5) / s - 0.5,
        CoordMode::TfHalfPixelForNn => (yf + 0.5) / s,
        CoordMode::HalfPixelSymmetric => {
            let offset = (inp as f64 / 2.0) * (1.0 - out as f64 / w);
            offset + (yf + 0.5) / s - 0.5
        }
    };
    let ratio = if x.fract() == 0.0 { 1.0 } else { x - x.floor() };
    let mut coeffs: Vec<f64> = match spec.mode {
        ResizeMode::Nearest => {
            let up = if ratio == 1.0 {
                true
            } else {
                match spec.nearest {
                    NearestMode::RoundPreferFloor => ratio > 0.5,
                    NearestMode::RoundPreferCeil => ratio >= 0.5,
                    NearestMode::Floor => false,
                    NearestMode::Ceil => true,
                }
            };
            vec![f64::from(u8::from(!up)), f64::from(u8::from(up))]
        }
        ResizeMode::Linear => vec![1.0 - ratio, ratio],
        ResizeMode::Cubic => {
            let a = spec.cubic_a;
            // Keys' kernel at distances 1 + r, r, 1 - r, 2 - r.
            let far = |d: f64| ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
            let near = |d: f64| ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
            vec![
                far(ratio + 1.0),
                near(ratio),
                near(1.0 - ratio),
                far((1.0 - ratio) + 1.0),
            ]
        }
    };
    let n = coeffs.len();
    // The n indices of the padded axis nearest x + pad, ties to the smaller.
    let pad = n.div_ceil(2) as i64;
    let xp = x + pad as f64;
    let centre = xp.floor() as i64;
    let mut cand: Vec<i64> = (centre - n as i64 - 1..=centre + n as i64 + 1).collect();
    cand.sort_by(|&p, &q| {
        let (dp, dq) = ((xp - p as f64).abs(), (xp - q as f64).abs());
        dp.partial_cmp(&dq).unwrap().then(p.cmp(&q))
    });
    let mut idx: Vec<i64> = cand[..n].iter().map(|&p| p - pad).collect();
    idx.sort();
    if spec.exclude_outside && spec.mode != ResizeMode::Nearest {
        for (c, &i) in coeffs.iter_mut().zip(&idx) {
            if i < 0 || i >= inp as i64 {
                *c = 0.0;
            }
        }
        let total: f64 = coeffs.iter().sum();
        let total = if total == 0.0 { 1.0 } else { total };
        coeffs.iter_mut().for_each(|c| *c /= total);
    }
    idx.iter()
        .zip(&coeffs)
        .map(|(&i, &c)| (i.clamp(0, inp as i64 - 1) as usize, c))
        .collect()
}

/// Per axis, per output index: `(input index, weight)` taps.
type Tables<R> = Vec<Vec<Vec<(usize, R)>>>;

/// Every axis' taps: for each output index, `(input index, weight in R)` with zero
/// weights dropped (one tap of weight 1 for nearest and for identity axes).
fn tables<R: Real>(
    spec: &ResizeSpec,
    in_dims: &[usize],
    out_dims: &[usize],
    scales: &[f64],
) -> Tables<R> {
    let mut all = Vec::new();
    for a in 0..in_dims.len() {
        let (i, o, s) = (in_dims[a], out_dims[a], scales[a]);
        let identity = i == o && (s - 1.0).abs() <= 1e-9 * s.abs().max(1.0);
        let rows = (0..o)
            .map(|y| {
                if identity {
                    return vec![(y, R::ONE)];
                }
                let t = taps_of(spec, y, s, i, o);
                if spec.mode == ResizeMode::Nearest {
                    let (j, _) = t.iter().find(|v| v.1 == 1.0).copied().unwrap();
                    return vec![(j, R::ONE)];
                }
                let kept: Vec<(usize, R)> = t
                    .iter()
                    .map(|&(j, c)| (j, R::from_f64(c)))
                    .filter(|&(_, w)| w != R::ZERO)
                    .collect();
                if kept.is_empty() {
                    vec![(t[0].0, R::ZERO)]
                } else {
                    kept
                }
            })
            .collect();
        all.push(rows);
    }
    all
}

fn target_checked(in_dims: &[usize], target: ResizeTarget<'_>) -> (Vec<usize>, Vec<f64>) {
    let n = match target {
        ResizeTarget::Sizes(v) => v.len(),
        ResizeTarget::Scales(v) => v.len(),
    };
    assert_eq!(
        n,
        in_dims.len(),
        "gpukit-reference::resize: one size or scale per axis"
    );
    resize_out_dims(in_dims, target)
}

/// Nearest resize of `x` (shape `in_dims`) to `target` with `spec` (`spec.mode` must
/// be nearest): every output a copy of one input element. Returns the output
/// (row-major over the output extents).
///
/// # Panics
/// If the mode is not nearest, `x`'s length is wrong, the target's length is not the
/// rank, or an empty input axis has a non-empty output.
pub fn resize_nearest_nd<T: Element>(
    x: &[T],
    in_dims: &[usize],
    target: ResizeTarget<'_>,
    spec: &ResizeSpec,
) -> Vec<T> {
    assert_eq!(
        spec.mode,
        ResizeMode::Nearest,
        "gpukit-reference::resize_nearest_nd"
    );
    assert_len("resize", "x", x.len(), numel(in_dims, "resize"));
    let (out_dims, scales) = target_checked(in_dims, target);
    let n = numel(&out_dims, "resize");
    if n == 0 {
        return Vec::new();
    }
    let t = tables::<f64>(spec, in_dims, &out_dims, &scales);
    let mut out = Vec::with_capacity(n);
    for o in 0..n {
        let (mut rem, mut off, mut stride) = (o, 0, 1);
        for a in (0..in_dims.len()).rev() {
            let j = rem % out_dims[a];
            rem /= out_dims[a];
            off += t[a][j][0].0 * stride;
            stride *= in_dims[a];
        }
        out.push(x[off]);
    }
    out
}

/// Resize of a float `x` (shape `in_dims`) to `target` with any mode of `spec`
/// (nearest copies; linear and cubic evaluate as the module docs say). Returns the
/// output (row-major over the output extents).
///
/// # Panics
/// As [`resize_nearest_nd`] (without the mode condition).
pub fn resize_nd<T: FloatElement>(
    x: &[T],
    in_dims: &[usize],
    target: ResizeTarget<'_>,
    spec: &ResizeSpec,
) -> Vec<T> {
    if spec.mode == ResizeMode::Nearest {
        return resize_nearest_nd(x, in_dims, target, spec);
    }
    assert_len("resize", "x", x.len(), numel(in_dims, "resize"));
    let (out_dims, scales) = target_checked(in_dims, target);
    let n = numel(&out_dims, "resize");
    if n == 0 {
        return Vec::new();
    }
    let t = tables::<T::Real>(spec, in_dims, &out_dims, &scales);
    let r = in_dims.len();
    let mut strides = vec![1usize; r];
    for a in (0..r.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * in_dims[a + 1];
    }
    let mut out = Vec::with_capacity(n);
    let mut digits = vec![0usize; r];
    for o in 0..n {
        let mut rem = o;
        for a in (0..r).rev() {
            digits[a] = rem % out_dims[a];
            rem /= out_dims[a];
        }
        out.push(T::store(eval(x, &t, &digits, &strides, 0, 0)));
    }
    out
}

/// The value of axis `a` onwards at input offset `base`.
fn eval<T: FloatElement>(
    x: &[T],
    t: &Tables<T::Real>,
    digits: &[usize],
    strides: &[usize],
    a: usize,
    base: usize,
) -> T::Real {
    if a == t.len() {
        return x[base].load();
    }
    let mut acc = T::Real::ZERO;
    for (i, &(j, w)) in t[a][digits[a]].iter().enumerate() {
        let v = eval(x, t, digits, strides, a + 1, base + j * strides[a]);
        acc = if i == 0 { w * v } else { w.fma(v, acc) };
    }
    acc
}
