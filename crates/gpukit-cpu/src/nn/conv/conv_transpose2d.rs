//! conv_transpose2d: gathers per output pixel with all of the group's output channels
//! in a vector (weights repacked `[ic][kh][kw][o]`), skipping the taps that land between
//! input elements, as the contract does.

use gpukit_core::Result;
use gpukit_core::numeric::Real;

use super::{Float, conv_args, for_tasks};
use crate::args::BuiltinArgs;
use crate::kernels::simd::dispatch;
use crate::kernels::{input_slice, out_range};

/// The input index output position `o` reads through kernel tap `t`, if any:
/// `(o + pad - t*d) / s` when that is an exact integer in `0..len`.
#[inline(always)]
fn gather_src(o: usize, pad: usize, t: usize, d: usize, s: usize, len: usize) -> Option<usize> {
    let num = (o + pad).checked_sub(t * d)?;
    (num % s == 0 && num / s < len).then_some(num / s)
}

/// `acc[o] = fma(x, w[o], acc[o])` for every `o`.
#[inline(always)]
fn axpy<R: Real>(acc: &mut [R], x: R, w: &[R]) {
    for (a, &wv) in acc.iter_mut().zip(w) {
        *a = x.fma(wv, *a);
    }
}

/// conv_transpose2d. Args as conv2d (weight `[c_in, c_out/groups, kh, kw]`).
pub(super) fn conv_transpose2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (p, [y, x, w, bias]) = conv_args::<T>(args, true)?;
    let npix = p.oh * p.ow;
    let y_len = p.n * p.c_out * npix;
    if y_len == 0 {
        return Ok(());
    }
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let khw = p.kh * p.kw;
    let outs = [out_range(&y)];
    // SAFETY: each input holds the counts checked by conv_args; copied if it overlaps y.
    let (xv, wv, bv) = unsafe {
        (
            input_slice(&x, p.n * p.c_in * p.h * p.w, &outs),
            input_slice(&w, p.c_in * og * khw, &outs),
            input_slice(&bias, if p.has_bias { p.c_out } else { 0 }, &outs),
        )
    };
    let (xv, bv): (&[T], &[T]) = (&xv, &bv);
    // Weights repacked [ic][kh][kw][o] in the compute type, so a tap's weights for all
    // of the group's output channels are contiguous.
    let mut wp = vec![<T::Real as Real>::ZERO; p.c_in * khw * og];
    for ic in 0..p.c_in {
        for o in 0..og {
            for r in 0..khw {
                wp[(ic * khw + r) * og + o] = wv[(ic * og + o) * khw + r].load();
            }
        }
    }
    let wp = &wp;
    // Per output column, the kernel columns that land on an input column: (kj, ix).
    let mut col_taps: Vec<(usize, usize)> = Vec::new();
    let mut col_start = Vec::with_capacity(p.ow + 1);
    for ox in 0..p.ow {
        col_start.push(col_taps.len());
        col_taps.extend(
            (0..p.kw).filter_map(|kj| gather_src(ox, p.pl, kj, p.dw, p.sw, p.w).map(|ix| (kj, ix))),
        );
    }
    col_start.push(col_taps.len());
    let (col_taps, col_start) = (&col_taps, &col_start);
    // One task per (image, group, output row).
    let task = |i: usize| {
        let (ng, oy) = (i / p.oh, i % p.oh);
        let (b, g) = (ng / p.groups, ng % p.groups);
        // The kernel rows that land on an input row for this output row.
        let rows: Vec<(usize, usize)> = (0..p.kh)
            .filter_map(|ki| gather_src(oy, p.pt, ki, p.dh, p.sh, p.h).map(|iy| (ki, iy)))
            .collect();
        let mut acc = vec![<T::Real as Real>::ZERO; p.ow * og];
        dispatch(
            #[inline(always)]
            || {
                for ox in 0..p.ow {
                    let cols = &col_taps[col_start[ox]..col_start[ox + 1]];
                    let a = &mut acc[ox * og..(ox + 1) * og];
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        let plane = &xv[(b * p.c_in + ic) * p.h * p.w..][..p.h * p.w];
                        for &(ki, iy) in &rows {
                            for &(kj, ix) in cols {
                                let xval = plane[iy * p.w + ix].load();
                                let wt = &wp[(ic * khw + ki * p.kw + kj) * og..][..og];
                                axpy(a, xval, wt);
                            }
                        }
                    }
                }
            },
        );
        for o in 0..og {
            let oc = g * og + o;
            let start = ((b * p.c_out + oc) * p.oh + oy) * p.ow;
            // SAFETY: tasks own disjoint (image, group, output row) sets of y; this
            // channel's row lies inside the task's set.
            let dst = unsafe { y.slice_mut(start, start + p.ow) };
            let add = if p.has_bias {
                Some(bv[oc].load())
            } else {
                None
            };
            for (ox, d) in dst.iter_mut().enumerate() {
                let v = acc[ox * og + o];
                *d = T::store(match add {
                    Some(bias) => v + bias,
                    None => v,
                });
            }
        }
    };
    for_tasks(p.n * p.groups * p.oh, task);
    Ok(())
}
