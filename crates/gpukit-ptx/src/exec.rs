//! The interpreter: one block at a time, its warps run cooperatively.
//!
//! Execution model. A warp's 32 lanes run together: the lanes at the same program
//! counter form the *group* and execute each instruction in one step (ALU operations
//! are computed for all 32 lanes and blended into the active ones). When a branch
//! diverges, the lanes are regrouped by program counter and the group with the lowest
//! counter runs first, merging with waiting lanes as soon as it reaches their counter;
//! this reconverges structured control flow at its join points. Warp-synchronous
//! instructions (`shfl.sync`, `vote.sync`, `bar.warp.sync`, `redux.sync`,
//! `match.sync`) wait until every non-exited lane of their member mask has arrived, as
//! on Volta and later. Warps run until they block at a barrier (or exhaust a time
//! slice); a barrier completes when every non-exited warp of the block (or the given
//! thread count) has arrived; the block's warps are then released together.

use crate::alu::{self, Lanes};
use crate::error::{EmuError, ErrorKind, InstrRef, RaceKind, Space};
use crate::memory::GlobalMemory;
use crate::program::*;

/// Instructions a warp runs before the scheduler moves to the next warp.
const SLICE: u64 = 1 << 12;
/// Per-thread stack limit for device-function frames.
const MAX_STACK: u32 = 1 << 20;
const NONE: u32 = u32::MAX;
const FULL: u32 = u32::MAX;

/// Everything a launch shares between its blocks.
pub(crate) struct LaunchCtx<'a> {
    pub prog: &'a Program,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub nthreads: u32,
    pub nwarps: u32,
    pub params: Vec<u8>,
    pub mem: GlobalMemory<'a>,
    pub shared_size: u32,
    pub dyn_shared: u32,
    pub racecheck: bool,
    pub max_steps: Option<u64>,
}

/// Counters of one block.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub approx: u64,
}

/// A failure inside a block, before it is placed (thread, instruction).
struct Fault {
    kind: ErrorKind,
    warp: usize,
    lane: Option<u32>,
    addr: Option<u64>,
    pc: Option<u32>,
}

fn fault(kind: ErrorKind, warp: usize, lane: Option<u32>, addr: Option<u64>) -> Fault {
    Fault {
        kind,
        warp,
        lane,
        addr,
        pc: None,
    }
}

struct Frame {
    ret_pc: u32,
    call_pc: u32,
    func: u32,
    saved_regs: Vec<u64>,
    saved_preds: Vec<bool>,
    caller_base: u32,
    caller_top: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct BarWait {
    id: u32,
    count: Option<u32>,
    pc: u32,
    aligned: bool,
}

struct Warp {
    regs: Vec<Lanes>,
    preds: Vec<u32>,
    exists: u32,
    exited: u32,
    group: u32,
    group_pc: u32,
    runnable: u32,
    merge_pc: u32,
    lane_pc: [u32; 32],
    at_bar: u32,
    parked: u32,
    bar: Option<BarWait>,
    bar_pred: u32,
    arrived: bool,
    cc: u32,
    clock: u64,
    /// Consecutive steps while diverged (for round-robin between groups).
    div_steps: u64,
    frame_base: [u32; 32],
    stack_top: [u32; 32],
    stacks: Vec<Vec<Frame>>,
    local: Vec<Vec<u8>>,
}

impl Warp {
    fn live(&self) -> u32 {
        self.exists & !self.exited
    }
    fn done(&self) -> bool {
        self.live() == 0
    }
    /// Moves the group on to the next instruction.
    #[inline(always)]
    fn advance(&mut self) {
        self.group_pc += 1;
        if self.runnable != 0 && self.group_pc == self.merge_pc {
            self.merge();
        }
    }
    /// Absorbs the runnable lanes waiting at the group's pc.
    fn merge(&mut self) {
        let mut at = 0u32;
        let mut next = NONE;
        let mut m = self.runnable;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let p = self.lane_pc[l as usize];
            if p == self.group_pc {
                at |= 1 << l;
            } else if p < next {
                next = p;
            }
        }
        self.group |= at;
        self.runnable &= !at;
        self.merge_pc = next;
    }
    /// Sends the whole group to `target`.
    #[inline]
    fn jump(&mut self, target: u32) {
        if self.runnable == 0 || target < self.merge_pc {
            self.group_pc = target;
        } else if target == self.merge_pc {
            self.group_pc = target;
            self.merge();
        } else {
            self.scatter_group(target);
        }
    }
    /// Puts every group lane at `pc` back among the runnable lanes.
    fn scatter_group(&mut self, pc: u32) {
        let mut m = self.group;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.lane_pc[l] = pc;
        }
        self.runnable |= self.group;
        self.group = 0;
    }
    /// Sets the pcs of `lanes` (which must be in the group) and removes them from the
    /// group, making them runnable.
    fn send(&mut self, lanes: u32, pc: u32) {
        let mut m = lanes;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.lane_pc[l] = pc;
        }
        self.runnable |= lanes;
        self.group &= !lanes;
    }
    /// Round-robin between diverged groups: puts the group back among the runnable
    /// lanes and makes the lanes at the next higher pc (or the lowest) the group, so a
    /// group spinning on another group's progress cannot starve it.
    fn rotate(&mut self) {
        let cur = self.group_pc;
        self.scatter_group(cur);
        let (mut above, mut min) = (NONE, NONE);
        let mut m = self.runnable;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = self.lane_pc[l];
            min = min.min(p);
            if p > cur {
                above = above.min(p);
            }
        }
        let pc = if above != NONE { above } else { min };
        self.group_pc = pc;
        self.merge_pc = pc;
        self.merge();
    }

    /// Lanes parked at `pc`.
    fn parked_at(&self, pc: u32) -> u32 {
        let mut out = 0;
        let mut m = self.parked;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            if self.lane_pc[l as usize] == pc {
                out |= 1 << l;
            }
        }
        out
    }
}

#[derive(Clone, Copy, Default)]
struct Acc {
    tid: u32,
    pc: u32,
    clock: u32,
}

const NO_ACC: Acc = Acc {
    tid: NONE,
    pc: 0,
    clock: 0,
};

#[derive(Clone, Copy)]
struct Shadow {
    epoch: u32,
    w: Acc,
    r1: Acc,
    r2: Acc,
}

/// Racecheck state: a shadow record per shared byte and vector clocks per warp.
struct Race {
    shadow: Vec<Shadow>,
    epoch: u32,
    clock: Vec<u32>,
    vc: Vec<u32>,
    n: usize,
}

impl Race {
    fn ordered(&self, rec: &Acc, tid: u32) -> bool {
        if rec.tid == NONE || rec.tid == tid {
            return true;
        }
        let (rw, cw) = ((rec.tid / 32) as usize, (tid / 32) as usize);
        if rw == cw {
            rec.clock < self.clock[cw]
        } else {
            rec.clock <= self.vc[cw * self.n + rw]
        }
    }

    fn access(
        &mut self,
        off: u32,
        len: u32,
        tid: u32,
        pc: u32,
        write: bool,
    ) -> Result<(), (RaceKind, Acc)> {
        let now = Acc {
            tid,
            pc,
            clock: self.clock[(tid / 32) as usize],
        };
        for b in off..off + len {
            let Some(slot) = self.shadow.get(b as usize) else {
                continue;
            };
            let mut s = *slot;
            if s.epoch != self.epoch {
                s = Shadow {
                    epoch: self.epoch,
                    w: NO_ACC,
                    r1: NO_ACC,
                    r2: NO_ACC,
                };
            }
            if write {
                if !self.ordered(&s.w, tid) {
                    return Err((RaceKind::WriteAfterWrite, s.w));
                }
                if !self.ordered(&s.r1, tid) {
                    return Err((RaceKind::WriteAfterRead, s.r1));
                }
                if !self.ordered(&s.r2, tid) {
                    return Err((RaceKind::WriteAfterRead, s.r2));
                }
                s.w = now;
                s.r1 = NO_ACC;
                s.r2 = NO_ACC;
            } else {
                if !self.ordered(&s.w, tid) {
                    return Err((RaceKind::ReadAfterWrite, s.w));
                }
                if s.r1.tid == NONE || s.r1.tid == tid || self.ordered(&s.r1, tid) {
                    s.r1 = now;
                } else {
                    s.r2 = now;
                }
            }
            self.shadow[b as usize] = s;
        }
        Ok(())
    }

