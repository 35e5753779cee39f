//! `gpukit profile --counters [--gpu NAME]`: the selftest workload on the PTX emulator
//! with its performance counters, summed per kernel, and the roofline estimate of each
//! kernel's launches on a real GPU (`gpukit::emu::perf`). `gpukit profile --census`:
//! the same workload on the census kit (`gpukit::emu::census`), which runs nothing, and
//! its prediction from one replayed launch per distinct launch.

use std::collections::BTreeMap;
use std::process::ExitCode;

use gpukit::emu::perf::{self, Bound, GpuSpec};
use gpukit::emu::{Counters, EmuDevice, EmuOptions, LaunchRecord};
use gpukit::prelude::*;
use serde_json::json;

use crate::cli::{Global, ProfileArgs};

/// One kernel's launches, summed.
#[derive(Default)]
struct Row {
    calls: u64,
    c: Counters,
    ideal_bytes: u64,
    est_seconds: f64,
    /// Estimated seconds per limiting bound.
    by_bound: [f64; 4],
    registers: u32,
    static_shared: u32,
    occupancy_min: f64,
}

/// Sums the records per kernel with each launch's estimate on `gpu`.
fn rows(records: &[LaunchRecord], gpu: &GpuSpec) -> BTreeMap<String, Row> {
    let mut out: BTreeMap<String, Row> = BTreeMap::new();
    for r in records {
        let (Some(c), Some((e, registers, static_shared))) =
            (r.stats.counters, perf::estimate_record(gpu, r))
        else {
            continue;
        };
        let row = out.entry(r.kernel.clone()).or_insert_with(|| Row {
            occupancy_min: f64::INFINITY,
            ..Row::default()
        });
        row.calls += 1;
        row.c.add(&c);
        row.ideal_bytes += r.ideal_bytes;
        row.est_seconds += e.seconds;
        row.by_bound[e.bound as usize] += e.seconds;
        row.registers = registers;
        row.static_shared = static_shared;
        row.occupancy_min = row.occupancy_min.min(e.occupancy);
    }
    out
}

fn bound_of(row: &Row) -> Bound {
    let i = (0..4)
        .max_by(|&a, &b| row.by_bound[a].total_cmp(&row.by_bound[b]))
        .unwrap_or(0);
    [Bound::Compute, Bound::Dram, Bound::Shared, Bound::Issue][i]
}

fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

/// The launches as a Chrome trace of the estimated GPU timeline: one complete event
/// per launch, back to back in launch order, each as long as its estimate on `gpu`,
/// with its counters, ideal bytes, occupancy and limiting bound as the event's args.
fn counters_trace(records: &[LaunchRecord], gpu: &GpuSpec) -> serde_json::Value {
    let mut t = 0.0f64;
    let mut events = Vec::with_capacity(records.len());
    for r in records {
        let (Some(c), Some((e, registers, _))) = (r.stats.counters, perf::estimate_record(gpu, r))
        else {
            continue;
        };
        let dur = e.seconds * 1e6;
        events.push(json!({
            "name": r.kernel, "cat": "estimated", "ph": "X", "pid": 1, "tid": 1,
            "ts": t, "dur": dur,
            "args": {
                "grid": r.grid, "block": r.block, "warp_instructions": c.total_warp_insts(),
                "flops_f32": c.flops_f32, "flops_f64": c.flops_f64, "flops_f16": c.flops_f16,
                "dram_bytes_lower": c.dram_bytes_lower(), "dram_bytes_upper": c.dram_bytes_upper(),
                "ideal_bytes": r.ideal_bytes, "coalescing": c.coalescing_efficiency(),
                "bank_conflicts_per_request": c.bank_conflicts_per_request(),
                "simt_efficiency": c.simt_efficiency(), "registers": registers,
                "occupancy": e.occupancy, "bound": e.bound.name(),
            }
        }));
        t += dur;
    }
    json!({
        "displayTimeUnit": "ns",
        "otherData": {"gpu": gpu.name, "note": "estimated from the PTX emulator's counters, not measured"},
        "traceEvents": events,
    })
}

/// One kernel's census row: calls, predicted seconds, and those seconds per bound.
type CensusRow = (u64, f64, [f64; 4]);

