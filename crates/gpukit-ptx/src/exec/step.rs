//! One warp step: the dispatcher over the decoded instructions. ALU, predicate, move and
//! branch semantics are here; memory, barrier, warp-synchronous and call instructions
//! go to their family's file.

use crate::alu::{self, Lanes, blend_lanes, lane_masks, lanes};
use crate::error::ErrorKind;
use crate::program::*;

use super::common::*;
use super::sync::{match_sync, redux, shfl, vote};

/// Instructions a warp runs before the scheduler moves to the next warp.
const SLICE: u64 = 1 << 12;

impl Block<'_, '_> {
    /// Runs warp `wi` until it blocks, finishes or uses its time slice; returns the
    /// instructions it ran.
    ///
    /// The warp loop, with the instruction families it dispatches to that are marked
    /// `#[inline(always)]` (the ALU, memory, shared-memory and racecheck paths), is
    /// compiled once per [`Isa`] and the launch's copy runs: built for x86-64-v3 or
    /// with AVX-512, the whole interpreter (lane loops, register copies, `popcnt`,
    /// `tzcnt`) uses the host's instructions, not only the ALU's lane loops. Every
    /// copy is the same source, so the same semantics.
    pub(super) fn run_warp(&mut self, wi: usize) -> Result<u64, Fault> {
        match self.ctx.isa {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::detect` chose V4 only where the CPU has every feature the
            // function enables.
            Isa::V4 => unsafe { self.run_warp_v4(wi) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::detect` chose V3 only where the CPU has every feature the
            // function enables.
            Isa::V3 => unsafe { self.run_warp_v3(wi) },
            Isa::Base => self.run_warp_body::<BASE>(wi),
        }
    }

    /// [`Block::run_warp`] for x86-64-v3.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    fn run_warp_v3(&mut self, wi: usize) -> Result<u64, Fault> {
        self.run_warp_body::<VECTOR>(wi)
    }

    /// [`Block::run_warp`] for x86-64-v3 with AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512vl,avx512dq,avx512bw")]
    fn run_warp_v4(&mut self, wi: usize) -> Result<u64, Fault> {
        self.run_warp_body::<VECTOR>(wi)
    }

    #[inline(always)]
    fn run_warp_body<const V: u8>(&mut self, wi: usize) -> Result<u64, Fault> {
        // The step and thread-instruction counts live in locals while the warp runs
        // (kept in registers rather than updated in the block every instruction).
        let (mut steps, mut threads) = (0u64, 0u64);
        let r = self.warp_loop::<V>(wi, &mut steps, &mut threads);
        self.steps += steps;
        self.stats.warp_insts += steps;
        self.stats.thread_insts += threads;
        r.map(|()| steps)
    }

    #[inline(always)]
    fn warp_loop<const V: u8>(
        &mut self,
        wi: usize,
        steps: &mut u64,
        threads: &mut u64,
    ) -> Result<(), Fault> {
        let prog = self.ctx.prog;
        let start = self.steps;
        let max_steps = self.ctx.max_steps.unwrap_or(u64::MAX);
        // One compare per instruction for both stops: the time slice and the step limit
        // (which of the two it was is sorted out when it is reached).
        let limit = SLICE.min(max_steps.saturating_sub(start));
        let counting = self.stats.tally.is_some();
        loop {
            if self.warps[wi].group == 0 {
                let w = &mut self.warps[wi];
                if w.runnable != 0 {
                    w.regroup();
                } else if !self.select(wi)? {
                    return Ok(());
                }
            }
            if *steps >= limit {
                if *steps >= SLICE {
                    return Ok(());
                }
                return Err(fault(ErrorKind::StepLimit(max_steps), wi, None, None));
            }
            *steps += 1;
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
            *threads += u64::from(exec.count_ones());
            if counting && let Some(t) = self.stats.tally.as_deref_mut() {
                t.inst(&inst.op, exec);
                match inst.op {
                    Op::Bra { .. } => t.branch(w.group, exec),
                    // An indirect branch counts; its divergence is not classified.
                    Op::Brx { .. } => t.branch(exec, exec),
                    _ => {}
                }
            }
            match &inst.op {
                Op::Alu { f, d, s } => {
                    if exec != 0 {
                        match f {
                            Alu::AddCc { .. } | Alu::MadCc { .. } => carry_op(w, f, *d, s, exec),
                            _ => {
                                if let Alu::Approx(..) = f {
                                    self.stats.approx += u64::from(exec.count_ones());
                                }
                                alu_op::<V>(&mut w.regs, f, *d, s, exec);
                            }
                        }
                    }
                    w.advance();
                }
                Op::Selp { d, a, b, p } => {
                    if exec != 0 && *d != SINK {
                        let pm = w.preds[p.reg as usize] ^ if p.neg { FULL } else { 0 };
                        let regs = &mut w.regs;
                        // Both sources read whole (copies: either may be the
                        // destination), then one blend per lane: vector code.
                        let (av, bv) = (regs[*a as usize], regs[*b as usize]);
                        let pl = lane_masks(pm);
                        let v: Lanes = lanes(|l| (av[l] & pl[l]) | (bv[l] & !pl[l]));
                        blend_lanes(&mut regs[*d as usize], &v, exec);
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
                        let t = compare::<V>(*cmp, &w.regs[*a as usize], &w.regs[*b as usize]);
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
                        let t = compare::<V>(*cmp, &w.regs[*a as usize], &w.regs[*b as usize]);
                        let t = bool_op(*bop, t, cv);
                        let dst = &mut w.regs[*d as usize];
                        for l in 0..32 {
                            if (exec >> l) & 1 == 1 {
                                let v = (t >> l) & 1 != 0;
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
                            let sh = u32::from(*bits) * k as u32;
                            let out = lanes(|l| (sv[l] >> sh) & mask);
                            write_lanes(&mut w.regs, d, &out, exec);
                        }
                    }
                    w.advance();
                }
                Op::LocalAddr { d, off } => {
                    if exec != 0 && *d != SINK {
                        let base = w.frame_base;
                        let out = lanes(|l| u64::from(base[l]) + u64::from(*off));
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
                        let av = &w.regs[*a as usize];
                        let out = lanes(|l| {
                            let x = av[l];
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
                        vote(w, exec, *mode, *d, *a);
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
                        match_sync(w, exec, *all, *wide, *d, *p, *a);
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
}

/// The warp loop copy for the target's baseline: the ALU and comparisons choose their
/// own vector code at run time.
const BASE: u8 = 0;
/// A warp loop copy compiled for a vector ISA (x86-64-v3, or with AVX-512): the ALU
/// and comparison lane loops are inlined and compiled for it.
const VECTOR: u8 = 1;

/// One ALU instruction (see [`alu::exec`]).
#[inline(always)]
fn alu_op<const V: u8>(regs: &mut [Lanes], f: &Alu, d: u32, s: &[u32; 4], exec: u32) {
    if V == BASE {
        alu::exec(f, regs, d, s, exec);
    } else {
        alu::exec_inline(f, regs, d, s, exec);
    }
}

/// One comparison over the lanes (see [`alu::compare_lanes`]).
#[inline(always)]
fn compare<const V: u8>(c: Cmp, a: &Lanes, b: &Lanes) -> u32 {
    if V == BASE {
        alu::compare_lanes(c, a, b)
    } else {
        alu::compare_inline(c, a, b)
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
