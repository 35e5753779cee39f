//! The parsed (not yet decoded) form of a PTX module: declarations, functions and raw
//! instructions whose register names are already resolved to dense per-function ids.

use std::collections::HashMap;

use crate::error::Space;

/// A PTX fundamental (or packed) type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F64,
    Pred,
}

impl Ty {
    /// Parses a type modifier (`.f32`).
    pub(crate) fn from_dir(s: &str) -> Option<Ty> {
        Some(match s {
            ".b8" => Ty::B8,
            ".b16" => Ty::B16,
            ".b32" => Ty::B32,
            ".b64" => Ty::B64,
            ".b128" => Ty::B128,
            ".u8" => Ty::U8,
            ".u16" => Ty::U16,
            ".u32" => Ty::U32,
            ".u64" => Ty::U64,
            ".s8" => Ty::S8,
            ".s16" => Ty::S16,
            ".s32" => Ty::S32,
            ".s64" => Ty::S64,
            ".f16" => Ty::F16,
            ".f16x2" => Ty::F16x2,
            ".bf16" => Ty::BF16,
            ".bf16x2" => Ty::BF16x2,
            ".f32" => Ty::F32,
            ".f64" => Ty::F64,
            ".pred" => Ty::Pred,
            _ => return None,
        })
    }

    /// Size in bytes (a predicate counts as 1).
    pub(crate) fn size(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::Pred => 1,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 2,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 4,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 8,
            Ty::B128 => 16,
        }
    }

    /// Size in bits.
    pub(crate) fn bits(self) -> u32 {
        self.size() * 8
    }

    /// Signed integer type.
    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    /// Unsigned integer type.
    pub(crate) fn is_unsigned(self) -> bool {
        matches!(self, Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64)
    }

    /// Untyped bits.
    pub(crate) fn is_bits(self) -> bool {
        matches!(self, Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64 | Ty::B128)
    }

    /// Any integer or bit type.
    pub(crate) fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned() || self.is_bits()
    }
}

/// An immediate value as written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Imm {
    /// Integer (64-bit two's complement pattern).
    Int(u64),
    /// `0f` single-precision bits.
    F32(u32),
    /// `0d` double-precision bits.
    F64(u64),
    /// Decimal floating-point.
    Float(f64),
}

/// A name resolved through the function's scopes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Sym {
    /// A register (dense id in [`FuncAst::regs`]).
    Reg(u32),
    /// A variable declared in the function body (id in [`FuncAst::vars`]).
    Var(u32),
    /// The i-th formal parameter.
    Param(u32),
    /// The i-th return parameter (`.func (.param .b32 r) f(...)`).
    Ret(u32),
    /// Not declared in the function: a label, a module variable or a function.
    Name(String),
}

/// A special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMaskEq,
    LaneMaskLe,
    LaneMaskLt,
    LaneMaskGe,
    LaneMaskGt,
    Clock,
    Clock64,
    GlobalTimer,
    DynamicSmemSize,
    TotalSmemSize,
    /// `%envregN`, `%pm0..7`, `%reserved_smem_offset_*`: read as 0.
    Zero,
}

/// One operand as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    Sym(Sym),
    /// `sym+off` outside brackets (`mov.u64 %rd1, arr+8`).
    SymOff(Sym, i64),
    Special(Special),
    Imm(Imm),
    /// `[base+off]`.
    Addr(AddrBase, i64),
    /// `{a, b, ...}`.
    Vector(Vec<Operand>),
    /// `a|b` (setp, shfl destination pairs).
    Pair(Box<Operand>, Box<Operand>),
    /// `!p`.
    Not(Box<Operand>),
    /// `(a, b, ...)` in calls.
    List(Vec<Operand>),
    /// `_`.
    Sink,
}

/// The base of an address operand.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AddrBase {
    Sym(Sym),
    Imm(u64),
}

/// A guard predicate `@p` / `@!p`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Guard {
    /// Register id of the predicate.
    pub reg: u32,
    /// `@!p`.
    pub negated: bool,
}

/// One instruction before decoding.
#[derive(Debug, Clone)]
pub(crate) struct InstAst {
    pub line: u32,
    pub text: String,
    pub guard: Option<Guard>,
    pub opcode: String,
    /// Modifiers without the leading dot (`rn`, `f32`, `shared::cta`).
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
}

/// A register declaration.
#[derive(Debug, Clone)]
pub(crate) struct RegDecl {
    pub ty: Ty,
}

/// A variable declaration (`.shared`, `.local`, `.param`, `.global`, `.const`).
#[derive(Debug, Clone)]
pub(crate) struct VarDecl {
    pub space: Space,
    pub name: String,
    pub align: u32,
    /// Total size in bytes (0 for `[]` declarations).
    pub size: u64,
    /// `.extern` with unspecified size (`.extern .shared .b8 smem[];`).
    pub unsized_extern: bool,
    /// Initial bytes (little-endian), if initialised.
    pub init: Option<Vec<u8>>,
    pub line: u32,
}

/// A `.param` in a parameter list.
#[derive(Debug, Clone)]
pub(crate) struct ParamDecl {
    pub name: String,
    /// The element type as written (`.u64`), plus `[N]` for arrays.
    pub ty_text: String,
    pub size: u32,
    pub align: u32,
}

/// A function or kernel.
#[derive(Debug, Clone)]
pub(crate) struct FuncAst {
    pub name: String,
    pub entry: bool,
    pub line: u32,
    pub params: Vec<ParamDecl>,
    pub rets: Vec<ParamDecl>,
    pub regs: Vec<RegDecl>,
    pub vars: Vec<VarDecl>,
    pub insts: Vec<InstAst>,
    /// Label name to the index of the instruction it precedes.
    pub labels: HashMap<String, u32>,
    /// `.branchtargets` lists by name.
    pub branch_targets: HashMap<String, Vec<String>>,
    pub maxntid: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    /// False for a prototype (`.extern .func f(...);`).
    pub has_body: bool,
}

/// A parsed module.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModuleAst {
    pub version: Option<String>,
    pub target: Vec<String>,
    pub address_size: Option<u32>,
    pub globals: Vec<VarDecl>,
    pub funcs: Vec<FuncAst>,
}
