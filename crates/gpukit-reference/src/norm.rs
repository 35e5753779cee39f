//! The reference oracle of the neural-network family: the `norm` group.
//!
//! Normalisation (batch norm for inference, layer norm), activations (leaky ReLU, clip,
//! erf, GELU in its erf and tanh forms), softmax along any axis, argmax and the L2 norm
//! along the last axis. Each function follows the order of operations written in
//! docs/ops/norm.md literally; scalar rules come from [`gpukit_core::numeric`], long
//! sums from [`gpukit_core::reduce::fold`].

use gpukit_core::numeric::{FloatElement, Real, max_nan, min_nan};
use gpukit_core::reduce::fold;
use gpukit_core::{DType, Element};

use crate::{assert_len, numel};

/// Inference batch normalisation (ONNX BatchNormalization, `training_mode = 0`).
///
/// `x` is `[n, c, s]` (`s` the product of the spatial dims, 1 for none); `scale`, `bias`,
/// `mean`, `var` are `[c]`. With `eps` converted to the compute type `R` once
/// (`R::from_f64`), every element of channel `k` is
///
/// ```text
/// y = store(fma((load(x) - load(mean[k])) / sqrt(load(var[k]) + eps),
///               load(scale[k]), load(bias[k])))
/// ```
///
/// i.e. ONNX's `(X - mean) / sqrt(var + eps) * scale + B` with the last multiply and add
/// fused (one rounding). NaN and infinities propagate as IEEE arithmetic makes them
/// (a negative `var + eps` gives NaN from `sqrt`; a zero one gives ±inf or NaN).
///
/// # Panics
/// If a slice length does not match the shape, or a size overflows.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm<T: FloatElement>(
    x: &[T],
    scale: &[T],
    bias: &[T],
    mean: &[T],
    var: &[T],
    n: usize,
    c: usize,
    s: usize,
    eps: f64,
) -> Vec<T> {
    assert_len("batch_norm", "x", x.len(), numel(&[n, c, s], "batch_norm"));
    for (name, p) in [
        ("scale", scale),
        ("bias", bias),
        ("mean", mean),
        ("var", var),
    ] {
        assert_len("batch_norm", name, p.len(), c);
    }
    let eps = <T::Real as Real>::from_f64(eps);
    let mut out = Vec::with_capacity(x.len());
    for b in 0..n {
        for k in 0..c {
            let den = (var[k].load() + eps).sqrt();
            for p in 0..s {
                let v = x[(b * c + k) * s + p].load();
                let t = (v - mean[k].load()) / den;
                out.push(T::store(t.fma(scale[k].load(), bias[k].load())));
            }
        }
    }
    out
}

/// Layer normalisation over the last axis (ONNX LayerNormalization with
/// `axis = -1`, or any axis after flattening the normalised dims into `n`).
///
/// `x` is `[rows, n]`, `scale` and `bias` are `[n]`. Per row, in the compute type `R`
/// with `x_j = load(x[row][j])` and `eps` converted once:
///
/// 1. `mean = fold(acc + x_j) / R(n)`: the reduction shape's sum, then one division by
///    `n` converted to `R` (round to nearest even);
/// 2. `var = fold(fma(d_j, d_j, acc)) / R(n)` with `d_j = x_j - mean` (population
///    variance, as ONNX);
/// 3. `den = sqrt(var + eps)`;
/// 4. `y_j = store(fma((x_j - mean) / den, load(scale[j]), load(bias[j])))`.
///
/// A NaN or infinity in a row makes the row's mean or variance NaN/inf and so every
/// output of the row NaN (±inf: `inf - inf`). `n = 0` gives an empty output.
///
/// # Panics
/// If a slice length does not match the shape, or a size overflows.
pub fn layer_norm<T: FloatElement>(
    x: &[T],
    scale: &[T],
    bias: &[T],
    rows: usize,
    n: usize,
    eps: f64,
) -> Vec<T> {
    assert_len("layer_norm", "x", x.len(), numel(&[rows, n], "layer_norm"));
    assert_len("layer_norm", "scale", scale.len(), n);
    assert_len("layer_norm", "bias", bias.len(), n);
    let eps = <T::Real as Real>::from_f64(eps);
    let count = <T::Real as Real>::from_f64(n as f64);
    let zero = <T::Real as Real>::ZERO;
    let mut out = Vec::with_capacity(x.len());
    for r in 0..rows {
        let row = &x[r * n..(r + 1) * n];
        let mean = fold(n, zero, |acc, j| acc + row[j].load(), |a, b| a + b) / count;
        let var = fold(
            n,
            zero,
            |acc, j| {
                let d = row[j].load() - mean;
                d.fma(d, acc)
            },
            |a, b| a + b,
        ) / count;
        let den = (var + eps).sqrt();
        for j in 0..n {
            let t = (row[j].load() - mean) / den;
            out.push(T::store(t.fma(scale[j].load(), bias[j].load())));
        }
    }
    out
}

