//! The reference oracle of the neural-network family: the `conv` group (gemm, conv2d,
//! conv_transpose2d, max_pool2d), written as the contract reads (docs/ops/conv.md):
//! one output element at a time, its terms in the contract's order.
//!
//! Parameters are the structs of [`gpukit_core::abi::conv`]; the output sizes are
//! recomputed here from the ONNX formulas, independently of their `out_hw` methods.

use gpukit_core::abi::conv::{
    Conv2dParams, ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams,
};
use gpukit_core::numeric::{FloatElement, Real, max_nan};

use crate::{assert_len, numel};

/// `floor((len + p0 + p1 - d*(k-1) - 1) / s) + 1`, asserting the numerator is >= 0.
fn window_out(what: &str, len: usize, p0: usize, p1: usize, k: usize, s: usize, d: usize) -> usize {
    assert!(
        k >= 1 && s >= 1 && d >= 1,
        "gpukit-reference::{what}: kernel, stride and dilation must be >= 1"
    );
    let num = (len + p0 + p1) as i128 - (d * (k - 1)) as i128 - 1;
    assert!(
        num >= 0,
        "gpukit-reference::{what}: the window does not fit"
    );
    (num as usize) / s + 1
}

/// `Y[m×n] = alpha·(op(A)·op(B)) + beta·C + bias` (ONNX Gemm).
///
/// `a` is `[m, k]`, or `[k, m]` when `p.trans_a`; `b` is `[k, n]`, or `[n, k]` when
/// `p.trans_b`; `c` is `[m, n]`, or broadcast by `p.c_layout` from a row `[n]`, a column
/// `[m]` or a scalar `[1]`; `bias` is `[n]`, added to every row. Per output, in the
/// compute type `R`: `acc = +0.0`; for `t = 0..k` ascending
/// `acc = fma(load(a(r, t)), load(b(t, j)), acc)`; `v = R(alpha) * acc`; with C
/// `v = fma(R(beta), load(c(r, j)), v)`; with a bias `v = v + load(bias[j])`; one
/// store. `R(alpha)` rounds the f64 to nearest even.
///
/// `k = 0` gives `R(alpha) * +0.0` (NaN for an infinite alpha) before the epilogue.
///
/// # Panics
/// If a slice length does not match the shape.
pub fn gemm<T: FloatElement>(
    a: &[T],
    b: &[T],
    c: Option<&[T]>,
    bias: Option<&[T]>,
    p: &GemmParams,
) -> Vec<T> {
    let (m, k, n) = (p.m, p.k, p.n);
    assert_len("gemm", "a", a.len(), numel(&[m, k], "gemm"));
    assert_len("gemm", "b", b.len(), numel(&[k, n], "gemm"));
    // C's element (r, j), written out per layout (not through strides).
    let c_at = |c: &[T], r: usize, j: usize| -> T {
        match p.c_layout {
            GemmC::Full => c[r * n + j],
            GemmC::Row => c[j],
            GemmC::Column => c[r],
            GemmC::Scalar => c[0],
        }
    };
    if let Some(c) = c {
        let want = match p.c_layout {
            GemmC::Full => numel(&[m, n], "gemm"),
            GemmC::Row => n,
            GemmC::Column => m,
            GemmC::Scalar => 1,
        };
        assert_len("gemm", "c", c.len(), want);
    }
    if let Some(bias) = bias {
        assert_len("gemm", "bias", bias.len(), n);
    }
    let alpha = <T::Real as Real>::from_f64(p.alpha);
    let beta = <T::Real as Real>::from_f64(p.beta);
    let mut out = Vec::with_capacity(m * n);
    for r in 0..m {
        for j in 0..n {
            let mut acc = <T::Real as Real>::ZERO;
            for t in 0..k {
                let av = if p.trans_a {
                    a[t * m + r]
                } else {
                    a[r * k + t]
                };
                let bv = if p.trans_b {
                    b[j * k + t]
                } else {
                    b[t * n + j]
                };
                acc = av.load().fma(bv.load(), acc);
            }
            let mut v = alpha * acc;
            if let Some(c) = c {
                v = beta.fma(c_at(c, r, j).load(), v);
            }
            if let Some(bias) = bias {
                v = v + bias[j].load();
            }
            out.push(T::store(v));
        }
    }
    out
}

