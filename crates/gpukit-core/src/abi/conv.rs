//! Kernel signatures of the neural-network family: the `conv` group (gemm, conv2d,
//! conv_transpose2d, max_pool2d), and the parameter structs its ops take.
//!
//! The order of operations of each kernel is written next to its signature and in
//! docs/ops/conv.md. `R` is the compute type (f32 for f16/bf16/f32, f64 for f64),
//! `load`/`store` are rule 6's, an `f64` scalar is converted to `R` by round to nearest
//! even (`R::from_f64`) before use. Layouts are NCHW, contiguous, row-major. An absent
//! operand (C, bias) is passed as the absent buffer (null pointer, zero length) with its
//! `has_*` flag 0. No output overlaps any input.

use super::KernelSig;
use crate::DType;
use crate::numeric::FLOAT_DTYPES;

const FLOATS: &[DType] = &FLOAT_DTYPES;

/// The `conv` group's kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    // General matrix product with epilogue (ONNX Gemm). a [m, k] (trans_a = 0) or
    // [k, m] (trans_a = 1), so a(r, t) = a[r*k + t] or a[t*m + r]; b [k, n] (trans_b = 0)
    // or [n, k] (trans_b = 1, a PyTorch Linear weight), so b(t, j) = b[t*n + j] or
    // b[j*k + t]; c(r, j) = c[r*c_rs + j*c_cs] when has_c (c_rs = n, c_cs = 1 for a full
    // [m, n] C; a stride of 0 broadcasts a row [n], a column [m, 1] or a scalar); bias
    // [n] when has_bias; y [m, n]. Per y[r][j]:
    // acc = +0.0; for t = 0..k ascending acc = fma(load(a(r, t)), load(b(t, j)), acc);
    // v = R(alpha) * acc; if has_c: v = fma(R(beta), load(c(r, j)), v);
    // if has_bias: v = v + load(bias[j]); y[r][j] = store(v).
    // `y` may be exactly `c` (in place, full C only); no other overlap.
    KernelSig {
        op: "gemm",
        dtypes: FLOATS,
        args: "y: buf, a: buf, b: buf, c: buf, bias: buf, m, k, n, trans_b, has_c, has_bias, \
               alpha: f64, beta: f64, trans_a, c_rs, c_cs",
    },
    // 2-D convolution (ONNX Conv). x [n, c_in, h, w]; weight [c_out, c_in/groups, kh, kw];
    // bias [c_out] when has_bias; y [n, c_out, oh, ow]. Output channel oc belongs to
    // group g = oc / (c_out/groups), which reads input channels g*cg .. (g+1)*cg
    // (cg = c_in/groups). Per y[b][oc][i][j]: acc = +0.0; for ic in the group
    // ascending, for kh ascending, for kw ascending: ih = i*stride_h - pad_t + kh*dil_h,
    // iw = j*stride_w - pad_l + kw*dil_w; xv = load(x[b][ic][ih][iw]) when inside the
    // image, else +0.0 (zero padding is a real +0.0 operand); acc = fma(xv,
    // load(w[oc][ic-g*cg][kh][kw]), acc); then if has_bias acc = acc + load(bias[oc]);
    // y = store(acc). (pad_b and pad_r are implied by oh and ow.)
    KernelSig {
        op: "conv2d",
        dtypes: FLOATS,
        args: "y: buf, x: buf, weight: buf, bias: buf, n, c_in, h, w, c_out, kh, kw, oh, ow, \
               pad_t, pad_l, stride_h, stride_w, dil_h, dil_w, groups, has_bias",
    },
    // 2-D transposed convolution (ONNX ConvTranspose), gather form. x [n, c_in, h, w];
    // weight [c_in, c_out/groups, kh, kw]; bias [c_out] when has_bias; y [n, c_out, oh,
    // ow]. Output channel oc is in group g = oc / og (og = c_out/groups), local index
    // o = oc - g*og; it reads input channels g*cg .. (g+1)*cg (cg = c_in/groups). Per
    // y[b][oc][i][j]: acc = +0.0; for ic in the group ascending, for kh ascending, for
    // kw ascending: if (i + pad_t - kh*dil_h) is >= 0, divisible by stride_h and
    // ih = that / stride_h < h, and likewise iw for (j + pad_l - kw*dil_w):
    // acc = fma(load(x[b][ic][ih][iw]), load(w[ic][o][kh][kw]), acc); taps that do not
    // land on an input element are skipped (they contribute nothing, not a +0.0).
    // Then if has_bias acc = acc + load(bias[oc]); y = store(acc).
    KernelSig {
        op: "conv_transpose2d",
        dtypes: FLOATS,
        args: "y: buf, x: buf, weight: buf, bias: buf, n, c_in, h, w, c_out, kh, kw, oh, ow, \
               pad_t, pad_l, stride_h, stride_w, dil_h, dil_w, groups, has_bias",
    },
    // 2-D max pooling (ONNX MaxPool, floor mode). x [n, c, h, w]; y [n, c, oh, ow].
    // Per y[b][ch][i][j]: the max_nan fold (any order: max_nan is order-independent)
    // of load(x[b][ch][ih][iw]) over the window's taps ih = i*stride_h - pad_t +
    // kh*dil_h, iw = j*stride_w - pad_l + kw*dil_w that lie inside the image (padding
    // never takes part), starting from -inf; stored once. The op rejects windows
    // without a real tap, so the -inf start is never the result of a valid launch.
    KernelSig {
        op: "max_pool2d",
        dtypes: FLOATS,
        args: "y: buf, x: buf, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h, stride_w, \
               dil_h, dil_w",
    },
    // The indices output of ONNX MaxPool, same geometry as max_pool2d (scalars at the
    // same positions), idx i64 [n, c, oh, ow]. Per output: m = max_pool2d's value (the
    // max_nan fold of the window's in-image taps); the index is that of the first
    // in-image tap, in row-major window order (ky, then kx), whose value is m bit for bit
    // (any NaN matching a NaN m), flattened over the whole input: ((b*c + ch)*h + ih)*w
    // + iw for storage_order 0 (row major), ((b*c + ch)*w + iw)*h + ih for 1 (column
    // major spatial axes). A valid launch always finds one (m is one of the taps).
    KernelSig {
        op: "max_pool2d_index",
        dtypes: FLOATS,
        args: "idx: buf<i64>, x: buf, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h, \
               stride_w, dil_h, dil_w, storage_order",
    },
];

