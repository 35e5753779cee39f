//! The decoded form the interpreter runs: one [`Program`] per kernel, with every
//! register resolved to a dense index, immediates and special registers turned into
//! per-warp constant registers, branch targets resolved to instruction indices and
//! every instruction's semantics chosen once ([`Op`]).

use std::sync::Arc;

use crate::ast::Special;
use crate::float::{Fmt, Rnd};

/// The base of the generic-address window onto shared memory (outside any host
/// address on every supported platform).
pub(crate) const SHARED_WINDOW: u64 = 0xFE00_0000_0000_0000;
/// The base of the generic-address window onto the thread's local memory.
pub(crate) const LOCAL_WINDOW: u64 = 0xFD00_0000_0000_0000;
/// The base of the generic-address window onto the kernel parameters.
pub(crate) const PARAM_WINDOW: u64 = 0xFC00_0000_0000_0000;
/// Size of each window.
pub(crate) const WINDOW_SIZE: u64 = 1 << 32;

/// Marks an absent destination register (`_`).
pub(crate) const SINK: u32 = u32::MAX;

/// An integer width (the discriminant is the width in bits, so [`W::bits`] is a cast
/// rather than a branch inside lane loops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(crate) enum W {
    W8 = 8,
    W16 = 16,
    W32 = 32,
    W64 = 64,
}

impl W {
    #[inline(always)]
    pub(crate) fn bits(self) -> u32 {
        self as u32
    }
    pub(crate) fn from_bits(b: u32) -> Option<W> {
        Some(match b {
            8 => W::W8,
            16 => W::W16,
            32 => W::W32,
            64 => W::W64,
            _ => return None,
        })
    }
}

/// A floating-point operation of the generic (slow, exact, any mode) path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FOp {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Sqrt,
    Rcp,
}

/// Modifiers of a generic float operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FMods {
    pub fmt: Fmt,
    pub rnd: Rnd,
    pub ftz: bool,
    pub sat: bool,
    /// Packed pair (`.f16x2`, `.bf16x2`): the operation applies to both halves.
    pub x2: bool,
    /// `.relu` (f16/bf16 arithmetic and conversions): negative results become +0.
    pub relu: bool,
}

/// Approximate instructions: PTX specifies only an error bound, so their hardware
/// results cannot be reproduced bit for bit; the emulator computes them in f64 and
/// rounds (documented, and counted in [`crate::LaunchStats::approx_instructions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Approx {
    Rcp,
    Rsqrt,
    Sqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
    Div,
}

/// Float min/max flavours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct MinMax {
    pub max: bool,
    pub nan: bool,
    pub xorsign_abs: bool,
    pub ftz: bool,
    pub fmt: Fmt,
    pub x2: bool,
}

/// A lane-wise operation of up to four sources and one destination.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Alu {
    Mov,
    // Integer arithmetic (results truncated to the width by readers).
    Add,
    Sub,
    AddSatS32,
    SubSatS32,
    MulLo,
    MulHiU(W),
    MulHiS(W),
    MulWideU(W),
    MulWideS(W),
    Mul24LoU,
    Mul24LoS,
    Mul24HiU,
    Mul24HiS,
    MadLo,
    MadHiU(W),
    MadHiS(W),
    MadWideU(W),
    MadWideS(W),
    DivU(W),
    DivS(W),
    RemU(W),
    RemS(W),
    AbsS(W),
    Neg,
    MinU(W),
    MaxU(W),
    MinS(W),
    MaxS(W),
    SadU(W),
    SadS(W),
    And,
    Or,
    Xor,
    Not,
    Cnot(W),
    Shl(W),
    ShrU(W),
    ShrS(W),
    Popc(W),
    Clz(W),
    Brev(W),
    Bfind {
        w: W,
        signed: bool,
        shiftamt: bool,
    },
    Bfe {
        w: W,
        signed: bool,
    },
    Bfi(W),
    Prmt(u8),
    Lop3,
    Shf {
        left: bool,
        clamp: bool,
    },
    /// `szext`, `bmsk`-like helpers are not needed by NVRTC output.
    // Carry chain (`add.cc`, `addc`, ...): `cc` is the warp's carry flag.
    AddCc {
        w: W,
        carry_in: bool,
        carry_out: bool,
        sub: bool,
    },
    MadCc {
        w: W,
        hi: bool,
        carry_in: bool,
        carry_out: bool,
    },
    // Float fast paths (`.rn`, no `.ftz`, no `.sat`).
    AddF32,
    SubF32,
    MulF32,
    FmaF32,
    DivF32,
    SqrtF32,
    AddF64,
    SubF64,
    MulF64,
    FmaF64,
    DivF64,
    SqrtF64,
    /// Every other float arithmetic (directed rounding, ftz, sat, f16/bf16, packed).
    Float(FOp, FMods),
    MinMax(MinMax),
    AbsF {
        fmt: Fmt,
        ftz: bool,
        x2: bool,
    },
    NegF {
        fmt: Fmt,
        ftz: bool,
        x2: bool,
    },
    Copysign(Fmt),
    Approx(Approx, Fmt, bool),
    // Conversions.
    CvtInt {
        from: W,
        from_signed: bool,
        to: W,
        to_signed: bool,
        sat: bool,
    },
    CvtF2F {
        from: Fmt,
        to: Fmt,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        relu: bool,
        satfinite: bool,
    },
    CvtF2I {
        from: Fmt,
        rnd: Rnd,
        to: W,
        signed: bool,
        ftz: bool,
        nan: u64,
    },
    CvtI2F {
        from: W,
        signed: bool,
        to: Fmt,
        rnd: Rnd,
        sat: bool,
    },
    CvtRoundInt {
        fmt: Fmt,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
    },
    /// `cvt.rn.f16x2.f32 d, a, b`: `d = cvt(a) << 16 | cvt(b)`.
    CvtPack2 {
        to: Fmt,
        rnd: Rnd,
        relu: bool,
        satfinite: bool,
    },
    /// `mov.b32 d, {a, b}` and friends: pack `n` elements of `bits` (sources a..d).
    Pack {
        bits: u8,
        n: u8,
    },
}

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// What a comparison compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CmpTy {
    U(W),
    S(W),
    F(Fmt),
}