    fn barrier(&mut self, participants: &[usize]) {
        let n = self.n;
        let mut joined = vec![0u32; n];
        for &u in participants {
            for x in 0..n {
                joined[x] = joined[x].max(self.vc[u * n + x]);
            }
            joined[u] = joined[u].max(self.clock[u]);
        }
        for &u in participants {
            self.vc[u * n..(u + 1) * n].copy_from_slice(&joined);
            self.clock[u] += 1;
        }
    }
}

/// Reusable per-worker allocations.
#[derive(Default)]
pub(crate) struct Scratch {
    warps: Vec<Warp>,
    shared: Vec<u8>,
    race: Option<Race>,
}

struct Block<'a, 'c> {
    ctx: &'c LaunchCtx<'a>,
    bidx: [u32; 3],
    warps: &'c mut Vec<Warp>,
    shared: &'c mut Vec<u8>,
    race: Option<&'c mut Race>,
    arrivals: [u32; 16],
    arrive_count: [Option<u32>; 16],
    steps: u64,
    stats: Stats,
}

/// Runs block `linear` (x fastest) of the launch.
// The error is cold and carries the full report.
#[allow(clippy::result_large_err)]
pub(crate) fn run_block(
    ctx: &LaunchCtx<'_>,
    scratch: &mut Scratch,
    linear: u64,
    kernel: &str,
) -> Result<Stats, EmuError> {
    let gx = u64::from(ctx.grid[0]);
    let gy = u64::from(ctx.grid[1]);
    let bidx = [
        (linear % gx) as u32,
        ((linear / gx) % gy) as u32,
        (linear / (gx * gy)) as u32,
    ];
    init_block(ctx, scratch, bidx);
    let Scratch {
        warps,
        shared,
        race,
    } = scratch;
    let mut b = Block {
        ctx,
        bidx,
        warps,
        shared,
        race: if ctx.racecheck { race.as_mut() } else { None },
        arrivals: [0; 16],
        arrive_count: [None; 16],
        steps: 0,
        stats: Stats::default(),
    };
    match b.run() {
        Ok(()) => Ok(b.stats),
        Err(f) => Err(b.report(f, kernel)),
    }
}

fn init_block(ctx: &LaunchCtx<'_>, s: &mut Scratch, bidx: [u32; 3]) {
    let prog = ctx.prog;
    let nw = ctx.nwarps as usize;
    s.warps.truncate(nw);
    while s.warps.len() < nw {
        s.warps.push(Warp {
            regs: Vec::new(),
            preds: Vec::new(),
            exists: 0,
            exited: 0,
            group: 0,
            group_pc: 0,
            runnable: 0,
            merge_pc: NONE,
            lane_pc: [0; 32],
            at_bar: 0,
            parked: 0,
            bar: None,
            bar_pred: 0,
            arrived: false,
            cc: 0,
            clock: 0,
            div_steps: 0,
            frame_base: [0; 32],
            stack_top: [0; 32],
            stacks: Vec::new(),
            local: Vec::new(),
        });
    }
    let frame0 = prog.funcs.first().map_or(0, |f| f.frame_size);
    let [bx, by, _] = ctx.block;
    for (wi, w) in s.warps.iter_mut().enumerate() {
        w.regs.clear();
        w.regs.resize(prog.nregs as usize, [0; 32]);
        w.preds.clear();
        w.preds.resize(prog.npreds as usize, 0);
        let first = wi as u32 * 32;
        let n = ctx.nthreads.saturating_sub(first).min(32);
        w.exists = if n == 32 { FULL } else { (1u32 << n) - 1 };
        w.exited = 0;
        w.group = w.exists;
        w.group_pc = 0;
        w.runnable = 0;
        w.merge_pc = NONE;
        w.at_bar = 0;
        w.parked = 0;
        w.bar = None;
        w.bar_pred = 0;
        w.arrived = false;
        w.cc = 0;
        w.clock = 0;
        w.div_steps = 0;
        w.frame_base = [0; 32];
        w.stack_top = [frame0; 32];
        w.stacks.clear();
        w.stacks.resize_with(32, Vec::new);
        w.local.resize_with(32, Vec::new);
        for (l, loc) in w.local.iter_mut().enumerate() {
            loc.clear();
            if frame0 > 0 && (w.exists >> l) & 1 == 1 {
                loc.resize(frame0 as usize, 0);
            }
        }
        for &(r, init) in &prog.consts {
            let lanes = &mut w.regs[r as usize];
            match init {
                ConstInit::Imm(v) => *lanes = [v; 32],
                ConstInit::Special(sp) => {
                    for (l, slot) in lanes.iter_mut().enumerate() {
                        let tid = first + l as u32;
                        let t = [tid % bx, (tid / bx) % by, tid / (bx * by)];
                        *slot = special(ctx, sp, t, bidx, wi as u32, l as u32);
                    }
                }
            }
        }
        for &(p, v) in &prog.const_preds {
            w.preds[p as usize] = if v { FULL } else { 0 };
        }
    }
    s.shared.clear();
    s.shared.resize(ctx.shared_size as usize, 0);
    if ctx.racecheck {
        let r = s.race.get_or_insert_with(|| Race {
            shadow: Vec::new(),
            epoch: 0,
            clock: Vec::new(),
            vc: Vec::new(),
            n: 0,
        });
        if r.shadow.len() < ctx.shared_size as usize {
            r.shadow.resize(
                ctx.shared_size as usize,
                Shadow {
                    epoch: 0,
                    w: NO_ACC,
                    r1: NO_ACC,
                    r2: NO_ACC,
                },
            );
        }
        r.epoch = r.epoch.wrapping_add(1);
        if r.epoch == 0 {
            for s in r.shadow.iter_mut() {
                s.epoch = 0;
            }
            r.epoch = 1;
        }
        r.n = nw;
        r.clock.clear();
        r.clock.resize(nw, 1);
        r.vc.clear();
        r.vc.resize(nw * nw, 0);
    }
}

fn special(
    ctx: &LaunchCtx<'_>,
    s: crate::ast::Special,
    tid: [u32; 3],
    bidx: [u32; 3],
    warp: u32,
    lane: u32,
) -> u64 {
    use crate::ast::Special as S;
    let c = |i: u8| usize::from(i).min(2);
    match s {
        S::Tid(i) => u64::from(tid[c(i)]),
        S::Ntid(i) => u64::from(ctx.block[c(i)]),
        S::Ctaid(i) => u64::from(bidx[c(i)]),
        S::Nctaid(i) => u64::from(ctx.grid[c(i)]),
        S::LaneId => u64::from(lane),
        S::WarpId => u64::from(warp),
        S::NWarpId => u64::from(ctx.nwarps),
        S::SmId | S::GridId | S::Zero | S::Clock | S::Clock64 | S::GlobalTimer => 0,
        S::NSmId => 1,
        S::LaneMaskEq => 1u64 << lane,
        S::LaneMaskLe => u64::from(((2u64 << lane) - 1) as u32),
        S::LaneMaskLt => (1u64 << lane) - 1,
        S::LaneMaskGe => u64::from(!(((1u64 << lane) - 1) as u32)),
        S::LaneMaskGt => u64::from(!(((2u64 << lane) - 1) as u32)),
        S::DynamicSmemSize => u64::from(ctx.dyn_shared),
        S::TotalSmemSize => u64::from(ctx.shared_size),
    }
}

/// Where a resolved access lands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Res {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

fn resolve(space: MemSpace, a: u64) -> (Res, u64) {
    let win = |base: u64| a.wrapping_sub(base) < WINDOW_SIZE;
    match space {
        MemSpace::Global => (Res::Global, a),
        MemSpace::Const => (Res::Const, a),
        MemSpace::Shared => (Res::Shared, a),
        MemSpace::Local => (Res::Local, a),
        MemSpace::KParam => (Res::Param, a.wrapping_sub(PARAM_WINDOW)),
        MemSpace::Generic => {
            if win(SHARED_WINDOW) {
                (Res::Shared, a - SHARED_WINDOW)
            } else if win(LOCAL_WINDOW) {
                (Res::Local, a - LOCAL_WINDOW)
            } else if win(PARAM_WINDOW) {
                (Res::Param, a - PARAM_WINDOW)
            } else {
                (Res::Global, a)
            }
        }
    }
}

fn space_of(r: Res) -> Space {
    match r {
        Res::Global => Space::Global,
        Res::Const => Space::Const,
        Res::Shared => Space::Shared,
        Res::Local => Space::Local,
        Res::Param => Space::Param,
    }
}

fn read_le(buf: &[u8], off: usize, size: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..size].copy_from_slice(&buf[off..off + size]);
    u64::from_le_bytes(b)
}

