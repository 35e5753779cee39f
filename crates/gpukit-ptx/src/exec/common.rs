//! The interpreter's shared types: the launch context, a block and its warps (with their
//! SIMT lane groups), faults, racecheck state, and the lane helpers every family uses.

use crate::alu::Lanes;
use crate::counters::Tally;
use crate::error::ErrorKind;
use crate::memory::GlobalMemory;
use crate::program::*;

pub(super) const NONE: u32 = u32::MAX;
pub(super) const FULL: u32 = crate::alu::FULL_MASK;

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
    /// Performance counters on (`EmuOptions::counters`).
    pub counters: bool,
    /// The instruction set the warp loop is compiled for on this host.
    pub isa: Isa,
}

/// The host instruction set a warp loop copy is compiled for (chosen once per launch).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Isa {
    /// The target's baseline.
    Base,
    /// x86-64-v3: AVX2, FMA, BMI1/2, LZCNT, POPCNT.
    #[cfg(target_arch = "x86_64")]
    V3,
    /// x86-64-v3 with AVX-512 F/VL/DQ/BW.
    #[cfg(target_arch = "x86_64")]
    V4,
}

impl Isa {
    /// The best copy this host runs, or a lower one named by `GPUKIT_EMU_ISA`
    /// (`base`, `v3`, `v4`: never above what the CPU has; any other value is ignored).
    /// The copies give the same results; the variable lets a test or a bug report run
    /// each.
    pub(crate) fn detect() -> Isa {
        let best = Isa::best();
        match std::env::var("GPUKIT_EMU_ISA").as_deref() {
            Ok("base") => Isa::Base,
            #[cfg(target_arch = "x86_64")]
            Ok("v3") if best == Isa::V4 => Isa::V3,
            _ => best,
        }
    }

    fn best() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let v3 = has!("avx2")
                && has!("fma")
                && has!("bmi1")
                && has!("bmi2")
                && has!("lzcnt")
                && has!("popcnt");
            if v3 && has!("avx512f") && has!("avx512vl") && has!("avx512dq") && has!("avx512bw") {
                return Isa::V4;
            }
            if v3 {
                return Isa::V3;
            }
        }
        Isa::Base
    }
}

/// Counters of one block.
#[derive(Debug, Default, Clone)]
pub(crate) struct Stats {
    pub warp_insts: u64,
    pub thread_insts: u64,
    pub approx: u64,
    /// The performance counters, when the launch asked for them.
    pub tally: Option<Box<Tally>>,
}

/// A failure inside a block, before it is placed (thread, instruction).
pub(super) struct Fault {
    pub(super) kind: ErrorKind,
    pub(super) warp: usize,
    pub(super) lane: Option<u32>,
    pub(super) addr: Option<u64>,
    pub(super) pc: Option<u32>,
}

pub(super) fn fault(kind: ErrorKind, warp: usize, lane: Option<u32>, addr: Option<u64>) -> Fault {
    Fault {
        kind,
        warp,
        lane,
        addr,
        pc: None,
    }
}

pub(super) struct Frame {
    pub(super) ret_pc: u32,
    pub(super) call_pc: u32,
    pub(super) func: u32,
    pub(super) saved_regs: Vec<u64>,
    pub(super) saved_preds: Vec<bool>,
    pub(super) caller_base: u32,
    pub(super) caller_top: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct BarWait {
    pub(super) id: u32,
    pub(super) count: Option<u32>,
    pub(super) pc: u32,
    pub(super) aligned: bool,
}

pub(super) struct Warp {
    pub(super) regs: Vec<Lanes>,
    pub(super) preds: Vec<u32>,
    pub(super) exists: u32,
    pub(super) exited: u32,
    pub(super) group: u32,
    pub(super) group_pc: u32,
    pub(super) runnable: u32,
    pub(super) merge_pc: u32,
    pub(super) lane_pc: [u32; 32],
    pub(super) at_bar: u32,
    pub(super) parked: u32,
    pub(super) bar: Option<BarWait>,
    pub(super) bar_pred: u32,
    pub(super) arrived: bool,
    pub(super) cc: u32,
    pub(super) clock: u64,
    /// Consecutive steps while diverged (for round-robin between groups).
    pub(super) div_steps: u64,
    pub(super) frame_base: [u32; 32],
    pub(super) stack_top: [u32; 32],
    pub(super) stacks: Vec<Vec<Frame>>,
    pub(super) local: Vec<Vec<u8>>,
}

impl Warp {
    pub(super) fn live(&self) -> u32 {
        self.exists & !self.exited
    }

