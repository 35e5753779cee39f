//! `--json` outputs: one JSON object per command with the keys and value types the
//! tool has always printed, its rows agreeing with the text table of the same command
//! and with the library (`gpukit::selftest::checks`, `gpukit::abi`).

mod common;

use common::gpukit;
use std::collections::BTreeSet;

use serde_json::Value;

/// Runs `gpukit args`, expects status 0 and one line of JSON, and parses it.
fn json(args: &[&str]) -> Value {
    let (code, out, err) = gpukit(args);
    assert_eq!(code, 0, "gpukit {args:?}: {err}");
    assert_eq!(out.lines().count(), 1, "gpukit {args:?}: {out}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("gpukit {args:?}: {e}: {out}"))
}

/// The keys of a JSON object.
fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(k: &[&'a str]) -> BTreeSet<&'a str> {
    k.iter().copied().collect()
}

fn array(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

#[test]
fn devices_json() {
    let v = json(&["devices", "--json"]);
    assert_eq!(keys(&v), set(&["devices", "cuda_unavailable"]));
    assert!(v["cuda_unavailable"].is_string() || v["cuda_unavailable"].is_null());
    let devs = array(&v["devices"]);
    let want = gpukit::devices();
    assert_eq!(devs.len(), want.len(), "{v}");
    for (d, w) in devs.iter().zip(&want) {
        assert_eq!(
            keys(d),
            set(&[
                "spec",
                "backend",
                "name",
                "compute_capability",
                "memory_bytes",
                "parallelism"
            ])
        );
        assert_eq!(d["spec"], w.spec().as_str());
        assert_eq!(d["backend"], w.backend.to_string().as_str());
        assert_eq!(d["name"], w.name.as_str());
        assert_eq!(d["memory_bytes"].as_u64(), Some(w.total_memory));
        assert_eq!(d["parallelism"].as_u64(), Some(w.parallelism as u64));
        match w.compute_capability {
            Some((a, b)) => assert_eq!(d["compute_capability"], format!("{a}.{b}").as_str()),
            None => assert!(d["compute_capability"].is_null()),
        }
    }
    assert!(devs.iter().any(|d| d["spec"] == "cpu"), "{v}");
}

#[test]
fn selftest_json_matches_the_checks_and_the_table() {
    let v = json(&["selftest", "--device", "cpu", "--json", "--seed", "7"]);
    assert_eq!(keys(&v), set(&["device", "seed", "results", "failures"]));
    assert_eq!(v["device"], "cpu");
    assert_eq!(v["seed"].as_u64(), Some(7));
    assert_eq!(v["failures"].as_u64(), Some(0), "{v}");
    let rows = array(&v["results"]);
    let checks = gpukit::selftest::checks();
    assert_eq!(rows.len(), checks.len());
    for (r, c) in rows.iter().zip(&checks) {
        assert_eq!(keys(r), set(&["op", "dtype", "pass", "failure", "seconds"]));
        assert_eq!(r["op"], c.op);
        assert_eq!(r["dtype"], c.dtype.name());
        assert_eq!(r["pass"], true, "{r}");
        assert!(r["failure"].is_null(), "{r}");
        assert!(r["seconds"].as_f64().is_some_and(|s| s >= 0.0), "{r}");
    }
    // The text table lists the same checks in the same order.
    let (code, text, err) = gpukit(&["selftest", "--device", "cpu", "--seed", "7"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0].split(", seed ").nth(1), Some("7"), "{}", lines[0]);
    assert_eq!(lines.len(), checks.len() + 3, "{text}");
    for (line, c) in lines[2..].iter().zip(&checks) {
        assert!(
            line.starts_with(&format!("{:<20} {:<6} ok", c.op, c.dtype.name())),
            "{line}"
        );
    }
    assert_eq!(
        lines.last().copied(),
        Some(format!("{} checks, 0 failed", checks.len()).as_str())
    );
}

#[test]
fn a_filtered_selftest_lists_only_its_checks() {
    let v = json(&[
        "selftest", "--device", "cpu", "--json", "--filter", "transfer",
    ]);
    let ops: Vec<(&str, &str)> = array(&v["results"])
        .iter()
        .map(|r| (r["op"].as_str().unwrap(), r["dtype"].as_str().unwrap()))
        .collect();
    let want = ["f32", "f64", "f16", "bf16", "i64", "i32"].map(|d| ("transfer", d));
    assert_eq!(ops, want);
    let (code, out, err) = gpukit(&["selftest", "--device", "cpu", "--filter", "zzz"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("--filter `zzz` selects no check"), "{err}");
}

#[test]
fn bench_json_matches_the_table() {
    let v = json(&["bench", "--quick", "--device", "cpu", "--json"]);
    assert_eq!(keys(&v), set(&["device", "results"]));
    assert_eq!(v["device"], "cpu");
    let rows = array(&v["results"]);
    let names: Vec<&str> = rows.iter().map(|r| r["bench"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "saxpy f32 (user kernel)",
            "block_sum f32 (user kernel)",
            "add f32",
            "exp f32",
            "sum f32",
            "softmax f32",
            "matmul f32",
            "matmul f32",
            "matmul f64",
            "matmul f64",
            "attention f32 (fused)",
            "upload f32",
            "download f32"
        ]
    );
    for r in rows {
        assert_eq!(keys(r), set(&["bench", "size", "seconds", "rate", "unit"]));
        assert!(r["size"].is_string(), "{r}");
        let unit = r["unit"].as_str().unwrap();
        assert!(unit == "GB/s" || unit == "GFLOP/s", "{r}");
        // rate = work / seconds / 1e9, both positive and finite (serde_json writes a
        // non-finite number as null).
        assert!(r["seconds"].as_f64().is_some_and(|s| s > 0.0), "{r}");
        assert!(r["rate"].as_f64().is_some_and(|x| x > 0.0), "{r}");
    }
    assert_eq!(rows[0]["size"], "n=4096");
    assert_eq!(rows[7]["size"], "64^3");
    let (code, text, err) = gpukit(&["bench", "--quick", "--device", "cpu"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("bench on cpu ("), "{text}");
    assert_eq!(lines.len(), rows.len() + 2, "{text}");
    for (line, r) in lines[2..].iter().zip(rows) {
        let name = r["bench"].as_str().unwrap();
        assert!(
            line.starts_with(&format!("{name:<28} {:<12}", r["size"].as_str().unwrap())),
            "{line}"
        );
        assert!(line.ends_with(r["unit"].as_str().unwrap()), "{line}");
    }
}

#[test]
fn profile_json_counts_the_launches() {
    let v = json(&[
        "profile",
        "--device",
        "cpu",
        "--json",
        "--filter",
        "transfer f32",
    ]);
    assert_eq!(keys(&v), set(&["device", "kernels"]));
    // A transfer launches no kernel: an empty report, still an object.
    assert_eq!(array(&v["kernels"]).len(), 0, "{v}");

    let v = json(&["profile", "--device", "cpu", "--json", "--filter", "sum"]);
    let rows = array(&v["kernels"]);
    assert!(!rows.is_empty(), "{v}");
    let mut share = 0.0;
    for r in rows {
        assert_eq!(
            keys(r),
            set(&["kernel", "calls", "total_s", "mean_s", "share"])
        );
        let calls = r["calls"].as_u64().unwrap();
        assert!(calls >= 1, "{r}");
        let (total, mean) = (
            r["total_s"].as_f64().unwrap(),
            r["mean_s"].as_f64().unwrap(),
        );
        // The mean is a Duration (the total divided by the calls, truncated to the
        // nanosecond): calls x mean may fall short of the total by up to a nanosecond
        // per call.
        assert!(
            (mean * calls as f64 - total).abs() <= 1e-6 * total + 1e-9 * calls as f64 + 1e-9,
            "{r}"
        );
        share += r["share"].as_f64().unwrap();
    }
    assert!((share - 1.0).abs() < 1e-6, "shares add up to {share}");
    assert!(rows.iter().any(|r| r["kernel"] == "sum_f32"), "{v}");
}

#[test]
fn emu_check_json_reports_the_kernels_it_ran() {
    let v = json(&[
        "emu-check",
        "--filter",
        "softmax f32",
        "--json",
        "--seed",
        "5",
    ]);
    assert_eq!(
        keys(&v),
        set(&["device", "seed", "kernels", "other_failures", "bad"])
    );
    assert_eq!(v["device"], "ptx-emu:0");
    assert_eq!(v["seed"].as_u64(), Some(5));
    assert_eq!(v["bad"].as_u64(), Some(0), "{v}");
    assert!(array(&v["other_failures"]).is_empty(), "{v}");
    let all = gpukit::abi::all_kernel_names();
    let rows = array(&v["kernels"]);
    assert!(!rows.is_empty(), "{v}");
    for r in rows {
        assert_eq!(keys(r), set(&["kernel", "launches", "result", "failure"]));
        assert!(all.iter().any(|k| r["kernel"] == k.as_str()), "{r}");
        assert!(r["launches"].as_u64().is_some_and(|n| n >= 1), "{r}");
        assert_eq!(r["result"], "ok");
        assert!(r["failure"].is_null());
    }
    assert!(rows.iter().any(|r| r["kernel"] == "softmax_f32"), "{v}");
}

#[test]
fn the_default_job_in_json_is_the_selftest() {
    let v = json(&["--device", "cpu", "--json"]);
    assert_eq!(keys(&v), set(&["device", "seed", "results", "failures"]));
    assert_eq!(v["seed"].as_u64(), Some(42));
    assert_eq!(array(&v["results"]).len(), gpukit::selftest::checks().len());
}

#[test]
fn profile_census_lists_the_kernels_and_predicts_without_running() {
    // The attention checks on the census kit: every kernel they launch on the emulator
    // is listed, each distinct launch replayed once for the prediction.
    let v = json(&[
        "profile",
        "--census",
        "--json",
        "--filter",
        "attention",
        "--gpu",
        "h100",
    ]);
    assert_eq!(v["census"], true);
    assert_eq!(v["gpu"], "h100");
    let needed: Vec<&str> = array(&v["kernels_needed"])
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for d in ["f32", "f64", "f16", "bf16"] {
        for op in [
            "attention",
            "attention_scores",
            "attention_general",
            "softmax",
        ] {
            let k = format!("{op}_{d}");
            assert!(needed.contains(&k.as_str()), "{k} not in {needed:?}");
        }
    }
    assert!(array(&v["checks_stopped"]).is_empty(), "{v}");
    let total = v["predicted_total_s"].as_f64().unwrap();
    let sum: f64 = array(&v["kernels"])
        .iter()
        .map(|r| r["predicted_s"].as_f64().unwrap())
        .sum();
    assert!(
        total > 0.0 && (total - sum).abs() <= 1e-9 * total,
        "{total} {sum}"
    );
    assert!(v["launches"].as_u64().unwrap() >= v["distinct_launches"].as_u64().unwrap());
}

#[test]
fn profile_census_of_the_whole_selftest_calls_every_table_kernel() {
    // The acceptance of the census: the selftest workload on the census kit calls every
    // built-in of the ABI table (as emu-check requires of the emulator run), runs none.
    let v = json(&["profile", "--census", "--json"]);
    assert!(
        array(&v["table_kernels_not_called"]).is_empty(),
        "{}",
        v["table_kernels_not_called"]
    );
    assert!(v["table_kernels"].as_u64().unwrap() > 400);
    // Only the CUDA C user kernels may stop (NVRTC missing); no built-in check does.
    for s in array(&v["checks_stopped"]) {
        let s = s.as_str().unwrap();
        assert!(s.contains("NVRTC") || s.contains("CUDA"), "{s}");
    }
    assert!(v["predicted_total_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn profile_counters_trace_is_the_estimated_timeline_with_counters() {
    let path =
        std::env::temp_dir().join(format!("gpukit-counters-trace-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let v = json(&[
        "profile",
        "--counters",
        "--json",
        "--filter",
        "softmax f32",
        "--trace",
        p,
    ]);
    let t: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    let events = array(&t["traceEvents"]);
    let calls: u64 = array(&v["kernels"])
        .iter()
        .map(|r| r["calls"].as_u64().unwrap())
        .sum();
    assert_eq!(events.len() as u64, calls, "one event per launch");
    // Back to back: each event starts where the previous ended; durations sum to the total.
    let mut end = 0.0;
    for e in events {
        assert_eq!(e["ph"], "X");
        let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
        assert!((ts - end).abs() <= 1e-9 * end.max(1.0), "{e}");
        end = ts + dur;
        for k in [
            "warp_instructions",
            "dram_bytes_lower",
            "ideal_bytes",
            "occupancy",
            "bound",
        ] {
            assert!(!e["args"][k].is_null(), "{k} missing in {e}");
        }
    }
    let total_us = v["estimated_total_s"].as_f64().unwrap() * 1e6;
    assert!(
        (end - total_us).abs() <= 1e-6 * total_us.max(1.0),
        "{end} vs {total_us}"
    );
}

#[test]
fn profile_counters_large_counts_a_sample_at_realistic_sizes_on_several_gpus() {
    // Attention at 16 heads x 1024 x 64 in every float dtype, two blocks emulated per
    // launch; one table per GPU named.
    let v = json(&[
        "profile",
        "--counters",
        "--large",
        "--json",
        "--filter",
        "attention",
        "--sample",
        "2",
        "--gpu",
        "a100,h200",
    ]);
    let tables = array(&v);
    assert_eq!(tables.len(), 2, "{v}");
    assert_eq!(
        (tables[0]["gpu"].as_str(), tables[1]["gpu"].as_str()),
        (Some("a100"), Some("h200"))
    );
    let est = |t: &Value, k: &str| {
        array(&t["kernels"])
            .iter()
            .find(|r| r["kernel"] == k)
            .unwrap_or_else(|| panic!("{k} missing in {t}"))["estimated_s"]
            .as_f64()
            .unwrap()
    };
    for t in tables {
        assert_eq!(t["sampled"], true);
        for d in ["f32", "f64", "f16", "bf16"] {
            let k = format!("attention_general_{d}");
            let r = array(&t["kernels"])
                .iter()
                .find(|r| r["kernel"] == k.as_str())
                .unwrap();
            // Two launches (plain and causal); 2 * 16 * 1024 * 1024 * 64 multiply-adds
            // for each of the two products, less what the causal mask skips.
            assert_eq!(r["calls"].as_u64(), Some(2), "{r}");
            assert!(r["thread_instructions"].as_u64().unwrap() > 1 << 30, "{r}");
        }
    }
    // The same counters on a slower GPU take longer.
    assert!(est(&tables[0], "attention_general_f32") > est(&tables[1], "attention_general_f32"));
}
