//! Integer and floating-point arithmetic: `add`/`sub` (and `.cc`, `addc`/`subc`),
//! `mul`, `mad` (and `madc`), `mul24`, `fma`, `div`, `rem`, `abs`/`neg`, `min`/`max`,
//! `sad`, `sqrt`/`rcp`/`rsqrt`/`ex2`/`lg2`/`sin`/`cos`/`tanh`, `copysign`, and the
//! float modifiers they share.

use crate::ast::*;
use crate::float::{BF16, F16, F32, F64, Rnd};
use crate::program::*;

use super::types::*;

impl FnDecoder<'_, '_> {
    pub(super) fn add_sub(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let sub = ia.opcode == "sub";
        if m.has("cc") {
            let t = self.one_type(ia, m)?;
            let w = self.int_width(ia, t)?;
            if w != W::W32 && w != W::W64 {
                return self.unsupported(ia);
            }
            return self.alu(
                ia,
                Alu::AddCc {
                    w,
                    carry_in: false,
                    carry_out: true,
                    sub,
                },
                t,
                2,
            );
        }
        let types = {
            let mut probe = Mods::new(m.items);
            probe.used.clone_from(&m.used);
            probe.types()
        };
        match types.as_slice() {
            [t] if t.is_int() => {
                let sat = m.has("sat");
                let t = self.one_type(ia, m)?;
                let f = match (sat, t, sub) {
                    (false, _, false) => Alu::Add,
                    (false, _, true) => Alu::Sub,
                    (true, Ty::S32, false) => Alu::AddSatS32,
                    (true, Ty::S32, true) => Alu::SubSatS32,
                    _ => return self.unsupported(ia),
                };
                self.alu(ia, f, t, 2)
            }
            _ => {
                let tm = self.float_mods(ia, m, false)?;
                self.float_op(ia, if sub { FOp::Sub } else { FOp::Add }, tm, 2)
            }
        }
    }

    /// Extended-precision `addc`/`subc` (carry in, `.cc` carry out).
    pub(super) fn addc(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let cc = m.has("cc");
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        let f = Alu::AddCc {
            w,
            carry_in: true,
            carry_out: cc,
            sub: ia.opcode == "subc",
        };
        self.alu(ia, f, t, 2)
    }

    pub(super) fn mul(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        match self.peek_type(m) {
            Some(t) if t.is_int() => {
                let mode = m.one_of(&["lo", "hi", "wide"]);
                let t = self.one_type(ia, m)?;
                let w = self.int_width(ia, t)?;
                let s = t.is_signed();
                let f = match (mode, s) {
                    (Some("lo"), _) => Alu::MulLo,
                    (Some("hi"), false) => Alu::MulHiU(w),
                    (Some("hi"), true) => Alu::MulHiS(w),
                    (Some("wide"), false) if w != W::W64 => Alu::MulWideU(w),
                    (Some("wide"), true) if w != W::W64 => Alu::MulWideS(w),
                    _ => return self.unsupported(ia),
                };
                self.alu(ia, f, t, 2)
            }
            _ => {
                let tm = self.float_mods(ia, m, false)?;
                self.float_op(ia, FOp::Mul, tm, 2)
            }
        }
    }

    pub(super) fn mad(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        match self.peek_type(m) {
            Some(t) if t.is_int() => {
                let mode = m.one_of(&["lo", "hi", "wide"]);
                let cc = m.has("cc");
                let t = self.one_type(ia, m)?;
                let w = self.int_width(ia, t)?;
                let s = t.is_signed();
                if cc {
                    if w != W::W32 && w != W::W64 {
                        return self.unsupported(ia);
                    }
                    let hi = match mode {
                        Some("hi") => true,
                        Some("lo") => false,
                        _ => return self.unsupported(ia),
                    };
                    return self.alu(
                        ia,
                        Alu::MadCc {
                            w,
                            hi,
                            carry_in: false,
                            carry_out: true,
                        },
                        t,
                        3,
                    );
                }
                let f = match (mode, s) {
                    (Some("lo"), _) => Alu::MadLo,
                    (Some("hi"), false) => Alu::MadHiU(w),
                    (Some("hi"), true) => Alu::MadHiS(w),
                    (Some("wide"), false) if w != W::W64 => Alu::MadWideU(w),
                    (Some("wide"), true) if w != W::W64 => Alu::MadWideS(w),
                    _ => return self.unsupported(ia),
                };
                // mad.wide: c is twice as wide.
                self.nops(ia, 4)?;
                let d = self.dst(ia, &ia.operands[0])?;
                let a = self.src(ia, &ia.operands[1], t)?;
                let b = self.src(ia, &ia.operands[2], t)?;
                let ct = if matches!(f, Alu::MadWideU(_) | Alu::MadWideS(_)) {
                    Ty::B64
                } else {
                    t
                };
                let c = self.src(ia, &ia.operands[3], ct)?;
                Ok(Op::Alu {
                    f,
                    d,
                    s: [a, b, c, 0],
                })
            }
            _ => {
                let tm = self.float_mods(ia, m, true)?;
                self.float_op(ia, FOp::Fma, tm, 3)
            }
        }
    }

