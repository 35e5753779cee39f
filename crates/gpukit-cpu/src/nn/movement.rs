//! CPU kernels of the neural-network family: the `movement` group.
//!
//! Copies run as contiguous `copy_from_slice` runs wherever the layout allows, with
//! rayon over disjoint output ranges. The strided copy (slice, permute, expand) first
//! merges axes that are contiguous in both tensors, then either copies output rows
//! (a unit-stride, broadcast or strided inner loop) or, when the output's last axis is
//! strided in the input but another axis is contiguous there, transposes in 32×32
//! tiles so both the reads and the writes stay in cache. Bilinear resize computes each
//! output exactly as the contract says (docs/ops/movement.md); the loop structure
//! around it does not change any bit.

use gpukit_core::abi::contents::strided_layout;
use gpukit_core::abi::kernel_name;
use gpukit_core::abi::movement::{KERNELS, MAX_RANK};
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{FloatElement, Real};
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::{PAR_GRAIN, arg_err, input_slice, mul, out_range};

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::movement::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = Vec::new();
    for sig in KERNELS {
        for &d in sig.dtypes {
            if let Some(f) = entry(sig.op, d) {
                v.push((kernel_name(sig.op, d), f));
            }
        }
    }
    v
}

fn entry(op: &str, dtype: DType) -> Option<BuiltinFn> {
    macro_rules! all6 {
        ($f:ident) => {
            match dtype {
                DType::F32 => $f::<f32> as BuiltinFn,
                DType::F64 => $f::<f64>,
                DType::F16 => $f::<f16>,
                DType::BF16 => $f::<bf16>,
                DType::I64 => $f::<i64>,
                DType::I32 => $f::<i32>,
            }
        };
    }
    let f = match op {
        "copy_axis" => all6!(copy_axis),
        "strided_copy" => all6!(strided_copy),
        "resize_nearest" => all6!(resize_nearest),
        "eos_gather" => all6!(eos_gather),
        "resize_bilinear" => match dtype {
            DType::F32 => resize_bilinear::<f32> as BuiltinFn,
            DType::F64 => resize_bilinear::<f64>,
            DType::F16 => resize_bilinear::<f16>,
            DType::BF16 => resize_bilinear::<bf16>,
            DType::I64 | DType::I32 => return None,
        },
        _ => return None,
    };
    Some(f)
}

/// Runs `f(start, end)` over `[0, total)` in pieces of about [`PAR_GRAIN`] elements,
/// in parallel when there is more than one piece.
fn par_ranges(total: usize, grain: usize, f: impl Fn(usize, usize) + Sync) {
    let grain = grain.max(1);
    let tasks = total.div_ceil(grain);
    let task = |t: usize| f(t * grain, ((t + 1) * grain).min(total));
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}

/// Copy into an axis slot. Args: dst, src, outer, src_axis, inner, dst_axis, offset.
fn copy_axis<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let outer = args.usize(2)?;
    let src_axis = args.usize(3)?;
    let inner = args.usize(4)?;
    let dst_axis = args.usize(5)?;
    let offset = args.usize(6)?;
    let dst = args.buf::<T>(0)?;
    let src = args.buf::<T>(1)?;
    match offset.checked_add(src_axis) {
        Some(e) if e <= dst_axis => {}
        _ => {
            return arg_err(
                args,
                6,
                format!("slot {offset}+{src_axis} past axis {dst_axis}"),
            );
        }
    }
    let run = mul(args, 3, src_axis, inner)?;
    let n_src = mul(args, 2, outer, run)?;
    let n_dst = mul(args, 5, mul(args, 5, outer, dst_axis)?, inner)?;
    args.need(0, &dst, n_dst)?;
    args.need(1, &src, n_src)?;
    if n_src == 0 {
        return Ok(());
    }
    // SAFETY: src holds n_src elements; copied first if it overlaps dst.
    let s = unsafe { input_slice(&src, n_src, &[out_range(&dst)]) };
    let s = &*s;
    par_ranges(n_src, PAR_GRAIN, |mut a, b| {
        while a < b {
            let (o, r) = (a / run, a % run);
            let len = (run - r).min(b - a);
            let d0 = (o * dst_axis + offset) * inner + r;
            // SAFETY: d0 + len <= n_dst (offset + src_axis <= dst_axis); the source
            // ranges of the tasks are disjoint and map to disjoint destination ranges.
            let d = unsafe { dst.slice_mut(d0, d0 + len) };
            d.copy_from_slice(&s[a..a + len]);
            a += len;
        }
    });
    Ok(())
}

/// Tile edge of the blocked transpose.
const TILE: usize = 32;

