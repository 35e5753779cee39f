//! Per-thread reusable scratch for the engine's packed panels and partial sums.
//!
//! A product's packed B block is megabytes: allocating it per call costs a zeroing
//! pass and, for fresh pages, a page fault per 4 KiB (together more than a third of a
//! 64-channel conv2d's time). Each thread keeps its largest buffer of each compute type
//! and lends it out again. The contents are stale but initialised values: every user
//! writes a region before reading it (the packers fill whole panels, padding included;
//! the first k-block stores its tiles without reading them).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::thread::LocalKey;

/// Compute types with a per-thread scratch slot.
pub(crate) trait ScratchReal: Copy + Default + 'static {
    /// This thread's slot.
    fn slot() -> &'static LocalKey<Cell<Vec<Self>>>;
}

thread_local! {
    static F32: Cell<Vec<f32>> = const { Cell::new(Vec::new()) };
    static F64: Cell<Vec<f64>> = const { Cell::new(Vec::new()) };
}

impl ScratchReal for f32 {
    fn slot() -> &'static LocalKey<Cell<Vec<f32>>> {
        &F32
    }
}
impl ScratchReal for f64 {
    fn slot() -> &'static LocalKey<Cell<Vec<f64>>> {
        &F64
    }
}

/// A buffer of `len` values borrowed from the thread's slot (or a fresh one when the
/// slot is already lent out); given back on drop, the larger of the two kept.
pub(crate) struct Scratch<R: ScratchReal> {
    v: Vec<R>,
    len: usize,
}

impl<R: ScratchReal> Scratch<R> {
    /// `len` values (stale contents, see the module docs); `None` when the memory
    /// cannot be had (the allocation is fallible: a huge `k` is an error, not an abort).
    pub(crate) fn try_new(len: usize) -> Option<Self> {
        let mut v = R::slot().with(Cell::take);
        if v.len() < len {
            if v.try_reserve_exact(len - v.len()).is_err() {
                // Give the slot's buffer back untouched.
                let _ = R::slot().try_with(|s| s.set(v));
                return None;
            }
            v.resize(len, R::default());
        }
        Some(Scratch { v, len })
    }
}

impl<R: ScratchReal> Deref for Scratch<R> {
    type Target = [R];
    fn deref(&self) -> &[R] {
        &self.v[..self.len]
    }
}

impl<R: ScratchReal> DerefMut for Scratch<R> {
    fn deref_mut(&mut self) -> &mut [R] {
        &mut self.v[..self.len]
    }
}

impl<R: ScratchReal> Drop for Scratch<R> {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.v);
        // `try_with`: during thread teardown the slot may be gone; then just free.
        let _ = R::slot().try_with(|s| {
            let cur = s.take();
            s.set(if cur.len() >= v.len() { cur } else { v });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_loans_are_distinct_and_the_larger_is_kept() {
        let mut a = Scratch::<f32>::try_new(100).unwrap();
        a[99] = 1.0;
        {
            // Lent out: a nested loan gets its own buffer.
            let mut b = Scratch::<f32>::try_new(10).unwrap();
            b[0] = 2.0;
            assert_eq!(a[99], 1.0);
        }
        drop(a);
        let c = Scratch::<f32>::try_new(50).unwrap();
        assert_eq!(c.len(), 50);
        assert!(c.v.len() >= 100, "the 100-value buffer is reused");
    }

    #[test]
    fn an_impossible_loan_is_none_and_keeps_the_slot() {
        drop(Scratch::<f64>::try_new(64).unwrap());
        assert!(Scratch::<f64>::try_new(usize::MAX / 8).is_none());
        let c = Scratch::<f64>::try_new(8).unwrap();
        assert!(c.v.len() >= 64, "the slot's buffer survives a failed loan");
    }
}