/// How gemm's C operand is laid out (ONNX Gemm's unidirectional broadcast of C to
/// `[m, n]`). C is never materialised: a broadcast axis has stride 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GemmC {
    /// `[m, n]`, row-major: `c(r, j) = c[r*n + j]`.
    #[default]
    Full,
    /// One row `[n]` (or `[1, n]`) shared by every row: `c(r, j) = c[j]`.
    Row,
    /// One column `[m, 1]` shared by every column: `c(r, j) = c[r]`.
    Column,
    /// One value (`[]`, `[1]` or `[1, 1]`) for every output: `c(r, j) = c[0]`.
    Scalar,
}

impl GemmC {
    /// The layout of an ONNX Gemm C of shape `dims` for an `[m, n]` output, by ONNX's
    /// unidirectional broadcasting: `[m, n]` is [`GemmC::Full`], `[n]`/`[1, n]`
    /// [`GemmC::Row`], `[m, 1]` [`GemmC::Column`], `[]`/`[1]`/`[1, 1]`
    /// [`GemmC::Scalar`] (an exact `[m, n]` is always taken as full, so `m = 1` or
    /// `n = 1` is never ambiguous). Returns `None` when `dims` does not broadcast to
    /// `[m, n]`.
    pub fn from_shape(dims: &[usize], m: usize, n: usize) -> Option<GemmC> {
        match *dims {
            [a, b] if a == m && b == n => Some(GemmC::Full),
            [] | [1] | [1, 1] => Some(GemmC::Scalar),
            [b] | [1, b] if b == n => Some(GemmC::Row),
            [a, 1] if a == m => Some(GemmC::Column),
            _ => None,
        }
    }

    /// The element strides `(row, column)` of C in an `m × n` product.
    pub fn strides(self, n: usize) -> (usize, usize) {
        match self {
            GemmC::Full => (n, 1),
            GemmC::Row => (0, 1),
            GemmC::Column => (1, 0),
            GemmC::Scalar => (0, 0),
        }
    }