/// Leaky ReLU (ONNX LeakyRelu): `x` if `x > 0` or `x` is NaN, else `alpha * x` (one
/// IEEE product in the compute type, `alpha` converted to it once). So `-0.0` gives
/// `-0.0 * alpha` (`-0.0` for a positive `alpha`), `-inf` gives `-inf * alpha`.
pub fn leaky_relu<T: FloatElement>(x: &[T], alpha: f64) -> Vec<T> {
    let alpha = <T::Real as Real>::from_f64(alpha);
    x.iter()
        .map(|&v| {
            let r = v.load();
            T::store(if r.is_nan() || r > Real::ZERO {
                r
            } else {
                alpha * r
            })
        })
        .collect()
}

/// Clip (ONNX Clip): `min_nan(max_nan(x, lo), hi)` in the compute type (`lo`, `hi`
/// converted once). NaN passes through (ONNX); the sign-of-zero rules are
/// [`max_nan`]/[`min_nan`]'s, so `clip(-0.0, 0.0, hi) = +0.0` and
/// `clip(+0.0, lo, -0.0) = -0.0`; `lo > hi` gives `hi` for every non-NaN element
/// (ONNX's rule). The op checks that neither bound is NaN.
pub fn clip<T: FloatElement>(x: &[T], lo: f64, hi: f64) -> Vec<T> {
    let lo = <T::Real as Real>::from_f64(lo);
    let hi = <T::Real as Real>::from_f64(hi);
    x.iter()
        .map(|&v| T::store(min_nan(max_nan(v.load(), lo), hi)))
        .collect()
}

/// erf (ONNX Erf): gpukit's portable `erf` (rule 3) in the compute type.
pub fn erf<T: FloatElement>(x: &[T]) -> Vec<T> {
    x.iter().map(|&v| T::store(v.load().erf())).collect()
}

/// GELU in its exact (erf) form (ONNX Gelu, `approximate = "none"`):
/// `y = x * fma(0.5, erf(x * R(1/√2)), 0.5)`, i.e. `x · (0.5 + 0.5·erf(x/√2))`, with
/// `1/√2` rounded to the compute type. `x = -inf` gives `-0.0` (the limit, and what
/// every finite `x` below the saturation point gives) instead of `-inf · 0 = NaN`.
pub fn gelu<T: FloatElement>(x: &[T]) -> Vec<T> {
    x.iter().map(|&v| T::store(gelu_scalar(v.load()))).collect()
}

/// One GELU (erf form) value in the compute type (see [`gelu`]).
pub fn gelu_scalar<R: Real>(x: R) -> R {
    if x == R::NEG_INFINITY {
        return -R::ZERO;
    }
    let half = R::from_f64(0.5);
    let e = (x * R::from_f64(std::f64::consts::FRAC_1_SQRT_2)).erf();
    x * half.fma(e, half)
}

/// GELU, tanh approximation (ONNX Gelu, `approximate = "tanh"`):
/// `u = R(√(2/π)) * fma(R(0.044715), (x * x) * x, x)`, `y = x * fma(0.5, tanh(u), 0.5)`,
/// i.e. `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`. `x = -inf` gives `-0.0`.
pub fn gelu_tanh<T: FloatElement>(x: &[T]) -> Vec<T> {
    x.iter()
        .map(|&v| T::store(gelu_tanh_scalar(v.load())))
        .collect()
}

/// One GELU (tanh approximation) value in the compute type (see [`gelu_tanh`]).
pub fn gelu_tanh_scalar<R: Real>(x: R) -> R {
    if x == R::NEG_INFINITY {
        return -R::ZERO;
    }
    let half = R::from_f64(0.5);
    let c = R::from_f64((2.0 / std::f64::consts::PI).sqrt());
    let k = R::from_f64(0.044715);
    let u = c * k.fma((x * x) * x, x);
    x * half.fma(u.tanh(), half)
}

