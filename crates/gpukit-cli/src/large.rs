//! The workload of `gpukit profile --counters --large`: every op family of the shipped
//! kernels at realistic sizes (issue 13's: matmul 4096³, attention 16 heads × 1024 ×
//! 64, softmax 8192 × 4096, layer_norm 8192 × 1024, conv2d 64→64 3×3 on 224 × 224,
//! elementwise on 64 Mi elements), in every float dtype. It runs on the emulator with
//! a sample of each launch's blocks (`EmuOptions::sample_blocks`), so it takes minutes:
//! the counters are extrapolated, the results are not computed (nothing is checked).

use gpukit::Tensor;
use gpukit::prelude::*;
use gpukit::tensor::{
    AttentionOptions, ConvOptions, ConvTransposeOptions, GemmOpts, PadMode, Padding, PoolOptions,
    ResizeMode, ResizeOptions, ScatterReduction,
};

/// Elements of the elementwise and whole-tensor workloads: 64 Mi.
const BIG: usize = 1 << 26;

/// One step: a label and the calls it makes in one dtype.
pub(crate) type Step = (&'static str, fn(&Kit, DType) -> Result<()>);

/// The float dtypes every step runs in.
pub(crate) const DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

/// Every step, in the order they run.
pub(crate) const STEPS: &[Step] = &[
    ("elementwise unary, 64 Mi", unary),
    ("elementwise binary and broadcast, 64 Mi", binary),
    ("casts, compare, where, 64 Mi", casts),
    ("reductions over 8192 × 8192", reductions),
    ("matmul / gemm 4096³", matmul),
    ("attention 16 heads × 1024 × 64", attention),
    ("softmax 8192 × 4096", softmax),
    ("norms: layer_norm 8192 × 1024, rms, group, batch", norms),
    ("conv2d 64→64 3×3 on 224², pools, conv_transpose", conv),
    ("movement and indexing", movement),
];

/// A ramp over `[lo, hi)` with `shape`, made on the host and uploaded (no kernel).
fn ramp(kit: &Kit, shape: &[usize], lo: f64, hi: f64, dt: DType) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let step = (hi - lo) / n as f64;
    let data: Vec<f64> = (0..n).map(|i| lo + step * i as f64).collect();
    Tensor::from_buf(kit.upload_f64(dt, &data)?, shape)
}

fn unary(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[BIG], -4.0, 4.0, dt)?;
    let p = ramp(kit, &[BIG], 0.25, 8.0, dt)?;
    for f in [
        Tensor::abs,
        Tensor::neg,
        Tensor::relu,
        Tensor::exp,
        Tensor::tanh,
        Tensor::sigmoid,
        Tensor::erf,
        Tensor::gelu,
        Tensor::gelu_tanh,
        Tensor::sin,
        Tensor::cos,
        Tensor::silu,
        Tensor::softplus,
    ] {
        f(&x)?;
    }
    for f in [Tensor::log, Tensor::sqrt, Tensor::rsqrt] {
        f(&p)?;
    }
    x.leaky_relu(0.01)?;
    x.clip(-1.0, 1.0)?;
    Ok(())
}

fn binary(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[8192, 8192], -4.0, 4.0, dt)?;
    let y = ramp(kit, &[8192, 8192], 0.25, 8.0, dt)?;
    x.add(&y)?;
    x.sub(&y)?;
    x.mul(&y)?;
    x.div(&y)?;
    y.pow(&x)?;
    let row = ramp(kit, &[8192], -1.0, 1.0, dt)?;
    x.add(&row)?;
    let col = ramp(kit, &[8192, 1], -1.0, 1.0, dt)?;
    x.mul(&col)?;
    Ok(())
}

fn casts(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[BIG], -4.0, 4.0, dt)?;
    let y = ramp(kit, &[BIG], 4.0, -4.0, dt)?;
    let other = if dt == DType::F32 {
        DType::F16
    } else {
        DType::F32
    };
    x.to_dtype(other)?;
    let m = x.lt(&y)?;
    m.where_(&x, &y)?;
    Ok(())
}

fn reductions(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[8192, 8192], -4.0, 4.0, dt)?;
    x.sum()?;
    x.sum_axes(&[-1], false)?;
    x.sum_axes(&[0], false)?;
    x.max_axes(&[-1], false)?;
    x.argmax(-1, false)?;
    x.cumsum(-1, false, false)?;
    let logits = ramp(kit, &[8192, 1024], -4.0, 4.0, dt)?;
    logits.topk(8, -1, true)?;
    Ok(())
}

fn matmul(kit: &Kit, dt: DType) -> Result<()> {
    let a = ramp(kit, &[4096, 4096], -1.0, 1.0, dt)?;
    let b = ramp(kit, &[4096, 4096], 1.0, -1.0, dt)?;
    a.matmul(&b)?;
    let bias = ramp(kit, &[4096], -1.0, 1.0, dt)?;
    a.gemm(
        &b,
        Some(&bias),
        GemmOpts {
            trans_b: true,
            ..GemmOpts::default()
        },
    )?;
    Ok(())
}

