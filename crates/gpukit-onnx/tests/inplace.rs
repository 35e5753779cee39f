//! In-place execution: a value read for the last time by an elementwise node is written
//! over when nothing else holds its buffer (a chain of unary nodes then runs in one
//! buffer), and never when a graph output, a second reader, a view (Reshape) or the
//! caller's input still holds it; the bits equal the tensor API's, on cpu and ptx-emu.

mod common;

use common::*;
use gpukit::Tensor;
use gpukit_onnx::{Model, Session};

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| {
            if v.is_nan() {
                f32::NAN.to_bits()
            } else {
                v.to_bits()
            }
        })
        .collect()
}

const X: [f32; 6] = [1.5, -0.0, f32::NAN, -2.0, 1e-40, 0.75];

#[test]
fn a_unary_chain_runs_in_one_buffer_with_the_tensor_apis_bits() {
    let m = model(
        vec![
            node("a", "Relu", &["x"], &["h1"], vec![]),
            node("b", "Exp", &["h1"], &["h2"], vec![]),
            node("c", "Sigmoid", &["h2"], &["h3"], vec![]),
            node("d", "Tanh", &["h3"], &["h4"], vec![]),
            node("e", "Add", &["h4", "x"], &["y"], vec![]),
        ],
        vec![],
        vec![vi("x", FLOAT, &[D::N(2), D::N(3)])],
        vec![vi("y", FLOAT, &[D::N(2), D::N(3)])],
        21,
    );
    let m = Model::from_bytes(&m).unwrap();
    let mut per_dev = Vec::new();
    for dev in ["cpu", "ptx-emu"] {
        let kit = gpukit::open(dev).unwrap();
        let x = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
        let want = x
            .relu()
            .unwrap()
            .exp()
            .unwrap()
            .sigmoid()
            .unwrap()
            .tanh()
            .unwrap()
            .add(&x)
            .unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        // No idle blocks to draw from: every block the run takes is a new one.
        kit.release_pool();
        let before = kit.pool_stats();
        let y = s.run(&[("x", &x)]).unwrap();
        // Relu reads the caller's x (held by the caller): a new buffer. Exp, Sigmoid,
        // Tanh and the Add (same dims) write over it: the run takes one block from the
        // pool and holds no other (one out-of-place step would leave a second block).
        let after = kit.pool_stats();
        assert_eq!(after.in_use, before.in_use + 1, "{dev}");
        assert_eq!(
            after.blocks,
            before.blocks + 1,
            "{dev}: {before:?} -> {after:?}"
        );
        assert_eq!(bits(y[0].tensor()), bits(&want), "{dev}");
        // The caller's input is untouched.
        assert_eq!(
            bits(&x),
            bits(&Tensor::from_slice(&kit, &X, &[2, 3]).unwrap())
        );
        per_dev.push(bits(y[0].tensor()));
    }
    assert_eq!(per_dev[0], per_dev[1]);
}

#[test]
fn shared_values_are_never_written_over() {
    // h is a graph output and has two readers; r is a view of h still alive when Exp
    // reads h for the last time.
    let m = model(
        vec![
            node("a", "Relu", &["x"], &["h"], vec![]),
            node("r", "Reshape", &["h", "flat"], &["r"], vec![]),
            node("b", "Exp", &["h"], &["e"], vec![]),
            node("c", "Sigmoid", &["h"], &["s"], vec![]),
            node("f", "Reshape", &["e", "flat"], &["ef"], vec![]),
            node("g", "Add", &["ef", "r"], &["y"], vec![]),
        ],
        vec![i64_tensor("flat", &[1], &[6])],
        vec![vi("x", FLOAT, &[D::N(2), D::N(3)])],
        vec![
            vi("y", FLOAT, &[D::N(6)]),
            vi("h", FLOAT, &[D::N(2), D::N(3)]),
            vi("s", FLOAT, &[D::N(2), D::N(3)]),
        ],
        21,
    );
    let m = Model::from_bytes(&m).unwrap();
    for dev in ["cpu", "ptx-emu"] {
        let kit = gpukit::open(dev).unwrap();
        let x = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
        let h = x.relu().unwrap();
        let y = h
            .exp()
            .unwrap()
            .reshape(&[6])
            .unwrap()
            .add(&h.reshape(&[6]).unwrap())
            .unwrap();
        let s_want = h.sigmoid().unwrap();
        let mut s = Session::new(&m, &kit).unwrap();
        for _ in 0..2 {
            let out = s.run(&[("x", &x)]).unwrap();
            assert_eq!(bits(out[0].tensor()), bits(&y), "{dev} y");
            assert_eq!(bits(out[1].tensor()), bits(&h), "{dev} h");
            assert_eq!(bits(out[2].tensor()), bits(&s_want), "{dev} s");
        }
    }
}
