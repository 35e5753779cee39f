//! The emulator's view of device memory: a table of live allocations over host memory
//! the caller owns. Every global access is checked against the table (bounds and
//! alignment) before the memory is touched, and then touched only through atomics with
//! `Relaxed` ordering, so even a racy kernel cannot cause undefined behaviour in Rust.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use crate::program::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};

/// One allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    base: u64,
    len: u64,
    read_only: bool,
}

/// The live device allocations a launch may access: `(base address, length)` ranges of
/// host memory, used as device pointers.
///
/// Build one per launch (or keep one updated) with [`GlobalMemory::insert`] for memory
/// you own, or [`GlobalMemory::insert_atomic`] for a borrowed atomic buffer. The
/// lifetime `'a` ties the table to the memory it describes.
#[derive(Debug, Default)]
pub struct GlobalMemory<'a> {
    regions: Vec<Region>,
    _memory: PhantomData<&'a [AtomicU8]>,
}

/// Why a range cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlapError {
    /// The rejected range's base address.
    pub base: u64,
    /// The rejected range's length.
    pub len: usize,
}

impl std::fmt::Display for OverlapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "allocation {:#x}+{} overlaps another allocation, wraps, or lies in an emulator address window",
            self.base, self.len
        )
    }
}

impl std::error::Error for OverlapError {}

fn in_window(a: u64) -> bool {
    [SHARED_WINDOW, LOCAL_WINDOW, PARAM_WINDOW]
        .iter()
        .any(|w| a >= *w && a - *w < WINDOW_SIZE)
}

impl<'a> GlobalMemory<'a> {
    /// An empty table.
    pub fn new() -> Self {
        GlobalMemory {
            regions: Vec::new(),
            _memory: PhantomData,
        }
    }

    /// Registers `len` bytes of host memory at `base` as a device allocation whose
    /// device address is `base`. Zero-length ranges are ignored.
    ///
    /// # Safety
    ///
    /// For the whole lifetime `'a`, `base..base + len` must be valid for reads and
    /// writes, must not be deallocated, and must not be accessed non-atomically by
    /// anyone while a launch using this table runs (the emulator accesses it with
    /// relaxed atomics of 1, 2, 4 and 8 bytes at naturally aligned addresses).
    pub unsafe fn insert(&mut self, base: u64, len: usize) -> Result<(), OverlapError> {
        self.insert_region(base, len, false)
    }

    /// Registers many `(base, len)` ranges at once (sorting once: use this rather than
    /// repeated [`GlobalMemory::insert`] when a launch sees many allocations).
    /// Zero-length ranges are ignored; on an overlap nothing is added.
    ///
    /// # Safety
    ///
    /// As [`GlobalMemory::insert`], for every range.
    pub unsafe fn insert_many(
        &mut self,
        ranges: impl IntoIterator<Item = (u64, usize)>,
    ) -> Result<(), OverlapError> {
        let mut all = self.regions.clone();
        for (base, len) in ranges {
            if len == 0 {
                continue;
            }
            let err = OverlapError { base, len };
            let end = base.checked_add(len as u64).ok_or_else(|| err.clone())?;
            if in_window(base) || in_window(end - 1) || base == 0 {
                return Err(err);
            }
            all.push(Region {
                base,
                len: len as u64,
                read_only: false,
            });
        }
        all.sort_unstable_by_key(|r| r.base);
        for w in all.windows(2) {
            if w[0].base + w[0].len > w[1].base {
                return Err(OverlapError {
                    base: w[1].base,
                    len: w[1].len as usize,
                });
            }
        }
        self.regions = all;
        Ok(())
    }

    /// Registers a borrowed buffer of atomics (always sound: it is only ever accessed
    /// atomically) and returns its device address.
    pub fn insert_atomic(&mut self, buf: &'a [AtomicU64]) -> Result<u64, OverlapError> {
        let base = buf.as_ptr() as u64;
        self.insert_region(base, std::mem::size_of_val(buf), false)?;
        Ok(base)
    }

