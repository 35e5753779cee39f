//! Malformed and truncated model files are errors, never panics: every prefix of a
//! model, and randomly mutated models (bytes overwritten, inserted, removed), are
//! loaded, and those that still load are planned and run on inputs of their declared
//! dims. Longer runs: `PROPTEST_CASES=20000 cargo test --release -p gpukit-onnx --test
//! fuzz`.

mod common;

use common::*;
use gpukit::{DType, Kit, Tensor};
use gpukit_onnx::{Dim, Model, Session};
use proptest::prelude::*;

/// A model exercising shape glue, constants, bools and attributes.
fn glue() -> Vec<u8> {
    model(
        vec![
            node("s", "Shape", &["x"], &["s"], vec![]),
            node("g", "Gather", &["s", "i0"], &["b"], vec![attr_i("axis", 0)]),
            node("u", "Unsqueeze", &["b", "ax0"], &["bu"], vec![]),
            node(
                "c",
                "Concat",
                &["bu", "m1"],
                &["shape"],
                vec![attr_i("axis", 0)],
            ),
            node("r", "Reshape", &["x", "shape"], &["flat"], vec![]),
            node(
                "k",
                "Constant",
                &[],
                &["two"],
                vec![attr_t("value", f32_tensor("", &[], &[2.0]))],
            ),
            node("m", "Mul", &["flat", "two"], &["dbl"], vec![]),
            node("gt", "Greater", &["dbl", "zero"], &["pos"], vec![]),
            node("w", "Where", &["pos", "dbl", "zero"], &["relu"], vec![]),
            node("sm", "Softmax", &["relu"], &["p"], vec![attr_i("axis", 1)]),
            node(
                "t",
                "Transpose",
                &["p"],
                &["pt"],
                vec![attr_ints("perm", &[1, 0])],
            ),
            node(
                "rs",
                "ReduceSum",
                &["pt", "ax0"],
                &["sum"],
                vec![attr_i("keepdims", 0)],
            ),
            node(
                "lr",
                "LeakyRelu",
                &["sum"],
                &["y"],
                vec![attr_f("alpha", 0.1)],
            ),
        ],
        vec![
            i64_tensor("i0", &[], &[0]),
            i64_tensor("ax0", &[1], &[0]),
            i64_tensor("m1", &[1], &[-1]),
            f32_tensor("zero", &[], &[0.0]),
        ],
        vec![vi("x", FLOAT, &[D::S("n"), D::N(2), D::N(3)])],
        vec![
            vi("y", FLOAT, &[D::S("n")]),
            vi("pos", BOOL, &[D::S("n"), D::N(6)]),
        ],
        21,
    )
}

/// Loads `bytes`; when the model loads, plans and runs it on zeros of its declared
/// dims (named dims 2, unknown 1). Errors are fine; a panic fails the test.
fn exercise(kit: &Kit, bytes: &[u8]) {
    let Ok(m) = Model::from_bytes(bytes) else {
        return;
    };
    let Ok(mut s) = Session::new(&m, kit) else {
        return;
    };
    let mut inputs = Vec::new();
    for i in m.inputs() {
        let dims: Vec<usize> = i
            .dims
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => (*n).min(64),
                Dim::Symbolic(_) => 2,
                Dim::Unknown => 1,
            })
            .collect();
        let Ok(t) = Tensor::zeros(kit, &dims, i.ty.dtype()) else {
            return;
        };
        inputs.push((i.name.clone(), t));
    }
    let given: Vec<(&str, &Tensor)> = inputs.iter().map(|(n, t)| (n.as_str(), t)).collect();
    if let Ok(outs) = s.run(&given) {
        for o in outs {
            let _ = o.tensor().to_dtype(DType::F64);
        }
    }
}

#[test]
fn the_unmutated_models_run() {
    let kit = gpukit::cpu().unwrap();
    for bytes in [glue(), mlp()] {
        let m = Model::from_bytes(&bytes).unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        let x = Tensor::zeros(
            &kit,
            if m.node_count() == 13 {
                &[2, 2, 3]
            } else {
                &[2, 4]
            },
            DType::F32,
        )
        .unwrap();
        s.run(&[("x", &x)]).unwrap();
    }
}

#[test]
fn every_truncation_is_an_error_or_a_smaller_valid_model() {
    let kit = gpukit::cpu().unwrap();
    for bytes in [glue(), mlp()] {
        for n in 0..bytes.len() {
            exercise(&kit, &bytes[..n]);
        }
    }
}

/// One edit of a model file.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Insert(p, b)),
        1 => (any::<usize>(), 1usize..8).prop_map(|(p, n)| Edit::Remove(p, n)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, e: &Edit) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match *e {
        Edit::Set(p, b) => bytes[p % len] = b,
        Edit::Insert(p, b) => bytes.insert(p % (len + 1), b),
        Edit::Remove(p, n) => {
            let at = p % len;
            bytes.drain(at..(at + n).min(len));
        }
        Edit::Truncate(p) => bytes.truncate(p % len),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_models_never_panic(which in 0usize..2, edits in prop::collection::vec(edit(), 1..6)) {
        let kit = gpukit::cpu().unwrap();
        let mut bytes = if which == 0 { glue() } else { mlp() };
        for e in &edits {
            apply(&mut bytes, e);
        }
        exercise(&kit, &bytes);
    }
}

