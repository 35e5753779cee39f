//! [`CudaDevice`]: the core [`Device`] trait on the CUDA driver API.
//!
//! One device = the GPU's primary context, one stream (every copy, memset and launch is
//! ordered on it; `synchronize` waits for it), every module of the committed PTX loaded
//! at open (so a driver too old for the PTX fails at open with one clear error), and a
//! scratch block for launch plans. Buffers hold the context alive, so a buffer may
//! outlive its device handle and still free correctly.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::{CString, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cudarc::driver::sys;
use gpukit_core::{
    Buffer, Device, DeviceInfo, DevicePtr, Error, Kernel, KernelArg, KernelDef, LaunchConfig,
    Result,
};

use crate::driver::{self, DriverStatus, check};
use crate::plan::{self, PlanArg};
use crate::{nvrtc, ptx};

/// The primary context of one GPU. Released when the last owner (device, buffer,
/// kernel) goes.
struct Context {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
}

// SAFETY: CUDA contexts may be used from any thread (each call makes it current on the
// calling thread first, see `bind`); the handle is never mutated after creation.
unsafe impl Send for Context {}
// SAFETY: as above: shared use only passes the handle to thread-safe driver calls.
unsafe impl Sync for Context {}

impl Context {
    /// Makes the context current on this thread.
    fn bind(&self) -> Result<()> {
        // SAFETY: `ctx` is a retained primary context, alive while `self` is.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.ctx) })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: releases the reference retained in `open`; nothing uses the context
        // after the last `Arc<Context>` is gone.
        unsafe {
            let _ = sys::cuDevicePrimaryCtxRelease_v2(self.dev);
        }
    }
}

/// One `cuMemAlloc` allocation.
struct CudaBuffer {
    ptr: u64,
    len: usize,
    ctx: Arc<Context>,
}

impl Buffer for CudaBuffer {
    fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr)
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        if self.ptr == 0 {
            return;
        }
        if self.ctx.bind().is_ok() {
            // SAFETY: `ptr` came from cuMemAlloc in this context and is freed once;
            // cuMemFree synchronises the device first, so queued work that still
            // reads the block finishes before it is released.
            unsafe {
                let _ = sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

/// A loaded module, unloaded when the last kernel from it goes.
struct Module {
    module: sys::CUmodule,
    ctx: Arc<Context>,
}

// SAFETY: module handles are usable from any thread with the context bound.
unsafe impl Send for Module {}
// SAFETY: as above; the handle is immutable.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the module was loaded in this context and is unloaded once, after
            // every function handle from it is gone (they hold this `Arc<Module>`).
            unsafe {
                let _ = sys::cuModuleUnload(self.module);
            }
        }
    }
}

/// A function handle with its parameter sizes (from the PTX) for argument checks.
#[derive(Clone)]
struct Function {
    func: sys::CUfunction,
    /// Bytes of each parameter, in order, as the PTX declares them (`None` when the
    /// parameter list could not be read; the driver then checks alone).
    params: Option<Vec<usize>>,
    _module: Arc<Module>,
}

// SAFETY: function handles are usable from any thread with the context bound.
unsafe impl Send for Function {}
// SAFETY: as above; the handle is immutable.
unsafe impl Sync for Function {}

/// A kernel on the CUDA backend: a built-in (launched through its plan) or a user
/// kernel (one entry, launched as given).
enum CudaKernel {
    Builtin { name: String },
    User { name: String, function: Function },
}

