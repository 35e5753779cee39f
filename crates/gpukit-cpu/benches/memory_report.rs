//! Ad-hoc timings of the memory-bound and transcendental kernels (a report):
//! `cargo bench -p gpukit-cpu --bench memory_report`.
//! Rates are GB/s of input read plus output written (f32).

use std::time::Instant;

use gpukit_core::{DType, DevArg, Kit, LaunchConfig};
use gpukit_cpu::CpuDevice;

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
        .unwrap();
}

/// Best-of time in seconds of `f`, repeated until ~0.5 s have passed.
fn time(mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    let start = Instant::now();
    let mut runs = 0;
    while runs < 3 || (start.elapsed().as_secs_f64() < 0.5 && runs < 50) {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn main() {
    let kit = Kit::from_device(Box::new(CpuDevice::new()));
    println!("threads: {}", rayon::current_num_threads());
    let i = |v: usize| DevArg::I64(v as i64);
    let n = 1 << 24;
    let data: Vec<f64> = (0..n)
        .map(|j| ((j * 7919) % 2003) as f64 * 0.004 - 4.0)
        .collect();
    let x = kit.upload_f64(DType::F32, &data).unwrap();
    let o = kit.zeros(DType::F32, n).unwrap();
    let only = std::env::var("PERF_ONLY").ok();
    let want = |op: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x == op))
    };
    for op in ["exp", "erf", "tanh", "sigmoid", "gelu", "gelu_tanh", "log"] {
        if !want(op) {
            continue;
        }
        let name = format!("{op}_f32");
        let t = time(|| launch(&kit, &name, &[(&o).into(), (&x).into(), i(n)]));
        println!(
            "{op} f32 16Mi: {:.2} GB/s ({:.2} ns/elem)",
            8.0 * n as f64 / t / 1e9,
            t / n as f64 * 1e9
        );
    }
    let (r, c) = (4096usize, 1024usize);
    if want("softmax") {
        let t = time(|| launch(&kit, "softmax_f32", &[(&o).into(), (&x).into(), i(r), i(c)]));
        println!(
            "softmax f32 4096x1024: {:.2} GB/s",
            8.0 * (r * c) as f64 / t / 1e9
        );
    }
    if want("softmax_axis") {
        let t = time(|| {
            launch(
                &kit,
                "softmax_axis_f32",
                &[(&o).into(), (&x).into(), i(r), i(c), i(1)],
            )
        });
        println!(
            "softmax_axis(last) f32 4096x1024: {:.2} GB/s",
            8.0 * (r * c) as f64 / t / 1e9
        );
    }
    if want("softmax_axis") {
        let t = time(|| {
            launch(
                &kit,
                "softmax_axis_f32",
                &[(&o).into(), (&x).into(), i(64), i(64), i(1024)],
            )
        });
        println!(
            "softmax_axis(mid) f32 64x64x1024: {:.2} GB/s",
            8.0 * (64 * 64 * 1024) as f64 / t / 1e9
        );
    }
    let (r, c) = (4096usize, 768usize);
    let sc = kit.upload_f64(DType::F32, &vec![1.25; c]).unwrap();
    let bi = kit.upload_f64(DType::F32, &vec![0.5; c]).unwrap();
    if want("layer_norm") {
        let t = time(|| {
            launch(
                &kit,
                "layer_norm_f32",
                &[
                    (&o).into(),
                    (&x).into(),
                    (&sc).into(),
                    (&bi).into(),
                    i(r),
                    i(c),
                    DevArg::F64(1e-5),
                ],
            )
        });
        println!(
            "layer_norm f32 4096x768: {:.2} GB/s",
            8.0 * (r * c) as f64 / t / 1e9
        );
    }
    let (nb, ch, s) = (32usize, 64usize, 56 * 56);
    let p = kit.upload_f64(DType::F32, &vec![1.0; ch]).unwrap();
    if want("batch_norm") {
        let t = time(|| {
            launch(
                &kit,
                "batch_norm_f32",
                &[
                    (&o).into(),
                    (&x).into(),
                    (&p).into(),
                    (&p).into(),
                    (&p).into(),
                    (&p).into(),
                    i(nb),
                    i(ch),
                    i(s),
                    DevArg::F64(1e-5),
                ],
            )
        });
        println!(
            "batch_norm f32 32x64x3136: {:.2} GB/s",
            8.0 * (nb * ch * s) as f64 / t / 1e9
        );
    }
    if want("add") {
        let t = time(|| {
            launch(
                &kit,
                "add_f32",
                &[(&o).into(), (&x).into(), (&x).into(), i(n)],
            )
        });
        println!("add f32 16Mi: {:.2} GB/s", 12.0 * n as f64 / t / 1e9);
    }
    if want("sum") {
        let t = time(|| launch(&kit, "sum_f32", &[(&o).into(), (&x).into(), i(n)]));
        println!("sum f32 16Mi: {:.2} GB/s", 4.0 * n as f64 / t / 1e9);
    }
    let xh = kit.upload_f64(DType::F16, &data).unwrap();
    let oh = kit.zeros(DType::F16, n).unwrap();
    if want("gelu") {
        let t = time(|| launch(&kit, "gelu_f16", &[(&oh).into(), (&xh).into(), i(n)]));
        println!("gelu f16 16Mi: {:.2} GB/s", 4.0 * n as f64 / t / 1e9);
    }
    if want("exp") {
        let t = time(|| launch(&kit, "exp_f16", &[(&oh).into(), (&xh).into(), i(n)]));
        println!("exp f16 16Mi: {:.2} GB/s", 4.0 * n as f64 / t / 1e9);
    }
}
