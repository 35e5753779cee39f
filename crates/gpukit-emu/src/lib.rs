//! gpukit's PTX-emulator backend: a [`Device`] whose kernels are the CUDA backend's
//! kernels, executed on the CPU by the PTX emulator ([`gpukit_ptx`]).
//!
//! - Built-in kernels run the committed PTX (`kernels-cuda/ptx/*.ptx`, as embedded in
//!   [`gpukit_cuda::ptx::MODULES`]) through the CUDA backend's launch plans
//!   ([`gpukit_cuda::plan`]): the same entries, geometry, scratch and steps a GPU runs.
//! - User kernels run their PTX, or their CUDA C compiled with NVRTC
//!   ([`gpukit_cuda::nvrtc`]) exactly as the CUDA backend compiles it.
//! - Device memory is 64-byte-aligned host memory. A launch gives the emulator exactly
//!   the buffer ranges of its arguments (views included; the plan's scratch for
//!   built-ins), and the emulator checks every global access against them (memcheck:
//!   an access past a buffer's end is caught even inside its pool block) and every
//!   shared-memory access against the other threads' (racecheck). A fault is an
//!   [`Error::KernelFault`] naming the kernel, instruction, thread, block and address.
//! - Launches are synchronous; blocks run in parallel on rayon.
//!
//! Open it with `gpukit::open("ptx-emu")` or `GPUKIT_DEVICE=ptx-emu`.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use gpukit_core::{
    Backend, Buffer, Device, DeviceInfo, DevicePtr, Error, Kernel, KernelArg, KernelDef,
    LaunchConfig, Result,
};
use gpukit_cuda::plan::{self, PlanArg};
/// What `ptxas -v` reports for the shipped kernels (registers, static shared memory,
/// stack, spills per architecture).
pub use gpukit_cuda::ptx::{KernelResources, resources as kernel_resources};
/// The emulator's options, per-launch statistics and performance counters.
pub use gpukit_ptx::{CLASSES, Counters, EmuOptions, InstClass, LaunchStats, SECTOR_BYTES};
use gpukit_ptx::{GlobalMemory, Module, ParamValue};

pub mod census;
pub mod perf;

/// Every built-in entry name → its module's index in [`gpukit_cuda::ptx::MODULES`].
pub(crate) fn builtin_entries() -> HashMap<String, usize> {
    let mut entries = HashMap::new();
    for (i, (_, text)) in gpukit_cuda::ptx::MODULES.iter().enumerate() {
        for e in gpukit_cuda::ptx::entries(text) {
            entries.insert(e.name, i);
        }
    }
    entries
}

/// Alignment of every allocation (as the CPU backend, and more than any PTX access needs).
pub const EMU_ALIGN: usize = 64;

/// Environment variable that turns racecheck off (`GPUKIT_EMU_RACECHECK=0`) for speed.
/// Bounds are always checked: they keep the emulator memory-safe.
pub const RACECHECK_ENV: &str = "GPUKIT_EMU_RACECHECK";

/// Environment variable that sets the step limit of a block (warp instructions;
/// `GPUKIT_EMU_MAX_STEPS=0` turns it off). Unset: [`gpukit_ptx::DEFAULT_MAX_STEPS_PER_BLOCK`].
/// A block past the limit fails its launch with [`Error::KernelFault`] naming the
/// kernel, the block and the instruction (a PTX loop that never ends is a fault, not a
/// hang).
pub const MAX_STEPS_ENV: &str = "GPUKIT_EMU_MAX_STEPS";

/// The live allocations: base address → length.
type Registry = RwLock<BTreeMap<u64, usize>>;

/// One aligned, zeroed host allocation, registered while it lives.
struct EmuBuffer {
    ptr: NonNull<u8>,
    layout: Layout,
    registry: Arc<Registry>,
}

// SAFETY: a plain heap allocation; kernels touch it only through the emulator's relaxed
// atomics, copies only through the Device methods whose callers guarantee the ranges.
unsafe impl Send for EmuBuffer {}
// SAFETY: as above.
unsafe impl Sync for EmuBuffer {}