    /// Registers a module's read-only (`.const`) variable storage.
    pub(crate) fn insert_const(&mut self, buf: &'a [AtomicU64]) -> Result<u64, OverlapError> {
        let base = buf.as_ptr() as u64;
        self.insert_region(base, std::mem::size_of_val(buf), true)?;
        Ok(base)
    }

    fn insert_region(
        &mut self,
        base: u64,
        len: usize,
        read_only: bool,
    ) -> Result<(), OverlapError> {
        if len == 0 {
            return Ok(());
        }
        let err = OverlapError { base, len };
        let len64 = len as u64;
        let end = base.checked_add(len64).ok_or_else(|| err.clone())?;
        if in_window(base) || in_window(end - 1) || base == 0 {
            return Err(err);
        }
        let i = self.regions.partition_point(|r| r.base < base);
        if let Some(prev) = i.checked_sub(1).and_then(|p| self.regions.get(p))
            && prev.base + prev.len > base
        {
            return Err(err);
        }
        if let Some(next) = self.regions.get(i)
            && next.base < end
        {
            return Err(err);
        }
        self.regions.insert(
            i,
            Region {
                base,
                len: len64,
                read_only,
            },
        );
        Ok(())
    }

    /// Number of registered allocations.
    pub fn len(&self) -> usize {
        self.regions.len()
    }

    /// Whether no allocation is registered.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// Merges another table's regions (the module's variables) into a launch view.
    pub(crate) fn with_extra(
        &self,
        extra: &GlobalMemory<'a>,
    ) -> Result<GlobalMemory<'a>, OverlapError> {
        let mut out = GlobalMemory {
            regions: self.regions.clone(),
            _memory: PhantomData,
        };
        for r in &extra.regions {
            out.insert_region(r.base, r.len as usize, r.read_only)?;
        }
        Ok(out)
    }

    /// Checks an access of `size` bytes at `addr`: `Ok(read_only)` when it lies inside
    /// one allocation, `Err(())` otherwise.
    #[inline]
    pub(crate) fn check(&self, addr: u64, size: u64) -> Result<bool, ()> {
        let i = self.regions.partition_point(|r| r.base <= addr);
        let r = match i.checked_sub(1).and_then(|p| self.regions.get(p)) {
            Some(r) => r,
            None => return Err(()),
        };
        let off = addr - r.base;
        if off < r.len && size <= r.len - off {
            Ok(r.read_only)
        } else {
            Err(())
        }
    }

    /// A reference to the atomic of type `T` at `addr`.
    ///
    /// Callers must have checked with [`GlobalMemory::check`] that
    /// `addr..addr + size_of::<T>()` lies inside one allocation, and that `addr` is a
    /// multiple of `size_of::<T>()`.
    #[inline]
    fn cell<T: Atomic>(&self, addr: u64) -> &'a T {
        debug_assert!(self.check(addr, std::mem::size_of::<T>() as u64).is_ok());
        debug_assert_eq!(addr % std::mem::size_of::<T>() as u64, 0);
        // SAFETY: the caller checked that the address range lies inside one registered
        // allocation, which `insert`'s contract (or the `&'a [AtomicU64]` borrow of
        // `insert_atomic`) keeps valid for reads and writes for `'a`, and that it is
        // aligned to the size of `T`, which for these atomic types equals their
        // alignment. All accesses to the memory are atomic, so no data race can occur.
        unsafe { &*(addr as *const T) }
    }

    /// Loads `size` (1, 2, 4 or 8) bytes at a checked, aligned address.
    #[inline]
    pub(crate) fn load(&self, addr: u64, size: u32) -> u64 {
        match size {
            1 => u64::from(self.cell::<AtomicU8>(addr).load(Ordering::Relaxed)),
            2 => u64::from(self.cell::<AtomicU16>(addr).load(Ordering::Relaxed)),
            4 => u64::from(self.cell::<AtomicU32>(addr).load(Ordering::Relaxed)),
            _ => self.cell::<AtomicU64>(addr).load(Ordering::Relaxed),
        }
    }

    /// Stores `size` (1, 2, 4 or 8) bytes at a checked, aligned address.
    #[inline]
    pub(crate) fn store(&self, addr: u64, size: u32, v: u64) {
        match size {
            1 => self
                .cell::<AtomicU8>(addr)
                .store(v as u8, Ordering::Relaxed),
            2 => self
                .cell::<AtomicU16>(addr)
                .store(v as u16, Ordering::Relaxed),
            4 => self
                .cell::<AtomicU32>(addr)
                .store(v as u32, Ordering::Relaxed),
            _ => self.cell::<AtomicU64>(addr).store(v, Ordering::Relaxed),
        }
    }

    /// Atomically replaces the `size`-byte value at a checked, aligned address with
    /// `f(old)` (a compare-and-swap loop) and returns the old value. `f` returning
    /// `None` leaves memory unchanged.
    pub(crate) fn rmw(&self, addr: u64, size: u32, f: &mut dyn FnMut(u64) -> Option<u64>) -> u64 {
        match size {
            2 => {
                let c = self.cell::<AtomicU16>(addr);
                let mut old = c.load(Ordering::Relaxed);
                loop {
                    let Some(new) = f(u64::from(old)) else {
                        return u64::from(old);
                    };
                    match c.compare_exchange_weak(
                        old,
                        new as u16,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return u64::from(old),
                        Err(o) => old = o,
                    }
                }
            }
            4 => {
                let c = self.cell::<AtomicU32>(addr);
                let mut old = c.load(Ordering::Relaxed);
                loop {
                    let Some(new) = f(u64::from(old)) else {
                        return u64::from(old);
                    };
                    match c.compare_exchange_weak(
                        old,
                        new as u32,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return u64::from(old),
                        Err(o) => old = o,
                    }
                }
            }
            _ => {
                let c = self.cell::<AtomicU64>(addr);
                let mut old = c.load(Ordering::Relaxed);
                loop {
                    let Some(new) = f(old) else {
                        return old;
                    };
                    match c.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed) {
                        Ok(_) => return old,
                        Err(o) => old = o,
                    }
                }
            }
        }
    }
}

