//! Launch machinery: one-call `run`, device-resident launches, pool allocations and
//! transfers, beside the plain Rust loop a user would otherwise write.
//!
//! `cargo bench -p gpukit-benches --bench launch`

// criterion_group! generates an undocumented pub fn.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gpukit::demo;
use gpukit::prelude::*;

fn saxpy(c: &mut Criterion) {
    let kit = Kit::cpu().unwrap();
    let mut g = c.benchmark_group("saxpy_f32");
    for n in [1usize << 10, 1 << 16, 1 << 22] {
        g.throughput(Throughput::Bytes((3 * 4 * n) as u64));
        let x = vec![1.25f32; n];
        let mut y = vec![0.5f32; n];
        let cfg = LaunchConfig::for_elements(n, 256).unwrap();
        let k = demo::saxpy();
        g.bench_with_input(BenchmarkId::new("gpukit_run", n), &n, |b, &n| {
            b.iter(|| {
                kit.run(
                    &k,
                    cfg,
                    &mut [
                        Binding::F32(2.0),
                        Binding::input(&x),
                        Binding::inout(&mut y),
                        Binding::I64(n as i64),
                    ],
                )
                .unwrap()
            })
        });
        let (bx, by) = (kit.upload(&x).unwrap(), kit.upload(&y).unwrap());
        g.bench_with_input(BenchmarkId::new("gpukit_resident", n), &n, |b, &n| {
            b.iter(|| {
                kit.launch(
                    &k,
                    cfg,
                    &[
                        DevArg::F32(2.0),
                        (&bx).into(),
                        (&by).into(),
                        DevArg::I64(n as i64),
                    ],
                )
                .unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("plain_rust_loop", n), &n, |b, _| {
            b.iter(|| {
                for (y, &x) in y.iter_mut().zip(&x) {
                    *y = black_box(2.0f32).mul_add(x, *y);
                }
            })
        });
    }
    g.finish();
}

fn pool(c: &mut Criterion) {
    let kit = Kit::cpu().unwrap();
    let mut g = c.benchmark_group("alloc_1MiB");
    g.bench_function("pooled", |b| {
        b.iter(|| black_box(kit.alloc(DType::F32, 1 << 18).unwrap()))
    });
    let raw = Kit::cpu().unwrap();
    raw.set_pool_enabled(false);
    g.bench_function("pool_off", |b| {
        b.iter(|| black_box(raw.alloc(DType::F32, 1 << 18).unwrap()))
    });
    g.finish();
}

fn transfers(c: &mut Criterion) {
    let kit = Kit::cpu().unwrap();
    let n = 1 << 22;
    let host = vec![0.5f32; n];
    let mut back = vec![0.0f32; n];
    let buf = kit.alloc(DType::F32, n).unwrap();
    let mut g = c.benchmark_group("transfer_16MiB");
    g.throughput(Throughput::Bytes((n * 4) as u64));
    g.bench_function("upload", |b| b.iter(|| buf.write(&host).unwrap()));
    g.bench_function("download", |b| b.iter(|| buf.read_into(&mut back).unwrap()));
    let f64s: Vec<f64> = host.iter().map(|&v| v as f64).collect();
    g.bench_function("upload_f64_converting", |b| {
        b.iter(|| buf.write_f64(&f64s).unwrap())
    });
    g.finish();
}

criterion_group!(benches, saxpy, pool, transfers);
criterion_main!(benches);