    pub(super) fn done(&self) -> bool {
        self.live() == 0
    }

    /// Moves the group on to the next instruction.
    #[inline(always)]
    pub(super) fn advance(&mut self) {
        self.group_pc += 1;
        if self.runnable != 0 && self.group_pc == self.merge_pc {
            self.merge();
        }
    }

    /// Absorbs the runnable lanes waiting at the group's pc. (Inlined: in the
    /// interpreter's per-ISA warp loops its lane compares are vector code.)
    #[inline(always)]
    pub(super) fn merge(&mut self) {
        // Over all 32 lanes at once (vector compares and a minimum), the lanes that are
        // not runnable standing at `NONE`.
        let pcs = self.runnable_pcs();
        let mut at = 0u32;
        let mut next = NONE;
        for (l, &p) in pcs.iter().enumerate() {
            let here = p == self.group_pc;
            at |= u32::from(here) << l;
            next = next.min(if here { NONE } else { p });
        }
        let at = at & self.runnable;
        self.group |= at;
        self.runnable &= !at;
        self.merge_pc = next;
    }

    /// With no group, makes the runnable lanes at the lowest pc the group (the common
    /// case of [`Block::select`], kept in the warp loop).
    #[inline(always)]
    pub(super) fn regroup(&mut self) {
        let min = self.runnable_pcs().into_iter().min().unwrap_or(NONE);
        self.group = 0;
        self.group_pc = min;
        self.merge_pc = min;
        self.merge();
    }

    /// Each lane's pc if it is runnable, else [`NONE`].
    #[inline(always)]
    pub(super) fn runnable_pcs(&self) -> [u32; 32] {
        let r = self.runnable;
        let mut pcs = [0u32; 32];
        for (l, pc) in pcs.iter_mut().enumerate() {
            let on = 0u32.wrapping_sub((r >> l) & 1);
            *pc = (self.lane_pc[l] & on) | !on;
        }
        pcs
    }

