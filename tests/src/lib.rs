//! The cross-backend equivalence suite's shared parts: the backends under test, the
//! one bit-equality rule, and value/shape generators that reach every special value
//! and every tile edge.
//!
//! Every op's test is written once, generic over the backend: [`backends`] lists the
//! kits to run; adding a backend (CUDA, the PTX emulator) is one line there.

use gpukit::half::{bf16, f16};
use gpukit::numeric::same_bits;
use gpukit::{Element, Kit};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::io::Write;
use std::sync::OnceLock;

/// The backends every equivalence test runs on: `(name, kit)`. CPU always; CUDA when a
/// device opens. A backend that is not available on this machine is left out, and the
/// first call in each test binary says so on stderr, past the test harness's output
/// capture ("skipped: no CUDA device ..."), so a missing GPU is never a silent pass.
/// Kits are opened once per test binary and shared (a CUDA device loads every PTX
/// module when it opens).
pub fn backends() -> Vec<(&'static str, Kit)> {
    suite().0.clone()
}

/// The backends that can run a user kernel given as CUDA C source: all of
/// [`backends`], less CUDA and the PTX emulator when NVRTC or the CUDA headers are not
/// found (said once on stderr, past the capture, like every skip).
pub fn backends_compiling_cuda() -> Vec<(&'static str, Kit)> {
    static REPORTED: std::sync::Once = std::sync::Once::new();
    let ok = gpukit::cuda_compiler_available();
    backends()
        .into_iter()
        .filter(|(name, _)| {
            let keep = ok || *name == "cpu";
            if !keep {
                REPORTED.call_once(|| {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "gpukit-tests: skipped: user kernels in CUDA C on {name}: NVRTC \
                         (libnvrtc.so.12) or the CUDA headers (cuda_fp16.h) not found"
                    );
                });
            }
            keep
        })
        .collect()
}

/// Backends the suite would run but cannot on this machine, with the reason.
pub fn skipped_backends() -> Vec<(&'static str, String)> {
    suite().1.clone()
}

type Suite = (Vec<(&'static str, Kit)>, Vec<(&'static str, String)>);

fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(|| {
        let mut kits = vec![(
            "cpu",
            gpukit::cpu().expect("the CPU backend is always available"),
        )];
        let mut skipped = Vec::new();
        match gpukit::open("cuda") {
            Ok(k) => kits.push(("cuda", k)),
            Err(e) => skipped.push(("cuda", e.to_string())),
        }
        match gpukit::open("ptx-emu") {
            Ok(k) => kits.push(("ptx-emu", k)),
            Err(e) => skipped.push(("ptx-emu", e.to_string())),
        }
        let mut err = std::io::stderr().lock();
        for (name, why) in &skipped {
            let _ = writeln!(err, "gpukit-tests: skipped: no {name} device: {why}");
        }
        (kits, skipped)
    })
}

/// The proptest configuration of every equivalence test: [`cases`] cases, no
/// regression files.
pub fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Runs `f` on every backend of [`backends`] and compares its output with `want`
/// (the contract's equality, [`check_same_bits`]); the error names the backend.
pub fn on_backends<T: Element>(
    what: &str,
    want: &[T],
    f: impl Fn(&Kit) -> gpukit::Result<Vec<T>> + Sync,
) -> Result<(), TestCaseError> {
    on_kits(backends(), what, want, f)
}

