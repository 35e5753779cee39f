//! Operand decoding shared by every family: registers, immediates, symbols, addresses,
//! predicates, and the checks on modifiers and operand counts.

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::float::{self, F32, F64, Rnd};
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    pub(super) fn err<T>(&self, ia: &InstAst, msg: impl std::fmt::Display) -> PResult<T> {
        Err(ParseError::new(ia.line, format!("{msg}: `{}`", ia.text)))
    }

    pub(super) fn unsupported<T>(&self, ia: &InstAst) -> PResult<T> {
        let full = std::iter::once(ia.opcode.as_str())
            .chain(ia.mods.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(".");
        Err(ParseError::new(
            ia.line,
            format!("unsupported instruction `{full}`: `{}`", ia.text),
        ))
    }

    pub(super) fn pred_reg(&self, id: u32, line: u32) -> PResult<u32> {
        match self.lay.reg_map.get(id as usize) {
            Some(&(true, r)) => Ok(r),
            _ => Err(ParseError::new(line, "expected a predicate register")),
        }
    }

    /// Immediate bits for an instruction operand of type `ty`.
    fn imm_bits(imm: Imm, ty: Ty) -> u64 {
        match (imm, fmt_of(ty)) {
            (Imm::Int(v), None) => v,
            (Imm::Int(v), Some(f)) => {
                // An integer literal with a float type: its value.
                let x = v as i64 as f64;
                float::convert(F64, f, x.to_bits(), Rnd::Rn)
            }
            (Imm::F32(b), Some(f)) if f == F32 || ty == Ty::F16x2 || ty == Ty::BF16x2 => {
                u64::from(b)
            }
            (Imm::F32(b), Some(f)) => float::convert(F32, f, u64::from(b), Rnd::Rn),
            (Imm::F64(b), Some(f)) => float::convert(F64, f, b, Rnd::Rn),
            (Imm::Float(x), Some(f)) => float::convert(F64, f, x.to_bits(), Rnd::Rn),
            (Imm::F32(b), None) => u64::from(b),
            (Imm::F64(b), None) => b,
            (Imm::Float(x), None) => x as i64 as u64,
        }
    }

    pub(super) fn symbol(&self, ia: &InstAst, s: &Sym) -> PResult<SymLoc> {
        Ok(match s {
            Sym::Var(id) => {
                let i = *id as usize;
                let v = match self.f.vars.get(i) {
                    Some(v) => v,
                    None => return self.err(ia, "bad variable"),
                };
                match v.space {
                    Space::Local | Space::Param => match self.lay.var_off[i] {
                        Some(o) => SymLoc::Frame(o),
                        None => return self.err(ia, "variable without a frame slot"),
                    },
                    Space::Shared => match self.lay.shared_off[i] {
                        Some(o) => SymLoc::Abs(MemSpace::Shared, u64::from(o)),
                        None => return self.err(ia, "shared variable without a slot"),
                    },
                    Space::Global | Space::Const => {
                        return self.err(
                            ia,
                            "function-scope .global/.const variables are not supported",
                        );
                    }
                }
            }
            Sym::Param(i) => {
                let i = *i as usize;
                if self.f.entry {
                    match self.params.get(i) {
                        Some(p) => {
                            SymLoc::Abs(MemSpace::KParam, PARAM_WINDOW + u64::from(p.offset))
                        }
                        None => return self.err(ia, "bad parameter"),
                    }
                } else {
                    match self.lay.param_off.get(i) {
                        Some(&o) => SymLoc::Frame(o),
                        None => return self.err(ia, "bad parameter"),
                    }
                }
            }
            Sym::Ret(i) => match self.lay.ret_off.get(*i as usize) {
                Some(&o) => SymLoc::Frame(o),
                None => return self.err(ia, "bad return parameter"),
            },
            Sym::Name(n) => match self.link.globals.get(n) {
                Some(GlobalVar::Mem { space, addr }) => SymLoc::Abs(
                    if *space == Space::Const {
                        MemSpace::Const
                    } else {
                        MemSpace::Global
                    },
                    *addr,
                ),
                Some(GlobalVar::Shared { .. }) => match self.link.shared_module.get(n) {
                    Some(&o) => SymLoc::Abs(MemSpace::Shared, u64::from(o)),
                    None => return self.err(ia, format!("shared variable `{n}` not laid out")),
                },
                Some(GlobalVar::DynShared { .. }) => {
                    SymLoc::Abs(MemSpace::Shared, u64::from(self.link.dyn_shared_offset))
                }
                None => return self.err(ia, format!("unknown symbol `{n}`")),
            },
            Sym::Reg(_) => return self.err(ia, "register used as a symbol"),
        })
    }

    /// A value source of type `ty`: a register, or a constant register.
    pub(super) fn src(&mut self, ia: &InstAst, o: &Operand, ty: Ty) -> PResult<u32> {
        match o {
            Operand::Sym(Sym::Reg(id)) => match self.lay.reg_map.get(*id as usize) {
                Some(&(false, r)) => Ok(r),
                _ => self.err(ia, "expected a value register, found a predicate"),
            },
            Operand::Imm(imm) => Ok(self
                .link
                .const_reg(ConstInit::Imm(Self::imm_bits(*imm, ty)))),
            Operand::Special(s) => {
                let s = match s {
                    Special::Clock | Special::Clock64 | Special::GlobalTimer => Special::Zero,
                    s => *s,
                };
                Ok(self.link.const_reg(ConstInit::Special(s)))
            }
            Operand::Sym(s) | Operand::SymOff(s, _) => {
                let off = if let Operand::SymOff(_, o) = o { *o } else { 0 };
                match self.symbol(ia, s)? {
                    // A shared symbol's value is its shared-window address, as `mov`
                    // of a .shared variable gives on hardware.
                    SymLoc::Abs(_, a) => Ok(self
                        .link
                        .const_reg(ConstInit::Imm(a.wrapping_add(off as u64)))),
                    SymLoc::Frame(_) => self.err(
                        ia,
                        "the address of a frame variable can only be taken with mov",
                    ),
                }
            }
            _ => self.err(ia, "unsupported operand"),
        }
    }

    pub(super) fn dst(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        match o {
            Operand::Sym(Sym::Reg(id)) => match self.lay.reg_map.get(*id as usize) {
                Some(&(false, r)) => Ok(r),
                _ => self.err(ia, "expected a value register"),
            },
            Operand::Sink => Ok(SINK),
            _ => self.err(ia, "expected a destination register"),
        }
    }

    pub(super) fn psrc(&mut self, ia: &InstAst, o: &Operand) -> PResult<PSrc> {
        match o {
            Operand::Sym(Sym::Reg(id)) => Ok(PSrc {
                reg: self.pred_reg(*id, ia.line)?,
                neg: false,
            }),
            Operand::Not(inner) => {
                let p = self.psrc(ia, inner)?;
                Ok(PSrc {
                    reg: p.reg,
                    neg: !p.neg,
                })
            }
            Operand::Imm(Imm::Int(v)) => Ok(PSrc {
                reg: self.link.const_pred(*v != 0),
                neg: false,
            }),
            _ => self.err(ia, "expected a predicate"),
        }
    }

    pub(super) fn pdst(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        match o {
            Operand::Sym(Sym::Reg(id)) => self.pred_reg(*id, ia.line),
            Operand::Sink => Ok(SINK),
            _ => self.err(ia, "expected a predicate destination"),
        }
    }

    /// An address operand in the given state space.
    pub(super) fn addr(
        &mut self,
        ia: &InstAst,
        o: &Operand,
        space: MemSpace,
    ) -> PResult<(MemSpace, Addr)> {
        let Operand::Addr(base, off) = o else {
            return self.err(ia, "expected an address [..]");
        };
        let off = *off;
        match base {
            AddrBase::Imm(v) => Ok((space, Addr::Abs(v.wrapping_add(off as u64)))),
            AddrBase::Sym(Sym::Reg(id)) => {
                let r = match self.lay.reg_map.get(*id as usize) {
                    Some(&(false, r)) => r,
                    _ => return self.err(ia, "predicate used as an address"),
                };
                let narrow = self
                    .f
                    .regs
                    .get(*id as usize)
                    .is_some_and(|d| d.ty.size() < 8);
                let space = match space {
                    MemSpace::KParam if !self.f.entry => {
                        return self.err(
                            ia,
                            "register-addressed .param in a device function is not supported",
                        );
                    }
                    s => s,
                };
                Ok((
                    space,
                    if narrow {
                        Addr::Reg32(r, off)
                    } else {
                        Addr::Reg(r, off)
                    },
                ))
            }
            AddrBase::Sym(s) => match self.symbol(ia, s)? {
                SymLoc::Frame(fo) => {
                    if !matches!(space, MemSpace::Local | MemSpace::KParam) {
                        return self.err(ia, "frame variable addressed in the wrong state space");
                    }
                    let o = i64::from(fo).wrapping_add(off);
                    if !(0..=i64::from(u32::MAX)).contains(&o) {
                        return self.err(ia, "frame offset out of range");
                    }
                    Ok((MemSpace::Local, Addr::Frame(o as u32)))
                }
                SymLoc::Abs(sym_space, a) => {
                    let a = a.wrapping_add(off as u64);
                    match (space, sym_space) {
                        (MemSpace::Generic, MemSpace::Shared) => {
                            Ok((MemSpace::Generic, Addr::Abs(SHARED_WINDOW.wrapping_add(a))))
                        }
                        (MemSpace::Generic, _) => Ok((MemSpace::Generic, Addr::Abs(a))),
                        (MemSpace::Const, MemSpace::Const)
                        | (MemSpace::Global, MemSpace::Global)
                        | (MemSpace::Global, MemSpace::Const)
                        | (MemSpace::Shared, MemSpace::Shared)
                        | (MemSpace::KParam, MemSpace::KParam) => Ok((space, Addr::Abs(a))),
                        (MemSpace::Const, MemSpace::Global) => Ok((MemSpace::Const, Addr::Abs(a))),
                        _ => self.err(ia, "symbol addressed in the wrong state space"),
                    }
                }
            },
        }
    }

    pub(super) fn mem_space(m: &mut Mods<'_>) -> MemSpace {
        match m.one_of(&[
            "global",
            "shared",
            "shared::cta",
            "local",
            "param",
            "param::entry",
            "param::func",
            "const",
        ]) {
            Some("global") => MemSpace::Global,
            Some("shared") | Some("shared::cta") => MemSpace::Shared,
            Some("local") => MemSpace::Local,
            Some("const") => MemSpace::Const,
            Some(_) => MemSpace::KParam,
            None => MemSpace::Generic,
        }
    }

    pub(super) fn check_mods(&self, ia: &InstAst, m: &Mods<'_>) -> PResult<()> {
        match m.leftover() {
            None => Ok(()),
            Some(x) => Err(ParseError::new(
                ia.line,
                format!(
                    "unsupported modifier `.{x}` on `{}`: `{}`",
                    ia.opcode, ia.text
                ),
            )),
        }
    }

    pub(super) fn nops(&self, ia: &InstAst, n: usize) -> PResult<()> {
        if ia.operands.len() == n {
            Ok(())
        } else {
            self.err(ia, format!("expected {n} operands"))
        }
    }

    pub(super) fn one_type(&self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Ty> {
        let t = m.types();
        if t.len() == 1 {
            Ok(t[0])
        } else {
            self.err(ia, "expected exactly one type")
        }
    }

    pub(super) fn alu(&mut self, ia: &InstAst, f: Alu, ty: Ty, n_src: usize) -> PResult<Op> {
        self.nops(ia, n_src + 1)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let mut s = [0u32; 4];
        for k in 0..n_src {
            s[k] = self.src(ia, &ia.operands[k + 1], ty)?;
        }
        Ok(Op::Alu { f, d, s })
    }

    pub(super) fn int_width(&self, ia: &InstAst, t: Ty) -> PResult<W> {
        if !t.is_int() {
            return self.unsupported(ia);
        }
        match width_of(t) {
            Some(w) => Ok(w),
            None => self.unsupported(ia),
        }
    }
}
