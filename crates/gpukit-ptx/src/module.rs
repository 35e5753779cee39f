//! [`Module`]: a parsed and decoded PTX module, ready to launch.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

use crate::ast::ModuleAst;
use crate::decode::{GlobalVar, link_kernel};
use crate::error::{ParseError, Space};
use crate::memory::GlobalMemory;
use crate::parse::parse_module;
use crate::program::Program;

/// One kernel parameter as the driver lays it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The parameter's name in the PTX.
    pub name: String,
    /// Its PTX type as declared: `.u64`, `.u32`, `.f64`, ... (`.b8[16]` for a by-value
    /// array).
    pub ptx_type: String,
    /// Size in bytes (4 or 8 for scalars and pointers; more for `.b8` arrays).
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Offset in the parameter buffer.
    pub offset: u32,
}

/// A kernel (`.entry`) of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    /// The entry's name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<ParamInfo>,
    /// Bytes of statically declared shared memory (what the driver reports as the
    /// kernel's static shared size).
    pub static_shared_bytes: u32,
    /// `.maxntid`, if declared.
    pub max_threads: Option<(u32, u32, u32)>,
    /// `.reqntid`, if declared.
    pub required_threads: Option<(u32, u32, u32)>,
    /// Number of instructions after linking (the kernel and every device function it
    /// calls).
    pub instructions: usize,
}

/// A loaded PTX module: every kernel parsed, linked with the device functions it calls
/// and decoded. Parse once, launch many times (a `Module` is `Send + Sync`).
#[derive(Debug)]
pub struct Module {
    pub(crate) kernels: Vec<(KernelInfo, Program)>,
    by_name: HashMap<String, usize>,
    /// Storage of the module's `.global` and `.const` variables.
    pub(crate) vars: Vec<(Box<[AtomicU64]>, bool)>,
    /// PTX `.version`.
    version: Option<String>,
    target: Vec<String>,
}

fn tuple(v: Option<[u32; 3]>) -> Option<(u32, u32, u32)> {
    v.map(|[x, y, z]| (x, y, z))
}

