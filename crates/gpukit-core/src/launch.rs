//! Launch geometry: grid and block dimensions (the seed's `gk_grid`).

use crate::{Error, KernelArg, Result};

/// A 3-D extent (grid of blocks, or block of threads), as CUDA's `dim3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent along x.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// A 1-D extent `(x, 1, 1)`.
    pub const fn x(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    /// A 3-D extent.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// `x * y * z` (as u64: cannot overflow).
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::x(x)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

/// The largest block a launch may ask for (threads per block, as on NVIDIA GPUs).
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// The largest block extent along each axis (x, y, z): CUDA's 1024, 1024, 64. A block
/// must also hold at most [`MAX_BLOCK_THREADS`] threads in all.
pub const MAX_BLOCK_DIM: Dim3 = Dim3::new(1024, 1024, 64);

/// The largest grid x extent (CUDA's limit, kept on every backend so a launch that
/// runs on one backend runs on all).
pub const MAX_GRID_X: u32 = i32::MAX as u32;

/// The largest grid y and z extents.
pub const MAX_GRID_YZ: u32 = 65_535;

/// Per-block scratch ("shared memory") a launch may ask for: 48 KiB, the amount every
/// NVIDIA GPU since Kepler gives without opting in.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

/// How a kernel is launched: grid of blocks, threads per block, per-block scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Bytes of per-block scratch (CUDA dynamic shared memory; on the CPU a zeroed
    /// per-block buffer).
    pub shared_bytes: usize,
}

impl LaunchConfig {
    /// A 1-D launch covering `n` threads with `block` threads per block
    /// (grid = ceil(n / block)); `n = 0` gives an empty grid, which launches nothing.
    ///
    /// Errors: [`Error::Launch`] if `block` is 0 or above [`MAX_BLOCK_THREADS`], or the
    /// grid would exceed [`MAX_GRID_X`].
    pub fn for_elements(n: usize, block: u32) -> Result<LaunchConfig> {
        let grid = grid_for(n, block)?;
        Ok(LaunchConfig {
            grid: Dim3::x(grid),
            block: Dim3::x(block),
            shared_bytes: 0,
        })
    }

    /// The same configuration with `bytes` of per-block scratch.
    pub fn with_shared(mut self, bytes: usize) -> LaunchConfig {
        self.shared_bytes = bytes;
        self
    }

    /// Checks the configuration against the limits every backend enforces.
    ///
    /// Errors: [`Error::Launch`] naming `kernel` and the limit broken.
    pub fn validate(&self, kernel: &str) -> Result<()> {
        let bad = |reason: String| {
            Err(Error::Launch {
                kernel: kernel.to_string(),
                reason,
            })
        };
        let b = self.block;
        if b.x == 0 || b.y == 0 || b.z == 0 {
            return bad(format!("block {b:?} has a zero extent"));
        }
        let m = MAX_BLOCK_DIM;
        if b.x > m.x || b.y > m.y || b.z > m.z {
            return bad(format!(
                "block {b:?} exceeds the per-axis limits ({}, {}, {})",
                m.x, m.y, m.z
            ));
        }
        if b.volume() > MAX_BLOCK_THREADS {
            return bad(format!(
                "block {b:?} has {} threads, more than {MAX_BLOCK_THREADS}",
                b.volume()
            ));
        }
        let g = self.grid;
        if g.x > MAX_GRID_X || g.y > MAX_GRID_YZ || g.z > MAX_GRID_YZ {
            return bad(format!(
                "grid {g:?} exceeds ({MAX_GRID_X}, {MAX_GRID_YZ}, {MAX_GRID_YZ})"
            ));
        }
        if self.shared_bytes > MAX_SHARED_BYTES {
            return bad(format!(
                "{} bytes of shared memory, more than {MAX_SHARED_BYTES}",
                self.shared_bytes
            ));
        }
        Ok(())
    }
}

/// Bytes an argument occupies in a kernel's parameter buffer: 8 for a buffer (a device
/// pointer), an i64 or an f64; 4 for an i32 or an f32.
pub fn arg_bytes(arg: &KernelArg) -> usize {
    match arg {
        KernelArg::I32(_) | KernelArg::F32(_) => 4,
        KernelArg::Buffer { .. } | KernelArg::I64(_) | KernelArg::F64(_) => 8,
    }
}

/// Checks a launch's arguments against the parameters of the kernel's entry point
/// (`params`: each parameter's size in bytes, in order, as the PTX `.entry` declares
/// them): the one argument check every backend applies before it runs anything.
///
/// Errors: [`Error::Argument`] naming `kernel`, the first argument that is missing,
/// extra, or of the wrong size.
pub fn check_entry_args(kernel: &str, params: &[usize], args: &[KernelArg]) -> Result<()> {
    if params.len() != args.len() {
        return Err(Error::Argument {
            kernel: kernel.to_string(),
            index: args.len().min(params.len()),
            reason: format!(
                "the kernel takes {} parameters, {} were passed",
                params.len(),
                args.len()
            ),
        });
    }
    for (i, (a, &size)) in args.iter().zip(params).enumerate() {
        let given = arg_bytes(a);
        if given != size {
            return Err(Error::Argument {
                kernel: kernel.to_string(),
                index: i,
                reason: format!(
                    "the kernel's parameter is {size} bytes, the argument {a:?} is {given}"
                ),
            });
        }
    }
    Ok(())
}

