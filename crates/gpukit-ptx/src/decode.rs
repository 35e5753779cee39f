//! Linking and decoding: one kernel and the device functions it calls become a
//! [`Program`]. Every instruction is checked here, so an instruction, type or modifier
//! the emulator does not implement is a [`ParseError`] naming it and its line.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::float::{self, BF16, F16, F32, F64, Fmt, Rnd};
use crate::program::*;

type PResult<T> = Result<T, ParseError>;

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

fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

/// Links the entry `m.funcs[entry]` into a program.
pub(crate) fn link_kernel(
    m: &ModuleAst,
    entry: usize,
    globals: &HashMap<String, GlobalVar>,
    funcs_by_name: &HashMap<String, usize>,
) -> PResult<Program> {
    let ef = &m.funcs[entry];
    // 1. Reachable functions (the kernel first).
    let mut order = vec![entry];
    let mut pos_of: HashMap<usize, u32> = HashMap::new();
    pos_of.insert(entry, 0);
    let mut queue = VecDeque::from([entry]);
    while let Some(fi) = queue.pop_front() {
        let f = &m.funcs[fi];
        for ia in &f.insts {
            if ia.opcode != "call" {
                continue;
            }
            let Some(name) = call_target(ia) else {
                return Err(ParseError::new(
                    ia.line,
                    format!("malformed call `{}`", ia.text),
                ));
            };
            let Some(&ci) = funcs_by_name.get(name) else {
                return Err(ParseError::new(
                    ia.line,
                    format!("call to unknown function `{name}`"),
                ));
            };
            if m.funcs[ci].entry {
                return Err(ParseError::new(ia.line, format!("call to kernel `{name}`")));
            }
            if !m.funcs[ci].has_body {
                return Err(ParseError::new(
                    ia.line,
                    format!("call to `{name}`, which has no body in this module"),
                ));
            }
            if let std::collections::hash_map::Entry::Vacant(e) = pos_of.entry(ci) {
                e.insert(order.len() as u32);
                order.push(ci);
                queue.push_back(ci);
            }
        }
    }

    let mut link = Link {
        m,
        globals,
        nregs: 0,
        npreds: 0,
        consts: HashMap::new(),
        const_list: Vec::new(),
        const_preds: HashMap::new(),
        const_pred_list: Vec::new(),
        shared_module: HashMap::new(),
        dyn_shared_offset: 0,
    };

    // 2. Registers, frames, pcs.
    let mut layouts = Vec::with_capacity(order.len());
    let mut pc = 0u64;
    for &fi in &order {
        let f = &m.funcs[fi];
        let r0 = link.nregs;
        let p0 = link.npreds;
        let mut reg_map = Vec::with_capacity(f.regs.len());
        for r in &f.regs {
            if r.ty == Ty::Pred {
                reg_map.push((true, link.npreds));
                link.npreds += 1;
            } else {
                reg_map.push((false, link.nregs));
                link.nregs += 1;
            }
        }
        // Frame: .local and .param variables, then formals and return values.
        let mut cur = 0u64;
        let mut var_off = vec![None; f.vars.len()];
        for (i, v) in f.vars.iter().enumerate() {
            if matches!(v.space, Space::Local | Space::Param) {
                cur = align_up(cur, u64::from(v.align));
                var_off[i] = Some(cur as u32);
                cur += v.size;
            }
        }
        let mut param_off = Vec::new();
        let mut ret_off = Vec::new();
        if !f.entry {
            for p in &f.params {
                cur = align_up(cur, u64::from(p.align));
                param_off.push(cur as u32);
                cur += u64::from(p.size);
            }
            for p in &f.rets {
                cur = align_up(cur, u64::from(p.align));
                ret_off.push(cur as u32);
                cur += u64::from(p.size);
            }
        }
        let frame = align_up(cur, 16);
        if frame > 1 << 24 {
            return Err(ParseError::new(f.line, "local frame too large"));
        }
        let entry_pc = pc as u32;
        pc += f.insts.len() as u64 + 1;
        if pc > u64::from(u32::MAX / 2) {
            return Err(ParseError::new(f.line, "program too large"));
        }
        layouts.push(Layout {
            reg_map,
            var_off,
            param_off,
            ret_off,
            shared_off: vec![None; f.vars.len()],
            meta: FuncMeta {
                entry_pc,
                frame_size: frame as u32,
                regs: (r0, 0),
                preds: (p0, 0),
            },
        });
    }

    // 3. Shared memory: module-level variables this kernel references, then the
    // functions' own (demoted) variables.
    let mut used_module_shared: Vec<usize> = Vec::new();
    for &fi in &order {
        for ia in &m.funcs[fi].insts {
            for o in &ia.operands {
                visit_names(o, &mut |n| {
                    if let Some(GlobalVar::Shared { index }) = globals.get(n)
                        && !used_module_shared.contains(index)
                    {
                        used_module_shared.push(*index);
                    }
                });
            }
        }
    }
    used_module_shared.sort_unstable();
    let mut sh = 0u64;
    for &gi in &used_module_shared {
        let v = &m.globals[gi];
        sh = align_up(sh, u64::from(v.align));
        link.shared_module.insert(v.name.clone(), sh as u32);
        sh += v.size;
    }
    for (k, &fi) in order.iter().enumerate() {
        let f = &m.funcs[fi];
        for (i, v) in f.vars.iter().enumerate() {
            if v.space == Space::Shared {
                sh = align_up(sh, u64::from(v.align));
                layouts[k].shared_off[i] = Some(sh as u32);
                sh += v.size;
            }
        }
    }
    if sh > 1 << 30 {
        return Err(ParseError::new(ef.line, "static shared memory too large"));
    }
    let dyn_align = globals
        .values()
        .filter_map(|g| match g {
            GlobalVar::DynShared { align } => Some(u64::from(*align)),
            _ => None,
        })
        .max()
        .unwrap_or(16)
        .max(16);
    link.dyn_shared_offset = align_up(sh, dyn_align) as u32;
    let static_shared = sh as u32;

    // 4. Kernel parameters.
    let mut params = Vec::new();
    let mut pb = 0u64;
    for p in &ef.params {
        pb = align_up(pb, u64::from(p.align));
        params.push(ParamSlot {
            name: p.name.clone(),
            ty: p.ty_text.clone(),
            offset: pb as u32,
            size: p.size,
            align: p.align,
        });
        pb += u64::from(p.size);
    }
    if pb > 1 << 16 {
        return Err(ParseError::new(ef.line, "kernel parameters too large"));
    }

    // 5. Decode.
    let entry_pcs: Vec<u32> = layouts.iter().map(|l| l.meta.entry_pc).collect();
    let metas_for_calls: Vec<(Vec<u32>, Vec<u32>)> = layouts
        .iter()
        .map(|l| (l.param_off.clone(), l.ret_off.clone()))
        .collect();
    let mut insts = Vec::with_capacity(pc as usize);
    let mut src = Vec::with_capacity(pc as usize);
    for (k, &fi) in order.iter().enumerate() {
        let f = &m.funcs[fi];
        let mut d = FnDecoder {
            link: &mut link,
            f,
            lay: &layouts[k],
            base_pc: layouts[k].meta.entry_pc,
            order: &order,
            pos_of: &pos_of,
            entry_pcs: &entry_pcs,
            call_layouts: &metas_for_calls,
            funcs_by_name,
            params: &params,
        };
        for ia in &f.insts {
            let op = d.decode(ia)?;
            let guard = match ia.guard {
                None => None,
                Some(g) => Some(PSrc {
                    reg: d.pred_reg(g.reg, ia.line)?,
                    neg: g.negated,
                }),
            };
            insts.push(Inst { op, guard });
            src.push(SrcInfo {
                line: ia.line,
                text: Arc::from(ia.text.as_str()),
            });
        }
        // Falling off the end returns.
        insts.push(Inst {
            op: if f.entry { Op::Exit } else { Op::Ret },
            guard: None,
        });
        src.push(SrcInfo {
            line: f.line,
            text: Arc::from(format!("<end of {}>", f.name).as_str()),
        });
    }
    let mut funcs: Vec<FuncMeta> = layouts.into_iter().map(|l| l.meta).collect();
    // Register ranges: each function owns [its first, next function's first).
    for k in 0..funcs.len() {
        let (rhi, phi) = if k + 1 < funcs.len() {
            (funcs[k + 1].regs.0, funcs[k + 1].preds.0)
        } else {
            (link.nregs, link.npreds)
        };
        funcs[k].regs.1 = rhi;
        funcs[k].preds.1 = phi;
    }
    Ok(Program {
        insts,
        src,
        nregs: link.nregs,
        npreds: link.npreds,
        consts: link.const_list,
        const_preds: link.const_pred_list,
        funcs,
        params,
        param_bytes: pb as u32,
        static_shared,
        dyn_shared_offset: link.dyn_shared_offset,
        maxntid: ef.maxntid,
        reqntid: ef.reqntid,
    })
}