/// The one GPU named by `--gpu` (the census predicts for one), or the usage error
/// (status 2).
fn gpu_of(args: &ProfileArgs) -> Result<&'static GpuSpec, ExitCode> {
    match gpus_of(args)?.as_slice() {
        [g] => Ok(g),
        _ => {
            eprintln!("gpukit: --census predicts for one GPU, not `{}`", args.gpu);
            Err(ExitCode::from(2))
        }
    }
}

/// The `--census` form of `gpukit profile`: the selftest workload on the census kit
/// (nothing runs), the kernels it needs and its predicted time on `--gpu`; status 2 for
/// an unknown GPU or filter, 1 when a replayed launch fails.
pub(crate) fn profile_census(g: &Global, args: &ProfileArgs) -> ExitCode {
    let gpu = match gpu_of(args) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let checks = match crate::checks::select(&args.checks) {
        Ok(c) => c,
        Err(m) => {
            eprintln!("gpukit: {m}");
            return ExitCode::from(2);
        }
    };
    let dev = EmuDevice::census();
    let Some(census) = dev.census_records() else {
        eprintln!("gpukit: the census device keeps no records");
        return ExitCode::FAILURE;
    };
    let kit = Kit::from_device(Box::new(dev));
    kit.set_profiling(true);
    // Comparisons pass on the census kit (nothing is computed); a check that stops with
    // an error has not launched all of its kernels: say which.
    let results = crate::checks::run(&kit, g.seed, &checks);
    let stopped: Vec<String> = results
        .iter()
        .filter_map(|r| {
            r.failure
                .as_ref()
                .map(|f| format!("{} {}: {f}", r.op, r.dtype.name()))
        })
        .collect();
    for s in &stopped {
        eprintln!("gpukit: census: check {s}");
    }
    let kernels = census.kernels();
    // The ABI table's built-ins the workload called (the Kit's profiler names them as
    // `emu-check` does; a plan may launch other entries for them, listed in `kernels`).
    let report = kit.profile_report();
    let table = gpukit::abi::all_kernel_names();
    let not_called: Vec<&String> = table
        .iter()
        .filter(|n| !report.entries.iter().any(|e| &e.name == *n && e.calls > 0))
        .collect();
    if let Some(path) = &args.replay {
        let written = std::fs::File::create(path)
            .and_then(|f| census.write_replay(&mut std::io::BufWriter::new(f)));
        match written {
            Ok((n, user)) => eprintln!(
                "gpukit: wrote {n} distinct launches to {path}{}",
                if user > 0 {
                    format!(" ({user} user-kernel launches left out)")
                } else {
                    String::new()
                }
            ),
            Err(e) => {
                eprintln!("gpukit: writing {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let predictions = match census.predict(gpu) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("gpukit: replaying a recorded launch failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Per kernel: calls and predicted seconds.
    let mut per: BTreeMap<String, CensusRow> = BTreeMap::new();
    for p in &predictions {
        let row = per.entry(p.entry.kernel.clone()).or_default();
        row.0 += p.entry.calls;
        row.1 += p.total_seconds;
        row.2[p.estimate.bound as usize] += p.total_seconds;
    }
    let mut ranked: Vec<(&String, &CensusRow)> = per.iter().collect();
    ranked.sort_by(|a, b| b.1.1.total_cmp(&a.1.1).then(a.0.cmp(b.0)));
    let total: f64 = predictions.iter().map(|p| p.total_seconds).sum();
    let bound = |b: &[f64; 4]| {
        let i = (0..4).max_by(|&x, &y| b[x].total_cmp(&b[y])).unwrap_or(0);
        [Bound::Compute, Bound::Dram, Bound::Shared, Bound::Issue][i].name()
    };
    if g.json {
        let rows: Vec<_> = ranked
            .iter()
            .map(|(k, (calls, s, b))| {
                json!({"kernel": k, "calls": calls, "predicted_s": s, "bound": bound(b)})
            })
            .collect();
        outln!(
            "{}",
            json!({"census": true, "launches": census.launches(), "checks_stopped": stopped,
                   "table_kernels": table.len(), "table_kernels_not_called": not_called,
                   "distinct_launches": predictions.len(), "kernels_needed": kernels,
                   "gpu": gpu.key, "gpu_name": gpu.name, "predicted_total_s": total,
                   "kernels": rows})
        );
    } else {
        outln!(
            "census of the selftest workload: {} launches ({} distinct) of {} kernels; no kernel ran",
            census.launches(),
            predictions.len(),
            kernels.len()
        );
        outln!(
            "built-in kernels of the ABI table called: {} of {}{}",
            table.len() - not_called.len(),
            table.len(),
            if not_called.is_empty() {
                String::new()
            } else {
                format!(
                    " (not: {})",
                    not_called
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        );
        outln!(
            "predicted on {} from one emulated launch per distinct launch: {:.1} us",
            gpu.name,
            total * 1e6
        );
        outln!(
            "{:<32} {:>6} {:>12} {:>8}",
            "kernel",
            "calls",
            "predicted us",
            "bound"
        );
        for (k, (calls, s, b)) in &ranked {
            outln!("{k:<32} {calls:>6} {:>12.2} {:>8}", s * 1e6, bound(b));
        }
        outln!("kernels needed: {}", kernels.join(" "));
    }
    ExitCode::SUCCESS
}

/// The GPUs named by `--gpu` (a comma-separated list), or the usage error (status 2).
fn gpus_of(args: &ProfileArgs) -> Result<Vec<&'static GpuSpec>, ExitCode> {
    args.gpu
        .split(',')
        .map(|k| {
            perf::gpu(k.trim()).ok_or_else(|| {
                let keys: Vec<&str> = perf::GPUS.iter().map(|g| g.key).collect();
                eprintln!("gpukit: --gpu `{k}` is not one of {}", keys.join(", "));
                ExitCode::from(2)
            })
        })
        .collect()
}

/// Runs `--large`'s steps (those whose label contains `filter`) in every float dtype;
/// prints each failure on stderr and returns whether all ran. `Err` when the filter
/// matches no step.
fn run_large(kit: &Kit, filter: Option<&str>) -> Result<bool, String> {
    let steps: Vec<_> = crate::large::STEPS
        .iter()
        .filter(|(label, _)| filter.is_none_or(|f| label.contains(f)))
        .collect();
    if steps.is_empty() {
        return Err(format!("no --large step matches the filter {filter:?}"));
    }
    let mut ok = true;
    for (label, step) in steps {
        for dt in crate::large::DTYPES {
            eprintln!("gpukit: counting {label} ({})", dt.name());
            if let Err(e) = step(kit, dt) {
                eprintln!("gpukit: {label} ({}): {e}", dt.name());
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// The `--counters` form of `gpukit profile`; status 2 for another device or an
/// unknown GPU, 1 when a check (or a `--large` step) failed.
pub(crate) fn profile_counters(g: &Global, args: &ProfileArgs) -> ExitCode {
    if let Some(d) = &g.device
        && !matches!(
            d.to_ascii_lowercase().as_str(),
            "ptx-emu" | "ptx-emu:0" | "emu"
        )
    {
        eprintln!("gpukit: --counters runs on the PTX emulator (--device ptx-emu), not `{d}`");
        return ExitCode::from(2);
    }
    let gpus = match gpus_of(args) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let dev = EmuDevice::with_options(EmuOptions {
        counters: true,
        sample_blocks: args.large.then_some(args.sample),
        ..EmuDevice::new().options()
    });
    let log = dev.launch_log();
    let kit = Kit::from_device(Box::new(dev));
    let all_ok = if args.large {
        match run_large(&kit, args.checks.filter.as_deref()) {
            Ok(ok) => ok,
            Err(m) => {
                eprintln!("gpukit: {m}");
                return ExitCode::from(2);
            }
        }
    } else {
        let checks = match crate::checks::select(&args.checks) {
            Ok(c) => c,
            Err(m) => {
                eprintln!("gpukit: {m}");
                return ExitCode::from(2);
            }
        };
        let results = crate::checks::run(&kit, g.seed, &checks);
        gpukit::selftest::failed(&results).is_none()
    };
    let records = log.take();
    if let Some(path) = &args.trace
        && let Err(e) = std::fs::write(path, counters_trace(&records, gpus[0]).to_string())
    {
        eprintln!("gpukit: writing the trace {path}: {e}");
        return ExitCode::FAILURE;
    }
    let tables: Vec<serde_json::Value> = gpus
        .iter()
        .map(|gpu| print_table(g, gpu, &records, args.large))
        .collect();
    if g.json {
        if tables.len() == 1 {
            outln!("{}", tables[0]);
        } else {
            outln!("{}", serde_json::Value::Array(tables));
        }
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Prints the ranked per-kernel table on `gpu` (text mode) and returns it as JSON.
fn print_table(
    g: &Global,
    gpu: &GpuSpec,
    records: &[LaunchRecord],
    sampled: bool,
) -> serde_json::Value {
    let rows = rows(records, gpu);
    let mut ranked: Vec<(&String, &Row)> = rows.iter().collect();
    ranked.sort_by(|a, b| {
        b.1.est_seconds
            .total_cmp(&a.1.est_seconds)
            .then(a.0.cmp(b.0))
    });
    let total: f64 = ranked.iter().map(|r| r.1.est_seconds).sum();
    let kernels: Vec<_> = ranked
        .iter()
        .map(|(name, r)| {
            json!({
                "kernel": name, "calls": r.calls,
                "warp_instructions": r.c.total_warp_insts(),
                "thread_instructions": r.c.total_thread_insts(),
                "flops_f32": r.c.flops_f32, "flops_f64": r.c.flops_f64,
                "flops_f16": r.c.flops_f16,
                "dram_bytes_lower": r.c.dram_bytes_lower(),
                "dram_bytes_upper": r.c.dram_bytes_upper(),
                "ideal_bytes": r.ideal_bytes,
                "sectors_per_request": r.c.sectors_per_request(),
                "coalescing": r.c.coalescing_efficiency(),
                "shared_wavefronts": r.c.shared_load_wavefronts + r.c.shared_store_wavefronts,
                "bank_conflicts_per_request": r.c.bank_conflicts_per_request(),
                "simt_efficiency": r.c.simt_efficiency(),
                "divergent_branches": r.c.divergent_branches,
                "local_requests": r.c.local_requests,
                "registers": r.registers, "static_shared": r.static_shared,
                "occupancy_min": r.occupancy_min,
                "estimated_s": r.est_seconds, "bound": bound_of(r).name(),
            })
        })
        .collect();
    let value = json!({"device": "ptx-emu", "gpu": gpu.key, "gpu_name": gpu.name,
                       "sampled": sampled, "estimated_total_s": total, "kernels": kernels});
    if !g.json {
        outln!(
            "Estimated on {} ({} SMs, {} GB/s, {} TFLOP/s FP32): {:.1} us over {} launches",
            gpu.name,
            gpu.sms,
            gpu.dram_gbps,
            gpu.fp32_tflops,
            total * 1e6,
            records.len()
        );
        outln!(
            "{:<32} {:>5} {:>10} {:>10} {:>10} {:>6} {:>6} {:>5} {:>4} {:>5} {:>9} {:>7}",
            "kernel",
            "calls",
            "warp inst",
            "dram",
            "ideal",
            "dram/i",
            "coal",
            "bank",
            "regs",
            "occ",
            "est us",
            "bound"
        );
        for (name, r) in &ranked {
            let ratio = if r.ideal_bytes == 0 {
                0.0
            } else {
                r.c.dram_bytes_lower() as f64 / r.ideal_bytes as f64
            };
            outln!(
                "{:<32} {:>5} {:>10} {:>10} {:>10} {:>6.2} {:>6.2} {:>5.1} {:>4} {:>5.2} {:>9.2} {:>7}",
                name,
                r.calls,
                r.c.total_warp_insts(),
                human_bytes(r.c.dram_bytes_lower()),
                human_bytes(r.ideal_bytes),
                ratio,
                r.c.coalescing_efficiency(),
                r.c.bank_conflicts_per_request(),
                r.registers,
                r.occupancy_min,
                r.est_seconds * 1e6,
                bound_of(r).name()
            );
        }
        outln!(
            "dram: sectors touched (an ideal L2); ideal: the launches' buffer bytes; coal: \
             useful bytes / sector bytes; bank: shared wavefronts beyond conflict-free per \
             request; occ: the lowest occupancy of the kernel's launches (docs/emulator.md)"
        );
        if sampled {
            outln!(
                "sampled: each launch ran on a sample of its blocks, extrapolated to its grid; \
                 dram is then capped at the launch's buffer sectors (docs/emulator.md)"
            );
        }
    }
    value
}
