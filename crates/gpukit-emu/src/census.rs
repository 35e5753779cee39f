//! The census kit: a PTX-emulator device that **records launches and runs nothing**
//! (the seed's `gk_open_census`).
//!
//! Open it with [`crate::EmuDevice::census`]. Every call of a workload is accepted and
//! validated exactly as on the emulator (the ops' checks, the ABI checks, the CUDA
//! backend's launch plan, the launch geometry against the `.entry`), and every kernel
//! the CUDA backend would launch is recorded with its grid, block, dynamic shared memory
//! and arguments; no kernel body runs, so outputs keep what they held (zeros for fresh
//! buffers). Uploads, downloads and copies work (device memory is host memory).
//!
//! The [`Census`] handle lists the distinct launches (kernel, geometry, argument sizes
//! and scalars) with how often each occurred, in first-seen order: exactly the kernels a
//! program needs, e.g. to warm a cache or build them ahead of time. For each distinct
//! launch it keeps a snapshot of the argument bytes as they were at the first
//! occurrence, so [`Census::predict`] can replay that one launch on a counting
//! emulator and estimate the whole workload's time on a GPU without running it:
//! `Σ calls × estimate(counters of the one replayed launch)`. Data-dependent kernels
//! (indices, masks) are replayed on the data the census saw, which, since nothing ran,
//! are the uploaded inputs and zeros for every intermediate result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gpukit_core::{DevicePtr, KernelArg, LaunchConfig, Result};
use gpukit_ptx::Module;

use crate::perf::{self, Estimate, GpuSpec};
use crate::{EmuDevice, EmuOptions, LaunchRecord};

/// One argument of a recorded launch, as the key of its shape: a buffer's byte count
/// and the index of its merged range, or a scalar's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CensusArg {
    /// A buffer argument: bytes, and which snapshot range holds it (`None` for an
    /// absent / empty buffer).
    Buffer {
        /// Bytes the argument spans.
        bytes: usize,
        /// Index into [`CensusEntry`]'s snapshot ranges and the byte offset there.
        at: Option<(usize, usize)>,
    },
    /// An i64 scalar.
    I64(i64),
    /// An i32 scalar.
    I32(i32),
    /// An f32 scalar, as bits.
    F32(u32),
    /// An f64 scalar, as bits.
    F64(u64),
}

/// One distinct launch of a workload.
#[derive(Debug, Clone)]
pub struct CensusEntry {
    /// The kernel's entry name (a built-in's `{op}_{dtype}` or a plan's auxiliary
    /// entry; a user kernel's name).
    pub kernel: String,
    /// Grid, blocks per axis.
    pub grid: [u32; 3],
    /// Block, threads per axis.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared: u32,
    /// The arguments (sizes and scalars).
    pub args: Vec<CensusArg>,
    /// How many times the workload launched it.
    pub calls: u64,
    /// Whether it is a user kernel (loaded from PTX or CUDA C) rather than a built-in.
    pub user: bool,
    /// The launch's buffer bytes (overlapping ranges once): every input read once and
    /// every output written once.
    pub ideal_bytes: u64,
    /// The argument ranges' bytes at the first occurrence.
    snapshot: Vec<Vec<u8>>,
    /// Each snapshot range's start modulo [`crate::EMU_ALIGN`] (a replay places it at the
    /// same alignment, so vector accesses stay aligned).
    snapshot_align: Vec<u32>,
    /// The user kernel's module (built-ins are found by name).
    module: Option<Arc<Module>>,
}

/// The key of a distinct launch.
type Key = (String, [u32; 3], [u32; 3], u32, Vec<CensusArg>);

#[derive(Default)]
struct Inner {
    entries: Vec<CensusEntry>,
    index: HashMap<Key, usize>,
}

/// A shared handle on a census device's records (cheap to clone; the device keeps
/// appending while a handle is held).
#[derive(Clone, Default)]
pub struct Census(Arc<Mutex<Inner>>);

impl std::fmt::Debug for Census {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Census")
            .field("distinct", &self.entries().len())
            .field("launches", &self.launches())
            .finish()
    }
}

/// One distinct launch's estimate on a GPU.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// The launch.
    pub entry: CensusEntry,
    /// The counters of its one replayed launch.
    pub record: LaunchRecord,
    /// The estimate of one launch on the GPU.
    pub estimate: Estimate,
    /// `calls × estimate.seconds`.
    pub total_seconds: f64,
}

impl Census {
    /// Every distinct launch so far, in first-seen order.
    pub fn entries(&self) -> Vec<CensusEntry> {
        self.lock().entries.clone()
    }

    /// How many launches were recorded (all occurrences).
    pub fn launches(&self) -> u64 {
        self.lock().entries.iter().map(|e| e.calls).sum()
    }

