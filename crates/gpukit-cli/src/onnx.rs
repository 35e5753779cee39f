//! `gpukit onnx MODEL.onnx`: load and check a model, read its inputs from .npy files,
//! run it on the device and print (or save) every output.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use gpukit::prelude::*;
use gpukit_onnx::{ElemType, Model, Session, Value};
use serde_json::json;

use crate::cli::{Global, OnnxArgs};

/// A one-line failure: the reason and the exit status.
type Fail = (String, u8);

/// `gpukit onnx`: status 0 on success, 1 with a one-line reason on stderr otherwise
/// (2 when the device does not open or an argument is malformed).
pub(crate) fn onnx(g: &Global, a: &OnnxArgs) -> ExitCode {
    match run(g, a) {
        Ok(()) => ExitCode::SUCCESS,
        Err((msg, code)) => {
            eprintln!("gpukit onnx: {msg}");
            ExitCode::from(code)
        }
    }
}

/// `NAME=FILE` pairs, in order.
fn parse_inputs(specs: &[String]) -> Result<Vec<(String, String)>, Fail> {
    specs
        .iter()
        .map(|s| match s.split_once('=') {
            Some((n, f)) if !n.is_empty() && !f.is_empty() => Ok((n.to_string(), f.to_string())),
            _ => Err((format!("--input `{s}`: expected NAME=FILE.npy"), 2)),
        })
        .collect()
}

/// A file name for an output: characters other than ASCII letters, digits, `.`, `-`
/// and `_` become `_` (ONNX names may hold `/` or `:`), and a leading `.` too.
fn file_stem(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        s.insert(0, '_');
    }
    s
}

