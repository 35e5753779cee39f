//! ONNX's backend node tests through gpukit-onnx: every case folder that
//! `tools/onnx-backend/generate.py` wrote (model.onnx, test_data_set_*/input_*.pb and
//! output_*.pb, case.json) runs on each device, is compared with the expected outputs
//! at the case's tolerance (numpy's `allclose`: `|got - want| <= atol + rtol·|want|`,
//! NaN where NaN is expected, integers and bools exact, the element type and dims
//! exact), and the devices' outputs are compared bit for bit (any NaN equals any NaN).
//!
//! ```text
//! cargo run --release -p gpukit-onnx --example backend_test -- DATA_DIR
//!     [--devices cpu,ptx-emu] [--filter SUBSTRING] [--markdown FILE]
//!     [--min-pass-rate 0.9] [--failures] [--first-device-only SUBSTRING]
//! cargo run --release -p gpukit-onnx --example backend_test -- --list-ops
//! ```
//!
//! `--first-device-only S`: the cases whose name contains S run on the first device
//! only (CI runs the light architectures on the CPU alone; their PTX-emulator run takes
//! minutes, and `tools/onnx-backend/run.sh --models` without the option runs both).
//!
//! Prints one row per op (cases, passed, failed, unsupported) and the totals. A case
//! counts as passed only when it passes on every device. Exit status 1 when the
//! devices disagree on any case's bits, or when fewer than `--min-pass-rate` of the
//! cases of supported ops (not function expansions) pass, counted over every element
//! type and again over those whose element types are all gpukit's own (f32, f64, f16,
//! bf16, i32, i64, bool; no narrow type stored wider).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use gpukit::Kit;
use gpukit_onnx::{ElemType, Model, OnnxError, Session, Value, read_tensor_proto};

/// A case's outcome on one device.
enum Outcome {
    /// The outputs, widened to f64 bits (floats, NaN canonical) or i64 bits.
    Pass(Vec<Vec<u64>>),
    Fail(String),
    Unsupported(String),
}

struct Case {
    name: String,
    dir: PathBuf,
    op: String,
    expanded: bool,
    rtol: f64,
    atol: f64,
    /// Every element type the case touches is one gpukit runs.
    gpukit_types: bool,
    skip: Option<String>,
}

fn read_case(dir: &Path) -> Option<Case> {
    let text = std::fs::read_to_string(dir.join("case.json")).ok()?;
    let j: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(Case {
        name: dir.file_name()?.to_string_lossy().into_owned(),
        dir: dir.to_path_buf(),
        op: j["op"].as_str()?.to_string(),
        expanded: j["expanded"].as_bool()?,
        rtol: j["rtol"].as_f64()?,
        atol: j["atol"].as_f64()?,
        gpukit_types: j["gpukit_types"].as_bool()?,
        skip: j["skip"].as_str().map(str::to_string),
    })
}

/// A value's elements as comparable bits: floats widened exactly to f64 (NaN one
/// pattern), integers and bools as i64.
fn value_bits(v: &Value) -> Result<Vec<u64>, OnnxError> {
    let t = v.tensor();
    if v.ty().is_float() {
        let w = t.to_dtype(gpukit::DType::F64)?.to_vec::<f64>()?;
        Ok(w.iter()
            .map(|f| {
                if f.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    f.to_bits()
                }
            })
            .collect())
    } else {
        let w = t.to_dtype(gpukit::DType::I64)?.to_vec::<i64>()?;
        Ok(w.iter().map(|&i| i as u64).collect())
    }
}

fn close(got: u64, want: u64, float: bool, rtol: f64, atol: f64) -> bool {
    if !float {
        return got == want;
    }
    let (g, w) = (f64::from_bits(got), f64::from_bits(want));
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    (g - w).abs() <= atol + rtol * w.abs()
}

