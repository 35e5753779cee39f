//! The pool and lifetime model test: random sequences of alloc, upload, view, view_as,
//! clone, drop, budget changes, release and on/off switches, on two kits driven from two
//! threads (which kit runs on which thread alternates every step, so kits and buffers
//! cross threads), checked after every step against an exact model of the pool.
//!
//! This file holds a single test on purpose: the process-wide counters are shared by
//! every kit in the process, so no other test may allocate while it runs.

use gpukit::prelude::*;
use gpukit::{POOL_GRANULE, PoolStats, pool_blocks, pool_idle_bytes};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Alloc(usize),
    Upload(usize),
    View(usize),
    ViewAs(usize),
    Clone(usize),
    Drop(usize),
    Budget(usize),
    Release,
    Enable(bool),
    KitClone,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..320).prop_map(Op::Alloc),
        2 => (0usize..320).prop_map(Op::Upload),
        2 => any::<usize>().prop_map(Op::View),
        2 => any::<usize>().prop_map(Op::ViewAs),
        1 => any::<usize>().prop_map(Op::Clone),
        5 => any::<usize>().prop_map(Op::Drop),
        1 => prop_oneof![Just(0usize), Just(256), Just(1024), Just(4096)].prop_map(Op::Budget),
        1 => Just(Op::Release),
        1 => any::<bool>().prop_map(Op::Enable),
        1 => Just(Op::KitClone),
    ]
}

/// One block as the model sees it.
#[derive(Debug)]
struct MBlock {
    class: usize,
    holders: usize,
    idle: bool,
    stamp: u64,
    /// The device address of the block: reuse must hand out exactly this one.
    ptr: u64,
}

/// One kit, its live handles (buffer, model block index, data it must hold) and the
/// model of its pool.
struct World {
    kits: Vec<Kit>,
    handles: Vec<(Buf, usize, Option<Vec<f32>>)>,
    blocks: Vec<Option<MBlock>>,
    enabled: bool,
    budget: usize,
    clock: u64,
}

fn class(bytes: usize) -> usize {
    bytes.max(1).next_multiple_of(POOL_GRANULE)
}

impl World {
    fn new() -> World {
        World {
            kits: vec![Kit::cpu().unwrap()],
            handles: Vec::new(),
            blocks: Vec::new(),
            enabled: true,
            budget: 0,
            clock: 0,
        }
    }

    fn kit(&self, pick: usize) -> &Kit {
        &self.kits[pick % self.kits.len()]
    }

