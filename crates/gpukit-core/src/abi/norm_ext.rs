//! Kernel signatures of the normalisations added to the `norm` group: layer norm with an
//! optional bias and optional statistics outputs, group norm and RMS norm. Every one is a
//! row normalisation with layer_norm's reduction structure (docs/ops/norm.md holds the
//! contract); `R` is the compute type (f32 for f16/bf16/f32, f64 for f64), `load`/`store`
//! are rule 6's, `eps` is converted to `R` once (`R::from_f64`), `fold` is the reduction
//! shape of [`crate::reduce`] (lanes from +0.0, combine +).

use super::KernelSig;
use crate::DType;
use crate::numeric::FLOAT_DTYPES;

const FLOATS: &[DType] = &FLOAT_DTYPES;

/// The kernels of this block (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // Layer normalisation of x viewed as [rows, n], scale and bias [n], exactly
    // layer_norm's order: mean = fold(acc + x_j) / R(n); var = fold(fma(d_j, d_j, acc))
    // / R(n), d_j = x_j - mean; den = sqrt(var + eps);
    // y_j = store(fma((x_j - mean) / den, scale_j, b_j)) with b_j = load(bias[j]) when
    // has_bias = 1 and b_j = -0.0 when has_bias = 0 (bias is then not read: pass the
    // absent buffer), which is the product (x_j - mean) / den * scale_j exactly.
    // has_stats = 1 also writes mean[r] = mean and inv_std[r] = R(1) / den, unrounded in
    // R (buffers of the compute type); has_stats = 0 reads neither (absent buffers).
    // rows > 0, n = 0 gives mean = inv_std = NaN (0 / 0). `out` may be exactly `x`.
    KernelSig {
        op: "layer_norm_ex",
        dtypes: FLOATS,
        args: "out: buf, x: buf, scale: buf, bias: buf, mean: buf<real>, inv_std: buf<real>, rows, n, has_bias, has_stats, eps: f64",
    },
    // Group normalisation of x [batch, c, s] (s = product of the spatial dims) in
    // `groups` groups of c / groups consecutive channels (groups divides c): each
    // (b, g) is a row of m = (c / groups) * s contiguous elements, normalised as
    // layer_norm_ex (mean, var, den with R(m)); channel k's elements give
    // y = store(fma((x - mean) / den, load(scale[k]), load(bias[k]))); scale, bias [c].
    // `out` may be exactly `x`.
    KernelSig {
        op: "group_norm",
        dtypes: FLOATS,
        args: "out: buf, x: buf, scale: buf, bias: buf, batch, c, s, groups, eps: f64",
    },
    // RMS normalisation of x viewed as [rows, n], scale [n]: per row
    // ms = fold(fma(x_j, x_j, acc)) / R(n); den = sqrt(ms + eps);
    // y_j = store((x_j / den) * load(scale[j])) (two roundings). `out` may be exactly x.
    KernelSig {
        op: "rms_norm",
        dtypes: FLOATS,
        args: "out: buf, x: buf, scale: buf, rows, n, eps: f64",
    },
];
