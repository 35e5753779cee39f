//! User kernels: [`KernelDef`] (a name, CUDA C source, and a Rust body for the CPU
//! backend) and what a CPU body sees of its launch ([`BlockCtx`], [`Global`]).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use crate::{DType, Dim3, Element, Error, KernelArg, Result};

/// The CPU form of a kernel: called once per block, possibly from many threads at once
/// (blocks run in parallel with rayon). A body loops over its block's threads itself.
///
/// Returning an `Err`, or panicking (an out-of-bounds [`Global`] access, say), fails
/// the launch with that error or an [`Error::KernelFault`]; a panic never escapes.
pub type CpuBody = Arc<dyn Fn(&mut BlockCtx<'_>) -> Result<()> + Send + Sync>;

/// A user kernel: its name (the cache key on a kit) and one form per backend.
///
/// ```
/// use gpukit_core::KernelDef;
/// let saxpy = KernelDef::new("saxpy")
///     .cuda(r#"extern "C" __global__ void saxpy(float a, const float* x, float* y, long long n) {
///         long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
///         if (i < n) y[i] = __fmaf_rn(a, x[i], y[i]);
///     }"#)
///     .cpu(|blk| {
///         let (a, x, y, n) = (blk.f32(0)?, blk.buf::<f32>(1)?, blk.buf::<f32>(2)?, blk.i64(3)?);
///         for i in blk.thread_range(n as usize) {
///             y.set(i, a.mul_add(x.get(i), y.get(i)));
///         }
///         Ok(())
///     });
/// assert_eq!(saxpy.name(), "saxpy");
/// ```
#[derive(Clone)]
pub struct KernelDef {
    name: String,
    cuda: Option<String>,
    ptx: Option<String>,
    cpu: Option<CpuBody>,
}

impl fmt::Debug for KernelDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelDef")
            .field("name", &self.name)
            .field("cuda", &self.cuda.is_some())
            .field("ptx", &self.ptx.is_some())
            .field("cpu", &self.cpu.is_some())
            .finish()
    }
}

impl KernelDef {
    /// A kernel called `name` with no forms yet. For CUDA the name is also the
    /// `extern "C"` entry point.
    pub fn new(name: impl Into<String>) -> KernelDef {
        KernelDef {
            name: name.into(),
            cuda: None,
            ptx: None,
            cpu: None,
        }
    }

    /// Adds the CUDA C source (compiled with NVRTC by the CUDA backend, cached by name).
    pub fn cuda(mut self, source: impl Into<String>) -> KernelDef {
        self.cuda = Some(source.into());
        self
    }

    /// Adds ready PTX (takes precedence over CUDA C source on CUDA).
    pub fn ptx(mut self, ptx: impl Into<String>) -> KernelDef {
        self.ptx = Some(ptx.into());
        self
    }

    /// Adds the Rust body the CPU backend runs per block.
    pub fn cpu<F>(mut self, body: F) -> KernelDef
    where
        F: Fn(&mut BlockCtx<'_>) -> Result<()> + Send + Sync + 'static,
    {
        self.cpu = Some(Arc::new(body));
        self
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The CUDA C source, if any.
    pub fn cuda_source(&self) -> Option<&str> {
        self.cuda.as_deref()
    }

    /// The PTX, if any.
    pub fn ptx_source(&self) -> Option<&str> {
        self.ptx.as_deref()
    }

    /// The CPU body, if any.
    pub fn cpu_body(&self) -> Option<&CpuBody> {
        self.cpu.as_ref()
    }
}

/// What a CPU body sees of one block of its launch: indices, arguments, scratch.
pub struct BlockCtx<'a> {
    kernel: &'a str,
    block_idx: Dim3,
    grid_dim: Dim3,
    block_dim: Dim3,
    args: &'a [KernelArg],
    shared: &'a mut [u64],
    shared_bytes: usize,
}

impl<'a> BlockCtx<'a> {
    /// Builds the context for one block. Called by backends, not users.
    ///
    /// # Safety
    /// Every [`KernelArg::Buffer`] in `args` must be a host range (its `ptr` a host
    /// address) valid for reads and writes of `bytes` bytes, aligned to its dtype, for
    /// all of `'a`, and accessed by others only through relaxed atomics meanwhile.
    /// `shared` must hold at least `shared_bytes` bytes.
    pub unsafe fn new(
        kernel: &'a str,
        block_idx: Dim3,
        grid_dim: Dim3,
        block_dim: Dim3,
        args: &'a [KernelArg],
        shared: &'a mut [u64],
        shared_bytes: usize,
    ) -> BlockCtx<'a> {
        debug_assert!(shared.len() * 8 >= shared_bytes);
        BlockCtx {
            kernel,
            block_idx,
            grid_dim,
            block_dim,
            args,
            shared,
            shared_bytes,
        }
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &str {
        self.kernel
    }

    /// This block's index in the grid (CUDA's `blockIdx`).
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// The grid's extent (CUDA's `gridDim`).
    pub fn grid_dim(&self) -> Dim3 {
        self.grid_dim
    }

    /// Threads per block (CUDA's `blockDim`).
    pub fn block_dim(&self) -> Dim3 {
        self.block_dim
    }

    /// This block's linear index: `x + gridDim.x * (y + gridDim.y * z)`.
    pub fn linear_block(&self) -> usize {
        let (b, g) = (self.block_idx, self.grid_dim);
        b.x as usize + g.x as usize * (b.y as usize + g.y as usize * b.z as usize)
    }