fn write_le(buf: &mut [u8], off: usize, size: usize, v: u64) {
    buf[off..off + size].copy_from_slice(&v.to_le_bytes()[..size]);
}

impl Block<'_, '_> {
    fn tid_of(&self, warp: usize, lane: u32) -> (u32, u32, u32) {
        let t = warp as u32 * 32 + lane;
        let [bx, by, _] = self.ctx.block;
        (t % bx, (t / bx) % by, t / (bx * by))
    }

    fn instr(&self, pc: u32) -> Option<InstrRef> {
        self.ctx.prog.src.get(pc as usize).map(|s| InstrRef {
            text: s.text.to_string(),
            line: s.line,
        })
    }

    fn report(&self, f: Fault, kernel: &str) -> EmuError {
        let w = self.warps.get(f.warp);
        let pc = f.pc.or_else(|| w.map(|w| w.group_pc));
        let lane = f.lane.or_else(|| {
            w.and_then(|w| {
                let g = if w.group != 0 { w.group } else { w.live() };
                (g != 0).then(|| g.trailing_zeros())
            })
        });
        EmuError {
            kernel: kernel.to_string(),
            kind: f.kind,
            instruction: pc.and_then(|pc| self.instr(pc)),
            thread: lane.map(|l| self.tid_of(f.warp, l)),
            block: Some((self.bidx[0], self.bidx[1], self.bidx[2])),
            address: f.addr,
        }
    }

    fn run(&mut self) -> Result<(), Fault> {
        loop {
            let mut ran = false;
            let mut all_done = true;
            for wi in 0..self.warps.len() {
                if self.warps[wi].done() {
                    continue;
                }
                all_done = false;
                if self.warps[wi].arrived {
                    continue;
                }
                if self.run_warp(wi)? > 0 {
                    ran = true;
                }
            }
            if all_done {
                return Ok(());
            }
            let released = self.release_barriers()?;
            if !ran && !released {
                if self.warps.iter().all(|w| w.done()) {
                    return Ok(());
                }
                return Err(self.deadlock());
            }
        }
    }

    fn deadlock(&self) -> Fault {
        let mut parts = Vec::new();
        let mut first = None;
        for (wi, w) in self.warps.iter().enumerate() {
            if w.done() {
                continue;
            }
            let what = if w.parked != 0 {
                let l = w.parked.trailing_zeros();
                first.get_or_insert((wi, l, w.lane_pc[l as usize]));
                format!(
                    "warp {wi}: lanes {:#010x} wait at a warp-synchronous instruction",
                    w.parked
                )
            } else if w.at_bar != 0 {
                let l = w.at_bar.trailing_zeros();
                let pc = w.bar.map_or(0, |b| b.pc);
                first.get_or_insert((wi, l, pc));
                format!(
                    "warp {wi}: lanes {:#010x} wait at barrier {}",
                    w.at_bar,
                    w.bar.map_or(0, |b| b.id)
                )
            } else {
                format!("warp {wi}: blocked")
            };
            parts.push(what);
        }
        let (wi, lane, pc) = first.unwrap_or((0, 0, 0));
        Fault {
            kind: ErrorKind::Deadlock(parts.join("; ")),
            warp: wi,
            lane: Some(lane),
            addr: None,
            pc: Some(pc),
        }
    }

    /// Completes every barrier whose participants have all arrived.
    fn release_barriers(&mut self) -> Result<bool, Fault> {
        let mut released = false;
        for id in 0..16u32 {
            let waiting: Vec<usize> = self
                .warps
                .iter()
                .enumerate()
                .filter(|(_, w)| w.arrived && w.bar.is_some_and(|b| b.id == id))
                .map(|(i, _)| i)
                .collect();
            if waiting.is_empty() {
                continue;
            }
            let first = self.warps[waiting[0]].bar.unwrap_or(BarWait {
                id,
                count: None,
                pc: 0,
                aligned: false,
            });
            for &wi in &waiting[1..] {
                let b = self.warps[wi].bar.unwrap_or(first);
                if b.count != first.count {
                    return Err(Fault {
                        kind: ErrorKind::BarrierDivergence(format!(
                            "warps wait at barrier {id} with different thread counts"
                        )),
                        warp: wi,
                        lane: Some(self.warps[wi].at_bar.trailing_zeros()),
                        addr: None,
                        pc: Some(b.pc),
                    });
                }
                if (b.aligned || first.aligned) && b.pc != first.pc {
                    return Err(Fault {
                        kind: ErrorKind::BarrierDivergence(format!(
                            "warps wait at different aligned barrier instructions for barrier {id} (lines {} and {})",
                            self.instr(first.pc).map_or(0, |i| i.line),
                            self.instr(b.pc).map_or(0, |i| i.line)
                        )),
                        warp: wi,
                        lane: Some(self.warps[wi].at_bar.trailing_zeros()),
                        addr: None,
                        pc: Some(b.pc),
                    });
                }
            }
            let complete = match first.count {
                Some(c) => {
                    32 * (waiting.len() as u64 + u64::from(self.arrivals[id as usize]))
                        >= u64::from(c)
                }
                None => self
                    .warps
                    .iter()
                    .enumerate()
                    .all(|(i, w)| w.done() || waiting.contains(&i)),
            };
            if !complete {
                continue;
            }
            // bar.red: reduce the predicates of every participating thread.
            let popc: u32 = waiting
                .iter()
                .map(|&wi| (self.warps[wi].bar_pred & self.warps[wi].at_bar).count_ones())
                .sum();
            let nthreads: u32 = waiting
                .iter()
                .map(|&wi| self.warps[wi].at_bar.count_ones())
                .sum();
            for &wi in &waiting {
                let w = &mut self.warps[wi];
                let pc = w.bar.map_or(0, |b| b.pc);
                if let Some(Inst {
                    op: Op::Bar { kind, d, .. },
                    ..
                }) = self.ctx.prog.insts.get(pc as usize)
                    && *d != SINK
                {
                    let lanes = w.at_bar;
                    match kind {
                        BarKind::RedPopc => {
                            let r = &mut w.regs[*d as usize];
                            for l in 0..32 {
                                if (lanes >> l) & 1 == 1 {
                                    r[l] = u64::from(popc);
                                }
                            }
                        }
                        BarKind::RedAnd | BarKind::RedOr => {
                            let v = if *kind == BarKind::RedAnd {
                                popc == nthreads
                            } else {
                                popc > 0
                            };
                            let p = &mut w.preds[*d as usize];
                            *p = if v { *p | lanes } else { *p & !lanes };
                        }
                        _ => {}
                    }
                }
                w.runnable |= w.at_bar;
                w.at_bar = 0;
                w.bar = None;
                w.bar_pred = 0;
                w.arrived = false;
                w.merge_pc = NONE;
                w.group = 0;
            }
            if let Some(r) = self.race.as_deref_mut() {
                r.barrier(&waiting);
            }
            self.arrivals[id as usize] = 0;
            self.arrive_count[id as usize] = None;
            released = true;
        }
        // Barriers completed by bar.arrive alone.
        for id in 0..16 {
            if let Some(c) = self.arrive_count[id]
                && 32 * u64::from(self.arrivals[id]) >= u64::from(c)
            {
                self.arrivals[id] = 0;
                self.arrive_count[id] = None;
            }
        }
        Ok(released)
    }

