//! Kernel signatures of the neural-network family: the `movement` group.
//!
//! Pure data movement (copy along an axis, strided copy for slice / permute / expand,
//! nearest resize, EOS gather) exists for every dtype and copies bits exactly (NaN
//! payloads and -0.0 preserved). Bilinear resize is the one kernel here that computes:
//! floats only, its order of operations is in docs/ops/movement.md.

use super::{ALL_DTYPES, KernelSig};
use crate::numeric::FLOAT_DTYPES;

const ALL: &[crate::DType] = &ALL_DTYPES;
const FLOATS: &[crate::DType] = &FLOAT_DTYPES;

/// The most axes a strided copy (permute, expand) takes.
pub const MAX_RANK: usize = 8;

/// The `movement` group's kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // Copy into an axis slot (the concat primitive): src viewed as
    // [outer, src_axis, inner], dst as [outer, dst_axis, inner];
    // dst[o, offset + a, i] = src[o, a, i] for a < src_axis. Nothing else of dst is
    // written. offset + src_axis <= dst_axis; dst overlaps nothing.
    KernelSig {
        op: "copy_axis",
        dtypes: ALL,
        args: "dst: buf, src: buf, outer, src_axis, inner, dst_axis, offset",
    },
    // Strided copy (slice, permute, expand): out is contiguous over `dims` (ndim
    // entries, 1 <= ndim <= MAX_RANK); out[coord] = x[offset + sum(coord[d] *
    // strides[d])] with strides in elements, >= 0 (0 broadcasts). `dims` and
    // `strides` are i64 buffers; n_out is the product of dims. out overlaps nothing.
    KernelSig {
        op: "strided_copy",
        dtypes: ALL,
        args: "out: buf, x: buf, dims: buf<i64>, strides: buf<i64>, ndim, offset, n_out",
    },
    // Bilinear resize of `planes` planes [in_h, in_w] to [out_h, out_w] (NCHW with
    // N*C folded into planes); align_corners is 0 or 1. Taps and weights are exact
    // integer fractions (docs/ops/movement.md): per axis, num/den with
    // align 1: num = dst*(in-1), den = max(out-1, 1); align 0 (half_pixel):
    // num = max((2*dst+1)*in - out, 0), den = 2*out; q = num / den; q >= in-1 gives
    // i0 = i1 = in-1, w0 = 1, w1 = 0 (coordinate clamped); otherwise i0 = q, i1 = q+1,
    // w1 = R(num - q*den) / R(den), w0 = 1 - w1 (in the
    // compute type R; i64 -> R rounds to nearest even). Value, in R, with
    // lerp(a, b, w0, w1) = w1 == 0 ? w0*a : w0 == 0 ? w1*b : fma(w1, b, w0*a) (a
    // zero-weight tap is not read): t = lerp(x[y0,x0], x[y0,x1], wx0, wx1); b = the
    // same on row y1; v = lerp(t, b, wy0, wy1); stored once. in_h, in_w >= 1 when out
    // is non-empty; out overlaps nothing.
    KernelSig {
        op: "resize_bilinear",
        dtypes: FLOATS,
        args: "out: buf, x: buf, planes, in_h, in_w, out_h, out_w, align_corners",
    },
    // Nearest resize (ONNX asymmetric + floor, exact in integers):
    // out[p, oy, ox] = x[p, (oy*in_h)/out_h, (ox*in_w)/out_w]. in_h, in_w >= 1 when
    // out is non-empty; out overlaps nothing.
    KernelSig {
        op: "resize_nearest",
        dtypes: ALL,
        args: "out: buf, x: buf, planes, in_h, in_w, out_h, out_w",
    },
    // EOS gather (CLIP pooling): ids [batch, seq] (i64), x [batch, seq, d],
    // out [batch, d]: out[b, :] = x[b, s, :] with s the position of the largest id of
    // row b (the first one on ties). seq >= 1; out overlaps nothing.
    KernelSig {
        op: "eos_gather",
        dtypes: ALL,
        args: "out: buf, x: buf, ids: buf<i64>, batch, seq, d",
    },
];