/// One edit of a model's structure (decoded, changed, encoded again): ops swapped,
/// attributes set to odd values, inputs rewired, initializer dims and graph dims
/// changed. These reach the ops with shapes and parameters no exporter writes.
#[derive(Debug, Clone)]
enum Structural {
    Op(usize, usize),
    AttrInt(usize, i64),
    Rewire(usize, usize, usize),
    InitDims(usize, Vec<i64>),
    InputDim(usize, i64),
    /// An initializer's (or, for `usize` odd, the graph input's) element type set to an
    /// ONNX type code: the narrow types' decoding and op gating, and codes gpukit refuses.
    Elem(usize, i32),
}

const OPS: &[&str] = &[
    "Relu",
    "Add",
    "MatMul",
    "Softmax",
    "Reshape",
    "Transpose",
    "Gather",
    "Concat",
    "Slice",
    "Squeeze",
    "Unsqueeze",
    "Expand",
    "Tile",
    "ReduceSum",
    "ReduceMax",
    "ArgMax",
    "TopK",
    "Where",
    "Cast",
    "Pad",
    "Split",
    "Flatten",
    "CumSum",
    "LayerNormalization",
    "Gemm",
    "Conv",
    "MaxPool",
    "Resize",
    "Range",
    "ConstantOfShape",
    "OneHot",
    "Attention",
    "Pow",
    "Clip",
];

fn structural() -> impl Strategy<Value = Structural> {
    prop_oneof![
        (any::<usize>(), 0..OPS.len()).prop_map(|(n, o)| Structural::Op(n, o)),
        (
            any::<usize>(),
            prop_oneof![-4i64..8, Just(i64::MAX), Just(i64::MIN), Just(1 << 40)]
        )
            .prop_map(|(n, v)| Structural::AttrInt(n, v)),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(n, i, v)| Structural::Rewire(n, i, v)),
        (
            any::<usize>(),
            prop::collection::vec(prop_oneof![0i64..5, Just(-1i64)], 0..4)
        )
            .prop_map(|(i, d)| Structural::InitDims(i, d)),
        (
            any::<usize>(),
            prop_oneof![0i64..5, Just(-3i64), Just(1 << 20)]
        )
            .prop_map(|(d, v)| Structural::InputDim(d, v)),
        (any::<usize>(), 0i32..30).prop_map(|(i, c)| Structural::Elem(i, c)),
    ]
}

fn apply_structural(m: &mut gpukit_onnx::proto::ModelProto, e: &Structural) {
    use gpukit_onnx::proto::DimValue;
    let g = m.graph.as_mut().expect("graph");
    let names: Vec<String> = g
        .node
        .iter()
        .flat_map(|n| n.output.clone())
        .chain(g.initializer.iter().filter_map(|t| t.name.clone()))
        .chain(g.input.iter().filter_map(|i| i.name.clone()))
        .collect();
    let nn = g.node.len();
    match e {
        Structural::Op(n, o) => g.node[n % nn].op_type = Some(OPS[*o].into()),
        Structural::AttrInt(n, v) => {
            if let Some(a) = g.node[n % nn].attribute.first_mut() {
                a.i = Some(*v);
                a.ints = vec![*v];
            }
        }
        Structural::Rewire(n, i, v) => {
            let node = &mut g.node[n % nn];
            if !node.input.is_empty() {
                let k = i % node.input.len();
                node.input[k] = names[v % names.len()].clone();
            }
        }
        Structural::InitDims(i, d) => {
            let k = i % g.initializer.len();
            g.initializer[k].dims = d.clone();
        }
        Structural::Elem(i, c) => {
            if i % 2 == 1 {
                if let Some(t) = g.input[0]
                    .r#type
                    .as_mut()
                    .and_then(|t| t.tensor_type.as_mut())
                {
                    t.elem_type = Some(*c);
                }
            } else {
                let k = (i / 2) % g.initializer.len();
                g.initializer[k].data_type = Some(*c);
            }
        }
        Structural::InputDim(d, v) => {
            if let Some(t) = g.input[0]
                .r#type
                .as_mut()
                .and_then(|t| t.tensor_type.as_mut())
                .and_then(|t| t.shape.as_mut())
            {
                let k = d % t.dim.len();
                t.dim[k].value = Some(DimValue::DimValue(*v));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn structurally_mutated_models_never_panic(
        which in 0usize..2,
        edits in prop::collection::vec(structural(), 1..4),
    ) {
        let kit = gpukit::cpu().unwrap();
        let bytes = if which == 0 { glue() } else { mlp() };
        let mut m = <gpukit_onnx::proto::ModelProto as prost::Message>::decode(&bytes[..]).unwrap();
        for e in &edits {
            apply_structural(&mut m, e);
        }
        exercise(&kit, &prost::Message::encode_to_vec(&m));
    }
}