    /// Chooses the next group of warp `wi`; false when it is blocked or done.
    fn select(&mut self, wi: usize) -> Result<bool, Fault> {
        let prog = self.ctx.prog;
        let w = &mut self.warps[wi];
        if w.runnable != 0 {
            let mut min = NONE;
            let mut m = w.runnable;
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                min = min.min(w.lane_pc[l as usize]);
            }
            w.group = 0;
            w.group_pc = min;
            w.merge_pc = min;
            w.merge();
            return Ok(true);
        }
        if w.parked != 0 {
            // A warp-synchronous group whose missing members have exited.
            let live = w.live();
            let mut m = w.parked;
            while m != 0 {
                let l = m.trailing_zeros();
                let pc = w.lane_pc[l as usize];
                let here = w.parked_at(pc);
                m &= !here;
                let mask_reg = match prog.insts.get(pc as usize).map(|i| &i.op) {
                    Some(Op::Shfl { mask, .. })
                    | Some(Op::Vote { mask, .. })
                    | Some(Op::Redux { mask, .. })
                    | Some(Op::Match { mask, .. })
                    | Some(Op::BarWarpSync { mask }) => *mask,
                    _ => continue,
                };
                let mut mask = 0u32;
                let mut hm = here;
                while hm != 0 {
                    let l = hm.trailing_zeros();
                    hm &= hm - 1;
                    mask |= w.regs[mask_reg as usize][l as usize] as u32;
                }
                if mask & live & !here == 0 {
                    w.parked &= !here;
                    w.group = here;
                    w.group_pc = pc;
                    w.merge_pc = NONE;
                    return Ok(true);
                }
            }
        }
        if w.at_bar != 0 && w.parked == 0 {
            w.arrived = true;
        }
        Ok(false)
    }

    /// Runs warp `wi` until it blocks, finishes or uses its time slice.
    fn run_warp(&mut self, wi: usize) -> Result<u64, Fault> {
        let prog = self.ctx.prog;
        let mut steps = 0u64;
        loop {
            if self.warps[wi].group == 0 && !self.select(wi)? {
                return Ok(steps);
            }
            if steps >= SLICE {
                return Ok(steps);
            }
            steps += 1;
            self.steps += 1;
            if let Some(max) = self.ctx.max_steps
                && self.steps > max
            {
                return Err(fault(ErrorKind::StepLimit(max), wi, None, None));
            }
            let w = &mut self.warps[wi];
            if w.runnable == 0 {
                w.div_steps = 0;
            } else {
                w.div_steps += 1;
                if w.div_steps > SLICE {
                    w.div_steps = 0;
                    w.rotate();
                }
            }
            let pc = w.group_pc;
            let Some(inst) = prog.insts.get(pc as usize) else {
                return Err(fault(
                    ErrorKind::InvalidOperand(format!("program counter {pc} out of range")),
                    wi,
                    None,
                    None,
                ));
            };
            let mut exec = w.group;
            if let Some(g) = inst.guard {
                let pm = w.preds[g.reg as usize];
                exec &= if g.neg { !pm } else { pm };
            }
            w.clock += 1;
            self.stats.warp_insts += 1;
            self.stats.thread_insts += u64::from(exec.count_ones());
            match &inst.op {
                Op::Alu { f, d, s } => {
                    if exec != 0 {
                        match f {
                            Alu::AddCc { .. } | Alu::MadCc { .. } => carry_op(w, f, *d, s, exec),
                            _ => {
                                let out = alu::compute(f, &w.regs, s);
                                if let Alu::Approx(..) = f {
                                    self.stats.approx += u64::from(exec.count_ones());
                                }
                                write_lanes(&mut w.regs, *d, &out, exec);
                            }
                        }
                    }
                    w.advance();
                }
                Op::Selp { d, a, b, p } => {
                    if exec != 0 && *d != SINK {
                        let pm = w.preds[p.reg as usize] ^ if p.neg { FULL } else { 0 };
                        let (av, bv) = (w.regs[*a as usize], w.regs[*b as usize]);
                        let dst = &mut w.regs[*d as usize];
                        for l in 0..32 {
                            if (exec >> l) & 1 == 1 {
                                dst[l] = if (pm >> l) & 1 == 1 { av[l] } else { bv[l] };
                            }
                        }
                    }
                    w.advance();
                }
                Op::Setp {
                    cmp,
                    p,
                    q,
                    a,
                    b,
                    bop,
                } => {
                    if exec != 0 {
                        let (av, bv) = (&w.regs[*a as usize], &w.regs[*b as usize]);
                        let mut t = 0u32;
                        for l in 0..32 {
                            if alu::compare(*cmp, av[l], bv[l]) {
                                t |= 1 << l;
                            }
                        }
                        let (pv, qv) = match bop {
                            None => (t, !t),
                            Some((op, c)) => {
                                let cv = w.preds[c.reg as usize] ^ if c.neg { FULL } else { 0 };
                                (bool_op(*op, t, cv), bool_op(*op, !t, cv))
                            }
                        };
                        set_pred(&mut w.preds, *p, pv, exec);
                        set_pred(&mut w.preds, *q, qv, exec);
                    }
                    w.advance();
                }
                Op::Set {
                    cmp,
                    float_result,
                    d,
                    a,
                    b,
                    bop,
                    c,
                } => {
                    if exec != 0 && *d != SINK {
                        let cv = w.preds[c.reg as usize] ^ if c.neg { FULL } else { 0 };
                        let (av, bv) = (w.regs[*a as usize], w.regs[*b as usize]);
                        let dst = &mut w.regs[*d as usize];
                        for l in 0..32 {
                            if (exec >> l) & 1 == 1 {
                                let t = u32::from(alu::compare(*cmp, av[l], bv[l])) << l;
                                let v = bool_op(*bop, t, cv) & (1 << l) != 0;
                                dst[l] = match (v, float_result) {
                                    (true, true) => u64::from(1.0f32.to_bits()),
                                    (true, false) => 0xFFFF_FFFF,
                                    _ => 0,
                                };
                            }
                        }
                    }
                    w.advance();
                }
                Op::Testp { op, fmt, p, a } => {
                    if exec != 0 {
                        let av = &w.regs[*a as usize];
                        let mut t = 0u32;
                        for l in 0..32 {
                            if alu::testp(*op, *fmt, av[l]) {
                                t |= 1 << l;
                            }
                        }
                        set_pred(&mut w.preds, *p, t, exec);
                    }
                    w.advance();
                }
                Op::Pred { op, d, a, b } => {
                    if exec != 0 {
                        let av = w.preds[a.reg as usize] ^ if a.neg { FULL } else { 0 };
                        let bv = w.preds[b.reg as usize] ^ if b.neg { FULL } else { 0 };
                        let v = match op {
                            POp::Mov => av,
                            POp::Not => !av,
                            POp::And => av & bv,
                            POp::Or => av | bv,
                            POp::Xor => av ^ bv,
                        };
                        set_pred(&mut w.preds, *d, v, exec);
                    }
                    w.advance();
                }
                Op::PredConst { d, value } => {
                    set_pred(&mut w.preds, *d, if *value { FULL } else { 0 }, exec);
                    w.advance();
                }
                Op::Unpack { bits, src, dsts } => {
                    if exec != 0 {
                        let sv = w.regs[*src as usize];
                        let mask = if *bits >= 64 {
                            u64::MAX
                        } else {
                            (1u64 << bits) - 1
                        };
                        for (k, &d) in dsts.iter().enumerate() {
                            if d == SINK {
                                continue;
                            }
                            let out = sv.map(|x| (x >> (u32::from(*bits) * k as u32)) & mask);
                            write_lanes(&mut w.regs, d, &out, exec);
                        }
                    }
                    w.advance();
                }
                Op::LocalAddr { d, off } => {
                    if exec != 0 && *d != SINK {
                        let base = w.frame_base;
                        let out = std::array::from_fn(|l| u64::from(base[l]) + u64::from(*off));
                        write_lanes(&mut w.regs, *d, &out, exec);
                    }
                    w.advance();
                }
                Op::Clock { d } => {
                    if exec != 0 && *d != SINK {
                        let out = [w.clock; 32];
                        write_lanes(&mut w.regs, *d, &out, exec);
                    }
                    w.advance();
                }
                Op::Cvta {
                    to_generic,
                    narrow,
                    space,
                    d,
                    a,
                } => {
                    if exec != 0 && *d != SINK {
                        let base = match space {
                            MemSpace::Shared => SHARED_WINDOW,
                            MemSpace::Local => LOCAL_WINDOW,
                            _ => 0,
                        };
                        let (to, narrow) = (*to_generic, *narrow);
                        let out = w.regs[*a as usize].map(|x| {
                            let x = if narrow { u64::from(x as u32) } else { x };
                            let r = if to {
                                x.wrapping_add(base)
                            } else {
                                x.wrapping_sub(base)
                            };
                            if narrow { u64::from(r as u32) } else { r }
                        });
                        write_lanes(&mut w.regs, *d, &out, exec);
                    }
                    w.advance();
                }
                Op::Isspacep { space, p, a } => {
                    if exec != 0 {
                        let av = &w.regs[*a as usize];
                        let mut t = 0u32;
                        for l in 0..32 {
                            let (r, _) = resolve(MemSpace::Generic, av[l]);
                            let hit = match space {
                                MemSpace::Shared => r == Res::Shared,
                                MemSpace::Local => r == Res::Local,
                                MemSpace::KParam => r == Res::Param,
                                _ => r == Res::Global,
                            };
                            if hit {
                                t |= 1 << l;
                            }
                        }
                        set_pred(&mut w.preds, *p, t, exec);
                    }
                    w.advance();
                }
                Op::Nop => w.advance(),
                Op::Ld {
                    space,
                    addr,
                    size,
                    sext,
                    n,
                    dsts,
                } => {
                    let (space, addr, size, sext, n, dsts) =
                        (*space, *addr, *size, *sext, *n, *dsts);
                    self.exec_ld(wi, pc, exec, space, addr, size, sext, n, &dsts)?;
                    self.warps[wi].advance();
                }
                Op::St {
                    space,
                    addr,
                    size,
                    n,
                    srcs,
                } => {
                    let (space, addr, size, n, srcs) = (*space, *addr, *size, *n, *srcs);
                    self.exec_st(wi, pc, exec, space, addr, size, n, &srcs)?;
                    self.warps[wi].advance();
                }
                Op::Atom {
                    space,
                    op,
                    size,
                    d,
                    addr,
                    b,
                    c,
                } => {
                    let (space, op, size, d, addr, b, c) = (*space, *op, *size, *d, *addr, *b, *c);
                    self.exec_atom(wi, exec, space, op, size, d, addr, b, c)?;
                    self.warps[wi].advance();
                }
                Op::CpAsync {
                    dst,
                    src,
                    size,
                    src_size,
                } => {
                    let (dst, src, size, src_size) = (*dst, *src, *size, *src_size);
                    self.exec_cp_async(wi, pc, exec, dst, src, size, src_size)?;
                    self.warps[wi].advance();
                }
                Op::Bra { target } => {
                    let not_taken = w.group & !exec;
                    if not_taken == 0 {
                        w.jump(*target);
                    } else if exec == 0 {
                        w.advance();
                    } else {
                        w.send(exec, *target);
                        w.send(not_taken, pc + 1);
                    }
                }
                Op::Brx { idx, targets } => {
                    let iv = w.regs[*idx as usize];
                    let mut m = exec;
                    while m != 0 {
                        let l = m.trailing_zeros();
                        m &= m - 1;
                        let i = iv[l as usize] as u32;
                        let Some(&t) = targets.get(i as usize) else {
                            return Err(fault(
                                ErrorKind::InvalidOperand(format!(
                                    "brx.idx index {i} past the target list"
                                )),
                                wi,
                                Some(l),
                                None,
                            ));
                        };
                        w.send(1 << l, t);
                    }
                    let rest = w.group;
                    w.send(rest, pc + 1);
                }
                Op::Call { func, args, .. } => {
                    let (func, args) = (*func, args.clone());
                    self.exec_call(wi, pc, exec, func, &args)?;
                }
                Op::Ret => {
                    self.exec_ret(wi, pc, exec)?;
                }
                Op::Exit => {
                    w.exited |= exec;
                    w.group &= !exec;
                    if w.group != 0 {
                        w.advance();
                    }
                }
                Op::Trap => {
                    if exec != 0 {
                        return Err(fault(
                            ErrorKind::Trap,
                            wi,
                            Some(exec.trailing_zeros()),
                            None,
                        ));
                    }
                    w.advance();
                }
                Op::Brkpt => {
                    if exec != 0 {
                        return Err(fault(
                            ErrorKind::Breakpoint,
                            wi,
                            Some(exec.trailing_zeros()),
                            None,
                        ));
                    }
                    w.advance();
                }
                Op::Bar {
                    kind,
                    aligned,
                    id,
                    count,
                    c,
                    ..
                } => {
                    let (kind, aligned, id, count, c) = (*kind, *aligned, *id, *count, *c);
                    self.exec_bar(wi, pc, exec, kind, aligned, id, count, c)?;
                }
                Op::BarWarpSync { mask } => {
                    if let Some(exec) = self.warp_sync_arrive(wi, pc, exec, *mask)? {
                        let _ = exec;
                        if let Some(r) = self.race.as_deref_mut() {
                            r.clock[wi] += 1;
                        }
                        self.warps[wi].advance();
                    }
                }
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a,
                    b,
                    c,
                    mask,
                } => {
                    if let Some(exec) = self.warp_sync_arrive(wi, pc, exec, *mask)? {
                        let w = &mut self.warps[wi];
                        shfl(w, exec, *mode, *d, *p, *a, *b, *c);
                        w.advance();
                    }
                }
                Op::Vote { mode, d, a, mask } => {
                    if let Some(exec) = self.warp_sync_arrive(wi, pc, exec, *mask)? {
                        let w = &mut self.warps[wi];
                        let pv = (w.preds[a.reg as usize] ^ if a.neg { FULL } else { 0 }) & exec;
                        match mode {
                            VoteMode::Ballot => {
                                if *d != SINK {
                                    write_lanes(&mut w.regs, *d, &[u64::from(pv); 32], exec);
                                }
                            }
                            VoteMode::All => {
                                set_pred(&mut w.preds, *d, if pv == exec { FULL } else { 0 }, exec)
                            }
                            VoteMode::Any => {
                                set_pred(&mut w.preds, *d, if pv != 0 { FULL } else { 0 }, exec)
                            }
                            VoteMode::Uni => set_pred(
                                &mut w.preds,
                                *d,
                                if pv == 0 || pv == exec { FULL } else { 0 },
                                exec,
                            ),
                        }
                        w.advance();
                    }
                }
                Op::Redux { op, d, a, mask } => {
                    if let Some(exec) = self.warp_sync_arrive(wi, pc, exec, *mask)? {
                        let w = &mut self.warps[wi];
                        let v = redux(*op, &w.regs[*a as usize], exec);
                        if *d != SINK {
                            write_lanes(&mut w.regs, *d, &[v; 32], exec);
                        }
                        w.advance();
                    }
                }
                Op::Match {
                    all,
                    wide,
                    d,
                    p,
                    a,
                    mask,
                } => {
                    if let Some(exec) = self.warp_sync_arrive(wi, pc, exec, *mask)? {
                        let w = &mut self.warps[wi];
                        let av = w.regs[*a as usize];
                        let key = |x: u64| if *wide { x } else { x & 0xFFFF_FFFF };
                        let mut out = [0u64; 32];
                        let mut all_eq = true;
                        let first = key(av[exec.trailing_zeros() as usize & 31]);
                        for l in 0..32 {
                            if (exec >> l) & 1 == 0 {
                                continue;
                            }
                            let mut same = 0u32;
                            for k in 0..32 {
                                if (exec >> k) & 1 == 1 && key(av[k]) == key(av[l]) {
                                    same |= 1 << k;
                                }
                            }
                            out[l] = u64::from(same);
                            if key(av[l]) != first {
                                all_eq = false;
                            }
                        }
                        if *all {
                            let v = if all_eq { u64::from(exec) } else { 0 };
                            out = [v; 32];
                            set_pred(&mut w.preds, *p, if all_eq { FULL } else { 0 }, exec);
                        }
                        if *d != SINK {
                            write_lanes(&mut w.regs, *d, &out, exec);
                        }
                        w.advance();
                    }
                }
                Op::Activemask { d } => {
                    if exec != 0 && *d != SINK {
                        let g = u64::from(w.group);
                        write_lanes(&mut w.regs, *d, &[g; 32], exec);
                    }
                    w.advance();
                }
            }
        }
    }

    /// Arrival at a warp-synchronous instruction: `Some(lanes)` when every member
    /// has arrived (the caller executes it for `lanes`), `None` when the executing
    /// lanes must wait.
    fn warp_sync_arrive(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        mask_reg: u32,
    ) -> Result<Option<u32>, Fault> {
        let w = &mut self.warps[wi];
        let here = w.parked_at(pc);
        w.parked &= !here;
        w.group |= here;
        let exec = exec | here;
        if exec == 0 {
            w.advance();
            return Ok(None);
        }
        let mv = &w.regs[mask_reg as usize];
        let mut mask = 0u32;
        let mut first_mask = None;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let lm = mv[l as usize] as u32;
            if (lm >> l) & 1 == 0 {
                return Err(fault(
                    ErrorKind::WarpSync(format!(
                        "lane {l} executes a warp-synchronous instruction with member mask {lm:#010x}, which does not include it"
                    )),
                    wi,
                    Some(l),
                    None,
                ));
            }
            match first_mask {
                None => first_mask = Some(lm),
                Some(f) if f != lm => {
                    return Err(fault(
                        ErrorKind::WarpSync(format!(
                            "lanes use different member masks ({f:#010x} and {lm:#010x})"
                        )),
                        wi,
                        Some(l),
                        None,
                    ));
                }
                _ => {}
            }
            mask |= lm;
        }
        let missing = mask & w.live() & !exec;
        if missing == 0 {
            return Ok(Some(exec));
        }
        // Wait for the missing members.
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            w.lane_pc[l] = pc;
        }
        w.parked |= exec;
        w.group &= !exec;
        if w.group != 0 {
            w.advance();
        }
        Ok(None)
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_bar(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        kind: BarKind,
        aligned: bool,
        id_reg: u32,
        count_reg: Option<u32>,
        c: PSrc,
    ) -> Result<(), Fault> {
        let w = &mut self.warps[wi];
        if exec == 0 {
            w.advance();
            return Ok(());
        }
        let lane0 = exec.trailing_zeros();
        let uniform = |w: &Warp, r: u32, what: &str| -> Result<u32, Fault> {
            let v = w.regs[r as usize][lane0 as usize] as u32;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                if w.regs[r as usize][l as usize] as u32 != v {
                    return Err(fault(
                        ErrorKind::BarrierDivergence(format!(
                            "lanes of a warp use different barrier {what}s"
                        )),
                        wi,
                        Some(l),
                        None,
                    ));
                }
            }
            Ok(v)
        };
        let id = uniform(w, id_reg, "number")?;
        if id > 15 {
            return Err(fault(
                ErrorKind::InvalidOperand(format!("barrier number {id} (0..15 exist)")),
                wi,
                Some(lane0),
                None,
            ));
        }
        let count = match count_reg {
            Some(r) => {
                let c = uniform(w, r, "thread count")?;
                if c == 0 || c % 32 != 0 {
                    return Err(fault(
                        ErrorKind::InvalidOperand(format!(
                            "barrier thread count {c} is not a positive multiple of 32"
                        )),
                        wi,
                        Some(lane0),
                        None,
                    ));
                }
                Some(c)
            }
            None => None,
        };
        if kind == BarKind::Arrive {
            if exec != w.live() {
                return Err(fault(
                    ErrorKind::BarrierDivergence("bar.arrive executed by a diverged warp".into()),
                    wi,
                    Some(lane0),
                    None,
                ));
            }
            self.arrivals[id as usize] += 1;
            self.arrive_count[id as usize] = count;
            self.warps[wi].advance();
            return Ok(());
        }
        let wait = BarWait {
            id,
            count,
            pc,
            aligned,
        };
        if let Some(prev) = w.bar
            && (prev.id != id
                || prev.count != count
                || ((prev.aligned || aligned) && prev.pc != pc))
        {
            return Err(fault(
                ErrorKind::BarrierDivergence(format!(
                    "lanes of one warp wait at different barriers (lines {} and {})",
                    self.ctx
                        .prog
                        .src
                        .get(prev.pc as usize)
                        .map_or(0, |s| s.line),
                    self.ctx.prog.src.get(pc as usize).map_or(0, |s| s.line)
                )),
                wi,
                Some(lane0),
                None,
            ));
        }
        w.bar = Some(wait);
        if kind != BarKind::Sync {
            let pv = w.preds[c.reg as usize] ^ if c.neg { FULL } else { 0 };
            w.bar_pred |= pv & exec;
        }
        w.at_bar |= exec;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            w.lane_pc[l] = pc + 1;
        }
        w.group &= !exec;
        if w.group != 0 {
            w.advance();
        }
        Ok(())
    }

    fn exec_call(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        func: u32,
        args: &[(u32, u32, u32)],
    ) -> Result<(), Fault> {
        let prog = self.ctx.prog;
        let Some(callee) = prog.funcs.get(func as usize) else {
            return Err(fault(
                ErrorKind::InvalidOperand("bad call target".into()),
                wi,
                None,
                None,
            ));
        };
        let w = &mut self.warps[wi];
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let base = w.stack_top[l].next_multiple_of(16);
            let top = base.saturating_add(callee.frame_size);
            if top > MAX_STACK {
                return Err(fault(ErrorKind::StackOverflow, wi, Some(l as u32), None));
            }
            let loc = &mut w.local[l];
            if loc.len() < top as usize {
                loc.resize(top as usize, 0);
            }
            for &(from, to, n) in args {
                let src = (w.frame_base[l] + from) as usize;
                let dst = (base + to) as usize;
                let n = n as usize;
                if src + n <= loc.len() && dst + n <= loc.len() {
                    loc.copy_within(src..src + n, dst);
                }
            }
            let (r0, r1) = callee.regs;
            let saved_regs = (r0..r1).map(|r| w.regs[r as usize][l]).collect();
            let (p0, p1) = callee.preds;
            let saved_preds = (p0..p1)
                .map(|p| (w.preds[p as usize] >> l) & 1 == 1)
                .collect();
            w.stacks[l].push(Frame {
                ret_pc: pc + 1,
                call_pc: pc,
                func,
                saved_regs,
                saved_preds,
                caller_base: w.frame_base[l],
                caller_top: w.stack_top[l],
            });
            w.frame_base[l] = base;
            w.stack_top[l] = top;
        }
        let rest = w.group & !exec;
        if rest == 0 {
            w.jump(callee.entry_pc);
        } else {
            w.send(exec, callee.entry_pc);
            w.send(rest, pc + 1);
        }
        Ok(())
    }

    fn exec_ret(&mut self, wi: usize, pc: u32, exec: u32) -> Result<(), Fault> {
        let prog = self.ctx.prog;
        let w = &mut self.warps[wi];
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let Some(frame) = w.stacks[l].pop() else {
                // `ret` with no caller: the thread ends.
                w.exited |= 1 << l;
                w.group &= !(1 << l);
                continue;
            };
            if let Some(Inst {
                op: Op::Call { rets, .. },
                ..
            }) = prog.insts.get(frame.call_pc as usize)
            {
                let loc = &mut w.local[l];
                for &(from, to, n) in rets.iter() {
                    let src = (w.frame_base[l] + from) as usize;
                    let dst = (frame.caller_base + to) as usize;
                    let n = n as usize;
                    if src + n <= loc.len() && dst + n <= loc.len() {
                        loc.copy_within(src..src + n, dst);
                    }
                }
            }
            if let Some(f) = prog.funcs.get(frame.func as usize) {
                for (k, r) in (f.regs.0..f.regs.1).enumerate() {
                    w.regs[r as usize][l] = frame.saved_regs[k];
                }
                for (k, p) in (f.preds.0..f.preds.1).enumerate() {
                    let bit = 1u32 << l;
                    let pr = &mut w.preds[p as usize];
                    *pr = if frame.saved_preds[k] {
                        *pr | bit
                    } else {
                        *pr & !bit
                    };
                }
            }
            w.frame_base[l] = frame.caller_base;
            w.stack_top[l] = frame.caller_top;
            w.lane_pc[l] = frame.ret_pc;
            w.runnable |= 1 << l;
            w.group &= !(1 << l);
        }
        let rest = w.group;
        w.send(rest, pc + 1);
        Ok(())
    }

    /// Checks and resolves one lane's access; returns the space and state-space
    /// address.
    #[allow(clippy::too_many_arguments)]
    fn check_access(
        &mut self,
        wi: usize,
        pc: u32,
        lane: u32,
        space: MemSpace,
        a: u64,
        total: u32,
        write: bool,
    ) -> Result<(Res, u64), Fault> {
        let (res, off) = resolve(space, a);
        let sp = space_of(res);
        if off & (u64::from(total) - 1) != 0 {
            return Err(fault(
                ErrorKind::Misaligned {
                    space: sp,
                    size: total,
                    write,
                },
                wi,
                Some(lane),
                Some(off),
            ));
        }
        let oob = || {
            fault(
                ErrorKind::OutOfBounds {
                    space: sp,
                    size: total,
                    write,
                },
                wi,
                Some(lane),
                Some(off),
            )
        };
        let t = u64::from(total);
        match res {
            Res::Global | Res::Const => match self.ctx.mem.check(off, t) {
                Ok(ro) => {
                    if write && ro {
                        return Err(fault(ErrorKind::ReadOnly, wi, Some(lane), Some(off)));
                    }
                }
                Err(()) => return Err(oob()),
            },
            Res::Shared => {
                let size = u64::from(self.ctx.shared_size);
                if off >= size || t > size - off {
                    return Err(oob());
                }
                if let Some(r) = self.race.as_deref_mut() {
                    let tid = wi as u32 * 32 + lane;
                    if let Err((kind, other)) = r.access(off as u32, total, tid, pc, write) {
                        let ow = (other.tid / 32) as usize;
                        let ol = other.tid % 32;
                        return Err(fault(
                            ErrorKind::SharedRace {
                                kind,
                                other_thread: self.tid_of(ow, ol),
                                other_instruction: self.instr(other.pc).unwrap_or(InstrRef {
                                    text: String::new(),
                                    line: 0,
                                }),
                            },
                            wi,
                            Some(lane),
                            Some(off),
                        ));
                    }
                }
            }
            Res::Local => {
                let top = u64::from(self.warps[wi].stack_top[lane as usize]);
                if off >= top || t > top - off {
                    return Err(oob());
                }
            }
            Res::Param => {
                if write {
                    return Err(fault(ErrorKind::ReadOnly, wi, Some(lane), Some(off)));
                }
                let size = self.ctx.params.len() as u64;
                if off >= size || t > size - off {
                    return Err(oob());
                }
            }
        }
        Ok((res, off))
    }

    fn lane_addr(w: &Warp, addr: Addr, l: usize) -> u64 {
        match addr {
            Addr::Reg(r, off) => w.regs[r as usize][l].wrapping_add(off as u64),
            Addr::Reg32(r, off) => {
                u64::from((w.regs[r as usize][l] as u32).wrapping_add(off as u32))
            }
            Addr::Abs(a) => a,
            Addr::Frame(o) => u64::from(w.frame_base[l]) + u64::from(o),
        }
    }

    fn load_at(&self, wi: usize, lane: usize, res: Res, off: u64, size: u32) -> u64 {
        match res {
            Res::Global | Res::Const => self.ctx.mem.load(off, size),
            Res::Shared => read_le(self.shared, off as usize, size as usize),
            Res::Local => read_le(&self.warps[wi].local[lane], off as usize, size as usize),
            Res::Param => read_le(&self.ctx.params, off as usize, size as usize),
        }
    }

    fn store_at(&mut self, wi: usize, lane: usize, res: Res, off: u64, size: u32, v: u64) {
        match res {
            Res::Global | Res::Const => self.ctx.mem.store(off, size, v),
            Res::Shared => write_le(self.shared, off as usize, size as usize, v),
            Res::Local => write_le(
                &mut self.warps[wi].local[lane],
                off as usize,
                size as usize,
                v,
            ),
            Res::Param => {}
        }
    }

    /// The warp-wide fast path of a global access: when every executing lane's access
    /// is aligned and the whole address range of the warp lies inside one writable (or,
    /// for reads, any) allocation, returns the lanes' addresses; otherwise `None` and
    /// the caller checks lane by lane (which also finds the exact failing lane).
    fn global_fast_path(
        &self,
        wi: usize,
        exec: u32,
        space: MemSpace,
        addr: Addr,
        total: u32,
        write: bool,
    ) -> Option<[u64; 32]> {
        if !matches!(
            space,
            MemSpace::Global | MemSpace::Generic | MemSpace::Const
        ) {
            return None;
        }
        let w = &self.warps[wi];
        let mut addrs = [0u64; 32];
        let (mut lo, mut hi, mut or) = (u64::MAX, 0u64, 0u64);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = Self::lane_addr(w, addr, l);
            addrs[l] = a;
            lo = lo.min(a);
            hi = hi.max(a);
            or |= a;
        }
        if or & (u64::from(total) - 1) != 0 || hi < lo {
            return None;
        }
        let span = (hi - lo).checked_add(u64::from(total))?;
        if space == MemSpace::Generic {
            // Every window lies above every host address: the range must end below them.
            let end = lo.checked_add(span)?;
            if end > PARAM_WINDOW.min(LOCAL_WINDOW).min(SHARED_WINDOW) {
                return None;
            }
        }
        match self.ctx.mem.check(lo, span) {
            Ok(ro) if !(write && ro) => Some(addrs),
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_ld(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        space: MemSpace,
        addr: Addr,
        size: u8,
        sext: bool,
        n: u8,
        dsts: &[u32; 8],
    ) -> Result<(), Fault> {
        let size = u32::from(size);
        let total = size * u32::from(n);
        if let Some(addrs) = self.global_fast_path(wi, exec, space, addr, total, false) {
            let mem = &self.ctx.mem;
            let regs = &mut self.warps[wi].regs;
            let sh = 64 - 8 * size;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for k in 0..usize::from(n) {
                    let v = mem.load(addrs[l] + (k as u64) * u64::from(size), size);
                    let v = if sext {
                        (((v << sh) as i64) >> sh) as u64
                    } else {
                        v
                    };
                    let d = dsts[k];
                    if d != SINK {
                        regs[d as usize][l] = v;
                    }
                }
            }
            return Ok(());
        }
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a = Self::lane_addr(&self.warps[wi], addr, l as usize);
            let (res, off) = self.check_access(wi, pc, l, space, a, total, false)?;
            for k in 0..usize::from(n) {
                let v = self.load_at(
                    wi,
                    l as usize,
                    res,
                    off + (k as u64) * u64::from(size),
                    size,
                );
                let v = if sext {
                    let sh = 64 - 8 * size;
                    (((v << sh) as i64) >> sh) as u64
                } else {
                    v
                };
                let d = dsts[k];
                if d != SINK {
                    self.warps[wi].regs[d as usize][l as usize] = v;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_st(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        space: MemSpace,
        addr: Addr,
        size: u8,
        n: u8,
        srcs: &[u32; 8],
    ) -> Result<(), Fault> {
        let size = u32::from(size);
        let total = size * u32::from(n);
        if let Some(addrs) = self.global_fast_path(wi, exec, space, addr, total, true) {
            let mem = &self.ctx.mem;
            let regs = &self.warps[wi].regs;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for k in 0..usize::from(n) {
                    let v = regs[srcs[k] as usize][l];
                    mem.store(addrs[l] + (k as u64) * u64::from(size), size, v);
                }
            }
            return Ok(());
        }
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a = Self::lane_addr(&self.warps[wi], addr, l as usize);
            let (res, off) = self.check_access(wi, pc, l, space, a, total, true)?;
            for k in 0..usize::from(n) {
                let v = self.warps[wi].regs[srcs[k] as usize][l as usize];
                self.store_at(
                    wi,
                    l as usize,
                    res,
                    off + (k as u64) * u64::from(size),
                    size,
                    v,
                );
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_cp_async(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        dst: Addr,
        src: Addr,
        size: u8,
        src_size: Option<u32>,
    ) -> Result<(), Fault> {
        let size = u32::from(size);
        let n_src = src_size.unwrap_or(size);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let da = Self::lane_addr(&self.warps[wi], dst, l as usize);
            let sa = Self::lane_addr(&self.warps[wi], src, l as usize);
            let (_, soff) = if n_src > 0 {
                self.check_access(wi, pc, l, MemSpace::Global, sa, size, false)?
            } else {
                (Res::Global, sa)
            };
            let (_, doff) = self.check_access(wi, pc, l, MemSpace::Shared, da, size, true)?;
            for k in 0..size {
                let v = if k < n_src {
                    self.ctx.mem.load(soff + u64::from(k), 1)
                } else {
                    0
                };
                self.shared[(doff + u64::from(k)) as usize] = v as u8;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_atom(
        &mut self,
        wi: usize,
        exec: u32,
        space: MemSpace,
        op: AtomOp,
        size: u8,
        d: u32,
        addr: Addr,
        b: u32,
        c: u32,
    ) -> Result<(), Fault> {
        let size = u32::from(size);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let w = &self.warps[wi];
            let a = Self::lane_addr(w, addr, l as usize);
            let bv = w.regs[b as usize][l as usize];
            let cv = w.regs[c as usize][l as usize];
            let (res, off) = resolve(space, a);
            let sp = space_of(res);
            if off % u64::from(size) != 0 {
                return Err(fault(
                    ErrorKind::Misaligned {
                        space: sp,
                        size,
                        write: true,
                    },
                    wi,
                    Some(l),
                    Some(off),
                ));
            }
            let oob = fault(
                ErrorKind::OutOfBounds {
                    space: sp,
                    size,
                    write: true,
                },
                wi,
                Some(l),
                Some(off),
            );
            let global_ftz = res == Res::Global;
            let mut f = |old: u64| atom_apply(op, size, global_ftz, old, bv, cv);
            let old = match res {
                Res::Global => match self.ctx.mem.check(off, u64::from(size)) {
                    Ok(false) => self.ctx.mem.rmw(off, size, &mut f),
                    Ok(true) => return Err(fault(ErrorKind::ReadOnly, wi, Some(l), Some(off))),
                    Err(()) => return Err(oob),
                },
                Res::Shared => {
                    let sz = u64::from(self.ctx.shared_size);
                    if off >= sz || u64::from(size) > sz - off {
                        return Err(oob);
                    }
                    let old = read_le(self.shared, off as usize, size as usize);
                    if let Some(new) = f(old) {
                        write_le(self.shared, off as usize, size as usize, new);
                    }
                    old
                }
                _ => {
                    return Err(fault(
                        ErrorKind::InvalidOperand(
                            "atomic on a space other than global or shared".into(),
                        ),
                        wi,
                        Some(l),
                        Some(off),
                    ));
                }
            };
            if d != SINK {
                self.warps[wi].regs[d as usize][l as usize] = old;
            }
        }
        Ok(())
    }
}

/// The new value of an atomic location (`None`: unchanged).
fn atom_apply(op: AtomOp, size: u32, global: bool, old: u64, b: u64, c: u64) -> Option<u64> {
    let w = if size == 8 {
        W::W64
    } else if size == 2 {
        W::W16
    } else {
        W::W32
    };
    let z = |x: u64| alu::zx(x, w);
    let s = |x: u64| alu::sx(x, w);
    Some(match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if z(old) == z(b) {
                c
            } else {
                return None;
            }
        }
        AtomOp::AddU => old.wrapping_add(b),
        AtomOp::AddF32 { .. } => alu::fadd(crate::float::F32, global, old, b),
        AtomOp::AddF64 => alu::fadd(crate::float::F64, false, old, b),
        AtomOp::AddF16 => alu::fadd(alu::HALF, false, old, b),
        AtomOp::AddBF16 => alu::fadd(alu::BHALF, false, old, b),
        AtomOp::AddF16x2 | AtomOp::AddBF16x2 => {
            let f = if op == AtomOp::AddF16x2 {
                alu::HALF
            } else {
                alu::BHALF
            };
            let lo = alu::fadd(f, false, old & 0xFFFF, b & 0xFFFF) & 0xFFFF;
            let hi = alu::fadd(f, false, (old >> 16) & 0xFFFF, (b >> 16) & 0xFFFF) & 0xFFFF;
            (hi << 16) | lo
        }
        AtomOp::Inc => {
            if z(old) >= z(b) {
                0
            } else {
                old.wrapping_add(1)
            }
        }
        AtomOp::Dec => {
            if z(old) == 0 || z(old) > z(b) {
                b
            } else {
                old.wrapping_sub(1)
            }
        }
        AtomOp::MinU => z(old).min(z(b)),
        AtomOp::MaxU => z(old).max(z(b)),
        AtomOp::MinS => s(old).min(s(b)) as u64,
        AtomOp::MaxS => s(old).max(s(b)) as u64,
    })
}

#[inline(always)]
fn write_lanes(regs: &mut [Lanes], d: u32, out: &Lanes, exec: u32) {
    if d == SINK {
        return;
    }
    let dst = &mut regs[d as usize];
    if exec == FULL {
        *dst = *out;
    } else {
        for l in 0..32 {
            if (exec >> l) & 1 == 1 {
                dst[l] = out[l];
            }
        }
    }
}

#[inline(always)]
fn set_pred(preds: &mut [u32], p: u32, v: u32, exec: u32) {
    if p == SINK {
        return;
    }
    let r = &mut preds[p as usize];
    *r = (*r & !exec) | (v & exec);
}

fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

fn carry_op(w: &mut Warp, f: &Alu, d: u32, s: &[u32; 4], exec: u32) {
    let mut out = [0u64; 32];
    let mut cc = w.cc;
    for l in 0..32 {
        if (exec >> l) & 1 == 0 {
            continue;
        }
        let a = w.regs[s[0] as usize][l];
        let b = w.regs[s[1] as usize][l];
        let cin = u128::from((w.cc >> l) & 1);
        let (v, wbits, cout_mask) = match *f {
            Alu::AddCc {
                w: wd,
                carry_in,
                carry_out,
                sub,
            } => {
                let bits = wd.bits();
                let (a, b) = (u128::from(alu::zx(a, wd)), u128::from(alu::zx(b, wd)));
                let ci = if carry_in { cin } else { 0 };
                let v = if sub {
                    // a - b - borrow; the carry flag holds the borrow.
                    a.wrapping_sub(b).wrapping_sub(ci)
                } else {
                    a + b + ci
                };
                (v, bits, carry_out)
            }
            Alu::MadCc {
                w: wd,
                hi,
                carry_in,
                carry_out,
            } => {
                let bits = wd.bits();
                let c = w.regs[s[2] as usize][l];
                let p = u128::from(alu::zx(a, wd)) * u128::from(alu::zx(b, wd));
                let part = if hi {
                    p >> bits
                } else {
                    p & ((1u128 << bits) - 1)
                };
                let ci = if carry_in { cin } else { 0 };
                (part + u128::from(alu::zx(c, wd)) + ci, bits, carry_out)
            }
            _ => (0, 64, false),
        };
        out[l] = v as u64;
        if cout_mask {
            let carry = (v >> wbits) & 1 == 1;
            cc = if carry { cc | (1 << l) } else { cc & !(1 << l) };
        }
    }
    w.cc = cc;
    write_lanes(&mut w.regs, d, &out, exec);
}

#[allow(clippy::too_many_arguments)]
fn shfl(w: &mut Warp, exec: u32, mode: ShflMode, d: u32, p: u32, a: u32, b: u32, c: u32) {
    let av = w.regs[a as usize];
    let bv = &w.regs[b as usize];
    let cv = &w.regs[c as usize];
    let mut out = [0u64; 32];
    let mut pm = 0u32;
    for l in 0..32u32 {
        if (exec >> l) & 1 == 0 {
            continue;
        }
        let bval = (bv[l as usize] as u32) & 31;
        let c = cv[l as usize] as u32;
        let cval = c & 31;
        let seg = (c >> 8) & 31;
        let max_lane = (l & seg) | (cval & !seg);
        let min_lane = l & seg;
        let (j, ok) = match mode {
            ShflMode::Up => {
                let j = l as i32 - bval as i32;
                (j, j >= max_lane as i32)
            }
            ShflMode::Down => {
                let j = (l + bval) as i32;
                (j, j <= max_lane as i32)
            }
            ShflMode::Bfly => {
                let j = (l ^ bval) as i32;
                (j, j <= max_lane as i32)
            }
            ShflMode::Idx => {
                let j = (min_lane | (bval & !seg)) as i32;
                (j, j <= max_lane as i32)
            }
        };
        let j = if ok { j as usize & 31 } else { l as usize };
        out[l as usize] = av[j];
        if ok {
            pm |= 1 << l;
        }
    }
    write_lanes(&mut w.regs, d, &out, exec);
    set_pred(&mut w.preds, p, pm, exec);
}

fn redux(op: ReduxOp, v: &Lanes, exec: u32) -> u64 {
    let lanes = (0..32).filter(|l| (exec >> l) & 1 == 1).map(|l| v[l]);
    match op {
        ReduxOp::Add => u64::from(lanes.fold(0u32, |acc, x| acc.wrapping_add(x as u32))),
        ReduxOp::MinU => u64::from(lanes.map(|x| x as u32).min().unwrap_or(0)),
        ReduxOp::MaxU => u64::from(lanes.map(|x| x as u32).max().unwrap_or(0)),
        ReduxOp::MinS => u64::from(lanes.map(|x| x as i32).min().unwrap_or(0) as u32),
        ReduxOp::MaxS => u64::from(lanes.map(|x| x as i32).max().unwrap_or(0) as u32),
        ReduxOp::And => u64::from(lanes.fold(u32::MAX, |acc, x| acc & x as u32)),
        ReduxOp::Or => u64::from(lanes.fold(0, |acc, x| acc | x as u32)),
        ReduxOp::Xor => u64::from(lanes.fold(0, |acc, x| acc ^ x as u32)),
        ReduxOp::MinF { nan, abs } | ReduxOp::MaxF { nan, abs } => {
            let mm = MinMax {
                max: matches!(op, ReduxOp::MaxF { .. }),
                nan,
                xorsign_abs: false,
                ftz: false,
                fmt: crate::float::F32,
                x2: false,
            };
            let f32_abs = |x: u64| {
                if abs {
                    x & 0x7FFF_FFFF
                } else {
                    x & 0xFFFF_FFFF
                }
            };
            let mut acc: Option<u64> = None;
            for x in lanes {
                let x = f32_abs(x);
                acc = Some(match acc {
                    None => {
                        if crate::float::F32.is_nan(x) {
                            0x7FFF_FFFF
                        } else {
                            x
                        }
                    }
                    Some(a) => alu::min_max(mm, a, x),
                });
            }
            acc.unwrap_or(0x7FFF_FFFF)
        }
    }
}
