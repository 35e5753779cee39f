//! max_pool2d: rows of the window folded with `max_nan` (order-independent); and
//! max_pool2d_index, the position of the first tap that holds each window's maximum.

use std::borrow::Cow;

use gpukit_core::Result;
use gpukit_core::numeric::{Real, max_nan};

use super::{Float, for_tasks};
use crate::args::BuiltinArgs;
use crate::kernels::simd::dispatch;
use crate::kernels::{arg_err, input_slice, mul, out_range};

/// The pooling geometry (args 2..=15 of both kernels), checked.
#[derive(Clone, Copy)]
struct Geo {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    pt: usize,
    pl: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
}

fn geometry(args: &BuiltinArgs<'_>) -> Result<Geo> {
    let u = |i| args.usize(i);
    let g = Geo {
        n: u(2)?,
        c: u(3)?,
        h: u(4)?,
        w: u(5)?,
        kh: u(6)?,
        kw: u(7)?,
        oh: u(8)?,
        ow: u(9)?,
        pt: u(10)?,
        pl: u(11)?,
        sh: u(12)?,
        sw: u(13)?,
        dh: u(14)?,
        dw: u(15)?,
    };
    if g.sh == 0 || g.sw == 0 || g.dh == 0 || g.dw == 0 {
        return arg_err(args, 12, "strides and dilations must be >= 1");
    }
    for (i, len, s, k, d, pad) in [
        (8, g.oh, g.sh, g.kh, g.dh, g.pt),
        (9, g.ow, g.sw, g.kw, g.dw, g.pl),
    ] {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return arg_err(args, i, "positions overflow");
        }
    }
    Ok(g)
}

/// max_pool2d. Args: y, x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h,
/// stride_w, dil_h, dil_w.
pub(super) fn max_pool2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let Geo {
        n,
        c,
        h,
        w,
        kh,
        kw,
        oh,
        ow,
        pt,
        pl,
        sh,
        sw,
        dh,
        dw,
    } = geometry(args)?;
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

/// max_pool2d_index (abi::conv). Args: idx, x, n, c, h, w, kh, kw, oh, ow, pad_t,
/// pad_l, stride_h, stride_w, dil_h, dil_w, storage_order. Per output: the `max_nan`
/// fold of the in-image taps, then the first of them (row-major window order) equal to
/// it bit for bit (any NaN to a NaN), flattened row- or column-major; `-1` if none is
/// (impossible for a valid launch: the maximum is one of the taps).
pub(super) fn max_pool2d_index<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let g = geometry(args)?;
    let column_major = match args.i64(16)? {
        0 => false,
        1 => true,
        v => return arg_err(args, 16, format!("storage_order {v} is not 0 or 1")),
    };
    let idx = args.buf::<i64>(0)?;
    let x = args.buf::<T>(1)?;
    let planes = mul(args, 3, g.n, g.c)?;
    let n_out = mul(args, 8, planes, mul(args, 9, g.oh, g.ow)?)?;
    let x_len = mul(args, 4, planes, mul(args, 5, g.h, g.w)?)?;
    args.need(0, &idx, n_out)?;
    args.need(1, &x, x_len)?;
    if n_out == 0 {
        return Ok(());
    }
    let outs = [out_range(&idx)];
    // SAFETY: x holds x_len elements (checked); copied if it overlaps idx.
    let xv: Cow<'_, [T]> = unsafe { input_slice(&x, x_len, &outs) };
    let xv: &[T] = &xv;
    let idx = &idx;
    // One task per (plane, output row).
    let task = |t: usize| {
        let (plane, oy) = (t / g.oh, t % g.oh);
        let base = plane * g.h * g.w;
        // The in-image taps of output column ox, in row-major window order.
        let taps = |ox: usize| {
            (0..g.kh).flat_map(move |ky| {
                (0..g.kw).filter_map(move |kx| {
                    let iy = (oy * g.sh + ky * g.dh)
                        .checked_sub(g.pt)
                        .filter(|&v| v < g.h)?;
                    let ix = (ox * g.sw + kx * g.dw)
                        .checked_sub(g.pl)
                        .filter(|&v| v < g.w)?;
                    Some((iy, ix))
                })
            })
        };
        for ox in 0..g.ow {
            let m = taps(ox).fold(<T::Real as Real>::NEG_INFINITY, |a, (iy, ix)| {
                max_nan(a, xv[base + iy * g.w + ix].load())
            });
            let hit = taps(ox).find(|&(iy, ix)| {
                let v = xv[base + iy * g.w + ix].load();
                (v.is_nan() && m.is_nan())
                    || (v == m && v.is_sign_negative() == m.is_sign_negative())
            });
            let at = match hit {
                Some((iy, ix)) if column_major => ((plane * g.w + ix) * g.h + iy) as i64,
                Some((iy, ix)) => (base + iy * g.w + ix) as i64,
                None => -1,
            };
            // SAFETY: t * ow + ox < n_out <= idx.len() (checked); each task writes its
            // own output row, and x is not idx (or is a copy).
            unsafe { idx.write(t * g.ow + ox, at) };
        }
    };
    for_tasks(planes * g.oh, task);
    Ok(())
}
