//! ONNX single-op conformance: every case of `tests/fixtures/onnx` (made by
//! `tools/onnx-conformance/make_fixtures.py` with ONNX's reference evaluator,
//! cross-checked with onnxruntime) runs through the tensor API on the CPU and the PTX
//! emulator. Each output must match the reference within the case's tolerance
//! (`exact`: bit for bit, any NaN equal to any NaN), and the two devices must give the
//! same bits. A case gpukit cannot map must be listed in [`UNSUPPORTED`] with its
//! reason (docs/onnx.md repeats the list); a listed case that starts to pass fails the
//! test too, so the list stays true.

#[path = "../common/mod.rs"]
mod common;
mod manifest;
mod mapping;

use std::collections::BTreeMap;
use std::path::PathBuf;

use gpukit_core::{DType, Kit};
use gpukit_tensor::Tensor;

use manifest::{Case, Tol, fixture_dir, load_cases};
use mapping::{Fail, run};

/// Cases the tensor API cannot run yet, with the reason (docs/onnx.md, "Exceptions").
const UNSUPPORTED: &[(&str, &str)] = &[];

/// A tensor's values widened exactly to f64 (floats, NaN canonical) or i64
/// (integers), as bits.
fn host_bits(t: &Tensor) -> (Vec<usize>, Vec<u64>, bool) {
    let dims = t.dims().to_vec();
    if t.dtype().is_float() {
        let v = t
            .to_dtype(DType::F64)
            .and_then(|w| w.to_vec::<f64>())
            .expect("download");
        // Any NaN equals any NaN (design brief, rule 8): one canonical pattern.
        let canon = |f: &f64| {
            if f.is_nan() {
                f64::NAN.to_bits()
            } else {
                f.to_bits()
            }
        };
        (dims, v.iter().map(canon).collect(), true)
    } else {
        let v = t
            .to_dtype(DType::I64)
            .and_then(|w| w.to_vec::<i64>())
            .expect("download");
        (dims, v.iter().map(|&i| i as u64).collect(), false)
    }
}

fn same_value(got: u64, want: u64, float: bool, tol: Tol) -> bool {
    if !float {
        return got == want;
    }
    let (g, w) = (f64::from_bits(got), f64::from_bits(want));
    if w.is_nan() || g.is_nan() {
        return w.is_nan() && g.is_nan();
    }
    match tol {
        Tol::Exact => got == want,
        Tol::Rel { rel, abs } => {
            if w.is_infinite() || g.is_infinite() {
                g == w
            } else {
                (g - w).abs() <= abs + rel * w.abs()
            }
        }
    }
}

/// What one device made of the manifest.
struct KitRun {
    /// Per passing case, each output's bits (widened, NaN canonical).
    bits: BTreeMap<String, Vec<Vec<u64>>>,
    /// One line per wrong output or gpukit error.
    failures: Vec<String>,
    /// Cases the tensor API cannot map, with the reason.
    unsupported: BTreeMap<String, String>,
}

/// Runs every case on `kit`.
fn run_all(kit: &Kit, cases: &[Case]) -> KitRun {
    let mut bits = BTreeMap::new();
    let mut failures = Vec::new();
    let mut unsupported = BTreeMap::new();
    for c in cases {
        let path = fixture_dir().join(format!("{}.npz", c.name));
        let arrays = gpukit_tensor::io::read_npz(kit, &path).expect("fixture");
        let inputs: Vec<Option<Tensor>> = c
            .inputs
            .iter()
            .enumerate()
            .map(|(i, d)| d.as_ref().map(|_| arrays[&format!("input_{i}")].clone()))
            .collect();
        match run(c, &inputs) {
            Err(Fail::Unsupported(why)) => {
                unsupported.insert(c.name.clone(), why);
            }
            Err(Fail::Error(e)) => failures.push(format!("{}: gpukit error: {e}", c.name)),
            Ok(outs) => {
                if outs.len() != c.outputs.len() {
                    failures.push(format!(
                        "{}: {} outputs, want {}",
                        c.name,
                        outs.len(),
                        c.outputs.len()
                    ));
                    continue;
                }
                let mut case_bits = Vec::new();
                for (i, got) in outs.iter().enumerate() {
                    let want = &arrays[&format!("output_{i}")];
                    let (gd, gb, gf) = host_bits(got);
                    let (wd, wb, _) = host_bits(want);
                    if gd != wd {
                        failures.push(format!("{} output {i}: dims {gd:?}, want {wd:?}", c.name));
                        continue;
                    }
                    if let Some(j) = (0..gb.len()).find(|&j| !same_value(gb[j], wb[j], gf, c.tol)) {
                        let show = |b: u64| {
                            if gf {
                                format!("{:e}", f64::from_bits(b))
                            } else {
                                (b as i64).to_string()
                            }
                        };
                        failures.push(format!(
                            "{} output {i} element {j}: got {}, want {} ({:?})",
                            c.name,
                            show(gb[j]),
                            show(wb[j]),
                            c.tol
                        ));
                    }
                    case_bits.push(gb);
                }
                bits.insert(c.name.clone(), case_bits);
            }
        }
    }
    KitRun {
        bits,
        failures,
        unsupported,
    }
}

#[test]
fn onnx_reference_cases_pass_on_every_device_with_the_same_bits() {
    let cases = load_cases();
    assert!(
        cases.len() >= 100,
        "only {} cases in the manifest",
        cases.len()
    );
    let kits = common::kits();
    let mut per_kit = Vec::new();
    for kit in &kits {
        let KitRun {
            bits,
            failures,
            unsupported,
        } = run_all(kit, &cases);
        assert!(
            failures.is_empty(),
            "{:?}: {} of {} cases fail:\n{}",
            kit.info().backend,
            failures.len(),
            cases.len(),
            failures.join("\n")
        );
        let listed: BTreeMap<String, String> = UNSUPPORTED
            .iter()
            .map(|(n, w)| (n.to_string(), w.to_string()))
            .collect();
        assert_eq!(
            unsupported.keys().collect::<Vec<_>>(),
            listed.keys().collect::<Vec<_>>(),
            "unsupported cases differ from UNSUPPORTED (reasons seen: {unsupported:?})"
        );
        per_kit.push(bits);
    }
    for (name, bits) in &per_kit[0] {
        assert_eq!(
            Some(bits),
            per_kit[1].get(name),
            "{name}: cpu and ptx-emu give different bits"
        );
    }
    eprintln!(
        "onnx conformance: {} cases, {} pass on cpu and ptx-emu with identical bits, {} unsupported",
        cases.len(),
        per_kit[0].len(),
        UNSUPPORTED.len()
    );
}

#[test]
fn every_op_in_the_manifest_is_named_in_docs_onnx_md() {
    let docs = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/onnx.md"),
    )
    .expect("docs/onnx.md");
    for c in load_cases() {
        assert!(
            docs.contains(&format!("| {} |", c.op)),
            "docs/onnx.md has no table row for {}",
            c.op
        );
    }
    for (name, _) in UNSUPPORTED {
        assert!(
            docs.contains(name),
            "docs/onnx.md does not list exception {name}"
        );
    }
}
