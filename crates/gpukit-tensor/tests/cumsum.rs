//! Tensor::cumsum (ONNX CumSum) on cpu and ptx-emu against host loops over coordinates:
//! every axis incl. negative ones, inclusive / exclusive, forward / reverse, transposed
//! and broadcast views as input, integers, empty tensors, NaN / ±inf / -0.0 bits, and
//! the errors (axis out of range, rank 0).

mod common;

use common::{coords_of, kits, offset, same_f32};
use gpukit::{DType, Error, Tensor};

/// numpy's cumsum along `ax` (then ONNX's exclusive shift and reverse), in f32.
fn host(x: &[f32], dims: &[usize], ax: usize, exclusive: bool, reverse: bool) -> Vec<f32> {
    let mut y = vec![0.0f32; x.len()];
    for (e, out) in y.iter_mut().enumerate() {
        let c = coords_of(e, dims);
        let len = dims[ax];
        // The positions folded in, in order: from the line's start (or end) up to this
        // one, without it when exclusive.
        let mut order: Vec<usize> = if reverse {
            (c[ax]..len).rev().collect()
        } else {
            (0..=c[ax]).collect()
        };
        if exclusive {
            order.pop();
        }
        let mut acc: Option<f32> = None;
        for p in order {
            let mut q = c.clone();
            q[ax] = p;
            let v = x[offset(&q, dims)];
            acc = Some(acc.map_or(v, |a| a + v));
        }
        *out = acc.unwrap_or(0.0);
    }
    y
}

const VALS: [f32; 7] = [1.5, f32::NAN, -0.0, f32::INFINITY, -2.0, 1e-45, 3.25];

#[test]
fn cumsum_matches_host_loops_on_every_axis() {
    let dims = [3usize, 4, 5];
    let x: Vec<f32> = (0..60)
        .map(|i| {
            if i % 9 == 1 || i % 11 == 3 {
                VALS[i % 7]
            } else {
                (i as f32) * 0.37 - 7.0
            }
        })
        .collect();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &dims).unwrap();
        for axis in [-3i64, -2, -1, 0, 1, 2] {
            let ax = ((axis + 3) % 3) as usize;
            for exclusive in [false, true] {
                for reverse in [false, true] {
                    let got = t.cumsum(axis, exclusive, reverse).unwrap();
                    assert_eq!(got.dims(), dims);
                    let want = host(&x, &dims, ax, exclusive, reverse);
                    let g = got.to_vec::<f32>().unwrap();
                    assert!(
                        same_f32(&g, &want),
                        "axis {axis} exclusive {exclusive} reverse {reverse}: {g:?} vs {want:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn cumsum_reads_views_and_integers() {
    for kit in kits() {
        // A transposed view: cumsum of xᵀ along its axis 1 is the host's on the copy.
        let x: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
        let t = Tensor::from_slice(&kit, &x, &[3, 4]).unwrap();
        let tt = t.transpose(0, 1).unwrap();
        let copy = tt.contiguous().unwrap().to_vec::<f32>().unwrap();
        let got = tt.cumsum(1, false, false).unwrap().to_vec::<f32>().unwrap();
        assert!(same_f32(&got, &host(&copy, &[4, 3], 1, false, false)));
        // A broadcast view (stride 0 on axis 0).
        let row = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0], &[1, 3]).unwrap();
        let b = row.broadcast_to(&[4, 3]).unwrap();
        let got = b.cumsum(0, false, false).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(
            got,
            [1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 3.0, 6.0, 9.0, 4.0, 8.0, 12.0]
        );
        // Integers wrap; i64 and i32 keep their dtype.
        let i = Tensor::from_slice(&kit, &[i64::MAX, 1, 5], &[3]).unwrap();
        let c = i.cumsum(0, false, false).unwrap();
        assert_eq!(c.dtype(), DType::I64);
        assert_eq!(
            c.to_vec::<i64>().unwrap(),
            [i64::MAX, i64::MIN, i64::MIN + 5]
        );
        let i = Tensor::from_slice(&kit, &[4i32, -1, 2], &[3]).unwrap();
        let c = i.cumsum(-1, true, true).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(c, [1, 2, 0]);
        // Empty along the axis and elsewhere.
        let e = Tensor::zeros(&kit, &[2, 0, 3], DType::F32).unwrap();
        assert_eq!(e.cumsum(1, false, false).unwrap().dims(), [2, 0, 3]);
        assert_eq!(e.cumsum(2, true, true).unwrap().dims(), [2, 0, 3]);
    }
}

#[test]
fn cumsum_errors_name_the_axis() {
    let kit = gpukit::open("cpu").unwrap();
    let t = Tensor::from_slice(&kit, &[1.0f32, 2.0], &[2]).unwrap();
    for axis in [1i64, -2, 7] {
        let r = t.cumsum(axis, false, false);
        match r {
            Err(Error::InvalidArgument { ref reason, .. }) => {
                assert!(reason.contains(&format!("axis {axis}")), "{reason}")
            }
            other => panic!("axis {axis}: {other:?}"),
        }
    }
    let s = Tensor::from_slice(&kit, &[1.0f32], &[]).unwrap();
    assert!(matches!(
        s.cumsum(0, false, false),
        Err(Error::InvalidArgument { .. })
    ));
}
