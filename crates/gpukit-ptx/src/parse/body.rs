//! Function bodies: scoped register declarations, labels, guarded instructions and
//! every operand form.

use std::collections::HashMap;

use crate::ast::*;
use crate::error::Space;
use crate::lex::Tok;

use super::cursor::*;

/// Largest register range (`%r<N>`) accepted.
const MAX_REG_RANGE: u64 = 1 << 24;

/// Deepest `{ }` nesting accepted in a body.
const MAX_DEPTH: usize = 256;

impl<'a> Parser<'a> {
    pub(super) fn body(&mut self, f: &mut FuncAst) -> PResult<()> {
        let mut ctx = FuncCtx {
            scopes: vec![Scope::default(), Scope::default()],
            range_regs: HashMap::new(),
            next_range: 0,
        };
        for (i, p) in f.params.iter().enumerate() {
            ctx.scopes[0]
                .names
                .insert(p.name.clone(), Sym::Param(i as u32));
        }
        for (i, p) in f.rets.iter().enumerate() {
            ctx.scopes[0]
                .names
                .insert(p.name.clone(), Sym::Ret(i as u32));
        }
        loop {
            let tok = match self.peek() {
                Some(t) => t,
                None => return self.err(format!("unterminated body of `{}`", f.name)),
            };
            match tok {
                Tok::Punct(b'}') => {
                    self.pos += 1;
                    ctx.scopes.pop();
                    if ctx.scopes.len() <= 1 {
                        return Ok(());
                    }
                }
                Tok::Punct(b'{') => {
                    self.pos += 1;
                    if ctx.scopes.len() > MAX_DEPTH {
                        return self.err("blocks nested too deeply");
                    }
                    ctx.scopes.push(Scope::default());
                }
                Tok::Punct(b';') => self.pos += 1,
                Tok::Ident(name) if self.peek_at(1) == Some(Tok::Punct(b':')) => {
                    self.pos += 2;
                    if let Some(Tok::Dir(".branchtargets")) = self.peek() {
                        self.pos += 1;
                        let mut targets = Vec::new();
                        loop {
                            targets.push(self.ident()?.to_string());
                            if !self.eat_punct(b',') {
                                break;
                            }
                        }
                        self.expect_punct(b';')?;
                        f.branch_targets.insert(name.to_string(), targets);
                        continue;
                    }
                    if let Some(Tok::Dir(".callprototype")) = self.peek() {
                        return self.err("indirect calls (.callprototype) are not supported");
                    }
                    if f.labels
                        .insert(name.to_string(), f.insts.len() as u32)
                        .is_some()
                    {
                        return self.err(format!("duplicate label `{name}`"));
                    }
                }
                Tok::Dir(".reg") => {
                    self.pos += 1;
                    self.reg_decl(f, &mut ctx)?;
                }
                Tok::Dir(d @ (".local" | ".shared" | ".param" | ".const" | ".global")) => {
                    self.pos += 1;
                    let space = match d {
                        ".local" => Space::Local,
                        ".shared" => Space::Shared,
                        ".param" => Space::Param,
                        ".const" => Space::Const,
                        _ => Space::Global,
                    };
                    let vars = self.var_decl(space, false)?;
                    for v in vars {
                        let id = f.vars.len() as u32;
                        if let Some(s) = ctx.scopes.last_mut() {
                            s.names.insert(v.name.clone(), Sym::Var(id));
                        }
                        f.vars.push(v);
                    }
                }
                Tok::Dir(".pragma") => {
                    self.pos += 1;
                    match self.next()? {
                        Tok::Str(_) => {}
                        _ => return self.err("expected a string after .pragma"),
                    }
                    self.expect_punct(b';')?;
                }
                Tok::Dir(".loc") | Tok::Dir(".file") => self.skip_line(),
                Tok::Dir(d) => return self.err(format!("unsupported directive `{d}` in a body")),
                Tok::Punct(b'@') | Tok::Ident(_) => {
                    let inst = self.instruction(f, &mut ctx)?;
                    f.insts.push(inst);
                }
                _ => return self.err(format!("unexpected {} in a body", self.describe())),
            }
        }
    }

