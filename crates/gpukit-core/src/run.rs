//! One-call launches: [`Kit::run`] over host slices (the seed's `gk_run`) and
//! [`Kit::launch`] over device-resident buffers (the seed's `gk_run_dev`).

use crate::kit::lock;
use crate::{Buf, DType, DevicePtr, Element, KernelArg, KernelDef, Kit, LaunchConfig, Result};

/// One argument of [`Kit::run`], in binding order: a host slice to marshal or a scalar.
#[derive(Debug)]
pub enum Binding<'a> {
    /// Uploaded before the launch, not downloaded.
    In {
        /// The data.
        bytes: &'a [u8],
        /// Element type (`None`: raw bytes).
        dtype: Option<DType>,
    },
    /// Zero-filled on the device before the launch, downloaded after it.
    Out {
        /// Where the result goes.
        bytes: &'a mut [u8],
        /// Element type (`None`: raw bytes).
        dtype: Option<DType>,
    },
    /// Uploaded before and downloaded after the launch.
    InOut {
        /// The data, updated in place.
        bytes: &'a mut [u8],
        /// Element type (`None`: raw bytes).
        dtype: Option<DType>,
    },
    /// An i32 scalar.
    I32(i32),
    /// An i64 scalar.
    I64(i64),
    /// An f32 scalar.
    F32(f32),
    /// An f64 scalar.
    F64(f64),
}