fn classify(e: OnnxError) -> Outcome {
    match e {
        OnnxError::Unsupported { .. } => Outcome::Unsupported(e.to_string()),
        OnnxError::Node { ref what, .. } if what.starts_with("unsupported") => {
            Outcome::Unsupported(e.to_string())
        }
        e => Outcome::Fail(e.to_string()),
    }
}

fn run_case(c: &Case, model: &Model, kit: &Kit) -> Outcome {
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&c.dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    sets.sort();
    let mut session = match Session::new(model, kit) {
        Ok(s) => s,
        Err(e) => return classify(e),
    };
    let all_inputs: Vec<String> = model.inputs().map(|i| i.name.clone()).collect();
    // Inputs without an initializer, in order: what ONNX's runner feeds positionally.
    let required: Vec<String> = model
        .inputs()
        .filter(|i| !i.has_default)
        .map(|i| i.name.clone())
        .collect();
    let outs_info: Vec<(String, ElemType)> =
        model.outputs().map(|o| (o.name.clone(), o.ty)).collect();
    let mut all = Vec::new();
    for set in sets {
        let read = |prefix: &str, n: usize| -> Result<Vec<(String, Value)>, OnnxError> {
            (0..n)
                .map_while(|j| {
                    let p = set.join(format!("{prefix}_{j}.pb"));
                    p.exists().then(|| {
                        let b = std::fs::read(&p).map_err(|e| OnnxError::Io {
                            path: p.display().to_string(),
                            msg: e.to_string(),
                        })?;
                        read_tensor_proto(&b, kit)
                    })
                })
                .collect()
        };
        let inputs = match read("input", all_inputs.len()) {
            Ok(v) => v,
            Err(e) => return classify(e),
        };
        let wants: Vec<Value> = match read("output", outs_info.len()) {
            Ok(v) => v.into_iter().map(|(_, v)| v).collect(),
            Err(e) => return classify(e),
        };
        // A file whose tensor is named after an input feeds it; the others feed the
        // inputs without an initializer in order.
        let mut positional = required.iter();
        let mut given: Vec<(&str, &gpukit::Tensor)> = Vec::new();
        for (name, v) in &inputs {
            let target = if all_inputs.contains(name) {
                Some(name.as_str())
            } else {
                positional.next().map(String::as_str)
            };
            if let Some(t) = target {
                given.push((t, v.tensor()));
            }
        }
        let got = match session.run(&given) {
            Ok(o) => o,
            Err(e) => return classify(e),
        };
        if got.len() != wants.len() {
            return Outcome::Fail(format!("{} outputs, want {}", got.len(), wants.len()));
        }
        for (k, (g, w)) in got.iter().zip(&wants).enumerate() {
            if g.ty() != w.ty() {
                return Outcome::Fail(format!("output {k}: type {}, want {}", g.ty(), w.ty()));
            }
            if g.dims() != w.dims() {
                return Outcome::Fail(format!(
                    "output {k}: dims {:?}, want {:?}",
                    g.dims(),
                    w.dims()
                ));
            }
            let (gb, wb) = match (value_bits(g), value_bits(w)) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return Outcome::Fail(e.to_string()),
            };
            let float = g.ty().is_float();
            if let Some(i) = (0..gb.len()).find(|&i| !close(gb[i], wb[i], float, c.rtol, c.atol)) {
                let show = |b: u64| {
                    if float {
                        format!("{:e}", f64::from_bits(b))
                    } else {
                        (b as i64).to_string()
                    }
                };
                return Outcome::Fail(format!(
                    "output {k} element {i}: got {}, want {} (rtol {}, atol {})",
                    show(gb[i]),
                    show(wb[i]),
                    c.rtol,
                    c.atol
                ));
            }
            all.push(gb);
        }
    }
    Outcome::Pass(all)
}

/// A case's verdict over every device.
#[derive(Clone, Copy, PartialEq)]
enum Verdict {
    Pass,
    Fail,
    Unsupported,
}