impl Module {
    /// Parses and decodes PTX text (as NVRTC emits it). Any syntax error, and any
    /// instruction, type or modifier the emulator does not implement, is an error
    /// naming the line.
    pub fn parse(ptx: &str) -> Result<Module, ParseError> {
        let ast: ModuleAst = parse_module(ptx)?;
        if ast.address_size.is_none() && !ast.funcs.is_empty() {
            // NVRTC always states it; PTX defaults to 32-bit addresses otherwise.
            return Err(ParseError::new(0, "missing .address_size 64"));
        }
        // Module variables.
        let mut globals = HashMap::new();
        let mut vars = Vec::new();
        // The total is capped before anything is allocated (each variable is capped by
        // the parser; two dozen at the cap would still be gigabytes).
        let mut total: u64 = 0;
        for v in &ast.globals {
            if matches!(v.space, Space::Global | Space::Const) {
                total = total.saturating_add(v.size.div_ceil(8).max(1) * 8);
                if total > crate::launch::MAX_MODULE_VAR_BYTES {
                    return Err(ParseError::new(
                        v.line,
                        format!(
                            "module variables total more than {} bytes (the emulator's limit)",
                            crate::launch::MAX_MODULE_VAR_BYTES
                        ),
                    ));
                }
            }
        }
        for (i, v) in ast.globals.iter().enumerate() {
            let gv = match v.space {
                Space::Shared if v.unsized_extern || (v.size == 0) => {
                    GlobalVar::DynShared { align: v.align }
                }
                Space::Shared => GlobalVar::Shared { index: i },
                Space::Global | Space::Const => {
                    let words = v.size.div_ceil(8).max(1) as usize;
                    let mut init: Vec<u64> = Vec::new();
                    init.try_reserve_exact(words).map_err(|_| {
                        ParseError::new(
                            v.line,
                            format!("out of memory for a module variable of {} bytes", v.size),
                        )
                    })?;
                    init.resize(words, 0);
                    if let Some(bytes) = &v.init {
                        for (k, chunk) in bytes.chunks(8).enumerate() {
                            let mut b = [0u8; 8];
                            b[..chunk.len()].copy_from_slice(chunk);
                            if let Some(w) = init.get_mut(k) {
                                *w = u64::from_le_bytes(b);
                            }
                        }
                    }
                    let buf: Box<[AtomicU64]> = init.into_iter().map(AtomicU64::new).collect();
                    let addr = buf.as_ptr() as u64;
                    vars.push((buf, v.space == Space::Const));
                    GlobalVar::Mem {
                        space: v.space,
                        addr,
                    }
                }
                _ => return Err(ParseError::new(v.line, "unsupported module variable")),
            };
            if globals.insert(v.name.clone(), gv).is_some() {
                return Err(ParseError::new(
                    v.line,
                    format!("duplicate symbol `{}`", v.name),
                ));
            }
        }
        let mut funcs_by_name: HashMap<String, usize> = HashMap::new();
        for (i, f) in ast.funcs.iter().enumerate() {
            match funcs_by_name.get(&f.name) {
                // A prototype followed by the definition.
                Some(&j) if !ast.funcs[j].has_body => {
                    funcs_by_name.insert(f.name.clone(), i);
                }
                Some(_) if !f.has_body => {}
                Some(_) => {
                    return Err(ParseError::new(
                        f.line,
                        format!("duplicate function `{}`", f.name),
                    ));
                }
                None => {
                    funcs_by_name.insert(f.name.clone(), i);
                }
            }
            if globals.contains_key(&f.name) {
                return Err(ParseError::new(
                    f.line,
                    format!("`{}` is both a variable and a function", f.name),
                ));
            }
        }
        let mut kernels = Vec::new();
        let mut by_name = HashMap::new();
        for (i, f) in ast.funcs.iter().enumerate() {
            if !f.entry || !f.has_body {
                continue;
            }
            let prog = link_kernel(&ast, i, &globals, &funcs_by_name)?;
            let info = KernelInfo {
                name: f.name.clone(),
                params: prog
                    .params
                    .iter()
                    .map(|p| ParamInfo {
                        name: p.name.clone(),
                        ptx_type: p.ty.clone(),
                        size: p.size,
                        align: p.align,
                        offset: p.offset,
                    })
                    .collect(),
                static_shared_bytes: prog.static_shared,
                max_threads: tuple(prog.maxntid),
                required_threads: tuple(prog.reqntid),
                instructions: prog.insts.len(),
            };
            by_name.insert(f.name.clone(), kernels.len());
            kernels.push((info, prog));
        }
        Ok(Module {
            kernels,
            by_name,
            vars,
            version: ast.version,
            target: ast.target,
        })
    }

    /// The kernel called `name`, if the module has one.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.by_name.get(name).map(|&i| &self.kernels[i].0)
    }

    /// Every kernel, in the order of the PTX text.
    pub fn entries(&self) -> impl Iterator<Item = &KernelInfo> {
        self.kernels.iter().map(|(k, _)| k)
    }

    /// The PTX ISA version the module declares (`.version`).
    pub fn ptx_version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The targets the module declares (`.target`).
    pub fn targets(&self) -> &[String] {
        &self.target
    }

    pub(crate) fn program(&self, name: &str) -> Option<&Program> {
        self.by_name.get(name).map(|&i| &self.kernels[i].1)
    }

    /// The module variables as allocations (added to every launch's table).
    pub(crate) fn var_table(&self) -> GlobalMemory<'_> {
        let mut t = GlobalMemory::new();
        for (buf, ro) in &self.vars {
            // Distinct boxes never overlap and are not in any emulator window; a
            // failure here would only drop the variable from the table, making its
            // accesses out-of-bounds errors rather than unsound.
            let _ = if *ro {
                t.insert_const(buf)
            } else {
                t.insert_atomic(buf)
            };
        }
        t
    }
}
