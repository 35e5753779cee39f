//! Exact per-launch performance counters (an opt-in mode of the emulator,
//! [`crate::EmuOptions::counters`]): instructions by class, flops, global-memory
//! requests and the 32-byte sectors they touch, shared-memory wavefronts under the
//! 32-bank rule, SIMT efficiency and divergent branches. They are the quantities
//! Nsight Compute derives its memory and instruction metrics from, computed from the
//! emulator's exact execution, so they are identical from run to run and across
//! thread counts (every figure is a sum or a set size). docs/emulator.md explains
//! each one and what it does not model (caches, timing).
//!
//! This is a leaf module: the interpreter fills a [`Tally`] per block; the launch sums
//! them into one [`Counters`].

use crate::float::Fmt;
use crate::program::{Alu, FOp, Op};

/// Instruction classes, Nsight-style (the index into [`Counters::warp_insts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstClass {
    /// f32 arithmetic (add, mul, fma, min/max, abs, neg ...).
    Fp32,
    /// f64 arithmetic.
    Fp64,
    /// f16 / bf16 arithmetic (scalar or packed pairs).
    Fp16,
    /// Integer and bitwise arithmetic.
    Int,
    /// Conversions between types (`cvt`).
    Convert,
    /// Multi-instruction or special-function-unit operations: `div`, `sqrt`, `rcp` and
    /// every `.approx` (`ex2`, `lg2`, `sin`, `cos`, `tanh`, `rsqrt`).
    Special,
    /// Comparisons, selects and predicate logic (`setp`, `set`, `selp`, `testp`).
    Compare,
    /// Register moves, packs and address computations (`mov`, `cvta`, `%clock`).
    Move,
    /// Branches, calls, returns, exit.
    Control,
    /// Loads from global memory (generic addresses that resolve to global included).
    GlobalLoad,
    /// Stores to global memory.
    GlobalStore,
    /// Loads from shared memory.
    SharedLoad,
    /// Stores to shared memory.
    SharedStore,
    /// Loads and stores of local memory (the per-thread stack: spills, local arrays).
    Local,
    /// Loads of kernel parameters and the constant bank.
    ParamConst,
    /// Atomic operations (global and shared).
    Atomic,
    /// Block barriers (`bar.sync`, `bar.arrive`, `bar.red`).
    Barrier,
    /// Warp-synchronous operations: `shfl`, `vote`, `redux`, `match`, `bar.warp.sync`,
    /// `activemask`.
    WarpSync,
    /// `cp.async` (global to shared copies).
    AsyncCopy,
    /// Everything else (`nop`, `trap`, `brkpt`).
    Other,
}

/// Number of [`InstClass`] values.
pub const CLASSES: usize = 20;

impl InstClass {
    /// Every class, in index order.
    pub const ALL: [InstClass; CLASSES] = [
        InstClass::Fp32,
        InstClass::Fp64,
        InstClass::Fp16,
        InstClass::Int,
        InstClass::Convert,
        InstClass::Special,
        InstClass::Compare,
        InstClass::Move,
        InstClass::Control,
        InstClass::GlobalLoad,
        InstClass::GlobalStore,
        InstClass::SharedLoad,
        InstClass::SharedStore,
        InstClass::Local,
        InstClass::ParamConst,
        InstClass::Atomic,
        InstClass::Barrier,
        InstClass::WarpSync,
        InstClass::AsyncCopy,
        InstClass::Other,
    ];

    /// A short lower-case name (`"fp32"`, `"global_load"` ...).
    pub const fn name(self) -> &'static str {
        match self {
            InstClass::Fp32 => "fp32",
            InstClass::Fp64 => "fp64",
            InstClass::Fp16 => "fp16",
            InstClass::Int => "int",
            InstClass::Convert => "convert",
            InstClass::Special => "special",
            InstClass::Compare => "compare",
            InstClass::Move => "move",
            InstClass::Control => "control",
            InstClass::GlobalLoad => "global_load",
            InstClass::GlobalStore => "global_store",
            InstClass::SharedLoad => "shared_load",
            InstClass::SharedStore => "shared_store",
            InstClass::Local => "local",
            InstClass::ParamConst => "param_const",
            InstClass::Atomic => "atomic",
            InstClass::Barrier => "barrier",
            InstClass::WarpSync => "warp_sync",
            InstClass::AsyncCopy => "async_copy",
            InstClass::Other => "other",
        }
    }
}

