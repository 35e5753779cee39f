//! Memory instructions: address resolution and memcheck, loads, stores, `cp.async` and
//! atomics (with the global fast path), and racecheck of shared accesses.

use crate::alu::{self, Lanes, lanes};
use crate::error::{ErrorKind, InstrRef, RaceKind, Space};
use crate::memory::GlobalMemory;
use crate::program::*;

use super::common::*;
use crate::counters::{Access, InstClass};

fn space_of(r: Res) -> Space {
    match r {
        Res::Global => Space::Global,
        Res::Const => Space::Const,
        Res::Shared => Space::Shared,
        Res::Local => Space::Local,
        Res::Param => Space::Param,
    }
}

#[inline(always)]
pub(super) fn read_le(buf: &[u8], off: usize, size: usize) -> u64 {
    match size {
        4 => u64::from(u32::from_le_bytes(
            buf[off..off + 4].try_into().expect("4 bytes"),
        )),
        8 => u64::from_le_bytes(buf[off..off + 8].try_into().expect("8 bytes")),
        2 => u64::from(u16::from_le_bytes(
            buf[off..off + 2].try_into().expect("2 bytes"),
        )),
        1 => u64::from(buf[off]),
        _ => {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&buf[off..off + size]);
            u64::from_le_bytes(b)
        }
    }
}

/// Writes the low `size` bytes of `v` at `off` (the common sizes as one fixed-size
/// store each, not a `memcpy` of a run-time length).
#[inline(always)]
pub(super) fn write_le(buf: &mut [u8], off: usize, size: usize, v: u64) {
    match size {
        4 => buf[off..off + 4].copy_from_slice(&(v as u32).to_le_bytes()),
        8 => buf[off..off + 8].copy_from_slice(&v.to_le_bytes()),
        2 => buf[off..off + 2].copy_from_slice(&(v as u16).to_le_bytes()),
        1 => buf[off] = v as u8,
        _ => buf[off..off + size].copy_from_slice(&v.to_le_bytes()[..size]),
    }
}

impl Block<'_, '_> {
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
                        return Err(self.race_fault(wi, lane, off, kind, other));
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

    /// The fault of a shared-memory race found at `lane`'s access of `off`.
    pub(super) fn race_fault(
        &self,
        wi: usize,
        lane: u32,
        off: u64,
        kind: RaceKind,
        other: Acc,
    ) -> Fault {
        let ow = (other.tid() / 32) as usize;
        let ol = other.tid() % 32;
        fault(
            ErrorKind::SharedRace {
                kind,
                other_thread: self.tid_of(ow, ol),
                other_instruction: other
                    .pc()
                    .and_then(|pc| self.instr(pc))
                    .unwrap_or(InstrRef {
                        text: String::new(),
                        line: 0,
                    }),
            },
            wi,
            Some(lane),
            Some(off),
        )
    }

