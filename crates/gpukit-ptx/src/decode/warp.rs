//! Barriers and warp-synchronous instructions: `bar`/`barrier` (and `bar.warp.sync`),
//! `shfl.sync`, `vote.sync`, `redux.sync`, `match.sync`, `activemask`.

use crate::ast::*;
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    fn u32_src(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        self.src(ia, o, Ty::U32)
    }

    pub(super) fn bar(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        m.has("cta");
        if ia.opcode == "bar" && m.has("warp") {
            if !m.has("sync") {
                return self.unsupported(ia);
            }
            self.nops(ia, 1)?;
            let mask = self.u32_src(ia, &ia.operands[0])?;
            return Ok(Op::BarWarpSync { mask });
        }
        let aligned = ia.opcode == "bar" || m.has("aligned");
        let kind = match m.one_of(&["sync", "arrive", "red"]) {
            Some("sync") => BarKind::Sync,
            Some("arrive") => BarKind::Arrive,
            Some(_) => match m.one_of(&["popc", "and", "or"]) {
                Some("popc") => BarKind::RedPopc,
                Some("and") => BarKind::RedAnd,
                Some("or") => BarKind::RedOr,
                _ => return self.unsupported(ia),
            },
            None => return self.unsupported(ia),
        };
        let ops = &ia.operands;
        match kind {
            BarKind::Sync | BarKind::Arrive => {
                if ops.is_empty() || ops.len() > 2 {
                    return self.err(ia, "wrong number of operands");
                }
                let id = self.u32_src(ia, &ops[0])?;
                let count = match ops.get(1) {
                    Some(o) => Some(self.u32_src(ia, o)?),
                    None => None,
                };
                if kind == BarKind::Arrive && count.is_none() {
                    return self.err(ia, "bar.arrive needs a thread count");
                }
                Ok(Op::Bar {
                    kind,
                    aligned,
                    id,
                    count,
                    d: SINK,
                    c: PSrc { reg: 0, neg: false },
                })
            }
            _ => {
                let t = self.one_type(ia, m)?;
                if (kind == BarKind::RedPopc) != (t == Ty::U32) {
                    return self.unsupported(ia);
                }
                if ops.len() < 3 || ops.len() > 4 {
                    return self.err(ia, "wrong number of operands");
                }
                let d = if kind == BarKind::RedPopc {
                    self.dst(ia, &ops[0])?
                } else {
                    self.pdst(ia, &ops[0])?
                };
                let id = self.u32_src(ia, &ops[1])?;
                let count = if ops.len() == 4 {
                    Some(self.u32_src(ia, &ops[2])?)
                } else {
                    None
                };
                let c = self.psrc(ia, &ops[ops.len() - 1])?;
                Ok(Op::Bar {
                    kind,
                    aligned,
                    id,
                    count,
                    d,
                    c,
                })
            }
        }
    }

    pub(super) fn shfl(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("sync") {
            return self.err(ia, "shfl without .sync is not supported on sm_70+");
        }
        let mode = match m.one_of(&["up", "down", "bfly", "idx"]) {
            Some("up") => ShflMode::Up,
            Some("down") => ShflMode::Down,
            Some("bfly") => ShflMode::Bfly,
            Some(_) => ShflMode::Idx,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        if t != Ty::B32 {
            return self.unsupported(ia);
        }
        self.nops(ia, 5)?;
        let (d, p) = match &ia.operands[0] {
            Operand::Pair(a, b) => (self.dst(ia, a)?, self.pdst(ia, b)?),
            o => (self.dst(ia, o)?, SINK),
        };
        let a = self.src(ia, &ia.operands[1], Ty::B32)?;
        let b = self.src(ia, &ia.operands[2], Ty::B32)?;
        let c = self.src(ia, &ia.operands[3], Ty::B32)?;
        let mask = self.src(ia, &ia.operands[4], Ty::B32)?;
        Ok(Op::Shfl {
            mode,
            d,
            p,
            a,
            b,
            c,
            mask,
        })
    }

    pub(super) fn vote(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("sync") {
            return self.err(ia, "vote without .sync is not supported on sm_70+");
        }
        let mode = match m.one_of(&["all", "any", "uni", "ballot"]) {
            Some("all") => VoteMode::All,
            Some("any") => VoteMode::Any,
            Some("uni") => VoteMode::Uni,
            Some(_) => VoteMode::Ballot,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        if (mode == VoteMode::Ballot) != (t == Ty::B32) || (t != Ty::B32 && t != Ty::Pred) {
            return self.unsupported(ia);
        }
        self.nops(ia, 3)?;
        let d = if mode == VoteMode::Ballot {
            self.dst(ia, &ia.operands[0])?
        } else {
            self.pdst(ia, &ia.operands[0])?
        };
        let a = self.psrc(ia, &ia.operands[1])?;
        let mask = self.src(ia, &ia.operands[2], Ty::B32)?;
        Ok(Op::Vote { mode, d, a, mask })
    }

    pub(super) fn redux(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("sync") {
            return self.unsupported(ia);
        }
        let name = m.one_of(&["add", "min", "max", "and", "or", "xor"]);
        let abs = m.has("abs");
        let nan = m.has("NaN");
        let t = self.one_type(ia, m)?;
        let op = match (name, t) {
            (Some("add"), Ty::U32 | Ty::S32) => ReduxOp::Add,
            (Some("min"), Ty::U32) => ReduxOp::MinU,
            (Some("max"), Ty::U32) => ReduxOp::MaxU,
            (Some("min"), Ty::S32) => ReduxOp::MinS,
            (Some("max"), Ty::S32) => ReduxOp::MaxS,
            (Some("and"), Ty::B32) => ReduxOp::And,
            (Some("or"), Ty::B32) => ReduxOp::Or,
            (Some("xor"), Ty::B32) => ReduxOp::Xor,
            (Some("min"), Ty::F32) => ReduxOp::MinF { nan, abs },
            (Some("max"), Ty::F32) => ReduxOp::MaxF { nan, abs },
            _ => return self.unsupported(ia),
        };
        if (abs || nan) && t != Ty::F32 {
            return self.unsupported(ia);
        }
        self.nops(ia, 3)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], t)?;
        let mask = self.src(ia, &ia.operands[2], Ty::B32)?;
        Ok(Op::Redux { op, d, a, mask })
    }

    /// `match.any.sync`/`match.all.sync` on b32/b64.
    pub(super) fn match_sync(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        if !m.has("sync") {
            return self.unsupported(ia);
        }
        let all = match m.one_of(&["any", "all"]) {
            Some("all") => true,
            Some(_) => false,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        let wide = match t {
            Ty::B32 => false,
            Ty::B64 => true,
            _ => return self.unsupported(ia),
        };
        self.nops(ia, 3)?;
        let (d, p) = match &ia.operands[0] {
            Operand::Pair(a, b) if all => (self.dst(ia, a)?, self.pdst(ia, b)?),
            o => (self.dst(ia, o)?, SINK),
        };
        let a = self.src(ia, &ia.operands[1], t)?;
        let mask = self.src(ia, &ia.operands[2], Ty::B32)?;
        Ok(Op::Match {
            all,
            wide,
            d,
            p,
            a,
            mask,
        })
    }

    /// `activemask.b32`.
    pub(super) fn activemask(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        if t != Ty::B32 {
            return self.unsupported(ia);
        }
        self.nops(ia, 1)?;
        Ok(Op::Activemask {
            d: self.dst(ia, &ia.operands[0])?,
        })
    }
}
