//! Kernel signatures of the neural-network family: the `norm` group (normalisation,
//! activations, axis softmax, argmax, L2 norm). The order of operations of each kernel
//! is written next to its signature and in docs/ops/norm.md; `R` is the compute type
//! (f32 for f16/bf16/f32, f64 for f64), `load`/`store` are rule 6's, an `f64` scalar is
//! converted to `R` by round to nearest even (`R::from_f64`) before use.

use super::KernelSig;
use crate::DType;
use crate::numeric::FLOAT_DTYPES;

const FLOATS: &[DType] = &FLOAT_DTYPES;
const ALL: &[DType] = &DType::ALL;

/// The `norm` group's kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // Inference batch normalisation of x viewed as [n, c, s] (s = product of the spatial
    // dims); scale, bias, mean, var are [c]. For every element of channel k:
    // y = store(fma((load(x) - load(mean[k])) / sqrt(load(var[k]) + eps),
    //               load(scale[k]), load(bias[k]))).
    // `out` may be exactly `x`; no other overlap.
    KernelSig {
        op: "batch_norm",
        dtypes: FLOATS,
        args: "out: buf, x: buf, scale: buf, bias: buf, mean: buf, var: buf, n, c, s, eps: f64",
    },
    // Layer normalisation over the last axis of x viewed as [rows, n]; scale, bias [n].
    // Per row: mean = fold(acc + x_j) / R(n); var = fold(fma(d_j, d_j, acc)) / R(n) with
    // d_j = x_j - mean (both folds the reduction shape, lanes from +0.0, combine +);
    // den = sqrt(var + eps); y_j = store(fma((x_j - mean) / den, scale_j, bias_j)).
    // `out` may be exactly `x`; no other overlap.
    KernelSig {
        op: "layer_norm",
        dtypes: FLOATS,
        args: "out: buf, x: buf, scale: buf, bias: buf, rows, n, eps: f64",
    },
    // Leaky ReLU, elementwise over `len` elements: r = load(x); r if r > 0 or r is NaN,
    // else alpha * r (one IEEE product: -0.0 gives -0.0 * alpha). `out` may be exactly x.
    KernelSig {
        op: "leaky_relu",
        dtypes: FLOATS,
        args: "out: buf, x: buf, len, alpha: f64",
    },
    // Clip, elementwise: y = store(min_nan(max_nan(load(x), lo), hi)); NaN passes
    // through; lo <= hi (checked by the op). `out` may be exactly x.
    KernelSig {
        op: "clip",
        dtypes: FLOATS,
        args: "out: buf, x: buf, len, lo: f64, hi: f64",
    },
    // erf, elementwise: gpukit's portable erf in R. `out` may be exactly x.
    KernelSig {
        op: "erf",
        dtypes: FLOATS,
        args: "out: buf, x: buf, len",
    },
    // GELU (erf form), elementwise: x = -inf gives -0.0; otherwise
    // y = x * fma(0.5, erf(x * R(FRAC_1_SQRT_2)), 0.5). `out` may be exactly x.
    KernelSig {
        op: "gelu",
        dtypes: FLOATS,
        args: "out: buf, x: buf, len",
    },
    // GELU (tanh approximation), elementwise: x = -inf gives -0.0; otherwise
    // u = R(sqrt(2/pi)) * fma(R(0.044715), (x * x) * x, x); y = x * fma(0.5, tanh(u), 0.5).
    // `out` may be exactly x.
    KernelSig {
        op: "gelu_tanh",
        dtypes: FLOATS,
        args: "out: buf, x: buf, len",
    },
    // Softmax along the middle axis of x viewed as [outer, axis, inner]. For every
    // (o, i) line x_j = load(x[o, j, i]), j < axis: m = max_nan over the line (order-free),
    // e_j = exp(x_j - m), s = the reduction shape's sum of e_j (j ascending),
    // out_j = store(e_j / s). inner = 1 is bit-identical to `softmax` (rows).
    // `out` may be exactly x.
    KernelSig {
        op: "softmax_axis",
        dtypes: FLOATS,
        args: "out: buf, x: buf, outer, axis, inner",
    },
    // Argmax along the last axis of x viewed as [rows, n] (n >= 1, checked by the op):
    // out[r] = the first j with the largest value; floats compare their loaded values,
    // ±0 are equal, and a NaN counts as larger than everything (the first NaN wins, as
    // numpy's argmax). `out` is an i64 buffer of `rows` elements whatever x's dtype.
    KernelSig {
        op: "argmax",
        dtypes: ALL,
        args: "out: buf<i64>, x: buf, rows, n",
    },
    // L2 norm along the last axis of x viewed as [rows, n]: out[r] =
    // store(sqrt(fold(fma(x_j, x_j, acc)))) with the reduction shape (lanes from +0.0,
    // combine +). n = 0 gives +0.0. `out` overlaps nothing.
    KernelSig {
        op: "reduce_l2",
        dtypes: FLOATS,
        args: "out: buf, x: buf, rows, n",
    },
];
