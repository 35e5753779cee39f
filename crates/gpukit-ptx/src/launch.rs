//! [`launch`]: runs a kernel of a [`Module`] over a grid, blocks in parallel.

use rayon::prelude::*;

use crate::counters::Counters;
use crate::error::{EmuError, ErrorKind};
use crate::exec::{LaunchCtx, Scratch, Stats, run_block};
use crate::memory::GlobalMemory;
use crate::module::Module;

/// Most bytes of `.global`/`.const` module variables one module may declare in all
/// (256 MiB; each variable is capped at the same size): the emulator allocates them
/// when the module loads, so declarations must not become an unbounded allocation.
pub const MAX_MODULE_VAR_BYTES: u64 = 1 << 28;

/// Most shared memory a block may use (bytes): the sm_90 limit.
pub const MAX_SHARED_BYTES: usize = 227 * 1024;

/// One kernel argument, as the driver copies it into the parameter buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamValue {
    /// A 4-byte value (`int`, `unsigned`, `float` bits).
    U32(u32),
    /// An 8-byte value (pointers, `long long`, `double` bits).
    U64(u64),
    /// Any other by-value argument (a `.param .align A .b8 p[N]` struct), its bytes.
    Bytes(Vec<u8>),
}

impl ParamValue {
    /// The low `size` bytes of `bits` (size 4 or 8; other sizes give `Bytes`).
    pub fn new(bits: u64, size: usize) -> Self {
        match size {
            4 => ParamValue::U32(bits as u32),
            8 => ParamValue::U64(bits),
            n => ParamValue::Bytes(
                bits.to_le_bytes()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat(0))
                    .take(n)
                    .collect(),
            ),
        }
    }

    /// A device pointer.
    pub fn ptr(addr: u64) -> Self {
        ParamValue::U64(addr)
    }

    /// An `int`.
    pub fn i32(v: i32) -> Self {
        ParamValue::U32(v as u32)
    }

    /// A `long long`.
    pub fn i64(v: i64) -> Self {
        ParamValue::U64(v as u64)
    }

    /// A `float`.
    pub fn f32(v: f32) -> Self {
        ParamValue::U32(v.to_bits())
    }

    /// A `double`.
    pub fn f64(v: f64) -> Self {
        ParamValue::U64(v.to_bits())
    }

    /// Size in bytes.
    pub fn size(&self) -> usize {
        match self {
            ParamValue::U32(_) => 4,
            ParamValue::U64(_) => 8,
            ParamValue::Bytes(b) => b.len(),
        }
    }

    fn write(&self, out: &mut [u8]) {
        match self {
            ParamValue::U32(v) => out.copy_from_slice(&v.to_le_bytes()),
            ParamValue::U64(v) => out.copy_from_slice(&v.to_le_bytes()),
            ParamValue::Bytes(b) => out.copy_from_slice(b),
        }
    }
}

/// Checking options of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmuOptions {
    /// Memcheck: report out-of-bounds and misaligned accesses with the kernel,
    /// instruction, thread, block and address. (The emulator never touches memory
    /// outside the allocations whatever this says; with `false` the same checks stop
    /// the launch with the same report: they are what keeps the emulator memory-safe.)
    pub memcheck: bool,
    /// Racecheck: report a shared-memory write and another thread's read or write of
    /// the same byte with no barrier between them. Costs a shadow record per shared
    /// byte; turn off for speed.
    pub racecheck: bool,
    /// Stop a block after this many warp instructions (a runaway-loop guard), with an
    /// [`ErrorKind::StepLimit`] fault naming the kernel, the block and the instruction;
    /// `None`: no limit. On by default ([`DEFAULT_MAX_STEPS_PER_BLOCK`]).
    pub max_steps_per_block: Option<u64>,
    /// Count instructions by class, global sectors and shared wavefronts per launch
    /// ([`LaunchStats::counters`]); off by default (it costs time, nothing when off).
    pub counters: bool,
    /// Counting on a sample: run at most this many blocks, spread evenly over the grid
    /// (its first and last blocks among them), and extrapolate the counters to the
    /// whole grid (every figure × blocks ÷ blocks run; [`LaunchStats::blocks_run`]
    /// says how many ran). For estimating kernels at sizes too large to emulate whole:
    /// the blocks not run write nothing, so the outputs are not the kernel's result.
    /// Needs `counters`; `None` (the default) runs every block.
    pub sample_blocks: Option<u64>,
}

/// The default step limit of a block: 2^30 warp instructions, far above what any
/// shipped kernel's block executes (and tens of seconds of emulation), so a PTX loop
/// that never ends is a fault rather than a hang.
pub const DEFAULT_MAX_STEPS_PER_BLOCK: u64 = 1 << 30;

