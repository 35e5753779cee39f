//! Sorted top-k along an axis (abi::elements `topk`; ONNX TopK). Each `(o, i)` line's
//! positions are partitioned around the k-th by [`TopkElem::beats`] (a strict total
//! order: value with NaN largest, then position), and the first k sorted by it; so the
//! output is the one the contract defines, whatever the selection algorithm.

use std::cmp::Ordering;

use gpukit_core::abi::kernel_name;
use gpukit_core::half::{bf16, f16};
use gpukit_core::topk::TopkElem;
use gpukit_core::{DType, Result};
use rayon::prelude::*;

use super::{PAR_GRAIN, arg_err, input_slice, mul, out_range};
use crate::args::{BuiltinArgs, BuiltinFn};

/// Args: values, indices, x, outer, len, inner, k, largest.
fn topk<T: TopkElem>(args: &BuiltinArgs<'_>) -> Result<()> {
    let (outer, len, inner) = (args.usize(3)?, args.usize(4)?, args.usize(5)?);
    let k = args.usize(6)?;
    let largest = match args.i64(7)? {
        0 => false,
        1 => true,
        v => return arg_err(args, 7, format!("flag {v} is not 0 or 1")),
    };
    if k > len {
        return arg_err(args, 6, format!("k = {k} exceeds the axis length {len}"));
    }
    let values = args.buf::<T>(0)?;
    let indices = args.buf::<i64>(1)?;
    let x = args.buf::<T>(2)?;
    let nx = mul(args, 4, mul(args, 4, outer, len)?, inner)?;
    let nout = mul(args, 6, mul(args, 6, outer, k)?, inner)?;
    args.need(0, &values, nout)?;
    args.need(1, &indices, nout)?;
    args.need(2, &x, nx)?;
    if nout == 0 {
        return Ok(());
    }
    let (v0, i0) = (out_range(&values), out_range(&indices));
    let vr = (v0.0, v0.0 + nout * std::mem::size_of::<T>());
    let ir = (i0.0, i0.0 + nout * 8);
    if vr.0 < ir.1 && ir.0 < vr.1 {
        return arg_err(args, 1, "the indices output overlaps the values output");
    }
    // SAFETY: x holds nx elements (checked); copied if it overlaps either output.
    let src = unsafe { input_slice(&x, nx, &[vr, ir]) };
    let src = &*src;
    let (values, indices) = (&values, &indices);
    let line = |pos: &mut Vec<usize>, l: usize| {
        let (o, i) = (l / inner, l % inner);
        let at = |p: usize| src[(o * len + p) * inner + i];
        let cmp = |&a: &usize, &b: &usize| {
            if T::beats(at(a), a, at(b), b, largest) {
                Ordering::Less
            } else if a == b {
                Ordering::Equal
            } else {
                Ordering::Greater
            }
        };
        pos.clear();
        pos.extend(0..len);
        if k < len {
            pos.select_nth_unstable_by(k - 1, cmp);
        }
        pos[..k].sort_unstable_by(cmp);
        for (r, &p) in pos[..k].iter().enumerate() {
            let e = (o * k + r) * inner + i;
            // SAFETY: e < nout <= both outputs' lengths (checked); line (o, i) alone
            // writes these elements, the outputs do not overlap each other (checked)
            // and the input is not either of them (or is a copy).
            unsafe {
                values.write(e, at(p));
                indices.write(e, p as i64);
            }
        }
    };
    let lines = outer * inner;
    if nx <= PAR_GRAIN {
        let mut pos = Vec::with_capacity(len);
        (0..lines).for_each(|l| line(&mut pos, l));
    } else {
        let per = (PAR_GRAIN / len.max(1)).max(1);
        (0..lines)
            .into_par_iter()
            .with_min_len(per)
            .for_each_init(|| Vec::with_capacity(len), line);
    }
    Ok(())
}

/// The six `topk_{dtype}` entries.
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let fns: [BuiltinFn; 6] = [
        topk::<f32>,
        topk::<f64>,
        topk::<f16>,
        topk::<bf16>,
        topk::<i64>,
        topk::<i32>,
    ];
    DType::ALL
        .into_iter()
        .zip(fns)
        .map(|(d, f)| (kernel_name("topk", d), f))
        .collect()
}
