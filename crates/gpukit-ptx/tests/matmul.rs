//! The speed benchmark: a naive 256x256x256 f32 matmul (tests/fixtures/matmul.cu), one
//! thread per output, checked bit for bit against the same fused accumulation on the
//! host. Release builds must finish it in under 10 s on the 2-core CI machine.

mod common;

use std::time::Instant;

use common::*;
use gpukit_ptx::{EmuOptions, ParamValue};

fn matmul(size: usize, opts: &EmuOptions) -> std::time::Duration {
    let m = fixture("matmul");
    let mut r = Rng(99);
    let a: Vec<f32> = (0..size * size)
        .map(|_| (r.next() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let b: Vec<f32> = (0..size * size)
        .map(|_| (r.next() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let (ba, bb, bc) = (buf_of(&a), buf_of(&b), Buf::zeroed(size * size * 4));
    let s = size as u32;
    let t = Instant::now();
    let stats = run(
        &m,
        "matmul_f32",
        (s.div_ceil(16), s.div_ceil(16), 1),
        (16, 16, 1),
        0,
        &[&ba, &bb, &bc],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::ptr(p[2]),
                ParamValue::i32(s as i32),
                ParamValue::i32(s as i32),
                ParamValue::i32(s as i32),
            ]
        },
        opts,
    )
    .unwrap();
    let dt = t.elapsed();
    eprintln!(
        "matmul {size}^3: {dt:?} ({} warp instructions, {:.1} M thread instructions/s)",
        stats.warp_instructions,
        stats.thread_instructions as f64 / dt.as_secs_f64() / 1e6
    );
    let got: Vec<f32> = read(&bc);
    for i in 0..size {
        for j in 0..size {
            let mut acc = 0.0f32;
            for k in 0..size {
                acc = a[i * size + k].mul_add(b[k * size + j], acc);
            }
            assert_eq!(got[i * size + j].to_bits(), acc.to_bits(), "c[{i}][{j}]");
        }
    }
    dt
}

#[test]
fn matmul_256_is_exact_and_fast() {
    let dt = matmul(256, &EmuOptions::default());
    #[cfg(not(debug_assertions))]
    assert!(dt.as_secs_f64() < 10.0, "256^3 matmul took {dt:?}");
    let _ = dt;
}

#[test]
fn matmul_odd_size_is_exact() {
    // Partial blocks and the remainder loop of the unrolled k loop.
    matmul(37, &EmuOptions::default());
}
