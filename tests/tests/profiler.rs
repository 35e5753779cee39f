//! The profiler: exactly the kernels launched, with the right call counts, ranked by
//! time, and a trace file that parses as Chrome trace-event JSON.

use gpukit::demo;
use gpukit::prelude::*;

fn spin(name: &str, iters: u32) -> KernelDef {
    KernelDef::new(name).cpu(move |blk| {
        let out = blk.buf::<f64>(0)?;
        let mut acc = 0.0f64;
        for i in 0..iters {
            acc = (i as f64).mul_add(1e-9, acc);
        }
        out.set(blk.block_idx().x as usize, acc);
        Ok(())
    })
}

#[test]
fn report_lists_exactly_the_launched_kernels() {
    let kit = Kit::cpu().unwrap();
    // Launches before profiling is on are not counted.
    let x = kit.upload(&[1.0f32; 100]).unwrap();
    let cfg = LaunchConfig::for_elements(100, 32).unwrap();
    let saxpy_args = [DevArg::F32(1.0), (&x).into(), (&x).into(), DevArg::I64(100)];
    kit.launch(&demo::saxpy(), cfg, &saxpy_args).unwrap();

    kit.set_profiling(true);
    assert!(kit.profiling());
    let out = kit.zeros(DType::F64, 4).unwrap();
    let grid4 = LaunchConfig::for_elements(4, 1).unwrap();
    for _ in 0..3 {
        kit.launch(&demo::saxpy(), cfg, &saxpy_args).unwrap();
    }
    for _ in 0..2 {
        kit.launch(&spin("heavy", 2_000_000), grid4, &[(&out).into()])
            .unwrap();
    }
    let mut sums = [0.0f32; 1];
    kit.run(
        &demo::block_sum(),
        demo::block_sum_config(100).unwrap(),
        &mut [
            Binding::input(&[1.0f32; 100]),
            Binding::output(&mut sums),
            Binding::I64(100),
        ],
    )
    .unwrap();
    assert_eq!(sums[0], 100.0);
    kit.set_profiling(false);
    kit.launch(&demo::saxpy(), cfg, &saxpy_args).unwrap();

    let report = kit.profile_report();
    let mut calls: Vec<(String, u64)> = report
        .entries
        .iter()
        .map(|e| (e.name.clone(), e.calls))
        .collect();
    calls.sort();
    assert_eq!(
        calls,
        vec![
            ("gk_demo_block_sum".to_string(), 1),
            ("gk_demo_saxpy".to_string(), 3),
            ("heavy".to_string(), 2)
        ]
    );
    // Ranked by total time: the spinning kernel is far ahead.
    assert_eq!(report.entries[0].name, "heavy");
    for w in report.entries.windows(2) {
        assert!(w[0].total >= w[1].total);
    }
    let share: f64 = report.entries.iter().map(|e| e.share).sum();
    assert!((share - 1.0).abs() < 1e-9);
    let heavy = &report.entries[0];
    assert_eq!(heavy.mean, heavy.total / 2);

    let table = report.to_string();
    assert!(table.lines().next().unwrap().starts_with("kernel"));
    assert_eq!(table.lines().count(), 4);

    let path = std::env::temp_dir().join(format!("gpukit-trace-{}.json", std::process::id()));
    report.write_chrome_trace(&path).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    assert_eq!(events.len(), 6);
    assert!(
        events
            .iter()
            .all(|e| e["ph"] == "X" && e["dur"].as_f64().unwrap() >= 0.0)
    );
    let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "gk_demo_saxpy",
            "gk_demo_saxpy",
            "gk_demo_saxpy",
            "heavy",
            "heavy",
            "gk_demo_block_sum"
        ]
    );

    kit.reset_profile();
    assert!(kit.profile_report().entries.is_empty());
}

#[test]
fn trace_escapes_odd_kernel_names() {
    let kit = Kit::cpu().unwrap();
    kit.set_profiling(true);
    let out = kit.zeros(DType::F64, 1).unwrap();
    kit.launch(
        &spin("we\"ird\\name\n", 1),
        LaunchConfig::for_elements(1, 1).unwrap(),
        &[(&out).into()],
    )
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&kit.profile_report().to_chrome_trace()).unwrap();
    assert_eq!(json["traceEvents"][0]["name"], "we\"ird\\name\n");
}
