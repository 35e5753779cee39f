//! The reference oracle of the normalisations added to the `norm` group: layer norm with
//! an optional bias and the mean / inverse-standard-deviation outputs, group norm and
//! RMS norm. Each follows docs/ops/norm.md literally; long sums use
//! [`gpukit_core::reduce::fold`], as [`crate::layer_norm`] does.

use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::reduce::fold;

use crate::{assert_len, numel};

/// What [`layer_norm_ex`] returns: the normalised `y` (`x`'s dtype) and, per row, the
/// mean and the inverse standard deviation in the compute type `R` (`T::Real`).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNormOut<T: FloatElement> {
    /// The normalised values, `[rows, n]`.
    pub y: Vec<T>,
    /// `mean` of every row, in `R` (not rounded to `T`).
    pub mean: Vec<T::Real>,
    /// `R(1) / sqrt(var + eps)` of every row, in `R`.
    pub inv_std: Vec<T::Real>,
}

/// Mean and `den = sqrt(var + eps)` of one row, layer_norm's order: `mean = fold(acc +
/// x_j) / R(n)`, `var = fold(fma(d_j, d_j, acc)) / R(n)` with `d_j = x_j - mean`.
fn mean_den<R: Real>(row: &[R], eps: R) -> (R, R) {
    let n = row.len();
    let count = R::from_f64(n as f64);
    let mean = fold(n, R::ZERO, |acc, j| acc + row[j], |a, b| a + b) / count;
    let var = fold(
        n,
        R::ZERO,
        |acc, j| {
            let d = row[j] - mean;
            d.fma(d, acc)
        },
        |a, b| a + b,
    ) / count;
    (mean, (var + eps).sqrt())
}

/// Layer normalisation (ONNX LayerNormalization) of `x` viewed as `[rows, n]`, `scale`
/// `[n]`, optional `bias` `[n]`:
///
/// ```text
/// y_j = store(fma((x_j - mean) / den, scale_j, b_j))   b_j = bias_j, or -0.0 without one
/// mean_out = mean, inv_std_out = R(1) / den             (in R)
/// ```
///
/// with `mean`, `den` as [`crate::layer_norm`] (with a bias, `y` is that function's
/// bits). Without a bias `b_j = -0.0` makes `y_j` the single product
/// `(x_j - mean) / den · scale_j` (a `-0.0` product stays `-0.0`). `n = 0` gives an
/// empty `y` and NaN statistics.
///
/// # Panics
/// If a slice length does not match the shape, or a size overflows.
pub fn layer_norm_ex<T: FloatElement>(
    x: &[T],
    scale: &[T],
    bias: Option<&[T]>,
    rows: usize,
    n: usize,
    eps: f64,
) -> LayerNormOut<T> {
    let op = "layer_norm_ex";
    assert_len(op, "x", x.len(), numel(&[rows, n], op));
    assert_len(op, "scale", scale.len(), n);
    if let Some(b) = bias {
        assert_len(op, "bias", b.len(), n);
    }
    let eps = <T::Real as Real>::from_f64(eps);
    let neg_zero = -<T::Real as Real>::ZERO;
    let mut o = LayerNormOut {
        y: Vec::with_capacity(x.len()),
        mean: Vec::with_capacity(rows),
        inv_std: Vec::with_capacity(rows),
    };
    for r in 0..rows {
        let row: Vec<T::Real> = x[r * n..(r + 1) * n].iter().map(|v| v.load()).collect();
        let (mean, den) = mean_den(&row, eps);
        for (j, &v) in row.iter().enumerate() {
            let b = bias.map_or(neg_zero, |b| b[j].load());
            o.y.push(T::store(((v - mean) / den).fma(scale[j].load(), b)));
        }
        o.mean.push(mean);
        o.inv_std.push(<T::Real as Real>::ONE / den);
    }
    o
}

/// Group normalisation (ONNX GroupNormalization, opset 21) of `x` `[batch, c, s]` (`s`
/// the product of the spatial dims) in `groups` groups of `c / groups` consecutive
/// channels; `scale`, `bias` `[c]`. Each `(b, g)` is one row of `(c / groups) · s`
/// contiguous elements with layer norm's `mean` and `den`; an element of channel `k`
/// gives `store(fma((x - mean) / den, scale[k], bias[k]))`.
///
/// # Panics
/// If `groups` is 0 or does not divide `c`, a slice length does not match the shape, or
/// a size overflows.
#[allow(clippy::too_many_arguments)]
pub fn group_norm<T: FloatElement>(
    x: &[T],
    scale: &[T],
    bias: &[T],
    batch: usize,
    c: usize,
    s: usize,
    groups: usize,
    eps: f64,
) -> Vec<T> {
    let op = "group_norm";
    assert!(
        groups > 0 && c.is_multiple_of(groups),
        "{op}: groups {groups} must divide c {c}"
    );
    assert_len(op, "x", x.len(), numel(&[batch, c, s], op));
    assert_len(op, "scale", scale.len(), c);
    assert_len(op, "bias", bias.len(), c);
    let eps = <T::Real as Real>::from_f64(eps);
    let cg = c / groups;
    let m = cg * s;
    let mut out = Vec::with_capacity(x.len());
    for r in 0..batch * groups {
        let row: Vec<T::Real> = x[r * m..(r + 1) * m].iter().map(|v| v.load()).collect();
        let (mean, den) = mean_den(&row, eps);
        for (j, &v) in row.iter().enumerate() {
            let k = (r % groups) * cg + j / s;
            out.push(T::store(
                ((v - mean) / den).fma(scale[k].load(), bias[k].load()),
            ));
        }
    }
    out
}

/// RMS normalisation (ONNX RMSNormalization, opset 23; LLaMA's RMSNorm) of `x` viewed as
/// `[rows, n]`, `scale` `[n]`:
///
/// ```text
/// ms  = fold(fma(x_j, x_j, acc)) / R(n)
/// den = sqrt(ms + eps)
/// y_j = store((x_j / den) * scale_j)
/// ```
///
/// # Panics
/// If a slice length does not match the shape, or a size overflows.
pub fn rms_norm<T: FloatElement>(x: &[T], scale: &[T], rows: usize, n: usize, eps: f64) -> Vec<T> {
    let op = "rms_norm";
    assert_len(op, "x", x.len(), numel(&[rows, n], op));
    assert_len(op, "scale", scale.len(), n);
    let eps = <T::Real as Real>::from_f64(eps);
    let count = <T::Real as Real>::from_f64(n as f64);
    let mut out = Vec::with_capacity(x.len());
    for r in 0..rows {
        let row = &x[r * n..(r + 1) * n];
        let ms = fold(
            n,
            <T::Real as Real>::ZERO,
            |acc, j| {
                let v = row[j].load();
                v.fma(v, acc)
            },
            |a, b| a + b,
        ) / count;
        let den = (ms + eps).sqrt();
        for j in 0..n {
            out.push(T::store((row[j].load() / den) * scale[j].load()));
        }
    }
    out
}
