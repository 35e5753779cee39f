//! Module-level declarations: directives, variables with their initialisers,
//! parameter lists and `.entry`/`.func` headers.

use std::collections::HashMap;

use crate::ast::*;
use crate::error::{ParseError, Space};
use crate::lex::Tok;

use super::cursor::*;

/// Largest variable accepted (bytes): module `.global`/`.const` variables are allocated
/// by the emulator, so a corrupted size must not become a huge allocation.
const MAX_VAR_BYTES: u64 = 1 << 28;

impl<'a> Parser<'a> {
    pub(super) fn module(&mut self) -> PResult<ModuleAst> {
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
    pub(super) fn var_decl(&mut self, space: Space, is_extern: bool) -> PResult<Vec<VarDecl>> {
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
}
