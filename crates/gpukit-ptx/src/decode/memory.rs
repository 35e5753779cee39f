//! Memory instructions: `ld`/`ldu`, `st`, `atom`/`red`, `cp.async`, `cvta`, `isspacep`,
//! and the memory no-ops (`prefetch`, `membar`, `fence`, `createpolicy`).

use crate::ast::*;
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    fn vec_count(&self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<u8> {
        Ok(match m.one_of(&["v2", "v4", "v8"]) {
            Some("v2") => 2,
            Some("v4") => 4,
            Some("v8") => 8,
            Some(_) => return self.unsupported(ia),
            None => 1,
        })
    }

    pub(super) fn ld(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let space = Self::mem_space(m);
        m.ignore_hints();
        let n = self.vec_count(ia, m)?;
        let t = self.one_type(ia, m)?;
        if t == Ty::Pred || t == Ty::B128 || (n > 1 && t.size() * u32::from(n) > 16) && n != 8 {
            return self.unsupported(ia);
        }
        if ia.operands.len() < 2 || ia.operands.len() > 3 {
            return self.err(ia, "expected 2 operands");
        }
        let mut dsts = [SINK; 8];
        match &ia.operands[0] {
            Operand::Vector(v) if v.len() == usize::from(n) && n > 1 => {
                for (k, o) in v.iter().enumerate() {
                    dsts[k] = self.dst(ia, o)?;
                }
            }
            o if n == 1 => dsts[0] = self.dst(ia, o)?,
            _ => return self.err(ia, "destination does not match the vector width"),
        }
        let (space, addr) = self.addr(ia, &ia.operands[1], space)?;
        Ok(Op::Ld {
            space,
            addr,
            size: t.size() as u8,
            sext: t.is_signed(),
            n,
            dsts,
        })
    }

    pub(super) fn st(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let space = Self::mem_space(m);
        m.ignore_hints();
        let n = self.vec_count(ia, m)?;
        let t = self.one_type(ia, m)?;
        if t == Ty::Pred || t == Ty::B128 {
            return self.unsupported(ia);
        }
        if ia.operands.len() < 2 || ia.operands.len() > 3 {
            return self.err(ia, "expected 2 operands");
        }
        let (space, addr) = self.addr(ia, &ia.operands[0], space)?;
        let mut srcs = [0u32; 8];
        match &ia.operands[1] {
            Operand::Vector(v) if v.len() == usize::from(n) && n > 1 => {
                for (k, o) in v.iter().enumerate() {
                    srcs[k] = self.src(ia, o, t)?;
                }
            }
            o if n == 1 => srcs[0] = self.src(ia, o, t)?,
            _ => return self.err(ia, "source does not match the vector width"),
        }
        if space == MemSpace::KParam {
            return self.err(ia, "kernel parameters are read-only");
        }
        Ok(Op::St {
            space,
            addr,
            size: t.size() as u8,
            n,
            srcs,
        })
    }

    pub(super) fn atom(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let red = ia.opcode == "red";
        let space = match Self::mem_space(m) {
            s @ (MemSpace::Global | MemSpace::Shared | MemSpace::Generic) => s,
            _ => return self.unsupported(ia),
        };
        m.ignore_hints();
        let noftz = m.has("noftz");
        let opname = m.one_of(&[
            "and", "or", "xor", "exch", "cas", "add", "inc", "dec", "min", "max",
        ]);
        let t = self.one_type(ia, m)?;
        let size = t.size() as u8;
        let op = match (opname, t) {
            (Some("and"), Ty::B32 | Ty::B64) => AtomOp::And,
            (Some("or"), Ty::B32 | Ty::B64) => AtomOp::Or,
            (Some("xor"), Ty::B32 | Ty::B64) => AtomOp::Xor,
            (Some("exch"), Ty::B32 | Ty::B64) => AtomOp::Exch,
            (Some("cas"), Ty::B32 | Ty::B64 | Ty::B16) => AtomOp::Cas,
            (Some("add"), Ty::U32 | Ty::S32 | Ty::U64) => AtomOp::AddU,
            (Some("add"), Ty::F32) => AtomOp::AddF32 { ftz: false },
            (Some("add"), Ty::F64) => AtomOp::AddF64,
            (Some("add"), Ty::F16) if noftz => AtomOp::AddF16,
            (Some("add"), Ty::BF16) if noftz => AtomOp::AddBF16,
            (Some("add"), Ty::F16x2) if noftz => AtomOp::AddF16x2,
            (Some("add"), Ty::BF16x2) if noftz => AtomOp::AddBF16x2,
            (Some("inc"), Ty::U32) => AtomOp::Inc,
            (Some("dec"), Ty::U32) => AtomOp::Dec,
            (Some("min"), Ty::U32 | Ty::U64) => AtomOp::MinU,
            (Some("max"), Ty::U32 | Ty::U64) => AtomOp::MaxU,
            (Some("min"), Ty::S32 | Ty::S64) => AtomOp::MinS,
            (Some("max"), Ty::S32 | Ty::S64) => AtomOp::MaxS,
            _ => return self.unsupported(ia),
        };
        let (d, rest) = if red {
            (SINK, &ia.operands[..])
        } else {
            match ia.operands.split_first() {
                Some((d, rest)) => (self.dst(ia, d)?, rest),
                None => return self.err(ia, "missing operands"),
            }
        };
        let want = if op == AtomOp::Cas { 3 } else { 2 };
        if rest.len() != want {
            return self.err(ia, "wrong number of operands");
        }
        let (space, addr) = self.addr(ia, &rest[0], space)?;
        let b = self.src(ia, &rest[1], t)?;
        let c = if op == AtomOp::Cas {
            self.src(ia, &rest[2], t)?
        } else {
            0
        };
        Ok(Op::Atom {
            space,
            op,
            size,
            d,
            addr,
            b,
            c,
        })
    }

    pub(super) fn cp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("async") {
            return self.unsupported(ia);
        }
        if m.has("commit_group") || m.has("wait_group") || m.has("wait_all") {
            return Ok(Op::Nop);
        }
        if m.one_of(&["ca", "cg"]).is_none() {
            return self.unsupported(ia);
        }
        if !(m.has("shared") || m.has("shared::cta")) || !m.has("global") {
            return self.unsupported(ia);
        }
        m.ignore_hints();
        if ia.operands.len() < 3 || ia.operands.len() > 5 {
            return self.err(ia, "wrong number of operands");
        }
        let (_, dst) = self.addr(ia, &ia.operands[0], MemSpace::Shared)?;
        let (_, src) = self.addr(ia, &ia.operands[1], MemSpace::Global)?;
        let size = match &ia.operands[2] {
            Operand::Imm(Imm::Int(v @ (4 | 8 | 16))) => *v as u8,
            _ => return self.err(ia, "cp.async size must be 4, 8 or 16"),
        };
        let src_size = match ia.operands.get(3) {
            Some(Operand::Imm(Imm::Int(v))) if *v <= u64::from(size) => Some(*v as u32),
            Some(Operand::Imm(_)) => return self.err(ia, "bad cp.async src-size"),
            Some(_) => return self.err(ia, "register cp.async src-size is not supported"),
            None => None,
        };
        Ok(Op::CpAsync {
            dst,
            src,
            size,
            src_size,
        })
    }

    /// `cvta` / `cvta.to`: generic <-> state-space addresses.
    pub(super) fn cvta(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let to = m.has("to");
        let space = match m.one_of(&["global", "shared", "shared::cta", "local", "const", "param"])
        {
            Some("global") => MemSpace::Global,
            Some("shared") | Some("shared::cta") => MemSpace::Shared,
            Some("local") => MemSpace::Local,
            Some("const") => MemSpace::Const,
            Some(_) => MemSpace::KParam,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        if !matches!(t, Ty::U64 | Ty::U32 | Ty::B64 | Ty::B32) {
            return self.unsupported(ia);
        }
        self.nops(ia, 2)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], Ty::U64)?;
        Ok(Op::Cvta {
            to_generic: !to,
            narrow: matches!(t, Ty::U32 | Ty::B32),
            space,
            d,
            a,
        })
    }

    /// `isspacep.<space>`: a predicate.
    pub(super) fn isspacep(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let space = match m.one_of(&["global", "shared", "shared::cta", "local", "const", "param"])
        {
            Some("global") => MemSpace::Global,
            Some("shared") | Some("shared::cta") => MemSpace::Shared,
            Some("local") => MemSpace::Local,
            Some("const") => MemSpace::Const,
            Some(_) => MemSpace::KParam,
            None => return self.unsupported(ia),
        };
        self.nops(ia, 2)?;
        let p = self.pdst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], Ty::U64)?;
        Ok(Op::Isspacep { space, p, a })
    }

    /// `prefetch`/`prefetchu`: a no-op (cache hints).
    pub(super) fn prefetch(m: &mut Mods<'_>) -> Op {
        m.one_of(&["global", "local", "L1", "L2", "tensormap"]);
        m.ignore_hints();
        m.one_of(&["L1", "L2"]);
        Op::Nop
    }

    /// `membar`: a no-op (see the crate documentation).
    pub(super) fn membar(m: &mut Mods<'_>) -> Op {
        m.one_of(&["cta", "gl", "sys", "proxy"]);
        Op::Nop
    }

    /// `fence`: a no-op (see the crate documentation).
    pub(super) fn fence(ia: &InstAst, m: &mut Mods<'_>) -> Op {
        for (i, it) in ia.mods.iter().enumerate() {
            if ["sc", "acq_rel", "cta", "gpu", "sys", "cluster"].contains(&it.as_str())
                || it.starts_with("proxy")
                || it == "alias"
                || it == "async"
            {
                m.used[i] = true;
            }
        }
        Op::Nop
    }

    /// `createpolicy`: the policy register is a constant 0 (cache policies are not modelled).
    pub(super) fn createpolicy(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        m.used.iter_mut().for_each(|u| *u = true);
        if ia.operands.is_empty() {
            return self.err(ia, "expected operands");
        }
        let d = self.dst(ia, &ia.operands[0])?;
        let z = self.link.const_reg(ConstInit::Imm(0));
        Ok(Op::Alu {
            f: Alu::Mov,
            d,
            s: [z, 0, 0, 0],
        })
    }
}