/// A comparison and its operand type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Cmp {
    pub op: CmpOp,
    pub ty: CmpTy,
    pub ftz: bool,
}

/// `setp`/`set` combining operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

/// A predicate source, possibly negated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PSrc {
    pub reg: u32,
    pub neg: bool,
}

/// Where memory is addressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemSpace {
    Global,
    Const,
    Shared,
    Local,
    /// Kernel parameters (addresses in [`PARAM_WINDOW`]).
    KParam,
    Generic,
}

/// An address: a register plus offset, or a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Addr {
    Reg(u32, i64),
    /// A 32-bit register (zero-extended) plus offset.
    Reg32(u32, i64),
    Abs(u64),
    /// Offset in the current function's local frame (per lane).
    Frame(u32),
}

/// Atomic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum AtomOp {
    And,
    Or,
    Xor,
    Exch,
    Cas,
    AddU,
    AddF32 { ftz: bool },
    AddF64,
    AddF16,
    AddBF16,
    AddF16x2,
    AddBF16x2,
    Inc,
    Dec,
    MinU,
    MaxU,
    MinS,
    MaxS,
}

/// Shuffle modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// Vote modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// `redux.sync` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ReduxOp {
    Add,
    MinU,
    MaxU,
    MinS,
    MaxS,
    And,
    Or,
    Xor,
    MinF { nan: bool, abs: bool },
    MaxF { nan: bool, abs: bool },
}

/// Barrier flavours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum BarKind {
    Sync,
    Arrive,
    RedPopc,
    RedAnd,
    RedOr,
}

/// Predicate-register operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum POp {
    Mov,
    Not,
    And,
    Or,
    Xor,
}