/// The parameter sizes (bytes, in order) of the `.entry` called `entry` in PTX text, as
/// [`check_entry_args`] takes them: scalar types by their width (`.u64` 8, `.f32` 4,
/// `.b8` 1 ...), arrays (`.param .align 8 .b8 p[16]`) by their whole size.
///
/// Returns `None` when the text has no such entry or a parameter list it cannot read.
pub fn ptx_entry_params(ptx: &str, entry: &str) -> Option<Vec<usize>> {
    let mut rest = ptx;
    loop {
        let pos = rest.find(".entry")?;
        rest = &rest[pos + ".entry".len()..];
        let after = rest.trim_start();
        let Some(tail) = after.strip_prefix(entry) else {
            continue;
        };
        let tail = tail.trim_start();
        let Some(list) = tail.strip_prefix('(') else {
            // `.entry name` with no parameter list: a kernel without parameters.
            if tail.starts_with('{') || tail.starts_with('.') {
                return Some(Vec::new());
            }
            continue;
        };
        let close = list.find(')')?;
        let list = &list[..close];
        if list.trim().is_empty() {
            return Some(Vec::new());
        }
        return list.split(',').map(param_size).collect();
    }
}

/// Size of one PTX parameter declaration (`.param .u64 name`, `.param .align 4 .b8 p[12]`).
fn param_size(decl: &str) -> Option<usize> {
    let width = decl.split_whitespace().find_map(|t| {
        let t = t.strip_prefix('.')?;
        let bits: usize = t.get(1..)?.parse().ok()?;
        matches!(t.as_bytes()[0], b'u' | b's' | b'b' | b'f')
            .then_some(bits)
            .filter(|b| matches!(b, 8 | 16 | 32 | 64))
    })?;
    let mut count = 1usize;
    if let Some(open) = decl.find('[') {
        let close = decl[open..].find(']')? + open;
        count = decl[open + 1..close].trim().parse().ok()?;
    }
    (width / 8).checked_mul(count)
}

/// Blocks needed to cover `n` threads at `block` threads per block: `ceil(n / block)`.
///
/// Errors: [`Error::Launch`] if `block` is 0 or too large, or the grid exceeds [`MAX_GRID_X`].
pub fn grid_for(n: usize, block: u32) -> Result<u32> {
    if block == 0 || block as u64 > MAX_BLOCK_THREADS {
        return Err(Error::Launch {
            kernel: "grid_for".into(),
            reason: format!("block size {block} is not in 1..={MAX_BLOCK_THREADS}"),
        });
    }
    let g = n.div_ceil(block as usize);
    u32::try_from(g)
        .ok()
        .filter(|&g| g <= MAX_GRID_X)
        .ok_or_else(|| Error::Launch {
            kernel: "grid_for".into(),
            reason: format!("{n} threads need {g} blocks of {block}, more than {MAX_GRID_X}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_covers_every_thread() {
        assert_eq!(grid_for(0, 256).unwrap(), 0);
        assert_eq!(grid_for(1, 256).unwrap(), 1);
        assert_eq!(grid_for(256, 256).unwrap(), 1);
        assert_eq!(grid_for(257, 256).unwrap(), 2);
        assert!(grid_for(10, 0).is_err());
        assert!(grid_for(10, 2048).is_err());
        assert!(grid_for(usize::MAX, 1).is_err());
    }

    #[test]
    fn validate_rejects_each_limit() {
        let ok = LaunchConfig::for_elements(1000, 128).unwrap();
        assert!(ok.validate("k").is_ok());
        let mut c = ok;
        c.block = Dim3::new(32, 32, 2);
        assert!(matches!(c.validate("k"), Err(Error::Launch { .. })));
        let mut c = ok;
        c.grid = Dim3::new(1, 70_000, 1);
        assert!(c.validate("k").is_err());
        assert!(ok.with_shared(MAX_SHARED_BYTES + 1).validate("k").is_err());
        let mut c = ok;
        c.block = Dim3::new(1, 1, 128);
        let e = c.validate("k").unwrap_err();
        assert!(matches!(e, Error::Launch { .. }), "{e}");
        c.block = Dim3::new(2, 2, 64);
        assert!(c.validate("k").is_ok());
        c.block = Dim3::new(1, 2048, 1);
        assert!(c.validate("k").is_err());
        let mut c = ok;
        c.block.y = 0;
        assert!(c.validate("k").is_err());
    }

    #[test]
    fn entry_params_are_read_and_checked() {
        let ptx = ".version 8.0\n.visible .entry other(.param .u32 a)\n{ ret; }\n\
                   .visible .entry k(\n .param .u64 k_p0,\n .param .f32 k_p1,\n \
                   .param .align 8 .b8 k_p2[16]\n)\n{ ret; }\n.entry e0()\n{ ret; }";
        assert_eq!(ptx_entry_params(ptx, "k"), Some(vec![8, 4, 16]));
        assert_eq!(ptx_entry_params(ptx, "other"), Some(vec![4]));
        assert_eq!(ptx_entry_params(ptx, "e0"), Some(vec![]));
        assert_eq!(ptx_entry_params(ptx, "missing"), None);
        let ok = [KernelArg::I64(1), KernelArg::F32(1.0)];
        assert!(check_entry_args("k", &[8, 4], &ok).is_ok());
        let e = check_entry_args("k", &[8, 4, 8], &ok).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 2, .. }), "{e}");
        let e = check_entry_args("k", &[8, 8], &ok).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        let e = check_entry_args("k", &[8], &ok).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
    }
}
