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

/// A replay file holds each distinct built-in launch: its module and entry, geometry,
/// calls, argument ranges (their bytes at the first call) and parameters; user kernels
/// are left out and counted.
#[test]
fn the_replay_file_holds_every_distinct_builtin_launch() {
    let (kit, census) = census_kit();
    let (a, b) = (
        kit.upload(&values(1000, 1)).unwrap(),
        kit.upload(&values(1000, 2)).unwrap(),
    );
    let out = kit.upload(&vec![7.0f32; 1000]).unwrap();
    gpukit_ops::add(&kit, &out, &a, &b).unwrap();
    gpukit_ops::add(&kit, &out, &a, &b).unwrap();
    let k = KernelDef::new("copy_coalesced").ptx(COUNTERS_PTX);
    kit.launch(
        &k,
        LaunchConfig::for_elements(256, 128).unwrap(),
        &[(&a).into(), (&out).into(), DevArg::I32(256)],
    )
    .unwrap();
    let mut file = Vec::new();
    assert_eq!(census.write_replay(&mut file).unwrap(), (1, 1));
    let e = &census.entries()[0];
    // Decode it back.
    let mut at = 0usize;
    let mut take = |n: usize| {
        let s = &file[at..at + n];
        at += n;
        s.to_vec()
    };
    assert_eq!(take(8), gpukit_emu::census::REPLAY_MAGIC);
    let u32_of = |b: Vec<u8>| u32::from_le_bytes(b.try_into().unwrap());
    assert_eq!(u32_of(take(4)), 1, "one launch");
    let n = u32_of(take(4)) as usize;
    assert_eq!(take(n), b"elementwise");
    let n = u32_of(take(4)) as usize;
    assert_eq!(take(n), b"add_f32");
    let geometry: Vec<u32> = (0..7).map(|_| u32_of(take(4))).collect();
    assert_eq!(geometry[..3], e.grid);
    assert_eq!(geometry[3..6], e.block);
    assert_eq!(geometry[6], e.dynamic_shared);
    assert_eq!(u64::from_le_bytes(take(8).try_into().unwrap()), 2, "calls");
    let ranges = u32_of(take(4));
    let mut floats = Vec::new();
    for _ in 0..ranges {
        let align = u32_of(take(4));
        assert!(align < 64);
        let len = u64::from_le_bytes(take(8).try_into().unwrap()) as usize;
        floats.push(take(len));
    }
    // The three buffers, each 1000 f32: the inputs' values and the output's sentinel.
    let as_f32 = |b: &Vec<u8>| -> Vec<f32> {
        b.chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let mut seen: Vec<Vec<f32>> = floats.iter().map(as_f32).collect();
    seen.sort_by(|x, y| x[0].total_cmp(&y[0]));
    let mut want = vec![values(1000, 1), values(1000, 2), vec![7.0f32; 1000]];
    want.sort_by(|x, y| x[0].total_cmp(&y[0]));
    assert_eq!(seen, want);
    let params = u32_of(take(4)) as usize;
    assert_eq!(params, e.args.len());
    let mut pointers = 0;
    for _ in 0..params {
        match take(1)[0] {
            1 => {
                let range = u32_of(take(4));
                assert!(range < ranges);
                assert_eq!(u64::from_le_bytes(take(8).try_into().unwrap()), 0);
                pointers += 1;
            }
            2 => {
                take(4);
            }
            3 => {
                take(8);
            }
            t => panic!("tag {t}"),
        }
    }
    assert_eq!(pointers, 3);
    assert_eq!(at, file.len(), "nothing after the last launch");
}
