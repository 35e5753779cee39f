//! [`Kit`]: the handle on a device with its kernel cache, memory pool and profiler.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use crate::pool::{Pool, PoolStats};
use crate::profile::{ProfileReport, Profiler};
use crate::{
    Device, DeviceInfo, DevicePtr, Error, Kernel, KernelArg, KernelDef, LaunchConfig, Result,
};

static NEXT_KIT_ID: AtomicU64 = AtomicU64::new(1);

/// Locks a mutex, ignoring poisoning: every critical section in gpukit leaves its data
/// consistent before anything that could panic, so a poisoned lock is still usable.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) struct KitInner {
    id: u64,
    // Field order is drop order: the pool's blocks are freed before the device closes.
    pub(crate) pool: Mutex<Pool>,
    kernels: Mutex<HashMap<String, Arc<dyn Kernel>>>,
    profiler: Mutex<Profiler>,
    autosync: AtomicBool,
    device: Box<dyn Device>,
}

/// A handle on one device with its kernel cache, memory pool and profiler (the seed's
/// GpuKit). Cheap to clone: every clone is the same kit, and its last owner, which
/// includes every [`crate::Buf`] allocated from it, releases the kernels, the pool and
/// the device. Nothing is released by hand; [`Kit::close`] is an optional early drop
/// of one owner.
#[derive(Clone)]
pub struct Kit {
    pub(crate) inner: Arc<KitInner>,
}

impl fmt::Debug for Kit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kit")
            .field("id", &self.inner.id)
            .field("device", &self.info().spec())
            .finish()
    }
}

impl Kit {
    /// A kit over `device`. Backends and the facade's `open` functions call this.
    pub fn from_device(device: Box<dyn Device>) -> Kit {
        Kit {
            inner: Arc::new(KitInner {
                id: NEXT_KIT_ID.fetch_add(1, Ordering::Relaxed),
                pool: Mutex::new(Pool::new()),
                kernels: Mutex::new(HashMap::new()),
                profiler: Mutex::new(Profiler::new()),
                autosync: AtomicBool::new(true),
                device,
            }),
        }
    }

    /// A process-unique id of this kit (the same for every clone).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Whether `other` is a handle on the same kit.
    pub fn same(&self, other: &Kit) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The device's description.
    pub fn info(&self) -> &DeviceInfo {
        self.inner.device.info()
    }

    /// The backend device (for op implementations; users go through the kit).
    pub fn device(&self) -> &dyn Device {
        &*self.inner.device
    }

    /// Lets go of this handle now rather than at the end of its scope. The device closes
    /// with the last owner, which includes every buffer still alive from this kit.
    pub fn close(self) {
        drop(self);
    }

    // ---- pool ----------------------------------------------------------------------

    /// Turns this kit's pool on or off (on by default). Off: returned blocks are freed
    /// at once, and the idle ones held now are freed.
    pub fn set_pool_enabled(&self, on: bool) {
        lock(&self.inner.pool).set_enabled(on);
    }

    /// Whether this kit's pool keeps returned blocks for reuse.
    pub fn pool_enabled(&self) -> bool {
        lock(&self.inner.pool).enabled()
    }

    /// Caps the bytes this kit's pool holds idle (0 = unlimited, the default); trims
    /// least-recently-used idle blocks at once and on every return.
    pub fn set_pool_budget(&self, bytes: usize) {
        lock(&self.inner.pool).set_budget(bytes);
    }

    /// The idle budget in bytes (0 = unlimited).
    pub fn pool_budget(&self) -> usize {
        lock(&self.inner.pool).budget()
    }

    /// Hands every idle block back to the device. Blocks in use stay: a trim, not a reset.
    pub fn release_pool(&self) {
        lock(&self.inner.pool).release_idle();
    }

    /// This kit's pool counters.
    pub fn pool_stats(&self) -> PoolStats {
        lock(&self.inner.pool).stats()
    }

    /// Takes a block of at least `bytes` from the pool.
    pub(crate) fn acquire(&self, bytes: usize) -> Result<(usize, DevicePtr)> {
        lock(&self.inner.pool).acquire(&*self.inner.device, bytes)
    }

    // ---- kernels -------------------------------------------------------------------

