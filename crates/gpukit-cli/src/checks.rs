//! The commands built on the self-check: `selftest`, `profile` and `emu-check`.

use std::process::ExitCode;

use gpukit::prelude::*;
use gpukit::selftest::{self, Check, CheckResult};
use serde_json::json;

use crate::cli::{CheckArgs, Global, ProfileArgs};
use crate::progress::Progress;

/// The label `--filter` matches: `OP DTYPE`.
fn label(c: &Check) -> String {
    format!("{} {}", c.op, c.dtype.name())
}

/// The checks `args` selects: every check, or those whose [`label`] contains the
/// filter (ASCII case-insensitive).
///
/// Errors: a message naming the filter when it selects no check.
pub(crate) fn select(args: &CheckArgs) -> Result<Vec<Check>, String> {
    let all = selftest::checks();
    let Some(f) = &args.filter else {
        return Ok(all);
    };
    let want = f.to_ascii_lowercase();
    let picked: Vec<Check> = all
        .into_iter()
        .filter(|c| label(c).to_ascii_lowercase().contains(&want))
        .collect();
    if picked.is_empty() {
        Err(format!(
            "--filter `{f}` selects no check (labels are `OP DTYPE`, e.g. `sum f32`)"
        ))
    } else {
        Ok(picked)
    }
}

/// Runs `checks` on `kit` under a progress bar.
pub(crate) fn run(kit: &Kit, seed: u64, checks: &[Check]) -> Vec<CheckResult> {
    let mut p = Progress::new(checks.len());
    selftest::run_checks(kit, seed, checks, |i, n, c| p.step(i, n, &label(c)))
}

/// Says a bad `--filter` on stderr: status 2.
fn usage_error(msg: &str) -> ExitCode {
    eprintln!("gpukit: {msg}");
    ExitCode::from(2)
}