/// Strided copy. Args: out, x, dims, strides, ndim, offset, n_out.
fn strided_copy<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let ndim = args.usize(4)?;
    let offset = args.usize(5)?;
    let n_out = args.usize(6)?;
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let dims_b = args.buf::<i64>(2)?;
    let strides_b = args.buf::<i64>(3)?;
    if ndim == 0 || ndim > MAX_RANK {
        return arg_err(args, 4, format!("ndim {ndim} outside 1..={MAX_RANK}"));
    }
    args.need(2, &dims_b, ndim)?;
    args.need(3, &strides_b, ndim)?;
    args.need(0, &out, n_out)?;
    // SAFETY: each holds ndim elements (checked); copied before anything is written.
    let (di, si) = unsafe {
        (
            dims_b.slice()[..ndim].to_vec(),
            strides_b.slice()[..ndim].to_vec(),
        )
    };
    // The shared content check (the emulator applies the same before its launch).
    let layout = strided_layout(args.kernel(), &di, &si, offset, n_out, x.len())?;
    if n_out == 0 {
        return Ok(());
    }
    let (dims, strides, n_x) = (layout.dims, layout.strides, layout.n_x);
    // Merge axes: drop size-1 axes, fuse an axis into the next when contiguous.
    let mut cd: Vec<usize> = Vec::with_capacity(ndim);
    let mut cs: Vec<usize> = Vec::with_capacity(ndim);
    for (&d, &s) in dims.iter().zip(&strides) {
        if d == 1 {
            continue;
        }
        match (cd.last_mut(), cs.last_mut()) {
            (Some(pd), Some(ps)) if s.checked_mul(d) == Some(*ps) => {
                *pd *= d;
                *ps = s;
            }
            _ => {
                cd.push(d);
                cs.push(s);
            }
        }
    }
    // SAFETY: x holds n_x elements (checked); copied first if it overlaps out.
    let src = unsafe { input_slice(&x, n_x, &[out_range(&out)]) };
    let src = &*src;
    if cd.is_empty() {
        // SAFETY: n_out == 1 here; one write, nothing else runs.
        unsafe { out.write(0, src[offset]) };
        return Ok(());
    }
    let k = cd.len();
    let (len, step) = (cd[k - 1], cs[k - 1]);
    let contiguous_axis = (0..k - 1).rev().find(|&p| cs[p] == 1 && cd[p] >= TILE / 2);
    match contiguous_axis {
        Some(p) if step != 1 && step != 0 && len >= TILE / 2 => {
            transpose_tiles(out, src, &cd, &cs, offset, p);
        }
        _ => copy_rows(out, src, &cd, &cs, offset),
    }
    Ok(())
}

/// The strided copy row by row: rows are the output's last (merged) axis. Tasks own
/// contiguous output ranges of about [`PAR_GRAIN`] elements (a long row is split).
fn copy_rows<T: Element>(
    out: RawBuf<'_, T>,
    src: &[T],
    dims: &[usize],
    strides: &[usize],
    offset: usize,
) {
    let k = dims.len();
    let (len, step) = (dims[k - 1], strides[k - 1]);
    let n_out: usize = dims.iter().product();
    let (hd, hs) = (&dims[..k - 1], &strides[..k - 1]);
    par_ranges(n_out, PAR_GRAIN, |a, b| {
        // Coordinates and source offset of the row holding element a.
        let mut coord = [0usize; MAX_RANK];
        let mut base = offset;
        let mut rest = a / len;
        for d in (0..k - 1).rev() {
            coord[d] = rest % hd[d];
            rest /= hd[d];
            base += coord[d] * hs[d];
        }
        let mut e = a;
        while e < b {
            let (r, c0) = (e / len, e % len);
            let c1 = len.min(c0 + (b - e));
            // SAFETY: [r·len + c0, r·len + c1) lies in [a, b), which this task alone
            // writes, inside out[..n_out].
            let o = unsafe { out.slice_mut(r * len + c0, r * len + c1) };
            match step {
                1 => o.copy_from_slice(&src[base + c0..base + c1]),
                0 => o.fill(src[base]),
                _ => {
                    for (j, v) in o.iter_mut().enumerate() {
                        *v = src[base + (c0 + j) * step];
                    }
                }
            }
            e += c1 - c0;
            if c1 < len {
                break;
            }
            for d in (0..k - 1).rev() {
                coord[d] += 1;
                base += hs[d];
                if coord[d] < hd[d] {
                    break;
                }
                base -= hd[d] * hs[d];
                coord[d] = 0;
            }
        }
    });
}

