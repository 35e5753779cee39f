//! **gpukit**: run numeric kernels on an NVIDIA GPU in a few lines, and the very same
//! kernels on the CPU with the same bits.
//!
//! Three layers a user can mix:
//! 1. one call: [`Kit::run`] over host slices ([`Binding`]s);
//! 2. device-resident buffers: [`Buf`], launched over with [`Kit::launch`];
//! 3. the operator family in [`ops`].
//!
//! ```
//! use gpukit::prelude::*;
//!
//! let kit = Kit::open_best()?; // GPUKIT_DEVICE, else the best GPU, else the CPU
//! let saxpy = KernelDef::new("saxpy").cpu(|blk| {
//!     let (a, x, y) = (blk.f32(0)?, blk.buf::<f32>(1)?, blk.buf::<f32>(2)?);
//!     for i in blk.thread_range(x.len()) {
//!         y.set(i, a.mul_add(x.get(i), y.get(i)));
//!     }
//!     Ok(())
//! });
//! let x = [1.0f32, 2.0, 3.0];
//! let mut y = [10.0f32, 20.0, 30.0];
//! let cfg = LaunchConfig::for_elements(x.len(), 256)?;
//! kit.run(&saxpy, cfg, &mut [Binding::F32(2.0), Binding::input(&x), Binding::inout(&mut y)])?;
//! assert_eq!(y, [12.0, 24.0, 36.0]);
//! # Ok::<(), gpukit::Error>(())
//! ```

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

pub mod demo;
pub mod host;
#[cfg(feature = "selftest")]
pub mod selftest;
#[cfg(feature = "selftest")]
mod selftest_attention;
#[cfg(feature = "selftest")]
mod selftest_cast;
#[cfg(feature = "selftest")]
mod selftest_common;
#[cfg(feature = "selftest")]
mod selftest_compare;
#[cfg(feature = "selftest")]
mod selftest_conv;
#[cfg(feature = "selftest")]
mod selftest_elements;
#[cfg(feature = "selftest")]
mod selftest_linalg;
#[cfg(feature = "selftest")]
mod selftest_movement;
#[cfg(feature = "selftest")]
mod selftest_norm;
#[cfg(feature = "selftest")]
mod selftest_norm_ext;
#[cfg(feature = "selftest")]
mod selftest_ops;
#[cfg(feature = "selftest")]
mod selftest_reduce_axes;
#[cfg(feature = "selftest")]
mod selftest_resize;

pub use gpukit_core::*;
pub use gpukit_ops as ops;
/// Loading and saving tensors: safetensors checkpoints, numpy's `.npy` and `.npz`
/// (feature `io`, on by default); see [`tensor::io`].
#[cfg(feature = "io")]
pub use gpukit_tensor::io;
/// The tensor API (shapes, views, numpy broadcasting) over [`ops`]; see [`Tensor`].
pub use gpukit_tensor::{self as tensor, Tensor};

/// The CPU backend's SIMD dispatch: the level its kernels use (detected at run time:
/// scalar, AVX2+FMA, AVX-512), and caps for tests and for reproducing another machine
/// (`GPUKIT_CPU_SIMD=scalar|avx2|avx512`). Every level gives the same bits.
#[cfg(feature = "cpu")]
pub use gpukit_cpu::simd as cpu_simd;
/// The PTX emulator backend itself (feature `ptx-emu`): its options (performance
/// counters), its launch log, and the roofline estimate of a launch on a real GPU
/// ([`emu::perf`]).
#[cfg(feature = "ptx-emu")]
pub use gpukit_emu as emu;

/// The environment variable naming the device [`open_best`] opens (`cpu`, `cuda`,
/// `cuda:1`).
pub const DEVICE_ENV: &str = "GPUKIT_DEVICE";

/// What a device spec string names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The CPU backend.
    Cpu,
    /// CUDA device by ordinal.
    Cuda(usize),
    /// The PTX emulator: the CUDA kernels executed on the CPU (memcheck and racecheck).
    PtxEmu,
}

impl DeviceSpec {
    /// Parses `cpu`, `cuda` (= `cuda:0`), `cuda:N` or `ptx-emu` (case-insensitive,
    /// trimmed).
    ///
    /// Errors: [`Error::DeviceUnavailable`] naming the spec for anything else.
    pub fn parse(spec: &str) -> Result<DeviceSpec> {
        let s = spec.trim().to_ascii_lowercase();
        let bad = |reason: &str| Error::DeviceUnavailable {
            device: spec.to_string(),
            reason: reason.to_string(),
        };
        match s.as_str() {
            "cpu" => Ok(DeviceSpec::Cpu),
            "cuda" | "gpu" => Ok(DeviceSpec::Cuda(0)),
            "ptx-emu" | "ptx-emu:0" | "emu" => Ok(DeviceSpec::PtxEmu),
            _ => match s.strip_prefix("cuda:") {
                Some(n) => n
                    .parse()
                    .map(DeviceSpec::Cuda)
                    .map_err(|_| bad("the ordinal after `cuda:` is not a number")),
                None => Err(bad(
                    "not a device spec (expected `cpu`, `cuda`, `cuda:N` or `ptx-emu`)",
                )),
            },
        }
    }
}