fn attention(kit: &Kit, dt: DType) -> Result<()> {
    let q = ramp(kit, &[1, 16, 1024, 64], -1.0, 1.0, dt)?;
    let k = ramp(kit, &[1, 16, 1024, 64], 1.0, -1.0, dt)?;
    let v = ramp(kit, &[1, 16, 1024, 64], -2.0, 2.0, dt)?;
    Tensor::attention(&q, &k, &v, &AttentionOptions::default())?;
    Tensor::attention(
        &q,
        &k,
        &v,
        &AttentionOptions {
            causal: true,
            ..AttentionOptions::default()
        },
    )?;
    Ok(())
}

fn softmax(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[8192, 4096], -8.0, 8.0, dt)?;
    x.softmax(-1)?;
    x.softmax(0)?;
    Ok(())
}

fn norms(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[8192, 1024], -4.0, 4.0, dt)?;
    let w = ramp(kit, &[1024], 0.5, 1.5, dt)?;
    let b = ramp(kit, &[1024], -0.5, 0.5, dt)?;
    x.layer_norm(&w, &b, 1e-5)?;
    x.rms_norm(-1, &w, 1e-5)?;
    let img = ramp(kit, &[8, 64, 112, 112], -4.0, 4.0, dt)?;
    let c = |lo, hi| ramp(kit, &[64], lo, hi, dt);
    img.group_norm(8, &c(0.5, 1.5)?, &c(-0.5, 0.5)?, 1e-5)?;
    img.batch_norm(
        &c(0.5, 1.5)?,
        &c(-0.5, 0.5)?,
        &c(-0.1, 0.1)?,
        &c(0.5, 2.0)?,
        1e-5,
    )?;
    Ok(())
}

fn conv(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[1, 64, 224, 224], -1.0, 1.0, dt)?;
    let w = ramp(kit, &[64, 64, 3, 3], -0.1, 0.1, dt)?;
    let bias = ramp(kit, &[64], -0.1, 0.1, dt)?;
    x.conv(
        &w,
        Some(&bias),
        &ConvOptions {
            padding: Padding::Explicit(vec![1, 1, 1, 1]),
            ..ConvOptions::default()
        },
    )?;
    let pool = PoolOptions {
        kernel: vec![3, 3],
        strides: vec![2, 2],
        padding: Padding::Explicit(vec![1, 1, 1, 1]),
        ..PoolOptions::default()
    };
    x.max_pool(&pool)?;
    x.max_pool_with_indices(&pool, false)?;
    x.avg_pool(&pool, false)?;
    x.global_avg_pool()?;
    let half = ramp(kit, &[1, 64, 112, 112], -1.0, 1.0, dt)?;
    half.conv_transpose(
        &w,
        Some(&bias),
        &ConvTransposeOptions {
            strides: vec![2, 2],
            padding: Padding::Explicit(vec![1, 1, 1, 1]),
            output_padding: vec![1, 1],
            ..ConvTransposeOptions::default()
        },
    )?;
    half.resize(&ResizeOptions {
        sizes: Some(vec![1, 64, 224, 224]),
        mode: ResizeMode::Linear,
        ..ResizeOptions::default()
    })?;
    Ok(())
}

fn movement(kit: &Kit, dt: DType) -> Result<()> {
    let x = ramp(kit, &[8192, 8192], -4.0, 4.0, dt)?;
    x.transpose(0, 1)?.contiguous()?;
    let x4 = x.reshape(&[64, 128, 64, 128])?;
    x4.permute(&[0, 2, 1, 3])?.contiguous()?;
    Tensor::concat(&[&x, &x], 0)?;
    x.slice(&[1], &[1], &[8191], &[2])?.contiguous()?;
    ramp(kit, &[1, 8192], -1.0, 1.0, dt)?
        .expand(&[8192, 8192])?
        .contiguous()?;
    x.pad(&[0, 16, 0, 16], PadMode::Constant, 0.0, None)?;
    // An embedding table (30522 × 768) read by 8192 ids.
    let table = ramp(kit, &[30522, 768], -1.0, 1.0, dt)?;
    let ids: Vec<i64> = (0..8192).map(|i| (i * 7919) % 30522).collect();
    let ids = Tensor::from_slice(kit, &ids, &[8192])?;
    table.embedding(&ids)?;
    let cols: Vec<i64> = (0..8192 * 64).map(|i| (i * 131) % 8192).collect();
    let cols = Tensor::from_slice(kit, &cols, &[8192, 64])?;
    x.gather_elements(1, &cols)?;
    let upd = ramp(kit, &[8192, 64], -1.0, 1.0, dt)?;
    x.scatter_elements(1, &cols, &upd, ScatterReduction::None)?;
    Ok(())
}