/// 2-D convolution, NCHW (ONNX Conv, zero padding): `x [n, c_in, h, w]`,
/// `weight [c_out, c_in/groups, kh, kw]`, `bias [c_out]`; returns `[n, c_out, oh, ow]`.
///
/// Per output `(b, oc, i, j)` with group `g = oc / (c_out/groups)`: `acc = +0.0`; for
/// each input channel `ic` of the group ascending, `kh` ascending, `kw` ascending:
/// `acc = fma(xv, load(w[oc][ic - g*cg][kh][kw]), acc)` where `xv` is the input at
/// `(i*stride_h - pad_t + kh*dil_h, j*stride_w - pad_l + kw*dil_w)`, or `+0.0` when
/// that lies in the padding (a real operand: `0 * inf` is NaN, `fma(+0, w, -0.0)` is
/// `+0.0`). Then `acc + load(bias[oc])` with a bias; one store.
///
/// # Panics
/// If a parameter is invalid (see the op) or a slice length does not match the shape.
pub fn conv2d<T: FloatElement>(x: &[T], w: &[T], bias: Option<&[T]>, p: &Conv2dParams) -> Vec<T> {
    let what = "conv2d";
    assert!(
        p.groups >= 1 && p.c_in.is_multiple_of(p.groups) && p.c_out.is_multiple_of(p.groups),
        "gpukit-reference::conv2d: groups must divide c_in and c_out"
    );
    let (pt, pl, pb, pr) = (p.pads[0], p.pads[1], p.pads[2], p.pads[3]);
    let (sh, sw) = (p.strides[0], p.strides[1]);
    let (dh, dw) = (p.dilations[0], p.dilations[1]);
    let oh = window_out(what, p.h, pt, pb, p.kh, sh, dh);
    let ow = window_out(what, p.w, pl, pr, p.kw, sw, dw);
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    assert_len(what, "x", x.len(), numel(&[p.n, p.c_in, p.h, p.w], what));
    assert_len(what, "w", w.len(), numel(&[p.c_out, cg, p.kh, p.kw], what));
    if let Some(bias) = bias {
        assert_len(what, "bias", bias.len(), p.c_out);
    }
    let mut out = Vec::with_capacity(numel(&[p.n, p.c_out, oh, ow], what));
    for b in 0..p.n {
        for oc in 0..p.c_out {
            let g = oc / og;
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = <T::Real as Real>::ZERO;
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        for kh in 0..p.kh {
                            for kw in 0..p.kw {
                                let ih = (i * sh + kh * dh) as i128 - pt as i128;
                                let iw = (j * sw + kw * dw) as i128 - pl as i128;
                                let inside = ih >= 0
                                    && iw >= 0
                                    && (ih as usize) < p.h
                                    && (iw as usize) < p.w;
                                let xv = if inside {
                                    let (ih, iw) = (ih as usize, iw as usize);
                                    x[((b * p.c_in + ic) * p.h + ih) * p.w + iw].load()
                                } else {
                                    <T::Real as Real>::ZERO
                                };
                                let wv = w[((oc * cg + icl) * p.kh + kh) * p.kw + kw].load();
                                acc = xv.fma(wv, acc);
                            }
                        }
                    }
                    if let Some(bias) = bias {
                        acc = acc + bias[oc].load();
                    }
                    out.push(T::store(acc));
                }
            }
        }
    }
    out
}

