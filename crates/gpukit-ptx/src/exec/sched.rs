//! The block scheduler: block set-up (registers, special registers, frames), the
//! cooperative loop over warps, barrier release, deadlock detection and fault reports.

use crate::error::{EmuError, ErrorKind, InstrRef};
use crate::program::*;

use super::common::*;

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
        stats: Stats {
            tally: ctx.counters.then(Box::default),
            ..Stats::default()
        },
    };
    match b.run() {
        Ok(()) => {
            if let Some(t) = b.stats.tally.as_deref_mut() {
                t.compact();
            }
            Ok(b.stats)
        }
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
        match &prog.zero_slots {
            // Only the slots whose initial zero a lane can read (the others hold
            // whatever an earlier block left, and are written before they are read).
            Some(zero) => {
                w.regs.resize(prog.nregs as usize, [0; 32]);
                for &r in zero {
                    w.regs[r as usize] = [0; 32];
                }
            }
            None => {
                w.regs.clear();
                w.regs.resize(prog.nregs as usize, [0; 32]);
            }
        }
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
        // Each lane's thread index: the warp's first divided out once, the others
        // stepped from it with carries (no division per lane).
        let mut tids = [[0u32; 3]; 32];
        let mut t = [first % bx, (first / bx) % by, first / (bx * by)];
        for slot in tids.iter_mut() {
            *slot = t;
            t[0] += 1;
            if t[0] == bx {
                t[0] = 0;
                t[1] += 1;
                if t[1] == by {
                    t[1] = 0;
                    t[2] += 1;
                }
            }
        }
        for &(r, init) in &prog.consts {
            let lanes = &mut w.regs[r as usize];
            match init {
                ConstInit::Imm(v) => *lanes = [v; 32],
                ConstInit::Special(sp) => {
                    for (l, slot) in lanes.iter_mut().enumerate() {
                        *slot = special(ctx, sp, tids[l], bidx, wi as u32, l as u32);
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
            words: Vec::new(),
            split: Vec::new(),
            epoch: 0,
            clock: Vec::new(),
            vc: Vec::new(),
            n: 0,
        });
        let words = (ctx.shared_size as usize).div_ceil(4);
        if r.words.len() < words {
            r.words.resize(words, NO_SHADOW);
            r.split.resize(words, 0);
            r.shadow.resize(words * 4, NO_SHADOW);
        }
        r.epoch = r.epoch.wrapping_add(1);
        if r.epoch == 0 {
            for s in r.shadow.iter_mut().chain(r.words.iter_mut()) {
                s.epoch = 0;
            }
            r.split.fill(0);
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

impl Block<'_, '_> {
    pub(super) fn tid_of(&self, warp: usize, lane: u32) -> (u32, u32, u32) {
        let t = warp as u32 * 32 + lane;
        let [bx, by, _] = self.ctx.block;
        (t % bx, (t / bx) % by, t / (bx * by))
    }

    pub(super) fn instr(&self, pc: u32) -> Option<InstrRef> {
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
    pub(super) fn select(&mut self, wi: usize) -> Result<bool, Fault> {
        let prog = self.ctx.prog;
        let w = &mut self.warps[wi];
        if w.runnable != 0 {
            w.regroup();
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
}
