//! conv2d: implicit GEMM on the packed engine. Per image and group, A is the group's
//! weights `[og, cg*kh*kw]` and B the im2col panel `B(t, p)` with
//! `t = (icl*kh + i)*kw + j` (the contract's tap order) and `p = oy*ow + ox`, padded
//! taps as `+0.0`. With stride 1, B is packed from a zero-padded copy of the input on a
//! grid `wp` columns wide, where every tap's row of B is one contiguous run
//! ([`PaddedCols`]; the grid's extra columns are computed and dropped), and the
//! micro-kernel reads full panels there in place (no packing); otherwise it is
//! gathered k-block by k-block straight from the input ([`Im2col`]). Groups with very
//! few output channels (depthwise) take a direct path that runs the same chains.

use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{Element, Result};
use rayon::prelude::*;

use super::{ConvArgs, Float, conv_args, for_tasks};
use crate::args::{BuiltinArgs, RawBuf};
use crate::gemm::{self, Dims, GemmReal, PackA, PackB, RowMajor, Sink};
use crate::kernels::simd::dispatch;
use crate::kernels::{input_slice, out_range};

/// The weights of every group: item `bi = image*groups + g` uses group `g`'s
/// `[og, k]` block.
struct Weights<'a, T> {
    w: &'a [T],
    groups: usize,
    og: usize,
    k: usize,
}

impl<T: FloatElement + Sync> PackA<T::Real> for Weights<'_, T> {
    #[inline(always)]
    fn pack_a(
        &self,
        bi: usize,
        r0: usize,
        rows: usize,
        t0: usize,
        kc: usize,
        mr: usize,
        dst: &mut [T::Real],
    ) {
        let g = bi % self.groups;
        let a = RowMajor {
            data: &self.w[g * self.og * self.k..(g + 1) * self.og * self.k],
            ld: self.k,
            bstride: 0,
        };
        a.pack_a(0, r0, rows, t0, kc, mr, dst);
    }
}

/// The implicit im2col panel of every image and group (see the module docs).
struct Im2col<'a, T> {
    x: &'a [T],
    p: ConvArgs,
    /// Per kernel column `j`: the output columns `lo..hi` whose tap `j` lands inside
    /// the input row.
    ranges: Vec<(usize, usize)>,
}

impl<T: FloatElement + Sync> PackB<T::Real> for Im2col<'_, T> {
    #[inline(always)]
    fn pack_b(
        &self,
        bi: usize,
        t0: usize,
        kc: usize,
        c0: usize,
        cols: usize,
        nr: usize,
        dst: &mut [T::Real],
    ) {
        let zero = <T::Real as Real>::ZERO;
        let p = &self.p;
        let (b, g) = (bi / p.groups, bi % p.groups);
        let cg = p.c_in / p.groups;
        let plane = p.h * p.w;
        let khw = p.kh * p.kw;
        let x = &self.x[(b * p.c_in + g * cg) * plane..][..cg * plane];
        for (pi, panel) in dst.chunks_exact_mut(kc * nr).enumerate() {
            let j0 = c0 + pi * nr;
            let cn = nr.min(cols - pi * nr);
            for (t, d) in panel.chunks_exact_mut(nr).enumerate() {
                let tt = t0 + t;
                let (icl, r) = (tt / khw, tt % khw);
                let (ki, kj) = (r / p.kw, r % p.kw);
                let xp = &x[icl * plane..(icl + 1) * plane];
                let (lo, hi) = self.ranges[kj];
                let off = kj * p.dw;
                let mut j = 0;
                while j < cn {
                    let pix = j0 + j;
                    let (oy, ox) = (pix / p.ow, pix % p.ow);
                    let seg = (p.ow - ox).min(cn - j);
                    let out = &mut d[j..j + seg];
                    let iy = (oy * p.sh + ki * p.dh)
                        .checked_sub(p.pt)
                        .filter(|&iy| iy < p.h);
                    match iy {
                        None => out.fill(zero),
                        Some(iy) => {
                            let row = &xp[iy * p.w..(iy + 1) * p.w];
                            // Output columns ox..ox+seg: zeros before lo, the input
                            // inside lo..hi, zeros from hi.
                            let a = lo.clamp(ox, ox + seg) - ox;
                            let e = hi.clamp(ox + a, ox + seg) - ox;
                            out[..a].fill(zero);
                            out[e..].fill(zero);
                            if e > a {
                                let s0 = (ox + a) * p.sw + off - p.pl;
                                if p.sw == 1 {
                                    for (o, v) in out[a..e].iter_mut().zip(&row[s0..]) {
                                        *o = v.load();
                                    }
                                } else {
                                    let src = row[s0..].iter().step_by(p.sw);
                                    for (o, v) in out[a..e].iter_mut().zip(src) {
                                        *o = v.load();
                                    }
                                }
                            }
                        }
                    }
                    j += seg;
                }
                d[cn..].fill(zero);
            }
        }
    }
}

