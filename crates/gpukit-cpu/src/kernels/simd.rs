//! Runtime SIMD dispatch: which instruction set the kernels use, detected once, with a
//! limit for tests and for reproducing a CI machine (`GPUKIT_CPU_SIMD=scalar|avx2|avx512`
//! or [`set_simd_limit`]). Every level gives the same bits; only the speed differs.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level of the CPU kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SimdLevel {
    /// Portable Rust (`mul_add` through the library when the build lacks FMA).
    Scalar,
    /// x86-64 AVX2 + FMA + F16C.
    Avx2,
    /// x86-64 AVX-512F (with AVX2, FMA, F16C).
    Avx512,
}

impl SimdLevel {
    fn from_u8(v: u8) -> SimdLevel {
        match v {
            0 => SimdLevel::Scalar,
            1 => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        }
    }

    /// Parses `scalar`, `avx2` or `avx512`.
    pub fn parse(s: &str) -> Option<SimdLevel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "scalar" | "none" | "off" => Some(SimdLevel::Scalar),
            "avx2" => Some(SimdLevel::Avx2),
            "avx512" | "avx512f" => Some(SimdLevel::Avx512),
            _ => None,
        }
    }
}

/// The best level this CPU supports.
pub fn detected_simd_level() -> SimdLevel {
    static DETECTED: OnceLock<SimdLevel> = OnceLock::new();
    *DETECTED.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> SimdLevel {
    let avx2 = is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c");
    if avx2 && is_x86_feature_detected!("avx512f") {
        SimdLevel::Avx512
    } else if avx2 {
        SimdLevel::Avx2
    } else {
        SimdLevel::Scalar
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> SimdLevel {
    SimdLevel::Scalar
}

const UNSET: u8 = u8::MAX;
static LIMIT: AtomicU8 = AtomicU8::new(UNSET);

thread_local! {
    /// This thread's own cap (see [`set_thread_simd_limit`]); `UNSET` defers to the
    /// process-wide one.
    static THREAD_LIMIT: Cell<u8> = const { Cell::new(UNSET) };
}

fn limit() -> SimdLevel {
    let t = THREAD_LIMIT.with(Cell::get);
    if t != UNSET {
        return SimdLevel::from_u8(t);
    }
    let v = LIMIT.load(Ordering::Relaxed);
    if v != UNSET {
        return SimdLevel::from_u8(v);
    }
    static ENV: OnceLock<SimdLevel> = OnceLock::new();
    *ENV.get_or_init(|| {
        std::env::var("GPUKIT_CPU_SIMD")
            .ok()
            .and_then(|s| SimdLevel::parse(&s))
            .unwrap_or(SimdLevel::Avx512)
    })
}

/// Caps the level the kernels use (process-wide); `None` restores the default (the
/// `GPUKIT_CPU_SIMD` environment variable, else no cap). Results do not change.
pub fn set_simd_limit(limit: Option<SimdLevel>) {
    LIMIT.store(limit.map_or(UNSET, |l| l as u8), Ordering::Relaxed);
}

/// Caps the level for kernel work *run on the calling thread* (`None`: defer to the
/// process-wide cap of [`set_simd_limit`]). Kernels read the level on whichever thread
/// runs each piece of their work, so set it on every thread of a rayon pool (in its
/// `start_handler`) and install the launch in that pool: every kernel then runs at that
/// level while other threads keep theirs. This is how the test suite runs the same op
/// at several levels and thread counts side by side. Results do not change.
pub fn set_thread_simd_limit(limit: Option<SimdLevel>) {
    THREAD_LIMIT.with(|c| c.set(limit.map_or(UNSET, |l| l as u8)));
}

/// The level the kernels use now: the detected level, capped by the limit.
pub fn simd_level() -> SimdLevel {
    detected_simd_level().min(limit())
}

/// Runs `f` compiled for `level` (its inlined body may use that instruction set).
///
/// # Safety
/// The CPU must support `level` (pass [`simd_level`]).
#[inline(always)]
pub(crate) unsafe fn with_level<R>(level: SimdLevel, f: impl FnOnce() -> R) -> R {
    match level {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller guarantees the CPU supports the level.
        SimdLevel::Avx512 => unsafe { in_avx512(f) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { in_avx2(f) },
        _ => f(),
    }
}

/// Runs `f` with the detected level's features (see [`with_level`]).
#[inline(always)]
pub(crate) fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: `simd_level` never exceeds what the CPU supports.
    unsafe { with_level(simd_level(), f) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma,f16c")]
unsafe fn in_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn in_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Every level this CPU supports, lowest first (for tests that compare levels).
pub fn levels() -> Vec<SimdLevel> {
    [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= detected_simd_level())
        .collect()
}

/// Runs `f` compiled for `level`, or for the best supported level below it.
#[inline(always)]
pub fn run_at<R>(level: SimdLevel, f: impl FnOnce() -> R) -> R {
    let level = level.min(detected_simd_level());
    // SAFETY: capped at the detected level just above.
    unsafe { with_level(level, f) }
}
