//! The traits a backend implements: [`Device`], [`Buffer`], [`Kernel`].
//!
//! Backends implement *kernels*, not ops: a device allocates, copies, loads kernels by
//! name or from a [`KernelDef`], and launches them over [`KernelArg`]s. Everything
//! above (validation, shapes, pools, profiling) is backend-independent.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{DType, KernelDef, LaunchConfig, Result};

/// An address in a device's memory space (a host address on the CPU backend, a
/// `CUdeviceptr` on CUDA). Plain data: holding one keeps nothing alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DevicePtr(pub u64);

impl DevicePtr {
    /// The null address (what an absent buffer carries).
    pub const NULL: DevicePtr = DevicePtr(0);

    /// This address plus `bytes` (wrapping: addresses are opaque numbers).
    pub const fn add(self, bytes: usize) -> DevicePtr {
        DevicePtr(self.0.wrapping_add(bytes as u64))
    }
}

/// Which kind of backend a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU backend (rayon-tiled Rust kernels).
    Cpu,
    /// An NVIDIA GPU through the CUDA driver.
    Cuda,
    /// The PTX emulator (CUDA kernels executed on the CPU).
    PtxEmu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::PtxEmu => "ptx-emu",
        })
    }
}

/// The [`DeviceInfo::name`] of the census kit (`gpukit::emu::EmuDevice::census`): a
/// device that validates and records every launch and runs no kernel, so a program that
/// checks its results (the selftest) knows they are not computed.
pub const CENSUS_DEVICE_NAME: &str = "gpukit census (records launches, runs nothing)";

/// What a device is, for tables and for choosing the best one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The backend kind.
    pub backend: Backend,
    /// Ordinal among devices of this backend.
    pub ordinal: usize,
    /// Human-readable name (GPU model, CPU model).
    pub name: String,
    /// CUDA compute capability `(major, minor)`; `None` on non-CUDA devices.
    pub compute_capability: Option<(u32, u32)>,
    /// Total memory in bytes.
    pub total_memory: u64,
    /// Parallel units: SMs on a GPU, worker threads on the CPU.
    pub parallelism: usize,
}

impl DeviceInfo {
    /// The spec string that opens this device again (`cpu`, `cuda:1`).
    pub fn spec(&self) -> String {
        match self.backend {
            Backend::Cpu => "cpu".to_string(),
            b => format!("{b}:{}", self.ordinal),
        }
    }
}

/// One allocation owned by a backend. Dropping it frees the memory.
pub trait Buffer: Send + Sync {
    /// Start address.
    fn ptr(&self) -> DevicePtr;
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Whether the allocation has zero bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A loaded (compiled, cached) kernel. Backends downcast through [`Kernel::as_any`].
pub trait Kernel: Send + Sync {
    /// The kernel's name.
    fn name(&self) -> &str;
    /// The backend's concrete type, for downcasting.
    fn as_any(&self) -> &dyn Any;
}

/// One argument of a launch, as the backend sees it: a device range or a scalar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KernelArg {
    /// A device range: `bytes` bytes at `ptr`; `dtype` is `None` for raw byte buffers.
    /// The CUDA ABI passes only the pointer; the length travels for bounds checks
    /// (CPU bodies, the emulator's memcheck).
    Buffer {
        /// Start address (null for an absent buffer, with `bytes = 0`).
        ptr: DevicePtr,
        /// Length in bytes.
        bytes: usize,
        /// Element type, if typed.
        dtype: Option<DType>,
    },
    /// A 32-bit signed integer scalar.
    I32(i32),
    /// A 64-bit signed integer scalar.
    I64(i64),
    /// An f32 scalar.
    F32(f32),
    /// An f64 scalar.
    F64(f64),
}

/// A compute device: memory, copies, kernels, launches.
///
/// The raw-address methods are `unsafe`: the caller (the [`crate::Kit`]) guarantees
/// every range lies inside a live allocation of this device. Users never call them;
/// they go through [`crate::Kit`] and [`crate::Buf`], which check every range.
pub trait Device: Send + Sync + 'static {
    /// What this device is.
    fn info(&self) -> &DeviceInfo;

    /// Allocates `bytes` bytes (at least 64-byte aligned).
    ///
    /// Errors: [`crate::Error::OutOfMemory`] when the device cannot provide them.
    fn alloc(&self, bytes: usize) -> Result<Box<dyn Buffer>>;

    /// Copies host bytes to device memory at `dst`.
    ///
    /// # Safety
    /// `dst .. dst + src.len()` must lie inside a live allocation of this device.
    unsafe fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()>;

    /// Copies device memory at `src` to host bytes.
    ///
    /// # Safety
    /// `src .. src + dst.len()` must lie inside a live allocation of this device.
    unsafe fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()>;

    /// Sets `bytes` bytes at `dst` to zero.
    ///
    /// # Safety
    /// The range must lie inside a live allocation of this device.
    unsafe fn fill_zero(&self, dst: DevicePtr, bytes: usize) -> Result<()>;

    /// Copies `bytes` bytes from `src` to `dst` on the device (ranges may overlap).
    ///
    /// # Safety
    /// Both ranges must lie inside live allocations of this device.
    unsafe fn copy(&self, src: DevicePtr, dst: DevicePtr, bytes: usize) -> Result<()>;

    /// Loads (compiles if needed) a user kernel for this backend.
    ///
    /// Errors: [`crate::Error::KernelNotFound`] when `def` has no form this backend
    /// runs; [`crate::Error::Compile`] with the compiler's log.
    fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>>;

    /// Looks up one of the backend's built-in kernels (`{op}_{dtype}`).
    ///
    /// Errors: [`crate::Error::KernelNotFound`].
    fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>>;

    /// Launches a kernel over `args`. May return before the kernel finishes
    /// (see [`Device::synchronize`]).
    ///
    /// # Safety
    /// Every [`KernelArg::Buffer`] must describe a range inside a live allocation of
    /// this device (or be null with zero bytes) that stays alive until the kernel has
    /// finished.
    unsafe fn launch(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<()>;

    /// Waits for every launched kernel and copy to finish.
    fn synchronize(&self) -> Result<()>;

    /// Launches and measures the kernel's device time. The default waits for the
    /// device before and after and times the launch with the host clock, which is right
    /// for synchronous backends; CUDA overrides it with events.
    ///
    /// # Safety
    /// As [`Device::launch`].
    unsafe fn launch_timed(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<Duration> {
        self.synchronize()?;
        let t = Instant::now();
        // SAFETY: forwarded from this function's contract.
        unsafe { self.launch(kernel, cfg, args)? };
        self.synchronize()?;
        Ok(t.elapsed())
    }
}