impl Default for EmuOptions {
    /// Both checks on, the default step limit.
    fn default() -> Self {
        EmuOptions {
            memcheck: true,
            racecheck: true,
            max_steps_per_block: Some(DEFAULT_MAX_STEPS_PER_BLOCK),
            counters: false,
            sample_blocks: None,
        }
    }
}

impl EmuOptions {
    /// Racecheck off (the fast configuration; bounds are always checked; the
    /// default step limit stays).
    pub fn fast() -> Self {
        EmuOptions {
            memcheck: false,
            racecheck: false,
            max_steps_per_block: Some(DEFAULT_MAX_STEPS_PER_BLOCK),
            counters: false,
            sample_blocks: None,
        }
    }
}

/// What a launch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Blocks in the grid.
    pub blocks: u64,
    /// Blocks the emulator ran: `blocks`, or fewer under [`EmuOptions::sample_blocks`]
    /// (then every other figure is extrapolated from these).
    pub blocks_run: u64,
    /// Threads in the grid (`blocks` × threads per block).
    pub threads: u64,
    /// Warp-level instructions executed (one per instruction per warp group).
    pub warp_instructions: u64,
    /// Thread-level instructions executed (active lanes summed).
    pub thread_instructions: u64,
    /// Thread-level executions of `.approx` instructions (`ex2.approx`, `rcp.approx`,
    /// `div.full` ...). PTX bounds only their error, so their results may differ from a
    /// GPU's in the last bits; a non-zero count means the launch is not bit-exact.
    pub approx_instructions: u64,
    /// The performance counters, when [`EmuOptions::counters`] was on.
    pub counters: Option<Counters>,
}

fn dim_ok(g: (u32, u32, u32), max: (u32, u32, u32)) -> bool {
    g.0 >= 1 && g.1 >= 1 && g.2 >= 1 && g.0 <= max.0 && g.1 <= max.1 && g.2 <= max.2
}

