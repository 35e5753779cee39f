//! Ad-hoc GFLOP/s of the GEMM family (a report, no timed assertion):
//! `cargo bench -p gpukit-cpu --bench gemm_report`.
//! `GEMM_PERF_FILTER=sgemm,conv` picks cases by name.

use std::time::Instant;

use gpukit_core::{DType, DevArg, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
        .unwrap();
}

/// This process's CPU time (user + system) in seconds, from /proc (0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some(rest) = s.rsplit(')').next() else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the ')'.
    (tick(11) + tick(12)) / 100.0
}

/// Best-of wall time in seconds of `f`, repeated until ~1.5 s have passed, and the
/// CPU time per run divided by the thread count (what the wall time would be on an
/// otherwise idle machine with perfect scaling; robust to other load).
fn time(mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    let start = Instant::now();
    let c0 = cpu_seconds();
    let mut runs = 0;
    while runs < 3 || (start.elapsed().as_secs_f64() < 1.5 && runs < 2000) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    let cpu = (cpu_seconds() - c0) / runs as f64 / rayon::current_num_threads() as f64;
    CPU.with(|c| c.set((best, cpu)));
    best
}

thread_local! {
    static CPU: std::cell::Cell<(f64, f64)> = const { std::cell::Cell::new((0.0, 0.0)) };
}

fn data(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919) % 2000) as f64 / 1000.0 - 1.0)
        .collect()
}

fn i(v: usize) -> DevArg<'static> {
    DevArg::I64(v as i64)
}

fn want(case: &str) -> bool {
    match std::env::var("GEMM_PERF_FILTER") {
        Ok(f) => f.split(',').any(|p| case.contains(p.trim())),
        Err(_) => true,
    }
}

fn bmm(kit: &Kit, d: DType, batch: usize, m: usize, k: usize, n: usize) -> f64 {
    let a = kit.upload_f64(d, &data(batch * m * k)).unwrap();
    let b = kit.upload_f64(d, &data(batch * k * n)).unwrap();
    let c = kit.zeros(d, batch * m * n).unwrap();
    let name = gpukit_core::abi::kernel_name("bmm", d);
    let args = [
        (&c).into(),
        (&a).into(),
        (&b).into(),
        i(batch),
        i(m),
        i(k),
        i(n),
        i(m * k),
        i(k * n),
    ];
    let t = time(|| launch(kit, &name, &args));
    2.0 * (batch * m * k * n) as f64 / t / 1e9
}

fn gemm(kit: &Kit, d: DType, m: usize, k: usize, n: usize, trans: bool, ta: bool) -> f64 {
    let a = kit.upload_f64(d, &data(m * k)).unwrap();
    let b = kit.upload_f64(d, &data(k * n)).unwrap();
    let c = kit.upload_f64(d, &data(m * n)).unwrap();
    let bias = kit.upload_f64(d, &data(n)).unwrap();
    let y = kit.zeros(d, m * n).unwrap();
    let name = gpukit_core::abi::kernel_name("gemm", d);
    let args = [
        (&y).into(),
        (&a).into(),
        (&b).into(),
        (&c).into(),
        (&bias).into(),
        i(m),
        i(k),
        i(n),
        i(trans as usize),
        i(1),
        i(1),
        DevArg::F64(1.5),
        DevArg::F64(0.5),
        i(ta as usize),
        i(n),
        i(1),
    ];
    let t = time(|| launch(kit, &name, &args));
    2.0 * (m * k * n) as f64 / t / 1e9
}

fn conv(kit: &Kit, d: DType, n: usize, ci: usize, hw: usize, co: usize, groups: usize) -> f64 {
    let x = kit.upload_f64(d, &data(n * ci * hw * hw)).unwrap();
    let w = kit.upload_f64(d, &data(co * ci / groups * 9)).unwrap();
    let bias = kit.upload_f64(d, &data(co)).unwrap();
    let y = kit.zeros(d, n * co * hw * hw).unwrap();
    let name = gpukit_core::abi::kernel_name("conv2d", d);
    let args = [
        (&y).into(),
        (&x).into(),
        (&w).into(),
        (&bias).into(),
        i(n),
        i(ci),
        i(hw),
        i(hw),
        i(co),
        i(3),
        i(3),
        i(hw),
        i(hw),
        i(1),
        i(1),
        i(1),
        i(1),
        i(1),
        i(1),
        i(groups),
        i(1),
    ];
    let t = time(|| launch(kit, &name, &args));
    2.0 * (n * co * hw * hw * ci / groups * 9) as f64 / t / 1e9
}

fn conv_t(kit: &Kit, d: DType, n: usize, ci: usize, hw: usize, co: usize) -> f64 {
    // Stride 2, kernel 3, pad 1: oh = (hw-1)*2 - 2 + 3 = 2hw - 1.
    let oh = 2 * hw - 1;
    let x = kit.upload_f64(d, &data(n * ci * hw * hw)).unwrap();
    let w = kit.upload_f64(d, &data(co * ci * 9)).unwrap();
    let bias = kit.upload_f64(d, &data(co)).unwrap();
    let y = kit.zeros(d, n * co * oh * oh).unwrap();
    let name = gpukit_core::abi::kernel_name("conv_transpose2d", d);
    let args = [
        (&y).into(),
        (&x).into(),
        (&w).into(),
        (&bias).into(),
        i(n),
        i(ci),
        i(hw),
        i(hw),
        i(co),
        i(3),
        i(3),
        i(oh),
        i(oh),
        i(1),
        i(1),
        i(2),
        i(2),
        i(1),
        i(1),
        i(1),
        i(1),
    ];
    let t = time(|| launch(kit, &name, &args));
    // Useful work: every input pixel times every kernel tap.
    2.0 * (n * co * hw * hw * ci * 9) as f64 / t / 1e9
}