    /// The distinct kernel names the workload needs, sorted.
    pub fn kernels(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .lock()
            .entries
            .iter()
            .map(|e| e.kernel.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records one launch of `kernel` whose buffer arguments lie in `ranges` (merged,
    /// sorted, inside live allocations: the caller's contract).
    pub(crate) fn record(
        &self,
        kernel: &str,
        cfg: &LaunchConfig,
        args: &[KernelArg],
        ranges: &[(u64, u64)],
        module: Option<&Arc<Module>>,
    ) {
        let at = |ptr: u64| {
            ranges
                .iter()
                .position(|&(lo, hi)| lo <= ptr && ptr < hi)
                .map(|i| (i, (ptr - ranges[i].0) as usize))
        };
        let key_args: Vec<CensusArg> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Buffer { ptr, bytes, .. } => CensusArg::Buffer {
                    bytes,
                    at: if bytes > 0 && ptr.0 != 0 {
                        at(ptr.0)
                    } else {
                        None
                    },
                },
                KernelArg::I64(v) => CensusArg::I64(v),
                KernelArg::I32(v) => CensusArg::I32(v),
                KernelArg::F32(v) => CensusArg::F32(v.to_bits()),
                KernelArg::F64(v) => CensusArg::F64(v.to_bits()),
            })
            .collect();
        let grid = [cfg.grid.x, cfg.grid.y, cfg.grid.z];
        let block = [cfg.block.x, cfg.block.y, cfg.block.z];
        let shared = u32::try_from(cfg.shared_bytes).unwrap_or(u32::MAX);
        let key: Key = (kernel.to_string(), grid, block, shared, key_args.clone());
        let mut g = self.lock();
        if let Some(&i) = g.index.get(&key) {
            g.entries[i].calls += 1;
            return;
        }
        let snapshot = ranges
            .iter()
            .map(|&(lo, hi)| {
                let mut v = vec![0u8; (hi - lo) as usize];
                // SAFETY: the range lies inside a live allocation of the census device
                // (host memory; the contract of `Device::launch`, and the device holds
                // its registry's read lock for the launch); nothing writes it meanwhile.
                unsafe {
                    std::ptr::copy_nonoverlapping(lo as usize as *const u8, v.as_mut_ptr(), v.len())
                };
                v
            })
            .collect();
        let snapshot_align = ranges
            .iter()
            .map(|&(lo, _)| (lo % crate::EMU_ALIGN as u64) as u32)
            .collect();
        let i = g.entries.len();
        g.entries.push(CensusEntry {
            kernel: kernel.to_string(),
            grid,
            block,
            dynamic_shared: shared,
            args: key_args,
            calls: 1,
            user: module.is_some(),
            ideal_bytes: ranges.iter().map(|&(lo, hi)| hi - lo).sum(),
            snapshot,
            snapshot_align,
            module: module.cloned(),
        });
        g.index.insert(key, i);
    }

    /// Replays each distinct launch once on a counting emulator (on copies of its
    /// snapshot) and estimates the workload on `gpu`: one [`Prediction`] per distinct
    /// launch, in first-seen order.
    ///
    /// Errors: a replayed launch's fault or launch error (the kernel's name in it);
    /// [`gpukit_core::Error::OutOfMemory`] when a snapshot cannot be copied.
    pub fn predict(&self, gpu: &GpuSpec) -> Result<Vec<Prediction>> {
        let dev = EmuDevice::with_options(EmuOptions {
            counters: true,
            ..EmuDevice::new().options()
        });
        let log = dev.launch_log();
        let mut out = Vec::new();
        for e in self.entries() {
            // Fresh copies of the argument ranges, and the arguments rebased onto them.
            let bufs = e
                .snapshot
                .iter()
                .map(|bytes| {
                    let b = dev.raw_alloc(bytes.len())?;
                    // SAFETY: `b` is a fresh allocation of at least `bytes.len()` bytes.
                    unsafe {
                        std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.ptr.as_ptr(), bytes.len())
                    };
                    Ok(b)
                })
                .collect::<Result<Vec<_>>>()?;
            let args: Vec<KernelArg> = e
                .args
                .iter()
                .map(|a| match *a {
                    CensusArg::Buffer { bytes, at } => KernelArg::Buffer {
                        ptr: at.map_or(DevicePtr(0), |(i, off)| {
                            DevicePtr(bufs[i].ptr.as_ptr() as usize as u64).add(off)
                        }),
                        bytes,
                        dtype: None,
                    },
                    CensusArg::I64(v) => KernelArg::I64(v),
                    CensusArg::I32(v) => KernelArg::I32(v),
                    CensusArg::F32(v) => KernelArg::F32(f32::from_bits(v)),
                    CensusArg::F64(v) => KernelArg::F64(f64::from_bits(v)),
                })
                .collect();
            let cfg = LaunchConfig {
                grid: gpukit_core::Dim3 {
                    x: e.grid[0],
                    y: e.grid[1],
                    z: e.grid[2],
                },
                block: gpukit_core::Dim3 {
                    x: e.block[0],
                    y: e.block[1],
                    z: e.block[2],
                },
                shared_bytes: e.dynamic_shared as usize,
            };
            let module = match &e.module {
                Some(m) => m.clone(),
                None => dev.module_of(&e.kernel)?,
            };
            dev.run_entry(&module, &e.kernel, &cfg, &args, false)?;
            drop(bufs);
            let Some(record) = log.take().pop() else {
                // An empty grid records nothing and costs nothing.
                continue;
            };
            let Some((estimate, _, _)) = perf::estimate_record(gpu, &record) else {
                continue;
            };
            let total_seconds = estimate.seconds * e.calls as f64;
            out.push(Prediction {
                entry: e,
                record,
                estimate,
                total_seconds,
            });
        }
        Ok(out)
    }

