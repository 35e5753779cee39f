//! gpukit's PTX emulator: parses the PTX gpukit ships (and any PTX NVRTC produces with
//! the same options) and executes it functionally on the CPU, bit for bit.
//!
//! ```text
//! let module = Module::parse(ptx)?;                 // parse + decode once
//! let mut mem = GlobalMemory::new();                // the live allocations
//! let out = mem.insert_atomic(&buffer)?;            // (or unsafe insert(base, len))
//! launch(&module, "add_f32", grid, block, 0, &[ParamValue::ptr(out), ...], &mem,
//!        &EmuOptions::default())?;
//! ```
//!
//! * **Semantics** are exact: `.rn` arithmetic is the host's IEEE arithmetic (with
//!   subnormals); directed roundings, `.ftz`, `.sat`, `.relu`, f16/bf16 and every
//!   conversion go through an exact soft-float core. Float results that are NaN are
//!   NVIDIA's canonical NaNs (`0x7fffffff` for f32, as CUDA documents; the emulator uses
//!   `0x7fffffffffffffff` for f64 and `0x7fff` for f16/bf16). `min`/`max` ignore a NaN
//!   operand (unless `.NaN`) and order `-0 < +0`; float-to-integer conversions clamp, and
//!   a NaN converts to 0 (or `1 << (bits - 1)` from f64 or to 64 bits), as the PTX ISA
//!   states; global `atom.add.f32` flushes subnormals, shared does not.
//! * **Execution** follows the CUDA model: a grid of blocks (in parallel with rayon),
//!   each block's warps run cooperatively; a warp's lanes run together and reconverge
//!   after divergence; `bar.sync`/`barrier.sync` (with thread counts, `.red`,
//!   `.arrive`) and the warp-synchronous instructions (`shfl.sync`, `vote.sync`,
//!   `bar.warp.sync`, `redux.sync`, `match.sync`) wait for their members as on Volta and
//!   later. Device-function calls (recursion included) run on a per-thread stack.
//! * **Checking**: every global, shared, local and parameter access is checked against
//!   the allocations, the block's shared size and the thread's frames (memcheck); a
//!   shared-memory write and another thread's access of the same byte with no barrier
//!   between them is reported (racecheck, [`EmuOptions::racecheck`]). Errors name the
//!   kernel, the instruction and its PTX line, the thread and block indices and the
//!   address; a deadlock, a divergent aligned barrier, a misused member mask and `trap`
//!   are errors too.
//! * An instruction, type or modifier the emulator does not implement is a
//!   [`ParseError`] naming it and its line, never a silent skip.
//!
//! # Choices where PTX leaves the result open
//!
//! * Integer division by zero: the quotient is all ones, the remainder the dividend.
//! * A shuffle from a lane that is inactive or exited returns that lane's register as
//!   it is (PTX: undefined).
//! * `.approx` instructions (`ex2`, `lg2`, `sin`, `cos`, `rcp`, `rsqrt`, `tanh`,
//!   `sqrt.approx`, `div.approx`/`div.full`): PTX bounds only their error. The emulator
//!   computes them in f64 and rounds, so they may differ from a GPU in the last bits;
//!   [`LaunchStats::approx_instructions`] counts their executions (gpukit's kernels use
//!   none).
//! * `%clock`/`%clock64`/`%globaltimer` read a per-warp instruction counter; `%smid` is
//!   0; `%warpid` is the warp's index in its block.
//! * `cp.async` copies at issue (its wait instructions are no-ops); fences and `membar`
//!   are no-ops (a block's warps are interleaved at instruction granularity; blocks run
//!   on host threads with relaxed atomics).
//!
//! # Not modelled
//!
//! Textures and surfaces, tensor-core instructions (`mma`, `wgmma`, `ldmatrix`),
//! clusters and distributed shared memory, `mbarrier`, bulk/tensor copies (TMA),
//! indirect calls (function pointers, `.callprototype`), vector registers
//! (`.reg .v4`) and `.b128` values. Racecheck covers shared memory (atomics are not
//! race-checked, and shuffles and votes do not order memory); it does not detect
//! global-memory races or `ld.global.nc` reads of data the kernel writes.

// Lane loops index several 32-lane arrays by the lane number.
#![allow(clippy::needless_range_loop)]

mod alu;
mod ast;
mod counters;
mod decode;
mod error;
mod exec;
mod float;
mod launch;
mod lex;
mod memory;
mod module;
mod parse;
mod program;

pub use counters::{CLASSES, Counters, InstClass, SECTOR_BYTES};
pub use error::{EmuError, ErrorKind, InstrRef, ParseError, RaceKind, Space};
pub use launch::{
    DEFAULT_MAX_STEPS_PER_BLOCK, EmuOptions, LaunchStats, MAX_MODULE_VAR_BYTES, MAX_SHARED_BYTES,
    ParamValue, launch,
};
pub use memory::{GlobalMemory, OverlapError};
pub use module::{KernelInfo, Module, ParamInfo};