impl Kernel for CudaKernel {
    fn name(&self) -> &str {
        match self {
            CudaKernel::Builtin { name } | CudaKernel::User { name, .. } => name,
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The stream every operation of a device is ordered on.
struct Stream(sys::CUstream);

// SAFETY: streams may be used from any thread with the context bound.
unsafe impl Send for Stream {}
// SAFETY: as above; the handle is immutable.
unsafe impl Sync for Stream {}

/// A GPU opened through the CUDA driver.
pub struct CudaDevice {
    info: DeviceInfo,
    driver_version: i32,
    stream: Stream,
    functions: HashMap<String, Function>,
    scratch: Mutex<Option<CudaBuffer>>,
    ctx: Arc<Context>,
}

fn unavailable(ordinal: usize, reason: impl Into<String>) -> Error {
    Error::DeviceUnavailable {
        device: format!("cuda:{ordinal}"),
        reason: reason.into(),
    }
}

/// Loads PTX text as a module in `ctx` (bound) and looks up the named entries.
fn load_module(
    ctx: &Arc<Context>,
    ptx_text: &str,
    entries: impl IntoIterator<Item = String>,
) -> std::result::Result<HashMap<String, Function>, (sys::CUresult, String)> {
    let image = nvrtc::ptx_cstring(ptx_text)
        .map_err(|e| (sys::CUresult::CUDA_ERROR_INVALID_IMAGE, e.to_string()))?;
    let mut raw: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is NUL-terminated PTX text alive for the call; the context is
    // current (callers bind it).
    let r = unsafe { sys::cuModuleLoadData(&mut raw, image.as_ptr() as *const c_void) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err((r, "cuModuleLoadData".into()));
    }
    let module = Arc::new(Module {
        module: raw,
        ctx: ctx.clone(),
    });
    let mut out = HashMap::new();
    for name in entries {
        let c = CString::new(name.clone())
            .map_err(|_| (sys::CUresult::CUDA_ERROR_NOT_FOUND, name.clone()))?;
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the module is loaded; `c` is NUL-terminated; writes one handle.
        let r = unsafe { sys::cuModuleGetFunction(&mut f, module.module, c.as_ptr()) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err((r, format!("cuModuleGetFunction({name})")));
        }
        // The same reader (and later the same check) as every other backend's.
        let params = gpukit_core::ptx_entry_params(ptx_text, &name);
        out.insert(
            name,
            Function {
                func: f,
                params,
                _module: module.clone(),
            },
        );
    }
    Ok(out)
}

impl CudaDevice {
    /// Opens CUDA device `ordinal`: retains its primary context, creates the stream,
    /// loads every module of the committed PTX.
    ///
    /// Errors: [`Error::DeviceUnavailable`] saying why (no driver library, no device,
    /// no such ordinal, a driver too old for the PTX, naming the PTX ISA and the
    /// driver version).
    pub fn open(ordinal: usize) -> Result<CudaDevice> {
        let (version, count) = match driver::status() {
            DriverStatus::Ready { version, devices } => (*version, *devices),
            DriverStatus::Unavailable(why) => return Err(unavailable(ordinal, why.clone())),
        };
        if ordinal >= count {
            return Err(unavailable(
                ordinal,
                format!("there are {count} CUDA device(s) (ordinals 0..{count})"),
            ));
        }
        let mut dev: sys::CUdevice = 0;
        // SAFETY: the driver is initialised and `ordinal` < the device count.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut dev, ordinal as c_int)
        })?;
        let info = device_info(dev, ordinal)?;
        let mut raw_ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `dev` is a valid device; retains its primary context (released by
        // `Context::drop`).
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut raw_ctx, dev)
        })?;
        let ctx = Arc::new(Context { dev, ctx: raw_ctx });
        ctx.bind()?;
        let mut raw_stream: sys::CUstream = std::ptr::null_mut();
        // SAFETY: the context is current; writes one stream handle.
        check("cuStreamCreate", unsafe {
            sys::cuStreamCreate(
                &mut raw_stream,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as c_uint,
            )
        })?;
        let stream = Stream(raw_stream);
        let mut functions = HashMap::new();
        for (family, text) in ptx::MODULES {
            let names = ptx::entries(text).into_iter().map(|e| e.name);
            match load_module(&ctx, text, names) {
                Ok(f) => functions.extend(f),
                Err((code, call)) => {
                    // SAFETY: the stream was created above and is not used again.
                    unsafe {
                        let _ = sys::cuStreamDestroy_v2(stream.0);
                    }
                    return Err(unavailable(
                        ordinal,
                        module_error(family, text, code, &call, version),
                    ));
                }
            }
        }
        Ok(CudaDevice {
            info,
            driver_version: version,
            stream,
            functions,
            scratch: Mutex::new(None),
            ctx,
        })
    }

    /// The driver version (1000 × major + 10 × minor).
    pub fn driver_version(&self) -> i32 {
        self.driver_version
    }

    fn raw_alloc(&self, bytes: usize) -> Result<CudaBuffer> {
        self.ctx.bind()?;
        if bytes == 0 {
            return Ok(CudaBuffer {
                ptr: 0,
                len: 0,
                ctx: self.ctx.clone(),
            });
        }
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: the context is current; writes one device pointer.
        let r = unsafe { sys::cuMemAlloc_v2(&mut p, bytes) };
        match r {
            sys::CUresult::CUDA_SUCCESS => Ok(CudaBuffer {
                ptr: p,
                len: bytes,
                ctx: self.ctx.clone(),
            }),
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                let (mut free, mut total) = (0usize, 0usize);
                // SAFETY: writes two sizes through valid pointers.
                unsafe {
                    let _ = sys::cuMemGetInfo_v2(&mut free, &mut total);
                }
                Err(Error::OutOfMemory {
                    requested: bytes,
                    available: free,
                })
            }
            other => check("cuMemAlloc", other).map(|_| unreachable!()),
        }
    }

    fn sync_stream(&self) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the stream belongs to this device's context.
        let r = unsafe { sys::cuStreamSynchronize(self.stream.0) };
        if r == sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(Error::KernelFault {
                kernel: "(cuda stream)".into(),
                message: format!(
                    "{r:?} reported while waiting for the device's queued work (a kernel \
                     or copy failed; the context may be unusable)"
                ),
            })
        }
    }

    /// Scratch of at least `bytes`, growing it (after the stream drains) when smaller.
    fn scratch(&self, bytes: usize) -> Result<MutexGuard<'_, Option<CudaBuffer>>> {
        let mut g = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        if bytes > 0 && g.as_ref().is_none_or(|b| b.len < bytes) {
            // Queued launches may still use the old block.
            self.sync_stream()?;
            *g = None;
            *g = Some(self.raw_alloc(bytes.next_power_of_two().max(1 << 16))?);
        }
        Ok(g)
    }

    /// Launches one function with raw arguments on the stream.
    ///
    /// # Safety
    /// Every buffer argument must be a live device range of this context (or null)
    /// that stays alive until the launch completes.
    unsafe fn launch_function(
        &self,
        kernel: &str,
        f: &Function,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<()> {
        cfg.validate(kernel)?;
        if cfg.grid.volume() == 0 || cfg.block.volume() == 0 {
            return Ok(());
        }
        if let Some(params) = &f.params {
            gpukit_core::check_entry_args(kernel, params, args)?;
        }
        let mut values: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Buffer { ptr, .. } => ptr.0,
                KernelArg::I64(v) => v as u64,
                KernelArg::I32(v) => v as u32 as u64,
                KernelArg::F32(v) => v.to_bits() as u64,
                KernelArg::F64(v) => v.to_bits(),
            })
            .collect();
        // Each pointer addresses one u64 slot; 4-byte parameters read its low half
        // (little-endian, as every CUDA host is).
        let mut ptrs: Vec<*mut c_void> = values
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        self.ctx.bind()?;
        // SAFETY: `f` is a live function of this context; `ptrs` holds one pointer per
        // parameter (count and sizes checked above against the PTX), each to a value
        // alive for the call (cuLaunchKernel copies them before returning); buffer
        // validity is the caller's contract.
        let r = unsafe {
            sys::cuLaunchKernel(
                f.func,
                cfg.grid.x,
                cfg.grid.y,
                cfg.grid.z,
                cfg.block.x,
                cfg.block.y,
                cfg.block.z,
                cfg.shared_bytes as c_uint,
                self.stream.0,
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if r == sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(Error::Launch {
                kernel: kernel.to_string(),
                reason: format!("cuLaunchKernel: {r:?}"),
            })
        }
    }

    /// Runs a built-in kernel's plan.
    ///
    /// # Safety
    /// As [`Device::launch`].
    unsafe fn launch_builtin(&self, name: &str, args: &[KernelArg]) -> Result<()> {
        // Arguments against the ABI before the plan sizes its scratch from them.
        gpukit_core::abi::check_args(name, args)?;
        let p = plan::plan(name, args)?;
        let scratch = self.scratch(p.scratch_bytes)?;
        let base = scratch.as_ref().map(|b| b.ptr).unwrap_or(0);
        for step in &p.steps {
            let f = self
                .functions
                .get(&step.entry)
                .ok_or_else(|| Error::KernelNotFound {
                    name: step.entry.clone(),
                    backend: "cuda".into(),
                    reason: format!("the plan of `{name}` launches it but no PTX module has it"),
                })?;
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
            // SAFETY: caller's buffers per this function's contract; scratch ranges lie
            // inside the scratch block (the planner sized it), which stays allocated
            // until the stream has drained (it is only replaced after a sync).
            unsafe { self.launch_function(&step.entry, f, &step.cfg, &raw)? };
        }
        Ok(())
    }
}