/// A named benchmark returning GFLOP/s.
type Case<'a> = (&'a str, Box<dyn Fn() -> f64 + 'a>);

fn main() {
    let kit = Kit::from_device(Box::new(CpuDevice::new()));
    println!("threads: {}", rayon::current_num_threads());
    let cases: Vec<Case<'_>> = vec![
        (
            "sgemm 1024",
            Box::new(|| bmm(&kit, DType::F32, 1, 1024, 1024, 1024)),
        ),
        (
            "dgemm 1024",
            Box::new(|| bmm(&kit, DType::F64, 1, 1024, 1024, 1024)),
        ),
        (
            "sgemm 256",
            Box::new(|| bmm(&kit, DType::F32, 1, 256, 256, 256)),
        ),
        (
            "hgemm f16 512",
            Box::new(|| bmm(&kit, DType::F16, 1, 512, 512, 512)),
        ),
        (
            "bmm f32 12x512x64x512",
            Box::new(|| bmm(&kit, DType::F32, 12, 512, 64, 512)),
        ),
        (
            "gemm-op f32 1024 (c, bias, alpha, beta)",
            Box::new(|| gemm(&kit, DType::F32, 1024, 1024, 1024, false, false)),
        ),
        (
            "gemm-op f32 1024 trans_b",
            Box::new(|| gemm(&kit, DType::F32, 1024, 1024, 1024, true, false)),
        ),
        (
            "gemm-op f32 1024 trans_a",
            Box::new(|| gemm(&kit, DType::F32, 1024, 1024, 1024, false, true)),
        ),
        (
            "gemm-op f32 1024 trans_a trans_b",
            Box::new(|| gemm(&kit, DType::F32, 1024, 1024, 1024, true, true)),
        ),
        // examples/minilm's products (4 sentences x 20 tokens, hidden 384, FFN 1536,
        // 12 heads of 32).
        (
            "bmm f32 minilm 80x384x384",
            Box::new(|| bmm(&kit, DType::F32, 1, 80, 384, 384)),
        ),
        (
            "bmm f32 minilm 80x384x1536",
            Box::new(|| bmm(&kit, DType::F32, 1, 80, 384, 1536)),
        ),
        (
            "bmm f32 minilm 80x1536x384",
            Box::new(|| bmm(&kit, DType::F32, 1, 80, 1536, 384)),
        ),
        (
            "gemm-op f32 minilm 80x384x1536 (c, bias, alpha, beta)",
            Box::new(|| gemm(&kit, DType::F32, 80, 384, 1536, false, false)),
        ),
        (
            "bmm f32 minilm scores 48x20x32x20",
            Box::new(|| bmm(&kit, DType::F32, 48, 20, 32, 20)),
        ),
        (
            "bmm f32 minilm context 48x20x20x32",
            Box::new(|| bmm(&kit, DType::F32, 48, 20, 20, 32)),
        ),
        (
            "gemm-op f32 encoder 1024x768x768",
            Box::new(|| gemm(&kit, DType::F32, 1024, 768, 768, false, false)),
        ),
        (
            "gemm-op f32 encoder 1024x768x3072",
            Box::new(|| gemm(&kit, DType::F32, 1024, 768, 3072, false, false)),
        ),
        (
            "gemm-op f32 encoder 1024x3072x768",
            Box::new(|| gemm(&kit, DType::F32, 1024, 3072, 768, false, false)),
        ),
        (
            "gemm-op f32 280x384x1536 trans_b",
            Box::new(|| gemm(&kit, DType::F32, 280, 384, 1536, true, false)),
        ),
        (
            "conv f32 64->64 3x3 56x56",
            Box::new(|| conv(&kit, DType::F32, 1, 64, 56, 64, 1)),
        ),
        (
            "conv f32 256->256 3x3 14x14",
            Box::new(|| conv(&kit, DType::F32, 1, 256, 14, 256, 1)),
        ),
        (
            "conv f32 64->64 g8 3x3 56x56",
            Box::new(|| conv(&kit, DType::F32, 1, 64, 56, 64, 8)),
        ),
        (
            "conv_t f32 64->64 3x3 s2 28x28",
            Box::new(|| conv_t(&kit, DType::F32, 1, 64, 28, 64)),
        ),
    ];
    for (name, f) in cases {
        if want(name) {
            let g = f();
            let (best, cpu) = CPU.with(|c| c.get());
            // The same flop count over the CPU-time estimate.
            println!(
                "{name}: {g:.1} GFLOP/s (cpu-time based: {:.1})",
                g * best / cpu
            );
        }
    }
}
