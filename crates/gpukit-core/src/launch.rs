//! Launch geometry: grid and block dimensions (the seed's `gk_grid`).

use crate::{Error, Result};

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
        c.block.y = 0;
        assert!(c.validate("k").is_err());
    }
}
