//! A roofline estimate of a launch on a real GPU, from the emulator's exact counters
//! ([`gpukit_ptx::Counters`]), the kernel's `ptxas -v` resources
//! ([`gpukit_cuda::ptx::resources`]) and the GPU's published figures ([`GPUS`]).
//!
//! The estimate is a lower bound, the largest of four times (each for the whole launch),
//! scaled by the grid's wave quantisation at the kernel's occupancy:
//! - flops ÷ the FP32 / FP64 peak (FMA = 2 flops; f16 counted at the FP32 rate);
//! - DRAM bytes (every touched sector once: an ideal L2) ÷ the DRAM bandwidth;
//! - shared-memory wavefronts ÷ (SMs × clock × 1 wavefront per clock);
//! - warp instructions ÷ (SMs × clock × 4 schedulers issuing one each per clock).
//!
//! What it leaves out (latency, the L2 and L1 hit rates, tensor cores, launch overhead,
//! clock throttling) only makes a real run slower. docs/emulator.md has the reasoning and
//! the validation.

use gpukit_ptx::Counters;

/// A GPU's figures that the estimate uses: from the vendors' datasheets and the CUDA
/// C++ Programming Guide's per-compute-capability limits (docs/emulator.md cites each).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuSpec {
    /// Short name for the command line (`"h200"`).
    pub key: &'static str,
    /// Marketing name.
    pub name: &'static str,
    /// The `ptxas` architecture whose resources apply (`"sm_80"`, `"sm_90"`; Ada parts
    /// use sm_80's figures, the nearest architecture the table has).
    pub arch: &'static str,
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Boost clock, MHz.
    pub clock_mhz: u32,
    /// FP32 lanes per SM (64 on the A100, 128 on Hopper and Ada).
    pub fp32_lanes_per_sm: u32,
    /// Peak FP32 (non-tensor), TFLOP/s.
    pub fp32_tflops: f64,
    /// Peak FP64 (non-tensor), TFLOP/s.
    pub fp64_tflops: f64,
    /// DRAM bandwidth, GB/s (10^9 bytes).
    pub dram_gbps: f64,
    /// L2 cache, MiB.
    pub l2_mib: u32,
    /// Shared memory per SM usable by blocks, KiB.
    pub smem_per_sm_kib: u32,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Resident blocks per SM.
    pub max_blocks_per_sm: u32,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The GPUs the estimate knows.
pub const GPUS: &[GpuSpec] = &[
    GpuSpec {
        key: "a100",
        fp32_lanes_per_sm: 64,
        name: "NVIDIA A100 80GB SXM",
        arch: "sm_80",
        sms: 108,
        clock_mhz: 1410,
        fp32_tflops: 19.5,
        fp64_tflops: 9.7,
        dram_gbps: 2039.0,
        l2_mib: 40,
        smem_per_sm_kib: 164,
        regs_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        source: "NVIDIA A100 Tensor Core GPU datasheet; A100 architecture whitepaper",
    },
    GpuSpec {
        key: "h100",
        fp32_lanes_per_sm: 128,
        name: "NVIDIA H100 SXM5 80GB",
        arch: "sm_90",
        sms: 132,
        clock_mhz: 1980,
        fp32_tflops: 67.0,
        fp64_tflops: 34.0,
        dram_gbps: 3350.0,
        l2_mib: 50,
        smem_per_sm_kib: 228,
        regs_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        source: "NVIDIA H100 Tensor Core GPU datasheet; H100 architecture whitepaper",
    },
    GpuSpec {
        key: "h200",
        fp32_lanes_per_sm: 128,
        name: "NVIDIA H200 SXM 141GB",
        arch: "sm_90",
        sms: 132,
        clock_mhz: 1980,
        fp32_tflops: 67.0,
        fp64_tflops: 34.0,
        dram_gbps: 4800.0,
        l2_mib: 50,
        smem_per_sm_kib: 228,
        regs_per_sm: 65536,
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        source: "NVIDIA H200 Tensor Core GPU datasheet (the H100 SM)",
    },
    GpuSpec {
        key: "l4",
        fp32_lanes_per_sm: 128,
        name: "NVIDIA L4",
        arch: "sm_80",
        sms: 58,
        clock_mhz: 2040,
        fp32_tflops: 30.3,
        fp64_tflops: 0.49,
        dram_gbps: 300.0,
        l2_mib: 48,
        smem_per_sm_kib: 100,
        regs_per_sm: 65536,
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        source: "NVIDIA L4 Tensor Core GPU datasheet; Ada architecture whitepaper",
    },
    GpuSpec {
        key: "rtx4090",
        fp32_lanes_per_sm: 128,
        name: "NVIDIA GeForce RTX 4090",
        arch: "sm_80",
        sms: 128,
        clock_mhz: 2520,
        fp32_tflops: 82.6,
        fp64_tflops: 1.29,
        dram_gbps: 1008.0,
        l2_mib: 72,
        smem_per_sm_kib: 100,
        regs_per_sm: 65536,
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        source: "NVIDIA Ada GPU architecture whitepaper (RTX 4090)",
    },
];

