//! The decoder's shared types: the linker's state, a function's layout, the modifier
//! cursor, the per-function decoder and the type/rounding helpers.

use std::collections::HashMap;

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::float::{BF16, F16, F32, F64, Fmt, Rnd};
use crate::program::*;

pub(super) type PResult<T> = Result<T, ParseError>;

/// A module-level variable after allocation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GlobalVar {
    /// `.global` / `.const`: its host address.
    Mem { space: Space, addr: u64 },
    /// Module-level `.shared` (index into [`ModuleAst::globals`]).
    Shared { index: usize },
    /// `.extern .shared x[]`: the dynamic shared region.
    DynShared { align: u32 },
}

pub(super) struct Layout {
    pub(super) reg_map: Vec<(bool, u32)>,
    pub(super) var_off: Vec<Option<u32>>,
    pub(super) param_off: Vec<u32>,
    pub(super) ret_off: Vec<u32>,
    pub(super) shared_off: Vec<Option<u32>>,
    pub(super) meta: FuncMeta,
}

pub(super) struct Link<'m> {
    pub(super) m: &'m ModuleAst,
    pub(super) globals: &'m HashMap<String, GlobalVar>,
    pub(super) nregs: u32,
    pub(super) npreds: u32,
    pub(super) consts: HashMap<ConstInit, u32>,
    pub(super) const_list: Vec<(u32, ConstInit)>,
    pub(super) const_preds: HashMap<bool, u32>,
    pub(super) const_pred_list: Vec<(u32, bool)>,
    pub(super) shared_module: HashMap<String, u32>,
    pub(super) dyn_shared_offset: u32,
}

impl Link<'_> {
    pub(super) fn const_reg(&mut self, c: ConstInit) -> u32 {
        if let Some(&r) = self.consts.get(&c) {
            return r;
        }
        let r = self.nregs;
        self.nregs += 1;
        self.consts.insert(c, r);
        self.const_list.push((r, c));
        r
    }
    pub(super) fn const_pred(&mut self, v: bool) -> u32 {
        if let Some(&r) = self.const_preds.get(&v) {
            return r;
        }
        let r = self.npreds;
        self.npreds += 1;
        self.const_preds.insert(v, r);
        self.const_pred_list.push((r, v));
        r
    }
}

/// Where a symbol lives.
pub(super) enum SymLoc {
    /// A constant address (host address, shared offset, param-window address).
    Abs(MemSpace, u64),
    /// Offset in the current function's frame.
    Frame(u32),
}

/// The modifiers of one instruction, consumed as the decoder recognises them.
pub(super) struct Mods<'a> {
    pub(super) items: &'a [String],
    pub(super) used: Vec<bool>,
}

impl<'a> Mods<'a> {
    pub(super) fn new(items: &'a [String]) -> Self {
        Mods {
            items,
            used: vec![false; items.len()],
        }
    }
    pub(super) fn has(&mut self, m: &str) -> bool {
        for (i, it) in self.items.iter().enumerate() {
            if !self.used[i] && it == m {
                self.used[i] = true;
                return true;
            }
        }
        false
    }
    pub(super) fn one_of(&mut self, opts: &[&'static str]) -> Option<&'static str> {
        for (i, it) in self.items.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            if let Some(o) = opts.iter().find(|o| **o == it.as_str()) {
                self.used[i] = true;
                return Some(o);
            }
        }
        None
    }
    /// All type modifiers, in order.
    pub(super) fn types(&mut self) -> Vec<Ty> {
        let mut out = Vec::new();
        for (i, it) in self.items.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            if let Some(t) = Ty::from_dir(&format!(".{it}")) {
                self.used[i] = true;
                out.push(t);
            }
        }
        out
    }
    /// Consumes cache/ordering/scope hints that do not change single-threaded results.
    pub(super) fn ignore_hints(&mut self) {
        const HINTS: &[&str] = &[
            "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire",
            "release", "acq_rel", "weak", "mmio", "cta", "gpu", "sys", "cluster", "unified",
        ];
        for (i, it) in self.items.iter().enumerate() {
            if !self.used[i]
                && (HINTS.contains(&it.as_str())
                    || it.starts_with("L1::")
                    || it.starts_with("L2::")
                    || it.starts_with("level::"))
            {
                self.used[i] = true;
            }
        }
    }
    pub(super) fn leftover(&self) -> Option<&'a str> {
        self.items
            .iter()
            .zip(&self.used)
            .find(|(_, u)| !**u)
            .map(|(s, _)| s.as_str())
    }
}

pub(super) struct FnDecoder<'a, 'm> {
    pub(super) link: &'a mut Link<'m>,
    pub(super) f: &'a FuncAst,
    pub(super) lay: &'a Layout,
    pub(super) base_pc: u32,
    pub(super) order: &'a [usize],
    pub(super) pos_of: &'a HashMap<usize, u32>,
    pub(super) entry_pcs: &'a [u32],
    pub(super) call_layouts: &'a [(Vec<u32>, Vec<u32>)],
    pub(super) funcs_by_name: &'a HashMap<String, usize>,
    pub(super) params: &'a [ParamSlot],
}

pub(super) fn fmt_of(t: Ty) -> Option<Fmt> {
    Some(match t {
        Ty::F16 | Ty::F16x2 => F16,
        Ty::BF16 | Ty::BF16x2 => BF16,
        Ty::F32 => F32,
        Ty::F64 => F64,
        _ => return None,
    })
}

pub(super) fn width_of(t: Ty) -> Option<W> {
    W::from_bits(t.bits())
}

pub(super) fn rnd_of(s: &str) -> Option<Rnd> {
    Some(match s {
        "rn" | "rni" => Rnd::Rn,
        "rz" | "rzi" => Rnd::Rz,
        "rm" | "rmi" => Rnd::Rm,
        "rp" | "rpi" => Rnd::Rp,
        "rna" => Rnd::Rna,
        _ => return None,
    })
}

pub(super) const FRND: &[&str] = &["rn", "rz", "rm", "rp"];
pub(super) const IRND: &[&str] = &["rni", "rzi", "rmi", "rpi"];
