//! The arithmetic core beside the crates a user would otherwise pick, in one run:
//! matmul GFLOP/s (f32, f64 at 256/512/1024) against `gemm` and `matrixmultiply`,
//! and GB/s for elementwise ops, sum and row softmax.
//!
//! `cargo bench -p gpukit-benches --bench ops` (criterion prints throughput per
//! benchmark: "elem/s" for matmul is FLOP/s, since each benchmark declares 2·m·n·k
//! elements of work).

// criterion_group! generates an undocumented pub fn.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpukit::prelude::*;
use gpukit::{DType, ops};

fn data_f32(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 2000) as f32 / 1000.0 - 1.0)
        .collect()
}

fn data_f64(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919) % 2000) as f64 / 1000.0 - 1.0)
        .collect()
}

macro_rules! matmul_group {
    ($c:expr, $t:ty, $dtype:expr, $data:ident, $mm_fn:ident, $label:literal) => {{
        let kit = Kit::cpu().unwrap();
        let mut g = $c.benchmark_group(concat!("matmul_", $label));
        g.sample_size(10);
        for n in [256usize, 512, 1024] {
            g.throughput(Throughput::Elements((2 * n * n * n) as u64));
            let (a, b) = ($data(n * n), $data(n * n));
            let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let c = kit.alloc($dtype, n * n).unwrap();
            g.bench_with_input(BenchmarkId::new("gpukit", n), &n, |bch, &n| {
                bch.iter(|| ops::matmul(&kit, &c, &ba, &bb, n, n, n).unwrap())
            });
            let mut out = vec![0 as $t; n * n];
            g.bench_with_input(BenchmarkId::new("gemm", n), &n, |bch, &n| {
                bch.iter(|| {
                    // SAFETY: every pointer addresses an n×n row-major matrix that lives
                    // for the call; strides describe exactly that layout.
                    unsafe {
                        gemm::gemm(
                            n,
                            n,
                            n,
                            out.as_mut_ptr(),
                            1,
                            n as isize,
                            false,
                            a.as_ptr(),
                            1,
                            n as isize,
                            b.as_ptr(),
                            1,
                            n as isize,
                            0 as $t,
                            1 as $t,
                            false,
                            false,
                            false,
                            gemm::Parallelism::Rayon(0),
                        )
                    }
                })
            });
            g.bench_with_input(BenchmarkId::new("matrixmultiply", n), &n, |bch, &n| {
                bch.iter(|| {
                    // SAFETY: as above (row stride n, column stride 1).
                    unsafe {
                        matrixmultiply::$mm_fn(
                            n,
                            n,
                            n,
                            1 as $t,
                            a.as_ptr(),
                            n as isize,
                            1,
                            b.as_ptr(),
                            n as isize,
                            1,
                            0 as $t,
                            out.as_mut_ptr(),
                            n as isize,
                            1,
                        )
                    }
                })
            });
            black_box(&out);
        }
        g.finish();
    }};
}

fn matmul(c: &mut Criterion) {
    matmul_group!(c, f32, DType::F32, data_f32, sgemm, "f32");
    matmul_group!(c, f64, DType::F64, data_f64, dgemm, "f64");
}

fn elementwise(c: &mut Criterion) {
    let kit = Kit::cpu().unwrap();
    let n = 1 << 22;
    let (a, b) = (data_f32(n), data_f32(n));
    let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
    let out = kit.alloc(DType::F32, n).unwrap();
    let mut g = c.benchmark_group("elementwise_f32_4M");
    g.throughput(Throughput::Bytes((3 * 4 * n) as u64));
    g.bench_function("gpukit_add", |bch| {
        bch.iter(|| ops::add(&kit, &out, &ba, &bb).unwrap())
    });
    let mut host = vec![0.0f32; n];
    g.bench_function("plain_loop_add", |bch| {
        bch.iter(|| {
            for ((o, x), y) in host.iter_mut().zip(&a).zip(&b) {
                *o = x + y;
            }
            black_box(&host);
        })
    });
    g.throughput(Throughput::Bytes((2 * 4 * n) as u64));
    g.bench_function("gpukit_exp", |bch| {
        bch.iter(|| ops::exp(&kit, &out, &ba).unwrap())
    });
    g.bench_function("std_exp_loop", |bch| {
        bch.iter(|| {
            for (o, x) in host.iter_mut().zip(&a) {
                *o = x.exp();
            }
            black_box(&host);
        })
    });
    g.finish();
}

fn reductions(c: &mut Criterion) {
    let kit = Kit::cpu().unwrap();
    let n = 1 << 22;
    let a = data_f32(n);
    let ba = kit.upload(&a).unwrap();
    let out1 = kit.alloc(DType::F32, 1).unwrap();
    let mut g = c.benchmark_group("reduce_f32_4M");
    g.throughput(Throughput::Bytes((4 * n) as u64));
    g.bench_function("gpukit_sum", |bch| {
        bch.iter(|| ops::sum(&kit, &out1, &ba).unwrap())
    });
    g.bench_function("iter_sum", |bch| {
        bch.iter(|| black_box(a.iter().sum::<f32>()))
    });
    let (rows, cols) = (1024, 4096);
    let out = kit.alloc(DType::F32, rows * cols).unwrap();
    g.throughput(Throughput::Bytes((2 * 4 * rows * cols) as u64));
    g.bench_function("gpukit_softmax_1024x4096", |bch| {
        bch.iter(|| ops::softmax_rows(&kit, &out, &ba, rows, cols).unwrap())
    });
    g.finish();
}

criterion_group!(benches, matmul, elementwise, reductions);
criterion_main!(benches);