/// The GPU named `key` (case-insensitive), if the table has it.
pub fn gpu(key: &str) -> Option<&'static GpuSpec> {
    GPUS.iter().find(|g| g.key.eq_ignore_ascii_case(key))
}

/// What limits a launch in the estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Floating-point throughput.
    Compute,
    /// DRAM bandwidth.
    Dram,
    /// Shared-memory bandwidth (wavefronts).
    Shared,
    /// Instruction issue.
    Issue,
}

impl Bound {
    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Dram => "dram",
            Bound::Shared => "shared",
            Bound::Issue => "issue",
        }
    }
}

/// The geometry and resources of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in the grid.
    pub blocks: u64,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Registers per thread (from ptxas; 0 when unknown, then registers do not limit).
    pub registers: u32,
    /// Shared memory per block: static plus dynamic, bytes.
    pub shared_bytes: u32,
}

/// The estimate of one launch on one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Resident blocks per SM at this kernel's resources (0: it cannot run).
    pub blocks_per_sm: u32,
    /// Resident warps ÷ the SM's maximum warps.
    pub occupancy: f64,
    /// Waves of `blocks_per_sm × SMs` blocks the grid needs.
    pub waves: u64,
    /// The four times, seconds, for the whole launch: compute, DRAM, shared, issue.
    pub times: [f64; 4],
    /// `max(times) × wave quantisation`: the lower bound, seconds.
    pub seconds: f64,
    /// Which time is the largest.
    pub bound: Bound,
}

/// Resident blocks per SM: the tightest of the thread, block, register and shared
/// memory limits (registers allocated per warp in units of 256; 1 KiB of shared memory
/// reserved per block, as on sm_80 and later).
pub fn blocks_per_sm(g: &GpuSpec, s: &LaunchShape) -> u32 {
    let t = s.threads_per_block.max(1);
    let warps = t.div_ceil(32);
    let by_threads = g.max_threads_per_sm / t;
    let by_regs = if s.registers == 0 {
        u32::MAX
    } else {
        let per_warp = (s.registers * 32).div_ceil(256) * 256;
        g.regs_per_sm / (per_warp * warps)
    };
    let by_smem = if s.shared_bytes == 0 {
        u32::MAX
    } else {
        (g.smem_per_sm_kib * 1024) / (s.shared_bytes + 1024)
    };
    g.max_blocks_per_sm
        .min(by_threads)
        .min(by_regs)
        .min(by_smem)
}

/// The estimate of one launch the emulator ran with counters on: its shape from the
/// record (blocks, threads per block, dynamic shared memory) and the kernel's `ptxas`
/// resources for `g`'s architecture (`crate::kernel_resources`; 0 registers and static
/// shared memory for a kernel not in the table, e.g. a user kernel). Returns the
/// estimate and the `(registers, static shared bytes)` used, or `None` for a record
/// without counters.
pub fn estimate_record(g: &GpuSpec, r: &crate::LaunchRecord) -> Option<(Estimate, u32, u32)> {
    let c = r.stats.counters.as_ref()?;
    let res = crate::kernel_resources(&r.kernel, g.arch);
    let (registers, static_shared) = res.map_or((0, 0), |x| (x.registers, x.static_shared));
    let shape = LaunchShape {
        blocks: r.stats.blocks,
        threads_per_block: r.block.iter().product(),
        registers,
        shared_bytes: static_shared.saturating_add(r.dynamic_shared),
    };
    Some((estimate(g, &shape, c), registers, static_shared))
}

