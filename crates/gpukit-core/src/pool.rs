//! The device-memory pool: per kit, blocks in use and idle, reused by size class,
//! with an LRU-trimmed idle budget, and process-wide counters summing every kit.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{Buffer, Device, DevicePtr, Error, Result};

/// Blocks held by every kit's pool (in use or idle), process-wide.
static BLOCKS: AtomicUsize = AtomicUsize::new(0);
/// Idle bytes held by every kit's pool, process-wide.
static IDLE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Allocation granularity: requests are rounded up to a multiple of this, and an idle
/// block is reused only for a request of the same rounded size.
pub const POOL_GRANULE: usize = 256;

/// Blocks every kit's pool holds, in use or idle (process-wide).
pub fn pool_blocks() -> usize {
    BLOCKS.load(Ordering::SeqCst)
}

/// Bytes every kit's pool holds idle (process-wide).
pub fn pool_idle_bytes() -> usize {
    IDLE_BYTES.load(Ordering::SeqCst)
}

/// One kit's pool, as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStats {
    /// Blocks held, in use or idle.
    pub blocks: usize,
    /// Blocks handed out and not yet returned.
    pub in_use: usize,
    /// Blocks held idle.
    pub idle_blocks: usize,
    /// Bytes held idle.
    pub idle_bytes: usize,
    /// Bytes held in use (rounded sizes).
    pub in_use_bytes: usize,
}

struct Row {
    // Dropping the row drops the backend buffer, which frees the memory.
    buf: Box<dyn Buffer>,
    bytes: usize,
    in_use: bool,
    stamp: u64,
}

pub(crate) struct Pool {
    rows: Vec<Option<Row>>,
    free_slots: Vec<usize>,
    enabled: bool,
    budget: usize,
    clock: u64,
    stats: PoolStats,
}

/// Rounds a request to its size class. Errors on overflow.
pub(crate) fn size_class(bytes: usize) -> Result<usize> {
    bytes
        .max(1)
        .checked_next_multiple_of(POOL_GRANULE)
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("allocation of {bytes} bytes"),
        })
}

impl Pool {
    pub(crate) fn new() -> Pool {
        Pool {
            rows: Vec::new(),
            free_slots: Vec::new(),
            enabled: true,
            budget: 0,
            clock: 0,
            stats: PoolStats::default(),
        }
    }

    pub(crate) fn stats(&self) -> PoolStats {
        self.stats
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    pub(crate) fn budget(&self) -> usize {
        self.budget
    }

    /// Hands out a block of at least `bytes`: an idle one of the same class (the most
    /// recently returned, whose memory is warmest) or a new one from the device.
    pub(crate) fn acquire(
        &mut self,
        device: &dyn Device,
        bytes: usize,
    ) -> Result<(usize, DevicePtr)> {
        let class = size_class(bytes)?;
        if self.enabled {
            let best = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
                .filter(|(_, r)| !r.in_use && r.bytes == class)
                .max_by_key(|(_, r)| r.stamp)
                .map(|(i, _)| i);
            if let Some(i) = best {
                let row = self.rows[i].as_mut().expect("row just found");
                row.in_use = true;
                self.stats.idle_blocks -= 1;
                self.stats.idle_bytes -= class;
                self.stats.in_use += 1;
                self.stats.in_use_bytes += class;
                IDLE_BYTES.fetch_sub(class, Ordering::SeqCst);
                return Ok((i, row.buf.ptr()));
            }
        }
        let buf = match device.alloc(class) {
            Ok(b) => b,
            Err(Error::OutOfMemory { .. }) if self.stats.idle_blocks > 0 => {
                // Memory held idle may be what is missing: give it back and retry once.
                self.release_idle();
                device.alloc(class)?
            }
            Err(e) => return Err(e),
        };
        let ptr = buf.ptr();
        let row = Row {
            buf,
            bytes: class,
            in_use: true,
            stamp: 0,
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.rows[s] = Some(row);
                s
            }
            None => {
                self.rows.push(Some(row));
                self.rows.len() - 1
            }
        };
        self.stats.blocks += 1;
        self.stats.in_use += 1;
        self.stats.in_use_bytes += class;
        BLOCKS.fetch_add(1, Ordering::SeqCst);
        Ok((slot, ptr))
    }

    /// Takes a block back: idle (and trimmed to the budget) or freed when the pool is off.
    pub(crate) fn give(&mut self, slot: usize) {
        let Some(row) = self.rows.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        debug_assert!(row.in_use);
        let bytes = row.bytes;
        self.stats.in_use -= 1;
        self.stats.in_use_bytes -= bytes;
        if !self.enabled {
            self.remove(slot);
            return;
        }
        self.clock += 1;
        row.in_use = false;
        row.stamp = self.clock;
        self.stats.idle_blocks += 1;
        self.stats.idle_bytes += bytes;
        IDLE_BYTES.fetch_add(bytes, Ordering::SeqCst);
        self.trim();
    }

    /// Drops a row (in use rows are only removed by `give` with the pool off).
    fn remove(&mut self, slot: usize) {
        if let Some(row) = self.rows[slot].take() {
            if !row.in_use {
                self.stats.idle_blocks -= 1;
                self.stats.idle_bytes -= row.bytes;
                IDLE_BYTES.fetch_sub(row.bytes, Ordering::SeqCst);
            }
            self.stats.blocks -= 1;
            BLOCKS.fetch_sub(1, Ordering::SeqCst);
            self.free_slots.push(slot);
            drop(row);
        }
    }

    /// Frees least-recently-used idle blocks until the idle bytes fit the budget.
    fn trim(&mut self) {
        if self.budget == 0 {
            return;
        }
        while self.stats.idle_bytes > self.budget {
            let lru = self
                .rows
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
                .filter(|(_, r)| !r.in_use)
                .min_by_key(|(_, r)| r.stamp)
                .map(|(i, _)| i);
            match lru {
                Some(i) => self.remove(i),
                None => break,
            }
        }
    }

    pub(crate) fn set_budget(&mut self, bytes: usize) {
        self.budget = bytes;
        self.trim();
    }

    pub(crate) fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
        if !on {
            self.release_idle();
        }
    }

    /// Frees every idle block; blocks in use stay.
    pub(crate) fn release_idle(&mut self) {
        for i in 0..self.rows.len() {
            if self.rows[i].as_ref().is_some_and(|r| !r.in_use) {
                self.remove(i);
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A kit that goes takes its rows out of the process-wide counters; the rows'
        // buffers free their memory as the vector drops.
        BLOCKS.fetch_sub(self.stats.blocks, Ordering::SeqCst);
        IDLE_BYTES.fetch_sub(self.stats.idle_bytes, Ordering::SeqCst);
    }
}