/// The strided copy as tiled transposes of axis `p` (contiguous in the source) against
/// the output's last axis, for every coordinate of the other axes.
fn transpose_tiles<T: Element>(
    out: RawBuf<'_, T>,
    src: &[T],
    dims: &[usize],
    strides: &[usize],
    offset: usize,
    p: usize,
) {
    let k = dims.len();
    let q = k - 1;
    let mut ostr = vec![1usize; k];
    for d in (0..k - 1).rev() {
        ostr[d] = ostr[d + 1] * dims[d + 1];
    }
    let others: Vec<usize> = (0..q).filter(|&d| d != p).collect();
    let n_other: usize = others.iter().map(|&d| dims[d]).product();
    let pblocks = dims[p].div_ceil(TILE);
    let (len, step) = (dims[q], strides[q]);
    let per = (PAR_GRAIN / (TILE * len)).max(1);
    let task = |t: usize| {
        let (mut ob, pb) = (t / pblocks, t % pblocks);
        let (mut xb, mut obase) = (offset, 0usize);
        for &d in others.iter().rev() {
            let c = ob % dims[d];
            ob /= dims[d];
            xb += c * strides[d];
            obase += c * ostr[d];
        }
        let (p0, p1) = (pb * TILE, ((pb + 1) * TILE).min(dims[p]));
        for j0 in (0..len).step_by(TILE) {
            let j1 = (j0 + TILE).min(len);
            for pi in p0..p1 {
                let orow = obase + pi * ostr[p];
                let xrow = xb + pi;
                for j in j0..j1 {
                    // SAFETY: orow + j < n_out; each (other coords, p block) task owns
                    // its output elements alone.
                    unsafe { out.write(orow + j, src[xrow + j * step]) };
                }
            }
        }
    };
    let tasks = n_other * pblocks;
    if tasks <= per {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().with_min_len(per).for_each(task);
    }
}

/// Two-tap interpolation (docs/ops/movement.md): a zero-weight tap is not read;
/// otherwise `fma(w1, b, w0·a)`.
#[inline(always)]
fn lerp<R: Real>(a: R, b: R, w0: R, w1: R) -> R {
    if w1 == R::ZERO {
        w0 * a
    } else if w0 == R::ZERO {
        w1 * b
    } else {
        w1.fma(b, w0 * a)
    }
}

/// One bilinear tap: `(i0, i1, w0, w1)` for output index `dst` (docs/ops/movement.md):
/// an exact fraction `num / den`, the integer part the tap, the remainder the weight.
#[inline]
fn bilinear_tap<R: Real>(dst: i64, inp: i64, out: i64, align: bool) -> (usize, usize, R, R) {
    let (num, den) = if align {
        (dst * (inp - 1), (out - 1).max(1))
    } else {
        (((2 * dst + 1) * inp - out).max(0), 2 * out)
    };
    let q = num / den;
    if q >= inp - 1 {
        let last = (inp - 1) as usize;
        return (last, last, R::ONE, R::ZERO);
    }
    let rem = num - q * den;
    // rem, den < 2^53 (checked by the launch): the f64 is exact, R rounds once.
    let w1 = R::from_f64(rem as f64) / R::from_f64(den as f64);
    (q as usize, q as usize + 1, R::ONE - w1, w1)
}

/// `(planes, in_h, in_w, out_h, out_w, n_in, n_out)` of a resize launch.
type ResizeDims = (usize, usize, usize, usize, usize, usize, usize);

/// Reads and checks the resize scalars against the buffers.
fn resize_dims<T: Element>(
    args: &BuiltinArgs<'_>,
    out: &RawBuf<'_, T>,
    x: &RawBuf<'_, T>,
) -> Result<ResizeDims> {
    let planes = args.usize(2)?;
    let (in_h, in_w) = (args.usize(3)?, args.usize(4)?);
    let (out_h, out_w) = (args.usize(5)?, args.usize(6)?);
    let n_in = mul(args, 4, mul(args, 3, planes, in_h)?, in_w)?;
    let n_out = mul(args, 6, mul(args, 5, planes, out_h)?, out_w)?;
    args.need(0, out, n_out)?;
    args.need(1, x, n_in)?;
    if n_out > 0 && (in_h == 0 || in_w == 0) {
        return arg_err(args, 3, "an empty input cannot fill a non-empty output");
    }
    for (idx, i, o) in [(5, in_h, out_h), (6, in_w, out_w)] {
        let big = o
            .checked_mul(2)
            .and_then(|v| v.checked_add(1))
            .and_then(|v| v.checked_mul(i.max(1)));
        if !matches!(big, Some(v) if v < 1 << 53) {
            return arg_err(args, idx, "tap arithmetic beyond 2^53");
        }
    }
    Ok((planes, in_h, in_w, out_h, out_w, n_in, n_out))
}

