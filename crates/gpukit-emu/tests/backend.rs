//! The `ptx-emu` device through the Kit: the shipped matmul PTX (tiled bmm_f32, the
//! launch plan's geometry) against the oracle and its time; user kernels as PTX, with a
//! planted fault of each kind reported as `Error::KernelFault` with the emulator's
//! report (kernel, instruction, thread, block, address) and their twins passing;
//! buffers outliving the kit.

use std::time::Instant;

use gpukit_core::{Buf, DevArg, Error, KernelDef, Kit, LaunchConfig};
use gpukit_emu::EmuDevice;

fn kit() -> Kit {
    Kit::from_device(Box::new(EmuDevice::new()))
}

/// Deterministic values in [-1, 1) with a few specials.
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|i| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match i % 97 {
                13 => -0.0,
                41 => f32::from_bits(3), // subnormal
                _ => ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0,
            }
        })
        .collect()
}

#[test]
fn shipped_matmul_256_matches_the_oracle_and_is_fast() {
    let kit = kit();
    let n = 256;
    let a = values(n * n, 1);
    let b = values(n * n, 2);
    let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
    let bc = kit.alloc(gpukit_core::DType::F32, n * n).unwrap();
    let t = Instant::now();
    gpukit_ops::matmul(&kit, &bc, &ba, &bb, n, n, n).unwrap();
    let dt = t.elapsed();
    eprintln!("ptx-emu: shipped bmm_f32 256^3 (memcheck + racecheck) in {dt:?}");
    let got: Vec<f32> = bc.download().unwrap();
    let want = gpukit_reference::matmul(&a, &b, n, n, n);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "c[{i}]: {g} vs {w}");
    }
    #[cfg(not(debug_assertions))]
    assert!(dt.as_secs_f64() < 10.0, "{dt:?}");
}

const FAULTS: &str = include_str!("../../gpukit-ptx/tests/fixtures/faults.ptx");

fn fault_kernel(name: &str) -> KernelDef {
    KernelDef::new(name).ptx(FAULTS)
}

fn expect_fault(r: gpukit_core::Result<()>, kernel: &str, words: &[&str]) {
    match r {
        Err(Error::KernelFault { kernel: k, message }) => {
            assert_eq!(k, kernel);
            for w in words {
                assert!(message.contains(w), "`{w}` missing from: {message}");
            }
        }
        other => panic!("{kernel}: expected a kernel fault, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_global_write_is_a_kernel_fault() {
    let kit = kit();
    let out = kit.alloc(gpukit_core::DType::F32, 100).unwrap();
    let cfg = LaunchConfig::for_elements(101, 64).unwrap();
    let k = fault_kernel("global_write");
    let r = kit.launch(&k, cfg, &[(&out).into(), DevArg::I32(100), DevArg::I32(1)]);
    expect_fault(
        r,
        "global_write",
        &["global_write", "st.global", "thread", "block"],
    );
    // The twin: the same launch with extra = 0.
    kit.launch(&k, cfg, &[(&out).into(), DevArg::I32(100), DevArg::I32(0)])
        .unwrap();
    let v: Vec<f32> = out.download().unwrap();
    assert_eq!(v[99], 99.0);
}

#[test]
fn out_of_bounds_shared_read_is_a_kernel_fault() {
    let kit = kit();
    let out = kit.alloc(gpukit_core::DType::F32, 256).unwrap();
    let cfg = LaunchConfig::for_elements(256, 256).unwrap();
    let k = fault_kernel("shared_read");
    let r = kit.launch(&k, cfg, &[(&out).into(), DevArg::I32(1)]);
    expect_fault(r, "shared_read", &["shared_read", "ld.shared", "thread"]);
    kit.launch(&k, cfg, &[(&out).into(), DevArg::I32(0)])
        .unwrap();
    let v: Vec<f32> = out.download().unwrap();
    assert_eq!(v[255], 765.0);
}

#[test]
fn a_missing_syncthreads_is_a_kernel_fault() {
    let kit = kit();
    let input: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let inp = kit.upload(&input).unwrap();
    let out = kit.alloc(gpukit_core::DType::F32, 256).unwrap();
    let cfg = LaunchConfig::for_elements(256, 256).unwrap();
    let args: [DevArg<'_>; 2] = [(&out).into(), (&inp).into()];
    let r = kit.launch(&fault_kernel("neighbour_nosync"), cfg, &args);
    expect_fault(r, "neighbour_nosync", &["neighbour_nosync", "race"]);
    kit.launch(&fault_kernel("neighbour_sync"), cfg, &args)
        .unwrap();
    let v: Vec<f32> = out.download().unwrap();
    assert_eq!(v[0], 1.0);
    assert_eq!(v[255], 0.0);
}

#[test]
fn a_kernel_without_an_entry_or_forms_is_a_clean_error() {
    let kit = kit();
    assert!(matches!(
        kit.load(&KernelDef::new("nothing")),
        Err(Error::KernelNotFound { .. })
    ));
    assert!(matches!(
        kit.load(&KernelDef::new("not_in_module").ptx(FAULTS)),
        Err(Error::KernelNotFound { .. })
    ));
    assert!(matches!(
        kit.load(&KernelDef::new("bad").ptx(".version 8.8\n.target sm_80\nbogus;")),
        Err(Error::Compile { .. })
    ));
}

#[test]
fn buffers_outlive_the_kit() {
    let kit = kit();
    let b: Buf = kit.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    drop(kit);
    assert_eq!(b.download::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn a_sampled_launch_extrapolates_and_caps_its_sectors_at_the_buffers() {
    // The shipped tiled matmul at 256³: every block computes one full tile, so a sample
    // of 3 blocks extrapolates the instructions and flops exactly; its unique sectors,
    // scaled without the reuse between blocks, are capped at the buffers' sectors,
    // which is what the whole launch touches.
    let n = 256;
    let (a, b) = (values(n * n, 3), values(n * n, 4));
    let record = |sample: Option<u64>| {
        let dev = EmuDevice::with_options(gpukit_emu::EmuOptions {
            counters: true,
            sample_blocks: sample,
            ..EmuDevice::new().options()
        });
        let log = dev.launch_log();
        let kit = Kit::from_device(Box::new(dev));
        let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        let bc = kit.alloc(gpukit_core::DType::F32, n * n).unwrap();
        gpukit_ops::matmul(&kit, &bc, &ba, &bb, n, n, n).unwrap();
        let mut r = log.take();
        assert_eq!(r.len(), 1, "{r:?}");
        r.pop().unwrap()
    };
    let full = record(None);
    let part = record(Some(3));
    assert_eq!(part.kernel, full.kernel);
    assert!(full.stats.blocks > 3);
    assert_eq!(
        (part.stats.blocks, part.stats.blocks_run),
        (full.stats.blocks, 3)
    );
    let (f, p) = (full.stats.counters.unwrap(), part.stats.counters.unwrap());
    assert_eq!(p.flops_f32, f.flops_f32);
    assert_eq!(f.flops_f32, 2 * (n * n * n) as u64);
    assert_eq!(p.total_warp_insts(), f.total_warp_insts());
    assert_eq!(p.shared_load_wavefronts, f.shared_load_wavefronts);
    assert_eq!(p.global_load_sectors, f.global_load_sectors);
    // Three 256 KiB buffers, each sector once: the whole launch and the capped sample.
    assert_eq!(f.unique_sectors, (3 * n * n * 4 / 32) as u64);
    assert_eq!(p.unique_sectors, f.unique_sectors);
}
