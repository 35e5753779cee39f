//! Loading, checking and running small models built in the test: load-time errors name
//! the node and op, runs match an f64 oracle on the host, cpu and ptx-emu give the same
//! bits, constant subgraphs fold, and bad inputs are errors naming the input.

mod common;

use common::*;
use gpukit::Tensor;
use gpukit_onnx::{ElemType, Model, OnnxError, Session};

fn load_err(bytes: &[u8]) -> OnnxError {
    Model::from_bytes(bytes).expect_err("the model must be refused")
}

fn one_node(op: &str, attrs: Vec<gpukit_onnx::proto::AttributeProto>) -> Vec<u8> {
    model(
        vec![node("the_node", op, &["x"], &["y"], attrs)],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2)])],
        vec![vi("y", FLOAT, &[D::N(2)])],
        21,
    )
}

#[test]
fn an_unsupported_op_is_refused_at_load_naming_the_node_and_op() {
    let e = load_err(&one_node("LSTM", vec![]));
    match &e {
        OnnxError::Unsupported { node, op, .. } => {
            assert_eq!(node, "the_node");
            assert_eq!(op, "LSTM");
        }
        e => panic!("wrong error {e:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("the_node") && msg.contains("LSTM"), "{msg}");
}

#[test]
fn unknown_attributes_values_and_domains_are_refused_by_name() {
    let e = load_err(&one_node("Relu", vec![attr_i("consumed_inputs", 1)])).to_string();
    assert!(
        e.contains("attribute `consumed_inputs`") && e.contains("Relu"),
        "{e}"
    );
    let mut gelu = one_node("Gelu", vec![]);
    // approximate = "sigmoid" is no ONNX mode: refused at load, not at run.
    gelu = {
        let mut m = <gpukit_onnx::proto::ModelProto as prost::Message>::decode(&gelu[..]).unwrap();
        m.graph.as_mut().unwrap().node[0]
            .attribute
            .push(gpukit_onnx::proto::AttributeProto {
                name: Some("approximate".into()),
                r#type: Some(gpukit_onnx::proto::attr_type::STRING),
                s: Some(b"sigmoid".to_vec()),
                ..Default::default()
            });
        prost::Message::encode_to_vec(&m)
    };
    let e = load_err(&gelu).to_string();
    assert!(e.contains("approximate = \"sigmoid\""), "{e}");
    let mut m =
        <gpukit_onnx::proto::ModelProto as prost::Message>::decode(&one_node("Relu", vec![])[..])
            .unwrap();
    m.graph.as_mut().unwrap().node[0].domain = Some("com.microsoft".into());
    let e = load_err(&prost::Message::encode_to_vec(&m)).to_string();
    assert!(
        e.contains("com.microsoft.Relu") && e.contains("domain"),
        "{e}"
    );
}

#[test]
fn inconsistent_graphs_are_invalid_with_the_value_named() {
    let undefined = model(
        vec![node("n", "Add", &["x", "ghost"], &["y"], vec![])],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2)])],
        vec![vi("y", FLOAT, &[D::N(2)])],
        21,
    );
    let e = load_err(&undefined).to_string();
    assert!(e.contains("`ghost`") && e.contains("`n`"), "{e}");
    let twice = model(
        vec![
            node("a", "Relu", &["x"], &["y"], vec![]),
            node("b", "Relu", &["x"], &["y"], vec![]),
        ],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2)])],
        vec![vi("y", FLOAT, &[D::N(2)])],
        21,
    );
    assert!(load_err(&twice).to_string().contains("more than once"));
    let cycle = model(
        vec![
            node("a", "Add", &["x", "q"], &["p"], vec![]),
            node("b", "Relu", &["p"], &["q"], vec![]),
        ],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2)])],
        vec![vi("q", FLOAT, &[D::N(2)])],
        21,
    );
    assert!(load_err(&cycle).to_string().contains("cycle"));
    // Strings (type 8) are an element type gpukit does not run.
    let strings = model(
        vec![node("n", "Identity", &["x"], &["y"], vec![])],
        vec![],
        vec![vi("x", 8, &[D::N(2)])],
        vec![vi("y", 8, &[D::N(2)])],
        21,
    );
    let e = load_err(&strings).to_string();
    assert!(e.contains("string") && e.contains('x'), "{e}");
    assert!(matches!(load_err(b"\x08\x07\x12"), OnnxError::Malformed(_)));
    assert!(matches!(load_err(b""), OnnxError::Malformed(_)));
}

