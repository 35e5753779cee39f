//! Racecheck: shadow records of shared memory (per 4-byte word, per byte once a word is
//! accessed in part) and vector clocks per warp; an access is ordered if a barrier (or
//! program order in the same warp) separates it from the recorded one.

use crate::error::RaceKind;

use super::common::*;

/// A race: its kind and the recorded access it races with.
type Found = (RaceKind, Acc);

impl Race {
    /// Whether `rec` is ordered before an access by thread `tid` (its own thread's
    /// accesses always are).
    #[inline(always)]
    fn ordered(&self, rec: &Acc, tid: u32) -> bool {
        rec.tid() == tid || self.ordered_for_warp(rec, (tid / 32) as usize)
    }

    /// One record's check and update for an access `now` by thread `tid`: the new
    /// record, or the race.
    #[inline(always)]
    fn step(&self, old: Shadow, tid: u32, now: Acc, write: bool) -> Result<Shadow, Found> {
        let mut s = old;
        if s.epoch != self.epoch {
            s = Shadow {
                epoch: self.epoch,
                ..NO_SHADOW
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
            if self.ordered(&s.r1, tid) {
                s.r1 = now;
            } else {
                s.r2 = now;
            }
        }
        Ok(s)
    }

    /// Copies word `w`'s record to its four byte records, once per block.
    fn split_word(&mut self, w: usize) {
        if self.split[w] == self.epoch {
            return;
        }
        let rec = self.words[w];
        self.shadow[w * 4..w * 4 + 4].fill(rec);
        self.split[w] = self.epoch;
    }

    /// Checks and records an access of `len` bytes at `off` (in bounds: the caller
    /// checked) by thread `tid` at instruction `pc`; the first race found, bytes in
    /// address order.
    pub(super) fn access(
        &mut self,
        off: u32,
        len: u32,
        tid: u32,
        pc: u32,
        write: bool,
    ) -> Result<(), Found> {
        let now = Acc::new(tid, pc, self.clock[(tid / 32) as usize]);
        // Records of one access usually hold the same history (written together): a
        // record equal to the previous one gets the same outcome without the checks.
        let mut prev: Option<(Shadow, Shadow)> = None;
        let whole = off.is_multiple_of(4) && len.is_multiple_of(4);
        if !whole && len > 0 {
            for w in off / 4..=(off + len - 1) / 4 {
                if (w as usize) < self.words.len() {
                    self.split_word(w as usize);
                }
            }
        }
        let mut b = off;
        while b < off + len {
            let w = (b / 4) as usize;
            let Some(&word) = self.words.get(w) else {
                break;
            };
            if whole && self.split[w] != self.epoch {
                let new = match prev {
                    Some((po, pn)) if po == word => pn,
                    _ => self.step(word, tid, now, write)?,
                };
                self.words[w] = new;
                prev = Some((word, new));
                b += 4;
                continue;
            }
            let old = self.shadow[b as usize];
            let new = match prev {
                Some((po, pn)) if po == old => pn,
                _ => self.step(old, tid, now, write)?,
            };
            self.shadow[b as usize] = new;
            prev = Some((old, new));
            b += 1;
        }
        Ok(())
    }

    /// Whether `rec` is ordered before any access by a thread of warp `cw` that is not
    /// `rec`'s own thread.
    #[inline(always)]
    fn ordered_for_warp(&self, rec: &Acc, cw: usize) -> bool {
        if rec.tid() == NONE {
            return true;
        }
        let rw = (rec.tid() / 32) as usize;
        if rw == cw {
            rec.clock() < self.clock[cw]
        } else {
            rec.clock() <= self.vc[cw * self.n + rw]
        }
    }

    /// A read of `len` bytes at `off` by every thread `first..=last` of one warp that
    /// the caller runs in lane order (the same access by consecutive executing lanes):
    /// records only the first and last thread's reads when that gives exactly the
    /// records of reading thread by thread, which holds when no thread can race (each
    /// word's last write is ordered before the warp) and no later thread of the run is
    /// the word's first recorded reader (the other threads then only replace the
    /// second reader, and the last one's replacement stays). `None` when that does not
    /// hold (or a word is split), with nothing recorded: the caller reads thread by
    /// thread.
    pub(super) fn read_run(
        &mut self,
        off: u32,
        len: u32,
        first: u32,
        last: u32,
        pc: u32,
    ) -> Option<()> {
        if !off.is_multiple_of(4) || !len.is_multiple_of(4) {
            return None;
        }
        let cw = (first / 32) as usize;
        let (lo, hi) = ((off / 4) as usize, ((off + len) / 4) as usize);
        for w in lo..hi {
            let s = self.words.get(w)?;
            if self.split[w] == self.epoch {
                return None;
            }
            if s.epoch == self.epoch
                && (!self.ordered_for_warp(&s.w, cw) || (s.r1.tid() > first && s.r1.tid() <= last))
            {
                return None;
            }
        }
        // No thread of the run can race, so both accesses succeed.
        let both = self
            .access(off, len, first, pc, false)
            .and_then(|()| self.access(off, len, last, pc, false));
        debug_assert!(both.is_ok(), "a read run raced after its check");
        both.ok()
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