    fn reg_decl(&mut self, f: &mut FuncAst, ctx: &mut FuncCtx) -> PResult<()> {
        let mut ty = None;
        while let Some(Tok::Dir(d)) = self.peek() {
            self.pos += 1;
            match d {
                ".v2" | ".v4" | ".v8" => {
                    return self.err("vector registers (.reg .v2/.v4) are not supported");
                }
                _ => match Ty::from_dir(d) {
                    Some(t) => ty = Some(t),
                    None => return self.err(format!("unexpected `{d}` in a register declaration")),
                },
            }
        }
        let ty = match ty {
            Some(t) => t,
            None => return self.err("register declaration without a type"),
        };
        if ty == Ty::B128 {
            return self.err(".b128 registers are not supported");
        }
        loop {
            let name = self.ident()?.to_string();
            if self.eat_punct(b'<') {
                let n = self.int()?;
                self.expect_punct(b'>')?;
                if n > MAX_REG_RANGE {
                    return self.err(format!("register range {name}<{n}> too large"));
                }
                let rid = ctx.next_range;
                ctx.next_range = ctx.next_range.wrapping_add(1);
                if let Some(s) = ctx.scopes.last_mut() {
                    s.ranges.insert(name, (rid, n as u32, ty));
                }
            } else {
                let id = f.regs.len() as u32;
                f.regs.push(RegDecl { ty });
                if let Some(s) = ctx.scopes.last_mut() {
                    s.names.insert(name, Sym::Reg(id));
                }
            }
            if !self.eat_punct(b',') {
                break;
            }
        }
        self.expect_punct(b';')
    }

    fn resolve(&self, name: &str, f: &mut FuncAst, ctx: &mut FuncCtx) -> Sym {
        // Split a trailing decimal number for range lookups (`%rd12` -> `%rd`, 12).
        let digits = name
            .bytes()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let (prefix, num) = if digits > 0 && digits < name.len() && digits <= 9 {
            let (p, n) = name.split_at(name.len() - digits);
            (p, n.parse::<u32>().ok())
        } else {
            (name, None)
        };
        for scope in ctx.scopes.iter().rev() {
            if let Some(s) = scope.names.get(name) {
                return s.clone();
            }
            if let Some(n) = num
                && let Some(&(rid, count, ty)) = scope.ranges.get(prefix)
                && n < count
            {
                let next = f.regs.len() as u32;
                let id = *ctx.range_regs.entry((rid, n)).or_insert(next);
                if id == next {
                    f.regs.push(RegDecl { ty });
                }
                return Sym::Reg(id);
            }
        }
        Sym::Name(name.to_string())
    }

    fn instruction(&mut self, f: &mut FuncAst, ctx: &mut FuncCtx) -> PResult<InstAst> {
        let start_tok = self.pos;
        let line = self.line();
        let mut guard = None;
        if self.eat_punct(b'@') {
            let negated = self.eat_punct(b'!');
            let name = self.ident()?;
            match self.resolve(name, f, ctx) {
                Sym::Reg(id) if f.regs.get(id as usize).is_some_and(|r| r.ty == Ty::Pred) => {
                    guard = Some(Guard { reg: id, negated });
                }
                _ => return self.err(format!("guard `{name}` is not a predicate register")),
            }
        }
        let opcode = self.ident()?.to_string();
        let mut mods = Vec::new();
        while let Some(Tok::Dir(d)) = self.peek() {
            self.pos += 1;
            mods.push(d[1..].to_string());
        }
        let mut operands = Vec::new();
        if !self.eat_punct(b';') {
            loop {
                let o = self.operand(f, ctx, true)?;
                operands.push(o);
                if self.eat_punct(b';') {
                    break;
                }
                self.expect_punct(b',')?;
            }
        }
        let text = self.text_between(start_tok, self.pos);
        Ok(InstAst {
            line,
            text,
            guard,
            opcode,
            mods,
            operands,
        })
    }

    /// The source text of tokens `[a, b)`, whitespace collapsed, without the `;`.
    fn text_between(&self, a: usize, b: usize) -> String {
        let (Some(s), Some(e)) = (self.toks.get(a), self.toks.get(b.saturating_sub(1))) else {
            return String::new();
        };
        let end = if e.tok == Tok::Punct(b';') {
            e.start
        } else {
            e.end
        };
        let raw = self.src.get(s.start..end.max(s.start)).unwrap_or("");
        let mut out = String::with_capacity(raw.len());
        let mut space = false;
        for ch in raw.chars() {
            if ch.is_whitespace() {
                space = true;
            } else {
                if space && !out.is_empty() {
                    out.push(' ');
                }
                space = false;
                out.push(ch);
            }
        }
        out
    }

    fn special(name: &str, comp: Option<&str>) -> Option<Special> {
        let c = match comp {
            Some(".x") => Some(0u8),
            Some(".y") => Some(1),
            Some(".z") => Some(2),
            _ => None,
        };
        Some(match (name, c) {
            ("%tid", Some(c)) => Special::Tid(c),
            ("%ntid", Some(c)) => Special::Ntid(c),
            ("%ctaid", Some(c)) => Special::Ctaid(c),
            ("%nctaid", Some(c)) => Special::Nctaid(c),
            ("%laneid", None) => Special::LaneId,
            ("%warpid", None) => Special::WarpId,
            ("%nwarpid", None) => Special::NWarpId,
            ("%smid", None) => Special::SmId,
            ("%nsmid", None) => Special::NSmId,
            ("%gridid", None) => Special::GridId,
            ("%lanemask_eq", None) => Special::LaneMaskEq,
            ("%lanemask_le", None) => Special::LaneMaskLe,
            ("%lanemask_lt", None) => Special::LaneMaskLt,
            ("%lanemask_ge", None) => Special::LaneMaskGe,
            ("%lanemask_gt", None) => Special::LaneMaskGt,
            ("%clock", None) => Special::Clock,
            ("%clock64", None) => Special::Clock64,
            ("%globaltimer", None) | ("%globaltimer_lo", None) | ("%globaltimer_hi", None) => {
                Special::GlobalTimer
            }
            ("%dynamic_smem_size", None) => Special::DynamicSmemSize,
            ("%total_smem_size", None) => Special::TotalSmemSize,
            (n, None)
                if n.starts_with("%envreg")
                    || n.starts_with("%pm")
                    || n.starts_with("%reserved_smem") =>
            {
                Special::Zero
            }
            _ => return None,
        })
    }

