//! The emulator's errors: [`ParseError`] for PTX text that cannot be loaded, [`EmuError`]
//! for a launch that fails (memcheck, racecheck, synchronisation, traps, bad launches).

use std::fmt;

/// PTX text that cannot be parsed or decoded: the 1-based line and what is wrong.
///
/// An instruction the emulator does not implement is a `ParseError` too (its message
/// names the instruction), so a module either loads completely or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the offending text (0 when the error is not tied to a line).
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: u32, message: impl Into<String>) -> Self {
        ParseError {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PTX line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A state space, as named in error reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.global` (device memory: the caller's allocations and the module's variables).
    Global,
    /// `.shared` (per block).
    Shared,
    /// `.local` (per thread, including call frames).
    Local,
    /// `.param` (kernel parameters, or a device function's parameter frame).
    Param,
    /// `.const` (the module's constant variables).
    Const,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Param => "param",
            Space::Const => "const",
        })
    }
}

/// One PTX instruction as written, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstrRef {
    /// The instruction's text (one statement, whitespace collapsed).
    pub text: String,
    /// Its 1-based line in the PTX module.
    pub line: u32,
}

impl fmt::Display for InstrRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` (line {})", self.text, self.line)
    }
}

/// The kind of a shared-memory hazard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RaceKind {
    /// A read of data another thread wrote, with no barrier between (read after write).
    ReadAfterWrite,
    /// A write over data another thread read, with no barrier between (write after read).
    WriteAfterRead,
    /// Two threads write the same byte with no barrier between (write after write).
    WriteAfterWrite,
}

impl fmt::Display for RaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RaceKind::ReadAfterWrite => "read-after-write",
            RaceKind::WriteAfterRead => "write-after-read",
            RaceKind::WriteAfterWrite => "write-after-write",
        })
    }
}

/// What went wrong in a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// No `.entry` of that name in the module.
    UnknownKernel,
    /// The launch itself is invalid (parameter count or sizes, block shape, shared size).
    BadLaunch(String),
    /// An access of `size` bytes outside every allocation of its state space.
    OutOfBounds {
        /// The state space addressed.
        space: Space,
        /// Bytes accessed.
        size: u32,
        /// Whether it was a write.
        write: bool,
    },
    /// An access whose address is not a multiple of its size.
    Misaligned {
        /// The state space addressed.
        space: Space,
        /// Bytes accessed (the alignment required).
        size: u32,
        /// Whether it was a write.
        write: bool,
    },
    /// A write to `.const` memory.
    ReadOnly,
    /// Racecheck: an unsynchronised shared-memory access pair.
    SharedRace {
        /// Which hazard.
        kind: RaceKind,
        /// The other thread (x, y, z) in the same block.
        other_thread: (u32, u32, u32),
        /// The other thread's instruction.
        other_instruction: InstrRef,
    },
    /// Threads of the block wait at an aligned barrier (`bar.sync`) at different
    /// instructions, or at different barriers, or with different thread counts.
    BarrierDivergence(String),
    /// No thread of the block can make progress (barriers or warp-synchronous
    /// instructions that can never complete).
    Deadlock(String),
    /// A warp-synchronous instruction (`shfl.sync`, `vote.sync`, ...) used wrongly: the
    /// executing thread is not in its member mask, or the masks of the lanes differ.
    WarpSync(String),
    /// `trap` was executed.
    Trap,
    /// `brkpt` was executed.
    Breakpoint,
    /// Recursion deeper than the emulator's per-thread stack.
    StackOverflow,
    /// The block ran more instructions than [`crate::EmuOptions::max_steps_per_block`].
    StepLimit(u64),
    /// An operand value the emulator cannot honour (e.g. a barrier number over 15, a
    /// `brx.idx` index past its target list).
    InvalidOperand(String),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnknownKernel => f.write_str("no such kernel"),
            ErrorKind::BadLaunch(m) => write!(f, "invalid launch: {m}"),
            ErrorKind::OutOfBounds { space, size, write } => write!(
                f,
                "out-of-bounds {space} {} of {size} bytes",
                if *write { "write" } else { "read" }
            ),
            ErrorKind::Misaligned { space, size, write } => write!(
                f,
                "misaligned {space} {} of {size} bytes",
                if *write { "write" } else { "read" }
            ),
            ErrorKind::ReadOnly => f.write_str("write to constant memory"),
            ErrorKind::SharedRace {
                kind,
                other_thread,
                other_instruction,
            } => write!(
                f,
                "shared-memory race ({kind}) with thread {other_thread:?} at {other_instruction}"
            ),
            ErrorKind::BarrierDivergence(m) => write!(f, "barrier divergence: {m}"),
            ErrorKind::Deadlock(m) => write!(f, "deadlock: {m}"),
            ErrorKind::WarpSync(m) => write!(f, "warp-synchronous misuse: {m}"),
            ErrorKind::Trap => f.write_str("trap"),
            ErrorKind::Breakpoint => f.write_str("breakpoint (brkpt)"),
            ErrorKind::StackOverflow => f.write_str("call stack overflow"),
            ErrorKind::StepLimit(n) => write!(f, "step limit of {n} instructions reached"),
            ErrorKind::InvalidOperand(m) => write!(f, "invalid operand: {m}"),
        }
    }
}

/// A failed launch: which kernel, what, and (when known) where: the instruction, the
/// thread and block indices and the address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmuError {
    /// The kernel's name.
    pub kernel: String,
    /// What went wrong.
    pub kind: ErrorKind,
    /// The instruction that failed.
    pub instruction: Option<InstrRef>,
    /// The thread index (x, y, z) within its block.
    pub thread: Option<(u32, u32, u32)>,
    /// The block index (x, y, z).
    pub block: Option<(u32, u32, u32)>,
    /// The address accessed (state-space address: a host address for global memory, a
    /// byte offset for shared, local and param memory).
    pub address: Option<u64>,
}

impl EmuError {
    pub(crate) fn launch(kernel: &str, kind: ErrorKind) -> Self {
        EmuError {
            kernel: kernel.to_string(),
            kind,
            instruction: None,
            thread: None,
            block: None,
            address: None,
        }
    }
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}`: {}", self.kernel, self.kind)?;
        if let Some(a) = self.address {
            write!(f, " at address {a:#x}")?;
        }
        if let Some(i) = &self.instruction {
            write!(f, " in {i}")?;
        }
        if let Some(t) = self.thread {
            write!(f, ", thread {t:?}")?;
        }
        if let Some(b) = self.block {
            write!(f, ", block {b:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EmuError {}