    /// The number of elements C holds in an `m × n` product.
    pub fn len(self, m: usize, n: usize) -> Option<usize> {
        match self {
            GemmC::Full => m.checked_mul(n),
            GemmC::Row => Some(n),
            GemmC::Column => Some(m),
            GemmC::Scalar => Some(1),
        }
    }
}

/// Parameters of `gemm`: `Y[m×n] = alpha·(op(A)·op(B)) + beta·C + bias`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmParams {
    /// Rows of op(A) and Y.
    pub m: usize,
    /// Columns of op(A), the summed dimension.
    pub k: usize,
    /// Columns of Y.
    pub n: usize,
    /// Scale of the product (converted to the compute type, round to nearest even).
    pub alpha: f64,
    /// Scale of C (converted likewise; unused without C).
    pub beta: f64,
    /// A is stored `[k, m]` instead of `[m, k]` (ONNX `transA`).
    pub trans_a: bool,
    /// B is stored `[n, k]` (a PyTorch Linear weight) instead of `[k, n]`.
    pub trans_b: bool,
    /// The layout of C (full, or broadcast from a row, a column or a scalar).
    pub c_layout: GemmC,
}

impl GemmParams {
    /// `m × k × n` with `alpha = beta = 1`, neither operand transposed, a full C.
    pub fn new(m: usize, k: usize, n: usize) -> GemmParams {
        GemmParams {
            m,
            k,
            n,
            alpha: 1.0,
            beta: 1.0,
            trans_a: false,
            trans_b: false,
            c_layout: GemmC::Full,
        }
    }
}

/// Parameters of `conv2d` (NCHW). Weight `[c_out, c_in/groups, kh, kw]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conv2dParams {
    /// Batch.
    pub n: usize,
    /// Input channels.
    pub c_in: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Zero padding `[top, left, bottom, right]` (ONNX `pads` order).
    pub pads: [usize; 4],
    /// `[stride_h, stride_w]`, each >= 1.
    pub strides: [usize; 2],
    /// `[dil_h, dil_w]`, each >= 1.
    pub dilations: [usize; 2],
    /// Groups, >= 1, dividing `c_in` and `c_out`.
    pub groups: usize,
}

impl Conv2dParams {
    /// A plain convolution: no padding, stride 1, dilation 1, one group.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        c_in: usize,
        h: usize,
        w: usize,
        c_out: usize,
        kh: usize,
        kw: usize,
    ) -> Conv2dParams {
        Conv2dParams {
            n,
            c_in,
            h,
            w,
            c_out,
            kh,
            kw,
            pads: [0; 4],
            strides: [1, 1],
            dilations: [1, 1],
            groups: 1,
        }
    }

    /// The output `[oh, ow]` by ONNX Conv's formula
    /// `floor((h + pad_t + pad_b - dil_h*(kh-1) - 1) / stride_h) + 1` (and likewise for
    /// the width); `None` when the numerator is negative, a kernel size, stride or
    /// dilation is 0, or a size overflows.
    pub fn out_hw(&self) -> Option<[usize; 2]> {
        Some([
            window_out(
                self.h,
                self.pads[0],
                self.pads[2],
                self.kh,
                self.strides[0],
                self.dilations[0],
            )?,
            window_out(
                self.w,
                self.pads[1],
                self.pads[3],
                self.kw,
                self.strides[1],
                self.dilations[1],
            )?,
        ])
    }
}

/// Parameters of `conv_transpose2d` (NCHW). Weight `[c_in, c_out/groups, kh, kw]`
/// (ONNX ConvTranspose layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvTranspose2dParams {
    /// Batch.
    pub n: usize,
    /// Input channels.
    pub c_in: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel height.
    pub kh: usize,
    /// Kernel width.
    pub kw: usize,
    /// Padding removed from the full output `[top, left, bottom, right]` (ONNX order).
    pub pads: [usize; 4],
    /// `[stride_h, stride_w]`, each >= 1.
    pub strides: [usize; 2],
    /// `[out_pad_h, out_pad_w]`, each < its stride.
    pub output_padding: [usize; 2],
    /// `[dil_h, dil_w]`, each >= 1.
    pub dilations: [usize; 2],
    /// Groups, >= 1, dividing `c_in` and `c_out`.
    pub groups: usize,
}