thread_local! {
    /// Each host thread's block scratch (warps, registers, shared memory, racecheck
    /// shadows), reused by every block it runs in every launch: a block re-initialises
    /// everything it can read (`exec::sched::init_block`: register slots written before
    /// they are read keep old values; racecheck records are invalidated by an epoch,
    /// not cleared), so nothing observable carries over, and the allocations and their
    /// first-touch page faults are paid once per thread rather than per launch.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// A scratch that stays allocated after a block is dropped when larger than this.
const KEEP_SCRATCH_BYTES: usize = 64 << 20;

/// Runs `f` with this thread's scratch (a fresh one if it is in use, which a block
/// never does: blocks do not launch).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            let r = f(&mut s);
            if s.bytes() > KEEP_SCRATCH_BYTES {
                *s = Scratch::default();
            }
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// Runs `kernel` of `module` on a grid of `grid` blocks of `block` threads.
///
/// `params` are the kernel's arguments in order (checked against the entry's
/// parameter sizes); pointers among them must be device addresses of allocations in
/// `mem`. `dynamic_shared_bytes` is the dynamic shared memory per block. Blocks run in
/// parallel (rayon); when several fail, the error of the lowest block index is
/// returned.
// The error is cold and carries the full report (kernel, instruction, thread, ...).
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
pub fn launch(
    module: &Module,
    kernel: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    dynamic_shared_bytes: usize,
    params: &[ParamValue],
    mem: &GlobalMemory<'_>,
    opts: &EmuOptions,
) -> Result<LaunchStats, EmuError> {
    let bad = |m: String| EmuError::launch(kernel, ErrorKind::BadLaunch(m));
    let Some(prog) = module.program(kernel) else {
        return Err(EmuError::launch(kernel, ErrorKind::UnknownKernel));
    };
    if !dim_ok(grid, (i32::MAX as u32, 65535, 65535)) {
        return Err(bad(format!("grid {grid:?} out of range")));
    }
    if !dim_ok(block, (1024, 1024, 64)) {
        return Err(bad(format!("block {block:?} out of range")));
    }
    let nthreads = block.0 * block.1 * block.2;
    if nthreads > 1024 {
        return Err(bad(format!("block {block:?} has more than 1024 threads")));
    }
    if let Some([x, y, z]) = prog.reqntid
        && (x, y, z) != block
    {
        return Err(bad(format!(
            "block {block:?} differs from the kernel's .reqntid {x}, {y}, {z}"
        )));
    }
    if let Some([x, y, z]) = prog.maxntid
        && nthreads > x * y * z
    {
        return Err(bad(format!(
            "block of {nthreads} threads exceeds the kernel's .maxntid {x}, {y}, {z}"
        )));
    }
    if params.len() != prog.params.len() {
        return Err(bad(format!(
            "{} arguments for {} parameters",
            params.len(),
            prog.params.len()
        )));
    }
    let mut pbuf = vec![0u8; prog.param_bytes as usize];
    for (i, (p, slot)) in params.iter().zip(&prog.params).enumerate() {
        if p.size() != slot.size as usize {
            return Err(bad(format!(
                "argument {i} has {} bytes, parameter `{}` {}",
                p.size(),
                slot.name,
                slot.size
            )));
        }
        let o = slot.offset as usize;
        p.write(&mut pbuf[o..o + p.size()]);
    }
    let dynamic = u32::try_from(dynamic_shared_bytes)
        .map_err(|_| bad("dynamic shared size too large".into()))?;
    let shared_size = if dynamic > 0 {
        u64::from(prog.dyn_shared_offset) + u64::from(dynamic)
    } else {
        u64::from(prog.static_shared)
    };
    if shared_size > MAX_SHARED_BYTES as u64 {
        return Err(bad(format!(
            "{shared_size} bytes of shared memory per block (at most {MAX_SHARED_BYTES})"
        )));
    }
    let vars = module.var_table();
    let table = mem
        .with_extra(&vars)
        .map_err(|e| bad(format!("module variables overlap the allocations: {e}")))?;
    let ctx = LaunchCtx {
        prog,
        grid: [grid.0, grid.1, grid.2],
        block: [block.0, block.1, block.2],
        nthreads,
        nwarps: nthreads.div_ceil(32),
        params: pbuf,
        mem: table,
        shared_size: shared_size as u32,
        dyn_shared: dynamic,
        racecheck: opts.racecheck,
        max_steps: opts.max_steps_per_block,
        counters: opts.counters,
        isa: crate::exec::Isa::detect(),
    };
    let nblocks = u64::from(grid.0) * u64::from(grid.1) * u64::from(grid.2);
    let nrun = match opts.sample_blocks {
        None => nblocks,
        Some(_) if !opts.counters => {
            return Err(bad("sample_blocks needs counters on".into()));
        }
        Some(0) => return Err(bad("sample_blocks is 0".into())),
        Some(n) => n.min(nblocks),
    };
    // The i-th block run: evenly spread, 0 and nblocks - 1 included (strictly
    // increasing since nrun <= nblocks).
    let block_of = |i: u64| -> u64 {
        if nrun == nblocks || nrun == 1 {
            i
        } else {
            (u128::from(i) * u128::from(nblocks - 1) / u128::from(nrun - 1)) as u64
        }
    };
    // The lowest failing block so far: blocks above it need not run.
    let first_err = std::sync::atomic::AtomicU64::new(u64::MAX);
    #[derive(Default)]
    struct Acc {
        stats: Stats,
        err: Option<(u64, EmuError)>,
    }
    fn merge(mut a: Acc, b: Acc) -> Acc {
        a.stats.warp_insts += b.stats.warp_insts;
        a.stats.thread_insts += b.stats.thread_insts;
        a.stats.approx += b.stats.approx;
        a.stats.tally = match (a.stats.tally.take(), b.stats.tally) {
            (Some(mut x), Some(y)) => {
                x.c.add(&y.c);
                x.sectors.extend_from_slice(&y.sectors);
                if x.sectors.len() > 1 << 16 {
                    x.compact();
                }
                Some(x)
            }
            (x, y) => x.or(y),
        };
        a.err = match (a.err, b.err) {
            (Some(x), Some(y)) => Some(if x.0 <= y.0 { x } else { y }),
            (x, y) => x.or(y),
        };
        a
    }
    let acc = (0..nrun)
        .into_par_iter()
        .map(block_of)
        .map(|b| {
            if b > first_err.load(std::sync::atomic::Ordering::Relaxed) {
                return Acc::default();
            }
            match with_scratch(|scratch| run_block(&ctx, scratch, b, kernel)) {
                Ok(stats) => Acc { stats, err: None },
                Err(e) => {
                    first_err.fetch_min(b, std::sync::atomic::Ordering::Relaxed);
                    Acc {
                        stats: Stats::default(),
                        err: Some((b, e)),
                    }
                }
            }
        })
        .reduce(Acc::default, merge);
    if let Some((_, e)) = acc.err {
        return Err(e);
    }
    let counters = acc.stats.tally.map(|mut t| {
        t.compact();
        t.c.unique_sectors = t.sectors.len() as u64;
        t.c.scaled(nblocks, nrun)
    });
    let scale = |v: u64| -> u64 {
        if nrun == nblocks {
            v
        } else {
            u64::try_from(u128::from(v) * u128::from(nblocks) / u128::from(nrun))
                .unwrap_or(u64::MAX)
        }
    };
    let stats = LaunchStats {
        blocks: nblocks,
        blocks_run: nrun,
        threads: nblocks * u64::from(nthreads),
        warp_instructions: scale(acc.stats.warp_insts),
        thread_instructions: scale(acc.stats.thread_insts),
        approx_instructions: scale(acc.stats.approx),
        counters,
    };
    Ok(stats)
}