    /// Every lane's address (inactive lanes' too: callers use the executing ones), the
    /// addressing mode chosen once. Computed before any lane's result is written, which
    /// only changes that lane's registers.
    #[inline(always)]
    pub(super) fn lane_addrs(w: &Warp, addr: Addr) -> [u64; 32] {
        match addr {
            Addr::Reg(r, off) => {
                let v = &w.regs[r as usize];
                lanes(|l| v[l].wrapping_add(off as u64))
            }
            Addr::Reg32(r, off) => {
                let v = &w.regs[r as usize];
                lanes(|l| u64::from((v[l] as u32).wrapping_add(off as u32)))
            }
            Addr::Abs(a) => [a; 32],
            Addr::Frame(o) => lanes(|l| u64::from(w.frame_base[l]) + u64::from(o)),
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
    #[inline(always)]
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
        let addrs = Self::lane_addrs(&self.warps[wi], addr);
        let (mut lo, mut hi, mut or) = (u64::MAX, 0u64, 0u64);
        if exec == FULL {
            // Every lane: plain reductions, which vectorise.
            for &a in &addrs {
                lo = lo.min(a);
                hi = hi.max(a);
                or |= a;
            }
        } else {
            for (l, &a) in addrs.iter().enumerate() {
                let on = (exec >> l) & 1 == 1;
                lo = if on { lo.min(a) } else { lo };
                hi = if on { hi.max(a) } else { hi };
                or |= if on { a } else { 0 };
            }
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

    /// A kernel-parameter load at a fixed address (the same for every lane): checked and
    /// read once, written to every executing lane. `false` (nothing done) when it is
    /// out of bounds or misaligned, or counters are on: the lane-by-lane path reports or
    /// counts it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn param_uniform(
        &mut self,
        wi: usize,
        exec: u32,
        a: u64,
        size: u32,
        total: u32,
        sext: bool,
        n: u8,
        dsts: &[u32; 8],
    ) -> bool {
        let off = a.wrapping_sub(PARAM_WINDOW);
        let len = self.ctx.params.len() as u64;
        let t = u64::from(total);
        if exec == 0
            || self.stats.tally.is_some()
            || off & (t - 1) != 0
            || off >= len
            || t > len - off
        {
            return false;
        }
        let bits = 64 - 8 * size;
        for (k, &d) in dsts.iter().enumerate().take(usize::from(n)) {
            let v = read_le(
                &self.ctx.params,
                off as usize + k * size as usize,
                size as usize,
            );
            let v = if sext {
                (((v << bits) as i64) >> bits) as u64
            } else {
                v
            };
            write_lanes(&mut self.warps[wi].regs, d, &[v; 32], exec);
        }
        true
    }

    /// Counts a fast-path access (every lane global, or every lane constant).
    fn tally_fast(
        &mut self,
        exec: u32,
        space: MemSpace,
        addrs: &[u64; 32],
        total: u32,
        store: bool,
    ) {
        let Some(t) = self.stats.tally.as_deref_mut() else {
            return;
        };
        let mut lanes = [(0u64, 0u32); 32];
        let mut k = 0;
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            lanes[k] = (addrs[l], total);
            k += 1;
        }
        if space == MemSpace::Const {
            t.class(InstClass::ParamConst, k as u64);
        } else {
            let kind = if store {
                Access::GlobalStore
            } else {
                Access::GlobalLoad
            };
            t.access(kind, &lanes[..k]);
        }
    }

    /// Counts a lane-by-lane access by the spaces its lanes resolved to (one request
    /// per space a warp touched).
    fn tally_seen(&mut self, seen: &Seen, space: MemSpace, store: bool) {
        let Some(t) = self.stats.tally.as_deref_mut() else {
            return;
        };
        if seen.lanes().is_empty() {
            // Every lane predicated off: a warp instruction, no request.
            let class = match (space, store) {
                (MemSpace::Shared, false) => InstClass::SharedLoad,
                (MemSpace::Shared, true) => InstClass::SharedStore,
                (MemSpace::Local, _) => InstClass::Local,
                (MemSpace::Const | MemSpace::KParam, _) => InstClass::ParamConst,
                (_, false) => InstClass::GlobalLoad,
                (_, true) => InstClass::GlobalStore,
            };
            t.class(class, 0);
            return;
        }
        for res in [Res::Global, Res::Shared, Res::Local, Res::Const, Res::Param] {
            let lanes: Vec<(u64, u32)> = seen
                .lanes()
                .iter()
                .filter(|(r, _, _)| *r == res)
                .map(|&(_, a, b)| (a, b))
                .collect();
            if lanes.is_empty() {
                continue;
            }
            match res {
                Res::Global => t.access(
                    if store {
                        Access::GlobalStore
                    } else {
                        Access::GlobalLoad
                    },
                    &lanes,
                ),
                Res::Shared => t.access(
                    if store {
                        Access::SharedStore
                    } else {
                        Access::SharedLoad
                    },
                    &lanes,
                ),
                Res::Local => {
                    t.class(InstClass::Local, lanes.len() as u64);
                    t.c.local_requests += 1;
                }
                Res::Const | Res::Param => t.class(InstClass::ParamConst, lanes.len() as u64),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn exec_ld(
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
        if let (MemSpace::KParam, Addr::Abs(a)) = (space, addr)
            && self.param_uniform(wi, exec, a, size, total, sext, n, dsts)
        {
            return Ok(());
        }
        if let Some(addrs) = self.global_fast_path(wi, exec, space, addr, total, false) {
            let mem = &self.ctx.mem;
            let regs = &mut self.warps[wi].regs;
            // One destination at a time (the addresses are already taken, and loads do
            // not interfere), the width a constant in each loop.
            for (k, &d) in dsts.iter().enumerate().take(usize::from(n)) {
                if d == SINK {
                    continue;
                }
                let dst = &mut regs[d as usize];
                let off = (k as u64) * u64::from(size);
                match size {
                    1 => load_lanes::<1>(mem, &addrs, off, exec, sext, dst),
                    2 => load_lanes::<2>(mem, &addrs, off, exec, sext, dst),
                    4 => load_lanes::<4>(mem, &addrs, off, exec, sext, dst),
                    _ => load_lanes::<8>(mem, &addrs, off, exec, sext, dst),
                }
            }
            self.tally_fast(exec, space, &addrs, total, false);
            return Ok(());
        }
        if let Some(offs) = self.shared_offsets(wi, exec, space, addr, total) {
            return self.shared_ld(wi, pc, exec, &offs, size, sext, n, dsts);
        }
        let mut seen = Seen::new(self.stats.tally.is_some());
        let addrs = Self::lane_addrs(&self.warps[wi], addr);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a = addrs[l as usize];
            let (res, off) = self.check_access(wi, pc, l, space, a, total, false)?;
            seen.push(res, off, total);
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
        self.tally_seen(&seen, space, false);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn exec_st(
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
            // Lane by lane, each lane's elements in order (lanes that overlap leave the
            // last lane's bytes, as the lane-by-lane path does); the width a constant.
            match (size, n) {
                (4, 1) => store_lanes::<4>(mem, regs, &addrs, exec, 1, srcs),
                (8, 1) => store_lanes::<8>(mem, regs, &addrs, exec, 1, srcs),
                (1, _) => store_lanes::<1>(mem, regs, &addrs, exec, n, srcs),
                (2, _) => store_lanes::<2>(mem, regs, &addrs, exec, n, srcs),
                (4, _) => store_lanes::<4>(mem, regs, &addrs, exec, n, srcs),
                _ => store_lanes::<8>(mem, regs, &addrs, exec, n, srcs),
            }
            self.tally_fast(exec, space, &addrs, total, true);
            return Ok(());
        }
        if let Some(offs) = self.shared_offsets(wi, exec, space, addr, total) {
            return self.shared_st(wi, pc, exec, &offs, size, n, srcs);
        }
        let mut seen = Seen::new(self.stats.tally.is_some());
        let addrs = Self::lane_addrs(&self.warps[wi], addr);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a = addrs[l as usize];
            let (res, off) = self.check_access(wi, pc, l, space, a, total, true)?;
            seen.push(res, off, total);
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
        self.tally_seen(&seen, space, true);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_cp_async(
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
        let on = self.stats.tally.is_some();
        let (mut src_seen, mut dst_seen) = (Seen::new(on), Seen::new(on));
        let (das, sas) = (
            Self::lane_addrs(&self.warps[wi], dst),
            Self::lane_addrs(&self.warps[wi], src),
        );
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let (da, sa) = (das[l as usize], sas[l as usize]);
            let (_, soff) = if n_src > 0 {
                self.check_access(wi, pc, l, MemSpace::Global, sa, size, false)?
            } else {
                (Res::Global, sa)
            };
            let (_, doff) = self.check_access(wi, pc, l, MemSpace::Shared, da, size, true)?;
            src_seen.push(Res::Global, soff, n_src);
            dst_seen.push(Res::Shared, doff, size);
            for k in 0..size {
                let v = if k < n_src {
                    self.ctx.mem.load(soff + u64::from(k), 1)
                } else {
                    0
                };
                self.shared[(doff + u64::from(k)) as usize] = v as u8;
            }
        }
        if let Some(t) = self.stats.tally.as_deref_mut() {
            // One async-copy instruction: its global reads (only lanes that read
            // bytes) and its shared writes.
            t.class(InstClass::AsyncCopy, u64::from(exec.count_ones()));
            let reads: Vec<(u64, u32)> = src_seen
                .lanes()
                .iter()
                .filter(|l| l.2 > 0)
                .map(|l| (l.1, l.2))
                .collect();
            t.traffic(Access::GlobalLoad, &reads);
            let writes: Vec<(u64, u32)> = dst_seen.lanes().iter().map(|l| (l.1, l.2)).collect();
            t.traffic(Access::SharedStore, &writes);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn exec_atom(
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
        let mut seen = Seen::new(self.stats.tally.is_some());
        let addrs = Self::lane_addrs(&self.warps[wi], addr);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let w = &self.warps[wi];
            let a = addrs[l as usize];
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
            seen.push(res, off, size);
        }
        if let Some(t) = self.stats.tally.as_deref_mut() {
            t.class(InstClass::Atomic, u64::from(exec.count_ones()));
            if exec != 0 {
                t.c.atomic_requests += 1;
            }
            let global: Vec<(u64, u32)> = seen
                .lanes()
                .iter()
                .filter(|l| l.0 == Res::Global)
                .map(|l| (l.1, l.2))
                .collect();
            t.touch(&global);
        }
        Ok(())
    }
}

/// The new value of an atomic location (`None`: unchanged).
/// `dst[l] = mem[addrs[l] + off]` (`S` bytes, sign-extended when `sext`) in the lanes of
/// `exec`; the addresses were checked by the warp's fast path.
#[inline(always)]
fn load_lanes<const S: u32>(
    mem: &GlobalMemory<'_>,
    addrs: &[u64; 32],
    off: u64,
    exec: u32,
    sext: bool,
    dst: &mut Lanes,
) {
    let sh = 64 - 8 * S;
    let ext = |v: u64| {
        if sext {
            (((v << sh) as i64) >> sh) as u64
        } else {
            v
        }
    };
    if exec == FULL {
        for (d, &a) in dst.iter_mut().zip(addrs) {
            *d = ext(mem.load(a + off, S));
        }
    } else {
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            dst[l] = ext(mem.load(addrs[l] + off, S));
        }
    }
}

/// Stores `n` elements of `S` bytes per lane of `exec` from `regs[srcs[k]]` at
/// `addrs[l] + k*S`, lane by lane; the addresses were checked by the warp's fast path.
#[inline(always)]
fn store_lanes<const S: u32>(
    mem: &GlobalMemory<'_>,
    regs: &[Lanes],
    addrs: &[u64; 32],
    exec: u32,
    n: u8,
    srcs: &[u32; 8],
) {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        for (k, &s) in srcs.iter().enumerate().take(usize::from(n)) {
            mem.store(addrs[l] + (k as u64) * u64::from(S), S, regs[s as usize][l]);
        }
    }
}

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

/// The resolved (space, offset, bytes) of each lane of a lane-by-lane access, kept only
/// when counters are on (no allocation otherwise).
pub(super) struct Seen {
    lanes: Option<Vec<(Res, u64, u32)>>,
}

impl Seen {
    pub(super) fn new(on: bool) -> Seen {
        Seen {
            lanes: on.then(|| Vec::with_capacity(32)),
        }
    }

    #[inline]
    pub(super) fn push(&mut self, res: Res, off: u64, bytes: u32) {
        if let Some(v) = self.lanes.as_mut() {
            v.push((res, off, bytes));
        }
    }

    /// The recorded lanes (empty when counters are off).
    pub(super) fn lanes(&self) -> &[(Res, u64, u32)] {
        self.lanes.as_deref().unwrap_or(&[])
    }
}