/// Stores `acc (+ bias[oc])` into the NCHW output.
struct Store<'a, T> {
    y: RawBuf<'a, T>,
    bias: Option<&'a [T]>,
    p: ConvArgs,
}

impl<T: Float> Sink<T::Real> for Store<'_, T> {
    #[inline(always)]
    fn finish(
        &self,
        bi: usize,
        r0: usize,
        c0: usize,
        rows: usize,
        cols: usize,
        acc: &[T::Real],
        ld: usize,
    ) {
        let p = &self.p;
        let (b, g) = (bi / p.groups, bi % p.groups);
        let og = p.c_out / p.groups;
        let npix = p.oh * p.ow;
        for r in 0..rows {
            let oc = g * og + r0 + r;
            let start = (b * p.c_out + oc) * npix + c0;
            // SAFETY: the engine delivers each output exactly once and concurrent calls
            // cover disjoint tiles; this channel's pixel segment lies inside y (checked
            // by conv_args).
            let dst = unsafe { self.y.slice_mut(start, start + cols) };
            let acc = &acc[r * ld..r * ld + cols];
            match self.bias {
                Some(bias) => {
                    let bv = bias[oc].load();
                    for (o, &a) in dst.iter_mut().zip(acc) {
                        *o = T::store(a + bv);
                    }
                }
                None => {
                    for (o, &a) in dst.iter_mut().zip(acc) {
                        *o = T::store(a);
                    }
                }
            }
        }
    }
}

/// The im2col panel of a stride-1 convolution, read from a zero-padded copy of the
/// input in the compute type. On the padded grid (`wp = ow + (kw-1)*dw` columns per
/// row, the last `wp - ow` of each row computed and discarded), grid column
/// `q = oy*wp + ox` of tap `(icl, ki, kj)` is the padded value at
/// `icl*hp*wp + ki*dh*wp + kj*dw + q`: a contiguous run for every tap, so packing is a
/// plain copy. Padded taps are `+0.0` operands, as in [`Im2col`]: the same chains.
struct PaddedCols<'a, R> {
    /// `[n*groups][cg][hp][wp]`.
    xp: &'a [R],
    cg: usize,
    hp: usize,
    wp: usize,
    p: ConvArgs,
}

impl<R: Real> PaddedCols<'_, R> {
    /// Columns of each product on the padded grid.
    fn grid_cols(&self) -> usize {
        (self.p.oh - 1) * self.wp + self.p.ow
    }
}

