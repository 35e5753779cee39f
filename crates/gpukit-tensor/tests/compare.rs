//! Tensor comparisons, `where_` and logical ops: numpy broadcasting (a column against a
//! row, a scalar, rank 0, empty, transposed and negative-step views) on cpu and
//! ptx-emu, against host loops that broadcast by index and follow IEEE (NaN, -0.0).

mod common;

use common::kits;
use gpukit::{DType, Tensor};
use gpukit_ops::{CmpOp, LogicOp};

/// Row-major elements of `dims`, numpy-broadcast from an operand of `src` dims.
fn expand(v: &[f32], src: &[usize], dims: &[usize]) -> Vec<f32> {
    let n: usize = dims.iter().product();
    let lead = dims.len() - src.len();
    (0..n)
        .map(|mut i| {
            let mut off = 0;
            let mut stride = 1;
            for d in (0..dims.len()).rev() {
                let c = i % dims[d];
                i /= dims[d];
                if d >= lead {
                    let s = src[d - lead];
                    off += if s == 1 { 0 } else { c } * stride;
                    stride *= s;
                }
            }
            v[off]
        })
        .collect()
}

fn host_cmp(op: CmpOp, x: f32, y: f32) -> bool {
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
    }
}

const VALS: [f32; 8] = [1.0, f32::NAN, -0.0, 0.0, f32::INFINITY, -2.5, 1e-45, 3.0];

#[test]
fn comparisons_broadcast_like_numpy() {
    let cases: [(&[usize], &[usize]); 5] = [
        (&[4, 1], &[3]),
        (&[2, 3, 4], &[3, 1]),
        (&[5], &[]),
        (&[], &[]),
        (&[0, 3], &[1, 3]),
    ];
    for kit in kits() {
        let name = format!("{:?}", kit.info().backend);
        for (sa, sb) in cases {
            let na: usize = sa.iter().product();
            let nb: usize = sb.iter().product();
            let va: Vec<f32> = (0..na).map(|i| VALS[i * 5 % 8]).collect();
            let vb: Vec<f32> = (0..nb).map(|i| VALS[(i * 3 + 1) % 8]).collect();
            let a = Tensor::from_slice(&kit, &va, sa).unwrap();
            let b = Tensor::from_slice(&kit, &vb, sb).unwrap();
            let dims = gpukit_tensor::broadcast_shapes("t", sa, sb).unwrap();
            let (ea, eb) = (expand(&va, sa, &dims), expand(&vb, sb, &dims));
            for op in CmpOp::ALL {
                let want: Vec<i32> = ea
                    .iter()
                    .zip(&eb)
                    .map(|(&x, &y)| host_cmp(op, x, y) as i32)
                    .collect();
                let m = a.compare_as(op, &b, DType::I32).unwrap();
                assert_eq!(m.dims(), &dims[..], "{name} {op:?} {sa:?} {sb:?}");
                assert_eq!(
                    m.to_vec::<i32>().unwrap(),
                    want,
                    "{name} {op:?} {sa:?} {sb:?}"
                );
                // The default mask dtype is the operands'.
                let f: Vec<f32> = want.iter().map(|&v| v as f32).collect();
                let m = a.compare(op, &b).unwrap();
                assert_eq!(m.dtype(), DType::F32);
                assert_eq!(m.to_vec::<f32>().unwrap(), f, "{name} {op:?}");
            }
        }
        // Named methods and scalar forms.
        let x = Tensor::from_slice(&kit, &[-1.0f32, 0.0, -0.0, 2.0, f32::NAN], &[5]).unwrap();
        assert_eq!(
            x.gt_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [0.0, 0.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            x.ge_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [0.0, 1.0, 1.0, 1.0, 0.0]
        );
        assert_eq!(
            x.eq_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [0.0, 1.0, 1.0, 0.0, 0.0]
        );
        assert_eq!(
            x.ne_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 0.0, 0.0, 1.0, 1.0]
        );
        assert_eq!(
            x.lt_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 0.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(
            x.le_scalar(0.0).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 1.0, 1.0, 0.0, 0.0]
        );
        let y = Tensor::from_slice(&kit, &[2.0f32], &[1]).unwrap();
        assert_eq!(
            x.lt(&y).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 1.0, 1.0, 0.0, 0.0]
        );
        assert_eq!(
            x.le(&y).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 1.0, 1.0, 1.0, 0.0]
        );
        assert_eq!(x.gt(&y).unwrap().to_vec::<f32>().unwrap(), [0.0; 5]);
        assert_eq!(
            x.ge(&y).unwrap().to_vec::<f32>().unwrap(),
            [0.0, 0.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            x.eq(&y).unwrap().to_vec::<f32>().unwrap(),
            [0.0, 0.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            x.ne(&y).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 1.0, 1.0, 0.0, 1.0]
        );
        // Integers exactly, into an f16 mask.
        let i = Tensor::from_slice(&kit, &[(1i64 << 60) + 1, 5], &[2]).unwrap();
        let j = Tensor::from_slice(&kit, &[1i64 << 60], &[]).unwrap();
        let m = i.compare_as(CmpOp::Gt, &j, DType::F16).unwrap();
        assert_eq!(
            m.to_vec::<gpukit::half::f16>()
                .unwrap()
                .iter()
                .map(|h| h.to_bits())
                .collect::<Vec<_>>(),
            [0x3c00, 0]
        );
    }
}

