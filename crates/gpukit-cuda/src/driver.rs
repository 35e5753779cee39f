//! Finding the CUDA driver: is `libcuda` there, does it initialise, how many devices,
//! which version. Every path that can fail without a GPU ends here as a reason string;
//! nothing in this module panics (cudarc panics when a library is missing, so its
//! presence is checked first).

use std::ffi::c_int;
use std::sync::OnceLock;

use cudarc::driver::sys;
use gpukit_core::{Error, Result};

/// What the driver probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverStatus {
    /// The driver initialised: its version (1000 × major + 10 × minor) and device count.
    Ready {
        /// `cuDriverGetVersion`.
        version: i32,
        /// `cuDeviceGetCount`.
        devices: usize,
    },
    /// No usable driver: why, in words ("no CUDA driver library (libcuda.so.1) found",
    /// "the driver reports no device", ...).
    Unavailable(String),
}

/// Turns a driver result into a gpukit error naming the call.
pub(crate) fn check(call: &str, r: sys::CUresult) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Driver {
            call: call.to_string(),
            message: format!("{r:?}"),
        })
    }
}

/// Whether the driver library can be loaded (by file name through the normal loader
/// search, `LD_LIBRARY_PATH` included).
pub fn library_present() -> bool {
    // SAFETY: only tries to dlopen the candidate file names; loads nothing into use.
    unsafe { sys::is_culib_present() }
}

/// Probes the driver once per process (later calls return the same answer).
pub fn status() -> &'static DriverStatus {
    static STATUS: OnceLock<DriverStatus> = OnceLock::new();
    STATUS.get_or_init(probe)
}

fn probe() -> DriverStatus {
    if !library_present() {
        return DriverStatus::Unavailable(
            "no CUDA driver library (libcuda.so.1) on the library path".into(),
        );
    }
    // SAFETY: the library is present (checked above), so cudarc's lazy symbol lookup
    // succeeds; cuInit takes flags 0 and may be called any number of times.
    let r = unsafe { sys::cuInit(0) };
    match r {
        sys::CUresult::CUDA_SUCCESS => {}
        sys::CUresult::CUDA_ERROR_NO_DEVICE => {
            return DriverStatus::Unavailable("the driver reports no device".into());
        }
        other => {
            return DriverStatus::Unavailable(format!(
                "the CUDA driver failed to start: {other:?}"
            ));
        }
    }
    let mut version: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    let r = unsafe { sys::cuDriverGetVersion(&mut version) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return DriverStatus::Unavailable(format!("cuDriverGetVersion failed: {r:?}"));
    }
    let mut count: c_int = 0;
    // SAFETY: the driver is initialised; writes one int through a valid pointer.
    let r = unsafe { sys::cuDeviceGetCount(&mut count) };
    if r != sys::CUresult::CUDA_SUCCESS {
        return DriverStatus::Unavailable(format!("cuDeviceGetCount failed: {r:?}"));
    }
    if count <= 0 {
        return DriverStatus::Unavailable("the driver reports no device".into());
    }
    DriverStatus::Ready {
        version,
        devices: count as usize,
    }
}

/// A driver version number (12090) as text ("12.9").
pub fn version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}