/// 2-D transposed convolution, NCHW (ONNX ConvTranspose), in gather form:
/// `x [n, c_in, h, w]`, `weight [c_in, c_out/groups, kh, kw]`, `bias [c_out]`; returns
/// `[n, c_out, oh, ow]` with `oh = stride_h*(h-1) + out_pad_h + dil_h*(kh-1) + 1 -
/// pad_t - pad_b` (likewise `ow`).
///
/// Per output `(b, oc, i, j)` with group `g = oc / og` (`og = c_out/groups`) and local
/// channel `o = oc - g*og`: `acc = +0.0`; for each input channel `ic` of the group
/// ascending, `kh` ascending, `kw` ascending, when `i + pad_t - kh*dil_h` is a
/// non-negative multiple of `stride_h` whose quotient `ih` is `< h`, and likewise `iw`:
/// `acc = fma(load(x[b][ic][ih][iw]), load(w[ic][o][kh][kw]), acc)`; other taps are
/// skipped. Then `acc + load(bias[oc])` with a bias; one store.
///
/// # Panics
/// If a parameter is invalid (see the op) or a slice length does not match the shape.
pub fn conv_transpose2d<T: FloatElement>(
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    p: &ConvTranspose2dParams,
) -> Vec<T> {
    let what = "conv_transpose2d";
    assert!(
        p.groups >= 1 && p.c_in.is_multiple_of(p.groups) && p.c_out.is_multiple_of(p.groups),
        "gpukit-reference::conv_transpose2d: groups must divide c_in and c_out"
    );
    let (pt, pl, pb, pr) = (
        p.pads[0] as i128,
        p.pads[1] as i128,
        p.pads[2] as i128,
        p.pads[3] as i128,
    );
    let (sh, sw) = (p.strides[0] as i128, p.strides[1] as i128);
    let (dh, dw) = (p.dilations[0] as i128, p.dilations[1] as i128);
    assert!(
        sh >= 1 && sw >= 1 && dh >= 1 && dw >= 1 && p.kh >= 1 && p.kw >= 1,
        "gpukit-reference::conv_transpose2d: kernel, stride and dilation must be >= 1"
    );
    let oh = sh * (p.h as i128 - 1) + p.output_padding[0] as i128 + dh * (p.kh as i128 - 1) + 1
        - pt
        - pb;
    let ow = sw * (p.w as i128 - 1) + p.output_padding[1] as i128 + dw * (p.kw as i128 - 1) + 1
        - pl
        - pr;
    assert!(
        oh >= 0 && ow >= 0,
        "gpukit-reference::conv_transpose2d: negative output size"
    );
    let (oh, ow) = (oh as usize, ow as usize);
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    assert_len(what, "x", x.len(), numel(&[p.n, p.c_in, p.h, p.w], what));
    assert_len(what, "w", w.len(), numel(&[p.c_in, og, p.kh, p.kw], what));
    if let Some(bias) = bias {
        assert_len(what, "bias", bias.len(), p.c_out);
    }
    // The input index a tap lands on, if it lands on one.
    let src = |out: usize, pad: i128, k: usize, d: i128, s: i128, len: usize| {
        let num = out as i128 + pad - k as i128 * d;
        if num >= 0 && num % s == 0 && ((num / s) as usize) < len {
            Some((num / s) as usize)
        } else {
            None
        }
    };
    let mut out = Vec::with_capacity(numel(&[p.n, p.c_out, oh, ow], what));
    for b in 0..p.n {
        for oc in 0..p.c_out {
            let g = oc / og;
            let o = oc - g * og;
            for i in 0..oh {
                for j in 0..ow {
                    let mut acc = <T::Real as Real>::ZERO;
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        for kh in 0..p.kh {
                            for kw in 0..p.kw {
                                let (Some(ih), Some(iw)) =
                                    (src(i, pt, kh, dh, sh, p.h), src(j, pl, kw, dw, sw, p.w))
                                else {
                                    continue;
                                };
                                let xv = x[((b * p.c_in + ic) * p.h + ih) * p.w + iw].load();
                                let wv = w[((ic * og + o) * p.kh + kh) * p.kw + kw].load();
                                acc = xv.fma(wv, acc);
                            }
                        }
                    }
                    if let Some(bias) = bias {
                        acc = acc + bias[oc].load();
                    }
                    out.push(T::store(acc));
                }
            }
        }
    }
    out
}