impl<R: Real> PackB<R> for PaddedCols<'_, R> {
    #[inline(always)]
    fn pack_b(
        &self,
        bi: usize,
        t0: usize,
        kc: usize,
        c0: usize,
        cols: usize,
        nr: usize,
        dst: &mut [R],
    ) {
        let p = &self.p;
        let (hw, khw) = (self.hp * self.wp, p.kh * p.kw);
        let x = &self.xp[bi * self.cg * hw..][..self.cg * hw];
        for (pi, panel) in dst.chunks_exact_mut(kc * nr).enumerate() {
            let j0 = c0 + pi * nr;
            let cn = nr.min(cols - pi * nr);
            for (t, d) in panel.chunks_exact_mut(nr).enumerate() {
                let tt = t0 + t;
                let (icl, r) = (tt / khw, tt % khw);
                let (ki, kj) = (r / p.kw, r % p.kw);
                // The last grid column of the last tap is the plane's last value.
                let off = icl * hw + ki * p.dh * self.wp + kj * p.dw + j0;
                d[..cn].copy_from_slice(&x[off..off + cn]);
                d[cn..].fill(R::ZERO);
            }
        }
    }

    const DIRECT_ROWS: bool = true;

    /// The taps read in place: row `t` of B (tap `(icl, ki, kj)`) is the run of the
    /// padded copy that `pack_b` would copy, so the micro-kernel reads it there.
    #[inline(always)]
    fn direct_rows(&self, bi: usize, t0: usize, c0: usize, offs: &mut [usize]) -> Option<*const R> {
        let p = &self.p;
        let (hw, khw) = (self.hp * self.wp, p.kh * p.kw);
        let x = &self.xp[bi * self.cg * hw..][..self.cg * hw];
        // Tap t0's indices, then stepped through the taps in order (kj fastest).
        let (icl, r) = (t0 / khw, t0 % khw);
        let (mut ki, mut kj) = (r / p.kw, r % p.kw);
        let mut plane = icl * hw;
        for o in offs.iter_mut() {
            // Grid column c of this tap is x[o + c - c0]; the last grid column of the
            // last tap is the plane's last value, so every run lies inside `x`.
            *o = plane + ki * p.dh * self.wp + kj * p.dw + c0;
            kj += 1;
            if kj == p.kw {
                kj = 0;
                ki += 1;
                if ki == p.kh {
                    ki = 0;
                    plane += hw;
                }
            }
        }
        Some(x.as_ptr())
    }
}

/// The padded copy for [`PaddedCols`]: `[n*groups][cg][hp][wp]` in the compute type,
/// `+0.0` outside the input. `None` when it cannot be allocated (the caller falls back
/// to gathering from the input).
fn pad_input<T: Float>(p: &ConvArgs, x: &[T]) -> Option<(Vec<T::Real>, usize, usize)> {
    let hp = p.oh + (p.kh - 1) * p.dh;
    let wp = p.ow + (p.kw - 1) * p.dw;
    let planes = p.n * p.c_in;
    let len = planes.checked_mul(hp)?.checked_mul(wp)?;
    let mut xp: Vec<T::Real> = Vec::new();
    xp.try_reserve_exact(len).ok()?;
    let zero = <T::Real as Real>::ZERO;
    let plane_in = p.h * p.w;
    // Input columns per padded row (those that land inside the grid, shifted right
    // by pl).
    let n = p.w.min(wp.saturating_sub(p.pl));
    let per_task = planes.div_ceil(rayon::current_num_threads().max(1));
    // Every value is written once, in parallel: the padding's zeros and the input (no
    // serial zero fill of the whole copy first).
    xp.spare_capacity_mut()[..len]
        .par_chunks_mut(hp * wp)
        .with_min_len(per_task)
        .enumerate()
        .for_each(|(c, dst)| {
            let src = &x[c * plane_in..(c + 1) * plane_in];
            for (iyp, row) in dst.chunks_exact_mut(wp).enumerate() {
                let inside = iyp.checked_sub(p.pt).filter(|&iy| iy < p.h && n > 0);
                match inside {
                    // n > 0, so pl < wp and pl + n <= wp.
                    Some(iy) => {
                        let (head, rest) = row.split_at_mut(p.pl);
                        let (mid, tail) = rest.split_at_mut(n);
                        for d in head.iter_mut().chain(tail.iter_mut()) {
                            d.write(zero);
                        }
                        for (d, v) in mid.iter_mut().zip(&src[iy * p.w..iy * p.w + n]) {
                            d.write(v.load());
                        }
                    }
                    None => {
                        for d in row.iter_mut() {
                            d.write(zero);
                        }
                    }
                }
            }
        });
    // SAFETY: the capacity holds `len` values (reserved above) and every one of them
    // was written just above: the planes' chunks cover 0..len, each plane's rows its
    // hp*wp values, and each row is written whole by one of the two arms.
    unsafe { xp.set_len(len) };
    Some((xp, hp, wp))
}

