//! gpukit's CUDA backend: the core [`gpukit_core::Device`] trait on the CUDA driver
//! API, through `cudarc` with dynamic loading.
//!
//! - Nothing CUDA is needed to build: the driver (`libcuda.so.1`) and NVRTC
//!   (`libnvrtc.so.12`) are loaded at run time, and a machine without them gets a clean
//!   [`gpukit_core::Error::DeviceUnavailable`] (never a panic), so the facade falls back
//!   to the CPU.
//! - The built-in kernels are the committed PTX of `kernels-cuda/` ([`ptx::MODULES`]),
//!   embedded at compile time (no `build.rs`, no compiler at build time), all loaded
//!   when a device opens. How each ABI call becomes launches is in [`plan`].
//! - User kernels (CUDA C in a [`gpukit_core::KernelDef`]) compile with NVRTC at run
//!   time ([`nvrtc::compile`]) with the same options as the built-ins, and are cached by
//!   name on the kit.
//!
//! docs/cuda.md explains the toolchain, the pins and the kernel ABI.

mod device;
pub mod driver;
pub mod nvrtc;
pub mod plan;
pub mod ptx;
pub mod table;

pub use device::CudaDevice;
pub use driver::DriverStatus;

use gpukit_core::{DeviceInfo, Kit, Result};

/// The CUDA devices present, queried without opening them (empty without a driver or
/// a device; [`why_none`] says why). Each entry's `parallelism` is the SM count.
pub fn devices() -> Vec<DeviceInfo> {
    let DriverStatus::Ready { devices, .. } = driver::status() else {
        return Vec::new();
    };
    (0..*devices)
        .filter_map(|i| device::query(i).ok())
        .collect()
}

/// Why [`devices`] is empty, in words (`None` when the driver found devices).
pub fn why_none() -> Option<String> {
    match driver::status() {
        DriverStatus::Ready { .. } => None,
        DriverStatus::Unavailable(why) => Some(why.clone()),
    }
}

/// Opens CUDA device `ordinal` as a kit.
///
/// Errors: [`gpukit_core::Error::DeviceUnavailable`] saying why (no driver library, no device, no
/// such ordinal, a driver too old for the PTX).
pub fn open(ordinal: usize) -> Result<Kit> {
    Ok(Kit::from_device(Box::new(CudaDevice::open(ordinal)?)))
}
