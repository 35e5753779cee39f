//! Barriers and warp-synchronous instructions: `bar`/`barrier` (counts, `.red`,
//! `.arrive`), the member-mask rendezvous of `shfl.sync`, `vote.sync`, `bar.warp.sync`,
//! `redux.sync`, `match.sync`, and the shuffle and reduction semantics.

use crate::alu::{self, Lanes};
use crate::error::ErrorKind;
use crate::program::*;

use super::common::*;

impl Block<'_, '_> {
    /// Arrival at a warp-synchronous instruction: `Some(lanes)` when every member
    /// has arrived (the caller executes it for `lanes`), `None` when the executing
    /// lanes must wait.
    #[inline(always)]
    pub(super) fn warp_sync_arrive(
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
    pub(super) fn exec_bar(
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
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn shfl(
    w: &mut Warp,
    exec: u32,
    mode: ShflMode,
    d: u32,
    p: u32,
    a: u32,
    b: u32,
    c: u32,
) {
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

pub(super) fn redux(op: ReduxOp, v: &Lanes, exec: u32) -> u64 {
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

/// `vote.sync` for the lanes `exec`: `.ballot` writes the mask of lanes whose predicate
/// `a` is true into register `d`; `.all`/`.any`/`.uni` write predicate `d`.
pub(super) fn vote(w: &mut Warp, exec: u32, mode: VoteMode, d: u32, a: PSrc) {
    let pv = (w.preds[a.reg as usize] ^ if a.neg { FULL } else { 0 }) & exec;
    match mode {
        VoteMode::Ballot => {
            if d != SINK {
                write_lanes(&mut w.regs, d, &[u64::from(pv); 32], exec);
            }
        }
        VoteMode::All => set_pred(&mut w.preds, d, if pv == exec { FULL } else { 0 }, exec),
        VoteMode::Any => set_pred(&mut w.preds, d, if pv != 0 { FULL } else { 0 }, exec),
        VoteMode::Uni => set_pred(
            &mut w.preds,
            d,
            if pv == 0 || pv == exec { FULL } else { 0 },
            exec,
        ),
    }
}

/// `match.any.sync`/`match.all.sync` for the lanes `exec` over register `a` (32 or 64
/// bits, `wide`): the mask of lanes with an equal value into `d`; with `.all`, the
/// whole mask (or 0) into `d` and whether all were equal into predicate `p`.
pub(super) fn match_sync(w: &mut Warp, exec: u32, all: bool, wide: bool, d: u32, p: u32, a: u32) {
    let av = w.regs[a as usize];
    let key = |x: u64| if wide { x } else { x & 0xFFFF_FFFF };
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
    if all {
        let v = if all_eq { u64::from(exec) } else { 0 };
        out = [v; 32];
        set_pred(&mut w.preds, p, if all_eq { FULL } else { 0 }, exec);
    }
    if d != SINK {
        write_lanes(&mut w.regs, d, &out, exec);
    }
}