#[test]
fn views_are_read_as_their_elements() {
    for kit in kits() {
        let name = format!("{:?}", kit.info().backend);
        let v: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let t = Tensor::from_slice(&kit, &v, &[2, 3]).unwrap();
        // Transposed [3, 2]: [[0, 3], [1, 4], [2, 5]] against a column [3, 1].
        let col = Tensor::from_slice(&kit, &[1.0f32, 1.0, 5.0], &[3, 1]).unwrap();
        let m = t.t().unwrap().gt(&col).unwrap();
        assert_eq!(
            m.to_vec::<f32>().unwrap(),
            [0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
            "{name}"
        );
        // A reversed view (negative step) [5, 4, 3, 2, 1, 0] against the original.
        let flat = Tensor::from_slice(&kit, &v, &[6]).unwrap();
        let rev = flat.slice(&[0], &[-1], &[i64::MIN], &[-1]).unwrap();
        let got = rev.le(&flat).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0], "{name}");
    }
}

#[test]
fn where_and_logical_broadcast() {
    for kit in kits() {
        let name = format!("{:?}", kit.info().backend);
        // cond [3, 1] (i32, any dtype allowed), a [1, 2] (f32), b a scalar.
        let c = Tensor::from_slice(&kit, &[1i32, 0, -7], &[3, 1]).unwrap();
        let a = Tensor::from_slice(&kit, &[10.0f32, 20.0], &[1, 2]).unwrap();
        let b = Tensor::from_slice(&kit, &[-0.0f32], &[]).unwrap();
        let w = Tensor::where_(&c, &a, &b).unwrap();
        assert_eq!(w.dims(), &[3, 2]);
        let got = w.to_vec::<f32>().unwrap();
        assert_eq!(got, [10.0, 20.0, 0.0, 0.0, 10.0, 20.0], "{name}");
        assert!(got[2].is_sign_negative(), "{name}: -0.0 kept");
        assert_eq!(c.where_(&a, &b).unwrap().to_vec::<f32>().unwrap(), got);
        // NaN condition is true, -0.0 false.
        let cf = Tensor::from_slice(&kit, &[f32::NAN, -0.0], &[2]).unwrap();
        let x = Tensor::from_slice(&kit, &[1i64, 2], &[2]).unwrap();
        let y = Tensor::from_slice(&kit, &[-1i64, -2], &[2]).unwrap();
        assert_eq!(
            cf.where_(&x, &y).unwrap().to_vec::<i64>().unwrap(),
            [1, -2],
            "{name}"
        );
        // Logical ops with broadcasting, and not.
        let p = Tensor::from_slice(&kit, &[0.0f32, 1.0, f32::NAN, -0.0], &[4, 1]).unwrap();
        let q = Tensor::from_slice(&kit, &[0.0f32, 2.0], &[2]).unwrap();
        let pv = [false, true, true, false];
        let qv = [false, true];
        for (op, f) in [
            (LogicOp::And, (|x, y| x && y) as fn(bool, bool) -> bool),
            (LogicOp::Or, |x, y| x || y),
            (LogicOp::Xor, |x, y| x != y),
        ] {
            let want: Vec<f32> = pv
                .iter()
                .flat_map(|&x| qv.iter().map(move |&y| f(x, y) as i32 as f32))
                .collect();
            let got = match op {
                LogicOp::And => p.and(&q),
                LogicOp::Or => p.or(&q),
                _ => p.xor(&q),
            };
            assert_eq!(got.unwrap().to_vec::<f32>().unwrap(), want, "{name} {op:?}");
            assert_eq!(p.logical(op, &q).unwrap().to_vec::<f32>().unwrap(), want);
        }
        assert_eq!(
            p.not().unwrap().to_vec::<f32>().unwrap(),
            [1.0, 0.0, 0.0, 1.0],
            "{name}"
        );
        assert_eq!(p.not().unwrap().dims(), &[4, 1]);
        // Empty.
        let e = Tensor::from_slice::<f32>(&kit, &[], &[0, 2]).unwrap();
        assert_eq!(e.and(&q).unwrap().dims(), &[0, 2]);
    }
}

#[test]
fn errors_name_the_op_and_shapes() {
    let kit = kits().into_iter().next().unwrap();
    let a = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let b = Tensor::from_slice(&kit, &[1.0f32, 2.0], &[2]).unwrap();
    let e = a.lt(&b).unwrap_err().to_string();
    assert!(
        e.contains("lt") && e.contains("[3]") && e.contains("[2]"),
        "{e}"
    );
    let i = Tensor::from_slice(&kit, &[1i32, 2, 3], &[3]).unwrap();
    let e = a.eq(&i).unwrap_err().to_string();
    assert!(e.contains("eq"), "{e}");
    let e = i.where_(&a, &i).unwrap_err().to_string();
    assert!(e.contains("where"), "{e}");
    let e = a.and(&b).unwrap_err().to_string();
    assert!(e.contains("and"), "{e}");
    // An integer tensor cannot compare with a fraction it cannot hold.
    assert!(i.gt_scalar(0.5).is_err());
}
