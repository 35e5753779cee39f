//! gpukit's core: the traits a backend implements ([`Device`], [`Kernel`], [`Buffer`]),
//! element types ([`DType`], [`Element`]), the error type ([`Error`]), launch geometry
//! ([`LaunchConfig`]), and the backend-independent machinery every backend shares:
//! the [`Kit`] with its memory pool, kernel cache and profiler, device-resident
//! [`Buf`]fers, and one-call launches ([`Kit::run`], [`Kit::launch`]).
//!
//! This crate knows no backend and no op. Users normally depend on the `gpukit` facade,
//! which re-exports all of this and opens devices.

pub mod abi;
mod buf;
pub mod cast;
pub mod compare;
mod device;
mod dtype;
pub mod elements;
mod error;
pub mod halfconv;
mod hostmem;
mod kernel;
mod kit;
mod launch;
#[deny(unsafe_code)]
pub mod math;
pub mod numeric;
pub mod pad;
mod pool;
mod profile;
pub mod reduce;
pub mod reduce_axes;
pub mod resize;
mod run;
pub mod topk;

pub use buf::Buf;
pub use device::{
    Backend, Buffer, CENSUS_DEVICE_NAME, Device, DeviceInfo, DevicePtr, Kernel, KernelArg,
};
pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use hostmem::{HostMemory, host_memory};
pub use kernel::{BlockCtx, CpuBody, Global, KernelDef};
pub use kit::Kit;
pub use launch::{
    Dim3, LaunchConfig, MAX_BLOCK_DIM, MAX_BLOCK_THREADS, MAX_GRID_X, MAX_GRID_YZ,
    MAX_SHARED_BYTES, arg_bytes, check_entry_args, grid_for, ptx_entry_params,
};
pub use pool::{POOL_GRANULE, PoolStats, pool_blocks, pool_idle_bytes};
pub use profile::{MAX_TRACE_EVENTS, ProfileEntry, ProfileReport};
pub use run::{Binding, DevArg};

/// Re-export of the `bytemuck` crate used for casting element slices.
pub use bytemuck;
/// Re-export of the `half` crate: [`half::f16`] and [`half::bf16`] element types.
pub use half;
