//! The census kit (`EmuDevice::census`): every call validated and planned, every launch
//! recorded, no kernel body run; the distinct launches with their counts; and the
//! prediction of a workload from one replayed launch per distinct launch, whose
//! counters equal those of the same launch run on a counting emulator.

use gpukit_core::{DType, DevArg, Error, KernelDef, Kit, LaunchConfig};
use gpukit_emu::census::Census;
use gpukit_emu::{EmuDevice, EmuOptions, perf};

const COUNTERS_PTX: &str = include_str!("../../gpukit-ptx/tests/fixtures/counters.ptx");

fn census_kit() -> (Kit, Census) {
    let dev = EmuDevice::census();
    let census = dev.census_records().expect("a census device has records");
    (Kit::from_device(Box::new(dev)), census)
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 250.0 - 2.0
        })
        .collect()
}

#[test]
fn nothing_runs_and_every_launch_is_recorded() {
    let (kit, census) = census_kit();
    let (a, b) = (
        kit.upload(&values(1000, 1)).unwrap(),
        kit.upload(&values(1000, 2)).unwrap(),
    );
    // Outputs hold a sentinel: a kernel body that ran would overwrite it.
    let out = kit.upload(&vec![7.0f32; 1000]).unwrap();
    gpukit_ops::add(&kit, &out, &a, &b).unwrap();
    gpukit_ops::add(&kit, &out, &a, &b).unwrap();
    gpukit_ops::mul(&kit, &out, &a, &b).unwrap();
    let c = kit.upload(&vec![7.0f32; 64 * 48]).unwrap();
    let (x, y) = (
        kit.upload(&values(64 * 32, 3)).unwrap(),
        kit.upload(&values(32 * 48, 4)).unwrap(),
    );
    gpukit_ops::matmul(&kit, &c, &x, &y, 64, 32, 48).unwrap();
    // A user kernel too.
    let k = KernelDef::new("copy_coalesced").ptx(COUNTERS_PTX);
    let user_out = kit.upload(&vec![7.0f32; 256]).unwrap();
    kit.launch(
        &k,
        LaunchConfig::for_elements(256, 128).unwrap(),
        &[(&a).into(), (&user_out).into(), DevArg::I32(256)],
    )
    .unwrap();
    for (buf, n) in [(&out, 1000), (&c, 64 * 48), (&user_out, 256)] {
        assert_eq!(buf.download::<f32>().unwrap(), vec![7.0f32; n]);
    }
    let entries = census.entries();
    let names: Vec<&str> = entries.iter().map(|e| e.kernel.as_str()).collect();
    assert_eq!(names[0], "add_f32");
    assert_eq!(entries[0].calls, 2, "the same launch twice is one entry");
    assert_eq!(names[1], "mul_f32");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("bmm") && n.ends_with("_f32")),
        "{names:?}"
    );
    let user = entries.last().unwrap();
    assert_eq!(user.kernel, "copy_coalesced");
    assert!(user.user);
    assert_eq!(user.grid, [2, 1, 1]);
    assert_eq!(user.block, [128, 1, 1]);
    assert_eq!(
        census.launches(),
        entries.iter().map(|e| e.calls).sum::<u64>()
    );
    assert!(census.kernels().contains(&"add_f32".to_string()));
}

#[test]
fn bad_calls_are_refused_as_on_the_emulator() {
    let (kit, census) = census_kit();
    let a = kit.upload(&values(10, 1)).unwrap();
    let out = kit.alloc(DType::F32, 9).unwrap();
    assert!(matches!(
        gpukit_ops::add(&kit, &out, &a, &a),
        Err(Error::Length { .. })
    ));
    assert_eq!(census.launches(), 0);
}

#[test]
fn the_prediction_replays_one_launch_per_distinct_launch() {
    let (kit, census) = census_kit();
    let (a, b) = (
        kit.upload(&values(5000, 1)).unwrap(),
        kit.upload(&values(5000, 2)).unwrap(),
    );
    let out = kit.alloc(DType::F32, 5000).unwrap();
    for _ in 0..3 {
        gpukit_ops::add(&kit, &out, &a, &b).unwrap();
    }
    let gpu = perf::gpu("h200").unwrap();
    let p = census.predict(gpu).unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].entry.calls, 3);
    assert!(p[0].estimate.seconds > 0.0);
    assert_eq!(p[0].total_seconds, 3.0 * p[0].estimate.seconds);

    // The same launch on a counting emulator gives the same counters.
    let dev = EmuDevice::with_options(EmuOptions {
        counters: true,
        ..EmuDevice::new().options()
    });
    let log = dev.launch_log();
    let run = Kit::from_device(Box::new(dev));
    let (ra, rb) = (
        run.upload(&values(5000, 1)).unwrap(),
        run.upload(&values(5000, 2)).unwrap(),
    );
    let rout = run.alloc(DType::F32, 5000).unwrap();
    gpukit_ops::add(&run, &rout, &ra, &rb).unwrap();
    let direct = log.take();
    assert_eq!(direct.len(), 1);
    assert_eq!(direct[0].stats.counters, p[0].record.stats.counters);
    assert_eq!(direct[0].ideal_bytes, p[0].record.ideal_bytes);
}
