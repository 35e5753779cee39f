//! Load-time shape inference for the windowed, reducing and broadcasting ops: Conv and
//! the pools (pads, strides, dilations, auto_pad, ceil_mode), the Reduce family and
//! ArgMax/ArgMin (axes as attribute or constant input, keepdims, noop), Expand, Tile and
//! the global pools, each checked against the dims the op itself produces on the CPU,
//! and a definite channel conflict refused at load naming the node.

mod common;

use common::*;
use gpukit::Tensor;
use gpukit_onnx::{Dim, Model, Session};

fn f32_zeros(name: &str, dims: &[i64]) -> gpukit_onnx::proto::TensorProto {
    let n: i64 = dims.iter().product();
    f32_tensor(name, dims, &vec![0.25; n as usize])
}

/// Loads a one-node model whose output `y` has undeclared dims, checks the inferred dims
/// are `want`, then runs it on the CPU and checks the op gives exactly those dims.
fn check(
    op: &str,
    attrs: Vec<gpukit_onnx::proto::AttributeProto>,
    x: &[i64],
    inits: Vec<gpukit_onnx::proto::TensorProto>,
    inputs: &[&str],
    want: &[usize],
) {
    let mut g_out = vi("y", FLOAT, &[]);
    // An output of unknown rank: no dims declared.
    if let Some(t) = g_out.r#type.as_mut().and_then(|t| t.tensor_type.as_mut()) {
        t.shape = None;
    }
    let is_int = op == "ArgMax" || op == "ArgMin";
    if is_int {
        g_out = vi("y", INT64, &[]);
        if let Some(t) = g_out.r#type.as_mut().and_then(|t| t.tensor_type.as_mut()) {
            t.shape = None;
        }
    }
    let xd: Vec<D> = x.iter().map(|&d| D::N(d)).collect();
    let bytes = model(
        vec![node("n", op, inputs, &["y"], attrs)],
        inits,
        vec![vi("x", FLOAT, &xd)],
        vec![g_out],
        21,
    );
    let m = Model::from_bytes(&bytes).unwrap();
    let got: Vec<Dim> = m
        .value_dims("y")
        .unwrap_or_else(|| panic!("{op}: no dims"))
        .to_vec();
    let want_d: Vec<Dim> = want.iter().map(|&d| Dim::Fixed(d)).collect();
    assert_eq!(got, want_d, "{op} inferred");
    let kit = gpukit::cpu().unwrap();
    let n: i64 = x.iter().product();
    let xt = Tensor::from_slice(
        &kit,
        &vec![0.5f32; n as usize],
        &x.iter().map(|&d| d as usize).collect::<Vec<_>>(),
    )
    .unwrap();
    let y = Session::new(&m, &kit).unwrap().run(&[("x", &xt)]).unwrap();
    assert_eq!(y[0].dims(), want, "{op} run");
}

#[test]
fn windowed_reducing_and_broadcasting_ops_infer_the_dims_the_ops_produce() {
    check(
        "Conv",
        vec![
            attr_ints("pads", &[1, 1, 1, 1]),
            attr_ints("strides", &[2, 2]),
        ],
        &[1, 3, 8, 7],
        vec![f32_zeros("w", &[4, 3, 3, 3])],
        &["x", "w"],
        &[1, 4, 4, 4],
    );
    check(
        "Conv",
        vec![attr_ints("dilations", &[2]), attr_i("group", 3)],
        &[2, 6, 11],
        vec![f32_zeros("w", &[3, 2, 3])],
        &["x", "w"],
        &[2, 3, 7],
    );
    for ceil in [0, 1] {
        check(
            "MaxPool",
            vec![
                attr_ints("kernel_shape", &[3, 3]),
                attr_ints("strides", &[2, 2]),
                attr_i("ceil_mode", ceil),
            ],
            &[1, 2, 8, 9],
            vec![],
            &["x"],
            if ceil == 1 {
                &[1, 2, 4, 4]
            } else {
                &[1, 2, 3, 4]
            },
        );
    }
    check(
        "AveragePool",
        vec![
            attr_ints("kernel_shape", &[2]),
            attr_ints("strides", &[2]),
            attr_ints("pads", &[1, 0]),
        ],
        &[1, 1, 6],
        vec![],
        &["x"],
        &[1, 1, 3],
    );
    check(
        "GlobalAveragePool",
        vec![],
        &[2, 3, 5, 4],
        vec![],
        &["x"],
        &[2, 3, 1, 1],
    );
    check(
        "ReduceMean",
        vec![attr_i("keepdims", 0)],
        &[2, 3, 4],
        vec![i64_tensor("a", &[1], &[-1])],
        &["x", "a"],
        &[2, 3],
    );
    check(
        "ReduceSum",
        vec![],
        &[2, 3, 4],
        vec![i64_tensor("a", &[2], &[0, 2])],
        &["x", "a"],
        &[1, 3, 1],
    );
    check(
        "ReduceMax",
        vec![attr_i("keepdims", 0)],
        &[2, 3, 4],
        vec![],
        &["x"],
        &[],
    );
    check(
        "ArgMax",
        vec![attr_i("axis", 1)],
        &[2, 3, 4],
        vec![],
        &["x"],
        &[2, 1, 4],
    );
    check(
        "ArgMin",
        vec![attr_i("axis", -1), attr_i("keepdims", 0)],
        &[2, 3, 4],
        vec![],
        &["x"],
        &[2, 3],
    );
    check(
        "Expand",
        vec![],
        &[3, 1],
        vec![i64_tensor("s", &[3], &[2, 1, 4])],
        &["x", "s"],
        &[2, 3, 4],
    );
    check(
        "Tile",
        vec![],
        &[2, 3],
        vec![i64_tensor("r", &[2], &[2, 2])],
        &["x", "r"],
        &[4, 6],
    );
}

#[test]
fn a_conv_channel_conflict_is_refused_at_load_naming_the_node() {
    let bytes = model(
        vec![node("the_conv", "Conv", &["x", "w"], &["y"], vec![])],
        vec![f32_zeros("w", &[4, 2, 3, 3])],
        vec![vi("x", FLOAT, &[D::N(1), D::N(3), D::N(8), D::N(8)])],
        vec![vi("y", FLOAT, &[D::N(1), D::N(4), D::N(6), D::N(6)])],
        21,
    );
    let e = Model::from_bytes(&bytes).unwrap_err().to_string();
    assert!(e.contains("`the_conv`") && e.contains("channels"), "{e}");
}
