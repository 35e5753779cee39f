//! `gpukit bench`: throughput of the user-kernel demos, the built-in kernels and the
//! transfers.

use std::process::ExitCode;
use std::time::Instant;

use gpukit::demo;
use gpukit::ops;
use gpukit::prelude::*;
use serde_json::json;

use crate::cli::{BenchArgs, Global};
use crate::progress::Progress;

/// The median wall time of `reps` calls of `f` (after one warm-up call), each followed
/// by a wait for the device, so the time is the work's, not the queueing's.
///
/// Errors: the first error of `f` or of the wait.
fn time_it(
    kit: &Kit,
    reps: usize,
    mut f: impl FnMut() -> gpukit::Result<()>,
) -> gpukit::Result<f64> {
    f()?;
    kit.sync()?;
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f()?;
        kit.sync()?;
        v.push(t.elapsed().as_secs_f64());
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// One line of the bench table: what, size, seconds, and a rate with its unit.
struct BenchRow {
    name: String,
    size: String,
    seconds: f64,
    rate: f64,
    unit: &'static str,
}

/// The problem sizes and repetitions of one bench run.
#[derive(Debug, PartialEq)]
struct Sizes {
    /// Elements of the streaming kernels and transfers.
    n: usize,
    /// Timed calls of a streaming kernel (the median is reported).
    reps: usize,
    /// Timed calls of a matmul or attention.
    heavy_reps: usize,
    /// Rows and columns of the softmax (`rows * cols <= n`: it reuses the buffers).
    softmax: (usize, usize),
    /// Square matmul sizes.
    matmul: [usize; 2],
    /// Queries (and keys) of the attention.
    attention_n: usize,
}

impl Sizes {
    /// GPU sizes where a GPU is measured, CPU sizes that finish in seconds, and tiny
    /// sizes with one repetition for `--quick`.
    fn new(gpu: bool, quick: bool) -> Sizes {
        if quick {
            return Sizes {
                n: 1 << 12,
                reps: 1,
                heavy_reps: 1,
                softmax: (64, 64),
                matmul: [32, 64],
                attention_n: 32,
            };
        }
        Sizes {
            n: 1 << 24,
            reps: 5,
            heavy_reps: 3,
            softmax: (4096, 4096),
            matmul: if gpu { [1024, 4096] } else { [256, 1024] },
            attention_n: if gpu { 1024 } else { 256 },
        }
    }
}

/// `gpukit bench` on `kit`: a table, or one JSON object with `--json`.
///
/// Errors: the first allocation or launch that fails.
pub(crate) fn bench(g: &Global, args: &BenchArgs, kit: &Kit) -> gpukit::Result<ExitCode> {
    let gpu = kit.info().backend == gpukit::Backend::Cuda;
    let sz = Sizes::new(gpu, args.quick);
    let n = sz.n;
    let mut rows: Vec<BenchRow> = Vec::new();
    let total = 11;
    let mut p = Progress::new(total);
    let mut row = |name: &str, size: String, seconds: f64, work: f64, unit: &'static str| {
        rows.push(BenchRow {
            name: name.to_string(),
            size,
            seconds,
            rate: work / seconds / 1e9,
            unit,
        });
    };
    let x = kit.upload(&vec![1.0f32; n])?;
    let y = kit.upload(&vec![2.0f32; n])?;
    let out = kit.alloc(DType::F32, n)?;
    let mb = (n * 4) as f64;

    p.step(0, total, "saxpy");
    let saxpy = demo::saxpy();
    let cfg = LaunchConfig::for_elements(n, 256)?;
    let t = time_it(kit, sz.reps, || {
        kit.launch(
            &saxpy,
            cfg,
            &[
                DevArg::F32(1.0),
                (&x).into(),
                (&y).into(),
                DevArg::I64(n as i64),
            ],
        )
    })?;
    row(
        "saxpy f32 (user kernel)",
        format!("n={n}"),
        t,
        3.0 * mb,
        "GB/s",
    );
    p.step(1, total, "block_sum");
    let sums = kit.zeros(DType::F32, n.div_ceil(256))?;
    let bs = demo::block_sum();
    let cfg = demo::block_sum_config(n)?;
    let t = time_it(kit, sz.reps, || {
        kit.launch(
            &bs,
            cfg,
            &[(&x).into(), (&sums).into(), DevArg::I64(n as i64)],
        )
    })?;
    row(
        "block_sum f32 (user kernel)",
        format!("n={n}"),
        t,
        mb,
        "GB/s",
    );
    p.step(2, total, "add");
    let t = time_it(kit, sz.reps, || ops::add(kit, &out, &x, &y))?;
    row("add f32", format!("n={n}"), t, 3.0 * mb, "GB/s");
    p.step(3, total, "exp");
    let t = time_it(kit, sz.reps, || ops::exp(kit, &out, &x))?;
    row("exp f32", format!("n={n}"), t, 2.0 * mb, "GB/s");
    p.step(4, total, "sum");
    let s1 = kit.alloc(DType::F32, 1)?;
    let t = time_it(kit, sz.reps, || ops::sum(kit, &s1, &x))?;
    row("sum f32", format!("n={n}"), t, mb, "GB/s");
    p.step(5, total, "softmax");
    let (r, c) = sz.softmax;
    let t = time_it(kit, sz.reps, || ops::softmax_rows(kit, &out, &x, r, c))?;
    row(
        "softmax f32",
        format!("{r}x{c}"),
        t,
        2.0 * (r * c * 4) as f64,
        "GB/s",
    );
    for (i, (dtype, label)) in [(DType::F32, "matmul f32"), (DType::F64, "matmul f64")]
        .into_iter()
        .enumerate()
    {
        for (j, m) in sz.matmul.into_iter().enumerate() {
            p.step(6 + 2 * i + j, total, label);
            let a = kit.upload_f64(dtype, &vec![0.5; m * m])?;
            let b = kit.upload_f64(dtype, &vec![0.25; m * m])?;
            let c = kit.alloc(dtype, m * m)?;
            let t = time_it(kit, sz.heavy_reps, || ops::matmul(kit, &c, &a, &b, m, m, m))?;
            row(
                label,
                format!("{m}^3"),
                t,
                2.0 * (m * m * m) as f64,
                "GFLOP/s",
            );
        }
    }
    p.step(10, total, "attention");
    {
        // One sequence, 16 heads of 64 dims.
        let (heads, s, hd) = (16usize, sz.attention_n, 64usize);
        let len = heads * s * hd;
        let q = kit.upload_f64(DType::F32, &vec![0.01; len])?;
        let k = kit.upload_f64(DType::F32, &vec![0.02; len])?;
        let v = kit.upload_f64(DType::F32, &vec![0.03; len])?;
        let o = kit.alloc(DType::F32, len)?;
        let shape = ops::AttentionShape::new(heads, s, s, hd);
        let t = time_it(kit, sz.heavy_reps, || {
            ops::attention(kit, &o, &q, &k, &v, shape)
        })?;
        // q·k and p·v: 2 × 2·n·n·hd flops per head.
        row(
            "attention f32 (fused)",
            format!("h{heads} n{s} d{hd}"),
            t,
            4.0 * (heads * s * s * hd) as f64,
            "GFLOP/s",
        );
    }
    let (host, mut back) = (vec![0.5f32; n], vec![0.0f32; n]);
    let t = time_it(kit, sz.reps, || x.write(&host))?;
    row("upload f32", format!("n={n}"), t, mb, "GB/s");
    let t = time_it(kit, sz.reps, || x.read_into(&mut back))?;
    row("download f32", format!("n={n}"), t, mb, "GB/s");
    drop(p);
    if g.json {
        let r: Vec<_> = rows
            .iter()
            .map(|r| json!({"bench": r.name, "size": r.size, "seconds": r.seconds, "rate": r.rate, "unit": r.unit}))
            .collect();
        outln!("{}", json!({"device": kit.info().spec(), "results": r}));
    } else {
        outln!("bench on {} ({})", kit.info().spec(), kit.info().name);
        outln!(
            "{:<28} {:<12} {:>10} {:>10}",
            "kernel",
            "size",
            "ms",
            "rate"
        );
        for r in rows {
            outln!(
                "{:<28} {:<12} {:>10.3} {:>10.2} {}",
                r.name,
                r.size,
                r.seconds * 1e3,
                r.rate,
                r.unit
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_sizes_are_the_published_ones() {
        let cpu = Sizes::new(false, false);
        assert_eq!((cpu.n, cpu.reps, cpu.heavy_reps), (1 << 24, 5, 3));
        assert_eq!((cpu.matmul, cpu.attention_n), ([256, 1024], 256));
        let gpu = Sizes::new(true, false);
        assert_eq!((gpu.matmul, gpu.attention_n), ([1024, 4096], 1024));
    }

    #[test]
    fn softmax_fits_the_streaming_buffers() {
        for (gpu, quick) in [(false, false), (true, false), (false, true), (true, true)] {
            let s = Sizes::new(gpu, quick);
            assert!(s.softmax.0 * s.softmax.1 <= s.n, "{s:?}");
        }
        assert!(Sizes::new(true, true).n < Sizes::new(true, false).n);
    }

    #[test]
    fn time_it_calls_a_warm_up_then_reps_and_passes_errors_on() {
        let kit = gpukit::cpu().unwrap();
        let mut calls = 0;
        let t = time_it(&kit, 3, || {
            calls += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(calls, 4, "one warm-up and three timed calls");
        assert!((0.0..1.0).contains(&t), "{t}");
        let e = time_it(&kit, 3, || {
            Err(gpukit::Error::InvalidArgument {
                op: "x".into(),
                reason: "y".into(),
            })
        });
        assert!(e.is_err());
    }
}
