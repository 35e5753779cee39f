//! The warp-wide path of shared-memory loads and stores: when every executing lane's
//! access lies in the block's shared memory, aligned and in bounds (checked once for
//! the warp), the lanes are race-checked and moved without the lane-by-lane
//! resolution. Anything else (a lane out of bounds or misaligned, a generic address
//! outside the shared window, counters on) takes the lane-by-lane path, which finds
//! and reports the exact failing lane: both paths give the same results and faults.

use crate::program::*;

use super::common::*;
use super::memory::{read_le, write_le};

impl Block<'_, '_> {
    /// The shared-memory offsets of the executing lanes' accesses of `total` bytes when
    /// all are shared, aligned and in bounds; `None` otherwise (and with counters on,
    /// whose bookkeeping the lane-by-lane path does).
    #[inline(always)]
    pub(super) fn shared_offsets(
        &self,
        wi: usize,
        exec: u32,
        space: MemSpace,
        addr: Addr,
        total: u32,
    ) -> Option<[u32; 32]> {
        if exec == 0 || self.stats.tally.is_some() {
            return None;
        }
        let base = match space {
            MemSpace::Shared => 0,
            MemSpace::Generic => SHARED_WINDOW,
            _ => return None,
        };
        let addrs = Self::lane_addrs(&self.warps[wi], addr);
        let mut offs = [0u32; 32];
        let (mut hi, mut or) = (0u64, 0u64);
        if exec == FULL {
            // Every lane: plain reductions, which vectorise.
            for (o, &a) in offs.iter_mut().zip(&addrs) {
                // Outside the generic window the offset wraps far past any shared size.
                let off = a.wrapping_sub(base);
                hi = hi.max(off);
                or |= off;
                *o = off as u32;
            }
        } else {
            for (l, &a) in addrs.iter().enumerate() {
                let off = a.wrapping_sub(base);
                let on = (exec >> l) & 1 == 1;
                hi = if on { hi.max(off) } else { hi };
                or |= if on { off } else { 0 };
                offs[l] = off as u32;
            }
        }
        let size = u64::from(self.ctx.shared_size);
        let t = u64::from(total);
        if or & (t - 1) != 0 || hi >= size || t > size - hi {
            return None;
        }
        Some(offs)
    }

    /// Race-checks the lanes' accesses in lane order (the lane-by-lane path's order, so
    /// the first race found is the same), by the warp-level path
    /// ([`Race::access_warp`](super::common::Race)).
    #[inline(always)]
    fn race_lanes(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        offs: &[u32; 32],
        total: u32,
        write: bool,
    ) -> Result<(), Fault> {
        let Some(r) = self.race.as_deref_mut() else {
            return Ok(());
        };
        match r.access_warp(offs, exec, total, wi, pc, write) {
            Ok(()) => Ok(()),
            Err((l, (kind, other))) => {
                Err(self.race_fault(wi, l, u64::from(offs[l as usize]), kind, other))
            }
        }
    }

    /// A shared load of `n` values of `size` bytes per lane at checked offsets.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn shared_ld(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        offs: &[u32; 32],
        size: u32,
        sext: bool,
        n: u8,
        dsts: &[u32; 8],
    ) -> Result<(), Fault> {
        self.race_lanes(wi, pc, exec, offs, size * u32::from(n), false)?;
        let sh = &self.shared[..];
        let regs = &mut self.warps[wi].regs;
        let bits = 64 - 8 * size;
        let ext = |v: u64| {
            if sext {
                (((v << bits) as i64) >> bits) as u64
            } else {
                v
            }
        };
        // A broadcast (every lane the same address) reads each value once.
        let broadcast = exec == FULL && offs.iter().all(|&o| o == offs[0]);
        for (k, &d) in dsts.iter().enumerate().take(usize::from(n)) {
            if d == SINK {
                continue;
            }
            let dst = &mut regs[d as usize];
            let off = k * size as usize;
            if broadcast {
                *dst = [ext(read_le(sh, offs[0] as usize + off, size as usize)); 32];
                continue;
            }
            match size {
                1 => read_lanes::<1>(sh, offs, off, exec, &ext, dst),
                2 => read_lanes::<2>(sh, offs, off, exec, &ext, dst),
                4 => read_lanes::<4>(sh, offs, off, exec, &ext, dst),
                _ => read_lanes::<8>(sh, offs, off, exec, &ext, dst),
            }
        }
        Ok(())
    }

    /// A shared store of `n` values of `size` bytes per lane at checked offsets.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn shared_st(
        &mut self,
        wi: usize,
        pc: u32,
        exec: u32,
        offs: &[u32; 32],
        size: u32,
        n: u8,
        srcs: &[u32; 8],
    ) -> Result<(), Fault> {
        self.race_lanes(wi, pc, exec, offs, size * u32::from(n), true)?;
        let regs = &self.warps[wi].regs;
        let sh = &mut self.shared[..];
        match (size, n) {
            (4, 1) => write_lanes_at::<4>(sh, regs, offs, exec, 1, srcs),
            (8, 1) => write_lanes_at::<8>(sh, regs, offs, exec, 1, srcs),
            (1, _) => write_lanes_at::<1>(sh, regs, offs, exec, n, srcs),
            (2, _) => write_lanes_at::<2>(sh, regs, offs, exec, n, srcs),
            (4, _) => write_lanes_at::<4>(sh, regs, offs, exec, n, srcs),
            _ => write_lanes_at::<8>(sh, regs, offs, exec, n, srcs),
        }
        Ok(())
    }
}

/// `dst[l] = ext(shared[offs[l] + off])` (`S` bytes) in the lanes of `exec`, the width
/// a constant (the offsets were checked for the warp).
#[inline(always)]
fn read_lanes<const S: usize>(
    sh: &[u8],
    offs: &[u32; 32],
    off: usize,
    exec: u32,
    ext: &impl Fn(u64) -> u64,
    dst: &mut [u64; 32],
) {
    if exec == FULL {
        for (d, &o) in dst.iter_mut().zip(offs) {
            *d = ext(read_le(sh, o as usize + off, S));
        }
    } else {
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            dst[l] = ext(read_le(sh, offs[l] as usize + off, S));
        }
    }
}

/// Writes `n` values of `S` bytes per lane of `exec` from `regs[srcs[k]]` at
/// `offs[l] + k*S`, in lane order, then value order (as the lane-by-lane path: two
/// lanes storing the same bytes is a race, found before unless racecheck is off; the
/// last lane wins).
#[inline(always)]
fn write_lanes_at<const S: usize>(
    sh: &mut [u8],
    regs: &[[u64; 32]],
    offs: &[u32; 32],
    exec: u32,
    n: u8,
    srcs: &[u32; 8],
) {
    let mut m = exec;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        for (k, &s) in srcs.iter().enumerate().take(usize::from(n)) {
            write_le(sh, offs[l] as usize + k * S, S, regs[s as usize][l]);
        }
    }
}
