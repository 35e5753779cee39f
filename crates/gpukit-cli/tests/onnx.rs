//! `gpukit onnx`: a small model run from .npy inputs writes the expected outputs (bool
//! as numpy's bool, names made file-safe); bad inputs, unsupported ops and malformed
//! files are one-line reasons with exit status 1; and the MiniLM ONNX file through the
//! command gives exactly the bits of gpukit-onnx's `Session` in-process (which
//! examples/minilm's test holds equal to the hand-written tensor-API graph).

mod common;

use common::gpukit;
use std::path::{Path, PathBuf};

use gpukit::Tensor;
use gpukit_onnx::proto::*;
use prost::Message;

/// A fresh folder under the target dir.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn vi(name: &str, elem: i32, dims: &[i64]) -> ValueInfoProto {
    let dims: Vec<DimValue> = dims.iter().map(|&d| DimValue::DimValue(d)).collect();
    ValueInfoProto::tensor(name, elem, &dims)
}

fn node(name: &str, op: &str, i: &[&str], o: &[&str]) -> NodeProto {
    NodeProto::new(name, op, i, o, vec![])
}

/// `y = x + b`, `pos/flag = y > 0` for `x` `[2, 3]` f32, `b` `[3]`.
fn small_model(op: &str) -> Vec<u8> {
    ModelProto {
        ir_version: Some(9),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(GraphProto {
            node: vec![
                node("add", op, &["x", "b"], &["y"]),
                node("cmp", "Greater", &["y", "zero"], &["pos/flag"]),
            ],
            initializer: vec![
                TensorProto {
                    name: Some("b".into()),
                    dims: vec![3],
                    data_type: Some(1),
                    float_data: vec![0.5, -1.0, 2.0],
                    ..Default::default()
                },
                TensorProto {
                    name: Some("zero".into()),
                    data_type: Some(1),
                    float_data: vec![0.0],
                    ..Default::default()
                },
            ],
            input: vec![vi("x", 1, &[2, 3])],
            output: vec![vi("y", 1, &[2, 3]), vi("pos/flag", 9, &[2, 3])],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn a_model_runs_from_npy_inputs_and_writes_npy_outputs() {
    let dir = scratch("onnx_small");
    let model = dir.join("m.onnx");
    std::fs::write(&model, small_model("Add")).unwrap();
    let kit = gpukit::cpu().unwrap();
    let x = Tensor::from_slice(&kit, &[1.0f32, 2.0, -3.0, -0.5, 0.0, 4.0], &[2, 3]).unwrap();
    let xf = dir.join("x.npy");
    gpukit::io::write_npy(&xf, &x).unwrap();
    let out = dir.join("out");
    let (code, stdout, err) = gpukit(&[
        "onnx",
        model.to_str().unwrap(),
        "--device",
        "cpu",
        "--input",
        &format!("x={}", xf.display()),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("y: float [2, 3]"), "{stdout}");
    let y = gpukit::io::read_npy(&kit, out.join("y.npy")).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [1.5, 1.0, -1.0, 0.0, -1.0, 6.0]);
    // The bool output, named `pos/flag`, is `pos_flag.npy` in numpy's bool.
    let raw = std::fs::read(out.join("pos_flag.npy")).unwrap();
    assert!(String::from_utf8_lossy(&raw[..80]).contains("'|b1'"));
    let flags = gpukit::io::read_npy(&kit, out.join("pos_flag.npy")).unwrap();
    assert_eq!(flags.to_vec::<i32>().unwrap(), [1, 1, 0, 0, 0, 1]);
    let (code, stdout, _) = gpukit(&[
        "onnx",
        model.to_str().unwrap(),
        "--device",
        "ptx-emu",
        "--json",
        "--input",
        &format!("x={}", xf.display()),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["outputs"][1]["type"], "bool");
    assert_eq!(v["outputs"][0]["dims"], serde_json::json!([2, 3]));
}

#[test]
fn errors_are_one_line_reasons_with_status_1() {
    let dir = scratch("onnx_errors");
    let kit = gpukit::cpu().unwrap();
    let good = dir.join("good.onnx");
    std::fs::write(&good, small_model("Add")).unwrap();
    let bad_op = dir.join("lstm.onnx");
    std::fs::write(&bad_op, small_model("LSTM")).unwrap();
    let garbage = dir.join("garbage.onnx");
    std::fs::write(&garbage, b"\x0a\xff\xff\xff\xff\x0f").unwrap();
    let x64 = dir.join("x64.npy");
    gpukit::io::write_npy(
        &x64,
        &Tensor::from_slice(&kit, &[0f64; 6], &[2, 3]).unwrap(),
    )
    .unwrap();
    let g = good.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![g.into()], "input `x`: missing"),
        (
            vec![g.into(), "--input".into(), format!("x={}", x64.display())],
            "a f64 tensor, the model takes float",
        ),
        (
            vec![
                g.into(),
                "--input".into(),
                format!("nope={}", x64.display()),
            ],
            "has no input `nope`",
        ),
        (vec![bad_op.to_str().unwrap().into()], "node `add` (LSTM)"),
        (
            vec![garbage.to_str().unwrap().into()],
            "malformed ONNX model",
        ),
        (
            vec![dir.join("absent.onnx").to_str().unwrap().into()],
            "absent.onnx",
        ),
    ];
    for (args, want) in cases {
        let mut a: Vec<&str> = vec!["onnx", "--device", "cpu"];
        a.extend(args.iter().map(String::as_str));
        let (code, out, err) = gpukit(&a);
        assert_eq!(code, 1, "{a:?}: {err}");
        assert!(out.is_empty(), "{a:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err}");
        assert!(err.contains(want), "{a:?}: {err}");
    }
}

#[test]
fn the_minilm_file_through_the_command_has_the_library_bits() {
    let dir = std::env::var_os("GPUKIT_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/model"));
    let model = dir.join("paraphrase-MiniLM-L3-v2.onnx");
    if !model.exists() {
        println!("SKIP: no model (tools/model/fetch.sh)");
        return;
    }
    let kit = gpukit::cpu().unwrap();
    let s = scratch("onnx_minilm");
    // Two rows: [CLS] tokens [SEP], the second padded.
    let ids: Vec<i64> = vec![101, 1037, 2158, 2003, 2652, 102, 101, 7592, 2088, 102, 0, 0];
    let mask: Vec<i64> = ids.iter().map(|&i| i64::from(i != 0)).collect();
    let ids = Tensor::from_slice(&kit, &ids, &[2, 6]).unwrap();
    let mask = Tensor::from_slice(&kit, &mask, &[2, 6]).unwrap();
    gpukit::io::write_npy(s.join("ids.npy"), &ids).unwrap();
    gpukit::io::write_npy(s.join("mask.npy"), &mask).unwrap();
    let out = s.join("out");
    let (code, _, err) = gpukit(&[
        "onnx",
        model.to_str().unwrap(),
        "--device",
        "cpu",
        "--input",
        &format!("input_ids={}", s.join("ids.npy").display()),
        "--input",
        &format!("attention_mask={}", s.join("mask.npy").display()),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let m = gpukit_onnx::Model::load(&model).unwrap();
    let mut session = gpukit_onnx::Session::new(&m, &kit).unwrap();
    let lib = session
        .run(&[("input_ids", &ids), ("attention_mask", &mask)])
        .unwrap();
    for (info, v) in m.outputs().zip(&lib) {
        let file = out.join(format!("{}.npy", info.name.replace(':', "_")));
        let cli = gpukit::io::read_npy(&kit, &file).unwrap();
        assert_eq!(cli.dims(), v.dims(), "{}", info.name);
        let bits = |t: &Tensor| {
            t.to_dtype(gpukit::DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap()
        };
        let (a, b) = (bits(&cli), bits(v.tensor()));
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "{}: the command and the library differ",
            info.name
        );
    }
}

/// A uint8 model: the input read from numpy's `|u1`, the output written as `|u1`, with
/// uint8's wrapping addition; an int8 file value outside the input's type is refused.
#[test]
fn narrow_integer_models_read_and_write_numpys_own_dtypes() {
    let dir = scratch("onnx_uint8");
    let model = dir.join("m.onnx");
    let bytes = ModelProto {
        ir_version: Some(9),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(GraphProto {
            node: vec![node("add", "Add", &["x", "b"], &["y"])],
            initializer: vec![TensorProto {
                name: Some("b".into()),
                dims: vec![3],
                data_type: Some(2),
                raw_data: Some(vec![250, 10, 0]),
                ..Default::default()
            }],
            input: vec![vi("x", 2, &[3])],
            output: vec![vi("y", 2, &[3])],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec();
    std::fs::write(&model, bytes).unwrap();
    let kit = gpukit::cpu().unwrap();
    let x = Tensor::from_slice(&kit, &[10i32, 250, 7], &[3]).unwrap();
    let xf = dir.join("x.npy");
    gpukit::io::write_npy_int(&xf, &x, gpukit::io::NpyInt::U8).unwrap();
    let out = dir.join("out");
    let (code, stdout, err) = gpukit(&[
        "onnx",
        model.to_str().unwrap(),
        "--input",
        &format!("x={}", xf.display()),
        "--output-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("y: uint8 [3]"), "{stdout}");
    let raw = std::fs::read(out.join("y.npy")).unwrap();
    assert!(String::from_utf8_lossy(&raw[..80]).contains("'|u1'"));
    assert_eq!(&raw[raw.len() - 3..], &[4, 4, 7]);
    // An int32 file holding 300 for the uint8 input: one line naming the input.
    let bad = Tensor::from_slice(&kit, &[300i32, 1, 2], &[3]).unwrap();
    let bf = dir.join("bad.npy");
    gpukit::io::write_npy(&bf, &bad).unwrap();
    let (code, _, err) = gpukit(&[
        "onnx",
        model.to_str().unwrap(),
        "--input",
        &format!("x={}", bf.display()),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("`x`") && err.contains("300") && err.lines().count() == 1,
        "{err}"
    );
}