    fn model_acquire(&mut self, bytes: usize, ptr: u64) -> usize {
        let c = class(bytes);
        if self.enabled {
            let best = self
                .blocks
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.as_ref().map(|b| (i, b)))
                .filter(|(_, b)| b.idle && b.class == c)
                .max_by_key(|(_, b)| b.stamp)
                .map(|(i, _)| i);
            if let Some(i) = best {
                let b = self.blocks[i].as_mut().unwrap();
                b.idle = false;
                b.holders = 1;
                assert_eq!(
                    b.ptr, ptr,
                    "the most recently returned block of the class is reused"
                );
                return i;
            }
        }
        self.blocks.push(Some(MBlock {
            class: c,
            holders: 1,
            idle: false,
            stamp: 0,
            ptr,
        }));
        self.blocks.len() - 1
    }

    fn trim(&mut self) {
        if self.budget == 0 {
            return;
        }
        while self.idle_bytes() > self.budget {
            let lru = self
                .blocks
                .iter()
                .enumerate()
                .filter_map(|(i, b)| b.as_ref().map(|b| (i, b)))
                .filter(|(_, b)| b.idle)
                .min_by_key(|(_, b)| b.stamp)
                .map(|(i, _)| i)
                .unwrap();
            self.blocks[lru] = None;
        }
    }

    fn release(&mut self) {
        for b in &mut self.blocks {
            if b.as_ref().is_some_and(|b| b.idle) {
                *b = None;
            }
        }
    }

    fn idle_bytes(&self) -> usize {
        self.blocks
            .iter()
            .flatten()
            .filter(|b| b.idle)
            .map(|b| b.class)
            .sum()
    }

    fn stats(&self) -> PoolStats {
        let live: Vec<&MBlock> = self.blocks.iter().flatten().collect();
        PoolStats {
            blocks: live.len(),
            in_use: live.iter().filter(|b| !b.idle).count(),
            idle_blocks: live.iter().filter(|b| b.idle).count(),
            idle_bytes: self.idle_bytes(),
            in_use_bytes: live.iter().filter(|b| !b.idle).map(|b| b.class).sum(),
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Alloc(n) | Op::Upload(n) => {
                let data: Vec<f32> = (0..n).map(|i| i as f32 - 7.5).collect();
                let buf = if matches!(op, Op::Upload(_)) {
                    self.kit(n).upload(&data).unwrap()
                } else {
                    self.kit(n).alloc(DType::F32, n).unwrap()
                };
                let blk = self.model_acquire(n * 4, buf.device_ptr().0);
                let known = matches!(op, Op::Upload(_)).then_some(data);
                self.handles.push((buf, blk, known));
            }
            Op::View(i) | Op::ViewAs(i) | Op::Clone(i) if !self.handles.is_empty() => {
                let (buf, blk, known) = &self.handles[i % self.handles.len()];
                let off = i % (buf.len() + 1);
                let n = (i / 7) % (buf.len() - off + 1);
                let (nb, nk) = match op {
                    Op::View(_) => (
                        buf.view(off, n).unwrap(),
                        known.as_ref().map(|d| d[off..off + n].to_vec()),
                    ),
                    Op::ViewAs(_) => (buf.view_as(off * 4, n, DType::I32).unwrap(), None),
                    _ => (buf.clone(), known.clone()),
                };
                let blk = *blk;
                self.blocks[blk].as_mut().unwrap().holders += 1;
                self.handles.push((nb, blk, nk));
            }
            Op::Drop(i) if !self.handles.is_empty() => {
                let (buf, blk, known) = self.handles.swap_remove(i % self.handles.len());
                if let Some(d) = known {
                    assert_eq!(
                        buf.download::<f32>().unwrap(),
                        d,
                        "data survives views and clones"
                    );
                }
                drop(buf);
                let b = self.blocks[blk].as_mut().unwrap();
                b.holders -= 1;
                if b.holders == 0 {
                    if self.enabled {
                        self.clock += 1;
                        b.idle = true;
                        b.stamp = self.clock;
                        self.trim();
                    } else {
                        self.blocks[blk] = None;
                    }
                }
            }
            Op::Budget(bytes) => {
                self.kits[0].set_pool_budget(bytes);
                self.budget = bytes;
                self.trim();
            }
            Op::Release => {
                self.kits[0].release_pool();
                self.release();
            }
            Op::Enable(on) => {
                self.kits[0].set_pool_enabled(on);
                self.enabled = on;
                if !on {
                    self.release();
                }
            }
            Op::KitClone => {
                let k = self.kits[0].clone();
                self.kits.push(k);
            }
            _ => {}
        }
        assert_eq!(self.kits[0].pool_stats(), self.stats(), "after {op:?}");
        assert_eq!(self.kits[0].pool_enabled(), self.enabled);
        assert_eq!(self.kits[0].pool_budget(), self.budget);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn pool_counters_are_exact_across_threads_and_kits(
        steps in proptest::collection::vec((op(), op()), 0..48),
        drop_kits_first in any::<bool>(),
    ) {
        assert_eq!(pool_blocks(), 0, "no pool rows before the case");
        let mut worlds = [World::new(), World::new()];
        for (step, (a, b)) in steps.iter().enumerate() {
            // Alternate which thread drives which kit, so kits and buffers cross threads.
            let (w0, w1) = worlds.split_at_mut(1);
            let (first, second) = if step % 2 == 0 { (&mut w0[0], &mut w1[0]) } else { (&mut w1[0], &mut w0[0]) };
            std::thread::scope(|s| {
                s.spawn(|| first.apply(a));
                s.spawn(|| second.apply(b));
            });
            let (m0, m1) = (worlds[0].stats(), worlds[1].stats());
            prop_assert_eq!(pool_blocks(), m0.blocks + m1.blocks);
            prop_assert_eq!(pool_idle_bytes(), m0.idle_bytes + m1.idle_bytes);
        }
        // Every owner goes, in either order: kits first (buffers keep them alive) or
        // buffers first. Either way nothing is left.
        for w in &mut worlds {
            if drop_kits_first {
                w.kits.clear();
                let bufs: Vec<Buf> = w.handles.drain(..).map(|h| h.0).collect();
                drop(bufs);
            } else {
                w.handles.clear();
                w.kits.clear();
            }
        }
        drop(worlds);
        prop_assert_eq!(pool_blocks(), 0);
        prop_assert_eq!(pool_idle_bytes(), 0);
    }
}