fn module_error(family: &str, text: &str, code: sys::CUresult, call: &str, version: i32) -> String {
    let isa = ptx::isa_version(text).unwrap_or((0, 0));
    let need = ptx::min_driver_for(isa);
    match code {
        sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | sys::CUresult::CUDA_ERROR_INVALID_PTX
        | sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
            if version < need as i32 =>
        {
            format!(
                "the CUDA driver is too old for gpukit's PTX: module `{family}` is PTX ISA \
                 {}.{}, which needs a driver for CUDA {} or newer; this driver is CUDA {} \
                 ({call}: {code:?})",
                isa.0,
                isa.1,
                driver::version_text(need as i32),
                driver::version_text(version)
            )
        }
        _ => format!(
            "loading PTX module `{family}` (ISA {}.{}) failed on a CUDA {} driver: {call}: {code:?}",
            isa.0,
            isa.1,
            driver::version_text(version)
        ),
    }
}

/// What device `ordinal` is, without opening it (no context, no modules).
pub(crate) fn query(ordinal: usize) -> Result<DeviceInfo> {
    let DriverStatus::Ready { devices, .. } = driver::status() else {
        return Err(unavailable(ordinal, "no CUDA driver"));
    };
    if ordinal >= *devices {
        return Err(unavailable(ordinal, "no such device"));
    }
    let mut dev: sys::CUdevice = 0;
    // SAFETY: the driver is initialised and `ordinal` < the device count.
    check("cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal as c_int)
    })?;
    device_info(dev, ordinal)
}

