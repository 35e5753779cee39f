//! The hand-written PTX parser: tokens to [`ModuleAst`]. It covers the grammar NVRTC
//! emits (module directives, `.entry`/`.func` with parameter lists and performance
//! directives, variables with initialisers, scoped register declarations, labels,
//! guarded instructions with every operand form). It never panics and every loop
//! consumes input, so malformed text is an error, never a hang.

use std::collections::HashMap;

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::lex::{Tok, Token, lex};

/// Largest register range (`%r<N>`) accepted.
const MAX_REG_RANGE: u64 = 1 << 24;
/// Largest variable accepted (bytes): module `.global`/`.const` variables are allocated
/// by the emulator, so a corrupted size must not become a huge allocation.
const MAX_VAR_BYTES: u64 = 1 << 28;
/// Deepest `{ }` nesting accepted in a body.
const MAX_DEPTH: usize = 256;

type PResult<T> = Result<T, ParseError>;

/// Parses a whole module.
pub(crate) fn parse_module(src: &str) -> PResult<ModuleAst> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0, src };
    p.module()
}

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    src: &'a str,
}

/// One `{ }` scope of a body.
#[derive(Default)]
struct Scope {
    names: HashMap<String, Sym>,
    /// Register ranges: prefix to (range id, count, type).
    ranges: HashMap<String, (u32, u32, Ty)>,
}