impl ConvTranspose2dParams {
    /// A plain transposed convolution: no padding, stride 1, no output padding,
    /// dilation 1, one group.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        c_in: usize,
        h: usize,
        w: usize,
        c_out: usize,
        kh: usize,
        kw: usize,
    ) -> ConvTranspose2dParams {
        ConvTranspose2dParams {
            n,
            c_in,
            h,
            w,
            c_out,
            kh,
            kw,
            pads: [0; 4],
            strides: [1, 1],
            output_padding: [0, 0],
            dilations: [1, 1],
            groups: 1,
        }
    }

    /// The output `[oh, ow]` by ONNX ConvTranspose's formula
    /// `stride_h*(h-1) + out_pad_h + dil_h*(kh-1) + 1 - pad_t - pad_b` (and likewise for
    /// the width), computed without wrapping; `None` when it is negative, a kernel size,
    /// stride or dilation is 0, or a size overflows. 0 is a valid (empty) size.
    pub fn out_hw(&self) -> Option<[usize; 2]> {
        let one = |len: usize, k: usize, s: usize, op: usize, d: usize, p0: usize, p1: usize| {
            if k == 0 || s == 0 || d == 0 {
                return None;
            }
            let len = i128::try_from(len).ok()?;
            let v = i128::try_from(s).ok()? * (len - 1)
                + i128::try_from(op).ok()?
                + i128::try_from(d).ok()? * (i128::try_from(k).ok()? - 1)
                + 1
                - i128::try_from(p0).ok()?
                - i128::try_from(p1).ok()?;
            if v < 0 { None } else { usize::try_from(v).ok() }
        };
        Some([
            one(
                self.h,
                self.kh,
                self.strides[0],
                self.output_padding[0],
                self.dilations[0],
                self.pads[0],
                self.pads[2],
            )?,
            one(
                self.w,
                self.kw,
                self.strides[1],
                self.output_padding[1],
                self.dilations[1],
                self.pads[1],
                self.pads[3],
            )?,
        ])
    }
}

/// Parameters of `max_pool2d` (NCHW, floor mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxPool2dParams {
    /// Batch.
    pub n: usize,
    /// Channels.
    pub c: usize,
    /// Input height.
    pub h: usize,
    /// Input width.
    pub w: usize,
    /// Window height.
    pub kh: usize,
    /// Window width.
    pub kw: usize,
    /// Padding `[top, left, bottom, right]` (ONNX order); padded taps never take part.
    pub pads: [usize; 4],
    /// `[stride_h, stride_w]`, each >= 1.
    pub strides: [usize; 2],
    /// `[dil_h, dil_w]`, each >= 1.
    pub dilations: [usize; 2],
}

impl MaxPool2dParams {
    /// A `kh × kw` window with stride 1, no padding, dilation 1.
    pub fn new(n: usize, c: usize, h: usize, w: usize, kh: usize, kw: usize) -> MaxPool2dParams {
        MaxPool2dParams {
            n,
            c,
            h,
            w,
            kh,
            kw,
            pads: [0; 4],
            strides: [1, 1],
            dilations: [1, 1],
        }
    }

    /// The output `[oh, ow]`: the same formula as [`Conv2dParams::out_hw`] (ONNX
    /// MaxPool with `ceil_mode = 0`).
    pub fn out_hw(&self) -> Option<[usize; 2]> {
        Some([
            window_out(
                self.h,
                self.pads[0],
                self.pads[2],
                self.kh,
                self.strides[0],
                self.dilations[0],
            )?,
            window_out(
                self.w,
                self.pads[1],
                self.pads[3],
                self.kw,
                self.strides[1],
                self.dilations[1],
            )?,
        ])
    }
}

