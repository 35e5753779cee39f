//! Comparisons and selection: `setp`, `set`, `selp`, `testp`.

use crate::ast::*;
use crate::float::{F32, F64};
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    fn cmp(&self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<(CmpOp, Option<BoolOp>, bool, Ty)> {
        let op = match m.one_of(&[
            "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
            "gtu", "geu", "num", "nan",
        ]) {
            Some("eq") => CmpOp::Eq,
            Some("ne") => CmpOp::Ne,
            Some("lt") | Some("lo") => CmpOp::Lt,
            Some("le") | Some("ls") => CmpOp::Le,
            Some("gt") | Some("hi") => CmpOp::Gt,
            Some("ge") | Some("hs") => CmpOp::Ge,
            Some("equ") => CmpOp::Equ,
            Some("neu") => CmpOp::Neu,
            Some("ltu") => CmpOp::Ltu,
            Some("leu") => CmpOp::Leu,
            Some("gtu") => CmpOp::Gtu,
            Some("geu") => CmpOp::Geu,
            Some("num") => CmpOp::Num,
            Some(_) => CmpOp::Nan,
            None => return self.unsupported(ia),
        };
        let bop = match m.one_of(&["and", "or", "xor"]) {
            Some("and") => Some(BoolOp::And),
            Some("or") => Some(BoolOp::Or),
            Some("xor") => Some(BoolOp::Xor),
            _ => None,
        };
        let ftz = m.has("ftz");
        let types = m.types();
        let Some(&t) = types.last() else {
            return self.unsupported(ia);
        };
        Ok((op, bop, ftz, t))
    }

    fn cmp_ty(&self, ia: &InstAst, op: CmpOp, t: Ty, ftz: bool) -> PResult<Cmp> {
        let ty = if let Some(f) = fmt_of(t) {
            if matches!(t, Ty::F16x2 | Ty::BF16x2) {
                return self.unsupported(ia);
            }
            CmpTy::F(f)
        } else if t.is_int() {
            let w = self.int_width(ia, t)?;
            if !matches!(
                op,
                CmpOp::Eq | CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge
            ) {
                return self.unsupported(ia);
            }
            if t.is_bits() && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return self.unsupported(ia);
            }
            if t.is_signed() {
                CmpTy::S(w)
            } else {
                CmpTy::U(w)
            }
        } else {
            return self.unsupported(ia);
        };
        if ftz && !matches!(ty, CmpTy::F(f) if f == F32) {
            return self.unsupported(ia);
        }
        Ok(Cmp { op, ty, ftz })
    }

    pub(super) fn setp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let (op, bop, ftz, t) = self.cmp(ia, m)?;
        let cmp = self.cmp_ty(ia, op, t, ftz)?;
        let n = if bop.is_some() { 4 } else { 3 };
        self.nops(ia, n)?;
        let (p, q) = match &ia.operands[0] {
            Operand::Pair(a, b) => (self.pdst(ia, a)?, self.pdst(ia, b)?),
            o => (self.pdst(ia, o)?, SINK),
        };
        let a = self.src(ia, &ia.operands[1], t)?;
        let b = self.src(ia, &ia.operands[2], t)?;
        let bop = match bop {
            Some(bo) => Some((bo, self.psrc(ia, &ia.operands[3])?)),
            None => None,
        };
        Ok(Op::Setp {
            cmp,
            p,
            q,
            a,
            b,
            bop,
        })
    }

    pub(super) fn set(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let (op, bop, ftz, _) = self.cmp(ia, m)?;
        // set.cmp.dtype.stype: the types were both taken; re-read them in order.
        let types: Vec<Ty> = ia
            .mods
            .iter()
            .filter_map(|s| Ty::from_dir(&format!(".{s}")))
            .collect();
        let [dt, st] = types.as_slice() else {
            return self.unsupported(ia);
        };
        let float_result = match dt {
            Ty::U32 | Ty::S32 | Ty::B32 => false,
            Ty::F32 => true,
            _ => return self.unsupported(ia),
        };
        let cmp = self.cmp_ty(ia, op, *st, ftz)?;
        let n = if bop.is_some() { 4 } else { 3 };
        self.nops(ia, n)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], *st)?;
        let b = self.src(ia, &ia.operands[2], *st)?;
        match bop {
            Some(bop) => {
                let c = self.psrc(ia, &ia.operands[3])?;
                Ok(Op::Set {
                    cmp,
                    float_result,
                    d,
                    a,
                    b,
                    bop,
                    c,
                })
            }
            None => {
                // Encode the float-result flag with a Set op against constant true.
                let c = PSrc {
                    reg: self.link.const_pred(true),
                    neg: false,
                };
                Ok(Op::Set {
                    cmp,
                    float_result,
                    d,
                    a,
                    b,
                    bop: BoolOp::And,
                    c,
                })
            }
        }
    }

    /// `selp`: select by predicate.
    pub(super) fn selp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        self.nops(ia, 4)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        let b = self.src(ia, &ia.operands[2], t)?;
        let p = self.psrc(ia, &ia.operands[3])?;
        Ok(Op::Selp { d, a, b, p })
    }

    /// `testp.<op>` on f32/f64: a predicate.
    pub(super) fn testp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let op = match m.one_of(&[
            "finite",
            "infinite",
            "number",
            "notanumber",
            "normal",
            "subnormal",
        ]) {
            Some("finite") => TestOp::Finite,
            Some("infinite") => TestOp::Infinite,
            Some("number") => TestOp::Number,
            Some("notanumber") => TestOp::NotANumber,
            Some("normal") => TestOp::Normal,
            Some(_) => TestOp::Subnormal,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        let Some(fmt) = fmt_of(t).filter(|f| *f == F32 || *f == F64) else {
            return self.unsupported(ia);
        };
        self.nops(ia, 2)?;
        let p = self.pdst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        Ok(Op::Testp { op, fmt, p, a })
    }
}