/// [`on_backends`] over the given kits. The CPU kit also runs under
/// [`cpu_variants_now`] (other SIMD levels and thread counts), each compared alike.
pub fn on_kits<T: Element>(
    kits: Vec<(&'static str, Kit)>,
    what: &str,
    want: &[T],
    f: impl Fn(&Kit) -> gpukit::Result<Vec<T>> + Sync,
) -> Result<(), TestCaseError> {
    for (name, kit) in kits {
        let got = f(&kit).map_err(|e| TestCaseError::fail(format!("{name}: {what}: {e}")))?;
        check_same_bits(&format!("{name}: {what}"), &got, want).map_err(TestCaseError::fail)?;
        if name == "cpu" {
            for v in cpu_variants_now() {
                let vname = format!("{name}[{v}]");
                let got = v
                    .run(|| f(&kit))
                    .map_err(|e| TestCaseError::fail(format!("{vname}: {what}: {e}")))?;
                check_same_bits(&format!("{vname}: {what}"), &got, want)
                    .map_err(TestCaseError::fail)?;
            }
        }
    }
    Ok(())
}

/// A configuration the suite runs the CPU backend under besides its default: a cap on
/// the SIMD level and a thread count (a rayon pool of that size whose threads carry
/// the cap, see [`gpukit::cpu_simd::set_thread_simd_limit`]).
pub struct CpuVariant {
    level: gpukit::cpu_simd::SimdLevel,
    threads: usize,
    pool: rayon::ThreadPool,
}

impl CpuVariant {
    /// Runs `f` in this variant's pool, so every kernel it launches runs at the
    /// variant's level on the variant's threads.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }
}

impl std::fmt::Display for CpuVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.threads == 1 { "" } else { "s" };
        write!(f, "{:?}, {} thread{s}", self.level, self.threads)
    }
}

/// Every CPU variant: each SIMD level this CPU has (scalar, AVX2, AVX-512) × 1, 2 and
/// 3 threads.
pub fn cpu_variants() -> &'static [CpuVariant] {
    static V: OnceLock<Vec<CpuVariant>> = OnceLock::new();
    V.get_or_init(|| {
        let mut v = Vec::new();
        for level in gpukit::cpu_simd::levels() {
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(move |i| format!("gpukit-test-{level:?}-{threads}t-{i}"))
                    .start_handler(move |_| gpukit::cpu_simd::set_thread_simd_limit(Some(level)))
                    .build()
                    .expect("a rayon pool of 1-3 threads");
                v.push(CpuVariant {
                    level,
                    threads,
                    pool,
                });
            }
        }
        v
    })
}

/// The CPU variants the next comparison runs besides the default: by default one, in
/// rotation (so every variant meets every op many times over a test binary's cases);
/// all of them with `GPUKIT_TEST_CPU_VARIANTS=all`; none with `=none`.
pub fn cpu_variants_now() -> Vec<&'static CpuVariant> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let all = cpu_variants();
    match std::env::var("GPUKIT_TEST_CPU_VARIANTS").as_deref() {
        Ok("all") => all.iter().collect(),
        Ok("none") => Vec::new(),
        _ if all.is_empty() => Vec::new(),
        _ => vec![&all[NEXT.fetch_add(1, Ordering::Relaxed) % all.len()]],
    }
}

/// [`on_backends`] for an op with several outputs: `f` returns them in order and each
/// is compared with the same position of `want`.
pub fn on_backends_multi<T: Element>(
    what: &str,
    want: &[Vec<T>],
    f: impl Fn(&Kit) -> gpukit::Result<Vec<Vec<T>>> + Sync,
) -> Result<(), TestCaseError> {
    for (name, kit) in backends() {
        let got = f(&kit).map_err(|e| TestCaseError::fail(format!("{name}: {what}: {e}")))?;
        check_multi(name, what, &got, want)?;
        if name == "cpu" {
            for v in cpu_variants_now() {
                let vname = format!("{name}[{v}]");
                let got = v
                    .run(|| f(&kit))
                    .map_err(|e| TestCaseError::fail(format!("{vname}: {what}: {e}")))?;
                check_multi(&vname, what, &got, want)?;
            }
        }
    }
    Ok(())
}