/// Bytes of one DRAM / L2 sector.
pub const SECTOR_BYTES: u64 = 32;

/// One launch's counters. Every field is a sum over the launch's warps (or a set size),
/// so the figures do not depend on the order blocks ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Warp-level instructions executed, by [`InstClass`] index.
    pub warp_insts: [u64; CLASSES],
    /// Thread-level instructions executed (active, predicated-on lanes), by class.
    pub thread_insts: [u64; CLASSES],
    /// f32 floating-point operations (add, sub, mul: 1 per lane; fma: 2).
    pub flops_f32: u64,
    /// f64 floating-point operations (as `flops_f32`).
    pub flops_f64: u64,
    /// f16/bf16 floating-point operations (a packed pair counts each half).
    pub flops_f16: u64,
    /// Warp-level global load instructions (requests).
    pub global_load_requests: u64,
    /// Warp-level global store instructions.
    pub global_store_requests: u64,
    /// 32-byte sectors the global loads touch, summed per request.
    pub global_load_sectors: u64,
    /// 32-byte sectors the global stores touch, summed per request.
    pub global_store_sectors: u64,
    /// Bytes the active lanes of the global loads asked for.
    pub global_load_bytes: u64,
    /// Bytes the active lanes of the global stores wrote.
    pub global_store_bytes: u64,
    /// Distinct 32-byte sectors of global memory touched by the whole launch (loads,
    /// stores, atomics, `cp.async` sources): the DRAM traffic of an ideal cache.
    pub unique_sectors: u64,
    /// Warp-level shared-memory load instructions.
    pub shared_load_requests: u64,
    /// Warp-level shared-memory store instructions.
    pub shared_store_requests: u64,
    /// Wavefronts the shared loads need: per request, the largest number of distinct
    /// 4-byte words any one of the 32 banks must serve.
    pub shared_load_wavefronts: u64,
    /// Wavefronts the shared stores need (as `shared_load_wavefronts`).
    pub shared_store_wavefronts: u64,
    /// Wavefronts the shared accesses would need without bank conflicts: per request,
    /// `ceil(distinct bytes / 128)`, at least 1.
    pub shared_ideal_wavefronts: u64,
    /// Warp-level local-memory accesses (spills and stack arrays).
    pub local_requests: u64,
    /// Warp-level atomic instructions.
    pub atomic_requests: u64,
    /// Warp-level branch instructions executed (`bra`, `brx`).
    pub branches: u64,
    /// Branches whose active lanes did not all go the same way.
    pub divergent_branches: u64,
}

impl Counters {
    /// Warp instructions of one class.
    pub fn warp(&self, c: InstClass) -> u64 {
        self.warp_insts[c as usize]
    }

    /// Thread instructions of one class.
    pub fn thread(&self, c: InstClass) -> u64 {
        self.thread_insts[c as usize]
    }

    /// All warp-level instructions.
    pub fn total_warp_insts(&self) -> u64 {
        self.warp_insts.iter().sum()
    }

    /// All thread-level instructions.
    pub fn total_thread_insts(&self) -> u64 {
        self.thread_insts.iter().sum()
    }

    /// Average active lanes per warp instruction (32 = no divergence or predication).
    pub fn simt_efficiency(&self) -> f64 {
        let w = self.total_warp_insts();
        if w == 0 {
            0.0
        } else {
            self.total_thread_insts() as f64 / w as f64
        }
    }

    /// Global sectors per request (loads and stores together).
    pub fn sectors_per_request(&self) -> f64 {
        let r = self.global_load_requests + self.global_store_requests;
        if r == 0 {
            0.0
        } else {
            (self.global_load_sectors + self.global_store_sectors) as f64 / r as f64
        }
    }

    /// Useful bytes ÷ sector bytes moved, over global loads and stores (1.0 = every
    /// byte of every touched sector was asked for).
    pub fn coalescing_efficiency(&self) -> f64 {
        let moved = (self.global_load_sectors + self.global_store_sectors) * SECTOR_BYTES;
        if moved == 0 {
            1.0
        } else {
            (self.global_load_bytes + self.global_store_bytes) as f64 / moved as f64
        }
    }