    /// `madc.lo`/`madc.hi` (carry in, `.cc` carry out).
    pub(super) fn madc(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let hi = match m.one_of(&["lo", "hi"]) {
            Some("hi") => true,
            Some(_) => false,
            None => return self.unsupported(ia),
        };
        let cc = m.has("cc");
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        if w != W::W32 && w != W::W64 {
            return self.unsupported(ia);
        }
        self.alu(
            ia,
            Alu::MadCc {
                w,
                hi,
                carry_in: true,
                carry_out: cc,
            },
            t,
            3,
        )
    }

    /// `mul24.lo`/`mul24.hi` (`mad24` is not implemented).
    pub(super) fn mul24(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let hi = match m.one_of(&["lo", "hi"]) {
            Some("hi") => true,
            Some(_) => false,
            None => return self.unsupported(ia),
        };
        let t = self.one_type(ia, m)?;
        if ia.opcode == "mad24" || !matches!(t, Ty::U32 | Ty::S32) {
            return self.unsupported(ia);
        }
        let f = match (hi, t == Ty::S32) {
            (false, false) => Alu::Mul24LoU,
            (false, true) => Alu::Mul24LoS,
            (true, false) => Alu::Mul24HiU,
            (true, true) => Alu::Mul24HiS,
        };
        self.alu(ia, f, t, 2)
    }

    /// `fma` with its rounding and float modifiers.
    pub(super) fn fma(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.float_mods(ia, m, true)?;
        self.float_op(ia, FOp::Fma, t, 3)
    }

    pub(super) fn div(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        match self.peek_type(m) {
            Some(t) if t.is_int() => {
                let t = self.one_type(ia, m)?;
                let w = self.int_width(ia, t)?;
                let f = if t.is_signed() {
                    Alu::DivS(w)
                } else {
                    Alu::DivU(w)
                };
                self.alu(ia, f, t, 2)
            }
            _ => {
                if let Some(kind) = m.one_of(&["approx", "full"]) {
                    let ftz = m.has("ftz");
                    let t = self.one_type(ia, m)?;
                    if t != Ty::F32 {
                        return self.unsupported(ia);
                    }
                    let _ = kind;
                    return self.alu(ia, Alu::Approx(Approx::Div, F32, ftz), t, 2);
                }
                let tm = self.float_mods(ia, m, true)?;
                self.float_op(ia, FOp::Div, tm, 2)
            }
        }
    }

    /// Integer `rem`.
    pub(super) fn rem(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        let f = if t.is_signed() {
            Alu::RemS(w)
        } else {
            Alu::RemU(w)
        };
        self.alu(ia, f, t, 2)
    }

    pub(super) fn abs_neg(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let ftz = m.has("ftz");
        let t = self.one_type(ia, m)?;
        let neg = ia.opcode == "neg";
        if t.is_int() {
            let w = self.int_width(ia, t)?;
            if ftz || !t.is_signed() {
                return self.unsupported(ia);
            }
            return self.alu(ia, if neg { Alu::Neg } else { Alu::AbsS(w) }, t, 1);
        }
        let Some(fmt) = fmt_of(t) else {
            return self.unsupported(ia);
        };
        let x2 = matches!(t, Ty::F16x2 | Ty::BF16x2);
        let f = if neg {
            Alu::NegF { fmt, ftz, x2 }
        } else {
            Alu::AbsF { fmt, ftz, x2 }
        };
        self.alu(ia, f, t, 1)
    }

    pub(super) fn min_max(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let max = ia.opcode == "max";
        match self.peek_type(m) {
            Some(t) if t.is_int() => {
                let t = self.one_type(ia, m)?;
                let w = self.int_width(ia, t)?;
                let f = match (max, t.is_signed()) {
                    (false, false) => Alu::MinU(w),
                    (true, false) => Alu::MaxU(w),
                    (false, true) => Alu::MinS(w),
                    (true, true) => Alu::MaxS(w),
                };
                self.alu(ia, f, t, 2)
            }
            _ => {
                let ftz = m.has("ftz");
                let nan = m.has("NaN");
                let xs = m.has("xorsign");
                let abs = m.has("abs");
                if xs != abs {
                    return self.unsupported(ia);
                }
                let t = self.one_type(ia, m)?;
                let Some(fmt) = fmt_of(t) else {
                    return self.unsupported(ia);
                };
                let x2 = matches!(t, Ty::F16x2 | Ty::BF16x2);
                self.alu(
                    ia,
                    Alu::MinMax(MinMax {
                        max,
                        nan,
                        xorsign_abs: xs,
                        ftz,
                        fmt,
                        x2,
                    }),
                    t,
                    2,
                )
            }
        }
    }