/// Runs one case on every device: the verdict and its reason; a pass on every device
/// with different bits is pushed to `mismatches`.
fn judge(
    c: &Case,
    kits: &[Kit],
    devices: &[String],
    mismatches: &mut Vec<String>,
) -> (Verdict, String) {
    if let Some(why) = &c.skip {
        return (Verdict::Unsupported, why.clone());
    }
    let model = match Model::load(c.dir.join("model.onnx")) {
        Ok(m) => m,
        Err(e) => {
            return match classify(e) {
                Outcome::Unsupported(w) => (Verdict::Unsupported, w),
                Outcome::Fail(w) => (Verdict::Fail, format!("(load) {w}")),
                Outcome::Pass(_) => unreachable!("classify never passes"),
            };
        }
    };
    let results: Vec<(&String, Outcome)> = kits
        .iter()
        .zip(devices)
        .map(|(kit, dev)| (dev, run_case(c, &model, kit)))
        .collect();
    let mut verdict = (Verdict::Pass, String::new());
    for (dev, r) in &results {
        match r {
            Outcome::Pass(_) => {}
            Outcome::Unsupported(w) if verdict.0 == Verdict::Pass => {
                verdict = (Verdict::Unsupported, format!("{dev}: {w}"));
            }
            Outcome::Fail(w) if verdict.0 != Verdict::Fail => {
                verdict = (Verdict::Fail, format!("{dev}: {w}"));
            }
            _ => {}
        }
    }
    if verdict.0 == Verdict::Pass
        && let Some((first_dev, Outcome::Pass(first))) = results.first()
    {
        for (dev, r) in &results[1..] {
            if let Outcome::Pass(b) = r
                && b != first
            {
                mismatches.push(format!("{}: {first_dev} and {dev} differ", c.name));
            }
        }
    }
    verdict
}

