//! The performance counters against kernels whose behaviour is known exactly
//! (tests/fixtures/counters.cu): coalesced against strided copies, a shared-memory
//! transpose with and without padding, naive against tiled matmul, a divergent kernel.
//! Every expected figure is derived in the comments; the counters must also be the same
//! from run to run and at 1, 2 and 3 rayon threads.

mod common;

use common::*;
use gpukit_ptx::{Counters, EmuOptions, InstClass, LaunchStats, Module, ParamValue};

fn opts() -> EmuOptions {
    EmuOptions {
        counters: true,
        ..EmuOptions::default()
    }
}

/// A buffer whose data starts on a 256-byte boundary (as a GPU allocation does), so
/// sector counts do not depend on where the host allocator put it.
struct Aligned {
    buf: Buf,
    skip: usize,
    len: usize,
}

impl Aligned {
    fn new(data: &[f32]) -> Aligned {
        let bytes = data.len() * 4;
        let buf = Buf::zeroed(bytes + 256);
        let base = buf.words().as_ptr() as usize;
        let skip = base.next_multiple_of(256) - base;
        let mut raw = vec![0u8; bytes + 256];
        for (i, v) in data.iter().enumerate() {
            raw[skip + 4 * i..skip + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        for (i, c) in raw.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            buf.words()[i].store(u64::from_le_bytes(w), std::sync::atomic::Ordering::Relaxed);
        }
        Aligned {
            buf,
            skip,
            len: data.len(),
        }
    }

    fn values(&self) -> Vec<f32> {
        let b = self.buf.bytes();
        (0..self.len)
            .map(|i| {
                let o = self.skip + 4 * i;
                f32::from_le_bytes(b[o..o + 4].try_into().unwrap())
            })
            .collect()
    }
}

/// Launches `kernel` with the aligned buffers' pointers followed by `ints` (i32).
fn launch_counted(
    m: &Module,
    kernel: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    bufs: &[&Aligned],
    ints: &[i32],
) -> LaunchStats {
    launch_with(m, kernel, grid, block, bufs, ints, &opts()).unwrap()
}

/// [`launch_counted`] with other options, returning the launch's result.
#[allow(clippy::result_large_err)] // the emulator's own error type, as `launch` returns it
fn launch_with(
    m: &Module,
    kernel: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    bufs: &[&Aligned],
    ints: &[i32],
    o: &EmuOptions,
) -> Result<LaunchStats, gpukit_ptx::EmuError> {
    let raw: Vec<&Buf> = bufs.iter().map(|b| &b.buf).collect();
    let skips: Vec<u64> = bufs.iter().map(|b| b.skip as u64).collect();
    run(
        m,
        kernel,
        grid,
        block,
        0,
        &raw,
        |p| {
            let mut v: Vec<ParamValue> = p
                .iter()
                .zip(&skips)
                .map(|(&a, &s)| {
                    assert_eq!((a + s) % 256, 0, "aligned start");
                    ParamValue::ptr(a + s)
                })
                .collect();
            v.extend(ints.iter().map(|&i| ParamValue::i32(i)));
            v
        },
        o,
    )
}

fn counters(s: &LaunchStats) -> Counters {
    let c = s.counters.expect("counters were asked for");
    // The classes partition the instructions the launch executed.
    assert_eq!(c.total_warp_insts(), s.warp_instructions);
    assert_eq!(c.total_thread_insts(), s.thread_instructions);
    c
}

fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 97) as f32 * 0.5 - 7.0).collect()
}