/// The MLP on the host in f64 (an independent oracle).
fn mlp_oracle(x: &[f32], batch: usize) -> Vec<f64> {
    let w1: Vec<f64> = (0..12).map(|i| f64::from((i as f32 - 5.5) / 4.0)).collect();
    let b1 = [0.25, -0.5, 1.0];
    let w2: Vec<f64> = (0..9).map(|i| f64::from((i as f32 * 0.37).sin())).collect();
    let mut out = Vec::new();
    for r in 0..batch {
        let a: Vec<f64> = (0..3)
            .map(|j| {
                let h: f64 = (0..4)
                    .map(|k| f64::from(x[r * 4 + k]) * w1[k * 3 + j])
                    .sum();
                (h + b1[j]).max(0.0)
            })
            .collect();
        let z: Vec<f64> = (0..3)
            .map(|j| (0..3).map(|k| a[k] * w2[k * 3 + j]).sum())
            .collect();
        let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        out.extend(e.iter().map(|v| v / s));
    }
    out
}

#[test]
fn a_small_model_matches_the_oracle_with_the_same_bits_on_cpu_and_ptx_emu() {
    let m = Model::from_bytes(&mlp()).unwrap();
    assert_eq!(m.opset(), 21);
    assert_eq!(m.node_count(), 8);
    let x: Vec<f32> = (0..20).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.3).collect();
    let want = mlp_oracle(&x, 5);
    let mut bits = Vec::new();
    for dev in ["cpu", "ptx-emu"] {
        let kit = gpukit::open(dev).unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        let xt = Tensor::from_slice(&kit, &x, &[5, 4]).unwrap();
        let out = s.run(&[("x", &xt)]).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].dims(), &[5, 3]);
        assert_eq!(out[0].ty(), ElemType::F32);
        let y = out[0].tensor().to_vec::<f32>().unwrap();
        for (g, w) in y.iter().zip(&want) {
            assert!(
                (f64::from(*g) - w).abs() <= 1e-6 + 1e-5 * w.abs(),
                "{g} vs {w}"
            );
        }
        assert_eq!(out[1].tensor().to_vec::<f32>().unwrap(), x);
        // A second run reuses the plan and gives the same bits.
        let again = s.run(&[("x", &xt)]).unwrap();
        assert_eq!(
            again[0].tensor().to_vec::<f32>().unwrap(),
            out[0].tensor().to_vec::<f32>().unwrap()
        );
        bits.push(y.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
    assert_eq!(bits[0], bits[1], "cpu and ptx-emu differ");
}

