//! Two ready-made user kernels that show the shape of a gpukit kernel and back the
//! `gpukit selftest`: an elementwise one ([`saxpy`]) and one that works per block with
//! scratch memory ([`block_sum`]). Each carries its CUDA C source and its CPU body,
//! written to perform the same floating-point operations in the same order.

use gpukit_core::{KernelDef, LaunchConfig, Result};

/// Threads per block of [`block_sum`] (a power of two: the tree halves it).
pub const BLOCK_SUM_THREADS: u32 = 256;

/// `y[i] = fma(a, x[i], y[i])` for `i < n`. Arguments: `a: f32, x: *const f32,
/// y: *mut f32, n: i64`.
pub fn saxpy() -> KernelDef {
    KernelDef::new("gk_demo_saxpy")
        .cuda(
            r#"extern "C" __global__ void gk_demo_saxpy(float a, const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fmaf_rn(a, x[i], y[i]);
}"#,
        )
        .cpu(|blk| {
            let (a, x, y, n) = (blk.f32(0)?, blk.buf::<f32>(1)?, blk.buf::<f32>(2)?, blk.i64(3)?);
            for i in blk.thread_range(usize::try_from(n).unwrap_or(0)) {
                y.set(i, a.mul_add(x.get(i), y.get(i)));
            }
            Ok(())
        })
}

/// Per-block sums: block `b` adds `x[b*256 .. b*256+256]` (missing tail elements count
/// as +0.0) with a pairwise tree in shared memory (stride 128, 64, ..., 1: slot `t`
/// takes `s[t] + s[t + stride]`), and writes `out[b]`. Arguments: `x: *const f32,
/// out: *mut f32, n: i64`. Launch with [`block_sum_config`].
pub fn block_sum() -> KernelDef {
    KernelDef::new("gk_demo_block_sum")
        .cuda(
            r#"extern "C" __global__ void gk_demo_block_sum(const float* x, float* out, long long n) {
    extern __shared__ float s[];
    unsigned t = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] = __fadd_rn(s[t], s[t + stride]);
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}"#,
        )
        .cpu(|blk| {
            let (x, out, n) = (blk.buf::<f32>(0)?, blk.buf::<f32>(1)?, blk.i64(2)?);
            let n = usize::try_from(n).unwrap_or(0);
            let range = blk.thread_range(n);
            let b = blk.block_idx().x as usize;
            let threads = blk.block_dim().x as usize;
            let s = blk.shared::<f32>();
            let s = &mut s[..threads];
            for (t, slot) in s.iter_mut().enumerate() {
                let i = range.start + t;
                *slot = if i < range.end { x.get(i) } else { 0.0 };
            }
            let mut stride = threads / 2;
            while stride > 0 {
                for t in 0..stride {
                    s[t] += s[t + stride];
                }
                stride /= 2;
            }
            out.set(b, s[0]);
            Ok(())
        })
}

/// The launch [`block_sum`] needs for `n` elements: ceil(n/256) blocks of 256 threads
/// with 1 KiB of scratch. Errors: as [`LaunchConfig::for_elements`].
pub fn block_sum_config(n: usize) -> Result<LaunchConfig> {
    Ok(LaunchConfig::for_elements(n, BLOCK_SUM_THREADS)?
        .with_shared(BLOCK_SUM_THREADS as usize * 4))
}