/// The called function's name in `call (r), f, (a);` / `call f, (a);` / `call f;`.
fn call_target(ia: &InstAst) -> Option<&str> {
    ia.operands.iter().find_map(|o| match o {
        Operand::Sym(Sym::Name(n)) => Some(n.as_str()),
        _ => None,
    })
}

fn visit_names(o: &Operand, f: &mut impl FnMut(&str)) {
    match o {
        Operand::Sym(Sym::Name(n)) | Operand::SymOff(Sym::Name(n), _) => f(n),
        Operand::Addr(AddrBase::Sym(Sym::Name(n)), _) => f(n),
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| visit_names(o, f)),
        Operand::Pair(a, b) => {
            visit_names(a, f);
            visit_names(b, f);
        }
        Operand::Not(a) => visit_names(a, f),
        _ => {}
    }
}

struct Layout {
    reg_map: Vec<(bool, u32)>,
    var_off: Vec<Option<u32>>,
    param_off: Vec<u32>,
    ret_off: Vec<u32>,
    shared_off: Vec<Option<u32>>,
    meta: FuncMeta,
}

struct Link<'m> {
    m: &'m ModuleAst,
    globals: &'m HashMap<String, GlobalVar>,
    nregs: u32,
    npreds: u32,
    consts: HashMap<ConstInit, u32>,
    const_list: Vec<(u32, ConstInit)>,
    const_preds: HashMap<bool, u32>,
    const_pred_list: Vec<(u32, bool)>,
    shared_module: HashMap<String, u32>,
    dyn_shared_offset: u32,
}

