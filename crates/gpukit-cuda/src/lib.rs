//! gpukit's CUDA backend.
//!
//! **Placeholder crate.** The CUDA backend (driver through `cudarc` with dynamic
//! loading, the precompiled PTX from `kernels-cuda/`, NVRTC for user kernels) is the
//! subject of the CUDA backend issue. Until it lands, [`devices`] finds no device and
//! [`open`] reports the backend as unavailable, so `Kit::open_best` falls back to the
//! CPU.

use gpukit_core::{DeviceInfo, Error, Kit, Result};

/// The CUDA devices present. Always empty until the CUDA backend lands.
pub fn devices() -> Vec<DeviceInfo> {
    Vec::new()
}

/// Opens CUDA device `ordinal`.
///
/// Errors: [`Error::DeviceUnavailable`] — always, until the CUDA backend lands.
pub fn open(ordinal: usize) -> Result<Kit> {
    Err(Error::DeviceUnavailable {
        device: format!("cuda:{ordinal}"),
        reason: "this build's CUDA backend is not implemented yet".into(),
    })
}