struct FuncCtx {
    scopes: Vec<Scope>,
    range_regs: HashMap<(u32, u32), u32>,
    next_range: u32,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).map(|t| t.tok)
    }

    fn peek_at(&self, k: usize) -> Option<Tok<'a>> {
        self.toks.get(self.pos + k).map(|t| t.tok)
    }

    fn line(&self) -> u32 {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(0, |t| t.line)
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError::new(self.line(), msg))
    }

    fn next(&mut self) -> PResult<Tok<'a>> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok)
            }
            None => self.err("unexpected end of input"),
        }
    }

    fn eat_punct(&mut self, c: u8) -> bool {
        if self.peek() == Some(Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.err(format!(
                "expected `{}`, found {}",
                char::from(c),
                self.describe()
            ))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of input".to_string(),
            Some(Tok::Ident(s)) | Some(Tok::Dir(s)) => format!("`{s}`"),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Punct(c)) => format!("`{}`", char::from(c)),
            Some(t) => format!("{t:?}"),
        }
    }

    fn ident(&mut self) -> PResult<&'a str> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            _ => {
                self.pos -= 1;
                self.err(format!("expected a name, found {}", self.describe()))
            }
        }
    }

    fn int(&mut self) -> PResult<u64> {
        let neg = self.eat_punct(b'-');
        match self.next()? {
            Tok::Int(v) => Ok(if neg { v.wrapping_neg() } else { v }),
            _ => {
                self.pos -= 1;
                self.err(format!("expected an integer, found {}", self.describe()))
            }
        }
    }

    fn small_int(&mut self, what: &str, max: u64) -> PResult<u32> {
        let v = self.int()?;
        if v > max {
            return self.err(format!("{what} {v} is too large"));
        }
        Ok(v as u32)
    }

    /// Skips the rest of the current line (for `.loc`, `.file` and similar).
    fn skip_line(&mut self) {
        let line = self.line();
        while let Some(t) = self.toks.get(self.pos) {
            if t.line != line {
                break;
            }
            self.pos += 1;
        }
    }

    fn module(&mut self) -> PResult<ModuleAst> {
        let mut m = ModuleAst::default();
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Dir(".version") => {
                    self.pos += 1;
                    let v = match self.next()? {
                        Tok::Float(f) => format!("{f}"),
                        Tok::Int(i) => format!("{i}"),
                        _ => return self.err("expected a version number"),
                    };
                    m.version = Some(v);
                }
                Tok::Dir(".target") => {
                    self.pos += 1;
                    loop {
                        let t = self.ident()?;
                        m.target.push(t.to_string());
                        if !self.eat_punct(b',') {
                            break;
                        }
                    }
                }
                Tok::Dir(".address_size") => {
                    self.pos += 1;
                    let a = self.small_int("address size", 64)?;
                    if a != 64 {
                        return self.err("only .address_size 64 is supported");
                    }
                    m.address_size = Some(a);
                }
                Tok::Dir(".file") | Tok::Dir(".loc") => self.skip_line(),
                Tok::Dir(".section") => self.skip_section()?,
                Tok::Dir(".pragma") => {
                    self.pos += 1;
                    match self.next()? {
                        Tok::Str(_) => {}
                        _ => return self.err("expected a string after .pragma"),
                    }
                    self.expect_punct(b';')?;
                }
                Tok::Punct(b';') => self.pos += 1,
                Tok::Dir(_) => self.toplevel_decl(&mut m)?,
                _ => {
                    return self.err(format!(
                        "expected a directive at module level, found {}",
                        self.describe()
                    ));
                }
            }
        }
        Ok(m)
    }

    fn skip_section(&mut self) -> PResult<()> {
        self.pos += 1;
        while !self.eat_punct(b'{') {
            self.next()?;
        }
        let mut depth = 1u32;
        while depth > 0 {
            match self.next()? {
                Tok::Punct(b'{') => depth += 1,
                Tok::Punct(b'}') => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    /// `[.visible|.extern|.weak|.common] (.entry|.func|.global|.const|.shared ...)`.
    fn toplevel_decl(&mut self, m: &mut ModuleAst) -> PResult<()> {
        let mut is_extern = false;
        loop {
            match self.peek() {
                Some(Tok::Dir(".visible"))
                | Some(Tok::Dir(".weak"))
                | Some(Tok::Dir(".common")) => self.pos += 1,
                Some(Tok::Dir(".extern")) => {
                    is_extern = true;
                    self.pos += 1
                }
                _ => break,
            }
        }
        match self.peek() {
            Some(Tok::Dir(".entry")) => {
                self.pos += 1;
                let f = self.function(true)?;
                m.funcs.push(f);
            }
            Some(Tok::Dir(".func")) => {
                self.pos += 1;
                let f = self.function(false)?;
                m.funcs.push(f);
            }
            Some(Tok::Dir(d)) => {
                let space = match d {
                    ".global" => Space::Global,
                    ".const" => Space::Const,
                    ".shared" => Space::Shared,
                    _ => return self.err(format!("unsupported module-level directive `{d}`")),
                };
                self.pos += 1;
                let vars = self.var_decl(space, is_extern)?;
                m.globals.extend(vars);
            }
            _ => return self.err(format!("expected a declaration, found {}", self.describe())),
        }
        Ok(())
    }

    /// Parses the rest of a variable declaration after its state space; consumes `;`.
    fn var_decl(&mut self, space: Space, is_extern: bool) -> PResult<Vec<VarDecl>> {
        let line = self.line();
        let mut align = 0u32;
        let mut vec = 1u64;
        let mut ty = None;
        while let Some(Tok::Dir(d)) = self.peek() {
            self.pos += 1;
            match d {
                ".align" => {
                    align = self.small_int("alignment", 1 << 16)?;
                    if align == 0 || !align.is_power_of_two() {
                        return self.err("alignment must be a power of two");
                    }
                }
                ".v2" => vec = 2,
                ".v4" => vec = 4,
                ".v8" => vec = 8,
                ".ptr" | ".global" | ".const" | ".shared" | ".local" | ".param" => {}
                _ => match Ty::from_dir(d) {
                    Some(t) => ty = Some(t),
                    None => return self.err(format!("unexpected `{d}` in a declaration")),
                },
            }
        }
        let ty = match ty {
            Some(t) => t,
            None => return self.err("declaration without a type"),
        };
        let elem = u64::from(ty.size()) * vec;
        let mut out = Vec::new();
        loop {
            let name = self.ident()?.to_string();
            let mut count: u64 = 1;
            let mut unsized_extern = false;
            while self.eat_punct(b'[') {
                if self.eat_punct(b']') {
                    unsized_extern = true;
                    continue;
                }
                let n = self.int()?;
                self.expect_punct(b']')?;
                count = count
                    .checked_mul(n)
                    .filter(|c| *c <= MAX_VAR_BYTES)
                    .ok_or_else(|| ParseError::new(line, "variable too large"))?;
            }
            let size = if unsized_extern {
                0
            } else {
                count
                    .checked_mul(elem)
                    .filter(|s| *s <= MAX_VAR_BYTES)
                    .ok_or_else(|| ParseError::new(line, "variable too large"))?
            };
            let init = if self.eat_punct(b'=') {
                Some(self.initializer(ty, vec, size)?)
            } else {
                None
            };
            let natural = elem.min(16) as u32;
            out.push(VarDecl {
                space,
                name,
                align: if align == 0 { natural.max(1) } else { align },
                size,
                unsized_extern: unsized_extern && is_extern,
                init,
                line,
            });
            if !self.eat_punct(b',') {
                break;
            }
        }
        self.expect_punct(b';')?;
        Ok(out)
    }

    /// `= value` or `= {v, v, ...}` (nested braces flattened): little-endian bytes,
    /// zero-padded to `size`.
    fn initializer(&mut self, ty: Ty, vec: u64, size: u64) -> PResult<Vec<u8>> {
        let esz = ty.size() as usize;
        let mut bytes: Vec<u8> = Vec::new();
        let mut depth = 0usize;
        loop {
            while self.eat_punct(b'{') {
                depth += 1;
                if depth > 8 {
                    return self.err("initializer nested too deeply");
                }
            }
            let neg = self.eat_punct(b'-');
            let v: u64 = match self.next()? {
                Tok::Int(i) => {
                    let i = if neg { i.wrapping_neg() } else { i };
                    match ty {
                        Ty::F32 => f32::to_bits(i as i64 as f32) as u64,
                        Ty::F64 => f64::to_bits(i as i64 as f64),
                        _ => i,
                    }
                }
                Tok::F32(b) => {
                    let b = if neg { b ^ 0x8000_0000 } else { b };
                    if ty == Ty::F64 {
                        f64::to_bits(f64::from(f32::from_bits(b)))
                    } else {
                        u64::from(b)
                    }
                }
                Tok::F64(b) => {
                    let b = if neg { b ^ (1 << 63) } else { b };
                    if ty == Ty::F32 {
                        u64::from(f32::to_bits(f64::from_bits(b) as f32))
                    } else {
                        b
                    }
                }
                Tok::Float(f) => {
                    let f = if neg { -f } else { f };
                    match ty {
                        Ty::F32 => u64::from((f as f32).to_bits()),
                        _ => f.to_bits(),
                    }
                }
                _ => {
                    self.pos -= 1;
                    return self.err(format!(
                        "unsupported initializer element {}",
                        self.describe()
                    ));
                }
            };
            bytes.extend_from_slice(&v.to_le_bytes()[..esz.min(8)]);
            if esz > 8 {
                bytes.extend(std::iter::repeat_n(0u8, esz - 8));
            }
            if bytes.len() as u64 > size.max(esz as u64 * vec) {
                return self.err("too many initializer elements");
            }
            while depth > 0 && self.eat_punct(b'}') {
                depth -= 1;
            }
            if depth == 0 {
                break;
            }
            self.expect_punct(b',')?;
        }
        let size = size as usize;
        if bytes.len() < size {
            bytes.resize(size, 0);
        }
        Ok(bytes)
    }

    /// `.param` list entry: `.param [.align N] [.ptr ...] .type name [ [N] ]`.
    fn param_decl(&mut self) -> PResult<ParamDecl> {
        match self.next()? {
            Tok::Dir(".param") | Tok::Dir(".reg") => {}
            _ => {
                self.pos -= 1;
                return self.err(format!("expected .param, found {}", self.describe()));
            }
        }
        let mut align = 0u32;
        let mut ty = None;
        let mut ty_name = String::new();
        while let Some(Tok::Dir(d)) = self.peek() {
            self.pos += 1;
            match d {
                ".align" => {
                    align = self.small_int("alignment", 1 << 16)?;
                    if align == 0 || !align.is_power_of_two() {
                        return self.err("alignment must be a power of two");
                    }
                }
                ".ptr" | ".global" | ".const" | ".shared" | ".local" => {}
                _ => match Ty::from_dir(d) {
                    Some(t) => {
                        ty = Some(t);
                        ty_name = d.to_string();
                    }
                    None => return self.err(format!("unexpected `{d}` in a parameter")),
                },
            }
        }
        let ty = match ty {
            Some(t) => t,
            None => return self.err("parameter without a type"),
        };
        let name = self.ident()?.to_string();
        let mut size = u64::from(ty.size());
        let mut ty_text = ty_name;
        if self.eat_punct(b'[') {
            let n = self.int()?;
            self.expect_punct(b']')?;
            ty_text = format!("{ty_text}[{n}]");
            size = size
                .checked_mul(n)
                .filter(|s| *s <= 1 << 16)
                .ok_or_else(|| ParseError::new(self.line(), "parameter too large"))?;
        }
        Ok(ParamDecl {
            name,
            ty_text,
            size: size as u32,
            align: if align == 0 { ty.size().max(1) } else { align },
        })
    }

    fn param_list(&mut self) -> PResult<Vec<ParamDecl>> {
        self.expect_punct(b'(')?;
        let mut out = Vec::new();
        if self.eat_punct(b')') {
            return Ok(out);
        }
        loop {
            out.push(self.param_decl()?);
            if self.eat_punct(b')') {
                return Ok(out);
            }
            self.expect_punct(b',')?;
        }
    }

    fn function(&mut self, entry: bool) -> PResult<FuncAst> {
        let line = self.line();
        let mut rets = Vec::new();
        if !entry && self.peek() == Some(Tok::Punct(b'(')) {
            rets = self.param_list()?;
        }
        let name = self.ident()?.to_string();
        let params = if self.peek() == Some(Tok::Punct(b'(')) {
            self.param_list()?
        } else {
            Vec::new()
        };
        let mut f = FuncAst {
            name,
            entry,
            line,
            params,
            rets,
            regs: Vec::new(),
            vars: Vec::new(),
            insts: Vec::new(),
            labels: HashMap::new(),
            branch_targets: HashMap::new(),
            maxntid: None,
            reqntid: None,
            has_body: false,
        };
        // Performance directives.
        while let Some(Tok::Dir(d)) = self.peek() {
            self.pos += 1;
            match d {
                ".maxntid" | ".reqntid" => {
                    let mut v = [1u32; 3];
                    for (k, slot) in v.iter_mut().enumerate() {
                        if k > 0 && !self.eat_punct(b',') {
                            break;
                        }
                        *slot = self.small_int("thread count", 1 << 20)?;
                    }
                    if d == ".maxntid" {
                        f.maxntid = Some(v);
                    } else {
                        f.reqntid = Some(v);
                    }
                }
                ".minnctapersm" | ".maxnctapersm" | ".maxnreg" | ".maxclusterrank"
                | ".reqnctapercluster" => {
                    self.int()?;
                    while self.eat_punct(b',') {
                        self.int()?;
                    }
                }
                ".noreturn" | ".explicitcluster" => {}
                ".pragma" => {
                    match self.next()? {
                        Tok::Str(_) => {}
                        _ => return self.err("expected a string after .pragma"),
                    }
                    self.expect_punct(b';')?;
                }
                _ => return self.err(format!("unexpected `{d}` after a function header")),
            }
        }
        if self.eat_punct(b';') {
            return Ok(f);
        }
        self.expect_punct(b'{')?;
        f.has_body = true;
        self.body(&mut f)?;
        Ok(f)
    }

    fn body(&mut self, f: &mut FuncAst) -> PResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
.version 8.8
.target sm_80
.address_size 64

.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;
	.shared .align 4 .b8 sm[64];

	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.ge.u32 	%p1|%p2, %r1, 7;
	@%p1 bra 	$L__BB0_2;
	{ .reg .b16 lo, hi;
	  mov.b32 {lo, hi}, %r1; }
$L__BB0_2:
	ret;
}
"#;

    #[test]
    fn parses_a_small_module() {
        let m = parse_module(SMALL).unwrap();
        assert_eq!(m.globals.len(), 1);
        assert_eq!(
            m.globals[0].init.as_deref(),
            Some(&[1u8, 2, 3, 4, 5, 6, 7, 8][..])
        );
        let f = &m.funcs[0];
        assert!(f.entry);
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.maxntid, Some([256, 1, 1]));
        assert_eq!(f.insts.len(), 6);
        assert_eq!(f.labels["$L__BB0_2"], 5);
        assert_eq!(f.insts[3].guard.map(|g| g.negated), Some(false));
        assert_eq!(f.insts[2].text, "setp.ge.u32 %p1|%p2, %r1, 7");
        assert!(matches!(
            f.insts[1].operands[1],
            Operand::Special(Special::Tid(0))
        ));
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            ".entry k( { ret; }",
            ".entry k() { add.s32 %r1, ; }",
            ".entry k() { .reg .b32 %r<99999999999>; }",
            ".global .b8 huge[99999999999];",
            ".entry k() {",
            ".entry k() { @%nope bra L; }",
        ] {
            assert!(parse_module(bad).is_err(), "{bad}");
        }
    }
}
