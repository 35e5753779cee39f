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
    /// Built-in kernels by name (`{op}_{dtype}`): a namespace of their own, so a user
    /// kernel can never stand in for one.
    builtins: Mutex<HashMap<String, Arc<dyn Kernel>>>,
    /// User kernels by name, each with the definition it was loaded from.
    user: Mutex<HashMap<String, UserEntry>>,
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
                builtins: Mutex::new(HashMap::new()),
                user: Mutex::new(HashMap::new()),
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

    /// Loads `def` for this kit's backend, compiling it the first time; cached by name
    /// *and definition*: a second definition under a cached name (other CUDA C or PTX
    /// text, or, on the CPU, another Rust body) is loaded anew and replaces the cached
    /// one, so a name never runs a definition other than the one passed. User kernels
    /// live apart from the built-ins: a user kernel named like a built-in (`sum_f32`)
    /// neither replaces it for the ops nor is replaced by it.
    ///
    /// Errors: [`Error::KernelNotFound`] if `def` has no form this backend runs,
    /// [`Error::Compile`] with the compiler log.
    pub fn load(&self, def: &KernelDef) -> Result<Arc<dyn Kernel>> {
        let key = UserKey::of(def, self.inner.device.info().backend);
        if let Some((k, kern)) = lock(&self.inner.user).get(def.name())
            && *k == key
        {
            return Ok(kern.clone());
        }
        // Compile outside the lock: a slow NVRTC compile must not block other kernels.
        let kern = self.inner.device.load(def)?;
        let mut map = lock(&self.inner.user);
        match map.get(def.name()) {
            // Another thread loaded the same definition meanwhile: share its kernel.
            Some((k, existing)) if *k == key => Ok(existing.clone()),
            _ => {
                map.insert(def.name().to_string(), (key, kern.clone()));
                Ok(kern)
            }
        }
    }

    /// Looks up a built-in kernel (`{op}_{dtype}`) of the backend; cached.
    ///
    /// Errors: [`Error::KernelNotFound`].
    pub fn builtin(&self, name: &str) -> Result<Arc<dyn Kernel>> {
        if let Some(k) = lock(&self.inner.builtins).get(name) {
            return Ok(k.clone());
        }
        let k = self.inner.device.builtin(name)?;
        Ok(lock(&self.inner.builtins)
            .entry(name.to_string())
            .or_insert(k)
            .clone())
    }

    /// Names of the kernels cached on this kit (built-in and user), sorted, each once.
    pub fn cached_kernels(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.inner.builtins).keys().cloned().collect();
        v.extend(lock(&self.inner.user).keys().cloned());
        v.sort();
        v.dedup();
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

/// A cached user kernel with the definition it was loaded from.
type UserEntry = (UserKey, Arc<dyn Kernel>);

/// What a cached user kernel was loaded from: the forms the kit's backend runs. The
/// CPU body is identified by its allocation (the key holds a clone, so the address
/// cannot be reused while the entry lives); source texts are compared whole.
struct UserKey {
    cuda: Option<String>,
    ptx: Option<String>,
    cpu: Option<crate::CpuBody>,
}

impl UserKey {
    fn of(def: &KernelDef, backend: crate::Backend) -> UserKey {
        let on_cpu = backend == crate::Backend::Cpu;
        UserKey {
            // The CPU backend runs only the Rust body; GPU backends only the text.
            cuda: (!on_cpu)
                .then(|| def.cuda_source().map(str::to_string))
                .flatten(),
            ptx: (!on_cpu)
                .then(|| def.ptx_source().map(str::to_string))
                .flatten(),
            cpu: if on_cpu {
                def.cpu_body().cloned()
            } else {
                None
            },
        }
    }
}

impl PartialEq for UserKey {
    fn eq(&self, other: &UserKey) -> bool {
        let same_body = match (&self.cpu, &other.cpu) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_body && self.cuda == other.cuda && self.ptx == other.ptx
    }
}