    fn cached(
        &self,
        name: &str,
        make: impl FnOnce() -> Result<Arc<dyn Kernel>>,
    ) -> Result<Arc<dyn Kernel>> {
        if let Some(k) = lock(&self.inner.kernels).get(name) {
            return Ok(k.clone());
        }
        // Compile outside the lock: a slow NVRTC compile must not block other kernels.
        let k = make()?;
        Ok(lock(&self.inner.kernels)
            .entry(name.to_string())
            .or_insert(k)
            .clone())
    }

    /// Loads `def` for this kit's backend, compiling it the first time; cached by name
    /// (a second definition under a cached name gets the cached kernel).
    ///
    /// Errors: [`Error::KernelNotFound`] if `def` has no form this backend runs,
    /// [`Error::Compile`] with the compiler log.
    pub fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>> {
        self.cached(def.name(), || self.inner.device.load(def))
    }

    /// Looks up a built-in kernel (`{op}_{dtype}`) of the backend; cached.
    ///
    /// Errors: [`Error::KernelNotFound`].
    pub fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        self.cached(name, || self.inner.device.builtin(name))
    }

    /// Names of the kernels cached on this kit, sorted.
    pub fn cached_kernels(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.inner.kernels).keys().cloned().collect();
        v.sort();
        v
    }

    // ---- launches ------------------------------------------------------------------

    /// Turns autosync on (the default: every launch waits for its kernel) or off
    /// (launches queue up; call [`Kit::sync`] once, downloads also wait).
    pub fn set_autosync(&self, on: bool) {
        self.inner.autosync.store(on, Ordering::SeqCst);
    }

    /// Whether launches wait for their kernel.
    pub fn autosync(&self) -> bool {
        self.inner.autosync.load(Ordering::SeqCst)
    }

    /// Waits for every launch and copy on this kit's device.
    ///
    /// Errors: a driver error from the device.
    pub fn sync(&self) -> Result<()> {
        self.inner.device.synchronize()
    }

    /// Launches `kernel` over raw args: the one path every launch takes (profiling and
    /// autosync live here).
    ///
    /// # Safety
    /// Every buffer arg must lie inside a live allocation of this kit's device that
    /// outlives the kernel.
    pub(crate) unsafe fn launch_raw(
        &self,
        kernel: &dyn Kernel,
        cfg: &LaunchConfig,
        args: &[KernelArg],
        force_sync: bool,
    ) -> Result<()> {
        cfg.validate(kernel.name())?;
        if cfg.grid.volume() == 0 {
            return Ok(());
        }
        let dev = &*self.inner.device;
        let profiling = lock(&self.inner.profiler).on;
        if profiling {
            let started = Instant::now();
            // SAFETY: forwarded from this function's contract.
            let dur = unsafe { dev.launch_timed(kernel, cfg, args)? };
            lock(&self.inner.profiler).record(kernel.name(), started, dur);
        } else {
            // SAFETY: forwarded from this function's contract.
            unsafe { dev.launch(kernel, cfg, args)? };
            if force_sync || self.autosync() {
                dev.synchronize()?;
            }
        }
        Ok(())
    }

    // ---- profiler ------------------------------------------------------------------

    /// Turns per-kernel profiling on or off. On, every launch is timed on the device
    /// (and so waits for its kernel): turn it on to find the hot kernel, off to time
    /// the program.
    pub fn set_profiling(&self, on: bool) {
        lock(&self.inner.profiler).on = on;
    }

    /// Whether profiling is on.
    pub fn profiling(&self) -> bool {
        lock(&self.inner.profiler).on
    }

    /// Clears the profile gathered so far.
    pub fn reset_profile(&self) {
        lock(&self.inner.profiler).reset();
    }

    /// The profile so far: kernels ranked by total time, and the launch trace.
    pub fn profile_report(&self) -> ProfileReport {
        lock(&self.inner.profiler).report(self.inner.id)
    }

    /// The error for an operand from another kit.
    pub(crate) fn mismatch(op: &str, operand: impl Into<String>) -> Error {
        Error::DeviceMismatch {
            op: op.to_string(),
            operand: operand.into(),
        }
    }
}

// The kit is shared across threads by design.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Kit>();
};
