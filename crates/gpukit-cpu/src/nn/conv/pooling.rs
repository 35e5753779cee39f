//! max_pool2d: rows of the window folded with `max_nan` (order-independent).

use std::borrow::Cow;

use gpukit_core::Result;
use gpukit_core::numeric::{Real, max_nan};

use super::{Float, for_tasks};
use crate::args::BuiltinArgs;
use crate::kernels::simd::dispatch;
use crate::kernels::{arg_err, input_slice, mul, out_range};

/// max_pool2d. Args: y, x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h,
/// stride_w, dil_h, dil_w.
pub(super) fn max_pool2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let u = |i| args.usize(i);
    let (n, c, h, w) = (u(2)?, u(3)?, u(4)?, u(5)?);
    let (kh, kw, oh, ow) = (u(6)?, u(7)?, u(8)?, u(9)?);
    let (pt, pl, sh, sw, dh, dw) = (u(10)?, u(11)?, u(12)?, u(13)?, u(14)?, u(15)?);
    if sh == 0 || sw == 0 || dh == 0 || dw == 0 {
        return arg_err(args, 12, "strides and dilations must be >= 1");
    }
    for (i, len, s, k, d, pad) in [(8, oh, sh, kh, dh, pt), (9, ow, sw, kw, dw, pl)] {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return arg_err(args, i, "positions overflow");
        }
    }
    let y = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let planes = mul(args, 3, n, c)?;
    let y_len = mul(args, 8, planes, mul(args, 9, oh, ow)?)?;
    let x_len = mul(args, 4, planes, mul(args, 5, h, w)?)?;
    args.need(0, &y, y_len)?;
    args.need(1, &x, x_len)?;
    if y_len == 0 {
        return Ok(());
    }
    let outs = [out_range(&y)];
    // SAFETY: x holds x_len elements (checked); copied if it overlaps y.
    let xv: Cow<'_, [T]> = unsafe { input_slice(&x, x_len, &outs) };
    let xv: &[T] = &xv;
    // One task per (plane, output row).
    let task = |i: usize| {
        let (pl_idx, oy) = (i / oh, i % oh);
        let plane = &xv[pl_idx * h * w..(pl_idx + 1) * h * w];
        let mut acc = vec![<T::Real as Real>::NEG_INFINITY; ow];
        dispatch(
            #[inline(always)]
            || {
                // Only the taps that land in the image: rows 0 <= oy*sh + ki*dh - pt < h,
                // and columns that some output column reaches (work bounded by the data,
                // not by a padded window; the same taps, so the same max_nan fold).
                let top = oy * sh;
                let ki_lo = pt.saturating_sub(top).div_ceil(dh);
                let ki_hi = if h + pt > top {
                    ((h + pt - 1 - top) / dh + 1).min(kh)
                } else {
                    0
                };
                let kj_lo = pl.saturating_sub((ow - 1) * sw).div_ceil(dw);
                let kj_hi = if w + pl > 0 {
                    ((w + pl - 1) / dw + 1).min(kw)
                } else {
                    0
                };
                for ki in ki_lo..ki_hi {
                    let Some(iy) = (top + ki * dh).checked_sub(pt).filter(|&v| v < h) else {
                        continue;
                    };
                    let row = &plane[iy * w..(iy + 1) * w];
                    for kj in kj_lo..kj_hi {
                        // Output columns whose tap kj lands inside the row:
                        // 0 <= ox*sw + kj*dw - pl < w.
                        let off = kj * dw;
                        let lo = pl.saturating_sub(off).div_ceil(sw);
                        let hi = if w + pl > off {
                            ((w + pl - off - 1) / sw + 1).min(ow)
                        } else {
                            0
                        };
                        for (ox, a) in acc.iter_mut().enumerate().take(hi).skip(lo) {
                            let ix = ox * sw + off - pl;
                            *a = max_nan(*a, row[ix].load());
                        }
                    }
                }
            },
        );
        let start = i * ow;
        // SAFETY: tasks own disjoint output rows of y[..y_len].
        let dst = unsafe { y.slice_mut(start, start + ow) };
        for (d, &v) in dst.iter_mut().zip(&acc) {
            *d = T::store(v);
        }
    };
    for_tasks(planes * oh, task);
    Ok(())
}
