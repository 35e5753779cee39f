//! The narrow element types (stored in a wider dtype with their ONNX type beside):
//! arithmetic wraps to the width, uint64 orders unsigned, casts round as ONNX's
//! reference, inputs are range-checked, packed initializers decode, every other op on
//! them is an error naming the node, the op and the type, and cpu and ptx-emu agree bit
//! for bit. The oracles are Rust's own fixed-width integer operations and hand-derived
//! float8 / int4 values.

mod common;

use common::*;
use gpukit::{DType, Tensor};
use gpukit_onnx::proto::TensorProto;
use gpukit_onnx::{ElemType, Model, OnnxError, Session, Value};

const INT8: i32 = 3;
const INT16: i32 = 5;
const UINT16: i32 = 4;
const UINT32: i32 = 12;
const UINT64: i32 = 13;
const INT4: i32 = 22;
const F8E4M3FN: i32 = 17;
const F8E5M2: i32 = 19;

const DEVICES: [&str; 2] = ["cpu", "ptx-emu"];

/// Runs `bytes` on each device with `inputs` (name, i64 values, storage dtype), and
/// returns each device's outputs as i64 (integers; uint64 as its bit pattern) after
/// checking the devices agree.
fn run_ints(bytes: &[u8], inputs: &[(&str, Vec<i64>, DType)]) -> Vec<(ElemType, Vec<i64>)> {
    let m = Model::from_bytes(bytes).unwrap();
    let mut per_dev = Vec::new();
    for dev in DEVICES {
        let kit = gpukit::open(dev).unwrap();
        let ts: Vec<Tensor> = inputs
            .iter()
            .map(|(_, v, d)| {
                Tensor::from_slice(&kit, v, &[v.len()])
                    .unwrap()
                    .to_dtype(*d)
                    .unwrap()
            })
            .collect();
        let given: Vec<(&str, &Tensor)> = inputs.iter().map(|i| i.0).zip(&ts).collect();
        let outs = Session::new(&m, &kit).unwrap().run(&given).unwrap();
        per_dev.push(
            outs.iter()
                .map(|v: &Value| {
                    let t = v.tensor().to_dtype(DType::I64).unwrap();
                    (v.ty(), t.to_vec::<i64>().unwrap())
                })
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(per_dev[0], per_dev[1], "cpu and ptx-emu differ");
    per_dev.remove(0)
}

fn binary_model(elem: i32, n: i64) -> Vec<u8> {
    let ops = ["Add", "Sub", "Mul", "Div", "Less", "Max"];
    model(
        ops.iter()
            .map(|op| node(op, op, &["a", "b"], &[&op.to_lowercase()], vec![]))
            .collect(),
        vec![],
        vec![vi("a", elem, &[D::N(n)]), vi("b", elem, &[D::N(n)])],
        ops.iter()
            .map(|op| {
                let ty = if *op == "Less" { BOOL } else { elem };
                vi(&op.to_lowercase(), ty, &[D::N(n)])
            })
            .collect(),
        21,
    )
}

/// Each type's results against Rust's fixed-width arithmetic on the same values.
macro_rules! check_type {
    ($t:ty, $elem:expr, $ety:expr, $storage:expr, $a:expr, $b:expr) => {{
        let (a, b): (Vec<$t>, Vec<$t>) = ($a, $b);
        let wide = |v: &[$t]| v.iter().map(|&x| x as i64).collect::<Vec<i64>>();
        let out = run_ints(
            &binary_model($elem, a.len() as i64),
            &[("a", wide(&a), $storage), ("b", wide(&b), $storage)],
        );
        let z = || a.iter().zip(&b);
        let want: [Vec<i64>; 6] = [
            z().map(|(&x, &y)| x.wrapping_add(y) as i64).collect(),
            z().map(|(&x, &y)| x.wrapping_sub(y) as i64).collect(),
            z().map(|(&x, &y)| x.wrapping_mul(y) as i64).collect(),
            z().map(|(&x, &y)| if y == 0 { 0 } else { x.wrapping_div(y) as i64 })
                .collect(),
            z().map(|(&x, &y)| i64::from(x < y)).collect(),
            z().map(|(&x, &y)| x.max(y) as i64).collect(),
        ];
        for (k, ((ty, got), want)) in out.iter().zip(&want).enumerate() {
            let expect_ty = if k == 4 { ElemType::Bool } else { $ety };
            assert_eq!(*ty, expect_ty, "output {k}");
            assert_eq!(got, want, "{} output {k}", stringify!($t));
        }
    }};
}

#[test]
fn small_integer_arithmetic_wraps_to_the_width_and_compares_as_the_type() {
    check_type!(
        i8,
        INT8,
        ElemType::I8,
        DType::I32,
        vec![100, -128, 7, -7, 127, 0, -128],
        vec![100, -1, 3, 2, 127, 5, 0]
    );
    check_type!(
        u8,
        UINT8,
        ElemType::U8,
        DType::I32,
        vec![3, 255, 200, 17, 0, 128],
        vec![5, 255, 100, 4, 0, 2]
    );
    check_type!(
        i16,
        INT16,
        ElemType::I16,
        DType::I32,
        vec![30000, -32768, 181, -300, 7],
        vec![30000, -1, 181, 7, 0]
    );
    check_type!(
        u16,
        UINT16,
        ElemType::U16,
        DType::I32,
        vec![65535, 2, 40000, 9, 1],
        vec![65535, 3, 40000, 2, 0]
    );
    check_type!(
        u32,
        UINT32,
        ElemType::U32,
        DType::I64,
        vec![u32::MAX, 1, 3_000_000_000, 10],
        vec![u32::MAX, 2, 3_000_000_000, 3]
    );
}

#[test]
fn uint64_orders_and_wraps_unsigned() {
    // Bit patterns: values of 2^63 and above are negative as stored.
    let a: Vec<u64> = vec![0, 1, 1 << 63, u64::MAX, 7];
    let b: Vec<u64> = vec![u64::MAX, 1, 5, 1 << 63, 9];
    let bits = |v: &[u64]| v.iter().map(|&x| x as i64).collect::<Vec<i64>>();
    let m = model(
        ["Add", "Mul", "Less", "GreaterOrEqual", "Max", "Min"]
            .iter()
            .map(|op| node(op, op, &["a", "b"], &[&op.to_lowercase()], vec![]))
            .collect(),
        vec![],
        vec![vi("a", UINT64, &[D::N(5)]), vi("b", UINT64, &[D::N(5)])],
        vec![
            vi("add", UINT64, &[D::N(5)]),
            vi("mul", UINT64, &[D::N(5)]),
            vi("less", BOOL, &[D::N(5)]),
            vi("greaterorequal", BOOL, &[D::N(5)]),
            vi("max", UINT64, &[D::N(5)]),
            vi("min", UINT64, &[D::N(5)]),
        ],
        21,
    );
    let out = run_ints(
        &m,
        &[("a", bits(&a), DType::I64), ("b", bits(&b), DType::I64)],
    );
    let z = || a.iter().zip(&b);
    let want: Vec<Vec<u64>> = vec![
        z().map(|(&x, &y)| x.wrapping_add(y)).collect(),
        z().map(|(&x, &y)| x.wrapping_mul(y)).collect(),
        z().map(|(&x, &y)| u64::from(x < y)).collect(),
        z().map(|(&x, &y)| u64::from(x >= y)).collect(),
        z().map(|(&x, &y)| x.max(y)).collect(),
        z().map(|(&x, &y)| x.min(y)).collect(),
    ];
    for (k, ((_, got), want)) in out.iter().zip(&want).enumerate() {
        assert_eq!(got, &bits(want), "output {k}");
    }
    // Division needs the unsigned order: refused for values of 2^63 and above.
    let div = model(
        vec![node("d", "Div", &["a", "b"], &["q"], vec![])],
        vec![],
        vec![vi("a", UINT64, &[D::N(2)]), vi("b", UINT64, &[D::N(2)])],
        vec![vi("q", UINT64, &[D::N(2)])],
        21,
    );
    let m = Model::from_bytes(&div).unwrap();
    let kit = gpukit::open("cpu").unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let t = |v: &[i64]| Tensor::from_slice(&kit, v, &[2]).unwrap();
    let (x, y) = (t(&[9, 100]), t(&[2, 7]));
    let q = s.run(&[("a", &x), ("b", &y)]).unwrap();
    assert_eq!(q[0].tensor().to_vec::<i64>().unwrap(), vec![4, 14]);
    let big = t(&[i64::MIN, 3]);
    let e = s.run(&[("a", &big), ("b", &y)]).unwrap_err().to_string();
    assert!(e.contains("2^63") && e.contains("Div"), "{e}");
}

/// A one-node Cast model from `from` to `to` over `n` elements.
fn cast_model(from: i32, to: i32, n: i64, saturate: Option<i64>) -> Vec<u8> {
    let mut attrs = vec![attr_i("to", i64::from(to))];
    if let Some(s) = saturate {
        attrs.push(attr_i("saturate", s));
    }
    model(
        vec![node("c", "Cast", &["x"], &["y"], attrs)],
        vec![],
        vec![vi("x", from, &[D::N(n)])],
        vec![vi("y", to, &[D::N(n)])],
        21,
    )
}

/// The f32 (stored) values of a one-node cast of f32 `x`, on each device (agreeing).
fn cast_f32(to: i32, x: &[f32], saturate: Option<i64>) -> Vec<f32> {
    let m = Model::from_bytes(&cast_model(FLOAT, to, x.len() as i64, saturate)).unwrap();
    let mut per = Vec::new();
    for dev in DEVICES {
        let kit = gpukit::open(dev).unwrap();
        let xt = Tensor::from_slice(&kit, x, &[x.len()]).unwrap();
        let y = Session::new(&m, &kit).unwrap().run(&[("x", &xt)]).unwrap();
        let v = y[0].tensor().to_dtype(DType::F32).unwrap();
        per.push(v.to_vec::<f32>().unwrap());
    }
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&per[0]), bits(&per[1]), "cpu and ptx-emu differ");
    per.remove(0)
}

