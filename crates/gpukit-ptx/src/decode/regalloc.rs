//! Register compaction: NVRTC's PTX gives every value a register of its own (thousands in
//! a large kernel), and the interpreter keeps 32 lanes of every register per warp, so a
//! warp's register file would be hundreds of KiB, zeroed for every block and far
//! larger than the caches. This pass maps the registers onto as few slots as their live
//! ranges allow, with results identical to running the registers as declared:
//!
//! * Liveness is computed per instruction over the control-flow graph (a guarded write
//!   does not end a live range: lanes whose guard is false keep the old value). Each
//!   lane follows a path of that graph with registers of its own, so a register whose
//!   value is never read again can give its slot to another.
//! * A register's range is the hull (first to last instruction index) of the points
//!   where it is live, read or written; two registers share a slot only when their
//!   ranges are disjoint (greedy interval colouring, optimal for intervals).
//! * A register read before any write on some path is live from the entry: its slot is
//!   fresh there, so it still reads the zero every register starts with.
//! * Constant registers (immediates and special registers, set when a block starts) and
//!   shuffle sources (a shuffle may read a lane that is not executing it, whose value
//!   is whatever that lane's register holds) keep slots of their own.
//! * Programs with device-function calls are left as they are (calls save and restore
//!   register ranges per function).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::program::*;

/// What an instruction does with a general register.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Use,
    Def,
    /// A use whose register must keep a slot of its own.
    Pinned,
}

/// Calls `f` on every general register field of `op` (predicates are not general
/// registers). Exhaustive: a new instruction must say how it uses registers.
fn visit(op: &mut Op, f: &mut impl FnMut(&mut u32, Role)) {
    let addr = |a: &mut Addr, f: &mut dyn FnMut(&mut u32, Role)| match a {
        Addr::Reg(r, _) | Addr::Reg32(r, _) => f(r, Role::Use),
        Addr::Abs(_) | Addr::Frame(_) => {}
    };
    match op {
        Op::Nop
        | Op::Pred { .. }
        | Op::PredConst { .. }
        | Op::Bra { .. }
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::Brkpt => {}
        Op::Alu { d, s, .. } => {
            for r in s.iter_mut() {
                f(r, Role::Use);
            }
            f(d, Role::Def);
        }
        Op::Selp { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            f(a, Role::Use);
            f(b, Role::Use);
            f(d, Role::Def);
        }
        Op::Setp { a, b, .. } => {
            f(a, Role::Use);
            f(b, Role::Use);
        }
        Op::Testp { a, .. } | Op::Isspacep { a, .. } => f(a, Role::Use),
        Op::Unpack { src, dsts, .. } => {
            f(src, Role::Use);
            for d in dsts.iter_mut() {
                f(d, Role::Def);
            }
        }
        Op::Ld {
            addr: a, n, dsts, ..
        } => {
            addr(a, f);
            for d in dsts.iter_mut().take(usize::from(*n)) {
                f(d, Role::Def);
            }
        }
        Op::St {
            addr: a, n, srcs, ..
        } => {
            addr(a, f);
            for s in srcs.iter_mut().take(usize::from(*n)) {
                f(s, Role::Use);
            }
        }
        Op::Atom {
            d, addr: a, b, c, ..
        } => {
            addr(a, f);
            f(b, Role::Use);
            f(c, Role::Use);
            f(d, Role::Def);
        }
        Op::CpAsync { dst, src, .. } => {
            addr(dst, f);
            addr(src, f);
        }
        Op::Cvta { d, a, .. } => {
            f(a, Role::Use);
            f(d, Role::Def);
        }
        Op::LocalAddr { d, .. } | Op::Clock { d } | Op::Activemask { d } => f(d, Role::Def),
        Op::Brx { idx, .. } => f(idx, Role::Use),
        // Not compacted (see `compact`); its registers are listed for completeness.
        Op::Call { .. } => {}
        Op::Bar {
            kind, id, count, d, ..
        } => {
            f(id, Role::Use);
            if let Some(c) = count {
                f(c, Role::Use);
            }
            // `bar.red.popc` writes a general register; `.and`/`.or` a predicate.
            if *kind == BarKind::RedPopc {
                f(d, Role::Def);
            }
        }
        Op::BarWarpSync { mask } => f(mask, Role::Use),
        Op::Shfl {
            d, a, b, c, mask, ..
        } => {
            f(a, Role::Pinned);
            f(b, Role::Use);
            f(c, Role::Use);
            f(mask, Role::Use);
            f(d, Role::Def);
        }
        Op::Vote { mode, d, mask, .. } => {
            f(mask, Role::Use);
            // Only the ballot writes a general register; the others a predicate.
            if *mode == VoteMode::Ballot {
                f(d, Role::Def);
            }
        }
        Op::Redux { d, a, mask, .. } | Op::Match { d, a, mask, .. } => {
            f(a, Role::Use);
            f(mask, Role::Use);
            f(d, Role::Def);
        }
    }
}