/// Softmax along the middle axis of `x` viewed as `[outer, axis, inner]` (ONNX Softmax
/// at any axis, for a single axis).
///
/// For every line `(o, i)`, with `x_j = load(x[o, j, i])`, exactly as
/// [`crate::softmax_rows`] does for a row: `m = max_nan(x_0, …, x_{axis-1})`,
/// `e_j = exp(x_j - m)`, `s` = the reduction shape's sum of the `e_j` in ascending `j`,
/// `out_j = store(e_j / s)`. With `inner = 1` this is `softmax_rows(x, outer, axis)`,
/// bit for bit. An all `-inf` line, or one holding a NaN or `+inf`, gives NaN
/// everywhere; `axis = 0` (or any zero size) gives an empty output.
///
/// # Panics
/// If `x.len() != outer * axis * inner`, or a size overflows.
pub fn softmax_axis<T: FloatElement>(x: &[T], outer: usize, axis: usize, inner: usize) -> Vec<T> {
    assert_len(
        "softmax_axis",
        "x",
        x.len(),
        numel(&[outer, axis, inner], "softmax_axis"),
    );
    let mut out = vec![T::store(<T::Real as Real>::ZERO); x.len()];
    if axis == 0 {
        return out;
    }
    let at = |o: usize, j: usize, i: usize| (o * axis + j) * inner + i;
    for o in 0..outer {
        for i in 0..inner {
            let mut m = x[at(o, 0, i)].load();
            for j in 1..axis {
                m = max_nan(m, x[at(o, j, i)].load());
            }
            let e: Vec<T::Real> = (0..axis)
                .map(|j| (x[at(o, j, i)].load() - m).exp())
                .collect();
            let s = fold(
                axis,
                <T::Real as Real>::ZERO,
                |acc, j| acc + e[j],
                |p, q| p + q,
            );
            for j in 0..axis {
                out[at(o, j, i)] = T::store(e[j] / s);
            }
        }
    }
    out
}

/// Argmax along the last axis of `x` viewed as `[rows, n]` (ONNX ArgMax with
/// `select_last_index = 0`): per row, the first index of the largest value.
///
/// Floats compare their loaded values: `-0.0` and `+0.0` are equal (the first wins),
/// and a NaN counts as larger than everything, so the first NaN of a row wins (as
/// numpy's `argmax`). Integers compare as integers. The op rejects `n = 0`.
///
/// # Panics
/// If `x.len() != rows * n`, if `n = 0` while `rows > 0`, or a size overflows.
pub fn argmax<T: Element>(x: &[T], rows: usize, n: usize) -> Vec<i64> {
    assert_len("argmax", "x", x.len(), numel(&[rows, n], "argmax"));
    assert!(rows == 0 || n > 0, "gpukit-reference::argmax: empty rows");
    let mut out = Vec::with_capacity(rows);
    for r in 0..rows {
        let row = &x[r * n..(r + 1) * n];
        let mut best = 0usize;
        for j in 1..n {
            if is_nan(row[best]) {
                break;
            }
            if is_nan(row[j]) || greater(row[j], row[best]) {
                best = j;
            }
        }
        out.push(best as i64);
    }
    out
}

/// Whether `v` is a float NaN.
fn is_nan<T: Element>(v: T) -> bool {
    T::DTYPE.is_float() && v.to_f64().is_nan()
}

/// `a > b` for non-NaN values: floats by their exact value (`to_f64` is exact for every
/// float dtype), integers exactly.
fn greater<T: Element>(a: T, b: T) -> bool {
    match T::DTYPE {
        DType::I64 | DType::I32 => {
            let (a, b) = (int_of(a), int_of(b));
            a > b
        }
        _ => a.to_f64() > b.to_f64(),
    }
}

/// An integer element as i64, exactly.
fn int_of<T: Element>(v: T) -> i64 {
    use gpukit_core::bytemuck::try_cast;
    match try_cast::<T, i64>(v) {
        Ok(i) => i,
        Err(_) => try_cast::<T, i32>(v).map_or(0, i64::from),
    }
}

/// L2 norm along the last axis of `x` viewed as `[rows, n]` (ONNX ReduceL2 over the
/// last axis): per row `store(sqrt(fold(fma(x_j, x_j, acc))))`, the reduction shape with
/// lanes from `+0.0` and combine `+`, in the compute type, one store. `n = 0` gives
/// `+0.0`; a NaN gives NaN; an infinity (and no NaN) gives `+inf`.
///
/// # Panics
/// If `x.len() != rows * n`, or a size overflows.
pub fn reduce_l2<T: FloatElement>(x: &[T], rows: usize, n: usize) -> Vec<T> {
    assert_len("reduce_l2", "x", x.len(), numel(&[rows, n], "reduce_l2"));
    (0..rows)
        .map(|r| {
            let row = &x[r * n..(r + 1) * n];
            let ss = fold(
                n,
                <T::Real as Real>::ZERO,
                |acc, j| {
                    let v = row[j].load();
                    v.fma(v, acc)
                },
                |a, b| a + b,
            );
            T::store(ss.sqrt())
        })
        .collect()
}
