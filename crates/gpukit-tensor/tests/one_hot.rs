//! Tensor::one_hot (ONNX OneHot) on cpu and ptx-emu against host loops: every axis
//! incl. negative ones, negative and out-of-range indices, i64 / i32 / float indices,
//! rank 0 and empty indices, depth 0 and 1, `on` / `off` bits (NaN payload, -0.0) in
//! several dtypes, and the errors.

mod common;

use common::kits;
use gpukit::half::f16;
use gpukit::{DType, Error, Tensor};

/// The host's one-hot of `idx` (shape `dims`) with the new axis at `ax`, as f64 1 / 0.
fn host(idx: &[i64], dims: &[usize], depth: usize, ax: usize) -> (Vec<usize>, Vec<u8>) {
    let mut out = dims.to_vec();
    out.insert(ax, depth);
    let n: usize = out.iter().product();
    let mut v = vec![0u8; n];
    for (e, hot) in v.iter_mut().enumerate() {
        // Coordinates of e in `out`; the index is at the coordinates without axis ax.
        let mut c = vec![0usize; out.len()];
        let mut r = e;
        for d in (0..out.len()).rev() {
            c[d] = r % out[d];
            r /= out[d];
        }
        let j = c.remove(ax);
        let at = c.iter().zip(dims).fold(0, |acc, (&x, &d)| acc * d + x);
        let i = idx[at];
        let k = if i < 0 { i + depth as i64 } else { i };
        *hot = (k == j as i64) as u8;
    }
    (out, v)
}

#[test]
fn one_hot_matches_host_loops_on_every_axis() {
    let dims = [2usize, 3];
    let idx = [0i64, -1, 3, -4, 2, 9];
    let depth = 4;
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &idx, &dims).unwrap();
        let v = Tensor::from_slice(&kit, &[-0.5f32, 7.25], &[2]).unwrap();
        for axis in [-3i64, -2, -1, 0, 1, 2] {
            let ax = ((axis + 3) % 3) as usize;
            let (od, want) = host(&idx, &dims, depth, ax);
            let got = t.one_hot(depth, &v, axis).unwrap();
            assert_eq!(got.dims(), od.as_slice(), "axis {axis}");
            assert_eq!(got.dtype(), DType::F32);
            let want: Vec<f32> = want
                .iter()
                .map(|&h| if h == 1 { 7.25 } else { -0.5 })
                .collect();
            assert_eq!(got.to_vec::<f32>().unwrap(), want, "axis {axis}");
        }
    }
}

#[test]
fn one_hot_index_dtypes_values_bits_and_edges() {
    for kit in kits() {
        // i32 and f32 indices (truncated toward zero) give the i64 answer.
        let v = Tensor::from_slice(&kit, &[0i32, 1], &[2]).unwrap();
        let want = [0, 1, 0, 0, 0, 1, 1, 0, 0];
        let i32s = Tensor::from_slice(&kit, &[1i32, 2, -3], &[3]).unwrap();
        let got = i32s.one_hot(3, &v, -1).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(got, want);
        let fs = Tensor::from_slice(&kit, &[1.9f32, 2.2, -3.7], &[3]).unwrap();
        let got = fs.one_hot(3, &v, 1).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(got, want);
        // on / off copied bit for bit: a NaN payload and -0.0 in f16.
        let nan = f16::from_bits(0x7e01);
        let vh = Tensor::from_slice(&kit, &[f16::from_bits(0x8000), nan], &[1, 2]).unwrap();
        let ids = Tensor::from_slice(&kit, &[1i64], &[]).unwrap();
        let got = ids.one_hot(2, &vh, 0).unwrap();
        assert_eq!(got.dims(), [2]);
        let bits: Vec<u16> = got
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|h| h.to_bits())
            .collect();
        assert_eq!(bits, [0x8000, 0x7e01]);
        // Depth 0 and empty indices are empty results; depth 1.
        let vf = Tensor::from_slice(&kit, &[0.0f64, 1.0], &[2]).unwrap();
        let three = Tensor::from_slice(&kit, &[0i64, 1, -1], &[3]).unwrap();
        assert_eq!(three.one_hot(0, &vf, -1).unwrap().dims(), [3, 0]);
        let empty = Tensor::zeros(&kit, &[0, 2], DType::I64).unwrap();
        assert_eq!(empty.one_hot(5, &vf, 1).unwrap().dims(), [0, 5, 2]);
        let got = three.one_hot(1, &vf, -1).unwrap().to_vec::<f64>().unwrap();
        assert_eq!(got, [1.0, 0.0, 1.0]);
    }
}

#[test]
fn one_hot_errors_name_the_problem() {
    let kit = gpukit::open("cpu").unwrap();
    let ids = Tensor::from_slice(&kit, &[0i64, 1], &[2]).unwrap();
    let v3 = Tensor::from_slice(&kit, &[0.0f32, 1.0, 2.0], &[3]).unwrap();
    assert!(matches!(ids.one_hot(2, &v3, -1), Err(Error::Shape { .. })));
    let v = Tensor::from_slice(&kit, &[0.0f32, 1.0], &[2]).unwrap();
    for axis in [2i64, -3] {
        match ids.one_hot(2, &v, axis) {
            Err(Error::InvalidArgument { reason, .. }) => {
                assert!(reason.contains(&format!("axis {axis}")), "{reason}")
            }
            other => panic!("axis {axis}: {other:?}"),
        }
    }
    assert!(matches!(
        ids.one_hot(usize::MAX, &v, -1),
        Err(Error::InvalidArgument { .. })
    ));
    let other = gpukit::open("cpu").unwrap();
    let vo = Tensor::from_slice(&other, &[0.0f32, 1.0], &[2]).unwrap();
    let r = ids.one_hot(2, &vo, -1);
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
}
