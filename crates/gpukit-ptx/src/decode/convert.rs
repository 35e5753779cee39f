//! Moves and conversions: `mov` (packing and unpacking included) and `cvt`.

use crate::ast::*;
use crate::float::{BF16, F16, F32, F64, Rnd};
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    pub(super) fn mov(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        self.nops(ia, 2)?;
        let (dst, src) = (&ia.operands[0], &ia.operands[1]);
        if t == Ty::Pred {
            let d = self.pdst(ia, dst)?;
            return match src {
                Operand::Imm(Imm::Int(v)) => Ok(Op::PredConst { d, value: *v != 0 }),
                _ => {
                    let a = self.psrc(ia, src)?;
                    Ok(Op::Pred {
                        op: POp::Mov,
                        d,
                        a,
                        b: a,
                    })
                }
            };
        }
        if let Operand::Vector(v) = dst {
            // Unpack.
            let n = v.len();
            if !(2..=4).contains(&n) || t.bits() % n as u32 != 0 {
                return self.err(ia, "bad vector unpack");
            }
            let bits = (t.bits() / n as u32) as u8;
            let mut dsts = [SINK; 4];
            for (k, o) in v.iter().enumerate() {
                dsts[k] = self.dst(ia, o)?;
            }
            let src = self.src(ia, src, t)?;
            return Ok(Op::Unpack { bits, src, dsts });
        }
        let d = self.dst(ia, dst)?;
        match src {
            Operand::Vector(v) => {
                let n = v.len();
                if !(2..=4).contains(&n) || t.bits() % n as u32 != 0 {
                    return self.err(ia, "bad vector pack");
                }
                let bits = t.bits() / n as u32;
                let et = match bits {
                    8 => Ty::B8,
                    16 => Ty::B16,
                    32 => Ty::B32,
                    _ => return self.err(ia, "bad vector pack"),
                };
                let mut s = [0u32; 4];
                for (k, o) in v.iter().enumerate() {
                    s[k] = self.src(ia, o, et)?;
                }
                Ok(Op::Alu {
                    f: Alu::Pack {
                        bits: bits as u8,
                        n: n as u8,
                    },
                    d,
                    s,
                })
            }
            Operand::Special(Special::Clock | Special::Clock64 | Special::GlobalTimer) => {
                Ok(Op::Clock { d })
            }
            Operand::Sym(s @ (Sym::Var(_) | Sym::Param(_) | Sym::Ret(_)))
            | Operand::SymOff(s @ (Sym::Var(_) | Sym::Param(_) | Sym::Ret(_)), _) => {
                let off = if let Operand::SymOff(_, o) = src {
                    *o
                } else {
                    0
                };
                match self.symbol(ia, s)? {
                    SymLoc::Frame(fo) => {
                        if !matches!(s, Sym::Var(_)) {
                            return self.err(
                                ia,
                                "the address of a device-function parameter cannot be taken",
                            );
                        }
                        let o = i64::from(fo).wrapping_add(off);
                        if !(0..=i64::from(u32::MAX)).contains(&o) {
                            return self.err(ia, "frame offset out of range");
                        }
                        Ok(Op::LocalAddr { d, off: o as u32 })
                    }
                    SymLoc::Abs(_, a) => {
                        let c = self
                            .link
                            .const_reg(ConstInit::Imm(a.wrapping_add(off as u64)));
                        Ok(Op::Alu {
                            f: Alu::Mov,
                            d,
                            s: [c, 0, 0, 0],
                        })
                    }
                }
            }
            Operand::Sym(Sym::Name(n)) if self.funcs_by_name.contains_key(n) => {
                self.err(ia, "function pointers are not supported")
            }
            _ => {
                let a = self.src(ia, src, t)?;
                Ok(Op::Alu {
                    f: Alu::Mov,
                    d,
                    s: [a, 0, 0, 0],
                })
            }
        }
    }

    pub(super) fn cvt(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let frnd = m.one_of(&["rn", "rz", "rm", "rp", "rna"]).and_then(rnd_of);
        let irnd = m.one_of(IRND).and_then(rnd_of);
        let ftz = m.has("ftz");
        let sat = m.has("sat");
        let relu = m.has("relu");
        let satfinite = m.has("satfinite");
        let types = m.types();
        let [dt, at] = types.as_slice() else {
            return self.unsupported(ia);
        };
        let (dt, at) = (*dt, *at);
        if frnd.is_some() && irnd.is_some() {
            return self.unsupported(ia);
        }
        // Packed conversions: cvt.rn.f16x2.f32 d, a, b.
        if matches!(dt, Ty::F16x2 | Ty::BF16x2) {
            if at != Ty::F32 || frnd.is_none() || ftz || sat {
                return self.unsupported(ia);
            }
            let to = if dt == Ty::F16x2 { F16 } else { BF16 };
            let f = Alu::CvtPack2 {
                to,
                rnd: frnd.unwrap_or(Rnd::Rn),
                relu,
                satfinite,
            };
            return self.alu(ia, f, Ty::F32, 2);
        }
        let (df, af) = (fmt_of(dt), fmt_of(at));
        let f = match (df, af) {
            (None, None) => {
                if frnd.is_some() || irnd.is_some() || ftz || relu || satfinite {
                    return self.unsupported(ia);
                }
                if !dt.is_int() || !at.is_int() {
                    return self.unsupported(ia);
                }
                Alu::CvtInt {
                    from: self.int_width(ia, at)?,
                    from_signed: at.is_signed(),
                    to: self.int_width(ia, dt)?,
                    to_signed: dt.is_signed(),
                    sat,
                }
            }
            (Some(to), Some(from)) => {
                if relu && !(to == F16 || to == BF16) {
                    return self.unsupported(ia);
                }
                if satfinite && !(to == F16 || to == BF16) {
                    return self.unsupported(ia);
                }
                if ftz && to != F32 && from != F32 {
                    return self.unsupported(ia);
                }
                if let Some(r) = irnd {
                    if to != from {
                        return self.unsupported(ia);
                    }
                    Alu::CvtRoundInt {
                        fmt: to,
                        rnd: r,
                        ftz,
                        sat,
                    }
                } else {
                    let narrowing = to.man_bits < from.man_bits || to.exp_bits < from.exp_bits;
                    if narrowing && frnd.is_none() {
                        return self.unsupported(ia);
                    }
                    if !narrowing && frnd.is_some() && to != from {
                        // PTX forbids rounding on exact conversions; accept it (no effect).
                    }
                    Alu::CvtF2F {
                        from,
                        to,
                        rnd: frnd.unwrap_or(Rnd::Rn),
                        ftz,
                        sat,
                        relu,
                        satfinite,
                    }
                }
            }
            (None, Some(from)) => {
                let Some(r) = irnd else {
                    return self.unsupported(ia);
                };
                if relu || satfinite || (ftz && from != F32) {
                    return self.unsupported(ia);
                }
                let to = self.int_width(ia, dt)?;
                let signed = dt.is_signed();
                let nan = if from != F64 && to != W::W64 {
                    0
                } else {
                    1u64 << (to.bits() - 1)
                };
                Alu::CvtF2I {
                    from,
                    rnd: r,
                    to,
                    signed,
                    ftz,
                    nan,
                }
            }
            (Some(to), None) => {
                let Some(r) = frnd else {
                    return self.unsupported(ia);
                };
                if relu || satfinite || (ftz && to != F32) {
                    return self.unsupported(ia);
                }
                Alu::CvtI2F {
                    from: self.int_width(ia, at)?,
                    signed: at.is_signed(),
                    to,
                    rnd: r,
                    sat,
                }
            }
        };
        self.nops(ia, 2)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let a = self.src(ia, &ia.operands[1], at)?;
        Ok(Op::Alu {
            f,
            d,
            s: [a, 0, 0, 0],
        })
    }
}