fn same(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn casts_round_to_float8_and_int4_as_the_reference() {
    let nan = f32::NAN;
    // float8e4m3fn: 448 is the largest finite value; 464 ties to 448 (even), 465 rounds
    // past it: saturated to 448 by default, NaN without saturation (no infinity).
    // 0.3 lies between 0.28125 and 0.3125 (spacing 2^-5 in [0.25, 0.5)): nearer 0.3125.
    // 2^-10 is half the smallest subnormal 2^-9: a tie, to even, 0 (sign kept).
    let x = [
        464.0,
        465.0,
        1e6,
        f32::NEG_INFINITY,
        0.3,
        -(2f32.powi(-10)),
        nan,
    ];
    same(
        &cast_f32(F8E4M3FN, &x, None),
        &[448.0, 448.0, 448.0, -448.0, 0.3125, -0.0, nan],
    );
    same(
        &cast_f32(F8E4M3FN, &x, Some(0)),
        &[448.0, nan, nan, nan, 0.3125, -0.0, nan],
    );
    // float8e5m2 has infinities: overflow without saturation gives them.
    same(
        &cast_f32(F8E5M2, &[61439.0, 61440.0, -1e6, 1.1], Some(0)),
        &[57344.0, f32::INFINITY, f32::NEG_INFINITY, 1.0],
    );
    // int4: truncated toward zero, a value outside [-8, 7] (or NaN) gives 0.
    same(
        &cast_f32(INT4, &[-9.0, -8.0, 7.0, 8.0, 2.7, -2.7, nan], None),
        &[0.0, -8.0, 7.0, 0.0, 2.0, -2.0, 0.0],
    );
    // Integer to a narrower integer wraps (C's conversion).
    let out = run_ints(
        &cast_model(INT32, UINT8, 4, None),
        &[("x", vec![300, -1, 255, 256], DType::I32)],
    );
    assert_eq!(out[0], (ElemType::U8, vec![44, 255, 255, 0]));
}

#[test]
fn packed_and_typed_initializers_decode() {
    // int4 [-8, 7, 1] packed low nibble first: 0x78, 0x01.
    let w = TensorProto {
        name: Some("w".into()),
        dims: vec![3],
        data_type: Some(INT4),
        raw_data: Some(vec![0x78, 0x01]),
        ..Default::default()
    };
    let m = model(
        vec![node("c", "Cast", &["w"], &["y"], vec![attr_i("to", 6)])],
        vec![w],
        vec![],
        vec![vi("y", INT32, &[D::N(3)])],
        21,
    );
    let out = run_ints(&m, &[]);
    assert_eq!(out[0], (ElemType::I32, vec![-8, 7, 1]));
    // A uint16 in int32_data outside the type's range is malformed, named.
    let bad = TensorProto {
        name: Some("w".into()),
        dims: vec![2],
        data_type: Some(UINT16),
        int32_data: vec![5, 70000],
        ..Default::default()
    };
    let m = model(
        vec![node("c", "Cast", &["w"], &["y"], vec![attr_i("to", 6)])],
        vec![bad],
        vec![],
        vec![vi("y", INT32, &[D::N(2)])],
        21,
    );
    let e = Model::from_bytes(&m).unwrap_err();
    assert!(
        matches!(&e, OnnxError::Malformed(w) if w.contains("70000") && w.contains("`w`")),
        "{e}"
    );
}

#[test]
fn other_ops_on_narrow_types_are_errors_naming_node_op_and_type() {
    // At load: Relu fed by a uint8 graph input.
    let relu = model(
        vec![node("r", "Relu", &["x"], &["y"], vec![])],
        vec![],
        vec![vi("x", UINT8, &[D::N(2)])],
        vec![vi("y", UINT8, &[D::N(2)])],
        21,
    );
    match Model::from_bytes(&relu).unwrap_err() {
        OnnxError::Unsupported { node, op, what } => {
            assert_eq!((node.as_str(), op.as_str()), ("r", "Relu"));
            assert!(what.contains("uint8"), "{what}");
        }
        e => panic!("wrong error {e}"),
    }
    // At run: Exp of an int8 made inside the graph.
    let exp = model(
        vec![
            node(
                "c",
                "Cast",
                &["x"],
                &["i"],
                vec![attr_i("to", i64::from(INT8))],
            ),
            node("e", "Exp", &["i"], &["y"], vec![]),
        ],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2)])],
        vec![vi("y", INT8, &[D::N(2)])],
        21,
    );
    let m = Model::from_bytes(&exp).unwrap();
    let kit = gpukit::open("cpu").unwrap();
    let x = Tensor::from_slice(&kit, &[1f32, 2.0], &[2]).unwrap();
    let e = Session::new(&m, &kit)
        .unwrap()
        .run(&[("x", &x)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`e`") && e.contains("Exp") && e.contains("int8"),
        "{e}"
    );
}

