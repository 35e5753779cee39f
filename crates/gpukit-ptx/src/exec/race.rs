//! Racecheck: a shadow record per shared-memory byte and vector clocks per warp; an
//! access is ordered if a barrier (or program order in the same warp) separates it from
//! the recorded one.

use crate::error::RaceKind;

use super::common::*;

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

    pub(super) fn access(
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
        // The bytes of one access usually share their record (written together): a byte
        // whose record equals the previous byte's gets the same outcome without the checks.
        let mut prev: Option<(Shadow, Shadow)> = None;
        for b in off..off + len {
            let Some(slot) = self.shadow.get(b as usize) else {
                continue;
            };
            let old = *slot;
            if let Some((po, pn)) = prev
                && po == old
            {
                self.shadow[b as usize] = pn;
                continue;
            }
            let mut s = old;
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
            prev = Some((old, s));
        }
        Ok(())
    }

    pub(super) fn barrier(&mut self, participants: &[usize]) {
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