fn check_multi<T: Element>(
    name: &str,
    what: &str,
    got: &[Vec<T>],
    want: &[Vec<T>],
) -> Result<(), TestCaseError> {
    if got.len() != want.len() {
        return Err(TestCaseError::fail(format!(
            "{name}: {what}: {} outputs, expected {}",
            got.len(),
            want.len()
        )));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        check_same_bits(&format!("{name}: {what} (output {i})"), g, w)
            .map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// Proptest cases per op × dtype: 256, or `$GPUKIT_CASES` for long runs.
pub fn cases() -> u32 {
    std::env::var("GPUKIT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

/// The contract's equality (rule 8), element by element: `to_bits()` equality, any NaN
/// equal to any NaN. `Err` describes the first difference. This is the one place the
/// rule is encoded; every comparison in the suite goes through it.
pub fn check_same_bits<T: Element>(what: &str, got: &[T], want: &[T]) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: length {} != expected {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(g, w)| !same_bits(*g, *w)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: element {i} of {}: got {:?} ({:x?}), want {:?} ({:x?})",
            got.len(),
            got[i],
            bytemuck_bytes(&got[i]),
            want[i],
            bytemuck_bytes(&want[i])
        )),
    }
}

fn bytemuck_bytes<T: Element>(v: &T) -> Vec<u8> {
    gpukit::bytemuck::bytes_of(v)
        .iter()
        .rev()
        .copied()
        .collect()
}

/// An element type the generators know: specials and conversion from random numbers.
pub trait TestElem: Element {
    /// The special values of the type: NaN, ±inf, ±0, subnormals, extremes.
    fn specials() -> Vec<Self>;
    /// A value from an f64 of moderate magnitude (rounded; integers truncated).
    fn from_moderate(v: f64) -> Self;
}

macro_rules! float_elem {
    ($t:ty, $from:expr, [$($s:expr),* $(,)?]) => {
        impl TestElem for $t {
            fn specials() -> Vec<Self> {
                vec![$($s),*]
            }
            fn from_moderate(v: f64) -> Self {
                $from(v)
            }
        }
    };
}

float_elem!(
    f32,
    |v: f64| v as f32,
    [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1e-30,
        3e38,
        1.0,
        -1.0,
    ]
);
float_elem!(
    f64,
    |v: f64| v,
    [
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        1e-300,
        1e300,
        1.0,
        -1.0,
    ]
);
float_elem!(
    f16,
    f16::from_f64,
    [
        f16::NAN,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::ZERO,
        f16::NEG_ZERO,
        f16::from_bits(1),
        f16::from_bits(0x83ff),
        f16::MIN_POSITIVE,
        f16::MAX,
        f16::MIN,
        f16::ONE,
        f16::NEG_ONE,
    ]
);
float_elem!(
    bf16,
    bf16::from_f64,
    [
        bf16::NAN,
        bf16::INFINITY,
        bf16::NEG_INFINITY,
        bf16::ZERO,
        bf16::NEG_ZERO,
        bf16::from_bits(1),
        bf16::from_bits(0x807f),
        bf16::MIN_POSITIVE,
        bf16::MAX,
        bf16::MIN,
        bf16::ONE,
        bf16::NEG_ONE,
    ]
);

impl TestElem for i64 {
    fn specials() -> Vec<Self> {
        vec![0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1]
    }
    fn from_moderate(v: f64) -> Self {
        (v * 1000.0) as i64
    }
}

impl TestElem for i32 {
    fn specials() -> Vec<Self> {
        vec![0, 1, -1, i32::MIN, i32::MAX, i32::MIN + 1]
    }
    fn from_moderate(v: f64) -> Self {
        (v * 1000.0) as i32
    }
}

/// One value: mostly moderate (±1e3, with fractions), sometimes huge or tiny
/// magnitudes, sometimes a special (NaN, ±inf, -0.0, subnormal, extremes).
pub fn value<T: TestElem>() -> impl Strategy<Value = T> {
    let specials = T::specials();
    prop_oneof![
        12 => (-1e3f64..1e3).prop_map(T::from_moderate),
        2 => (-30i32..30, -1.0f64..1.0).prop_map(|(e, m)| T::from_moderate(m * 2f64.powi(e))),
        1 => (0..specials.len()).prop_map(move |i| specials[i]),
    ]
}

/// A vector of `n` values.
pub fn values<T: TestElem>(n: usize) -> impl Strategy<Value = Vec<T>> {
    proptest::collection::vec(value::<T>(), n)
}

/// A length up to `max`: half the time an edge (0, 1, primes, sizes just past the lane,
/// tile and chunk sizes the kernels use), half the time uniform.
pub fn len_with_edges(max: usize) -> impl Strategy<Value = usize> {
    // 0, 1, primes, and sizes just past the tile and chunk sizes the kernels use.
    let edges: Vec<usize> = [
        0usize, 1, 2, 3, 5, 7, 13, 31, 32, 33, 63, 64, 65, 127, 129, 255, 257, 1023, 1025, 4093,
        8191, 8192, 8193, 16385, 65537,
    ]
    .into_iter()
    .filter(|&e| e <= max)
    .collect();
    prop_oneof![
        1 => (0..edges.len()).prop_map(move |i| edges[i]),
        1 => 0..=max,
    ]
}

/// A dimension for matrix shapes: 0, 1, primes and tile edges up to `max`.
pub fn dim(max: usize) -> impl Strategy<Value = usize> {
    let edges: Vec<usize> = [
        0usize, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65, 97,
    ]
    .into_iter()
    .filter(|&e| e <= max)
    .collect();
    prop_oneof![
        1 => (0..edges.len()).prop_map(move |i| edges[i]),
        1 => 0..=max,
    ]
}

/// The smallest input extent that gives a `k`-tap window dilated by `d` room after
/// padding `p0 + p1`: `len` raised to `d·(k−1)+1 − p0 − p1` when shorter.
pub fn window_fit(len: usize, k: usize, d: usize, p0: usize, p1: usize) -> usize {
    len.max((d * (k - 1) + 1).saturating_sub(p0 + p1))
}

/// Max-pooling geometries the conv suites draw: up to 2 images × 3 channels of up to
/// 9×9 (raised to fit the window), windows and strides up to 4, dilations up to 2, pads
/// up to 2 per side; only those where every window holds an input element.
pub fn pool_params() -> impl Strategy<Value = gpukit::ops::MaxPool2dParams> {
    (
        (1usize..=2, 1usize..=3, 1usize..=9, 1usize..=9),
        (1usize..=4, 1usize..=4, 1usize..=4, 1usize..=4),
        (1usize..=2, 1usize..=2),
        [0usize..=2, 0usize..=2, 0usize..=2, 0usize..=2],
    )
        .prop_map(|((n, c, h, w), (kh, kw, sh, sw), (dh, dw), pads)| {
            let mut p = gpukit::ops::MaxPool2dParams {
                pads,
                strides: [sh, sw],
                dilations: [dh, dw],
                ..gpukit::ops::MaxPool2dParams::new(n, c, h, w, kh, kw)
            };
            p.h = window_fit(p.h, kh, dh, pads[0], pads[2]);
            p.w = window_fit(p.w, kw, dw, pads[1], pads[3]);
            p
        })
        .prop_filter("every window holds an input element", |p| {
            gpukit::ops::max_pool2d_out_shape(p).is_ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equality_rule() {
        assert!(check_same_bits("x", &[f32::NAN, 1.0], &[-f32::NAN, 1.0]).is_ok());
        assert!(check_same_bits("x", &[0.0f32], &[-0.0]).is_err());
        assert!(check_same_bits("x", &[1i64], &[1, 2]).is_err());
        let e = check_same_bits("sum", &[1.0f64, 2.0], &[1.0, 2.0000000000000004]).unwrap_err();
        assert!(e.contains("element 1"), "{e}");
    }
}

pub mod child;
pub mod fill;
pub mod fuzzing;

/// Calls the generic function `$f::<T>()` for every dtype: f32, f64, f16, bf16, i64,
/// i32 (for the deterministic tests that cover each dtype in one test).
#[macro_export]
macro_rules! each_dtype {
    ($f:ident) => {{
        $f::<f32>();
        $f::<f64>();
        $f::<::gpukit::half::f16>();
        $f::<::gpukit::half::bf16>();
        $f::<i64>();
        $f::<i32>();
    }};
}
