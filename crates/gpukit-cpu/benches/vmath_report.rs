//! Throughput of the portable math's lane forms, independent of memory: each function
//! over a 4096-element (L1-resident) buffer, repeated, at every SIMD level this CPU has,
//! one thread. Prints nanoseconds per element (best of several runs) and the same in
//! cycles at the nominal clock from `/proc/cpuinfo` when it is known.
//! `cargo bench -p gpukit-cpu --bench vmath_report` (`VMATH_ONLY=exp,tanh` picks).

use std::hint::black_box;
use std::time::Instant;

use gpukit_cpu::simd::{SimdLevel, levels, run_at, set_thread_simd_limit};
use gpukit_cpu::vmath::{LaneMath, SliceOp};

const N: usize = 4096;
const REPS: usize = 2000;

/// Nominal clock in GHz from /proc/cpuinfo's first `cpu MHz` line.
fn clock_ghz() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let l = s.lines().find(|l| l.starts_with("cpu MHz"))?;
    Some(l.split(':').nth(1)?.trim().parse::<f64>().ok()? / 1e3)
}

/// Best time per element (ns) of `f` mapped over `xs` at `level`.
fn per_elem<T: Copy + Send + Sync>(level: SimdLevel, xs: &[T], f: impl Fn(T) -> T + Copy) -> f64 {
    let mut out = xs.to_vec();
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        run_at(
            level,
            #[inline(always)]
            || {
                for _ in 0..REPS {
                    for (o, &x) in out.iter_mut().zip(black_box(xs)) {
                        *o = f(x);
                    }
                    black_box(&mut out);
                }
            },
        );
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / (REPS * xs.len()) as f64);
    }
    best
}

/// Best time per element (ns) of a slice function at `level` (the thread's SIMD limit
/// set to it), or `None` where it has no loop at that level.
fn per_elem_slice(level: SimdLevel, xs: &[f32], op: SliceOp) -> Option<f64> {
    set_thread_simd_limit(Some(level));
    let mut out = xs.to_vec();
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..REPS {
            if !f32::slice(op, Some(black_box(xs)), &mut out) {
                set_thread_simd_limit(None);
                return None;
            }
            black_box(&mut out);
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e9 / (REPS * xs.len()) as f64);
    }
    set_thread_simd_limit(None);
    Some(best)
}

fn main() {
    let only = std::env::var("VMATH_ONLY").ok();
    let want = |op: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x == op))
    };
    let ghz = clock_ghz();
    println!("nominal clock: {ghz:?} GHz; {N} elements x {REPS}, one thread");
    let x32: Vec<f32> = (0..N)
        .map(|j| ((j * 7919) % 2003) as f32 * 0.004 - 4.0)
        .collect();
    let x64: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
    let cyc = |ns: f64| {
        ghz.map(|g| format!(" ({:.2} cyc)", ns * g))
            .unwrap_or_default()
    };
    // A macro, not a table of fn pointers: each function must inline into its loop.
    macro_rules! report {
        ($name:literal, $f:expr) => {
            if want($name) {
                for level in levels() {
                    // `inline(always)`: a large lane form (erf f64) must not be
                    // left out of line, where it would lose the level's features.
                    let a = per_elem(
                        level,
                        &x32,
                        #[inline(always)]
                        |x: f32| $f(x),
                    );
                    let b = per_elem(
                        level,
                        &x64,
                        #[inline(always)]
                        |x: f64| $f(x),
                    );
                    println!(
                        "{:10} {level:?}: f32 {a:.3} ns/elem{}, f64 {b:.3} ns/elem{}",
                        $name,
                        cyc(a),
                        cyc(b)
                    );
                }
            }
        };
    }
    report!("exp", LaneMath::exp_l);
    report!("log", LaneMath::log_l);
    report!("tanh", LaneMath::tanh_l);
    report!("sigmoid", LaneMath::sigmoid_l);
    report!("erf", LaneMath::erf_l);
    report!("gelu", LaneMath::gelu_l);
    report!("gelu_tanh", LaneMath::gelu_tanh_l);
    report!("silu", LaneMath::silu_l);
    // The explicit-SIMD slice loops (f32), beside the lane forms' rows above.
    for (name, op) in [
        ("erf_slice", SliceOp::Erf),
        ("gelu_slice", SliceOp::Gelu),
        ("tanh_slice", SliceOp::Tanh),
        ("sigmoid_slice", SliceOp::Sigmoid),
    ] {
        if want(name) {
            for level in levels() {
                if let Some(a) = per_elem_slice(level, &x32, op) {
                    println!("{name:10} {level:?}: f32 {a:.3} ns/elem{}", cyc(a));
                }
            }
        }
    }
    report!("softplus", LaneMath::softplus_l);
}