impl<'a> Binding<'a> {
    /// An input slice.
    pub fn input<T: Element>(data: &'a [T]) -> Binding<'a> {
        Binding::In {
            bytes: bytemuck::cast_slice(data),
            dtype: Some(T::DTYPE),
        }
    }

    /// An output slice (its device copy starts zeroed).
    pub fn output<T: Element>(data: &'a mut [T]) -> Binding<'a> {
        Binding::Out {
            bytes: bytemuck::cast_slice_mut(data),
            dtype: Some(T::DTYPE),
        }
    }

    /// An in-out slice.
    pub fn inout<T: Element>(data: &'a mut [T]) -> Binding<'a> {
        Binding::InOut {
            bytes: bytemuck::cast_slice_mut(data),
            dtype: Some(T::DTYPE),
        }
    }

    /// Raw input bytes (any element layout the kernel reads).
    pub fn raw_in(bytes: &'a [u8]) -> Binding<'a> {
        Binding::In { bytes, dtype: None }
    }

    /// Raw output bytes.
    pub fn raw_out(bytes: &'a mut [u8]) -> Binding<'a> {
        Binding::Out { bytes, dtype: None }
    }

    /// Raw in-out bytes.
    pub fn raw_inout(bytes: &'a mut [u8]) -> Binding<'a> {
        Binding::InOut { bytes, dtype: None }
    }
}

/// One argument of [`Kit::launch`]: a device-resident buffer or a scalar.
#[derive(Debug, Clone, Copy)]
pub enum DevArg<'a> {
    /// A buffer of the launching kit (the absent buffer passes a null pointer).
    Buf(&'a Buf),
    /// An i32 scalar.
    I32(i32),
    /// An i64 scalar.
    I64(i64),
    /// An f32 scalar.
    F32(f32),
    /// An f64 scalar.
    F64(f64),
}

impl<'a> From<&'a Buf> for DevArg<'a> {
    fn from(b: &'a Buf) -> DevArg<'a> {
        DevArg::Buf(b)
    }
}

/// A pooled block borrowed for the span of one [`Kit::run`]; returned on drop.
struct Scratch<'k> {
    kit: &'k Kit,
    slot: Option<usize>,
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.slot {
            lock(&self.kit.inner.pool).give(s);
        }
    }
}

impl Kit {
    /// Runs `def` in one call: loads (and caches) the kernel, allocates a pooled device
    /// block per buffer binding, uploads inputs, zero-fills outputs, passes arguments in
    /// binding order, launches, waits, downloads outputs and returns the blocks.
    ///
    /// Errors: [`crate::Error::Launch`] for a configuration beyond the limits,
    /// [`crate::Error::KernelNotFound`]/[`crate::Error::Compile`] from loading, [`crate::Error::OutOfMemory`],
    /// and whatever the kernel reports ([`crate::Error::Argument`], [`crate::Error::KernelFault`]).
    pub fn run(
        &self,
        def: &KernelDef,
        cfg: LaunchConfig,
        bindings: &mut [Binding<'_>],
    ) -> Result<()> {
        cfg.validate(def.name())?;
        let kernel = self.load(def)?;
        let dev = self.device();
        let mut blocks = Vec::with_capacity(bindings.len());
        let mut args = Vec::with_capacity(bindings.len());
        for b in bindings.iter() {
            let (bytes, dtype, upload, zero): (usize, Option<DType>, Option<&[u8]>, bool) = match b
            {
                Binding::In { bytes, dtype } => (bytes.len(), *dtype, Some(bytes), false),
                Binding::InOut { bytes, dtype } => (bytes.len(), *dtype, Some(&**bytes), false),
                Binding::Out { bytes, dtype } => (bytes.len(), *dtype, None, true),
                Binding::I32(v) => {
                    args.push(KernelArg::I32(*v));
                    blocks.push(Scratch {
                        kit: self,
                        slot: None,
                    });
                    continue;
                }
                Binding::I64(v) => {
                    args.push(KernelArg::I64(*v));
                    blocks.push(Scratch {
                        kit: self,
                        slot: None,
                    });
                    continue;
                }
                Binding::F32(v) => {
                    args.push(KernelArg::F32(*v));
                    blocks.push(Scratch {
                        kit: self,
                        slot: None,
                    });
                    continue;
                }
                Binding::F64(v) => {
                    args.push(KernelArg::F64(*v));
                    blocks.push(Scratch {
                        kit: self,
                        slot: None,
                    });
                    continue;
                }
            };
            if bytes == 0 {
                args.push(KernelArg::Buffer {
                    ptr: DevicePtr::NULL,
                    bytes: 0,
                    dtype,
                });
                blocks.push(Scratch {
                    kit: self,
                    slot: None,
                });
                continue;
            }
            let (slot, ptr) = self.acquire(bytes)?;
            blocks.push(Scratch {
                kit: self,
                slot: Some(slot),
            });
            if let Some(src) = upload {
                // SAFETY: the range is the first `bytes` bytes of the block just taken.
                unsafe { dev.write(ptr, src)? };
            }
            if zero {
                // SAFETY: as above.
                unsafe { dev.fill_zero(ptr, bytes)? };
            }
            args.push(KernelArg::Buffer { ptr, bytes, dtype });
        }
        // SAFETY: every buffer arg is a block held in `blocks` until after the sync below.
        unsafe { self.launch_raw(&*kernel, &cfg, &args, true)? };
        for (b, a) in bindings.iter_mut().zip(&args) {
            if let (
                Binding::Out { bytes, .. } | Binding::InOut { bytes, .. },
                KernelArg::Buffer { ptr, .. },
            ) = (b, a)
                && !bytes.is_empty()
            {
                // SAFETY: `ptr` is the block taken for this binding, `bytes` long.
                unsafe { dev.read(*ptr, bytes)? };
            }
        }
        drop(blocks);
        Ok(())
    }

    fn dev_args(&self, kernel: &str, args: &[DevArg<'_>]) -> Result<Vec<KernelArg>> {
        args.iter()
            .enumerate()
            .map(|(i, a)| match *a {
                DevArg::Buf(b) => b.kernel_arg(self, kernel, &format!("argument {i}")),
                DevArg::I32(v) => Ok(KernelArg::I32(v)),
                DevArg::I64(v) => Ok(KernelArg::I64(v)),
                DevArg::F32(v) => Ok(KernelArg::F32(v)),
                DevArg::F64(v) => Ok(KernelArg::F64(v)),
            })
            .collect()
    }

    /// Launches `def` over device-resident buffers: loads and caches the kernel,
    /// launches, and waits unless autosync is off ([`Kit::set_autosync`]).
    ///
    /// Errors: [`crate::Error::DeviceMismatch`] for a buffer of another kit, and those of
    /// [`Kit::run`].
    pub fn launch(&self, def: &KernelDef, cfg: LaunchConfig, args: &[DevArg<'_>]) -> Result<()> {
        cfg.validate(def.name())?;
        let raw = self.dev_args(def.name(), args)?;
        let kernel = self.load(def)?;
        // SAFETY: every buffer arg comes from a `Buf` of this kit (checked), whose range
        // lies in live memory held by the caller's borrow for the launch; with autosync
        // off, pooled memory returned early is only reused by work ordered after the
        // kernel on the device's one stream.
        unsafe { self.launch_raw(&*kernel, &cfg, &raw, false) }
    }

    /// Launches one of the backend's built-in kernels (`{op}_{dtype}`) over device
    /// buffers: the path the operator family takes.
    ///
    /// Every argument is checked against the kernel's ABI signature first
    /// ([`crate::abi::check_args`]: kinds, dtypes, buffer extents), so a launch whose
    /// scalars lie fails before anything is allocated or run.
    ///
    /// Errors: [`crate::Error::KernelNotFound`], [`crate::Error::Argument`], and those of
    /// [`Kit::launch`].
    pub fn launch_builtin(&self, name: &str, cfg: LaunchConfig, args: &[DevArg<'_>]) -> Result<()> {
        cfg.validate(name)?;
        let raw = self.dev_args(name, args)?;
        let kernel = self.builtin(name)?;
        // Every argument against the ABI table before any backend sizes anything from
        // the scalars (a table, a plan's scratch) or runs anything.
        crate::abi::check_args(name, &raw)?;
        // SAFETY: as in `launch`.
        unsafe { self.launch_raw(&*kernel, &cfg, &raw, false) }
    }
}