#[test]
fn coalesced_copy_touches_one_sector_per_32_bytes_strided_one_per_lane() {
    let m = fixture("counters");
    let n = 4096usize;
    let warps = (n / 32) as u64;
    let src = Aligned::new(&ramp(n * 32));
    let dst = Aligned::new(&vec![0.0; n]);
    let s = launch_counted(
        &m,
        "copy_coalesced",
        (16, 1, 1),
        (256, 1, 1),
        &[&src, &dst],
        &[n as i32],
    );
    assert_eq!(dst.values(), ramp(n * 32)[..n]);
    let c = counters(&s);
    // One load and one store request per warp, each 32 lanes x 4 bytes = 128 bytes =
    // 4 sectors; 16 KiB read and written.
    assert_eq!(c.global_load_requests, warps);
    assert_eq!(c.global_store_requests, warps);
    assert_eq!(c.global_load_sectors, 4 * warps);
    assert_eq!(c.global_store_sectors, 4 * warps);
    assert_eq!(c.global_load_bytes, 4 * n as u64);
    assert_eq!(c.global_store_bytes, 4 * n as u64);
    assert_eq!(c.unique_sectors, 2 * (4 * n as u64) / 32);
    assert_eq!(c.sectors_per_request(), 4.0);
    assert_eq!(c.coalescing_efficiency(), 1.0);
    assert_eq!(c.dram_bytes_lower(), 2 * 4 * n as u64);
    assert_eq!(c.dram_bytes_upper(), 2 * 4 * n as u64);
    assert_eq!(c.shared_load_requests + c.shared_store_requests, 0);
    // No lane leaves the others (the bounds check is uniform); predicated-off
    // instructions (the guard's skipped branch) count as warp instructions with no
    // thread instructions, so the SIMT figure is below 32.
    assert_eq!(c.divergent_branches, 0);
    assert!(c.simt_efficiency() > 28.0 && c.simt_efficiency() < 32.0);

    let dst2 = Aligned::new(&vec![0.0; n]);
    let s = launch_counted(
        &m,
        "copy_strided",
        (16, 1, 1),
        (256, 1, 1),
        &[&src, &dst2],
        &[n as i32],
    );
    let all = ramp(n * 32);
    assert_eq!(
        dst2.values(),
        (0..n).map(|i| all[32 * i]).collect::<Vec<_>>()
    );
    let c2 = counters(&s);
    // Lane i reads in[32 i]: 32 lanes, 32 different sectors, 4 useful bytes of each.
    assert_eq!(c2.global_load_requests, warps);
    assert_eq!(c2.global_load_sectors, 32 * warps);
    assert_eq!(c2.global_load_sectors, 8 * c.global_load_sectors);
    assert_eq!(c2.global_load_bytes, 4 * n as u64);
    assert_eq!(c2.global_store_sectors, 4 * warps);
    assert_eq!(c2.unique_sectors, 32 * warps + 4 * warps);
    // Useful bytes / moved bytes: (16 + 16) KiB over (128 + 16) KiB.
    assert_eq!(c2.coalescing_efficiency(), 32.0 / 144.0);
}

#[test]
fn shared_transpose_has_32_way_conflicts_unless_padded() {
    let m = fixture("counters");
    let n = 64usize;
    let warps = (n * n / 32) as u64; // 4 blocks of 32 warps
    let src = Aligned::new(&ramp(n * n));
    let mut results = Vec::new();
    for kernel in ["transpose_shared", "transpose_padded"] {
        let dst = Aligned::new(&vec![0.0; n * n]);
        let s = launch_counted(
            &m,
            kernel,
            (2, 2, 1),
            (32, 32, 1),
            &[&src, &dst],
            &[n as i32],
        );
        let v = dst.values();
        let a = ramp(n * n);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(v[j * n + i], a[i * n + j], "{kernel} [{i}][{j}]");
            }
        }
        results.push(counters(&s));
    }
    let (plain, padded) = (results[0], results[1]);
    for c in [plain, padded] {
        // One shared store (a row: 32 consecutive words, 32 banks) and one shared load
        // per warp; global traffic fully coalesced.
        assert_eq!(c.shared_store_requests, warps);
        assert_eq!(c.shared_load_requests, warps);
        assert_eq!(c.shared_store_wavefronts, warps);
        assert_eq!(c.shared_ideal_wavefronts, 2 * warps);
        assert_eq!(c.global_load_sectors, 4 * warps);
        assert_eq!(c.global_store_sectors, 4 * warps);
        assert_eq!(c.warp(InstClass::Barrier), warps);
    }
    // The column read tile[tx][ty]: word 32 tx + ty is in bank ty for every lane, 32
    // distinct words in one bank = 32 wavefronts; padded, word 33 tx + ty is in bank
    // (tx + ty) mod 32, all different = 1 wavefront.
    assert_eq!(plain.shared_load_wavefronts, 32 * warps);
    assert_eq!(padded.shared_load_wavefronts, warps);
    assert_eq!(plain.bank_conflicts_per_request(), 31.0 / 2.0);
    assert_eq!(padded.bank_conflicts_per_request(), 0.0);
}