fn device_info(dev: sys::CUdevice, ordinal: usize) -> Result<DeviceInfo> {
    let mut name = [0 as std::ffi::c_char; 256];
    // SAFETY: writes at most 256 bytes (NUL-terminated) into `name`.
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, dev)
    })?;
    let name: String = {
        let bytes: Vec<u8> = name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let attr = |a: sys::CUdevice_attribute| -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: writes one int; `dev` is valid.
        check("cuDeviceGetAttribute", unsafe {
            sys::cuDeviceGetAttribute(&mut v, a, dev)
        })?;
        Ok(v)
    };
    let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    let sms = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let mut total: usize = 0;
    // SAFETY: writes one size; `dev` is valid.
    check("cuDeviceTotalMem", unsafe {
        sys::cuDeviceTotalMem_v2(&mut total, dev)
    })?;
    Ok(DeviceInfo {
        backend: gpukit_core::Backend::Cuda,
        ordinal,
        name,
        compute_capability: Some((major as u32, minor as u32)),
        total_memory: total as u64,
        parallelism: sms.max(0) as usize,
    })
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        let _ = self.sync_stream();
        *self.scratch.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        self.functions.clear();
        if self.ctx.bind().is_ok() {
            // SAFETY: the stream was drained above and is destroyed once; modules and
            // scratch are gone; the context is released when its last Arc goes.
            unsafe {
                let _ = sys::cuStreamDestroy_v2(self.stream.0);
            }
        }
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn Buffer>> {
        Ok(Box::new(self.raw_alloc(bytes)?))
    }

    unsafe fn write(&self, dst: DevicePtr, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: the caller guarantees the device range; `src` is alive until the
        // stream is synchronised below, before this function returns.
        check("cuMemcpyHtoDAsync", unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                dst.0,
                src.as_ptr() as *const c_void,
                src.len(),
                self.stream.0,
            )
        })?;
        self.sync_stream()
    }

    unsafe fn read(&self, src: DevicePtr, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: the caller guarantees the device range; `dst` is alive and not
        // otherwise accessed until the stream is synchronised below.
        check("cuMemcpyDtoHAsync", unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                dst.as_mut_ptr() as *mut c_void,
                src.0,
                dst.len(),
                self.stream.0,
            )
        })?;
        self.sync_stream()
    }

    unsafe fn fill_zero(&self, dst: DevicePtr, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.ctx.bind()?;
        // SAFETY: the caller guarantees the device range.
        check("cuMemsetD8Async", unsafe {
            sys::cuMemsetD8Async(dst.0, 0, bytes, self.stream.0)
        })
    }

    unsafe fn copy(&self, src: DevicePtr, dst: DevicePtr, bytes: usize) -> Result<()> {
        if bytes == 0 || src == dst {
            return Ok(());
        }
        self.ctx.bind()?;
        let overlap = src.0 < dst.0 + bytes as u64 && dst.0 < src.0 + bytes as u64;
        if overlap {
            // cuMemcpy on overlapping ranges is undefined: go through a temporary.
            let tmp = self.raw_alloc(bytes)?;
            // SAFETY: `tmp` holds `bytes`; the caller guarantees both ranges; the
            // temporary is freed only after the stream drained.
            unsafe {
                check(
                    "cuMemcpyDtoDAsync",
                    sys::cuMemcpyDtoDAsync_v2(tmp.ptr, src.0, bytes, self.stream.0),
                )?;
                check(
                    "cuMemcpyDtoDAsync",
                    sys::cuMemcpyDtoDAsync_v2(dst.0, tmp.ptr, bytes, self.stream.0),
                )?;
            }
            self.sync_stream()?;
            drop(tmp);
            return Ok(());
        }
        // SAFETY: the caller guarantees both ranges; they do not overlap.
        check("cuMemcpyDtoDAsync", unsafe {
            sys::cuMemcpyDtoDAsync_v2(dst.0, src.0, bytes, self.stream.0)
        })
    }

    fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>> {
        let ptx_text = match (def.ptx_source(), def.cuda_source()) {
            (Some(p), _) => p.to_string(),
            (None, Some(src)) => nvrtc::compile(def.name(), src)?,
            (None, None) => {
                return Err(Error::KernelNotFound {
                    name: def.name().to_string(),
                    backend: "cuda".into(),
                    reason: "the kernel has neither CUDA C source nor PTX".into(),
                });
            }
        };
        self.ctx.bind()?;
        let mut fns = load_module(&self.ctx, &ptx_text, [def.name().to_string()]).map_err(
            |(code, call)| match code {
                sys::CUresult::CUDA_ERROR_NOT_FOUND => Error::KernelNotFound {
                    name: def.name().to_string(),
                    backend: "cuda".into(),
                    reason: format!(
                        "the compiled module has no entry `{}` (declare it extern \"C\" __global__)",
                        def.name()
                    ),
                },
                _ => Error::Compile {
                    name: def.name().to_string(),
                    log: format!("the driver rejected the PTX: {call}: {code:?}"),
                },
            },
        )?;
        let function = fns
            .remove(def.name())
            .expect("load_module returns the asked entry");
        Ok(Arc::new(CudaKernel::User {
            name: def.name().to_string(),
            function,
        }))
    }

    fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        if !self.functions.contains_key(name) {
            return Err(Error::KernelNotFound {
                name: name.to_string(),
                backend: "cuda".into(),
                reason: "not in the committed PTX".into(),
            });
        }
        Ok(Arc::new(CudaKernel::Builtin {
            name: name.to_string(),
        }))
    }

    unsafe fn launch(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<()> {
        match kernel.as_any().downcast_ref::<CudaKernel>() {
            // SAFETY: forwarded from this function's contract.
            Some(CudaKernel::Builtin { name }) => unsafe { self.launch_builtin(name, args) },
            // SAFETY: forwarded from this function's contract.
            Some(CudaKernel::User { name, function }) => unsafe {
                self.launch_function(name, function, cfg, args)
            },
            None => Err(Error::KernelNotFound {
                name: kernel.name().to_string(),
                backend: "cuda".into(),
                reason: "the kernel was loaded by another backend".into(),
            }),
        }
    }

    fn synchronize(&self) -> Result<()> {
        self.sync_stream()
    }

    unsafe fn launch_timed(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
    ) -> Result<Duration> {
        self.ctx.bind()?;
        let mut ev = [std::ptr::null_mut(); 2];
        for e in &mut ev {
            // SAFETY: the context is current; writes one event handle.
            check("cuEventCreate", unsafe { sys::cuEventCreate(e, 0) })?;
        }
        let result = (|| {
            // SAFETY: events and stream belong to this context.
            check("cuEventRecord", unsafe {
                sys::cuEventRecord(ev[0], self.stream.0)
            })?;
            // SAFETY: forwarded from this function's contract.
            unsafe { self.launch(kernel, cfg, args)? };
            // SAFETY: as above.
            check("cuEventRecord", unsafe {
                sys::cuEventRecord(ev[1], self.stream.0)
            })?;
            self.sync_stream()?;
            let mut ms: f32 = 0.0;
            // SAFETY: both events have completed (the stream drained).
            check("cuEventElapsedTime", unsafe {
                sys::cuEventElapsedTime_v2(&mut ms, ev[0], ev[1])
            })?;
            Ok(Duration::from_secs_f64(ms.max(0.0) as f64 / 1e3))
        })();
        for e in ev {
            // SAFETY: each event was created above and is destroyed once.
            unsafe {
                let _ = sys::cuEventDestroy_v2(e);
            }
        }
        result
    }
}
