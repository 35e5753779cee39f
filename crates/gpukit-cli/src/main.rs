//! The `gpukit` command: `devices`, `selftest`, `bench`, `profile`. With no command it
//! runs `devices` then `selftest` on built-in random inputs.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use gpukit::prelude::*;
use gpukit::{DeviceInfo, demo, selftest};
use serde_json::json;

/// Writes to stdout like `print!`; when the reader has gone (a closed pipe: `gpukit
/// devices | head -n 1`), exits quietly with status 141 (128 + SIGPIPE), as a Unix tool
/// killed by SIGPIPE does, instead of panicking. Any other write error is reported on
/// stderr with status 1.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::emit(format_args!($($arg)*), false)
    };
}

/// [`out!`] with a newline, like `println!`.
macro_rules! outln {
    () => {
        $crate::emit(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::emit(format_args!($($arg)*), true)
    };
}

/// The body of [`out!`] and [`outln!`].
fn emit(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut stdout = std::io::stdout().lock();
    let res = stdout
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                stdout.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| stdout.flush());
    if let Err(e) = res {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        let _ = writeln!(std::io::stderr(), "gpukit: writing to stdout: {e}");
        std::process::exit(1);
    }
}

const USAGE: &str = "\
usage: gpukit [COMMAND] [OPTIONS]

commands:
  devices     list the devices this build can open
  selftest    run every kernel and op against the reference, bit for bit
              (exit code 1 on any mismatch)
  bench       throughput of the built-in kernels
  profile     run the selftest workload with the profiler on and print the report
  emu-check   run every shipped CUDA kernel under the PTX emulator with memcheck and
              racecheck on the selftest's random inputs; a table per kernel
              (exit code 1 on a fault, a mismatch or a kernel never launched)
  (none)      devices, then selftest

options:
  --device SPEC   cpu | cuda | cuda:N (default: $GPUKIT_DEVICE, else the best device)
  --json          machine-readable output on stdout
  --seed N        seed of the built-in random inputs (default 42)
  --trace FILE    (profile) also write a Chrome trace-event file for Perfetto
  -h, --help      this text

environment:
  GPUKIT_DEVICE   the default device (as --device)
  GPUKIT_LOG=debug  say on stderr why a CUDA device was not used
";