/// 2-D max pooling, NCHW (ONNX MaxPool, `ceil_mode = 0`): `x [n, c, h, w]`; returns
/// `[n, c, oh, ow]`.
///
/// Per output: the [`max_nan`] fold of the window's taps that lie inside the image
/// (`(i*stride_h - pad_t + kh*dil_h, j*stride_w - pad_l + kw*dil_w)`), in `(kh, kw)`
/// ascending order, starting from the first such tap; padding never takes part. NaN if
/// any tap is NaN; `max(-0, +0) = +0`. Stored once (exact: a max rounds nothing).
///
/// # Panics
/// If a parameter is invalid, a slice length does not match, or a window has no tap
/// inside the image (the op rejects such parameters).
pub fn max_pool2d<T: FloatElement>(x: &[T], p: &MaxPool2dParams) -> Vec<T> {
    let what = "max_pool2d";
    let (pt, pl, pb, pr) = (p.pads[0], p.pads[1], p.pads[2], p.pads[3]);
    let (sh, sw) = (p.strides[0], p.strides[1]);
    let (dh, dw) = (p.dilations[0], p.dilations[1]);
    let oh = window_out(what, p.h, pt, pb, p.kh, sh, dh);
    let ow = window_out(what, p.w, pl, pr, p.kw, sw, dw);
    assert_len(what, "x", x.len(), numel(&[p.n, p.c, p.h, p.w], what));
    let mut out = Vec::with_capacity(numel(&[p.n, p.c, oh, ow], what));
    for plane in 0..p.n * p.c {
        for i in 0..oh {
            for j in 0..ow {
                let mut m: Option<T::Real> = None;
                for kh in 0..p.kh {
                    for kw in 0..p.kw {
                        let ih = (i * sh + kh * dh) as i128 - pt as i128;
                        let iw = (j * sw + kw * dw) as i128 - pl as i128;
                        if ih < 0 || iw < 0 || ih as usize >= p.h || iw as usize >= p.w {
                            continue;
                        }
                        let v = x[(plane * p.h + ih as usize) * p.w + iw as usize].load();
                        m = Some(match m {
                            None => v,
                            Some(m) => max_nan(m, v),
                        });
                    }
                }
                let m = m.unwrap_or_else(|| {
                    panic!("gpukit-reference::max_pool2d: window ({i}, {j}) has no input tap")
                });
                out.push(T::store(m));
            }
        }
    }
    out
}

/// The indices output of ONNX MaxPool (`max_pool2d_index`): for each output of
/// [`max_pool2d`], the flattened input index of the first in-image tap of its window, in
/// row-major window order, whose value equals the output bit for bit (any NaN matching a
/// NaN output): `((b*c + ch)*h + ih)*w + iw` (`column_major` false) or
/// `((b*c + ch)*w + iw)*h + ih` (true).
///
/// # Panics
/// As [`max_pool2d`].
pub fn max_pool2d_index<T: FloatElement>(
    x: &[T],
    p: &MaxPool2dParams,
    column_major: bool,
) -> Vec<i64> {
    let y = max_pool2d(x, p);
    let (pt, pl) = (p.pads[0], p.pads[1]);
    let (sh, sw) = (p.strides[0], p.strides[1]);
    let (dh, dw) = (p.dilations[0], p.dilations[1]);
    let what = "max_pool2d_index";
    let oh = window_out(what, p.h, pt, p.pads[2], p.kh, sh, dh);
    let ow = window_out(what, p.w, pl, p.pads[3], p.kw, sw, dw);
    let mut out = Vec::with_capacity(y.len());
    for (o, m) in y.iter().enumerate() {
        let (plane, r) = (o / (oh * ow), o % (oh * ow));
        let (i, j) = (r / ow, r % ow);
        let m = m.load();
        let mut found = None;
        'window: for kh in 0..p.kh {
            for kw in 0..p.kw {
                let ih = (i * sh + kh * dh) as i128 - pt as i128;
                let iw = (j * sw + kw * dw) as i128 - pl as i128;
                if ih < 0 || iw < 0 || ih as usize >= p.h || iw as usize >= p.w {
                    continue;
                }
                let (ih, iw) = (ih as usize, iw as usize);
                let v = x[(plane * p.h + ih) * p.w + iw].load();
                let same = (v.is_nan() && m.is_nan())
                    || (v == m && v.is_sign_negative() == m.is_sign_negative());
                if same {
                    found = Some(if column_major {
                        (plane * p.w + iw) * p.h + ih
                    } else {
                        (plane * p.h + ih) * p.w + iw
                    });
                    break 'window;
                }
            }
        }
        out.push(found.expect("the maximum is one of the window's taps") as i64);
    }
    out
}