/// Every device this build can open: CUDA devices (with the `cuda` feature and a
/// driver), then the CPU (with the `cpu` feature), then the PTX emulator (with the
/// `ptx-emu` feature).
pub fn devices() -> Vec<DeviceInfo> {
    let gpus: Vec<DeviceInfo> = {
        #[cfg(feature = "cuda")]
        {
            gpukit_cuda::devices()
        }
        #[cfg(not(feature = "cuda"))]
        {
            Vec::new()
        }
    };
    let cpus: Option<DeviceInfo> = {
        #[cfg(feature = "cpu")]
        {
            Some(gpukit_cpu::CpuDevice::new().info().clone())
        }
        #[cfg(not(feature = "cpu"))]
        {
            None
        }
    };
    let emu: Option<DeviceInfo> = {
        #[cfg(feature = "ptx-emu")]
        {
            Some(gpukit_emu::EmuDevice::new().info().clone())
        }
        #[cfg(not(feature = "ptx-emu"))]
        {
            None
        }
    };
    gpus.into_iter().chain(cpus).chain(emu).collect()
}

/// Opens the device `spec` names (see [`DeviceSpec::parse`]).
///
/// Errors: [`Error::DeviceUnavailable`] for a bad spec, a backend this build lacks, or
/// a device that is not there.
pub fn open(spec: &str) -> Result<Kit> {
    match DeviceSpec::parse(spec)? {
        DeviceSpec::Cpu => cpu_kit(),
        DeviceSpec::Cuda(n) => cuda_kit(n, spec),
        DeviceSpec::PtxEmu => emu_kit(spec),
    }
}

#[cfg(feature = "ptx-emu")]
fn emu_kit(_spec: &str) -> Result<Kit> {
    Ok(Kit::from_device(Box::new(gpukit_emu::EmuDevice::new())))
}

#[cfg(not(feature = "ptx-emu"))]
fn emu_kit(spec: &str) -> Result<Kit> {
    Err(Error::DeviceUnavailable {
        device: spec.to_string(),
        reason: "gpukit was built without the `ptx-emu` feature".into(),
    })
}

#[cfg(feature = "cpu")]
fn cpu_kit() -> Result<Kit> {
    Ok(Kit::from_device(Box::new(gpukit_cpu::CpuDevice::new())))
}

#[cfg(not(feature = "cpu"))]
fn cpu_kit() -> Result<Kit> {
    Err(Error::DeviceUnavailable {
        device: "cpu".into(),
        reason: "gpukit was built without the `cpu` feature".into(),
    })
}

#[cfg(feature = "cuda")]
fn cuda_kit(ordinal: usize, _spec: &str) -> Result<Kit> {
    gpukit_cuda::open(ordinal)
}

#[cfg(not(feature = "cuda"))]
fn cuda_kit(_ordinal: usize, spec: &str) -> Result<Kit> {
    Err(Error::DeviceUnavailable {
        device: spec.to_string(),
        reason: "gpukit was built without the `cuda` feature".into(),
    })
}

/// The index of the best GPU among `gpus`: highest compute capability, most memory
/// breaking ties, lowest ordinal breaking those. `None` if empty.
pub fn best_gpu(gpus: &[DeviceInfo]) -> Option<usize> {
    gpus.iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| {
            (a.compute_capability, a.total_memory)
                .cmp(&(b.compute_capability, b.total_memory))
                .then(b.ordinal.cmp(&a.ordinal))
        })
        .map(|(i, _)| i)
}

/// Opens the device a caller who does not care should get: `$GPUKIT_DEVICE` when set;
/// otherwise the CUDA device with the highest compute capability (memory breaking
/// ties); otherwise the CPU.
///
/// Errors: [`Error::DeviceUnavailable`] when `$GPUKIT_DEVICE` names a device that
/// cannot be opened (no silent fallback from an explicit choice), or when no backend
/// at all is available.
pub fn open_best() -> Result<Kit> {
    if let Ok(spec) = std::env::var(DEVICE_ENV)
        && !spec.trim().is_empty()
    {
        return open(&spec);
    }
    #[cfg(feature = "cuda")]
    {
        let gpus = gpukit_cuda::devices();
        match best_gpu(&gpus) {
            Some(i) => match gpukit_cuda::open(gpus[i].ordinal) {
                Ok(kit) => return Ok(kit),
                Err(e) => log::debug!(
                    "gpukit: not using cuda:{}: {e}; falling back to the CPU",
                    gpus[i].ordinal
                ),
            },
            None => log::debug!(
                "gpukit: no CUDA device ({}); falling back to the CPU",
                cuda_status().unwrap_or_default()
            ),
        }
    }
    #[cfg(not(feature = "cuda"))]
    log::debug!("gpukit: built without the `cuda` feature; using the CPU");
    cpu_kit()
}