/// Stores grid columns (see [`PaddedCols`]) `acc (+ bias[oc])` into the NCHW output,
/// dropping the columns past `ow` in each grid row.
struct PaddedStore<'a, T> {
    inner: Store<'a, T>,
    wp: usize,
}

impl<T: Float> Sink<T::Real> for PaddedStore<'_, T> {
    #[inline(always)]
    fn finish(
        &self,
        bi: usize,
        r0: usize,
        c0: usize,
        rows: usize,
        cols: usize,
        acc: &[T::Real],
        ld: usize,
    ) {
        let (ow, wp) = (self.inner.p.ow, self.wp);
        let mut q = c0;
        while q < c0 + cols {
            let (oy, ox) = (q / wp, q % wp);
            let end = (q - ox + wp).min(c0 + cols);
            let real = ow.saturating_sub(ox).min(end - q);
            if real > 0 {
                // Grid columns q..q+real are pixels oy*ow + ox...: one run per row.
                let sub = &acc[q - c0..];
                self.inner.finish(bi, r0, oy * ow + ox, rows, real, sub, ld);
            }
            q = end;
        }
    }
}

/// Per kernel column `j`: the output columns whose tap `j` lands inside the input row,
/// `0 <= ox*sw + j*dw - pl < w`.
fn col_ranges(p: &ConvArgs) -> Vec<(usize, usize)> {
    (0..p.kw)
        .map(|j| {
            let off = j * p.dw;
            let lo = p.pl.saturating_sub(off).div_ceil(p.sw);
            let hi = if p.w + p.pl > off {
                ((p.w + p.pl - off - 1) / p.sw + 1).min(p.ow)
            } else {
                0
            };
            (lo.min(p.ow), hi.max(lo.min(p.ow)))
        })
        .collect()
}

/// conv2d. Args: y, x, w, bias, n, c_in, h, w, c_out, kh, kw, oh, ow, pad_t, pad_l,
/// stride_h, stride_w, dil_h, dil_w, groups, has_bias.
pub(super) fn conv2d<T: Float>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: GemmReal + Element,
{
    let (p, [y, x, w, bias]) = conv_args::<T>(args, false)?;
    let npix = p.oh * p.ow;
    let y_len = p.n * p.c_out * npix;
    if y_len == 0 {
        return Ok(());
    }
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let k = cg * p.kh * p.kw;
    let outs = [out_range(&y)];
    // SAFETY: each input holds the counts checked by conv_args; copied if it overlaps y.
    let (xv, wv, bv) = unsafe {
        (
            input_slice(&x, p.n * p.c_in * p.h * p.w, &outs),
            input_slice(&w, p.c_out * k, &outs),
            input_slice(&bias, if p.has_bias { p.c_out } else { 0 }, &outs),
        )
    };
    let (xv, wv, bv): (&[T], &[T], &[T]) = (&xv, &wv, &bv);
    if og <= DIRECT_MAX_OG {
        conv2d_direct(&p, xv, wv, bv, y);
        return Ok(());
    }
    let d = Dims {
        batch: p.n * p.groups,
        m: og,
        n: npix,
        k,
    };
    let a = Weights {
        w: wv,
        groups: p.groups,
        og,
        k,
    };
    let out = Store {
        y,
        bias: p.has_bias.then_some(bv),
        p,
    };
    // Stride 1: pack from a zero-padded copy (contiguous runs per tap) on the padded
    // grid; else gather the patches from the input.
    if p.sh == 1
        && p.sw == 1
        && let Some((xp, hp, wp)) = pad_input(&p, xv)
    {
        let b = PaddedCols {
            xp: &xp,
            cg,
            hp,
            wp,
            p,
        };
        let d = Dims {
            n: b.grid_cols(),
            ..d
        };
        return gemm::run(d, &a, &b, &PaddedStore { inner: out, wp });
    }
    let b = Im2col {
        x: xv,
        p,
        ranges: col_ranges(&p),
    };
    gemm::run(d, &a, &b, &out)
}

/// Groups with at most this many output channels (depthwise and the like) take the
/// direct path: too few rows for the register tile to pay for packing.
const DIRECT_MAX_OG: usize = 2;