struct Opts {
    command: String,
    device: Option<String>,
    json: bool,
    seed: u64,
    trace: Option<String>,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        command: String::new(),
        device: None,
        json: false,
        seed: 42,
        trace: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--json" => o.json = true,
            "--device" => o.device = Some(value("--device")?),
            "--seed" => {
                o.seed = value("--seed")?
                    .parse()
                    .map_err(|_| "--seed needs a number".to_string())?
            }
            "--trace" => o.trace = Some(value("--trace")?),
            "-h" | "--help" | "help" => o.command = "help".into(),
            c if !c.starts_with('-') && o.command.is_empty() => o.command = c.to_string(),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

fn open(o: &Opts) -> gpukit::Result<Kit> {
    match &o.device {
        Some(spec) => gpukit::open(spec),
        None => gpukit::open_best(),
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn device_json(d: &DeviceInfo) -> serde_json::Value {
    json!({
        "spec": d.spec(),
        "backend": d.backend.to_string(),
        "name": d.name,
        "compute_capability": d.compute_capability.map(|(a, b)| format!("{a}.{b}")),
        "memory_bytes": d.total_memory,
        "parallelism": d.parallelism,
    })
}

fn devices(o: &Opts) -> ExitCode {
    let devs = gpukit::devices();
    if o.json {
        outln!(
            "{}",
            json!({
                "devices": devs.iter().map(device_json).collect::<Vec<_>>(),
                "cuda_unavailable": gpukit::cuda_status(),
            })
        );
        return ExitCode::SUCCESS;
    }
    outln!(
        "{:<8} {:<8} {:<44} {:>6} {:>10} {:>8}",
        "device",
        "backend",
        "name",
        "cc",
        "memory",
        "threads"
    );
    for d in &devs {
        let cc = d
            .compute_capability
            .map(|(a, b)| format!("{a}.{b}"))
            .unwrap_or_else(|| "-".into());
        outln!(
            "{:<8} {:<8} {:<44} {:>6} {:>10} {:>8}",
            d.spec(),
            d.backend.to_string(),
            d.name.chars().take(44).collect::<String>(),
            cc,
            gib(d.total_memory),
            d.parallelism
        );
    }
    if let Some(why) = gpukit::cuda_status() {
        outln!("no CUDA device: {why}");
    }
    match open(o) {
        Ok(kit) => outln!("default device: {}", kit.info().spec()),
        Err(e) => outln!("default device: none ({e})"),
    }
    ExitCode::SUCCESS
}

/// A progress line on stderr for work longer than a second (terminals only).
struct Progress {
    start: Instant,
    shown: bool,
    tty: bool,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            start: Instant::now(),
            shown: false,
            tty: std::io::stderr().is_terminal(),
        }
    }
    fn step(&mut self, i: usize, total: usize, what: &str) {
        if self.tty && self.start.elapsed() > Duration::from_secs(1) {
            eprint!("\r\x1b[2K[{}/{}] {what}", i + 1, total);
            let _ = std::io::stderr().flush();
            self.shown = true;
        }
    }
    fn done(&self) {
        if self.shown {
            eprint!("\r\x1b[2K");
        }
    }
}

fn selftest(o: &Opts, kit: &Kit) -> ExitCode {
    let mut p = Progress::new();
    let results = selftest::run_all(kit, o.seed, |i, n, c| {
        p.step(i, n, &format!("{} {}", c.op, c.dtype))
    });
    p.done();
    let failures = results.iter().filter(|r| r.failure.is_some()).count();
    if o.json {
        let rows: Vec<_> = results
            .iter()
            .map(|r| {
                json!({"op": r.op, "dtype": r.dtype.name(), "pass": r.failure.is_none(),
                            "failure": r.failure, "seconds": r.time.as_secs_f64()})
            })
            .collect();
        outln!(
            "{}",
            json!({"device": kit.info().spec(), "seed": o.seed, "results": rows, "failures": failures})
        );
    } else {
        outln!(
            "selftest on {} ({}), seed {}",
            kit.info().spec(),
            kit.info().name,
            o.seed
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

/// The median wall time of `reps` calls of `f` (after one warm-up call), each followed
/// by a wait for the device, so the time is the work's, not the queueing's.
fn time_it(
    kit: &Kit,
    reps: usize,
    mut f: impl FnMut() -> gpukit::Result<()>,
) -> gpukit::Result<f64> {
    f()?;
    kit.sync()?;
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        kit.sync()?;
        v.push(t.elapsed().as_secs_f64());
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// One line of the bench table: what, size, seconds, and a rate with its unit.
struct BenchRow {
    name: String,
    size: String,
    seconds: f64,
    rate: f64,
    unit: &'static str,
}

fn bench(o: &Opts, kit: &Kit) -> gpukit::Result<ExitCode> {
    use gpukit::ops;
    const N: usize = 1 << 24;
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut p = Progress::new();
    let gpu = kit.info().backend == gpukit::Backend::Cuda;
    let total = 11;
    let mut row = |name: &str, size: String, seconds: f64, work: f64, unit: &'static str| {
        rows.push(BenchRow {
            name: name.to_string(),
            size,
            seconds,
            rate: work / seconds / 1e9,
            unit,
        });
    };
    let x = kit.upload(&vec![1.0f32; N])?;
    let y = kit.upload(&vec![2.0f32; N])?;
    let out = kit.alloc(DType::F32, N)?;
    let mb = (N * 4) as f64;

    p.step(0, total, "saxpy");
    let saxpy = demo::saxpy();
    let cfg = LaunchConfig::for_elements(N, 256)?;
    let t = time_it(kit, 5, || {
        kit.launch(
            &saxpy,
            cfg,
            &[
                DevArg::F32(1.0),
                (&x).into(),
                (&y).into(),
                DevArg::I64(N as i64),
            ],
        )
    })?;
    row(
        "saxpy f32 (user kernel)",
        format!("n={N}"),
        t,
        3.0 * mb,
        "GB/s",
    );
    p.step(1, total, "block_sum");
    let sums = kit.zeros(DType::F32, N.div_ceil(256))?;
    let bs = demo::block_sum();
    let cfg = demo::block_sum_config(N)?;
    let t = time_it(kit, 5, || {
        kit.launch(
            &bs,
            cfg,
            &[(&x).into(), (&sums).into(), DevArg::I64(N as i64)],
        )
    })?;
    row(
        "block_sum f32 (user kernel)",
        format!("n={N}"),
        t,
        mb,
        "GB/s",
    );
    p.step(2, total, "add");
    let t = time_it(kit, 5, || ops::add(kit, &out, &x, &y))?;
    row("add f32", format!("n={N}"), t, 3.0 * mb, "GB/s");
    p.step(3, total, "exp");
    let t = time_it(kit, 5, || ops::exp(kit, &out, &x))?;
    row("exp f32", format!("n={N}"), t, 2.0 * mb, "GB/s");
    p.step(4, total, "sum");
    let s1 = kit.alloc(DType::F32, 1)?;
    let t = time_it(kit, 5, || ops::sum(kit, &s1, &x))?;
    row("sum f32", format!("n={N}"), t, mb, "GB/s");
    p.step(5, total, "softmax");
    let (r, c) = (4096, 4096);
    let t = time_it(kit, 5, || ops::softmax_rows(kit, &out, &x, r, c))?;
    row(
        "softmax f32",
        format!("{r}x{c}"),
        t,
        2.0 * (r * c * 4) as f64,
        "GB/s",
    );
    for (i, (dtype, label)) in [(DType::F32, "matmul f32"), (DType::F64, "matmul f64")]
        .into_iter()
        .enumerate()
    {
        // GPU sizes where a GPU is measured; CPU sizes that finish in seconds.
        let sizes = if gpu {
            [1024usize, 4096]
        } else {
            [256usize, 1024]
        };
        for (j, n) in sizes.into_iter().enumerate() {
            p.step(6 + 2 * i + j, total, label);
            let a = kit.upload_f64(dtype, &vec![0.5; n * n])?;
            let b = kit.upload_f64(dtype, &vec![0.25; n * n])?;
            let c = kit.alloc(dtype, n * n)?;
            let t = time_it(kit, 3, || ops::matmul(kit, &c, &a, &b, n, n, n))?;
            row(
                label,
                format!("{n}^3"),
                t,
                2.0 * (n * n * n) as f64,
                "GFLOP/s",
            );
        }
    }
    p.step(10, total, "attention");
    {
        // One sequence, 16 heads of 64 dims, 1024 (GPU) or 256 (CPU) queries and keys.
        let (heads, n, hd) = (16usize, if gpu { 1024 } else { 256 }, 64usize);
        let len = heads * n * hd;
        let q = kit.upload_f64(DType::F32, &vec![0.01; len])?;
        let k = kit.upload_f64(DType::F32, &vec![0.02; len])?;
        let v = kit.upload_f64(DType::F32, &vec![0.03; len])?;
        let o = kit.alloc(DType::F32, len)?;
        let shape = ops::AttentionShape::new(heads, n, n, hd);
        let t = time_it(kit, 3, || ops::attention(kit, &o, &q, &k, &v, shape))?;
        // q·k and p·v: 2 × 2·n·n·hd flops per head.
        row(
            "attention f32 (fused)",
            format!("h{heads} n{n} d{hd}"),
            t,
            4.0 * (heads * n * n * hd) as f64,
            "GFLOP/s",
        );
    }
    let (host, mut back) = (vec![0.5f32; N], vec![0.0f32; N]);
    let t = time_it(kit, 5, || x.write(&host))?;
    row("upload f32", format!("n={N}"), t, mb, "GB/s");
    let t = time_it(kit, 5, || x.read_into(&mut back))?;
    row("download f32", format!("n={N}"), t, mb, "GB/s");
    p.done();
    if o.json {
        let r: Vec<_> = rows
            .iter()
            .map(|r| json!({"bench": r.name, "size": r.size, "seconds": r.seconds, "rate": r.rate, "unit": r.unit}))
            .collect();
        outln!("{}", json!({"device": kit.info().spec(), "results": r}));
    } else {
        outln!("bench on {} ({})", kit.info().spec(), kit.info().name);
        outln!(
            "{:<28} {:<12} {:>10} {:>10}",
            "kernel",
            "size",
            "ms",
            "rate"
        );
        for r in rows {
            outln!(
                "{:<28} {:<12} {:>10.3} {:>10.2} {}",
                r.name,
                r.size,
                r.seconds * 1e3,
                r.rate,
                r.unit
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `gpukit emu-check`: the selftest on the PTX emulator (memcheck and racecheck on),
/// with the profiler counting each built-in kernel's launches, then one row per kernel
/// of the ABI table.
fn emu_check(o: &Opts) -> ExitCode {
    let kit = match gpukit::open("ptx-emu") {
        Ok(k) => k,
        Err(e) => {
            eprintln!("gpukit: {e}");
            return ExitCode::from(2);
        }
    };
    kit.set_profiling(true);
    let mut p = Progress::new();
    let results = selftest::run_all(&kit, o.seed, |i, n, c| {
        p.step(i, n, &format!("{} {}", c.op, c.dtype))
    });
    p.done();
    let report = kit.profile_report();
    let calls = |name: &str| {
        report
            .entries
            .iter()
            .find(|e| e.name == name)
            .map_or(0, |e| e.calls)
    };
    let failure_of = |name: &str| {
        results.iter().find_map(|r| {
            let k = gpukit::abi::kernel_name(r.op, r.dtype);
            (k == name).then_some(r.failure.clone()).flatten()
        })
    };
    let names = gpukit::abi::all_kernel_names();
    let mut rows = Vec::new();
    for name in &names {
        let n = calls(name);
        let status = match (n, failure_of(name)) {
            (_, Some(f)) => ("FAIL", Some(f)),
            (0, None) => ("NOT RUN", None),
            _ => ("ok", None),
        };
        rows.push((name.clone(), n, status.0, status.1));
    }
    // Checks of user kernels written in CUDA C need NVRTC on the emulator, as on a GPU;
    // without it they are reported as skipped, not as failures of the shipped kernels.
    let compiler = gpukit::cuda_compiler_available();
    let other: Vec<&selftest::CheckResult> = results
        .iter()
        .filter(|r| {
            r.failure.is_some()
                && compiler
                && !names.contains(&gpukit::abi::kernel_name(r.op, r.dtype))
        })
        .collect();
    let bad = rows.iter().filter(|r| r.2 != "ok").count() + other.len();
    if o.json {
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
            json!({"device": kit.info().spec(), "seed": o.seed, "kernels": v, "other_failures": extra, "bad": bad})
        );
    } else {
        outln!(
            "emu-check: every built-in kernel under the PTX emulator (memcheck and racecheck on), seed {}",
            o.seed
        );
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

fn profile(o: &Opts, kit: &Kit) -> gpukit::Result<ExitCode> {
    kit.set_profiling(true);
    let results = selftest::run_all(kit, o.seed, |_, _, _| {});
    let report = kit.profile_report();
    if let Some(path) = &o.trace {
        report.write_chrome_trace(path)?;
    }
    if o.json {
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
        if let Some(path) = &o.trace {
            outln!("trace written to {path} (open it at https://ui.perfetto.dev)");
        }
    }
    Ok(if selftest::failed(&results).is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Debug lines (why the CUDA backend was not used, ...) on stderr when
/// `GPUKIT_LOG=debug`.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("[{}] {}", r.level(), r.args());
        }
    }
    fn flush(&self) {}
}

static LOGGER: StderrLog = StderrLog;

fn main() -> ExitCode {
    if std::env::var("GPUKIT_LOG").is_ok_and(|v| v.eq_ignore_ascii_case("debug"))
        && log::set_logger(&LOGGER).is_ok()
    {
        log::set_max_level(log::LevelFilter::Debug);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gpukit: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if o.command == "help" {
        out!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if o.command == "devices" {
        return devices(&o);
    }
    if o.command == "emu-check" {
        return emu_check(&o);
    }
    let kit = match open(&o) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("gpukit: {e}");
            return ExitCode::from(2);
        }
    };
    let r = match o.command.as_str() {
        "" => {
            if !o.json {
                devices(&o);
                outln!();
            }
            Ok(selftest(&o, &kit))
        }
        "selftest" => Ok(selftest(&o, &kit)),
        "bench" => bench(&o, &kit),
        "profile" => profile(&o, &kit),
        other => {
            eprintln!("gpukit: unknown command `{other}`\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    r.unwrap_or_else(|e| {
        eprintln!("gpukit: {e}");
        ExitCode::FAILURE
    })
}