/// Min, max and mean of a float output (NaN ignored), or of an integer one.
fn summary(v: &Value) -> gpukit::Result<(f64, f64, f64, Vec<f64>, usize)> {
    let x = v.tensor().to_dtype(DType::F64)?.to_vec::<f64>()?;
    let finite: Vec<f64> = x.iter().copied().filter(|f| !f.is_nan()).collect();
    let nan = x.len() - finite.len();
    let (mut lo, mut hi, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for &f in &finite {
        lo = lo.min(f);
        hi = hi.max(f);
        sum += f;
    }
    let mean = if finite.is_empty() {
        f64::NAN
    } else {
        sum / finite.len() as f64
    };
    Ok((lo, hi, mean, x.iter().take(6).copied().collect(), nan))
}

fn run(g: &Global, a: &OnnxArgs) -> Result<(), Fail> {
    let inputs = parse_inputs(&a.inputs)?;
    let t0 = Instant::now();
    let model = Model::load(&a.model).map_err(|e| (e.to_string(), 1))?;
    let load_s = t0.elapsed().as_secs_f64();
    let kit = match &g.device {
        Some(spec) => gpukit::open(spec),
        None => gpukit::open_best(),
    }
    .map_err(|e| (e.to_string(), 2))?;
    let mut tensors = Vec::with_capacity(inputs.len());
    for (name, file) in &inputs {
        let Some(info) = model.inputs().find(|i| &i.name == name) else {
            let names: Vec<&str> = model.inputs().map(|i| i.name.as_str()).collect();
            return Err((
                format!(
                    "--input {name}: the model has no input `{name}` (its inputs: {})",
                    names.join(", ")
                ),
                1,
            ));
        };
        let t =
            gpukit::io::read_npy(&kit, file).map_err(|e| (format!("--input {name}: {e}"), 1))?;
        // numpy writes int64 token ids as int32 on some platforms (and a uint32 input
        // may come as int32): widen exactly to the input's i64 storage.
        let t = if info.ty.dtype() == DType::I64 && !info.ty.is_float() && t.dtype() == DType::I32 {
            t.to_dtype(DType::I64).map_err(|e| (e.to_string(), 1))?
        } else {
            t
        };
        tensors.push((name.as_str(), t));
    }
    let t1 = Instant::now();
    let mut session = Session::new(&model, &kit).map_err(|e| (e.to_string(), 1))?;
    let plan_s = t1.elapsed().as_secs_f64();
    if a.profile {
        session.set_profiling(true);
        kit.set_profiling(true);
    }
    let given: Vec<(&str, &gpukit::Tensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let t2 = Instant::now();
    let outs = session.run(&given).map_err(|e| (e.to_string(), 1))?;
    kit.sync().map_err(|e| (e.to_string(), 1))?;
    let run_s = t2.elapsed().as_secs_f64();
    let infos: Vec<_> = model.outputs().cloned().collect();
    let mut written = Vec::new();
    if let Some(dir) = &a.output_dir {
        std::fs::create_dir_all(dir).map_err(|e| (format!("{}: {e}", dir.display()), 1))?;
        for (info, v) in infos.iter().zip(&outs) {
            let path = dir.join(format!("{}.npy", file_stem(&info.name)));
            write_output(&path, v).map_err(|e| (format!("output `{}`: {e}", info.name), 1))?;
            written.push(path.display().to_string());
        }
    }
    let report = a.profile.then(|| kit.profile_report());
    let mut rows = Vec::new();
    for (info, v) in infos.iter().zip(&outs) {
        let (lo, hi, mean, first, nan) = summary(v).map_err(|e| (e.to_string(), 1))?;
        rows.push((
            info.name.clone(),
            v.ty(),
            v.dims().to_vec(),
            lo,
            hi,
            mean,
            first,
            nan,
        ));
    }
    if g.json {
        let outputs: Vec<_> = rows
            .iter()
            .map(|(n, ty, d, lo, hi, mean, first, nan)| {
                json!({"name": n, "type": ty.name(), "dims": d, "min": lo, "max": hi,
                       "mean": mean, "first": first, "nan": nan})
            })
            .collect();
        let ops: Vec<_> = session
            .profile()
            .map(|p| {
                p.iter()
                    .map(|(op, t)| json!({"op": op, "calls": t.calls, "total_s": t.seconds}))
                    .collect()
            })
            .unwrap_or_default();
        let kernels: Vec<_> = report
            .iter()
            .flat_map(|r| &r.entries)
            .map(|e| json!({"kernel": e.name, "calls": e.calls, "total_s": e.total.as_secs_f64()}))
            .collect();
        outln!(
            "{}",
            json!({"model": a.model.display().to_string(), "device": kit.info().spec(),
                   "opset": model.opset(), "nodes": model.node_count(),
                   "nodes_per_run": session.nodes_per_run(), "load_s": load_s,
                   "plan_s": plan_s, "run_s": run_s, "outputs": outputs,
                   "written": written, "ops": ops, "kernels": kernels})
        );
        return Ok(());
    }
    outln!(
        "{}: opset {}, {} nodes ({} run per call, the rest folded at plan time), on {}",
        a.model.display(),
        model.opset(),
        model.node_count(),
        session.nodes_per_run(),
        kit.info().spec()
    );
    outln!("load {load_s:.3} s, plan {plan_s:.3} s, run {run_s:.3} s");
    for (n, ty, d, lo, hi, mean, first, nan) in &rows {
        let firsts: Vec<String> = first.iter().map(|f| format!("{f:.6}")).collect();
        out!("{n}: {ty} {d:?}  min {lo:.6} max {hi:.6} mean {mean:.6}");
        if *nan > 0 {
            out!(" ({nan} NaN)");
        }
        outln!("  first [{}]", firsts.join(", "));
    }
    for w in &written {
        outln!("wrote {w}");
    }
    if let Some(p) = session.profile() {
        let total: f64 = p.values().map(|t| t.seconds).sum();
        let mut ops: Vec<_> = p.iter().collect();
        ops.sort_by(|a, b| b.1.seconds.total_cmp(&a.1.seconds));
        outln!();
        outln!(
            "{:<24} {:>7} {:>11} {:>7}",
            "op",
            "calls",
            "total ms",
            "share"
        );
        for (op, t) in ops {
            outln!(
                "{op:<24} {:>7} {:>11.3} {:>6.1}%",
                t.calls,
                t.seconds * 1e3,
                100.0 * t.seconds / total.max(1e-12)
            );
        }
    }
    if let Some(r) = &report {
        outln!();
        out!("{r}");
    }
    Ok(())
}

/// Writes one output as .npy in its own dtype: bool as numpy's bool, the narrow
/// integers as numpy's int8 ... uint64 (int4/int2 as int8, uint4/uint2 as uint8: numpy
/// has no narrower dtype), float8 and float4 as their values in float32 (numpy has no
/// float8 dtype).
fn write_output(path: &Path, v: &Value) -> gpukit::Result<()> {
    use gpukit::io::NpyInt;
    let as_int = match v.ty() {
        ElemType::Bool => return gpukit::io::write_npy_bool(path, v.tensor()),
        ElemType::I8 | ElemType::I4 | ElemType::I2 => Some(NpyInt::I8),
        ElemType::U8 | ElemType::U4 | ElemType::U2 => Some(NpyInt::U8),
        ElemType::I16 => Some(NpyInt::I16),
        ElemType::U16 => Some(NpyInt::U16),
        ElemType::U32 => Some(NpyInt::U32),
        ElemType::U64 => Some(NpyInt::U64Bits),
        _ => None,
    };
    match as_int {
        Some(k) => gpukit::io::write_npy_int(path, v.tensor(), k),
        None => gpukit::io::write_npy(path, v.tensor()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_become_safe_file_names() {
        assert_eq!(file_stem("onnx::Shape_422"), "onnx__Shape_422");
        assert_eq!(file_stem("a/b"), "a_b");
        assert_eq!(file_stem(".hidden"), "_.hidden");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("logits-1.x"), "logits-1.x");
    }

    #[test]
    fn input_specs_need_a_name_and_a_file() {
        assert_eq!(
            parse_inputs(&["ids=a.npy".into()]).unwrap(),
            vec![("ids".to_string(), "a.npy".to_string())]
        );
        assert!(parse_inputs(&["ids".into()]).is_err());
        assert!(parse_inputs(&["=a.npy".into()]).is_err());
        assert!(parse_inputs(&["ids=".into()]).is_err());
    }
}
