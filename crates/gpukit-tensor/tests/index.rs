//! `Tensor::gather`, `Tensor::embedding` and `Tensor::tile` on cpu and ptx-emu against
//! host loops (data movement: the bits are the source's), with the error cases.

mod common;

use common::kits;
use gpukit::{DType, Error, Tensor};

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for a in (0..dims.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * dims[a + 1];
    }
    s
}

/// Host ONNX Gather: `data` (row-major, `dims`) along `axis` by `idx` (shape `idims`).
fn host_gather(data: &[f32], dims: &[usize], axis: usize, idx: &[i64]) -> Vec<f32> {
    let outer: usize = dims[..axis].iter().product();
    let inner: usize = dims[axis + 1..].iter().product();
    let n = dims[axis] as i64;
    let mut out = Vec::new();
    for o in 0..outer {
        for &i in idx {
            let i = if i < 0 { i + n } else { i } as usize;
            for j in 0..inner {
                out.push(data[(o * dims[axis] + i) * inner + j]);
            }
        }
    }
    out
}

/// Host numpy.tile with one rep per axis.
fn host_tile(data: &[f32], dims: &[usize], reps: &[usize]) -> (Vec<usize>, Vec<f32>) {
    let out: Vec<usize> = dims.iter().zip(reps).map(|(d, r)| d * r).collect();
    let n: usize = out.iter().product();
    let (si, so) = (strides(dims), strides(&out));
    let v = (0..n)
        .map(|flat| {
            let src: usize = (0..out.len())
                .map(|a| ((flat / so[a]) % out[a] % dims[a]) * si[a])
                .sum();
            data[src]
        })
        .collect();
    (out, v)
}

fn values(n: usize) -> Vec<f32> {
    let special = [f32::NAN, -0.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40];
    (0..n)
        .map(|i| special.get(i % 11).copied().unwrap_or(i as f32 * 0.5 - 3.0))
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn gather_matches_host_on_every_axis() {
    let dims = [3usize, 4, 5];
    let data = values(60);
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &data, &dims).unwrap();
        for axis in 0..3 {
            let n = dims[axis] as i64;
            let idx: Vec<i64> = vec![n - 1, 0, -1, -n, 1];
            let want = host_gather(&data, &dims, axis, &idx);
            // i64 indices of shape [5] and [1, 5], and the same as i32.
            for ishape in [vec![5usize], vec![1, 5]] {
                let it = Tensor::from_slice(&kit, &idx, &ishape).unwrap();
                for ix in [it.clone(), it.to_dtype(DType::I32).unwrap()] {
                    for ax in [axis as i64, axis as i64 - 3] {
                        let g = t.gather(ax, &ix).unwrap();
                        let mut d = dims[..axis].to_vec();
                        d.extend_from_slice(&ishape);
                        d.extend_from_slice(&dims[axis + 1..]);
                        assert_eq!(g.dims(), &d[..]);
                        assert_eq!(bits(&g.to_vec::<f32>().unwrap()), bits(&want));
                    }
                }
            }
        }
        // A view (transposed) gathers its own elements.
        let tt = t.transpose(0, 2).unwrap();
        let host_t = tt.contiguous().unwrap().to_vec::<f32>().unwrap();
        let idx = Tensor::from_slice(&kit, &[2i64, 2, 0], &[3]).unwrap();
        let g = tt.gather(1, &idx).unwrap();
        assert_eq!(
            bits(&g.to_vec::<f32>().unwrap()),
            bits(&host_gather(&host_t, &[5, 4, 3], 1, &[2, 2, 0]))
        );
        // Empty indices give an empty axis.
        let none = Tensor::from_slice::<i64>(&kit, &[], &[0]).unwrap();
        assert_eq!(t.gather(1, &none).unwrap().dims(), &[3, 0, 5]);
        // Rank-0 indices drop the axis.
        let one = Tensor::from_slice(&kit, &[3i64], &[]).unwrap();
        let g = t.gather(2, &one).unwrap();
        assert_eq!(g.dims(), &[3, 4]);
        assert_eq!(
            bits(&g.to_vec::<f32>().unwrap()),
            bits(&host_gather(&data, &dims, 2, &[3]))
        );
    }
}

#[test]
fn gather_errors_name_what_is_wrong() {
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &values(6), &[2, 3]).unwrap();
        let bad = Tensor::from_slice(&kit, &[3i64], &[1]).unwrap();
        match t.gather(0, &bad) {
            Err(Error::IndexOutOfRange {
                index: 3,
                axis_len: 2,
                ..
            }) => {}
            other => panic!("want IndexOutOfRange, got {other:?}"),
        }
        let neg = Tensor::from_slice(&kit, &[-4i64], &[1]).unwrap();
        assert!(matches!(
            t.gather(1, &neg),
            Err(Error::IndexOutOfRange { .. })
        ));
        let ok = Tensor::from_slice(&kit, &[0i64], &[1]).unwrap();
        assert!(matches!(
            t.gather(2, &ok),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.gather(-3, &ok),
            Err(Error::InvalidArgument { .. })
        ));
        let fidx = Tensor::from_slice(&kit, &[0.0f32], &[1]).unwrap();
        assert!(matches!(t.gather(0, &fidx), Err(Error::DType { .. })));
        let s = Tensor::from_slice(&kit, &[1.0f32], &[]).unwrap();
        assert!(s.gather(0, &ok).is_err());
        assert!(matches!(s.embedding(&ok), Err(Error::Shape { .. })));
    }
}

#[test]
fn embedding_looks_up_rows() {
    for kit in kits() {
        let table: Vec<f32> = values(4 * 3);
        let w = Tensor::from_slice(&kit, &table, &[4, 3]).unwrap();
        let ids = Tensor::from_slice(&kit, &[3i32, 0, 0, 2, -1, 1], &[2, 3]).unwrap();
        let e = w.embedding(&ids).unwrap();
        assert_eq!(e.dims(), &[2, 3, 3]);
        let want = host_gather(&table, &[4, 3], 0, &[3, 0, 0, 2, -1, 1]);
        assert_eq!(bits(&e.to_vec::<f32>().unwrap()), bits(&want));
    }
}

#[test]
fn tile_matches_numpy_tile() {
    for kit in kits() {
        for (dims, reps) in [
            (vec![2usize, 3], vec![2usize, 3]),
            (vec![1, 4, 2], vec![3, 1, 2]),
            (vec![3], vec![0]),
            (vec![0, 2], vec![4, 2]),
            (vec![], vec![]),
            (vec![5], vec![1]),
        ] {
            let n: usize = dims.iter().product();
            let data = values(n);
            let t = Tensor::from_slice(&kit, &data, &dims).unwrap();
            let (od, want) = host_tile(&data, &dims, &reps);
            let got = t.tile(&reps).unwrap();
            assert_eq!(got.dims(), &od[..], "{dims:?} x {reps:?}");
            assert_eq!(bits(&got.to_vec::<f32>().unwrap()), bits(&want));
        }
        // A transposed view tiles its own elements; integers keep their bits.
        let t = Tensor::from_slice(&kit, &[1i64, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
        let g = t.t().unwrap().tile(&[1, 2]).unwrap();
        assert_eq!(
            g.to_vec2::<i64>().unwrap(),
            [[1, 4, 1, 4], [2, 5, 2, 5], [3, 6, 3, 6]]
        );
        assert!(matches!(t.tile(&[2]), Err(Error::Shape { .. })));
        assert!(t.tile(&[usize::MAX, 2]).is_err());
    }
}