#[test]
fn narrow_inputs_are_checked_against_their_type() {
    let m = Model::from_bytes(&binary_model(INT8, 2)).unwrap();
    let kit = gpukit::open("cpu").unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let ok = Tensor::from_slice(&kit, &[1i32, 2], &[2]).unwrap();
    let out_of_range = Tensor::from_slice(&kit, &[1i32, 300], &[2]).unwrap();
    let e = s
        .run(&[("a", &out_of_range), ("b", &ok)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`a`") && e.contains("300") && e.contains("int8"),
        "{e}"
    );
    let float = Tensor::from_slice(&kit, &[1f32, 2.0], &[2]).unwrap();
    let e = s.run(&[("a", &ok), ("b", &float)]).unwrap_err().to_string();
    assert!(e.contains("`b`") && e.contains("int8"), "{e}");
    // A float8 input must hold values of the format.
    let m = Model::from_bytes(&cast_model(F8E4M3FN, FLOAT, 2, None)).unwrap();
    let mut s = Session::new(&m, &kit).unwrap();
    let good = Tensor::from_slice(&kit, &[0.3125f32, -448.0], &[2]).unwrap();
    let y = s.run(&[("x", &good)]).unwrap();
    assert_eq!(y[0].tensor().to_vec::<f32>().unwrap(), vec![0.3125, -448.0]);
    let off_grid = Tensor::from_slice(&kit, &[0.3f32, 1.0], &[2]).unwrap();
    let e = s.run(&[("x", &off_grid)]).unwrap_err().to_string();
    assert!(e.contains("`x`") && e.contains("float8e4m3fn"), "{e}");
}
