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

    /// [`Race::access`] for the lanes of `exec` of warp `cw`, each accessing `len` bytes
    /// at its offset (in bounds: the caller checked), in lane order, with the warp's
    /// clocks read once and the checks inlined ([`lean_step`]): the same records and
    /// the same first race as lane-by-lane [`Race::access`]. Whole-word accesses of
    /// unsplit words step the word records; a partial access splits its words (as
    /// `access` does) and steps their byte records; a whole access touching a split
    /// word takes `access` itself. The error names the racing lane.
    #[inline(always)]
    pub(super) fn access_warp(
        &mut self,
        offs: &[u32; 32],
        exec: u32,
        len: u32,
        cw: usize,
        pc: u32,
        write: bool,
    ) -> Result<(), (u32, Found)> {
        let epoch = self.epoch;
        let my_clock = self.clock[cw];
        let n = self.n;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let tid = cw as u32 * 32 + l;
            let off = offs[l as usize];
            let now = Acc::new(tid, pc, my_clock);
            let lo = (off / 4) as usize;
            if off.is_multiple_of(4) && len.is_multiple_of(4) {
                let hi = (lo + (len / 4) as usize).min(self.words.len());
                let mut split = false;
                for w in lo..hi {
                    split |= self.split[w] == epoch;
                }
                if split {
                    self.access(off, len, tid, pc, write).map_err(|e| (l, e))?;
                    continue;
                }
                let vc = &self.vc[cw * n..(cw + 1) * n];
                if !write {
                    // A run of executing lanes reading the same bytes (a broadcast).
                    let mut last = l;
                    while m != 0 && offs[m.trailing_zeros() as usize] == off {
                        last = m.trailing_zeros();
                        m &= m - 1;
                    }
                    if last != l {
                        let span = (tid, cw as u32 * 32 + last);
                        let done = read_run(
                            &mut self.words[lo..hi],
                            epoch,
                            span,
                            (now, Acc::new(span.1, pc, my_clock)),
                            cw,
                            my_clock,
                            vc,
                        );
                        if !done {
                            // Lane by lane: the run's other lanes go back.
                            let run = exec & ((((2u64 << last) - 1) & !((2u64 << l) - 1)) as u32);
                            m |= run;
                            for rec in &mut self.words[lo..hi] {
                                lean_step(rec, epoch, tid, now, cw, my_clock, vc, false)
                                    .map_err(|e| (l, e))?;
                            }
                        }
                        continue;
                    }
                }
                for rec in &mut self.words[lo..hi] {
                    lean_step(rec, epoch, tid, now, cw, my_clock, vc, write).map_err(|e| (l, e))?;
                }
            } else {
                for w in lo..=((off + len - 1) / 4) as usize {
                    if w < self.words.len() {
                        self.split_word(w);
                    }
                }
                // Bytes past the last word (never, for a checked access) stop the walk,
                // as in `access`.
                let end = (off + len).min(self.words.len() as u32 * 4) as usize;
                let vc = &self.vc[cw * n..(cw + 1) * n];
                for rec in &mut self.shadow[off as usize..end.max(off as usize)] {
                    lean_step(rec, epoch, tid, now, cw, my_clock, vc, write).map_err(|e| (l, e))?;
                }
            }
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

/// Whether `a` is ordered before an access by a thread of warp `cw` other than `a`'s
/// own, the warp's clock being `my_clock` and its vector-clock row `vc`
/// ([`Race::ordered_for_warp`] with those at hand).
#[inline(always)]
fn ordered_other(a: Acc, cw: usize, my_clock: u32, vc: &[u32]) -> bool {
    let t = a.tid();
    if t == NONE {
        return true;
    }
    let rw = (t / 32) as usize;
    if rw == cw {
        a.clock() < my_clock
    } else {
        a.clock() <= vc[rw]
    }
}

/// The reads of `recs` (whole, unsplit words) by the threads `span.0..=span.1` of warp
/// `cw`, in order, at the accesses `nows` (the first and last thread's). A record is
/// ordered for a thread when it is the thread's own or ordered for any other thread
/// of the warp; so when the last write is ordered for other threads it is for every
/// thread of the span, and the first reader's outcome is the same for every thread
/// unless it is a thread of the span and not ordered for the others. Then
/// thread-by-thread reads leave exactly the records set here (the first reader, if
/// ordered, replaced by the first thread, the second reader by the last) and the
/// result is `true`; otherwise `false`, nothing changed: the caller reads thread by
/// thread, which finds any race.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn read_run(
    recs: &mut [Shadow],
    epoch: u32,
    span: (u32, u32),
    nows: (Acc, Acc),
    cw: usize,
    my_clock: u32,
    vc: &[u32],
) -> bool {
    let in_span = |a: Acc| (span.0..=span.1).contains(&a.tid());
    // Ordered for the threads of the span other than `a`'s own.
    let ord = |a: Acc| ordered_other(a, cw, my_clock, vc);
    for rec in recs.iter() {
        if rec.epoch == epoch && (!ord(rec.w) || (in_span(rec.r1) && !ord(rec.r1))) {
            return false;
        }
    }
    for rec in recs.iter_mut() {
        if rec.epoch != epoch {
            *rec = Shadow {
                epoch,
                w: NO_ACC,
                r1: nows.0,
                r2: nows.1,
            };
        } else if ord(rec.r1) {
            rec.r1 = nows.0;
            rec.r2 = nows.1;
        } else {
            rec.r2 = nows.1;
        }
    }
    true
}