/// `gpukit selftest`: the checks on `kit`, a table or one JSON object; status 1 on any
/// failure, 2 on a filter that selects nothing.
pub(crate) fn selftest(g: &Global, args: &CheckArgs, kit: &Kit) -> ExitCode {
    let checks = match select(args) {
        Ok(c) => c,
        Err(m) => return usage_error(&m),
    };
    let results = run(kit, g.seed, &checks);
    let failures = results.iter().filter(|r| r.failure.is_some()).count();
    if g.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                json!({"op": r.op, "dtype": r.dtype.name(), "pass": r.failure.is_none(),
                            "failure": r.failure, "seconds": r.time.as_secs_f64()})
            })
            .collect();
        outln!(
            "{}",
            json!({"device": kit.info().spec(), "seed": g.seed, "results": rows, "failures": failures})
        );
    } else {
        outln!(
            "selftest on {} ({}), seed {}",
            kit.info().spec(),
            kit.info().name,
            g.seed
        );
        outln!(
            "{:<20} {:<6} {:<6} {:>10}",
            "op",
            "dtype",
            "result",
            "time ms"
        );
        for r in &results {
            outln!(
                "{:<20} {:<6} {:<6} {:>10.3}",
                r.op,
                r.dtype.name(),
                if r.failure.is_none() { "ok" } else { "FAIL" },
                r.time.as_secs_f64() * 1e3
            );
            if let Some(f) = &r.failure {
                outln!("    {f}");
            }
        }
        outln!("{} checks, {} failed", results.len(), failures);
    }
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `gpukit profile`: the checks with the profiler on, then its report (and a Chrome
/// trace with `--trace`); status 1 when a check failed.
///
/// Errors: writing the trace file.
pub(crate) fn profile(g: &Global, args: &ProfileArgs, kit: &Kit) -> gpukit::Result<ExitCode> {
    let checks = match select(&args.checks) {
        Ok(c) => c,
        Err(m) => return Ok(usage_error(&m)),
    };
    kit.set_profiling(true);
    let results = run(kit, g.seed, &checks);
    let report = kit.profile_report();
    if let Some(path) = &args.trace {
        report.write_chrome_trace(path)?;
    }
    if g.json {
        let rows: Vec<_> = report
            .entries
            .iter()
            .map(|e| {
                json!({"kernel": e.name, "calls": e.calls, "total_s": e.total.as_secs_f64(),
                            "mean_s": e.mean.as_secs_f64(), "share": e.share})
            })
            .collect();
        outln!("{}", json!({"device": kit.info().spec(), "kernels": rows}));
    } else {
        out!("{report}");
        if let Some(path) = &args.trace {
            outln!("trace written to {path} (open it at https://ui.perfetto.dev)");
        }
    }
    Ok(if selftest::failed(&results).is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// One row of the emu-check table: kernel, launches, result, failure.
type KernelRow = (String, u64, &'static str, Option<String>);

/// The kernels emu-check reports: every kernel of the ABI table when every check ran;
/// with a filter, those the selected checks launched or are named after.
fn kernel_rows(
    names: &[String],
    results: &[CheckResult],
    calls: impl Fn(&str) -> u64,
    filtered: bool,
) -> Vec<KernelRow> {
    let failure_of = |name: &str| {
        results.iter().find_map(|r| {
            let k = gpukit::abi::kernel_name(r.op, r.dtype);
            (k == name).then_some(r.failure.clone()).flatten()
        })
    };
    let named = |name: &str| {
        results
            .iter()
            .any(|r| gpukit::abi::kernel_name(r.op, r.dtype) == name)
    };
    names
        .iter()
        .filter(|name| !filtered || calls(name) > 0 || named(name))
        .map(|name| {
            let n = calls(name);
            let (st, f) = match (n, failure_of(name)) {
                (_, Some(f)) => ("FAIL", Some(f)),
                (0, None) => ("NOT RUN", None),
                _ => ("ok", None),
            };
            (name.clone(), n, st, f)
        })
        .collect()
}

/// `gpukit emu-check`: the selftest on the PTX emulator (memcheck and racecheck on),
/// with the profiler counting each built-in kernel's launches, then one row per kernel
/// of the ABI table; status 1 on a fault, a mismatch or a kernel never launched, 2 when
/// the emulator is not in this build or the filter selects nothing.
pub(crate) fn emu_check(g: &Global, args: &CheckArgs) -> ExitCode {
    let checks = match select(args) {
        Ok(c) => c,
        Err(m) => return usage_error(&m),
    };
    let kit = match gpukit::open("ptx-emu") {
        Ok(k) => k,
        Err(e) => {
            eprintln!("gpukit: {e}");
            return ExitCode::from(2);
        }
    };
    kit.set_profiling(true);
    let results = run(&kit, g.seed, &checks);
    let report = kit.profile_report();
    let calls = |name: &str| {
        report
            .entries
            .iter()
            .find(|e| e.name == name)
            .map_or(0, |e| e.calls)
    };
    let names = gpukit::abi::all_kernel_names();
    let rows = kernel_rows(&names, &results, calls, args.filter.is_some());
    // Checks of user kernels written in CUDA C need NVRTC on the emulator, as on a GPU;
    // without it they are reported as skipped, not as failures of the shipped kernels.
    let compiler = gpukit::cuda_compiler_available();
    let other: Vec<&CheckResult> = results
        .iter()
        .filter(|r| {
            r.failure.is_some()
                && compiler
                && !names.contains(&gpukit::abi::kernel_name(r.op, r.dtype))
        })
        .collect();
    let bad = rows.iter().filter(|r| r.2 != "ok").count() + other.len();
    if g.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(k, n, st, f)| json!({"kernel": k, "launches": n, "result": st, "failure": f}))
            .collect();
        let extra: Vec<_> = other
            .iter()
            .map(|r| json!({"check": r.op, "dtype": r.dtype.name(), "failure": r.failure}))
            .collect();
        outln!(
            "{}",
            json!({"device": kit.info().spec(), "seed": g.seed, "kernels": v, "other_failures": extra, "bad": bad})
        );
    } else {
        outln!(
            "emu-check: every built-in kernel under the PTX emulator (memcheck and racecheck on), seed {}",
            g.seed
        );
        if let Some(f) = &args.filter {
            outln!(
                "only the {} checks matching `{f}`, and the kernels they launch",
                checks.len()
            );
        }
        outln!("{:<28} {:>9}  result", "kernel", "launches");
        for (k, n, st, f) in &rows {
            outln!("{k:<28} {n:>9}  {st}");
            if let Some(f) = f {
                outln!("    {f}");
            }
        }
        for r in &other {
            outln!(
                "check {} {}: FAIL\n    {}",
                r.op,
                r.dtype.name(),
                r.failure.as_deref().unwrap_or_default()
            );
        }
        if !compiler {
            outln!(
                "skipped: the selftest's user kernels in CUDA C (NVRTC or the CUDA headers not found)"
            );
        }
        outln!(
            "{} kernels, {} ok, {} not ok",
            rows.len(),
            rows.iter().filter(|r| r.2 == "ok").count(),
            bad
        );
    }
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn filter(f: &str) -> CheckArgs {
        CheckArgs {
            filter: Some(f.into()),
        }
    }

    #[test]
    fn filters_match_the_label_case_blind() {
        let all = selftest::checks();
        assert_eq!(select(&CheckArgs::default()).unwrap().len(), all.len());
        let t = select(&filter("TRANSFER")).unwrap();
        assert_eq!(t.len(), 6);
        assert!(t.iter().all(|c| c.op == "transfer"));
        let t = select(&filter("transfer f16")).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].dtype, DType::F16);
        let f16 = select(&filter(" f16")).unwrap();
        assert_eq!(
            f16.len(),
            all.iter().filter(|c| c.dtype == DType::F16).count()
        );
        let e = select(&filter("no such op")).unwrap_err();
        assert!(e.contains("no such op"), "{e}");
    }

    fn result(op: &'static str, dtype: DType, failure: Option<&str>) -> CheckResult {
        CheckResult {
            op,
            dtype,
            failure: failure.map(str::to_string),
            time: Duration::ZERO,
        }
    }

    #[test]
    fn kernel_rows_say_ok_fail_and_not_run() {
        let names: Vec<String> = ["sum_f32", "sum_f64", "exp_f32", "max_f32"]
            .map(String::from)
            .to_vec();
        let results = [
            result("sum", DType::F32, None),
            result("exp", DType::F32, Some("mismatch: element 1")),
            result("sum", DType::F64, None),
        ];
        // sum_f64 named by a check but never launched; max_f32 launched by another.
        let calls = |n: &str| match n {
            "sum_f32" => 2,
            "exp_f32" => 1,
            "max_f32" => 3,
            _ => 0,
        };
        let all = kernel_rows(&names, &results, calls, false);
        let st: Vec<(&str, u64, &str)> = all.iter().map(|r| (r.0.as_str(), r.1, r.2)).collect();
        assert_eq!(
            st,
            [
                ("sum_f32", 2, "ok"),
                ("sum_f64", 0, "NOT RUN"),
                ("exp_f32", 1, "FAIL"),
                ("max_f32", 3, "ok")
            ]
        );
        assert_eq!(all[2].3.as_deref(), Some("mismatch: element 1"));
        // Filtered: unlaunched kernels no check names drop out; the rest stay.
        let names2: Vec<String> = names.iter().cloned().chain(["min_f32".into()]).collect();
        let some = kernel_rows(&names2, &results, calls, true);
        assert_eq!(some.len(), 4, "{some:?}");
        assert!(some.iter().all(|r| r.0 != "min_f32"));
        assert_eq!(kernel_rows(&names2, &results, calls, false).len(), 5);
    }
}