/// The roofline estimate of a launch with counters `c` and shape `s` on `g`.
pub fn estimate(g: &GpuSpec, s: &LaunchShape, c: &Counters) -> Estimate {
    let bps = blocks_per_sm(g, s);
    let max_warps = f64::from(g.max_threads_per_sm / 32);
    let warps = f64::from(s.threads_per_block.max(1).div_ceil(32));
    let occupancy = (f64::from(bps) * warps / max_warps).min(1.0);
    let clock = f64::from(g.clock_mhz) * 1e6;
    let sms = f64::from(g.sms);
    let flops32 = (c.flops_f32 + c.flops_f16) as f64;
    let compute = flops32 / (g.fp32_tflops * 1e12) + c.flops_f64 as f64 / (g.fp64_tflops * 1e12);
    let dram = c.dram_bytes_lower() as f64 / (g.dram_gbps * 1e9);
    let shared = (c.shared_load_wavefronts + c.shared_store_wavefronts) as f64 / (sms * clock);
    let issue = c.total_warp_insts() as f64 / (sms * clock * 4.0);
    let times = [compute, dram, shared, issue];
    let (i, &worst) = times
        .iter()
        .enumerate()
        .fold((0, &0.0), |a, b| if *b.1 > *a.1 { b } else { a });
    let bound = [Bound::Compute, Bound::Dram, Bound::Shared, Bound::Issue][i];
    let per_wave = u64::from(bps) * u64::from(g.sms);
    let (waves, seconds) = if bps == 0 {
        (0, f64::INFINITY)
    } else {
        let waves = s.blocks.div_ceil(per_wave).max(1);
        // A partial last wave still takes a wave's time at these rates.
        let quant = (waves * per_wave) as f64 / s.blocks.max(1) as f64;
        let quant = if s.blocks >= per_wave { quant } else { 1.0 };
        (waves, worst * quant)
    };
    Estimate {
        blocks_per_sm: bps,
        occupancy,
        waves,
        times,
        seconds,
        bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_follows_the_tightest_limit() {
        let h = gpu("H200").unwrap();
        let mut s = LaunchShape {
            blocks: 1,
            threads_per_block: 256,
            registers: 32,
            shared_bytes: 0,
        };
        // 2048 threads / 256 = 8 blocks; 32 regs x 256 threads = 8192 < 65536 / 8.
        assert_eq!(blocks_per_sm(h, &s), 8);
        s.registers = 128; // 128 x 32 = 4096 per warp, 8 warps: 32768 per block -> 2
        assert_eq!(blocks_per_sm(h, &s), 2);
        s.registers = 0;
        s.shared_bytes = 100 * 1024; // (228 KiB) / (101 KiB) = 2
        assert_eq!(blocks_per_sm(h, &s), 2);
        s.shared_bytes = 300 * 1024;
        assert_eq!(blocks_per_sm(h, &s), 0);
        assert_eq!(estimate(h, &s, &Counters::default()).seconds, f64::INFINITY);
    }

    #[test]
    fn a_copy_is_dram_bound_at_the_datasheet_bandwidth() {
        let h = gpu("h200").unwrap();
        // 1 GiB read + 1 GiB written, one sector each, a trivial instruction count.
        let c = Counters {
            unique_sectors: 2 << 30 >> 5,
            warp_insts: {
                let mut w = [0; gpukit_ptx::CLASSES];
                w[0] = 1 << 20;
                w
            },
            ..Counters::default()
        };
        let s = LaunchShape {
            blocks: 1 << 20,
            threads_per_block: 256,
            registers: 16,
            shared_bytes: 0,
        };
        let e = estimate(h, &s, &c);
        assert_eq!(e.bound, Bound::Dram);
        let ideal = (2u64 << 30) as f64 / 4800e9;
        assert!(e.seconds >= ideal && e.seconds < ideal * 1.01, "{e:?}");
        assert_eq!(e.occupancy, 1.0);
    }

    #[test]
    fn every_gpu_has_consistent_figures() {
        for g in GPUS {
            assert!(
                g.sms > 0 && g.clock_mhz > 0 && g.dram_gbps > 0.0,
                "{}",
                g.key
            );
            // FP32 peak = SMs x lanes x 2 flops x clock, within 1 %.
            let peak =
                f64::from(g.sms * g.fp32_lanes_per_sm) * 2.0 * f64::from(g.clock_mhz) * 1e6 / 1e12;
            let ratio = g.fp32_tflops / peak;
            assert!(
                (0.99..1.01).contains(&ratio),
                "{}: {} TFLOP/s vs {peak:.1} from SMs and clock",
                g.key,
                g.fp32_tflops
            );
            assert_eq!(gpu(g.key).map(|x| x.key), Some(g.key));
        }
        assert!(gpu("v100").is_none());
    }
}
