//! Building small ONNX models in tests from gpukit-onnx's own protobuf messages.

#![allow(dead_code, unreachable_pub)]

use gpukit_onnx::proto::*;
use prost::Message;

pub const FLOAT: i32 = 1;
pub const INT32: i32 = 6;
pub const INT64: i32 = 7;
pub const BOOL: i32 = 9;
pub const UINT8: i32 = 2;

/// A dim of a graph input/output: fixed or named.
pub enum D {
    N(i64),
    S(&'static str),
}

pub fn vi(name: &str, elem: i32, dims: &[D]) -> ValueInfoProto {
    let dims: Vec<DimValue> = dims
        .iter()
        .map(|d| match d {
            D::N(n) => DimValue::DimValue(*n),
            D::S(s) => DimValue::DimParam((*s).into()),
        })
        .collect();
    ValueInfoProto::tensor(name, elem, &dims)
}

pub fn f32_tensor(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(FLOAT),
        raw_data: Some(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        ..Default::default()
    }
}

pub fn i64_tensor(name: &str, dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(INT64),
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

pub fn attr_i(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attr_type::INT),
        i: Some(v),
        ..Default::default()
    }
}

pub fn attr_f(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attr_type::FLOAT),
        f: Some(v),
        ..Default::default()
    }
}

pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attr_type::INTS),
        ints: v.to_vec(),
        ..Default::default()
    }
}

pub fn attr_t(name: &str, t: TensorProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(attr_type::TENSOR),
        t: Some(t),
        ..Default::default()
    }
}

pub fn node(
    name: &str,
    op: &str,
    inputs: &[&str],
    outputs: &[&str],
    attrs: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto::new(name, op, inputs, outputs, attrs)
}

pub fn model(
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    opset: i64,
) -> Vec<u8> {
    ModelProto {
        ir_version: Some(9),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        producer_name: Some("gpukit-tests".into()),
        graph: Some(GraphProto {
            node: nodes,
            name: Some("g".into()),
            initializer: inits,
            input: inputs,
            output: outputs,
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// A two-layer perceptron with a softmax head and a shape chain:
/// `y = Softmax(Relu(Gemm(x, w1, b1)) · w2)` for `x` `[batch, 4]`, and
/// `flat = Reshape(x, Concat(Shape(x)[0:1], [-1]))`.
pub fn mlp() -> Vec<u8> {
    let w1: Vec<f32> = (0..12).map(|i| (i as f32 - 5.5) / 4.0).collect();
    let w2: Vec<f32> = (0..9).map(|i| (i as f32 * 0.37).sin()).collect();
    model(
        vec![
            node(
                "fc1",
                "Gemm",
                &["x", "w1", "b1"],
                &["h"],
                vec![attr_i("transB", 0)],
            ),
            node("act", "Relu", &["h"], &["a"], vec![]),
            node("fc2", "MatMul", &["a", "w2"], &["z"], vec![]),
            node("head", "Softmax", &["z"], &["y"], vec![attr_i("axis", -1)]),
            node("shape", "Shape", &["x"], &["s"], vec![]),
            node("first", "Slice", &["s", "zero", "one"], &["s0"], vec![]),
            node(
                "cat",
                "Concat",
                &["s0", "minus1"],
                &["target"],
                vec![attr_i("axis", 0)],
            ),
            node("flat", "Reshape", &["x", "target"], &["flat"], vec![]),
        ],
        vec![
            f32_tensor("w1", &[4, 3], &w1),
            f32_tensor("b1", &[3], &[0.25, -0.5, 1.0]),
            f32_tensor("w2", &[3, 3], &w2),
            i64_tensor("zero", &[1], &[0]),
            i64_tensor("one", &[1], &[1]),
            i64_tensor("minus1", &[1], &[-1]),
        ],
        vec![vi("x", FLOAT, &[D::S("batch"), D::N(4)])],
        vec![
            vi("y", FLOAT, &[D::S("batch"), D::N(3)]),
            vi("flat", FLOAT, &[D::S("batch"), D::N(4)]),
        ],
        21,
    )
}
