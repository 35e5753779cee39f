//! Ad-hoc timings of the CPU kernels (a report, not a timed test):
//! `cargo bench -p gpukit-cpu --bench matmul_report`.

use std::time::Instant;

use gpukit_core::half::f16;
use gpukit_core::{DType, DevArg, Element, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, detected_simd_level, set_simd_limit};

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
        .unwrap();
}

/// Best-of time in seconds of `f`, repeated until ~0.3 s have passed.
fn time(mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || (start.elapsed().as_secs_f64() < 0.3 && runs < 50) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn bmm<T: Element>(kit: &Kit, s: usize) -> f64 {
    let a = kit.upload_f64(T::DTYPE, &vec![0.5; s * s]).unwrap();
    let b = kit.upload_f64(T::DTYPE, &vec![0.25; s * s]).unwrap();
    let c = kit.zeros(T::DTYPE, s * s).unwrap();
    let i = |v: usize| DevArg::I64(v as i64);
    let name = gpukit_core::abi::kernel_name("bmm", T::DTYPE);
    let t = time(|| {
        launch(
            kit,
            &name,
            &[
                (&c).into(),
                (&a).into(),
                (&b).into(),
                i(1),
                i(s),
                i(s),
                i(s),
                i(0),
                i(0),
            ],
        )
    });
    2.0 * (s * s * s) as f64 / t / 1e9
}

fn main() {
    let kit = Kit::from_device(Box::new(CpuDevice::new()));
    let levels: Vec<SimdLevel> = [SimdLevel::Avx512, SimdLevel::Avx2, SimdLevel::Scalar]
        .into_iter()
        .filter(|&l| l <= detected_simd_level())
        .collect();
    println!("threads: {}", rayon::current_num_threads());
    for &l in &levels {
        set_simd_limit(Some(l));
        for s in [256, 512, 1024] {
            if l == SimdLevel::Scalar && (s > 512 || std::env::var("PERF_BMM_ONLY").is_ok()) {
                continue;
            }
            println!(
                "{l:?} bmm {s}: f32 {:.1} GFLOP/s, f64 {:.1} GFLOP/s, f16 {:.1} GFLOP/s",
                bmm::<f32>(&kit, s),
                bmm::<f64>(&kit, s),
                bmm::<f16>(&kit, s)
            );
        }
        if std::env::var("PERF_BMM_ONLY").is_ok() {
            continue;
        }
        let n = 1 << 24;
        let x = kit.upload_f64(DType::F32, &vec![1.5; n]).unwrap();
        let y = kit.upload_f64(DType::F32, &vec![2.5; n]).unwrap();
        let o = kit.zeros(DType::F32, n).unwrap();
        let ni = DevArg::I64(n as i64);
        let t = time(|| {
            launch(
                &kit,
                "add_f32",
                &[(&o).into(), (&x).into(), (&y).into(), ni],
            )
        });
        println!("{l:?} add_f32 16M: {:.1} GB/s", 12.0 * n as f64 / t / 1e9);
        let t = time(|| launch(&kit, "exp_f32", &[(&o).into(), (&x).into(), ni]));
        println!("{l:?} exp_f32 16M: {:.2} Gelem/s", n as f64 / t / 1e9);
        let t = time(|| launch(&kit, "sum_f32", &[(&o).into(), (&x).into(), ni]));
        println!("{l:?} sum_f32 16M: {:.1} GB/s", 4.0 * n as f64 / t / 1e9);
        let t = time(|| {
            launch(
                &kit,
                "dot_f32",
                &[(&o).into(), (&x).into(), (&y).into(), ni],
            )
        });
        println!("{l:?} dot_f32 16M: {:.1} GB/s", 8.0 * n as f64 / t / 1e9);
        let h = kit.upload_f64(DType::F16, &vec![1.5; n]).unwrap();
        let oh = kit.zeros(DType::F16, 1).unwrap();
        let t = time(|| launch(&kit, "sum_f16", &[(&oh).into(), (&h).into(), ni]));
        println!("{l:?} sum_f16 16M: {:.1} GB/s", 2.0 * n as f64 / t / 1e9);
        let (r, c) = (4096i64, 4096i64);
        let t = time(|| {
            launch(
                &kit,
                "softmax_f32",
                &[(&o).into(), (&x).into(), DevArg::I64(r), DevArg::I64(c)],
            )
        });
        println!(
            "{l:?} softmax_f32 4096x4096: {:.2} Gelem/s",
            (r * c) as f64 / t / 1e9
        );
    }
    set_simd_limit(None);
}