    /// Writes every distinct built-in launch as a replay file (the format of
    /// [`REPLAY_MAGIC`]): the PTX module and entry, geometry, parameters (pointers as a
    /// snapshot range and offset) and the snapshot ranges' bytes, so a program that
    /// knows only `gpukit-ptx` can run the same launches (the emulator's speed benchmark,
    /// `tools/emu-rate`). User kernels are left out (their PTX is the user's).
    ///
    /// Returns how many launches were written and how many user launches were left out.
    /// Errors: the writer's error.
    pub fn write_replay(&self, out: &mut dyn std::io::Write) -> std::io::Result<(usize, usize)> {
        let entries = self.entries();
        let index = crate::builtin_entries();
        let builtin: Vec<(&CensusEntry, &str)> = entries
            .iter()
            .filter(|e| !e.user)
            .filter_map(|e| {
                let i = *index.get(&e.kernel)?;
                Some((e, gpukit_cuda::ptx::MODULES[i].0))
            })
            .collect();
        let mut b: Vec<u8> = Vec::new();
        b.extend_from_slice(REPLAY_MAGIC);
        put_u32(&mut b, builtin.len());
        for (e, family) in &builtin {
            put_str(&mut b, family);
            put_str(&mut b, &e.kernel);
            for v in e.grid.iter().chain(&e.block).chain([&e.dynamic_shared]) {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(&e.calls.to_le_bytes());
            put_u32(&mut b, e.snapshot.len());
            for (bytes, align) in e.snapshot.iter().zip(&e.snapshot_align) {
                b.extend_from_slice(&align.to_le_bytes());
                b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                b.extend_from_slice(bytes);
            }
            put_u32(&mut b, e.args.len());
            for a in &e.args {
                match *a {
                    CensusArg::Buffer { at: None, .. } => b.push(0),
                    CensusArg::Buffer {
                        at: Some((i, off)), ..
                    } => {
                        b.push(1);
                        put_u32(&mut b, i);
                        b.extend_from_slice(&(off as u64).to_le_bytes());
                    }
                    CensusArg::I32(v) => {
                        b.push(2);
                        b.extend_from_slice(&v.to_le_bytes());
                    }
                    CensusArg::F32(v) => {
                        b.push(2);
                        b.extend_from_slice(&v.to_le_bytes());
                    }
                    CensusArg::I64(v) => {
                        b.push(3);
                        b.extend_from_slice(&v.to_le_bytes());
                    }
                    CensusArg::F64(v) => {
                        b.push(3);
                        b.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
        }
        out.write_all(&b)?;
        out.flush()?;
        Ok((builtin.len(), entries.len() - builtin.len()))
    }
}

/// The first bytes of a replay file ([`Census::write_replay`]). After them, all
/// integers little-endian, strings as a u32 byte count and UTF-8 bytes:
///
/// ```text
/// u32 launches, then per launch:
///   str module family (kernels-cuda/ptx/{family}.ptx), str entry,
///   u32 grid x y z, u32 block x y z, u32 dynamic shared bytes, u64 calls,
///   u32 ranges, per range: u32 start modulo 64, u64 length, the bytes,
///   u32 params, per param: u8 tag, then
///     0: a null pointer | 1: u32 range, u64 offset (a pointer into the range)
///     2: u32 value      | 3: u64 value
/// ```
pub const REPLAY_MAGIC: &[u8; 8] = b"GKRPLAY1";

fn put_u32(b: &mut Vec<u8>, v: usize) {
    b.extend_from_slice(&(v as u32).to_le_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    put_u32(b, s.len());
    b.extend_from_slice(s.as_bytes());
}