    /// DRAM bytes if every sector is fetched once per launch (an ideal L2).
    pub fn dram_bytes_lower(&self) -> u64 {
        self.unique_sectors * SECTOR_BYTES
    }

    /// DRAM bytes without any reuse: every request's sectors fetched again.
    pub fn dram_bytes_upper(&self) -> u64 {
        (self.global_load_sectors + self.global_store_sectors) * SECTOR_BYTES
    }

    /// Shared wavefronts beyond the conflict-free ideal, per shared request.
    pub fn bank_conflicts_per_request(&self) -> f64 {
        let r = self.shared_load_requests + self.shared_store_requests;
        if r == 0 {
            0.0
        } else {
            let w = self.shared_load_wavefronts + self.shared_store_wavefronts;
            w.saturating_sub(self.shared_ideal_wavefronts) as f64 / r as f64
        }
    }

    /// Adds another launch's (or block's) figures to these, field by field. For the
    /// unique sectors this is the sum over launches (each launch fetching its own
    /// sectors once); within a launch the emulator deduplicates across blocks itself.
    pub fn add(&mut self, o: &Counters) {
        self.zip_with(o, |a, b| a + b);
    }

    /// These counters scaled by `num / den` (rounded to nearest), every field alike:
    /// a sample of a grid's blocks extrapolated to the whole grid
    /// ([`crate::EmuOptions::sample_blocks`]). `den == 0` leaves them unchanged.
    pub fn scaled(&self, num: u64, den: u64) -> Counters {
        let mut out = *self;
        if den != 0 {
            out.zip_with(self, |a, _| {
                let v = (u128::from(a) * u128::from(num) + u128::from(den / 2)) / u128::from(den);
                u64::try_from(v).unwrap_or(u64::MAX)
            });
        }
        out
    }

    /// Applies `f` to each field of `self` and the same field of `o`.
    fn zip_with(&mut self, o: &Counters, f: impl Fn(u64, u64) -> u64) {
        for i in 0..CLASSES {
            self.warp_insts[i] = f(self.warp_insts[i], o.warp_insts[i]);
            self.thread_insts[i] = f(self.thread_insts[i], o.thread_insts[i]);
        }
        self.flops_f32 = f(self.flops_f32, o.flops_f32);
        self.flops_f64 = f(self.flops_f64, o.flops_f64);
        self.flops_f16 = f(self.flops_f16, o.flops_f16);
        self.global_load_requests = f(self.global_load_requests, o.global_load_requests);
        self.global_store_requests = f(self.global_store_requests, o.global_store_requests);
        self.global_load_sectors = f(self.global_load_sectors, o.global_load_sectors);
        self.global_store_sectors = f(self.global_store_sectors, o.global_store_sectors);
        self.global_load_bytes = f(self.global_load_bytes, o.global_load_bytes);
        self.global_store_bytes = f(self.global_store_bytes, o.global_store_bytes);
        self.unique_sectors = f(self.unique_sectors, o.unique_sectors);
        self.shared_load_requests = f(self.shared_load_requests, o.shared_load_requests);
        self.shared_store_requests = f(self.shared_store_requests, o.shared_store_requests);
        self.shared_load_wavefronts = f(self.shared_load_wavefronts, o.shared_load_wavefronts);
        self.shared_store_wavefronts = f(self.shared_store_wavefronts, o.shared_store_wavefronts);
        self.shared_ideal_wavefronts = f(self.shared_ideal_wavefronts, o.shared_ideal_wavefronts);
        self.local_requests = f(self.local_requests, o.local_requests);
        self.atomic_requests = f(self.atomic_requests, o.atomic_requests);
        self.branches = f(self.branches, o.branches);
        self.divergent_branches = f(self.divergent_branches, o.divergent_branches);
    }
}

/// One block's counters plus the global sectors it touched (deduplicated when the
/// launch merges its blocks).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    pub(crate) c: Counters,
    pub(crate) sectors: Vec<u64>,
}

/// What kind of memory access a lane set made (for [`Tally::access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    GlobalLoad,
    GlobalStore,
    SharedLoad,
    SharedStore,
}