/// A set of registers as bits.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: u32) {
        self.0[(i / 64) as usize] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: u32) {
        self.0[(i / 64) as usize] &= !(1 << (i % 64));
    }
    fn minus(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a &= !b;
        }
    }
    fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn each(&self, mut f: impl FnMut(u32)) {
        for (k, &w) in self.0.iter().enumerate() {
            let mut m = w;
            while m != 0 {
                f(k as u32 * 64 + m.trailing_zeros());
                m &= m - 1;
            }
        }
    }
}

/// Instruction indices control may go to after `pc`.
fn successors(inst: &Inst, pc: usize, len: usize, out: &mut Vec<usize>) {
    out.clear();
    let guarded = inst.guard.is_some();
    let next = |out: &mut Vec<usize>| {
        if pc + 1 < len {
            out.push(pc + 1);
        }
    };
    match &inst.op {
        Op::Bra { target } => {
            out.push(*target as usize);
            if guarded {
                next(out);
            }
        }
        Op::Brx { targets, .. } => {
            out.extend(targets.iter().map(|&t| t as usize));
            next(out);
        }
        Op::Exit | Op::Ret | Op::Trap | Op::Brkpt => {
            if guarded {
                next(out);
            }
        }
        _ => next(out),
    }
}

/// Maps the program's general registers onto fewer slots (see the module docs).
pub(crate) fn compact(prog: &mut Program) {
    let n = prog.nregs as usize;
    let len = prog.insts.len();
    if n == 0 || prog.funcs.len() != 1 || prog.insts.iter().any(|i| matches!(i.op, Op::Call { .. }))
    {
        return;
    }
    // Uses and definitions per instruction; pinned registers.
    let mut uses: Vec<Vec<u32>> = Vec::with_capacity(len);
    let mut defs: Vec<Vec<u32>> = Vec::with_capacity(len);
    let mut pinned = vec![false; n];
    for &(r, _) in &prog.consts {
        pinned[r as usize] = true;
    }
    for inst in prog.insts.iter_mut() {
        let (mut u, mut d) = (Vec::new(), Vec::new());
        visit(&mut inst.op, &mut |r, role| {
            if *r == SINK || *r as usize >= n {
                return;
            }
            match role {
                Role::Use => u.push(*r),
                Role::Pinned => {
                    u.push(*r);
                    pinned[*r as usize] = true;
                }
                Role::Def => d.push(*r),
            }
        });
        uses.push(u);
        defs.push(d);
    }
    // Basic blocks: a leader at the entry, at every branch target and after every
    // instruction that does not simply fall through.
    let mut leader = vec![false; len + 1];
    leader[0] = true;
    leader[len] = true;
    let mut succ = Vec::new();
    for (pc, inst) in prog.insts.iter().enumerate() {
        successors(inst, pc, len, &mut succ);
        if succ.as_slice() != [pc + 1] {
            leader[pc + 1] = true;
            for &t in &succ {
                if t < len {
                    leader[t] = true;
                }
            }
        }
    }
    let starts: Vec<usize> = (0..len).filter(|&pc| leader[pc]).collect();
    let mut block_of = vec![0usize; len];
    for (b, &st) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(len);
        block_of[st..end].fill(b);
    }
    let nb = starts.len();
    let end_of = |b: usize| starts.get(b + 1).copied().unwrap_or(len);
    let block_succ: Vec<Vec<usize>> = (0..nb)
        .map(|b| {
            let last = end_of(b) - 1;
            successors(&prog.insts[last], last, len, &mut succ);
            succ.iter()
                .filter(|&&t| t < len)
                .map(|&t| block_of[t])
                .collect()
        })
        .collect();
    // Per block: upward-exposed uses (gen) and unguarded definitions (kill).
    let mut gen_b: Vec<Bits> = vec![Bits::new(n); nb];
    let mut kill_b: Vec<Bits> = vec![Bits::new(n); nb];
    for b in 0..nb {
        for pc in (starts[b]..end_of(b)).rev() {
            if prog.insts[pc].guard.is_none() {
                for &d in &defs[pc] {
                    gen_b[b].clear(d);
                    kill_b[b].set(d);
                }
            }
            for &u in &uses[pc] {
                gen_b[b].set(u);
            }
        }
    }
    // Backward liveness over blocks to a fixed point: in = gen ∪ (out − kill).
    let mut live_in: Vec<Bits> = gen_b.clone();
    let mut live_out: Vec<Bits> = vec![Bits::new(n); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let mut out = Bits::new(n);
            for &s in &block_succ[b] {
                out.union(&live_in[s]);
            }
            let mut inn = out.clone();
            inn.minus(&kill_b[b]);
            inn.union(&gen_b[b]);
            live_out[b] = out;
            if inn.0 != live_in[b].0 {
                live_in[b] = inn;
                changed = true;
            }
        }
    }
    // Each register's hull: its reads and writes, the start of every block it is live
    // into and the end of every block it is live out of. Every point where it is live
    // lies between two of these.
    let mut lo = vec![usize::MAX; n];
    let mut hi = vec![0usize; n];
    let mut touch = |r: u32, pc: usize| {
        let r = r as usize;
        lo[r] = lo[r].min(pc);
        hi[r] = hi[r].max(pc);
    };
    for b in 0..nb {
        live_in[b].each(|r| touch(r, starts[b]));
        live_out[b].each(|r| touch(r, end_of(b) - 1));
    }
    for pc in 0..len {
        for &r in uses[pc].iter().chain(&defs[pc]) {
            touch(r, pc);
        }
    }
    // Slots: pinned registers first, one each; the rest by greedy interval colouring.
    let mut map = vec![SINK; n];
    let mut next = 0u32;
    for r in 0..n {
        if pinned[r] {
            map[r] = next;
            next += 1;
        }
    }
    let mut order: Vec<usize> = (0..n)
        .filter(|&r| !pinned[r] && lo[r] != usize::MAX)
        .collect();
    order.sort_by_key(|&r| (lo[r], r));
    let mut busy: BinaryHeap<Reverse<(usize, u32)>> = BinaryHeap::new();
    let mut free: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    for r in order {
        while let Some(&Reverse((end, slot))) = busy.peek() {
            if end < lo[r] {
                busy.pop();
                free.push(Reverse(slot));
            } else {
                break;
            }
        }
        let slot = match free.pop() {
            Some(Reverse(s)) => s,
            None => {
                next += 1;
                next - 1
            }
        };
        map[r] = slot;
        busy.push(Reverse((hi[r], slot)));
    }
    // A register no instruction names needs no slot (slot 0 keeps indices valid).
    for m in map.iter_mut() {
        if *m == SINK {
            *m = 0;
        }
    }
    // The registers whose initial zero is observable: those live into the entry (read
    // before written on some path) and the pinned ones; constant registers are set by
    // every block anyway.
    let mut zero_regs: Vec<usize> = Vec::new();
    live_in[0].each(|r| zero_regs.push(r as usize));
    zero_regs.extend((0..n).filter(|&r| pinned[r] && lo[r] != usize::MAX));
    let consts: Vec<usize> = prog.consts.iter().map(|&(r, _)| r as usize).collect();
    zero_regs.retain(|r| !consts.contains(r));
    let compacted = (next as usize) < n;
    let mut zero: Vec<u32> = zero_regs
        .iter()
        .map(|&r| if compacted { map[r] } else { r as u32 })
        .collect();
    zero.sort_unstable();
    zero.dedup();
    prog.zero_slots = Some(zero);
    if !compacted {
        return;
    }
    for inst in prog.insts.iter_mut() {
        visit(&mut inst.op, &mut |r, _| {
            if *r != SINK && (*r as usize) < n {
                *r = map[*r as usize];
            }
        });
    }
    for (r, _) in prog.consts.iter_mut() {
        *r = map[*r as usize];
    }
    prog.nregs = next;
    prog.funcs[0].regs = (0, next);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use crate::{EmuOptions, GlobalMemory, Module, ParamValue, launch};

    /// Temporaries around first definitions that are guarded, skipped by a branch or
    /// carried around a loop: the compacted program shares slots, and every lane still
    /// reads what it would with a register each (zero where nothing was written).
    #[test]
    fn shared_slots_keep_every_lanes_values() {
        let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<20>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 20;
    add.u64 %rd3, %rd1, %rd2;
    add.u32 %r5, %r1, 7;
    st.global.u32 [%rd3+4], %r5;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 mov.u32 %r6, 100;
    st.global.u32 [%rd3], %r6;
    add.u32 %r7, %r1, 9;
    st.global.u32 [%rd3+8], %r7;
    setp.lt.u32 %p2, %r1, 8;
    @%p2 bra SKIP;
    mov.u32 %r8, 55;
SKIP:
    st.global.u32 [%rd3+12], %r8;
    mov.u32 %r10, 0;
    mov.u32 %r11, 0;
LOOP:
    add.u32 %r12, %r11, 1;
    mul.lo.u32 %r13, %r12, %r12;
    add.u32 %r10, %r10, %r13;
    add.u32 %r11, %r11, 1;
    setp.lt.u32 %p3, %r11, 5;
    @%p3 bra LOOP;
    add.u32 %r14, %r10, %r1;
    st.global.u32 [%rd3+16], %r14;
    ret;
}
.visible .entry junk(.param .u64 out)
{
    .reg .b32 %j<24>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %j0, %tid.x;
    add.u32 %j1, %j0, 0x1111;
    add.u32 %j2, %j0, 0x2222;
    add.u32 %j3, %j0, 0x3333;
    add.u32 %j4, %j0, 0x4444;
    add.u32 %j5, %j0, 0x5555;
    add.u32 %j6, %j0, 0x6666;
    add.u32 %j7, %j0, 0x7777;
    add.u32 %j8, %j0, 0x8888;
    add.u32 %j9, %j0, 0x9999;
    add.u32 %j10, %j0, 0xaaaa;
    add.u32 %j11, %j0, 0xbbbb;
    add.u32 %j12, %j1, %j2;
    add.u32 %j12, %j12, %j3;
    add.u32 %j12, %j12, %j4;
    add.u32 %j12, %j12, %j5;
    add.u32 %j12, %j12, %j6;
    add.u32 %j12, %j12, %j7;
    add.u32 %j12, %j12, %j8;
    add.u32 %j12, %j12, %j9;
    add.u32 %j12, %j12, %j10;
    add.u32 %j12, %j12, %j11;
    st.global.u32 [%rd1], %j12;
    ret;
}
"#;
        let m = Module::parse(ptx).unwrap();
        let prog = m.program("k").unwrap();
        // 16 registers are named (and one per immediate or special register is pinned):
        // the values need at most 6 slots at once.
        let pinned = prog.consts.len() as u32;
        assert!(
            prog.nregs - pinned <= 8,
            "{} slots, {pinned} pinned",
            prog.nregs
        );
        let words: Vec<AtomicU64> = (0..32 * 20 / 8).map(|_| AtomicU64::new(!0)).collect();
        let mut mem = GlobalMemory::new();
        let out = mem.insert_atomic(&words).unwrap();
        // A block of another kernel first leaves non-zero values in the slots of the
        // (per-thread, reused) scratch: the kernel must still read zero wherever its
        // lanes wrote nothing (only the slots read before written are zeroed). One
        // worker thread, so both launches use the same scratch.
        let sink: Vec<AtomicU64> = vec![AtomicU64::new(0)];
        let mut junk_mem = GlobalMemory::new();
        let sink_at = junk_mem.insert_atomic(&sink).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let run = |kernel: &str, grid: u32, out: u64, mem: &GlobalMemory<'_>| {
            launch(
                &m,
                kernel,
                (grid, 1, 1),
                (32, 1, 1),
                0,
                &[ParamValue::ptr(out)],
                mem,
                &EmuOptions::default(),
            )
            .unwrap();
        };
        pool.install(|| {
            run("junk", 4, sink_at, &junk_mem);
            run("k", 1, out, &mem);
        });
        let bytes: Vec<u8> = words
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        let at = |t: usize, k: usize| {
            u32::from_le_bytes(
                bytes[t * 20 + k * 4..t * 20 + k * 4 + 4]
                    .try_into()
                    .unwrap(),
            )
        };
        for t in 0..32u32 {
            let tu = t as usize;
            assert_eq!(at(tu, 0), if t < 16 { 100 } else { 0 }, "lane {t}");
            assert_eq!(at(tu, 1), t + 7);
            assert_eq!(at(tu, 2), t + 9);
            assert_eq!(at(tu, 3), if t < 8 { 0 } else { 55 }, "lane {t}");
            assert_eq!(at(tu, 4), 55 + t);
        }
    }
}