/// Why this build finds no CUDA device, in words ("built without the `cuda` feature",
/// "no CUDA driver library (libcuda.so.1) on the library path", "the driver reports no
/// device", ...); `None` when the driver reports devices.
pub fn cuda_status() -> Option<String> {
    #[cfg(feature = "cuda")]
    {
        gpukit_cuda::why_none()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Some("gpukit was built without the `cuda` feature".into())
    }
}

/// Whether user kernels written in CUDA C can be compiled on this machine: NVRTC
/// (`libnvrtc.so.12`) is on the library path and the CUDA headers with `cuda_fp16.h`
/// are found (see `gpukit_cuda::nvrtc::include_dirs`). The CUDA backend and the PTX
/// emulator need it for `KernelDef::cuda` sources; PTX and the built-in kernels need
/// nothing.
pub fn cuda_compiler_available() -> bool {
    #[cfg(any(feature = "cuda", feature = "ptx-emu"))]
    {
        gpukit_cuda::nvrtc::available() && !gpukit_cuda::nvrtc::include_dirs().is_empty()
    }
    #[cfg(not(any(feature = "cuda", feature = "ptx-emu")))]
    {
        false
    }
}

/// Opens the CPU backend. Errors: [`Error::DeviceUnavailable`] without the `cpu` feature.
pub fn cpu() -> Result<Kit> {
    cpu_kit()
}

/// `Kit::open_best()`, `Kit::cpu()` and `Kit::open(spec)` as associated functions
/// (bring into scope with `use gpukit::prelude::*`).
pub trait KitOpen: Sized {
    /// See [`open_best`].
    fn open_best() -> Result<Self>;
    /// See [`cpu`].
    fn cpu() -> Result<Self>;
    /// See [`open`].
    fn open(spec: &str) -> Result<Self>;
}

impl KitOpen for Kit {
    fn open_best() -> Result<Kit> {
        open_best()
    }
    fn cpu() -> Result<Kit> {
        cpu()
    }
    fn open(spec: &str) -> Result<Kit> {
        open(spec)
    }
}

/// Everything a typical user needs, in one `use`.
pub mod prelude {
    pub use crate::KitOpen;
    pub use gpukit_core::{
        Binding, BlockCtx, Buf, DType, DevArg, Dim3, Element, Error, KernelDef, Kit, LaunchConfig,
        Result,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_or_fail_clearly() {
        assert_eq!(DeviceSpec::parse(" CPU ").unwrap(), DeviceSpec::Cpu);
        assert_eq!(DeviceSpec::parse("cuda").unwrap(), DeviceSpec::Cuda(0));
        assert_eq!(DeviceSpec::parse("cuda:3").unwrap(), DeviceSpec::Cuda(3));
        assert!(matches!(
            DeviceSpec::parse("cuda:x"),
            Err(Error::DeviceUnavailable { .. })
        ));
        assert!(matches!(
            DeviceSpec::parse("tpu"),
            Err(Error::DeviceUnavailable { .. })
        ));
    }

    fn gpu(ordinal: usize, cc: (u32, u32), mem: u64) -> DeviceInfo {
        DeviceInfo {
            backend: Backend::Cuda,
            ordinal,
            name: format!("gpu{ordinal}"),
            compute_capability: Some(cc),
            total_memory: mem,
            parallelism: 1,
        }
    }

    #[test]
    fn best_gpu_prefers_capability_then_memory_then_ordinal() {
        assert_eq!(best_gpu(&[]), None);
        // An old card enumerated first loses to a newer one.
        let v = [gpu(0, (5, 2), 4 << 30), gpu(1, (8, 9), 24 << 30)];
        assert_eq!(best_gpu(&v), Some(1));
        let v = [gpu(0, (9, 0), 80 << 30), gpu(1, (9, 0), 141 << 30)];
        assert_eq!(best_gpu(&v), Some(1));
        let v = [gpu(0, (9, 0), 80 << 30), gpu(1, (9, 0), 80 << 30)];
        assert_eq!(best_gpu(&v), Some(0));
    }

    #[test]
    fn cuda_without_the_backend_is_a_clean_error() {
        assert!(matches!(
            open("cuda:7"),
            Err(Error::DeviceUnavailable { .. })
        ));
        assert_eq!(open("cpu").unwrap().info().backend, Backend::Cpu);
    }
}