#[test]
fn tiled_matmul_reads_global_memory_as_often_as_its_reuse_predicts() {
    let m = fixture("counters");
    let n = 64usize;
    let (a, b) = (
        ramp(n * n),
        ramp(n * n).iter().map(|v| v * 0.25).collect::<Vec<_>>(),
    );
    let (ba, bb) = (Aligned::new(&a), Aligned::new(&b));
    let mut want = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[i * n + k].mul_add(b[k * n + j], acc);
            }
            want[i * n + j] = acc;
        }
    }
    let warps = (n * n / 32) as u64;
    let c_naive = Aligned::new(&vec![0.0; n * n]);
    let s = launch_counted(
        &m,
        "matmul_naive",
        (2, 8, 1),
        (32, 8, 1),
        &[&ba, &bb, &c_naive],
        &[n as i32],
    );
    assert_eq!(c_naive.values(), want);
    let naive = counters(&s);
    let c_tiled = Aligned::new(&vec![0.0; n * n]);
    let s = launch_counted(
        &m,
        "matmul_tiled",
        (2, 2, 1),
        (32, 32, 1),
        &[&ba, &bb, &c_tiled],
        &[n as i32],
    );
    assert_eq!(c_tiled.values(), want);
    let tiled = counters(&s);
    // Naive: per warp (one row, 32 columns) and k, a[row][k] is one word broadcast to
    // every lane (1 sector) and b[k][32 columns] 128 bytes (4 sectors): 2n requests and
    // 5n sectors per warp.
    assert_eq!(naive.global_load_requests, 2 * n as u64 * warps);
    assert_eq!(naive.global_load_sectors, 5 * n as u64 * warps);
    // Tiled: per warp and 32-wide tile, one row of A's tile and one of B's, 4 sectors
    // each: 2 (n / 32) requests and 8 (n / 32) sectors per warp.
    let tiles = (n / 32) as u64;
    assert_eq!(tiled.global_load_requests, 2 * tiles * warps);
    assert_eq!(tiled.global_load_sectors, 8 * tiles * warps);
    // The ratio of DRAM bytes without reuse: 5n / (8 n / 32) = 20.
    assert_eq!(
        naive.dram_bytes_upper() - 4 * warps * 32,
        20 * (tiled.dram_bytes_upper() - 4 * warps * 32)
    );
    // Both touch every element of A, B and C exactly: 3 n^2 floats.
    let unique = 3 * (n * n * 4 / 32) as u64;
    assert_eq!(naive.unique_sectors, unique);
    assert_eq!(tiled.unique_sectors, unique);
    // The tiled kernel's shared reads are broadcasts (A) or consecutive words (B):
    // conflict-free.
    assert_eq!(tiled.shared_load_wavefronts, tiled.shared_load_requests);
    assert_eq!(tiled.shared_store_wavefronts, tiled.shared_store_requests);
    // n^3 fmas: 2 n^3 flops either way.
    assert_eq!(naive.flops_f32, 2 * (n * n * n) as u64);
    assert_eq!(tiled.flops_f32, 2 * (n * n * n) as u64);
}

#[test]
fn divergent_kernel_runs_its_arithmetic_on_16_of_32_lanes() {
    let m = fixture("counters");
    let n = 128usize;
    let src = Aligned::new(&ramp(n));
    let dst = Aligned::new(&vec![0.0; n]);
    let iters = 8;
    let s = launch_counted(
        &m,
        "divergent",
        (2, 1, 1),
        (64, 1, 1),
        &[&src, &dst],
        &[iters],
    );
    let v = dst.values();
    for (i, x) in ramp(n).iter().enumerate() {
        let mut w = *x;
        for _ in 0..iters {
            w = if i % 2 == 1 {
                w.mul_add(1.5, 0.25)
            } else {
                w * 0.5 - 1.0
            };
        }
        assert_eq!(v[i].to_bits(), w.to_bits(), "element {i}");
    }
    let c = counters(&s);
    let warps = (n / 32) as u64;
    // Every f32 instruction sits in one of the two branches: 16 active lanes each.
    assert_eq!(c.thread(InstClass::Fp32), 16 * c.warp(InstClass::Fp32));
    // Odd lanes: 8 fmas (2 flops); even lanes: 8 muls and 8 adds (1 flop each).
    assert_eq!(c.flops_f32, (n as u64 / 2) * 8 * 2 + (n as u64 / 2) * 16);
    // The `if` splits every warp once; the loops inside each half are uniform.
    assert_eq!(c.divergent_branches, warps);
    assert!(c.simt_efficiency() < 32.0 && c.simt_efficiency() > 16.0);
}

