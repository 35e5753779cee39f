//! Logic and bit manipulation: `and`/`or`/`xor`/`not`/`cnot`, `shl`/`shr`,
//! `popc`/`clz`/`brev`, `bfind`, `bfe`, `bfi`, `prmt`, `lop3`, `shf`.

use crate::ast::*;
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    pub(super) fn logic(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let name = ia.opcode.as_str();
        if t == Ty::Pred {
            let op = match name {
                "and" => POp::And,
                "or" => POp::Or,
                "xor" => POp::Xor,
                "not" => POp::Not,
                _ => return self.unsupported(ia),
            };
            let n = if op == POp::Not { 2 } else { 3 };
            self.nops(ia, n)?;
            let d = self.pdst(ia, &ia.operands[0])?;
            let a = self.psrc(ia, &ia.operands[1])?;
            let b = if n == 3 {
                self.psrc(ia, &ia.operands[2])?
            } else {
                a
            };
            return Ok(Op::Pred { op, d, a, b });
        }
        if !t.is_int() {
            return self.unsupported(ia);
        }
        let w = self.int_width(ia, t)?;
        match name {
            "and" => self.alu(ia, Alu::And, t, 2),
            "or" => self.alu(ia, Alu::Or, t, 2),
            "xor" => self.alu(ia, Alu::Xor, t, 2),
            "not" => self.alu(ia, Alu::Not, t, 1),
            _ => self.alu(ia, Alu::Cnot(w), t, 1),
        }
    }

    /// `shl`/`shr` (arithmetic for signed types).
    pub(super) fn shift(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        let f = match (ia.opcode.as_str(), t.is_signed()) {
            ("shl", _) => Alu::Shl(w),
            (_, true) => Alu::ShrS(w),
            _ => Alu::ShrU(w),
        };
        self.nops(ia, 3)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        let b = self.src(ia, &ia.operands[2], Ty::U32)?;
        Ok(Op::Alu {
            f,
            d,
            s: [a, b, 0, 0],
        })
    }

    /// `popc`, `clz`, `brev` on 32 or 64 bits.
    pub(super) fn bit_count(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        let f = match ia.opcode.as_str() {
            "popc" => Alu::Popc(w),
            "clz" => Alu::Clz(w),
            _ => Alu::Brev(w),
        };
        self.alu(ia, f, t, 1)
    }

    /// `bfind` (with `.shiftamt`).
    pub(super) fn bfind(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let shiftamt = m.has("shiftamt");
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        self.alu(
            ia,
            Alu::Bfind {
                w,
                signed: t.is_signed(),
                shiftamt,
            },
            t,
            1,
        )
    }

    /// `bfe`: bit-field extract.
    pub(super) fn bfe(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        self.nops(ia, 4)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        let b = self.src(ia, &ia.operands[2], Ty::U32)?;
        let c = self.src(ia, &ia.operands[3], Ty::U32)?;
        Ok(Op::Alu {
            f: Alu::Bfe {
                w,
                signed: t.is_signed(),
            },
            d,
            s: [a, b, c, 0],
        })
    }

    /// `bfi`: bit-field insert.
    pub(super) fn bfi(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        self.nops(ia, 5)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        let b = self.src(ia, &ia.operands[2], t)?;
        let c = self.src(ia, &ia.operands[3], Ty::U32)?;
        let e = self.src(ia, &ia.operands[4], Ty::U32)?;
        Ok(Op::Alu {
            f: Alu::Bfi(w),
            d,
            s: [a, b, c, e],
        })
    }

    /// `prmt.b32` with its modes.
    pub(super) fn prmt(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let mode = match m.one_of(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]) {
            None => 0,
            Some("f4e") => 1,
            Some("b4e") => 2,
            Some("rc8") => 3,
            Some("ecl") => 4,
            Some("ecr") => 5,
            Some(_) => 6,
        };
        let t = self.one_type(ia, m)?;
        if t != Ty::B32 {
            return self.unsupported(ia);
        }
        self.alu(ia, Alu::Prmt(mode), t, 3)
    }

    /// `lop3.b32`.
    pub(super) fn lop3(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        if t != Ty::B32 {
            return self.unsupported(ia);
        }
        self.alu(ia, Alu::Lop3, t, 4)
    }

    /// `shf.l`/`shf.r` funnel shifts (`.wrap`/`.clamp`).
    pub(super) fn shf(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let left = match m.one_of(&["l", "r"]) {
            Some("l") => true,
            Some(_) => false,
            None => return self.unsupported(ia),
        };
        let clamp = match m.one_of(&["wrap", "clamp"]) {
            Some("clamp") => true,
            Some(_) => false,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        if t != Ty::B32 {
            return self.unsupported(ia);
        }
        self.alu(ia, Alu::Shf { left, clamp }, t, 3)
    }
}