/// `floor((len + p0 + p1 - d*(k-1) - 1) / s) + 1`, `None` when the numerator is
/// negative, `k`, `s` or `d` is 0, or a size overflows.
fn window_out(len: usize, p0: usize, p1: usize, k: usize, s: usize, d: usize) -> Option<usize> {
    if k == 0 || s == 0 || d == 0 {
        return None;
    }
    let padded = len.checked_add(p0)?.checked_add(p1)?;
    let extent = d.checked_mul(k - 1)?.checked_add(1)?;
    let num = padded.checked_sub(extent)?;
    Some(num / s + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_sizes_follow_onnx() {
        // 5x5, 3x3 kernel, pad 1, stride 2 -> 3x3.
        let mut p = Conv2dParams::new(1, 1, 5, 5, 1, 3, 3);
        p.pads = [1; 4];
        p.strides = [2, 2];
        assert_eq!(p.out_hw(), Some([3, 3]));
        // Kernel larger than the input without padding: no output.
        assert_eq!(Conv2dParams::new(1, 1, 2, 2, 1, 3, 3).out_hw(), None);
        // Dilation 2, 3x3 kernel covers 5 rows.
        let mut p = Conv2dParams::new(1, 1, 5, 6, 1, 3, 3);
        p.dilations = [2, 2];
        assert_eq!(p.out_hw(), Some([1, 2]));
        // ConvTranspose: (3-1)*2 + 1 + 3 - 1 - 1 = 6.
        let mut t = ConvTranspose2dParams::new(1, 1, 3, 3, 1, 3, 3);
        t.strides = [2, 2];
        t.pads = [1; 4];
        t.output_padding = [1, 1];
        assert_eq!(t.out_hw(), Some([6, 6]));
        let mut t = ConvTranspose2dParams::new(1, 1, 1, 1, 1, 1, 1);
        t.pads = [1, 0, 1, 0];
        assert_eq!(t.out_hw(), None);
        assert_eq!(
            MaxPool2dParams::new(1, 1, 4, 4, 2, 2).out_hw(),
            Some([3, 3])
        );
    }
}

/// The window taps of one pooling axis that can hold a real element for some output:
/// `(skip, keep)` such that taps `t < skip` and `t >= skip + keep` lie in the padding
/// for every output position `o < out` (position `o*stride - pad + t*dil` outside
/// `0..len`), with `skip * dil <= pad`. A launch with `k = keep` and
/// `pad - skip * dil` folds the same real taps (max_nan is order-independent), so its
/// work is bounded by the data rather than by a padded window. O(1).
pub fn pool_tap_range(len: u64, k: u64, pad: u64, stride: u64, dil: u64, out: u64) -> (u64, u64) {
    if out == 0 || len == 0 || k == 0 || dil == 0 {
        return (0, k);
    }
    let (len, k, pad, stride, dil, out) = (
        len as u128,
        k as u128,
        pad as u128,
        stride as u128,
        dil as u128,
        out as u128,
    );
    // Tap t is inside for some o iff t*dil >= pad - (out-1)*stride (the last output
    // reaches furthest down) and t*dil <= pad + len - 1 (the first output reaches
    // furthest up).
    let reach = (out - 1) * stride;
    let lo = pad.saturating_sub(reach).div_ceil(dil);
    let skip = lo.min(pad / dil).min(k);
    let hi = ((pad + len - 1) / dil + 1).min(k);
    let keep = hi.saturating_sub(skip);
    (skip as u64, keep as u64)
}

#[cfg(test)]
mod pool_tests {
    use super::pool_tap_range;

    /// Brute force: the taps inside for some output.
    fn live(len: u64, k: u64, pad: u64, s: u64, d: u64, out: u64) -> Vec<u64> {
        (0..k)
            .filter(|&t| {
                (0..out).any(|o| {
                    let p = (o * s + t * d) as i64 - pad as i64;
                    (0..len as i64).contains(&p)
                })
            })
            .collect()
    }

    #[test]
    fn the_kept_taps_cover_every_live_tap() {
        for len in 1..5 {
            for k in 1..7 {
                for pad in 0..6 {
                    for s in 1..4 {
                        for d in 1..4 {
                            for out in 1..5 {
                                let (skip, keep) = pool_tap_range(len, k, pad, s, d, out);
                                assert!(skip * d <= pad);
                                assert!(skip + keep <= k);
                                for t in live(len, k, pad, s, d, out) {
                                    assert!(t >= skip && t < skip + keep, "{t}");
                                }
                            }
                        }
                    }
                }
            }
        }
        // The window: 2^40 taps around one real element.
        let (_, keep) = pool_tap_range(1, 1 << 40, 1 << 39, 1, 1, 2);
        assert!(keep <= 3, "{keep}");
    }
}