impl Tally {
    /// Counts one executed instruction of a statically known class.
    #[inline]
    pub(crate) fn inst(&mut self, op: &Op, exec: u32) {
        let lanes = u64::from(exec.count_ones());
        let Some((class, flops)) = classify(op) else {
            return; // memory instructions are counted once their space is resolved
        };
        self.class(class, lanes);
        match flops {
            Flops::None => {}
            Flops::F32(k) => self.c.flops_f32 += k * lanes,
            Flops::F64(k) => self.c.flops_f64 += k * lanes,
            Flops::F16(k) => self.c.flops_f16 += k * lanes,
        }
    }

    /// Counts one warp instruction of `class` with `lanes` active lanes.
    #[inline]
    pub(crate) fn class(&mut self, class: InstClass, lanes: u64) {
        self.c.warp_insts[class as usize] += 1;
        self.c.thread_insts[class as usize] += lanes;
    }

    /// A branch executed by `active` lanes of which `taken` jumped.
    pub(crate) fn branch(&mut self, active: u32, taken: u32) {
        self.c.branches += 1;
        if taken != 0 && taken != active {
            self.c.divergent_branches += 1;
        }
    }

    /// One warp-level load or store: its instruction class plus its traffic
    /// ([`Tally::traffic`]).
    pub(crate) fn access(&mut self, kind: Access, lanes: &[(u64, u32)]) {
        if lanes.is_empty() {
            return;
        }
        let class = match kind {
            Access::GlobalLoad => InstClass::GlobalLoad,
            Access::GlobalStore => InstClass::GlobalStore,
            Access::SharedLoad => InstClass::SharedLoad,
            Access::SharedStore => InstClass::SharedStore,
        };
        self.class(class, lanes.len() as u64);
        self.traffic(kind, lanes);
    }

    /// The traffic of one warp-level access: `lanes` are the active lanes' (address,
    /// bytes) pairs — global addresses for the global kinds, shared offsets for the
    /// shared ones.
    pub(crate) fn traffic(&mut self, kind: Access, lanes: &[(u64, u32)]) {
        if lanes.is_empty() {
            return;
        }
        match kind {
            Access::GlobalLoad | Access::GlobalStore => {
                let mut secs: Vec<u64> = Vec::with_capacity(lanes.len() * 2);
                let mut bytes = 0u64;
                for &(a, n) in lanes {
                    bytes += u64::from(n);
                    let first = a / SECTOR_BYTES;
                    let last = (a + u64::from(n).max(1) - 1) / SECTOR_BYTES;
                    secs.extend(first..=last);
                }
                secs.sort_unstable();
                secs.dedup();
                let n = secs.len() as u64;
                self.sectors.extend_from_slice(&secs);
                if kind == Access::GlobalLoad {
                    self.c.global_load_requests += 1;
                    self.c.global_load_sectors += n;
                    self.c.global_load_bytes += bytes;
                } else {
                    self.c.global_store_requests += 1;
                    self.c.global_store_sectors += n;
                    self.c.global_store_bytes += bytes;
                }
            }
            Access::SharedLoad | Access::SharedStore => {
                let (waves, ideal) = shared_wavefronts(lanes);
                self.c.shared_ideal_wavefronts += ideal;
                if kind == Access::SharedLoad {
                    self.c.shared_load_requests += 1;
                    self.c.shared_load_wavefronts += waves;
                } else {
                    self.c.shared_store_requests += 1;
                    self.c.shared_store_wavefronts += waves;
                }
            }
        }
    }

    /// Global sectors touched by an atomic or a `cp.async` source (counted for the
    /// launch's unique-sector bound only).
    pub(crate) fn touch(&mut self, lanes: &[(u64, u32)]) {
        for &(a, n) in lanes {
            let first = a / SECTOR_BYTES;
            let last = (a + u64::from(n).max(1) - 1) / SECTOR_BYTES;
            self.sectors.extend(first..=last);
        }
    }

    /// Sorts and deduplicates the sector list (keeps memory bounded per block).
    pub(crate) fn compact(&mut self) {
        self.sectors.sort_unstable();
        self.sectors.dedup();
    }
}