impl Link<'_> {
    fn const_reg(&mut self, c: ConstInit) -> u32 {
        if let Some(&r) = self.consts.get(&c) {
            return r;
        }
        let r = self.nregs;
        self.nregs += 1;
        self.consts.insert(c, r);
        self.const_list.push((r, c));
        r
    }
    fn const_pred(&mut self, v: bool) -> u32 {
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
enum SymLoc {
    /// A constant address (host address, shared offset, param-window address).
    Abs(MemSpace, u64),
    /// Offset in the current function's frame.
    Frame(u32),
}

/// The modifiers of one instruction, consumed as the decoder recognises them.
struct Mods<'a> {
    items: &'a [String],
    used: Vec<bool>,
}

impl<'a> Mods<'a> {
    fn new(items: &'a [String]) -> Self {
        Mods {
            items,
            used: vec![false; items.len()],
        }
    }
    fn has(&mut self, m: &str) -> bool {
        for (i, it) in self.items.iter().enumerate() {
            if !self.used[i] && it == m {
                self.used[i] = true;
                return true;
            }
        }
        false
    }
    fn one_of(&mut self, opts: &[&'static str]) -> Option<&'static str> {
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
    fn types(&mut self) -> Vec<Ty> {
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
    fn ignore_hints(&mut self) {
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
    fn leftover(&self) -> Option<&'a str> {
        self.items
            .iter()
            .zip(&self.used)
            .find(|(_, u)| !**u)
            .map(|(s, _)| s.as_str())
    }
}

struct FnDecoder<'a, 'm> {
    link: &'a mut Link<'m>,
    f: &'a FuncAst,
    lay: &'a Layout,
    base_pc: u32,
    order: &'a [usize],
    pos_of: &'a HashMap<usize, u32>,
    entry_pcs: &'a [u32],
    call_layouts: &'a [(Vec<u32>, Vec<u32>)],
    funcs_by_name: &'a HashMap<String, usize>,
    params: &'a [ParamSlot],
}

fn fmt_of(t: Ty) -> Option<Fmt> {
    Some(match t {
        Ty::F16 | Ty::F16x2 => F16,
        Ty::BF16 | Ty::BF16x2 => BF16,
        Ty::F32 => F32,
        Ty::F64 => F64,
        _ => return None,
    })
}

fn width_of(t: Ty) -> Option<W> {
    W::from_bits(t.bits())
}

fn rnd_of(s: &str) -> Option<Rnd> {
    Some(match s {
        "rn" | "rni" => Rnd::Rn,
        "rz" | "rzi" => Rnd::Rz,
        "rm" | "rmi" => Rnd::Rm,
        "rp" | "rpi" => Rnd::Rp,
        "rna" => Rnd::Rna,
        _ => return None,
    })
}

const FRND: &[&str] = &["rn", "rz", "rm", "rp"];
const IRND: &[&str] = &["rni", "rzi", "rmi", "rpi"];

impl FnDecoder<'_, '_> {
    fn err<T>(&self, ia: &InstAst, msg: impl std::fmt::Display) -> PResult<T> {
        Err(ParseError::new(ia.line, format!("{msg}: `{}`", ia.text)))
    }

    fn unsupported<T>(&self, ia: &InstAst) -> PResult<T> {
        let full = std::iter::once(ia.opcode.as_str())
            .chain(ia.mods.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(".");
        Err(ParseError::new(
            ia.line,
            format!("unsupported instruction `{full}`: `{}`", ia.text),
        ))
    }

    fn pred_reg(&self, id: u32, line: u32) -> PResult<u32> {
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

    fn symbol(&self, ia: &InstAst, s: &Sym) -> PResult<SymLoc> {
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
    fn src(&mut self, ia: &InstAst, o: &Operand, ty: Ty) -> PResult<u32> {
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

    fn dst(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        match o {
            Operand::Sym(Sym::Reg(id)) => match self.lay.reg_map.get(*id as usize) {
                Some(&(false, r)) => Ok(r),
                _ => self.err(ia, "expected a value register"),
            },
            Operand::Sink => Ok(SINK),
            _ => self.err(ia, "expected a destination register"),
        }
    }

    fn psrc(&mut self, ia: &InstAst, o: &Operand) -> PResult<PSrc> {
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

    fn pdst(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        match o {
            Operand::Sym(Sym::Reg(id)) => self.pred_reg(*id, ia.line),
            Operand::Sink => Ok(SINK),
            _ => self.err(ia, "expected a predicate destination"),
        }
    }

    /// An address operand in the given state space.
    fn addr(&mut self, ia: &InstAst, o: &Operand, space: MemSpace) -> PResult<(MemSpace, Addr)> {
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

    fn mem_space(m: &mut Mods<'_>) -> MemSpace {
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

    fn check_mods(&self, ia: &InstAst, m: &Mods<'_>) -> PResult<()> {
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

    fn nops(&self, ia: &InstAst, n: usize) -> PResult<()> {
        if ia.operands.len() == n {
            Ok(())
        } else {
            self.err(ia, format!("expected {n} operands"))
        }
    }

    fn one_type(&self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Ty> {
        let t = m.types();
        if t.len() == 1 {
            Ok(t[0])
        } else {
            self.err(ia, "expected exactly one type")
        }
    }

    fn alu(&mut self, ia: &InstAst, f: Alu, ty: Ty, n_src: usize) -> PResult<Op> {
        self.nops(ia, n_src + 1)?;
        let d = self.dst(ia, &ia.operands[0])?;
        let mut s = [0u32; 4];
        for k in 0..n_src {
            s[k] = self.src(ia, &ia.operands[k + 1], ty)?;
        }
        Ok(Op::Alu { f, d, s })
    }

    fn decode(&mut self, ia: &InstAst) -> PResult<Op> {
        let mut m = Mods::new(&ia.mods);
        let op = match ia.opcode.as_str() {
            "add" | "sub" => self.add_sub(ia, &mut m)?,
            "addc" | "subc" => {
                let cc = m.has("cc");
                let t = self.one_type(ia, &mut m)?;
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
                self.alu(ia, f, t, 2)?
            }
            "mul" => self.mul(ia, &mut m)?,
            "mad" => self.mad(ia, &mut m)?,
            "madc" => {
                let hi = match m.one_of(&["lo", "hi"]) {
                    Some("hi") => true,
                    Some(_) => false,
                    None => return self.unsupported(ia),
                };
                let cc = m.has("cc");
                let t = self.one_type(ia, &mut m)?;
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
                )?
            }
            "mul24" | "mad24" => {
                let hi = match m.one_of(&["lo", "hi"]) {
                    Some("hi") => true,
                    Some(_) => false,
                    None => return self.unsupported(ia),
                };
                let t = self.one_type(ia, &mut m)?;
                if ia.opcode == "mad24" || !matches!(t, Ty::U32 | Ty::S32) {
                    return self.unsupported(ia);
                }
                let f = match (hi, t == Ty::S32) {
                    (false, false) => Alu::Mul24LoU,
                    (false, true) => Alu::Mul24LoS,
                    (true, false) => Alu::Mul24HiU,
                    (true, true) => Alu::Mul24HiS,
                };
                self.alu(ia, f, t, 2)?
            }
            "fma" => {
                let t = self.float_mods(ia, &mut m, true)?;
                self.float_op(ia, FOp::Fma, t, 3)?
            }
            "div" => self.div(ia, &mut m)?,
            "rem" => {
                let t = self.one_type(ia, &mut m)?;
                let w = self.int_width(ia, t)?;
                let f = if t.is_signed() {
                    Alu::RemS(w)
                } else {
                    Alu::RemU(w)
                };
                self.alu(ia, f, t, 2)?
            }
            "abs" | "neg" => self.abs_neg(ia, &mut m)?,
            "min" | "max" => self.min_max(ia, &mut m)?,
            "sad" => {
                let t = self.one_type(ia, &mut m)?;
                let w = self.int_width(ia, t)?;
                let f = if t.is_signed() {
                    Alu::SadS(w)
                } else {
                    Alu::SadU(w)
                };
                self.alu(ia, f, t, 3)?
            }
            "sqrt" | "rcp" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                self.unary_float(ia, &mut m)?
            }
            "copysign" => {
                let t = self.one_type(ia, &mut m)?;
                let Some(f) = fmt_of(t).filter(|f| *f == F32 || *f == F64) else {
                    return self.unsupported(ia);
                };
                self.alu(ia, Alu::Copysign(f), t, 2)?
            }
            "testp" => {
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
                let t = self.one_type(ia, &mut m)?;
                let Some(fmt) = fmt_of(t).filter(|f| *f == F32 || *f == F64) else {
                    return self.unsupported(ia);
                };
                self.nops(ia, 2)?;
                let p = self.pdst(ia, &ia.operands[0])?;
                let a = self.src(ia, &ia.operands[1], t)?;
                Op::Testp { op, fmt, p, a }
            }
            "and" | "or" | "xor" | "not" | "cnot" => self.logic(ia, &mut m)?,
            "shl" | "shr" => {
                let t = self.one_type(ia, &mut m)?;
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
                Op::Alu {
                    f,
                    d,
                    s: [a, b, 0, 0],
                }
            }
            "popc" | "clz" | "brev" => {
                let t = self.one_type(ia, &mut m)?;
                let w = self.int_width(ia, t)?;
                if w != W::W32 && w != W::W64 {
                    return self.unsupported(ia);
                }
                let f = match ia.opcode.as_str() {
                    "popc" => Alu::Popc(w),
                    "clz" => Alu::Clz(w),
                    _ => Alu::Brev(w),
                };
                self.alu(ia, f, t, 1)?
            }
            "bfind" => {
                let shiftamt = m.has("shiftamt");
                let t = self.one_type(ia, &mut m)?;
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
                )?
            }
            "bfe" => {
                let t = self.one_type(ia, &mut m)?;
                let w = self.int_width(ia, t)?;
                if w != W::W32 && w != W::W64 {
                    return self.unsupported(ia);
                }
                self.nops(ia, 4)?;
                let d = self.dst(ia, &ia.operands[0])?;
                let a = self.src(ia, &ia.operands[1], t)?;
                let b = self.src(ia, &ia.operands[2], Ty::U32)?;
                let c = self.src(ia, &ia.operands[3], Ty::U32)?;
                Op::Alu {
                    f: Alu::Bfe {
                        w,
                        signed: t.is_signed(),
                    },
                    d,
                    s: [a, b, c, 0],
                }
            }
            "bfi" => {
                let t = self.one_type(ia, &mut m)?;
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
                Op::Alu {
                    f: Alu::Bfi(w),
                    d,
                    s: [a, b, c, e],
                }
            }
            "prmt" => {
                let mode = match m.one_of(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]) {
                    None => 0,
                    Some("f4e") => 1,
                    Some("b4e") => 2,
                    Some("rc8") => 3,
                    Some("ecl") => 4,
                    Some("ecr") => 5,
                    Some(_) => 6,
                };
                let t = self.one_type(ia, &mut m)?;
                if t != Ty::B32 {
                    return self.unsupported(ia);
                }
                self.alu(ia, Alu::Prmt(mode), t, 3)?
            }
            "lop3" => {
                let t = self.one_type(ia, &mut m)?;
                if t != Ty::B32 {
                    return self.unsupported(ia);
                }
                self.alu(ia, Alu::Lop3, t, 4)?
            }
            "shf" => {
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
                let t = self.one_type(ia, &mut m)?;
                if t != Ty::B32 {
                    return self.unsupported(ia);
                }
                self.alu(ia, Alu::Shf { left, clamp }, t, 3)?
            }
            "setp" => self.setp(ia, &mut m)?,
            "set" => self.set(ia, &mut m)?,
            "selp" => {
                let t = self.one_type(ia, &mut m)?;
                self.nops(ia, 4)?;
                let d = self.dst(ia, &ia.operands[0])?;
                let a = self.src(ia, &ia.operands[1], t)?;
                let b = self.src(ia, &ia.operands[2], t)?;
                let p = self.psrc(ia, &ia.operands[3])?;
                Op::Selp { d, a, b, p }
            }
            "mov" => self.mov(ia, &mut m)?,
            "cvt" => self.cvt(ia, &mut m)?,
            "cvta" => {
                let to = m.has("to");
                let space =
                    match m.one_of(&["global", "shared", "shared::cta", "local", "const", "param"])
                    {
                        Some("global") => MemSpace::Global,
                        Some("shared") | Some("shared::cta") => MemSpace::Shared,
                        Some("local") => MemSpace::Local,
                        Some("const") => MemSpace::Const,
                        Some(_) => MemSpace::KParam,
                        None => return self.unsupported(ia),
                    };
                let t = self.one_type(ia, &mut m)?;
                if !matches!(t, Ty::U64 | Ty::U32 | Ty::B64 | Ty::B32) {
                    return self.unsupported(ia);
                }
                self.nops(ia, 2)?;
                let d = self.dst(ia, &ia.operands[0])?;
                let a = self.src(ia, &ia.operands[1], Ty::U64)?;
                Op::Cvta {
                    to_generic: !to,
                    narrow: matches!(t, Ty::U32 | Ty::B32),
                    space,
                    d,
                    a,
                }
            }
            "isspacep" => {
                let space =
                    match m.one_of(&["global", "shared", "shared::cta", "local", "const", "param"])
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
                Op::Isspacep { space, p, a }
            }
            "ld" | "ldu" => self.ld(ia, &mut m)?,
            "st" => self.st(ia, &mut m)?,
            "atom" | "red" => self.atom(ia, &mut m)?,
            "cp" => self.cp(ia, &mut m)?,
            "prefetch" | "prefetchu" => {
                m.one_of(&["global", "local", "L1", "L2", "tensormap"]);
                m.ignore_hints();
                m.one_of(&["L1", "L2"]);
                Op::Nop
            }
            "membar" => {
                m.one_of(&["cta", "gl", "sys", "proxy"]);
                Op::Nop
            }
            "fence" => {
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
            "nanosleep" | "pmevent" | "discard" | "applypriority" | "griddepcontrol" => {
                m.used.iter_mut().for_each(|u| *u = true);
                Op::Nop
            }
            "bar" | "barrier" => self.bar(ia, &mut m)?,
            "shfl" => self.shfl(ia, &mut m)?,
            "vote" => self.vote(ia, &mut m)?,
            "redux" => self.redux(ia, &mut m)?,
            "match" => {
                if !m.has("sync") {
                    return self.unsupported(ia);
                }
                let all = match m.one_of(&["any", "all"]) {
                    Some("all") => true,
                    Some(_) => false,
                    None => return self.unsupported(ia),
                };
                let t = self.one_type(ia, &mut m)?;
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
                Op::Match {
                    all,
                    wide,
                    d,
                    p,
                    a,
                    mask,
                }
            }
            "activemask" => {
                let t = self.one_type(ia, &mut m)?;
                if t != Ty::B32 {
                    return self.unsupported(ia);
                }
                self.nops(ia, 1)?;
                Op::Activemask {
                    d: self.dst(ia, &ia.operands[0])?,
                }
            }
            "createpolicy" => {
                m.used.iter_mut().for_each(|u| *u = true);
                if ia.operands.is_empty() {
                    return self.err(ia, "expected operands");
                }
                let d = self.dst(ia, &ia.operands[0])?;
                let z = self.link.const_reg(ConstInit::Imm(0));
                Op::Alu {
                    f: Alu::Mov,
                    d,
                    s: [z, 0, 0, 0],
                }
            }
            "bra" => {
                m.has("uni");
                self.nops(ia, 1)?;
                Op::Bra {
                    target: self.label(ia, &ia.operands[0])?,
                }
            }
            "brx" => {
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
                Op::Brx {
                    idx,
                    targets: Arc::from(targets),
                }
            }
            "call" => self.call(ia, &mut m)?,
            "ret" => {
                m.has("uni");
                self.nops(ia, 0)?;
                if self.f.entry { Op::Exit } else { Op::Ret }
            }
            "exit" => {
                self.nops(ia, 0)?;
                Op::Exit
            }
            "trap" => Op::Trap,
            "brkpt" => Op::Brkpt,
            _ => return self.unsupported(ia),
        };
        self.check_mods(ia, &m)?;
        Ok(op)
    }

    fn label(&self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        let Operand::Sym(Sym::Name(n)) = o else {
            return self.err(ia, "expected a label");
        };
        match self.f.labels.get(n) {
            Some(&i) => Ok(self.base_pc + i),
            None => self.err(ia, format!("unknown label `{n}`")),
        }
    }

    fn int_width(&self, ia: &InstAst, t: Ty) -> PResult<W> {
        if !t.is_int() {
            return self.unsupported(ia);
        }
        match width_of(t) {
            Some(w) => Ok(w),
            None => self.unsupported(ia),
        }
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

    fn add_sub(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn peek_type(&self, m: &Mods<'_>) -> Option<Ty> {
        m.items
            .iter()
            .zip(&m.used)
            .filter(|(_, u)| !**u)
            .find_map(|(s, _)| Ty::from_dir(&format!(".{s}")))
    }

    fn mul(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn mad(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn div(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn unary_float(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn abs_neg(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn min_max(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn logic(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn setp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn set(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn mov(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn cvt(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn vec_count(&self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<u8> {
        Ok(match m.one_of(&["v2", "v4", "v8"]) {
            Some("v2") => 2,
            Some("v4") => 4,
            Some("v8") => 8,
            Some(_) => return self.unsupported(ia),
            None => 1,
        })
    }

    fn ld(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn st(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn atom(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn cp(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn u32_src(&mut self, ia: &InstAst, o: &Operand) -> PResult<u32> {
        self.src(ia, o, Ty::U32)
    }

    fn bar(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn shfl(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn vote(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn redux(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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

    fn call(&mut self, ia: &InstAst, m: &mut Mods<'_>) -> PResult<Op> {
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
}