#[test]
fn constant_subgraphs_fold_at_plan_time() {
    // shape = Concat(Add(c, c), [-1]) depends on initializers only: folded; only the
    // Reshape runs.
    let bytes = model(
        vec![
            node("dbl", "Add", &["c", "c"], &["c2"], vec![]),
            node(
                "cat",
                "Concat",
                &["c2", "m1"],
                &["shape"],
                vec![attr_i("axis", 0)],
            ),
            node("r", "Reshape", &["x", "shape"], &["y"], vec![]),
        ],
        vec![i64_tensor("c", &[1], &[1]), i64_tensor("m1", &[1], &[-1])],
        vec![vi("x", FLOAT, &[D::N(2), D::N(3)])],
        vec![vi("y", FLOAT, &[D::N(2), D::N(3)])],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    assert_eq!(s.nodes_per_run(), 1);
    let x = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let y = s.run(&[("x", &x)]).unwrap();
    assert_eq!(y[0].dims(), &[2, 3]);
}

#[test]
fn bad_inputs_are_errors_naming_the_input() {
    let m = Model::from_bytes(&mlp()).unwrap();
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let ok = Tensor::from_slice(&kit, &[0f32; 8], &[2, 4]).unwrap();
    let wrong_dims = Tensor::from_slice(&kit, &[0f32; 6], &[2, 3]).unwrap();
    let wrong_type = Tensor::from_slice(&kit, &[0f64; 8], &[2, 4]).unwrap();
    let name_of = |e: OnnxError| match e {
        OnnxError::Input { name, what } => (name, what),
        e => panic!("wrong error {e:?}"),
    };
    let (n, w) = name_of(s.run(&[]).unwrap_err());
    assert_eq!((n.as_str(), w.as_str()), ("x", "missing"));
    let (n, w) = name_of(s.run(&[("x", &wrong_dims)]).unwrap_err());
    assert!(
        n == "x" && w.contains("[2, 3]") && w.contains("batch, 4"),
        "{w}"
    );
    let (n, w) = name_of(s.run(&[("x", &wrong_type)]).unwrap_err());
    assert!(n == "x" && w.contains("f64"), "{w}");
    let (n, _) = name_of(s.run(&[("x", &ok), ("extra", &ok)]).unwrap_err());
    assert_eq!(n, "extra");
    let (n, w) = name_of(s.run(&[("x", &ok), ("x", &ok)]).unwrap_err());
    assert!(n == "x" && w.contains("twice"));
    assert!(s.run(&[("x", &ok)]).is_ok());
}

#[test]
fn named_dims_must_agree_across_inputs() {
    let bytes = model(
        vec![node("n", "Add", &["a", "b"], &["y"], vec![])],
        vec![],
        vec![vi("a", FLOAT, &[D::S("n")]), vi("b", FLOAT, &[D::S("n")])],
        vec![vi("y", FLOAT, &[D::S("n")])],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let a = Tensor::from_slice(&kit, &[1f32, 2.0], &[2]).unwrap();
    let b = Tensor::from_slice(&kit, &[1f32], &[1]).unwrap();
    let e = s.run(&[("a", &a), ("b", &b)]).unwrap_err().to_string();
    assert!(e.contains("`n` is 2 in another input"), "{e}");
}

#[test]
fn bools_round_trip_through_comparisons_casts_and_where() {
    // y = Where(Cast(x, bool), x, -1); e = Equal(x, 0); NaN casts to true.
    let bytes = model(
        vec![
            node("c", "Cast", &["x"], &["xb"], vec![attr_i("to", 9)]),
            node("w", "Where", &["xb", "x", "m1"], &["y"], vec![]),
            node("e", "Equal", &["x", "zero"], &["e"], vec![]),
            node("n", "Not", &["e"], &["ne"], vec![]),
        ],
        vec![
            f32_tensor("m1", &[], &[-1.0]),
            f32_tensor("zero", &[], &[0.0]),
        ],
        vec![vi("x", FLOAT, &[D::N(4)])],
        vec![
            vi("y", FLOAT, &[D::N(4)]),
            vi("e", BOOL, &[D::N(4)]),
            vi("ne", BOOL, &[D::N(4)]),
        ],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    for dev in ["cpu", "ptx-emu"] {
        let kit = gpukit::open(dev).unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        let x = Tensor::from_slice(&kit, &[0.0f32, 2.5, f32::NAN, -0.0], &[4]).unwrap();
        let out = s.run(&[("x", &x)]).unwrap();
        let y = out[0].tensor().to_vec::<f32>().unwrap();
        assert_eq!(y[0], -1.0);
        assert_eq!(y[1], 2.5);
        assert!(y[2].is_nan());
        assert_eq!(y[3], -1.0, "-0.0 casts to false");
        assert_eq!(out[1].ty(), ElemType::Bool);
        assert_eq!(out[1].tensor().to_vec::<i32>().unwrap(), [1, 0, 0, 1]);
        assert_eq!(out[2].tensor().to_vec::<i32>().unwrap(), [0, 1, 1, 0]);
    }
}

#[test]
fn an_initializer_listed_as_input_is_a_default_the_run_may_replace() {
    let bytes = model(
        vec![node("n", "Add", &["x", "bias"], &["y"], vec![])],
        vec![f32_tensor("bias", &[2], &[10.0, 20.0])],
        vec![vi("x", FLOAT, &[D::N(2)]), vi("bias", FLOAT, &[D::N(2)])],
        vec![vi("y", FLOAT, &[D::N(2)])],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    assert!(m.inputs().any(|i| i.name == "bias" && i.has_default));
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let x = Tensor::from_slice(&kit, &[1f32, 2.0], &[2]).unwrap();
    let y = s.run(&[("x", &x)]).unwrap();
    assert_eq!(y[0].tensor().to_vec::<f32>().unwrap(), [11.0, 22.0]);
    let b = Tensor::from_slice(&kit, &[0f32, 1.0], &[2]).unwrap();
    let y = s.run(&[("x", &x), ("bias", &b)]).unwrap();
    assert_eq!(y[0].tensor().to_vec::<f32>().unwrap(), [1.0, 3.0]);
}

#[test]
fn shape_conflicts_are_found_at_load_and_the_rest_at_run_time_naming_the_node() {
    // A constant target shape of the wrong size: load-time inference names the node.
    let bytes = model(
        vec![node("bad_reshape", "Reshape", &["x", "s"], &["y"], vec![])],
        vec![i64_tensor("s", &[1], &[5])],
        vec![vi("x", FLOAT, &[D::N(4)])],
        vec![vi("y", FLOAT, &[D::N(5)])],
        21,
    );
    let e = load_err(&bytes).to_string();
    assert!(
        e.contains("`bad_reshape`") && e.contains("4 elements"),
        "{e}"
    );
    // MatMul's inner dims and broadcasting, and a graph output declared otherwise.
    let mm = model(
        vec![node("mm", "MatMul", &["a", "b"], &["y"], vec![])],
        vec![],
        vec![
            vi("a", FLOAT, &[D::S("n"), D::N(3)]),
            vi("b", FLOAT, &[D::N(4), D::N(2)]),
        ],
        vec![vi("y", FLOAT, &[D::S("n"), D::N(2)])],
        21,
    );
    assert!(load_err(&mm).to_string().contains("inner dims 3 and 4"));
    let add = model(
        vec![node("plus", "Add", &["a", "b"], &["y"], vec![])],
        vec![],
        vec![
            vi("a", FLOAT, &[D::N(2), D::N(3)]),
            vi("b", FLOAT, &[D::N(4)]),
        ],
        vec![vi("y", FLOAT, &[D::N(2), D::N(3)])],
        21,
    );
    assert!(load_err(&add).to_string().contains("`plus`"));
    let declared = model(
        vec![node("r", "Relu", &["a"], &["y"], vec![])],
        vec![],
        vec![vi("a", FLOAT, &[D::N(2), D::N(3)])],
        vec![vi("y", FLOAT, &[D::N(3), D::N(2)])],
        21,
    );
    assert!(load_err(&declared).to_string().contains("graph output `y`"));
    // Inferred dims are readable; named dims carry through.
    let m = Model::from_bytes(&mlp()).unwrap();
    assert_eq!(
        m.value_dims("y"),
        Some(
            &[
                gpukit_onnx::Dim::Symbolic("batch".into()),
                gpukit_onnx::Dim::Fixed(3)
            ][..]
        )
    );
    // A target shape given at run time: the run fails, naming the node.
    let bytes = model(
        vec![node("late_reshape", "Reshape", &["x", "s"], &["y"], vec![])],
        vec![],
        vec![vi("x", FLOAT, &[D::N(4)]), vi("s", INT64, &[D::N(1)])],
        vec![vi("y", FLOAT, &[D::N(5)])],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let x = Tensor::from_slice(&kit, &[1f32; 4], &[4]).unwrap();
    let shape = Tensor::from_slice(&kit, &[5i64], &[1]).unwrap();
    match s.run(&[("x", &x), ("s", &shape)]).unwrap_err() {
        OnnxError::Node { node, op, .. } => {
            assert_eq!((node.as_str(), op.as_str()), ("late_reshape", "Reshape"))
        }
        e => panic!("wrong error {e:?}"),
    }
}

#[test]
fn einsum_contracts_like_matmul_and_refuses_malformed_equations() {
    let eq = |e: &str| gpukit_onnx::proto::AttributeProto {
        name: Some("equation".into()),
        r#type: Some(gpukit_onnx::proto::attr_type::STRING),
        s: Some(e.as_bytes().to_vec()),
        ..Default::default()
    };
    let run = |e: &str, a: &[f32], ad: &[usize], b: &[f32], bd: &[usize]| {
        let bytes = model(
            vec![node("e", "Einsum", &["a", "b"], &["y"], vec![eq(e)])],
            vec![],
            vec![
                vi(
                    "a",
                    FLOAT,
                    &ad.iter().map(|&d| D::N(d as i64)).collect::<Vec<_>>(),
                ),
                vi(
                    "b",
                    FLOAT,
                    &bd.iter().map(|&d| D::N(d as i64)).collect::<Vec<_>>(),
                ),
            ],
            vec![gpukit_onnx::proto::ValueInfoProto {
                name: Some("y".into()),
                r#type: Some(gpukit_onnx::proto::TypeProto {
                    tensor_type: Some(gpukit_onnx::proto::TypeProtoTensor {
                        elem_type: Some(FLOAT),
                        shape: None,
                    }),
                    ..Default::default()
                }),
            }],
            21,
        );
        let m = Model::from_bytes(&bytes).unwrap();
        let kit = gpukit::cpu().unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        let at = Tensor::from_slice(&kit, a, ad).unwrap();
        let bt = Tensor::from_slice(&kit, b, bd).unwrap();
        s.run(&[("a", &at), ("b", &bt)])
            .map(|o| (o[0].dims().to_vec(), o[0].tensor().to_vec::<f32>().unwrap()))
    };
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0];
    // [2, 3] · [3, 2]
    assert_eq!(
        run("ij,jk->ik", &a, &[2, 3], &b, &[3, 2]).unwrap(),
        (vec![2, 2], vec![4.0, 5.0, 10.0, 11.0])
    );
    // Implicit output (letters seen once, sorted): the same product.
    assert_eq!(
        run("ij,jk", &a, &[2, 3], &b, &[3, 2]).unwrap().1,
        [4.0, 5.0, 10.0, 11.0]
    );
    // Batch broadcast with `...`, and a transpose.
    assert_eq!(
        run(
            "...ij,...kj->...ik",
            &a,
            &[1, 2, 3],
            &[1.0f32, 1.0, 1.0],
            &[1, 1, 3]
        )
        .unwrap(),
        (vec![1, 2, 1], vec![6.0, 15.0])
    );
    for bad in [
        "ii,jk->ik",
        "ij,jk->ii",
        "ij,jk->iz",
        "abcdefgh...,jk",
        "ij->i",
    ] {
        assert!(run(bad, &a, &[2, 3], &b, &[3, 2]).is_err(), "{bad}");
    }
}

#[test]
fn external_data_is_read_beside_the_model_and_never_outside_it() {
    use gpukit_onnx::proto::{StringStringEntryProto, TensorProto};
    let dir = std::env::temp_dir().join(format!("gpukit_onnx_ext_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 8 bytes of padding, then the bias [3] f32.
    let mut blob = vec![0xEEu8; 8];
    blob.extend([1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()));
    std::fs::write(dir.join("weights.bin"), &blob).unwrap();
    let ext = |location: &str, offset: &str, length: &str| TensorProto {
        name: Some("bias".into()),
        dims: vec![3],
        data_type: Some(FLOAT),
        data_location: Some(1),
        external_data: [
            ("location", location),
            ("offset", offset),
            ("length", length),
        ]
        .iter()
        .map(|(k, v)| StringStringEntryProto {
            key: Some((*k).into()),
            value: Some((*v).into()),
        })
        .collect(),
        ..Default::default()
    };
    let with = |t: TensorProto| {
        model(
            vec![node("n", "Add", &["x", "bias"], &["y"], vec![])],
            vec![t],
            vec![vi("x", FLOAT, &[D::N(3)])],
            vec![vi("y", FLOAT, &[D::N(3)])],
            21,
        )
    };
    let path = dir.join("m.onnx");
    std::fs::write(&path, with(ext("weights.bin", "8", "12"))).unwrap();
    let m = Model::load(&path).unwrap();
    let kit = gpukit::cpu().unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let x = Tensor::from_slice(&kit, &[10f32, 20.0, 30.0], &[3]).unwrap();
    let y = s.run(&[("x", &x)]).unwrap();
    assert_eq!(y[0].tensor().to_vec::<f32>().unwrap(), [11.0, 22.0, 33.0]);
    // From bytes there is no folder: an error, as are escapes, short files and lengths
    // that disagree with the dims.
    assert!(Model::from_bytes(&with(ext("weights.bin", "8", "12"))).is_err());
    for (loc, off, len, want) in [
        ("../weights.bin", "0", "12", "leaves the model's folder"),
        ("/etc/passwd", "0", "12", "leaves the model's folder"),
        ("weights.bin", "16", "12", "past the end"),
        ("weights.bin", "0", "8", "the dims need 12 bytes"),
        ("absent.bin", "0", "12", "absent.bin"),
    ] {
        std::fs::write(&path, with(ext(loc, off, len))).unwrap();
        let e = Model::load(&path).unwrap_err().to_string();
        assert!(e.contains(want), "{loc}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
