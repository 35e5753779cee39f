//! gpukit's CUDA backend.

pub mod plan;
pub mod ptx;
pub mod table;

use gpukit_core::{DeviceInfo, Error, Kit, Result};

/// The CUDA devices present.
pub fn devices() -> Vec<DeviceInfo> {
    Vec::new()
}

/// Opens CUDA device `ordinal`.
pub fn open(ordinal: usize) -> Result<Kit> {
    Err(Error::DeviceUnavailable {
        device: format!("cuda:{ordinal}"),
        reason: "not yet".into(),
    })
}