#[derive(Default)]
struct Tally {
    cases: usize,
    pass: usize,
    fail: usize,
    unsupported: usize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut devices = vec!["cpu".to_string(), "ptx-emu".to_string()];
    let (mut filter, mut markdown, mut min_rate, mut show_failures) = (None, None, 0.0f64, false);
    let mut first_only: Option<String> = None;
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--devices" => {
                devices = it
                    .next()
                    .map(|v| v.split(',').map(str::to_string).collect())
                    .unwrap_or_default()
            }
            "--filter" => filter = it.next().cloned(),
            "--markdown" => markdown = it.next().cloned(),
            "--min-pass-rate" => min_rate = it.next().and_then(|v| v.parse().ok()).unwrap_or(0.0),
            "--failures" => show_failures = true,
            "--first-device-only" => first_only = it.next().cloned(),
            "--list-ops" => {
                println!("{}", gpukit_onnx::supported_ops().join("\n"));
                return ExitCode::SUCCESS;
            }
            _ => pos.push(a.clone()),
        }
    }
    let [data] = pos.as_slice() else {
        eprintln!(
            "usage: backend_test DATA_DIR [--devices cpu,ptx-emu] [--filter S] [--markdown FILE] [--min-pass-rate R] [--failures] [--first-device-only S]"
        );
        return ExitCode::from(2);
    };
    let kits: Vec<Kit> = match devices.iter().map(|d| gpukit::open(d)).collect() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("backend_test: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(data) {
        Ok(d) => d.flatten().map(|e| e.path()).collect(),
        Err(e) => {
            eprintln!("backend_test: {data}: {e}");
            return ExitCode::FAILURE;
        }
    };
    dirs.sort();
    let supported: Vec<&str> = gpukit_onnx::supported_ops();
    let started = Instant::now();
    let mut per_op: BTreeMap<(bool, String), Tally> = BTreeMap::new();
    // Cases of supported ops whose element types are all gpukit's.
    let mut typed = Tally::default();
    let mut lines = Vec::new();
    let mut mismatches = Vec::new();
    for d in dirs {
        let Some(c) = read_case(&d) else { continue };
        if filter
            .as_ref()
            .is_some_and(|f| !c.name.contains(f.as_str()))
        {
            continue;
        }
        let n = if first_only
            .as_ref()
            .is_some_and(|f| c.name.contains(f.as_str()))
        {
            1
        } else {
            kits.len()
        };
        let (verdict, why) = judge(&c, &kits[..n], &devices[..n], &mut mismatches);
        let t = per_op.entry((c.expanded, c.op.clone())).or_default();
        let counted = !c.expanded && c.gpukit_types && supported.contains(&c.op.as_str());
        for tally in [Some(t), counted.then_some(&mut typed)]
            .into_iter()
            .flatten()
        {
            tally.cases += 1;
            match verdict {
                Verdict::Pass => tally.pass += 1,
                Verdict::Fail => tally.fail += 1,
                Verdict::Unsupported => tally.unsupported += 1,
            }
        }
        match verdict {
            Verdict::Pass => {}
            Verdict::Fail => lines.push(format!("FAIL {}: {why}", c.name)),
            Verdict::Unsupported => lines.push(format!("UNSUPPORTED {}: {why}", c.name)),
        }
    }
    // The table.
    let mut md = String::new();
    md.push_str("| op | cases | pass | fail | unsupported |\n|---|---|---|---|---|\n");
    let mut sup = Tally::default();
    let mut total = Tally::default();
    let mut expanded = Tally::default();
    for ((exp, op), t) in &per_op {
        let label = if *exp {
            format!("{op} (function expanded)")
        } else if supported.contains(&op.as_str()) {
            format!("**{op}**")
        } else {
            op.clone()
        };
        md.push_str(&format!(
            "| {label} | {} | {} | {} | {} |\n",
            t.cases, t.pass, t.fail, t.unsupported
        ));
        let add = |s: &mut Tally| {
            s.cases += t.cases;
            s.pass += t.pass;
            s.fail += t.fail;
            s.unsupported += t.unsupported;
        };
        add(&mut total);
        if *exp {
            add(&mut expanded);
        } else if supported.contains(&op.as_str()) {
            add(&mut sup);
        }
    }
    let ratio = |t: &Tally| {
        if t.cases == 0 {
            1.0
        } else {
            t.pass as f64 / t.cases as f64
        }
    };
    let (rate, typed_rate) = (ratio(&sup), ratio(&typed));
    let summary = format!(
        "devices {}: {} cases in {:.0} s; supported ops (bold): {} of {} pass ({:.1}%), {} fail, {} unsupported; of those in gpukit's element types: {} of {} pass ({:.1}%), {} fail, {} unsupported; function expansions: {} of {} pass; all: {} pass, {} fail, {} unsupported; cross-device bit mismatches: {}",
        devices.join(", "),
        total.cases,
        started.elapsed().as_secs_f64(),
        sup.pass,
        sup.cases,
        100.0 * rate,
        sup.fail,
        sup.unsupported,
        typed.pass,
        typed.cases,
        100.0 * typed_rate,
        typed.fail,
        typed.unsupported,
        expanded.pass,
        expanded.cases,
        total.pass,
        total.fail,
        total.unsupported,
        mismatches.len()
    );
    if show_failures {
        for l in &lines {
            println!("{l}");
        }
    }
    for m in &mismatches {
        println!("MISMATCH {m}");
    }
    println!("{md}");
    println!("{summary}");
    if let Some(path) = markdown {
        let body = format!("{md}\n{summary}\n\n```text\n{}\n```\n", lines.join("\n"));
        if let Err(e) = std::fs::write(&path, body) {
            eprintln!("backend_test: {path}: {e}");
            return ExitCode::FAILURE;
        }
    }
    if !mismatches.is_empty() || rate < min_rate || typed_rate < min_rate {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