impl Buffer for EmuBuffer {
    fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr.as_ptr() as usize as u64)
    }
    fn len(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for EmuBuffer {
    fn drop(&mut self) {
        // Unregister first (waits for running launches, which hold the read lock), then
        // free.
        self.registry
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(self.ptr.as_ptr() as usize as u64));
        // SAFETY: `ptr` came from `alloc_zeroed(layout)` and is freed exactly once; no
        // launch can see it any more (it left the registry above).
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// A loaded kernel: a built-in (run through its plan) or a user kernel (one entry of
/// its own module).
enum EmuKernel {
    Builtin { name: String },
    User { name: String, module: Arc<Module> },
}

impl Kernel for EmuKernel {
    fn name(&self) -> &str {
        match self {
            EmuKernel::Builtin { name } | EmuKernel::User { name, .. } => name,
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The PTX emulator as a gpukit device.
pub struct EmuDevice {
    info: DeviceInfo,
    registry: Arc<Registry>,
    /// Entry name → index into `gpukit_cuda::ptx::MODULES`.
    entries: HashMap<String, usize>,
    /// Each built-in module, parsed on first use.
    modules: Vec<OnceLock<std::result::Result<Arc<Module>, String>>>,
    options: EmuOptions,
    /// Every launch's counters, when `options.counters` is on.
    log: LaunchLog,
    /// The census kit's records: `Some` means launches are recorded, not run.
    census: Option<census::Census>,
}

/// One launch the emulator ran with counters on.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRecord {
    /// The kernel's entry name.
    pub kernel: String,
    /// Grid, blocks per axis.
    pub grid: [u32; 3],
    /// Block, threads per axis.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
    /// The op's ideal DRAM traffic: the bytes of its buffer arguments (overlapping
    /// ranges once), i.e. every input read once and every output written once.
    pub ideal_bytes: u64,
    /// What the launch did, counters included.
    pub stats: LaunchStats,
}

/// A shared handle on an emulator's launch records (cheap to clone; the device keeps
/// appending while a handle is held).
#[derive(Debug, Clone, Default)]
pub struct LaunchLog(Arc<Mutex<Vec<LaunchRecord>>>);

impl LaunchLog {
    /// Removes and returns every record so far, in launch order.
    pub fn take(&self) -> Vec<LaunchRecord> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A copy of every record so far.
    pub fn snapshot(&self) -> Vec<LaunchRecord> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn push(&self, r: LaunchRecord) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    }
}

impl Default for EmuDevice {
    fn default() -> Self {
        EmuDevice::new()
    }
}

impl EmuDevice {
    /// The emulator with memcheck and racecheck on (racecheck off when
    /// `$GPUKIT_EMU_RACECHECK` is `0`) and the default step limit per block
    /// (`$GPUKIT_EMU_MAX_STEPS` sets another; 0 turns it off; an unreadable value keeps
    /// the default).
    pub fn new() -> EmuDevice {
        let mut options = EmuOptions::default();
        if std::env::var(RACECHECK_ENV).is_ok_and(|v| v.trim() == "0") {
            options.racecheck = false;
        }
        if let Some(n) = std::env::var(MAX_STEPS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            options.max_steps_per_block = (n > 0).then_some(n);
        }
        EmuDevice::with_options(options)
    }

    /// The emulator with the given checks.
    pub fn with_options(options: EmuOptions) -> EmuDevice {
        let entries = builtin_entries();
        EmuDevice {
            info: DeviceInfo {
                backend: Backend::PtxEmu,
                ordinal: 0,
                name: "gpukit PTX emulator (sm_80 functional model)".into(),
                compute_capability: None,
                // Device memory is host memory: report what the host (and its cgroup)
                // really has.
                total_memory: gpukit_core::host_memory().total,
                parallelism: rayon::current_num_threads(),
            },
            registry: Arc::new(RwLock::new(BTreeMap::new())),
            entries,
            modules: gpukit_cuda::ptx::MODULES
                .iter()
                .map(|_| OnceLock::new())
                .collect(),
            options,
            log: LaunchLog::default(),
            census: None,
        }
    }

    /// The census kit ([`census`]): every call is validated and planned as on the
    /// emulator and every kernel launch recorded, and **no kernel runs**. Read the
    /// records through [`EmuDevice::census_records`] (keep the handle before moving the
    /// device into a `Kit`).
    pub fn census() -> EmuDevice {
        let mut d = EmuDevice::with_options(EmuOptions {
            racecheck: false,
            ..EmuOptions::default()
        });
        d.info.name = gpukit_core::CENSUS_DEVICE_NAME.into();
        d.census = Some(census::Census::default());
        d
    }

    /// The census records of a device made by [`EmuDevice::census`] (`None` for a
    /// device that runs its kernels); the handle stays valid after the device is moved
    /// into a `Kit`.
    pub fn census_records(&self) -> Option<census::Census> {
        self.census.clone()
    }

    /// The checks this device runs.
    pub fn options(&self) -> EmuOptions {
        self.options
    }

    /// The records of the launches run with counters on (empty unless
    /// [`EmuOptions::counters`] is set); the handle stays valid after the device is
    /// moved into a `Kit`.
    pub fn launch_log(&self) -> LaunchLog {
        self.log.clone()
    }

    /// The parsed built-in module holding `entry`.
    fn module_of(&self, entry: &str) -> Result<Arc<Module>> {
        let &i = self
            .entries
            .get(entry)
            .ok_or_else(|| Error::KernelNotFound {
                name: entry.to_string(),
                backend: "ptx-emu".into(),
                reason: "no committed PTX module has this entry".into(),
            })?;
        let (family, text) = gpukit_cuda::ptx::MODULES[i];
        self.modules[i]
            .get_or_init(|| {
                Module::parse(text)
                    .map(Arc::new)
                    .map_err(|e| format!("kernels-cuda/ptx/{family}.ptx: {e}"))
            })
            .clone()
            .map_err(|log| Error::Compile {
                name: entry.to_string(),
                log,
            })
    }

    fn raw_alloc(&self, bytes: usize) -> Result<EmuBuffer> {
        // Refuse what the host cannot give now rather than meet the OOM killer.
        let mem = gpukit_core::host_memory();
        let oom = || Error::OutOfMemory {
            requested: bytes,
            available: usize::try_from(mem.available).unwrap_or(usize::MAX),
        };
        if bytes as u64 > mem.available {
            return Err(oom());
        }
        let layout =
            Layout::from_size_align(bytes.max(1), EMU_ALIGN).map_err(|_| Error::SizeOverflow {
                what: format!("ptx-emu allocation of {bytes} bytes"),
            })?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(p).ok_or_else(oom)?;
        let layout = Layout::from_size_align(bytes.max(1), EMU_ALIGN).expect("checked above");
        self.registry
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(ptr.as_ptr() as usize as u64, layout.size());
        Ok(EmuBuffer {
            ptr,
            layout,
            registry: self.registry.clone(),
        })
    }

    /// Runs one entry of `module` with raw arguments (records it instead on a census
    /// device; `user` says whether the module is a user kernel's).
    fn run_entry(
        &self,
        module: &Arc<Module>,
        entry: &str,
        cfg: &LaunchConfig,
        args: &[KernelArg],
        user: bool,
    ) -> Result<()> {
        // The one launch validation every backend applies (geometry, then arguments
        // against the `.entry`): a bad launch is Error::Launch / Error::Argument here
        // exactly as on the CPU and CUDA backends, never a kernel fault.
        cfg.validate(entry)?;
        let info = module.kernel(entry).ok_or_else(|| Error::KernelNotFound {
            name: entry.to_string(),
            backend: "ptx-emu".into(),
            reason: "the module has no entry of this name".into(),
        })?;
        let sizes: Vec<usize> = info.params.iter().map(|p| p.size as usize).collect();
        gpukit_core::check_entry_args(entry, &sizes, args)?;
        if cfg.grid.volume() == 0 || cfg.block.volume() == 0 {
            return Ok(());
        }
        let params: Vec<ParamValue> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Buffer { ptr, .. } => ParamValue::ptr(ptr.0),
                KernelArg::I64(v) => ParamValue::i64(v),
                KernelArg::I32(v) => ParamValue::i32(v),
                KernelArg::F32(v) => ParamValue::f32(v),
                KernelArg::F64(v) => ParamValue::f64(v),
            })
            .collect();
        // The kernel may touch exactly the ranges it was given (views included, so an
        // access past a view's end is reported even inside its pool block); ranges that
        // overlap (an in-place `out == a`) are merged.
        let mut ranges: Vec<(u64, u64)> = args
            .iter()
            .filter_map(|a| match *a {
                KernelArg::Buffer { ptr, bytes, .. } if bytes > 0 && ptr.0 != 0 => {
                    Some((ptr.0, ptr.0 + bytes as u64))
                }
                _ => None,
            })
            .collect();
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        // Holding the registry's read lock keeps every allocation alive for the launch.
        let _live = self.registry.read().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = &self.census {
            c.record(entry, cfg, args, &merged, user.then_some(module));
            return Ok(());
        }
        let mut mem = GlobalMemory::new();
        // SAFETY: every range lies inside a live allocation of this device (the
        // contract of `Device::launch`, which the Kit checks for every argument); none
        // can be freed while `_live` (the read lock) is held, because a buffer
        // unregisters under the write lock before it frees. Launches are synchronous,
        // and the Kit does not copy into a buffer while its own launch runs.
        unsafe { mem.insert_many(merged.iter().map(|&(lo, hi)| (lo, (hi - lo) as usize))) }
            .map_err(|e| Error::Launch {
                kernel: entry.to_string(),
                reason: e.to_string(),
            })?;
        let g = (cfg.grid.x, cfg.grid.y, cfg.grid.z);
        let b = (cfg.block.x, cfg.block.y, cfg.block.z);
        let ideal_bytes: u64 = merged.iter().map(|&(lo, hi)| hi - lo).sum();
        gpukit_ptx::launch(
            module,
            entry,
            g,
            b,
            cfg.shared_bytes,
            &params,
            &mem,
            &self.options,
        )
        .map(|mut stats| {
            // A sampled launch's unique sectors are extrapolated without the reuse
            // between blocks; the buffers' own sectors bound them (every byte a shipped
            // kernel touches lies in its arguments).
            if let Some(c) = stats.counters.as_mut()
                && stats.blocks_run < stats.blocks
            {
                let cap: u64 = merged
                    .iter()
                    .map(|&(lo, hi)| (hi - 1) / 32 - lo / 32 + 1)
                    .sum();
                c.unique_sectors = c.unique_sectors.min(cap);
            }
            if stats.counters.is_some() {
                self.log.push(LaunchRecord {
                    kernel: entry.to_string(),
                    grid: [g.0, g.1, g.2],
                    block: [b.0, b.1, b.2],
                    dynamic_shared: u32::try_from(cfg.shared_bytes).unwrap_or(u32::MAX),
                    ideal_bytes,
                    stats,
                });
            }
        })
        .map_err(|e| match e.kind {
            // What the kernel's own declarations refuse (.reqntid, .maxntid, its static
            // shared memory): still the launch, not the kernel's run.
            gpukit_ptx::ErrorKind::BadLaunch(reason) => Error::Launch {
                kernel: entry.to_string(),
                reason,
            },
            _ => Error::KernelFault {
                kernel: entry.to_string(),
                message: e.to_string(),
            },
        })
    }

    fn launch_builtin(&self, name: &str, args: &[KernelArg]) -> Result<()> {
        // Arguments against the ABI before the plan sizes its scratch from them.
        gpukit_core::abi::check_args(name, args)?;
        // What index buffers hold (dims, strides, indices), checked as the CPU kernels
        // check it: device memory is host memory here, so a lying content is the same
        // error on both backends instead of a memcheck fault (or a silent pass) in the
        // middle of the PTX.
        gpukit_core::abi::check_contents(name, args, |index, n| read_i64s(&args[index], n))?;
        let p = plan::plan(name, args)?;
        let scratch = if p.scratch_bytes > 0 {
            let s = self.raw_alloc(p.scratch_bytes)?;
            // On a GPU the scratch block is reused, never cleared: poison it, so a plan
            // that reads scratch it did not write fails here too, not only on a GPU.
            // SAFETY: `s` is a fresh allocation of `layout.size()` bytes, not yet shared.
            unsafe { std::ptr::write_bytes(s.ptr.as_ptr(), 0xA5, s.layout.size()) };
            Some(s)
        } else {
            None
        };
        let base = scratch.as_ref().map(|s| s.ptr().0).unwrap_or(0);
        for step in &p.steps {
            let module = self.module_of(&step.entry)?;
            let raw: Vec<KernelArg> = step
                .args
                .iter()
                .map(|a| match *a {
                    PlanArg::Arg(k) => k,
                    PlanArg::Scratch { offset, bytes } => KernelArg::Buffer {
                        ptr: DevicePtr(base).add(offset),
                        bytes,
                        dtype: None,
                    },
                })
                .collect();
            self.run_entry(&module, &step.entry, &step.cfg, &raw, false)?;
        }
        Ok(())
    }
}

/// The first `n` i64 of buffer argument `arg` (`check_contents` asks only for counts
/// within the buffer; a count past it, or a non-buffer, is refused here too).
fn read_i64s(arg: &KernelArg, n: usize) -> Result<Vec<i64>> {
    let KernelArg::Buffer { ptr, bytes, .. } = *arg else {
        return Err(Error::Argument {
            kernel: String::new(),
            index: 0,
            reason: "an index argument is not a buffer".into(),
        });
    };
    let len = n
        .checked_mul(8)
        .filter(|&l| l <= bytes && (ptr.0 != 0 || l == 0));
    let Some(len) = len else {
        return Err(Error::Argument {
            kernel: String::new(),
            index: 0,
            reason: format!("{n} indices past a buffer of {bytes} bytes"),
        });
    };
    let mut bytes_out = Vec::new();
    bytes_out
        .try_reserve_exact(len)
        .map_err(|_| Error::OutOfMemory {
            requested: len,
            available: usize::try_from(gpukit_core::host_memory().available).unwrap_or(usize::MAX),
        })?;
    bytes_out.resize(len, 0u8);
    if len > 0 {
        // SAFETY: `ptr .. ptr + len` lies inside the argument's range (checked above),
        // which lies in a live allocation of this device (host memory: the contract of
        // `Device::launch`); launches are synchronous, so nothing writes it meanwhile.
        unsafe {
            std::ptr::copy_nonoverlapping(ptr.0 as usize as *const u8, bytes_out.as_mut_ptr(), len)
        };
    }
    Ok(bytes_out
        .chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

impl Device for EmuDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn Buffer>> {
        Ok(Box::new(self.raw_alloc(bytes)?))
    }

    unsafe fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        // SAFETY: the caller guarantees `dst .. dst + src.len()` lies in a live
        // allocation of this device (host memory); launches are synchronous, so no
        // kernel accesses it meanwhile.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.0 as usize as *mut u8, src.len())
        };
        Ok(())
    }

    unsafe fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        // SAFETY: as `write`, for the source range.
        unsafe {
            std::ptr::copy_nonoverlapping(src.0 as usize as *const u8, dst.as_mut_ptr(), dst.len())
        };
        Ok(())
    }

    unsafe fn fill_zero(&self, dst: DevicePtr, bytes: usize) -> Result<()> {
        // SAFETY: as `write`.
        unsafe { std::ptr::write_bytes(dst.0 as usize as *mut u8, 0, bytes) };
        Ok(())
    }

    unsafe fn copy(&self, src: DevicePtr, dst: DevicePtr, bytes: usize) -> Result<()> {
        // SAFETY: as `write`, for both ranges; `ptr::copy` allows overlap.
        unsafe {
            std::ptr::copy(
                src.0 as usize as *const u8,
                dst.0 as usize as *mut u8,
                bytes,
            )
        };
        Ok(())
    }

    fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>> {
        let text = match (def.ptx_source(), def.cuda_source()) {
            (Some(p), _) => p.to_string(),
            (None, Some(src)) => gpukit_cuda::nvrtc::compile(def.name(), src)?,
            (None, None) => {
                return Err(Error::KernelNotFound {
                    name: def.name().to_string(),
                    backend: "ptx-emu".into(),
                    reason: "the kernel has neither CUDA C source nor PTX".into(),
                });
            }
        };
        let module = Module::parse(&text).map_err(|e| Error::Compile {
            name: def.name().to_string(),
            log: format!("the PTX emulator cannot run this PTX: {e}"),
        })?;
        if module.kernel(def.name()).is_none() {
            return Err(Error::KernelNotFound {
                name: def.name().to_string(),
                backend: "ptx-emu".into(),
                reason: format!(
                    "the module has no entry `{}` (declare it extern \"C\" __global__)",
                    def.name()
                ),
            });
        }
        Ok(Arc::new(EmuKernel::User {
            name: def.name().to_string(),
            module: Arc::new(module),
        }))
    }

    fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        if !self.entries.contains_key(name) {
            return Err(Error::KernelNotFound {
                name: name.to_string(),
                backend: "ptx-emu".into(),
                reason: "not in the committed PTX".into(),
            });
        }
        Ok(Arc::new(EmuKernel::Builtin {
            name: name.to_string(),
        }))
    }

    unsafe fn launch(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<()> {
        match kernel.as_any().downcast_ref::<EmuKernel>() {
            Some(EmuKernel::Builtin { name }) => self.launch_builtin(name, args),
            Some(EmuKernel::User { name, module }) => self.run_entry(module, name, cfg, args, true),
            None => Err(Error::KernelNotFound {
                name: kernel.name().to_string(),
                backend: "ptx-emu".into(),
                reason: "the kernel was loaded by another backend".into(),
            }),
        }
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
