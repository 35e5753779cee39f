//! Reductions along axes on tensors (`reduce`, `sum_axes`, ..., `logsumexp_axes`)
//! against host computations (small integers: exact in f32), with keepdims shapes,
//! views, and the CPU and the PTX emulator bit-identical.

mod common;

use common::*;
use gpukit::{DType, Error, Tensor};
use gpukit_tensor::ReduceOp;

/// Host reduction of `x` (shape `dims`) along `axes` (non-negative, any order) with
/// `f` folding from `init`, row-major over the kept axes.
fn host(x: &[f32], dims: &[usize], axes: &[usize], init: f32, f: fn(f32, f32) -> f32) -> Vec<f32> {
    let kept: Vec<usize> = (0..dims.len()).filter(|d| !axes.contains(d)).collect();
    let n_out: usize = kept.iter().map(|&d| dims[d]).product();
    let mut out = vec![init; n_out];
    for (i, c) in coords(dims).iter().enumerate() {
        let o = kept.iter().fold(0, |o, &d| o * dims[d] + c[d]);
        out[o] = f(out[o], x[i]);
    }
    out
}

#[test]
fn reductions_match_the_host_with_and_without_keepdims() {
    let dims = [2usize, 3, 4];
    let x: Vec<f32> = (0..24).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let mut per_kit = Vec::new();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &dims).unwrap();
        let mut got = Vec::new();
        for (axes, pos) in [
            (vec![1i64], vec![1usize]),
            (vec![-1, 0], vec![0, 2]),
            (vec![], vec![0, 1, 2]),
            (vec![0, 1, 2], vec![0, 1, 2]),
        ] {
            let out_dims: Vec<usize> = (0..3)
                .filter(|d| !pos.contains(d))
                .map(|d| dims[d])
                .collect();
            let keep_dims: Vec<usize> = (0..3)
                .map(|d| if pos.contains(&d) { 1 } else { dims[d] })
                .collect();
            let s = t.sum_axes(&axes, false).unwrap();
            check_f32(&s, &out_dims, &host(&x, &dims, &pos, 0.0, |a, b| a + b));
            let s = t.sum_axes(&axes, true).unwrap();
            check_f32(&s, &keep_dims, &host(&x, &dims, &pos, 0.0, |a, b| a + b));
            let m = t.max_axes(&axes, false).unwrap();
            check_f32(
                &m,
                &out_dims,
                &host(&x, &dims, &pos, f32::NEG_INFINITY, f32::max),
            );
            let m = t.min_axes(&axes, true).unwrap();
            check_f32(
                &m,
                &keep_dims,
                &host(&x, &dims, &pos, f32::INFINITY, f32::min),
            );
            let l1 = t.l1_axes(&axes, false).unwrap();
            check_f32(
                &l1,
                &out_dims,
                &host(&x, &dims, &pos, 0.0, |a, b| a + b.abs()),
            );
            for op in ReduceOp::ALL {
                got.push(t.reduce(op, &axes, false).unwrap().to_vec::<f32>().unwrap());
            }
        }
        // A view: the transpose's reduction is the contiguous copy's.
        let v = t.transpose(0, 2).unwrap();
        let c = v.contiguous().unwrap();
        for op in ReduceOp::ALL {
            let a = v.reduce(op, &[1], true).unwrap();
            let b = c.reduce(op, &[1], true).unwrap();
            assert_eq!(a.dims(), &[4, 1, 2]);
            assert!(
                same_f32(&a.to_vec::<f32>().unwrap(), &b.to_vec::<f32>().unwrap()),
                "{op}"
            );
        }
        per_kit.push(got);
    }
    for (a, b) in per_kit[0].iter().zip(&per_kit[1]) {
        assert!(same_f32(a, b), "cpu {a:?} vs ptx-emu {b:?}");
    }
}

#[test]
fn mean_prod_l2_logsumexp_and_integers() {
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(
            t.mean_axes(&[0], false).unwrap().to_vec::<f64>().unwrap(),
            [2.0, 3.0]
        );
        assert_eq!(
            t.prod_axes(&[-1], false).unwrap().to_vec::<f64>().unwrap(),
            [2.0, 12.0]
        );
        let l2 = t.l2_axes(&[], false).unwrap();
        assert_eq!(l2.dims(), &[] as &[usize]);
        assert!((l2.to_vec::<f64>().unwrap()[0] - 30f64.sqrt()).abs() < 1e-15);
        let lse = t.logsumexp_axes(&[1], true).unwrap();
        assert_eq!(lse.dims(), &[2, 1]);
        let v = lse.to_vec::<f64>().unwrap();
        assert!(
            (v[0] - (1f64.exp() + 2f64.exp()).ln()).abs() < 1e-14,
            "{v:?}"
        );
        let i = Tensor::from_slice(&kit, &[5i64, -2, 7, 1], &[4]).unwrap();
        assert_eq!(
            i.max_axes(&[0], false).unwrap().to_vec::<i64>().unwrap(),
            [7]
        );
        assert_eq!(
            i.prod_axes(&[0], false).unwrap().to_vec::<i64>().unwrap(),
            [-70]
        );
        let e = i.mean_axes(&[0], false).unwrap_err();
        assert!(
            matches!(
                e,
                Error::DType {
                    got: DType::I64,
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn bad_axes_name_the_op_shape_and_axis() {
    let kit = gpukit::cpu().unwrap();
    let t = Tensor::zeros(&kit, &[2, 3], DType::F32).unwrap();
    let e = t.sum_axes(&[2], false).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{m}");
    assert!(m.contains("axis 2") && m.contains("[2, 3]"), "{m}");
    let m = t.l2_axes(&[0, -2], true).unwrap_err().to_string();
    assert!(m.contains("repeats"), "{m}");
    let s = Tensor::from_slice(&kit, &[4.0f32], &[]).unwrap();
    assert_eq!(
        s.sum_axes(&[], true).unwrap().to_vec::<f32>().unwrap(),
        [4.0]
    );
    assert!(s.sum_axes(&[0], false).is_err(), "rank 0 has no axis 0");
}