    fn operand(&mut self, f: &mut FuncAst, ctx: &mut FuncCtx, top: bool) -> PResult<Operand> {
        let tok = self.next()?;
        let o = match tok {
            Tok::Punct(b'{') if top => {
                let mut v = Vec::new();
                if !self.eat_punct(b'}') {
                    loop {
                        v.push(self.operand(f, ctx, false)?);
                        if self.eat_punct(b'}') {
                            break;
                        }
                        self.expect_punct(b',')?;
                    }
                }
                Operand::Vector(v)
            }
            Tok::Punct(b'(') if top => {
                let mut v = Vec::new();
                if !self.eat_punct(b')') {
                    loop {
                        v.push(self.operand(f, ctx, false)?);
                        if self.eat_punct(b')') {
                            break;
                        }
                        self.expect_punct(b',')?;
                    }
                }
                Operand::List(v)
            }
            Tok::Punct(b'[') => {
                let base = match self.next()? {
                    Tok::Ident(n) => AddrBase::Sym(self.resolve(n, f, ctx)),
                    Tok::Int(v) => AddrBase::Imm(v),
                    _ => {
                        self.pos -= 1;
                        return self.err(format!("bad address base {}", self.describe()));
                    }
                };
                let mut off: i64 = 0;
                loop {
                    if self.eat_punct(b'+') {
                        let v = self.int()?;
                        off = off.wrapping_add(v as i64);
                    } else if self.eat_punct(b'-') {
                        let v = self.int()?;
                        off = off.wrapping_sub(v as i64);
                    } else {
                        break;
                    }
                }
                self.expect_punct(b']')?;
                Operand::Addr(base, off)
            }
            Tok::Punct(b'!') => {
                let inner = match self.next()? {
                    Tok::Ident(n) => Operand::Sym(self.resolve(n, f, ctx)),
                    _ => {
                        self.pos -= 1;
                        return self.err("expected a predicate after `!`");
                    }
                };
                Operand::Not(Box::new(inner))
            }
            Tok::Punct(b'-') => match self.next()? {
                Tok::Int(v) => Operand::Imm(Imm::Int(v.wrapping_neg())),
                Tok::Float(v) => Operand::Imm(Imm::Float(-v)),
                Tok::F32(b) => Operand::Imm(Imm::F32(b ^ 0x8000_0000)),
                Tok::F64(b) => Operand::Imm(Imm::F64(b ^ (1 << 63))),
                _ => {
                    self.pos -= 1;
                    return self.err("expected a number after `-`");
                }
            },
            Tok::Int(v) => Operand::Imm(Imm::Int(v)),
            Tok::F32(b) => Operand::Imm(Imm::F32(b)),
            Tok::F64(b) => Operand::Imm(Imm::F64(b)),
            Tok::Float(v) => Operand::Imm(Imm::Float(v)),
            Tok::Ident("_") => Operand::Sink,
            Tok::Ident(n) => {
                let sym = self.resolve(n, f, ctx);
                if let Sym::Name(_) = sym
                    && n.starts_with('%')
                {
                    let comp = match self.peek() {
                        Some(Tok::Dir(d @ (".x" | ".y" | ".z"))) => {
                            self.pos += 1;
                            Some(d)
                        }
                        _ => None,
                    };
                    match Self::special(n, comp) {
                        Some(s) => Operand::Special(s),
                        None => return self.err(format!("unknown register `{n}`")),
                    }
                } else if self.peek() == Some(Tok::Punct(b'+'))
                    && matches!(self.peek_at(1), Some(Tok::Int(_)))
                {
                    self.pos += 1;
                    let v = self.int()?;
                    Operand::SymOff(sym, v as i64)
                } else {
                    Operand::Sym(sym)
                }
            }
            _ => {
                self.pos -= 1;
                return self.err(format!("unexpected {} in an operand", self.describe()));
            }
        };
        if top && self.eat_punct(b'|') {
            let second = self.operand(f, ctx, false)?;
            return Ok(Operand::Pair(Box::new(o), Box::new(second)));
        }
        Ok(o)
    }
}
