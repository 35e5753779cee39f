//! Linking: the reachable functions of one kernel are laid out (registers, frames,
//! shared memory, parameters) and decoded into one [`Program`].

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::program::*;

use super::types::*;

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
    let mut prog = Program {
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
        zero_slots: None,
    };
    super::regalloc::compact(&mut prog);
    Ok(prog)
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
