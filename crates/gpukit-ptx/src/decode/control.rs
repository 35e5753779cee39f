//! Control flow: `bra`, `brx.idx`, `call`, `ret`, `exit`, and label resolution.

use std::sync::Arc;

use crate::ast::*;
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    fn label(&self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        let Operand::Sym(Sym::Name(n)) = o else {
            return self.err(ia, "expected a label");
        };
        match self.f.labels.get(n) {
            Some(&i) => Ok(self.base_pc + i),
            None => self.err(ia, format!("unknown label `{n}`")),
        }
    }

    /// `bra` (`.uni` accepted).
    pub(super) fn bra(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        m.has("uni");
        self.nops(ia, 1)?;
        Ok(Op::Bra {
            target: self.label(ia, &ia.operands[0])?,
        })
    }

    /// `brx.idx` over a `.branchtargets` list.
    pub(super) fn brx(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("idx") {
            return self.unsupported(ia);
        }
        m.has("uni");
        self.nops(ia, 2)?;
        let idx = self.src(ia, &ia.operands[0], Ty::U32)?;
        let Operand::Sym(Sym::Name(list)) = &ia.operands[1] else {
            return self.err(ia, "expected a .branchtargets list");
        };
        let Some(names) = self.f.branch_targets.get(list) else {
            return self.err(ia, format!("unknown branch target list `{list}`"));
        };
        let mut targets = Vec::with_capacity(names.len());
        for n in names {
            targets.push(self.label(ia, &Operand::Sym(Sym::Name(n.clone())))?);
        }
        Ok(Op::Brx {
            idx,
            targets: Arc::from(targets),
        })
    }

    pub(super) fn call(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        m.has("uni");
        let mut rets_list: &[Operand] = &[];
        let mut args_list: &[Operand] = &[];
        let mut name = None;
        for (k, o) in ia.operands.iter().enumerate() {
            match o {
                Operand::List(v) if name.is_none() && k == 0 => rets_list = v,
                Operand::List(v) if name.is_some() => args_list = v,
                Operand::Sym(Sym::Name(n)) if name.is_none() => name = Some(n.as_str()),
                _ => return self.err(ia, "malformed call"),
            }
        }
        let Some(name) = name else {
            return self.err(ia, "call without a target");
        };
        let Some(&fi) = self.funcs_by_name.get(name) else {
            return self.err(ia, format!("unknown function `{name}`"));
        };
        let Some(&k) = self.pos_of.get(&fi) else {
            return self.err(ia, "function not linked");
        };
        let callee = &self.link.m.funcs[fi];
        let (cparam_off, cret_off) = &self.call_layouts[k as usize];
        if args_list.len() != callee.params.len() || rets_list.len() != callee.rets.len() {
            return self.err(ia, "call does not match the function's parameter list");
        }
        let frame_of = |d: &Self, o: &Operand| -> PResult<(u32, u32)> {
            match o {
                Operand::Sym(s @ Sym::Var(id)) => {
                    let size = d.f.vars.get(*id as usize).map_or(0, |v| v.size) as u32;
                    match d.symbol(ia, s)? {
                        SymLoc::Frame(off) => Ok((off, size)),
                        SymLoc::Abs(..) => d.err(ia, "call arguments must be .param variables"),
                    }
                }
                _ => d.err(ia, "call arguments must be .param variables"),
            }
        };
        let mut args = Vec::new();
        for (i, o) in args_list.iter().enumerate() {
            let (off, size) = frame_of(self, o)?;
            let csize = callee.params[i].size;
            args.push((off, cparam_off[i], size.min(csize)));
        }
        let mut rets = Vec::new();
        for (i, o) in rets_list.iter().enumerate() {
            let (off, size) = frame_of(self, o)?;
            let csize = callee.rets[i].size;
            rets.push((cret_off[i], off, size.min(csize)));
        }
        let _ = (self.order, self.entry_pcs);
        Ok(Op::Call {
            func: k,
            args: Arc::from(args),
            rets: Arc::from(rets),
        })
    }

    /// `ret`: `exit` in an entry.
    pub(super) fn ret(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        m.has("uni");
        self.nops(ia, 0)?;
        Ok(if self.f.entry { Op::Exit } else { Op::Ret })
    }

    /// `exit`.
    pub(super) fn exit(&self, ia: &InstAst) -> PResult<Op> {
        self.nops(ia, 0)?;
        Ok(Op::Exit)
    }
}