    /// The global x thread indices of this block (`blockIdx.x * blockDim.x + t` for
    /// `t` in `0..blockDim.x`), clipped to `0..n`: the loop of a 1-D kernel.
    pub fn thread_range(&self, n: usize) -> Range<usize> {
        let start = self.block_idx.x as usize * self.block_dim.x as usize;
        let end = start + self.block_dim.x as usize;
        start.min(n)..end.min(n)
    }

    /// Number of launch arguments.
    pub fn arg_count(&self) -> usize {
        self.args.len()
    }

    fn arg(&self, index: usize) -> Result<&KernelArg> {
        self.args.get(index).ok_or_else(|| Error::Argument {
            kernel: self.kernel.to_string(),
            index,
            reason: format!("the launch has only {} arguments", self.args.len()),
        })
    }

    fn arg_error<T>(&self, index: usize, wanted: &str) -> Result<T> {
        Err(Error::Argument {
            kernel: self.kernel.to_string(),
            index,
            reason: format!("expected {wanted}, got {:?}", self.args[index]),
        })
    }

    /// Argument `index` as a buffer of `T`. Raw byte buffers may be read as any `T`
    /// whose size divides their length and whose alignment their address meets.
    ///
    /// Errors: [`Error::Argument`] if the argument is missing, a scalar, of another
    /// dtype, or a raw buffer that does not fit `T`.
    pub fn buf<T: Element>(&self, index: usize) -> Result<Global<'a, T>> {
        match *self.arg(index)? {
            KernelArg::Buffer { ptr, bytes, dtype } => {
                let size = std::mem::size_of::<T>();
                let fits = match dtype {
                    Some(d) => d == T::DTYPE,
                    None => bytes % size == 0 && ptr.0 % size as u64 == 0,
                };
                if !fits {
                    return self.arg_error(index, &format!("a buffer of {}", T::DTYPE));
                }
                Ok(Global {
                    ptr: ptr.0 as usize as *mut T,
                    len: bytes / size,
                    kernel: self.kernel,
                    arg: index,
                    _life: PhantomData,
                })
            }
            _ => self.arg_error(index, &format!("a buffer of {}", T::DTYPE)),
        }
    }

    /// Argument `index` as an i32 scalar. Errors: [`Error::Argument`].
    pub fn i32(&self, index: usize) -> Result<i32> {
        match *self.arg(index)? {
            KernelArg::I32(v) => Ok(v),
            _ => self.arg_error(index, "an i32 scalar"),
        }
    }

    /// Argument `index` as an i64 scalar. Errors: [`Error::Argument`].
    pub fn i64(&self, index: usize) -> Result<i64> {
        match *self.arg(index)? {
            KernelArg::I64(v) => Ok(v),
            _ => self.arg_error(index, "an i64 scalar"),
        }
    }

    /// Argument `index` as an f32 scalar. Errors: [`Error::Argument`].
    pub fn f32(&self, index: usize) -> Result<f32> {
        match *self.arg(index)? {
            KernelArg::F32(v) => Ok(v),
            _ => self.arg_error(index, "an f32 scalar"),
        }
    }

    /// Argument `index` as an f64 scalar. Errors: [`Error::Argument`].
    pub fn f64(&self, index: usize) -> Result<f64> {
        match *self.arg(index)? {
            KernelArg::F64(v) => Ok(v),
            _ => self.arg_error(index, "an f64 scalar"),
        }
    }

    /// The block's scratch memory (CUDA's dynamic shared memory) as `T`s: the launch's
    /// `shared_bytes` rounded down to whole elements, zeroed at block start.
    pub fn shared<T: Element>(&mut self) -> &mut [T] {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(self.shared);
        let n = self.shared_bytes / std::mem::size_of::<T>();
        // The backing store is u64-aligned, so every element type's alignment holds.
        bytemuck::cast_slice_mut(&mut bytes[..n * std::mem::size_of::<T>()])
    }
}

/// A kernel's view of a device buffer argument: element reads and writes that are
/// bounds-checked and atomic (relaxed), so racing blocks are defined behaviour, as on
/// a GPU. An out-of-bounds index panics, which the launch turns into
/// [`Error::KernelFault`].
#[derive(Clone, Copy)]
pub struct Global<'a, T> {
    ptr: *mut T,
    len: usize,
    kernel: &'a str,
    arg: usize,
    _life: PhantomData<&'a T>,
}

// SAFETY: every access goes through relaxed atomics on memory the launch keeps alive
// for 'a (see `BlockCtx::new`), so sharing across threads cannot cause a data race.
unsafe impl<T: Send> Send for Global<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Global<'_, T> {}

impl<T: Element> Global<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[track_caller]
    fn check(&self, i: usize) {
        if i >= self.len {
            panic!(
                "kernel `{}`: argument {}: index {i} out of bounds of {} elements",
                self.kernel, self.arg, self.len
            );
        }
    }

    /// Reads element `i`. Panics (→ [`Error::KernelFault`]) if `i >= len`.
    #[track_caller]
    pub fn get(&self, i: usize) -> T {
        self.check(i);
        // SAFETY: i < len, and the range is valid and aligned for the launch (BlockCtx::new).
        unsafe { T::load_relaxed(self.ptr.add(i)) }
    }

    /// Writes element `i`. Panics (→ [`Error::KernelFault`]) if `i >= len`.
    #[track_caller]
    pub fn set(&self, i: usize, v: T) {
        self.check(i);
        // SAFETY: as in `get`.
        unsafe { T::store_relaxed(self.ptr.add(i), v) }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }
}