/// The atomic integer types the emulator reads and writes.
trait Atomic {}
impl Atomic for AtomicU8 {}
impl Atomic for AtomicU16 {}
impl Atomic for AtomicU32 {}
impl Atomic for AtomicU64 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_checks_bounds_and_overlaps() {
        let a: Vec<AtomicU64> = (0..4).map(AtomicU64::new).collect();
        let b: Vec<AtomicU64> = (0..2).map(AtomicU64::new).collect();
        let mut m = GlobalMemory::new();
        let pa = m.insert_atomic(&a).unwrap();
        let pb = m.insert_atomic(&b).unwrap();
        assert!(m.insert_atomic(&a).is_err());
        assert_eq!(m.check(pa, 32), Ok(false));
        assert!(m.check(pa + 1, 32).is_err());
        assert!(m.check(pa + 32, 1).is_err() || pa + 32 == pb);
        assert_eq!(m.load(pa + 8, 8), 1);
        m.store(pb + 8, 4, 0xdead_beef);
        assert_eq!(b[1].load(Ordering::Relaxed) & 0xffff_ffff, 0xdead_beef);
        assert!(m.check(8, 4).is_err());
        let c: Vec<AtomicU64> = (0..2).map(AtomicU64::new).collect();
        let pc = c.as_ptr() as u64;
        // SAFETY: `c` outlives `m` and is only accessed atomically.
        unsafe { m.insert_many([(pc, 16), (pc + 16, 0)]) }.unwrap();
        assert_eq!(m.check(pc, 16), Ok(false));
        // SAFETY: rejected (overlap), nothing is registered.
        assert!(unsafe { m.insert_many([(pc + 8, 8)]) }.is_err());
        assert_eq!(m.len(), 3);
        let old = m.rmw(pa, 8, &mut |v| Some(v + 5));
        assert_eq!(old, 0);
        assert_eq!(m.load(pa, 8), 5);
    }
}