#[test]
fn counters_are_identical_across_runs_and_thread_counts() {
    let m = fixture("counters");
    let n = 64usize;
    let a = Aligned::new(&ramp(n * n));
    let b = Aligned::new(&ramp(n * n));
    let mut seen = Vec::new();
    for threads in [1, 2, 3, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let c = Aligned::new(&vec![0.0; n * n]);
        let s = pool.install(|| {
            launch_counted(
                &m,
                "matmul_tiled",
                (2, 2, 1),
                (32, 32, 1),
                &[&a, &b, &c],
                &[n as i32],
            )
        });
        seen.push(s);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
}

#[test]
fn counters_are_absent_unless_asked_for() {
    let m = fixture("counters");
    let src = Aligned::new(&ramp(64));
    let dst = Aligned::new(&[0.0; 64]);
    let raw = [&src.buf, &dst.buf];
    let (s0, s1) = (src.skip as u64, dst.skip as u64);
    let s = run(
        &m,
        "copy_coalesced",
        (1, 1, 1),
        (64, 1, 1),
        0,
        &raw,
        |p| {
            vec![
                ParamValue::ptr(p[0] + s0),
                ParamValue::ptr(p[1] + s1),
                ParamValue::i32(64),
            ]
        },
        &EmuOptions::default(),
    )
    .unwrap();
    assert_eq!(s.counters, None);
    assert!(s.warp_instructions > 0);
}

#[test]
fn a_sample_of_identical_blocks_extrapolates_exactly() {
    let m = fixture("counters");
    // 16 blocks of 256 threads, each copying its own 1 KiB: every block executes the
    // same instructions and touches its own 32 + 32 sectors, so any sample, scaled by
    // 16 / blocks run, gives the whole launch's counters exactly.
    let n = 4096usize;
    let src = Aligned::new(&ramp(n * 32));
    let copy = |o: &EmuOptions| {
        let dst = Aligned::new(&vec![0.0; n]);
        let s = launch_with(
            &m,
            "copy_coalesced",
            (16, 1, 1),
            (256, 1, 1),
            &[&src, &dst],
            &[n as i32],
            o,
        );
        (s, dst.values())
    };
    let (full, _) = copy(&opts());
    let full = full.unwrap();
    assert_eq!((full.blocks, full.blocks_run), (16, 16));
    let all = ramp(n * 32);
    // Blocks run: evenly spread, the first and the last among them.
    for (k, run) in [
        (1u64, vec![0u64]),
        (2, vec![0, 15]),
        (5, vec![0, 3, 7, 11, 15]),
        (16, (0..16).collect()),
        (100, (0..16).collect()),
    ] {
        let (s, out) = copy(&EmuOptions {
            sample_blocks: Some(k),
            ..opts()
        });
        let s = s.unwrap();
        assert_eq!(
            (s.blocks, s.blocks_run),
            (16, run.len() as u64),
            "sample {k}"
        );
        assert_eq!(s.counters, full.counters, "sample {k}");
        assert_eq!(s.warp_instructions, full.warp_instructions, "sample {k}");
        assert_eq!(
            s.thread_instructions, full.thread_instructions,
            "sample {k}"
        );
        // Only the blocks run wrote their part of the output.
        for (i, v) in out.iter().enumerate() {
            let b = (i / 256) as u64;
            let want = if run.contains(&b) { all[i] } else { 0.0 };
            assert_eq!(v.to_bits(), want.to_bits(), "sample {k}, element {i}");
        }
    }
    // A sample needs the counters, and at least one block.
    for o in [
        EmuOptions {
            sample_blocks: Some(4),
            ..EmuOptions::default()
        },
        EmuOptions {
            sample_blocks: Some(0),
            ..opts()
        },
    ] {
        let e = copy(&o).0.unwrap_err().to_string();
        assert!(e.contains("sample_blocks"), "{e}");
    }
}
