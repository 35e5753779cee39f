//! Device-function calls and returns on the per-thread stack.

use crate::error::ErrorKind;
use crate::program::*;

use super::common::*;

/// Per-thread stack limit for device-function frames.
const MAX_STACK: u32 = 1 << 20;

impl Block<'_, '_> {
    pub(super) fn exec_call(
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

    pub(super) fn exec_ret(&mut self, wi: usize, pc: u32, exec: u32) -> Result<(), Fault> {
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
}