/// [`Race::step`] on a record in place, for thread `tid` of warp `cw` with the warp's
/// clock `my_clock` and vector-clock row `vc` at hand: the same new record or race.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn lean_step(
    rec: &mut Shadow,
    epoch: u32,
    tid: u32,
    now: Acc,
    cw: usize,
    my_clock: u32,
    vc: &[u32],
    write: bool,
) -> Result<(), Found> {
    // `Race::ordered` for this thread.
    let ord = |a: Acc| a.tid() == tid || ordered_other(a, cw, my_clock, vc);
    if rec.epoch != epoch {
        *rec = Shadow {
            epoch,
            w: if write { now } else { NO_ACC },
            r1: if write { NO_ACC } else { now },
            r2: NO_ACC,
        };
    } else if write {
        if !ord(rec.w) {
            return Err((RaceKind::WriteAfterWrite, rec.w));
        }
        if !ord(rec.r1) {
            return Err((RaceKind::WriteAfterRead, rec.r1));
        }
        if !ord(rec.r2) {
            return Err((RaceKind::WriteAfterRead, rec.r2));
        }
        rec.w = now;
        rec.r1 = NO_ACC;
        rec.r2 = NO_ACC;
    } else {
        if !ord(rec.w) {
            return Err((RaceKind::ReadAfterWrite, rec.w));
        }
        if ord(rec.r1) {
            rec.r1 = now;
        } else {
            rec.r2 = now;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block's racecheck state: `warps` warps, `bytes` of shared memory.
    fn race(warps: usize, bytes: usize) -> Race {
        let words = bytes.div_ceil(4);
        Race {
            shadow: vec![NO_SHADOW; words * 4],
            words: vec![NO_SHADOW; words],
            split: vec![0; words],
            epoch: 1,
            clock: vec![1; warps],
            vc: vec![0; warps * warps],
            n: warps,
        }
    }

    /// The warp-level path records exactly what lane-by-lane `access` records and finds
    /// the same first race (lane and kind and the recorded access), over random
    /// sequences of 1-, 2-, 4- and 8-byte reads and writes by random lane sets of
    /// three warps, with barriers, warp clock steps and new blocks (epochs) between.
    #[test]
    fn warp_path_matches_lane_by_lane() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (warps, bytes) = (3usize, 64u32);
        for _case in 0..300 {
            let mut a = race(warps, bytes as usize);
            let mut b = a.clone();
            for step in 0..60u32 {
                match next() % 10 {
                    0 => {
                        let all: Vec<usize> = (0..warps).collect();
                        a.barrier(&all);
                        b.barrier(&all);
                    }
                    1 => {
                        let w = (next() % warps as u64) as usize;
                        a.clock[w] += 1;
                        b.clock[w] += 1;
                    }
                    2 if next() % 4 == 0 => {
                        a.epoch += 1;
                        b.epoch += 1;
                    }
                    _ => {
                        let len = 1u32 << (next() % 4);
                        let cw = (next() % warps as u64) as usize;
                        let exec = match next() % 3 {
                            0 => u32::MAX,
                            1 => next() as u32,
                            _ => 1 << (next() % 32),
                        };
                        // Mostly few distinct addresses, so lanes and warps collide.
                        let slots = bytes / len;
                        let pick = (next() % 3) as u32;
                        let offs: [u32; 32] = std::array::from_fn(|l| {
                            let k = match pick {
                                0 => l as u32 % slots,
                                1 => (next() % 4) as u32 % slots,
                                _ => (next() % u64::from(slots)) as u32,
                            };
                            k * len
                        });
                        let write = next() % 2 == 0;
                        let got = a.access_warp(&offs, exec, len, cw, step, write);
                        let mut want = Ok(());
                        let mut m = exec;
                        while m != 0 {
                            let l = m.trailing_zeros();
                            m &= m - 1;
                            let tid = cw as u32 * 32 + l;
                            if let Err(e) = b.access(offs[l as usize], len, tid, step, write) {
                                want = Err((l, e));
                                break;
                            }
                        }
                        assert_eq!(got, want, "step {step}");
                    }
                }
                assert_eq!(a.words, b.words, "step {step}");
                assert_eq!(a.split, b.split, "step {step}");
                for (w, &sp) in a.split.iter().enumerate() {
                    if sp == a.epoch {
                        assert_eq!(a.shadow[w * 4..w * 4 + 4], b.shadow[w * 4..w * 4 + 4]);
                    }
                }
            }
        }
    }
}
