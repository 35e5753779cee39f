//! Ad-hoc timings of the attention kernels (a report, not a timed test):
//! `cargo bench -p gpukit-cpu --bench attention_report`.
//! Env `ATT_LEVELS=avx512,avx2` picks the SIMD levels (default: the detected one),
//! `ATT_ONLY=fused|scores` one kernel, `ATT_ALL=1` adds f64 and f16.

use std::time::Instant;

use gpukit_core::{Buf, DType, DevArg, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, set_simd_limit, simd_level};

/// Best-of time in seconds of `f`, repeated until ~1 s have passed.
fn time(mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || (start.elapsed().as_secs_f64() < 1.0 && runs < 50) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn random(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn main() {
    let kit = Kit::from_device(Box::new(CpuDevice::new()));
    let levels: Vec<SimdLevel> = std::env::var("ATT_LEVELS")
        .ok()
        .map(|s| s.split(',').filter_map(SimdLevel::parse).collect())
        .unwrap_or_else(|| vec![simd_level()]);
    let (heads, n, nkv, hd) = (12usize, 512usize, 512usize, 64usize);
    let flops = 4.0 * (heads * n * nkv * hd) as f64;
    println!("threads: {}", rayon::current_num_threads());
    for dt in [DType::F32, DType::F64, DType::F16] {
        if dt != DType::F32 && std::env::var("ATT_ALL").is_err() {
            continue;
        }
        let q = kit.upload_f64(dt, &random(heads * n * hd, 1)).unwrap();
        let k = kit.upload_f64(dt, &random(heads * nkv * hd, 2)).unwrap();
        let v = kit.upload_f64(dt, &random(heads * nkv * hd, 3)).unwrap();
        let o = kit.zeros(dt, heads * n * hd).unwrap();
        let s = kit.zeros(dt, heads * n * nkv).unwrap();
        let absent = Buf::absent(dt);
        let i = |x: usize| DevArg::I64(x as i64);
        let scale = DevArg::F64(1.0 / (hd as f64).sqrt());
        let cfg = LaunchConfig::for_elements(1, 1).unwrap();
        let fused_name = gpukit_core::abi::kernel_name("attention", dt);
        let scores_name = gpukit_core::abi::kernel_name("attention_scores", dt);
        for &l in &levels {
            set_simd_limit(Some(l));
            let only = std::env::var("ATT_ONLY").unwrap_or_default();
            let t = if only == "scores" {
                f64::NAN
            } else {
                time(|| {
                    kit.launch_builtin(
                        &fused_name,
                        cfg,
                        &[
                            (&o).into(),
                            (&q).into(),
                            (&k).into(),
                            (&v).into(),
                            (&absent).into(),
                            i(0),
                            i(1),
                            i(heads),
                            i(n),
                            i(nkv),
                            i(hd),
                            i(1),
                            i(0),
                            scale,
                        ],
                    )
                    .unwrap()
                })
            };
            println!(
                "{l:?} {dt:?} fused attention {heads}x{n}x{nkv}x{hd}: {:.1} ms, {:.1} GFLOP/s",
                t * 1e3,
                flops / t / 1e9
            );
            let t = if only == "fused" {
                f64::NAN
            } else {
                time(|| {
                    kit.launch_builtin(
                        &scores_name,
                        cfg,
                        &[
                            (&s).into(),
                            (&q).into(),
                            (&k).into(),
                            (&absent).into(),
                            i(0),
                            i(heads),
                            i(n),
                            i(nkv),
                            i(hd),
                            i(1),
                            scale,
                        ],
                    )
                    .unwrap()
                })
            };
            println!(
                "{l:?} {dt:?} attention_scores {heads}x{n}x{nkv}x{hd}: {:.1} ms, {:.1} GFLOP/s",
                t * 1e3,
                flops / 2.0 / t / 1e9
            );
        }
    }
    set_simd_limit(None);
}