    /// Sends the whole group to `target`.
    #[inline]
    pub(super) fn jump(&mut self, target: u32) {
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
    pub(super) fn send(&mut self, lanes: u32, pc: u32) {
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
    pub(super) fn rotate(&mut self) {
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
    pub(super) fn parked_at(&self, pc: u32) -> u32 {
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

/// One recorded shared-memory access, packed in 8 bytes (a shadow record holds three):
/// the thread (11 bits: a block has at most 1024 threads; all ones for none), the
/// instruction (21 bits; all ones for an instruction past that, which a race report
/// then cannot name) and the warp's clock (32 bits).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Acc(u64);

const ACC_TID_NONE: u64 = 0x7FF;
const ACC_PC_UNKNOWN: u32 = 0x1F_FFFF;

impl Acc {
    #[inline(always)]
    pub(super) fn new(tid: u32, pc: u32, clock: u32) -> Acc {
        Acc(u64::from(clock) << 32
            | u64::from(tid & 0x7FF) << 21
            | u64::from(pc.min(ACC_PC_UNKNOWN)))
    }
    /// The thread (block-linear index), or [`NONE`].
    #[inline(always)]
    pub(super) fn tid(self) -> u32 {
        let t = (self.0 >> 21) & 0x7FF;
        if t == ACC_TID_NONE { NONE } else { t as u32 }
    }
    /// The instruction, when it fits.
    pub(super) fn pc(self) -> Option<u32> {
        let pc = (self.0 & u64::from(ACC_PC_UNKNOWN)) as u32;
        (pc != ACC_PC_UNKNOWN).then_some(pc)
    }
    #[inline(always)]
    pub(super) fn clock(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

pub(super) const NO_ACC: Acc = Acc(ACC_TID_NONE << 21);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Shadow {
    pub(super) epoch: u32,
    pub(super) w: Acc,
    pub(super) r1: Acc,
    pub(super) r2: Acc,
}

/// A shadow record that holds no access.
pub(super) const NO_SHADOW: Shadow = Shadow {
    epoch: 0,
    w: NO_ACC,
    r1: NO_ACC,
    r2: NO_ACC,
};

/// Racecheck state: shadow records of shared memory and vector clocks per warp.
///
/// A record per 4-byte word stands for its four bytes while every access of the word
/// covered all of it (the usual case: 4-, 8- and 16-byte accesses); the first access
/// of part of a word *splits* it: its record is copied to the word's four byte records
/// (`shadow`), which hold it from then on for the rest of the block. Either way each
/// byte's history is exact.
#[derive(Clone)]
pub(super) struct Race {
    /// Per-byte records of split words.
    pub(super) shadow: Vec<Shadow>,
    /// Per-word records.
    pub(super) words: Vec<Shadow>,
    /// The epoch in which each word was split (another value: not split).
    pub(super) split: Vec<u32>,
    pub(super) epoch: u32,
    pub(super) clock: Vec<u32>,
    pub(super) vc: Vec<u32>,
    pub(super) n: usize,
}

/// Reusable per-worker allocations.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(super) warps: Vec<Warp>,
    pub(super) shared: Vec<u8>,
    pub(super) race: Option<Race>,
}

impl Scratch {
    /// About how many bytes the scratch holds allocated.
    pub(crate) fn bytes(&self) -> usize {
        let warps: usize = self
            .warps
            .iter()
            .map(|w| {
                w.regs.capacity() * std::mem::size_of::<Lanes>()
                    + w.preds.capacity() * 4
                    + w.local.iter().map(Vec::capacity).sum::<usize>()
            })
            .sum();
        let race = self.race.as_ref().map_or(0, |r| {
            (r.shadow.capacity() + r.words.capacity()) * std::mem::size_of::<Shadow>()
                + (r.split.capacity() + r.clock.capacity() + r.vc.capacity()) * 4
        });
        warps + self.shared.capacity() + race
    }
}

pub(super) struct Block<'a, 'c> {
    pub(super) ctx: &'c LaunchCtx<'a>,
    pub(super) bidx: [u32; 3],
    pub(super) warps: &'c mut Vec<Warp>,
    pub(super) shared: &'c mut Vec<u8>,
    pub(super) race: Option<&'c mut Race>,
    pub(super) arrivals: [u32; 16],
    pub(super) arrive_count: [Option<u32>; 16],
    pub(super) steps: u64,
    pub(super) stats: Stats,
}

/// Where a resolved access lands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Res {
    Global,
    Const,
    Shared,
    Local,
    Param,
}

pub(super) fn resolve(space: MemSpace, a: u64) -> (Res, u64) {
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

#[inline(always)]
pub(super) fn write_lanes(regs: &mut [Lanes], d: u32, out: &Lanes, exec: u32) {
    if d == SINK {
        return;
    }
    let dst = &mut regs[d as usize];
    if exec == FULL {
        *dst = *out;
    } else {
        crate::alu::blend_lanes(dst, out, exec);
    }
}

#[inline(always)]
pub(super) fn set_pred(preds: &mut [u32], p: u32, v: u32, exec: u32) {
    if p == SINK {
        return;
    }
    let r = &mut preds[p as usize];
    *r = (*r & !exec) | (v & exec);
}

pub(super) fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed access record gives back every thread of a 1024-thread block, the
    /// instruction (or none past 21 bits) and the full 32-bit clock.
    #[test]
    fn access_records_round_trip() {
        for tid in [0u32, 1, 31, 32, 1023] {
            for (pc, want_pc) in [
                (0u32, Some(0)),
                (4095, Some(4095)),
                (0x1F_FFFE, Some(0x1F_FFFE)),
                (0x1F_FFFF, None),
                (u32::MAX, None),
            ] {
                for clock in [0u32, 1, 0xFFFF_FFFF] {
                    let a = Acc::new(tid, pc, clock);
                    assert_eq!((a.tid(), a.pc(), a.clock()), (tid, want_pc, clock));
                }
            }
        }
        assert_eq!(NO_ACC.tid(), NONE);
        assert_eq!(std::mem::size_of::<Shadow>(), 32);
    }
}