/// One decoded instruction's operation.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Nop,
    Alu {
        f: Alu,
        d: u32,
        s: [u32; 4],
    },
    /// `selp.t d, a, b, p`.
    Selp {
        d: u32,
        a: u32,
        b: u32,
        p: PSrc,
    },
    /// `setp.cmp[.bop] p[|q], a, b[, c]`.
    Setp {
        cmp: Cmp,
        p: u32,
        q: u32,
        a: u32,
        b: u32,
        bop: Option<(BoolOp, PSrc)>,
    },
    /// `set.cmp.bop` (value result combined with a predicate).
    Set {
        cmp: Cmp,
        float_result: bool,
        d: u32,
        a: u32,
        b: u32,
        bop: BoolOp,
        c: PSrc,
    },
    /// `testp.op.type p, a`.
    Testp {
        op: TestOp,
        fmt: Fmt,
        p: u32,
        a: u32,
    },
    /// Predicate logic (`and.pred`, `not.pred`, `mov.pred` ...).
    Pred {
        op: POp,
        d: u32,
        a: PSrc,
        b: PSrc,
    },
    /// `mov.pred p, imm`.
    PredConst {
        d: u32,
        value: bool,
    },
    /// Predicate to/from integer (`selp` covers most; `mov.b32 r, p` is not PTX).
    /// `mov.b64 {a, b}, x` and similar: split into elements (SINK for `_`).
    Unpack {
        bits: u8,
        src: u32,
        dsts: [u32; 4],
    },
    Ld {
        space: MemSpace,
        addr: Addr,
        size: u8,
        sext: bool,
        n: u8,
        dsts: [u32; 8],
    },
    St {
        space: MemSpace,
        addr: Addr,
        size: u8,
        n: u8,
        srcs: [u32; 8],
    },
    Atom {
        space: MemSpace,
        op: AtomOp,
        size: u8,
        d: u32,
        addr: Addr,
        b: u32,
        c: u32,
    },
    /// `cp.async.{ca,cg}.shared.global [d], [s], size{, src_size}` (performed at issue).
    CpAsync {
        dst: Addr,
        src: Addr,
        size: u8,
        src_size: Option<u32>,
    },
    Cvta {
        to_generic: bool,
        /// `.u32` form: operands and result are 32-bit.
        narrow: bool,
        space: MemSpace,
        d: u32,
        a: u32,
    },
    Isspacep {
        space: MemSpace,
        p: u32,
        a: u32,
    },
    /// `mov.u64 d, local_var+off`: the lane's frame base plus `off`.
    LocalAddr {
        d: u32,
        off: u32,
    },
    /// `%clock`, `%clock64`, `%globaltimer`: a per-warp instruction counter.
    Clock {
        d: u32,
    },
    Bra {
        target: u32,
    },
    Brx {
        idx: u32,
        targets: Arc<[u32]>,
    },
    Call {
        func: u32,
        /// (caller frame offset, callee frame offset, bytes) for each argument.
        args: Arc<[(u32, u32, u32)]>,
        /// (callee frame offset, caller frame offset, bytes) for each return value.
        rets: Arc<[(u32, u32, u32)]>,
    },
    Ret,
    Exit,
    Trap,
    Brkpt,
    Bar {
        kind: BarKind,
        aligned: bool,
        id: u32,
        count: Option<u32>,
        /// `.red`: destination (value register or predicate) and source predicate.
        d: u32,
        c: PSrc,
    },
    BarWarpSync {
        mask: u32,
    },
    Shfl {
        mode: ShflMode,
        d: u32,
        p: u32,
        a: u32,
        b: u32,
        c: u32,
        mask: u32,
    },
    Vote {
        mode: VoteMode,
        /// Ballot: value register; otherwise predicate register.
        d: u32,
        a: PSrc,
        mask: u32,
    },
    Redux {
        op: ReduxOp,
        d: u32,
        a: u32,
        mask: u32,
    },
    Match {
        all: bool,
        wide: bool,
        d: u32,
        p: u32,
        a: u32,
        mask: u32,
    },
    Activemask {
        d: u32,
    },
}

/// `testp` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TestOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// An instruction: its operation and guard.
#[derive(Debug, Clone)]
pub(crate) struct Inst {
    pub op: Op,
    pub guard: Option<PSrc>,
}

/// How a constant register is initialised when a warp starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ConstInit {
    Imm(u64),
    Special(Special),
}

/// A device function (or the kernel itself) inside a program.
#[derive(Debug, Clone)]
pub(crate) struct FuncMeta {
    pub entry_pc: u32,
    /// Bytes of local frame (`.local` variables and `.param` staging/formals).
    pub frame_size: u32,
    /// Value registers `[lo, hi)` and predicates `[plo, phi)` owned by the function.
    pub regs: (u32, u32),
    pub preds: (u32, u32),
}

/// Where an instruction came from, for reports.
#[derive(Debug, Clone)]
pub(crate) struct SrcInfo {
    pub line: u32,
    pub text: Arc<str>,
}

/// A kernel parameter's layout in the parameter buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamSlot {
    pub name: String,
    pub ty: String,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

/// One kernel, linked with every device function it can call.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub insts: Vec<Inst>,
    pub src: Vec<SrcInfo>,
    pub nregs: u32,
    pub npreds: u32,
    pub consts: Vec<(u32, ConstInit)>,
    pub const_preds: Vec<(u32, bool)>,
    /// `funcs[0]` is the kernel.
    pub funcs: Vec<FuncMeta>,
    pub params: Vec<ParamSlot>,
    pub param_bytes: u32,
    /// Static shared bytes; dynamic shared starts at `dyn_shared_offset`.
    pub static_shared: u32,
    pub dyn_shared_offset: u32,
    pub maxntid: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    /// The register slots a block must zero before it runs (`None`: every slot). After
    /// register compaction only the slots that some path reads before writing, and the
    /// pinned ones (shuffle sources, read from lanes that may never have written them),
    /// need their initial zero; every other slot is written before it is read, so a
    /// block may leave a previous block's values there.
    pub zero_slots: Option<Vec<u32>>,
}