/// Bilinear resize. Args: out, x, planes, in_h, in_w, out_h, out_w, align_corners.
fn resize_bilinear<T: FloatElement>(args: &BuiltinArgs<'_>) -> Result<()> {
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let (planes, in_h, in_w, out_h, out_w, n_in, n_out) = resize_dims(args, &out, &x)?;
    let align = match args.i64(7)? {
        0 => false,
        1 => true,
        v => return arg_err(args, 7, format!("align_corners must be 0 or 1, got {v}")),
    };
    if n_out == 0 {
        return Ok(());
    }
    let xt: Vec<(usize, usize, T::Real, T::Real)> = (0..out_w)
        .map(|o| bilinear_tap(o as i64, in_w as i64, out_w as i64, align))
        .collect();
    // SAFETY: x holds n_in elements; copied first if it overlaps out.
    let src = unsafe { input_slice(&x, n_in, &[out_range(&out)]) };
    let src = &*src;
    par_ranges(planes * out_h, PAR_GRAIN / out_w, |r0, r1| {
        for r in r0..r1 {
            let (p, oy) = (r / out_h, r % out_h);
            let (y0, y1, wy0, wy1) =
                bilinear_tap::<T::Real>(oy as i64, in_h as i64, out_h as i64, align);
            let row0 = &src[(p * in_h + y0) * in_w..(p * in_h + y0 + 1) * in_w];
            let row1 = &src[(p * in_h + y1) * in_w..(p * in_h + y1 + 1) * in_w];
            // SAFETY: output rows are disjoint across tasks, inside out[..n_out].
            let o = unsafe { out.slice_mut(r * out_w, (r + 1) * out_w) };
            for (v, &(x0, x1, wx0, wx1)) in o.iter_mut().zip(&xt) {
                let t = lerp(row0[x0].load(), row0[x1].load(), wx0, wx1);
                let b = lerp(row1[x0].load(), row1[x1].load(), wx0, wx1);
                *v = T::store(lerp(t, b, wy0, wy1));
            }
        }
    });
    Ok(())
}

/// Nearest resize. Args: out, x, planes, in_h, in_w, out_h, out_w.
fn resize_nearest<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let (planes, in_h, in_w, out_h, out_w, n_in, n_out) = resize_dims(args, &out, &x)?;
    if n_out == 0 {
        return Ok(());
    }
    let sx: Vec<usize> = (0..out_w).map(|o| o * in_w / out_w).collect();
    // SAFETY: x holds n_in elements; copied first if it overlaps out.
    let src = unsafe { input_slice(&x, n_in, &[out_range(&out)]) };
    let src = &*src;
    par_ranges(planes * out_h, PAR_GRAIN / out_w, |r0, r1| {
        for r in r0..r1 {
            let (p, oy) = (r / out_h, r % out_h);
            let sy = oy * in_h / out_h;
            let row = &src[(p * in_h + sy) * in_w..(p * in_h + sy + 1) * in_w];
            // SAFETY: output rows are disjoint across tasks, inside out[..n_out].
            let o = unsafe { out.slice_mut(r * out_w, (r + 1) * out_w) };
            if in_w == out_w {
                o.copy_from_slice(row);
            } else {
                for (v, &s) in o.iter_mut().zip(&sx) {
                    *v = row[s];
                }
            }
        }
    });
    Ok(())
}

/// EOS gather. Args: out, x, ids, batch, seq, d.
fn eos_gather<T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let batch = args.usize(3)?;
    let seq = args.usize(4)?;
    let d = args.usize(5)?;
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let ids = args.buf::<i64>(2)?;
    if seq == 0 {
        return arg_err(args, 4, "seq must be at least 1");
    }
    let n_ids = mul(args, 4, batch, seq)?;
    let n_x = mul(args, 5, n_ids, d)?;
    let n_out = mul(args, 5, batch, d)?;
    args.need(0, &out, n_out)?;
    args.need(1, &x, n_x)?;
    args.need(2, &ids, n_ids)?;
    if n_out == 0 {
        return Ok(());
    }
    let outs = [out_range(&out)];
    // SAFETY: each holds the elements checked above; copied first if overlapping out.
    let (src, id) = unsafe { (input_slice(&x, n_x, &outs), input_slice(&ids, n_ids, &outs)) };
    let (src, id) = (&*src, &*id);
    par_ranges(batch, PAR_GRAIN / d, |b0, b1| {
        for b in b0..b1 {
            let row = &id[b * seq..(b + 1) * seq];
            let mut best = 0;
            for (s, &v) in row.iter().enumerate().skip(1) {
                if v > row[best] {
                    best = s;
                }
            }
            let s0 = (b * seq + best) * d;
            // SAFETY: output rows are disjoint across tasks, inside out[..n_out].
            let o = unsafe { out.slice_mut(b * d, (b + 1) * d) };
            o.copy_from_slice(&src[s0..s0 + d]);
        }
    });
    Ok(())
}