/// Shared-memory wavefronts of one warp access under the 32-bank, 4-byte-word rule:
/// each bank serves one distinct word per wavefront (lanes reading the same word are
/// served together), so the access takes as many wavefronts as the busiest bank has
/// distinct words. Returns (wavefronts, conflict-free ideal).
pub(crate) fn shared_wavefronts(lanes: &[(u64, u32)]) -> (u64, u64) {
    let mut words: Vec<u64> = Vec::with_capacity(lanes.len() * 4);
    for &(a, n) in lanes {
        let first = a / 4;
        let last = (a + u64::from(n).max(1) - 1) / 4;
        words.extend(first..=last);
    }
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u64; 32];
    for w in &words {
        per_bank[(w % 32) as usize] += 1;
    }
    let waves = per_bank.iter().copied().max().unwrap_or(0).max(1);
    let ideal = (words.len() as u64 * 4).div_ceil(128).max(1);
    (waves, ideal)
}

/// Flops per active lane of an instruction.
enum Flops {
    None,
    F32(u64),
    F64(u64),
    F16(u64),
}

/// The class and flops of a non-memory instruction; `None` for loads, stores and
/// atomics, whose class depends on the space a generic address resolves to.
fn classify(op: &Op) -> Option<(InstClass, Flops)> {
    use InstClass as C;
    Some(match op {
        Op::Nop | Op::Trap | Op::Brkpt => (C::Other, Flops::None),
        Op::Alu { f, .. } => classify_alu(f),
        Op::Selp { .. }
        | Op::Setp { .. }
        | Op::Set { .. }
        | Op::Testp { .. }
        | Op::Pred { .. }
        | Op::PredConst { .. } => (C::Compare, Flops::None),
        Op::Unpack { .. }
        | Op::Cvta { .. }
        | Op::Isspacep { .. }
        | Op::LocalAddr { .. }
        | Op::Clock { .. } => (C::Move, Flops::None),
        Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } | Op::CpAsync { .. } => return None,
        Op::Bra { .. } | Op::Brx { .. } | Op::Call { .. } | Op::Ret | Op::Exit => {
            (C::Control, Flops::None)
        }
        Op::Bar { .. } => (C::Barrier, Flops::None),
        Op::BarWarpSync { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Redux { .. }
        | Op::Match { .. }
        | Op::Activemask { .. } => (C::WarpSync, Flops::None),
    })
}

fn fmt_class(fmt: Fmt) -> InstClass {
    match fmt.exp_bits + fmt.man_bits {
        31 => InstClass::Fp32,
        63 => InstClass::Fp64,
        _ => InstClass::Fp16,
    }
}

fn classify_alu(f: &Alu) -> (InstClass, Flops) {
    use InstClass as C;
    match f {
        Alu::Mov | Alu::Pack { .. } => (C::Move, Flops::None),
        Alu::AddF32 | Alu::SubF32 | Alu::MulF32 => (C::Fp32, Flops::F32(1)),
        Alu::FmaF32 => (C::Fp32, Flops::F32(2)),
        Alu::AddF64 | Alu::SubF64 | Alu::MulF64 => (C::Fp64, Flops::F64(1)),
        Alu::FmaF64 => (C::Fp64, Flops::F64(2)),
        Alu::DivF32 | Alu::SqrtF32 | Alu::DivF64 | Alu::SqrtF64 => (C::Special, Flops::None),
        Alu::Float(op, m) => {
            let pair = if m.x2 { 2 } else { 1 };
            let per = match op {
                FOp::Add | FOp::Sub | FOp::Mul => 1,
                FOp::Fma => 2,
                FOp::Div | FOp::Sqrt | FOp::Rcp => return (C::Special, Flops::None),
            };
            let class = fmt_class(m.fmt);
            let flops = match class {
                C::Fp32 => Flops::F32(per),
                C::Fp64 => Flops::F64(per),
                _ => Flops::F16(per * pair),
            };
            (class, flops)
        }
        Alu::MinMax(m) => (fmt_class(m.fmt), Flops::None),
        Alu::AbsF { fmt, .. } | Alu::NegF { fmt, .. } | Alu::Copysign(fmt) => {
            (fmt_class(*fmt), Flops::None)
        }
        Alu::Approx(..) => (C::Special, Flops::None),
        Alu::CvtInt { .. }
        | Alu::CvtF2F { .. }
        | Alu::CvtF2I { .. }
        | Alu::CvtI2F { .. }
        | Alu::CvtRoundInt { .. }
        | Alu::CvtPack2 { .. } => (C::Convert, Flops::None),
        _ => (C::Int, Flops::None),
    }
}
