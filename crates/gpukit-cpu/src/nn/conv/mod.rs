//! CPU kernels of the neural-network family: the `conv` group (gemm, conv2d,
//! conv_transpose2d, max_pool2d). Contracts: [`gpukit_core::abi::conv`].
//!
//! gemm and conv2d run on the shared packed GEMM engine ([`crate::gemm`]): for gemm A
//! and B are the matrices (B in either layout), for conv2d A is a group's weights and B
//! the implicit im2col panel of the input (padded taps packed as `+0.0`, the contract's
//! explicit zero operand), packed k-block by k-block and never materialised whole. The
//! engine keeps each output's chain intact; the op's epilogue (alpha/beta/bias) runs
//! once the chain is complete. Depthwise-like groups take a direct path.
//! conv_transpose2d gathers per output pixel (its contract skips the taps that land
//! between input elements); max_pool2d folds windows with `max_nan`, and
//! max_pool2d_index finds the first tap holding that maximum.

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Result};
use rayon::prelude::*;

use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::{arg_err, mul};

mod conv2d;
mod conv_transpose2d;
mod gemm;
mod pooling;

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::conv::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v: Vec<(String, BuiltinFn)> = Vec::new();
    for sig in gpukit_core::abi::conv::KERNELS {
        for &d in sig.dtypes {
            let f: Option<BuiltinFn> = match (sig.op, d) {
                ("gemm", DType::F32) => Some(gemm::gemm::<f32>),
                ("gemm", DType::F64) => Some(gemm::gemm::<f64>),
                ("gemm", DType::F16) => Some(gemm::gemm::<f16>),
                ("gemm", DType::BF16) => Some(gemm::gemm::<bf16>),
                ("conv2d", DType::F32) => Some(conv2d::conv2d::<f32>),
                ("conv2d", DType::F64) => Some(conv2d::conv2d::<f64>),
                ("conv2d", DType::F16) => Some(conv2d::conv2d::<f16>),
                ("conv2d", DType::BF16) => Some(conv2d::conv2d::<bf16>),
                ("conv_transpose2d", DType::F32) => Some(conv_transpose2d::conv_transpose2d::<f32>),
                ("conv_transpose2d", DType::F64) => Some(conv_transpose2d::conv_transpose2d::<f64>),
                ("conv_transpose2d", DType::F16) => Some(conv_transpose2d::conv_transpose2d::<f16>),
                ("conv_transpose2d", DType::BF16) => {
                    Some(conv_transpose2d::conv_transpose2d::<bf16>)
                }
                ("max_pool2d", DType::F32) => Some(pooling::max_pool2d::<f32>),
                ("max_pool2d", DType::F64) => Some(pooling::max_pool2d::<f64>),
                ("max_pool2d", DType::F16) => Some(pooling::max_pool2d::<f16>),
                ("max_pool2d", DType::BF16) => Some(pooling::max_pool2d::<bf16>),
                ("max_pool2d_index", DType::F32) => Some(pooling::max_pool2d_index::<f32>),
                ("max_pool2d_index", DType::F64) => Some(pooling::max_pool2d_index::<f64>),
                ("max_pool2d_index", DType::F16) => Some(pooling::max_pool2d_index::<f16>),
                ("max_pool2d_index", DType::BF16) => Some(pooling::max_pool2d_index::<bf16>),
                _ => None,
            };
            if let Some(f) = f {
                v.push((gpukit_core::abi::kernel_name(sig.op, d), f));
            }
        }
    }
    v
}

/// A float storage type of these kernels.
trait Float: FloatElement + Element {}
impl<T: FloatElement + Element> Float for T {}

/// Runs `task(i)` for `i < tasks`, in parallel when there is more than one.
fn for_tasks(tasks: usize, task: impl Fn(usize) + Sync + Send) {
    if tasks <= 1 {
        (0..tasks).for_each(task);
    } else {
        (0..tasks).into_par_iter().for_each(task);
    }
}

// ---------------------------------------------------------------------------------
// conv2d and conv_transpose2d arguments
// ---------------------------------------------------------------------------------

/// The scalars of a conv launch, checked so that every index the kernels form fits.
#[derive(Clone, Copy)]
struct ConvArgs {
    n: usize,
    c_in: usize,
    h: usize,
    w: usize,
    c_out: usize,
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
    groups: usize,
    has_bias: bool,
}

/// Reads args 4..=20 of conv2d / conv_transpose2d and checks the buffers: x, y hold
/// their shapes, w holds `w_len(c_in, c_out, groups, kh, kw)`, bias `c_out` if present.
fn conv_args<'a, T: Float>(
    args: &BuiltinArgs<'a>,
    transposed: bool,
) -> Result<(ConvArgs, [RawBuf<'a, T>; 4])> {
    let u = |i| args.usize(i);
    let p = ConvArgs {
        n: u(4)?,
        c_in: u(5)?,
        h: u(6)?,
        w: u(7)?,
        c_out: u(8)?,
        kh: u(9)?,
        kw: u(10)?,
        oh: u(11)?,
        ow: u(12)?,
        pt: u(13)?,
        pl: u(14)?,
        sh: u(15)?,
        sw: u(16)?,
        dh: u(17)?,
        dw: u(18)?,
        groups: u(19)?,
        has_bias: u(20)? != 0,
    };
    if p.groups == 0 || !p.c_in.is_multiple_of(p.groups) || !p.c_out.is_multiple_of(p.groups) {
        return arg_err(args, 19, "groups must be >= 1 and divide c_in and c_out");
    }
    if p.sh == 0 || p.sw == 0 || p.dh == 0 || p.dw == 0 || p.kh == 0 || p.kw == 0 {
        return arg_err(args, 9, "kernel sizes, strides and dilations must be >= 1");
    }
    // Every position the kernels form (i*stride + k*dil, plus a pad) fits in i64.
    for (i, len, s, k, d, pad) in [
        (11, p.oh, p.sh, p.kh, p.dh, p.pt),
        (12, p.ow, p.sw, p.kw, p.dw, p.pl),
    ] {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return arg_err(args, i, "positions overflow");
        }
    }
    let y = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let w = args.buf::<T>(2)?;
    let bias = args.buf::<T>(3)?;
    let sz = |i, dims: &[usize]| -> Result<usize> {
        dims.iter().try_fold(1usize, |acc, &d| mul(args, i, acc, d))
    };
    let cg = p.c_in / p.groups;
    let og = p.c_out / p.groups;
    args.need(0, &y, sz(0, &[p.n, p.c_out, p.oh, p.ow])?)?;
    args.need(1, &x, sz(1, &[p.n, p.c_in, p.h, p.w])?)?;
    let wdims = if transposed {
        [p.c_in, og, p.kh, p.kw]
    } else {
        [p.c_out, cg, p.kh, p.kw]
    };
    args.need(2, &w, sz(2, &wdims)?)?;
    args.need(3, &bias, if p.has_bias { p.c_out } else { 0 })?;
    Ok((p, [y, x, w, bias]))
}