    /// Integer `sad` (sum of absolute differences).
    pub(super) fn sad(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let w = self.int_width(ia, t)?;
        let f = if t.is_signed() {
            Alu::SadS(w)
        } else {
            Alu::SadU(w)
        };
        self.alu(ia, f, t, 3)
    }

    pub(super) fn unary_float(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let approx = m.has("approx");
        let name = ia.opcode.as_str();
        if !approx {
            if name != "sqrt" && name != "rcp" {
                return self.unsupported(ia);
            }
            let tm = self.float_mods(ia, m, true)?;
            if tm.1.fmt != F32 && tm.1.fmt != F64 {
                return self.unsupported(ia);
            }
            let op = if name == "sqrt" { FOp::Sqrt } else { FOp::Rcp };
            return self.float_op(ia, op, tm, 1);
        }
        let ftz = m.has("ftz");
        let t = self.one_type(ia, m)?;
        let Some(fmt) = fmt_of(t).filter(|f| *f == F32 || *f == F64) else {
            return self.unsupported(ia);
        };
        let a = match name {
            "sqrt" => Approx::Sqrt,
            "rcp" => Approx::Rcp,
            "rsqrt" => Approx::Rsqrt,
            "ex2" => Approx::Ex2,
            "lg2" => Approx::Lg2,
            "sin" => Approx::Sin,
            "cos" => Approx::Cos,
            _ => Approx::Tanh,
        };
        if fmt == F64 && !matches!(a, Approx::Rcp | Approx::Rsqrt) {
            return self.unsupported(ia);
        }
        self.alu(ia, Alu::Approx(a, fmt, ftz), t, 1)
    }

    /// `copysign.f32`/`.f64`.
    pub(super) fn copysign(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
        let t = self.one_type(ia, m)?;
        let Some(f) = fmt_of(t).filter(|f| *f == F32 || *f == F64) else {
            return self.unsupported(ia);
        };
        self.alu(ia, Alu::Copysign(f), t, 2)
    }

    /// Float modifiers: rounding (required when `need_rnd`), `.ftz`, `.sat`, `.relu`.
    fn float_mods(&self, ia: &InstAst, m: &mut Mods<'_>, need_rnd: bool) -> PResult<(Ty, FMods)> {
        let rnd = m.one_of(FRND).and_then(rnd_of);
        let ftz = m.has("ftz");
        let sat = m.has("sat");
        let relu = m.has("relu");
        let oft = m.has("oob");
        let t = self.one_type(ia, m)?;
        let Some(fmt) = fmt_of(t) else {
            return self.unsupported(ia);
        };
        if oft || (need_rnd && rnd.is_none() && fmt != F16 && fmt != BF16) {
            return self.unsupported(ia);
        }
        if ftz && fmt == F64 {
            return self.unsupported(ia);
        }
        Ok((
            t,
            FMods {
                fmt,
                rnd: rnd.unwrap_or(Rnd::Rn),
                ftz,
                sat,
                x2: matches!(t, Ty::F16x2 | Ty::BF16x2),
                relu,
            },
        ))
    }

    fn float_op(&mut self, ia: &InstAst, op: FOp, (t, fm): (Ty, FMods), n: usize) -> PResult<Op> {
        let plain = fm.rnd == Rnd::Rn && !fm.ftz && !fm.sat && !fm.relu && !fm.x2;
        let fast = match (op, fm.fmt) {
            (FOp::Add, f) if f == F32 && plain => Some(Alu::AddF32),
            (FOp::Sub, f) if f == F32 && plain => Some(Alu::SubF32),
            (FOp::Mul, f) if f == F32 && plain => Some(Alu::MulF32),
            (FOp::Fma, f) if f == F32 && plain => Some(Alu::FmaF32),
            (FOp::Div, f) if f == F32 && plain => Some(Alu::DivF32),
            (FOp::Sqrt, f) if f == F32 && plain => Some(Alu::SqrtF32),
            (FOp::Add, f) if f == F64 && plain => Some(Alu::AddF64),
            (FOp::Sub, f) if f == F64 && plain => Some(Alu::SubF64),
            (FOp::Mul, f) if f == F64 && plain => Some(Alu::MulF64),
            (FOp::Fma, f) if f == F64 && plain => Some(Alu::FmaF64),
            (FOp::Div, f) if f == F64 && plain => Some(Alu::DivF64),
            (FOp::Sqrt, f) if f == F64 && plain => Some(Alu::SqrtF64),
            _ => None,
        };
        let f = fast.unwrap_or(Alu::Float(op, fm));
        self.alu(ia, f, t, n)
    }

    fn peek_type(&self, m: &Mods<'_>) -> Option<Ty> {
        m.items
            .iter()
            .zip(&m.used)
            .filter(|(_, u)| !**u)
            .find_map(|(s, _)| Ty::from_dir(&format!(".{s}")))
    }
}
