//! gpukit's CPU backend: device memory is 64-byte-aligned host memory, a launch runs
//! the kernel's Rust body once per block, blocks in parallel on rayon's pool, and
//! launches are synchronous.
//!
//! Built-in kernels for the operator family (`{op}_{dtype}`) are registered in
//! [`builtins`]; the operator issues fill that table.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::Arc;

use gpukit_core::{
    Backend, BlockCtx, Buffer, CpuBody, Device, DeviceInfo, DevicePtr, Dim3, Error, Kernel,
    KernelArg, KernelDef, LaunchConfig, Result,
};
use rayon::prelude::*;

mod args;
pub mod builtins;
mod gemm;
mod kernels;
pub mod vmath;
/// Run-time SIMD dispatch: the detected level, a process-wide cap for tests.
pub use kernels::simd;
mod nn;

/// Alignment of every CPU allocation: a cache line, and enough for any SIMD load.
pub const CPU_ALIGN: usize = 64;

/// The CPU as a gpukit device.
#[derive(Debug)]
pub struct CpuDevice {
    info: DeviceInfo,
}

impl Default for CpuDevice {
    fn default() -> Self {
        CpuDevice::new()
    }
}

fn read_proc(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// Memory the host can give this process in bytes: physical memory capped by the
/// cgroup limit (Linux), or a 1 TiB guess elsewhere.
fn total_memory() -> u64 {
    gpukit_core::host_memory().total
}

/// Memory available for a new allocation now: `MemAvailable`, less what the cgroup
/// limit leaves (Linux).
pub(crate) fn available_memory() -> u64 {
    gpukit_core::host_memory().available
}

impl CpuDevice {
    /// The CPU device: its model name, physical memory, and rayon's thread count.
    pub fn new() -> CpuDevice {
        let name = read_proc("/proc/cpuinfo", "model name").unwrap_or_else(|| "cpu".to_string());
        CpuDevice {
            info: DeviceInfo {
                backend: Backend::Cpu,
                ordinal: 0,
                name,
                compute_capability: None,
                total_memory: total_memory(),
                parallelism: rayon::current_num_threads(),
            },
        }
    }
}

/// One aligned host allocation.
struct CpuBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is a plain heap allocation; all accesses to its bytes go through
// the Device methods (whose callers guarantee ranges) or relaxed atomics in kernels.
unsafe impl Send for CpuBuffer {}
// SAFETY: as above.
unsafe impl Sync for CpuBuffer {}

impl Buffer for CpuBuffer {
    fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr.as_ptr() as usize as u64)
    }
    fn len(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for CpuBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed(layout)` and is freed exactly once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// What a loaded CPU kernel runs.
#[derive(Clone)]
enum Body {
    /// A user body, called per block.
    User(CpuBody),
    /// A built-in kernel, called once per launch; it tiles and parallelises itself.
    Builtin(builtins::BuiltinFn),
}

/// A loaded CPU kernel: a name and a body.
pub struct CpuKernel {
    name: String,
    body: Body,
    /// The parameter sizes of the kernel's PTX `.entry`, when its definition carries
    /// PTX: launches are checked against them as on the GPU backends.
    params: Option<Vec<usize>>,
}

impl CpuKernel {
    /// A kernel from a name and a per-block user body.
    pub fn new(name: impl Into<String>, body: CpuBody) -> CpuKernel {
        CpuKernel {
            name: name.into(),
            body: Body::User(body),
            params: None,
        }
    }

    /// A built-in kernel (called once per launch, ignoring the grid).
    pub fn builtin(name: impl Into<String>, f: builtins::BuiltinFn) -> CpuKernel {
        CpuKernel {
            name: name.into(),
            body: Body::Builtin(f),
            params: None,
        }
    }
}

impl Kernel for CpuKernel {
    fn name(&self) -> &str {
        &self.name
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The host pointer a CPU device address stands for.
fn host(p: DevicePtr) -> *mut u8 {
    p.0 as usize as *mut u8
}

fn panic_message(p: Box<dyn Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

impl Device for CpuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Allocates zeroed host memory. A request above the memory available now (or
    /// above what the cgroup limit leaves) is refused with [`Error::OutOfMemory`]
    /// naming the available bytes, rather than committed towards the OOM killer; the
    /// kit's pool then trims its idle blocks and retries once.
    fn alloc(&self, bytes: usize) -> Result<Box<dyn Buffer>> {
        let available = available_memory();
        let oom = || Error::OutOfMemory {
            requested: bytes,
            available: usize::try_from(available).unwrap_or(usize::MAX),
        };
        if bytes as u64 > available {
            return Err(oom());
        }
        let layout = Layout::from_size_align(bytes.max(1), CPU_ALIGN).map_err(|_| oom())?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(p).ok_or_else(oom)?;
        Ok(Box::new(CpuBuffer { ptr, layout }))
    }

    unsafe fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        // SAFETY: the caller guarantees dst..dst+len is inside a live allocation, which
        // cannot overlap the borrowed host slice `src`.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), host(dst), src.len()) };
        Ok(())
    }

    unsafe fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        // SAFETY: as in `write`, in the other direction.
        unsafe { std::ptr::copy_nonoverlapping(host(src), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    unsafe fn fill_zero(&self, dst: DevicePtr, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees the range is inside a live allocation.
        unsafe { std::ptr::write_bytes(host(dst), 0, bytes) };
        Ok(())
    }

    unsafe fn copy(&self, src: DevicePtr, dst: DevicePtr, bytes: usize) -> Result<()> {
        // SAFETY: the caller guarantees both ranges are inside live allocations;
        // `copy` (memmove) allows overlap.
        unsafe { std::ptr::copy(host(src), host(dst), bytes) };
        Ok(())
    }

    fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>> {
        match def.cpu_body() {
            Some(body) => {
                let mut k = CpuKernel::new(def.name(), body.clone());
                k.params = def
                    .ptx_source()
                    .and_then(|p| gpukit_core::ptx_entry_params(p, def.name()));
                Ok(Arc::new(k))
            }
            None => Err(Error::KernelNotFound {
                name: def.name().to_string(),
                backend: "cpu".into(),
                reason: "the kernel definition has no CPU body (KernelDef::cpu)".into(),
            }),
        }
    }

    fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        builtins::lookup(name)
            .map(|f| Arc::new(CpuKernel::builtin(name, f)) as Arc<dyn Kernel>)
            .ok_or_else(|| Error::KernelNotFound {
                name: name.to_string(),
                backend: "cpu".into(),
                reason: "no built-in kernel of this name".into(),
            })
    }

    unsafe fn launch(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<()> {
        let k = kernel
            .as_any()
            .downcast_ref::<CpuKernel>()
            .ok_or_else(|| Error::Launch {
                kernel: kernel.name().to_string(),
                reason: "not a CPU kernel".into(),
            })?;
        // The one launch validation every backend applies: geometry, then (when the
        // definition carries PTX) the arguments against its `.entry`.
        cfg.validate(&k.name)?;
        if let Some(params) = &k.params {
            gpukit_core::check_entry_args(&k.name, params, args)?;
        }
        for (i, a) in args.iter().enumerate() {
            if let KernelArg::Buffer {
                ptr,
                bytes,
                dtype: Some(d),
            } = *a
                && (!bytes.is_multiple_of(d.size()) || !ptr.0.is_multiple_of(d.size() as u64))
            {
                return Err(Error::Argument {
                    kernel: k.name.clone(),
                    index: i,
                    reason: format!(
                        "buffer of {bytes} bytes at {:#x} does not hold whole aligned {d}",
                        ptr.0
                    ),
                });
            }
        }
        let body = match &k.body {
            Body::User(b) => b,
            Body::Builtin(f) => {
                // Arguments against the ABI before the kernel sizes anything from them.
                gpukit_core::abi::check_args(&k.name, args)?;
                let a = builtins::BuiltinArgs::new(&k.name, args);
                return match catch_unwind(AssertUnwindSafe(|| f(&a))) {
                    Ok(r) => r,
                    Err(p) => Err(Error::KernelFault {
                        kernel: k.name.clone(),
                        message: panic_message(p),
                    }),
                };
            }
        };
        let g = cfg.grid;
        let blocks = g.volume() as usize;
        let words = cfg.shared_bytes.div_ceil(8);
        (0..blocks).into_par_iter().try_for_each_init(
            || vec![0u64; words],
            |shared, lin| {
                shared.fill(0);
                let x = (lin % g.x as usize) as u32;
                let y = ((lin / g.x as usize) % g.y as usize) as u32;
                let z = (lin / (g.x as usize * g.y as usize)) as u32;
                // SAFETY: the caller of `launch` guarantees every buffer arg is a live
                // host range for the whole launch (which returns only after every block
                // ran), aligned to its dtype (checked above); kernel bodies access it only
                // through `Global`'s relaxed atomics; `shared` holds `words * 8` bytes.
                let mut ctx = unsafe {
                    BlockCtx::new(
                        &k.name,
                        Dim3::new(x, y, z),
                        g,
                        cfg.block,
                        args,
                        shared,
                        cfg.shared_bytes,
                    )
                };
                match catch_unwind(AssertUnwindSafe(|| body(&mut ctx))) {
                    Ok(r) => r,
                    Err(p) => Err(Error::KernelFault {
                        kernel: k.name.clone(),
                        message: panic_message(p),
                    }),
                }
            },
        )
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