/// `acc[o] = fma(x(o), w, acc[o])` for one kernel tap over a row of outputs, where
/// `x(o)` is `row[o*sw + off - pl]` for `lo <= o < hi` and `+0.0` elsewhere (the
/// padding; the whole row when `row` is `None`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tap_row<T: Float>(
    acc: &mut [T::Real],
    row: Option<&[T]>,
    wv: T::Real,
    sw: usize,
    off: usize,
    pl: usize,
    lo: usize,
    hi: usize,
) {
    let zero = <T::Real as Real>::ZERO;
    let (lo, hi) = match row {
        Some(_) => (lo.min(acc.len()), hi.min(acc.len()).max(lo.min(acc.len()))),
        None => (acc.len(), acc.len()),
    };
    let (head, rest) = acc.split_at_mut(lo);
    let (mid, tail) = rest.split_at_mut(hi - lo);
    for a in head.iter_mut().chain(tail.iter_mut()) {
        *a = zero.fma(wv, *a);
    }
    if let Some(row) = row
        && hi > lo
    {
        let base = lo * sw + off - pl;
        if sw == 1 {
            for (a, v) in mid.iter_mut().zip(&row[base..base + (hi - lo)]) {
                *a = v.load().fma(wv, *a);
            }
        } else {
            for (i, a) in mid.iter_mut().enumerate() {
                *a = row[base + i * sw].load().fma(wv, *a);
            }
        }
    }
}

/// conv2d computed directly, one output row at a time, the row's outputs in a vector
/// and the taps in the contract's order `(ic, kh, kw)`; padded taps are `+0.0`
/// operands. One task per (image, output channel, block of rows).
fn conv2d_direct<T: Float>(p: &ConvArgs, xv: &[T], wv: &[T], bv: &[T], y: RawBuf<'_, T>) {
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    let (kh, kw, ow, oh) = (p.kh, p.kw, p.ow, p.oh);
    let threads = rayon::current_num_threads().max(1);
    let planes = p.n * p.c_out;
    let row_blocks = (2 * threads).div_ceil(planes).clamp(1, oh);
    let rows_per = oh.div_ceil(row_blocks);
    let row_blocks = oh.div_ceil(rows_per);
    // Valid output-column range per kernel column.
    let ranges = col_ranges(p);
    let ranges = &ranges;
    let task = |i: usize| {
        let (plane, rb) = (i / row_blocks, i % row_blocks);
        let (b, oc) = (plane / p.c_out, plane % p.c_out);
        let g = oc / og;
        let (r0, r1) = (rb * rows_per, ((rb + 1) * rows_per).min(oh));
        let wk = &wv[oc * cg * kh * kw..(oc + 1) * cg * kh * kw];
        let add = if p.has_bias {
            Some(bv[oc].load())
        } else {
            None
        };
        let mut acc = vec![<T::Real as Real>::ZERO; ow];
        for oy in r0..r1 {
            acc.fill(<T::Real as Real>::ZERO);
            dispatch(
                #[inline(always)]
                || {
                    for icl in 0..cg {
                        let ic = g * cg + icl;
                        let xp = &xv[(b * p.c_in + ic) * p.h * p.w..][..p.h * p.w];
                        for ki in 0..kh {
                            let row = (oy * p.sh + ki * p.dh)
                                .checked_sub(p.pt)
                                .filter(|&iy| iy < p.h)
                                .map(|iy| &xp[iy * p.w..(iy + 1) * p.w]);
                            for (kj, &(lo, hi)) in ranges.iter().enumerate() {
                                let w = wk[(icl * kh + ki) * kw + kj].load();
                                tap_row::<T>(&mut acc, row, w, p.sw, kj * p.dw, p.pl, lo, hi);
                            }
                        }
                    }
                },
            );
            let start = ((b * p.c_out + oc) * oh + oy) * ow;
            // SAFETY: tasks own disjoint (image, channel, row block) ranges of y; this
            // output row lies inside the task's range.
            let dst = unsafe { y.slice_mut(start, start + ow) };
            for (d, &v) in dst.iter_mut().zip(&acc) {
                *d = T::store(match add {
                    Some(bias) => v + bias,
                    None => v,
                });
            }
        }
    };
    for_tasks(planes * row_blocks, task);
}
