//! The interpreter: one block at a time, its warps run cooperatively.
//!
//! Execution model. A warp's 32 lanes run together: the lanes at the same program
//! counter form the *group* and execute each instruction in one step (ALU operations
//! are computed for all 32 lanes and blended into the active ones). When a branch
//! diverges, the lanes are regrouped by program counter and the group with the lowest
//! counter runs first, merging with waiting lanes as soon as it reaches their counter;
//! this reconverges structured control flow at its join points. Warp-synchronous
//! instructions (`shfl.sync`, `vote.sync`, `bar.warp.sync`, `redux.sync`,
//! `match.sync`) wait until every non-exited lane of their member mask has arrived, as
//! on Volta and later. Warps run until they block at a barrier (or exhaust a time
//! slice); a barrier completes when every non-exited warp of the block (or the given
//! thread count) has arrived; the block's warps are then released together.
//!
//! Files: `common` (shared types: the launch context, blocks, warps and their lane
//! groups, faults), `sched` (block set-up and the warp scheduler), `step` (one warp
//! step: the instruction dispatcher, ALU, predicate and branch semantics), `memory`
//! (loads, stores, atomics, memcheck), `shared` (the warp-wide path of
//! shared-memory loads and stores), `sync` (barriers and warp-synchronous
//! instructions), `call` (device-function calls), `race` (racecheck).

mod call;
mod common;
mod memory;
mod race;
mod sched;
mod shared;
mod step;
mod sync;

pub(crate) use common::{Isa, LaunchCtx, Scratch, Stats};
pub(crate) use sched::run_block;
