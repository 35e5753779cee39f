//! `Tensor::topk` against a host oracle written here (a stable sort of each line along
//! the axis, NaN largest), on every axis (negative too), views, integers, f16, `k = 0`,
//! the whole axis, and the errors; cpu and ptx-emu bit-identical.

mod common;

use common::*;
use gpukit::half::f16;
use gpukit::{DType, Tensor};

/// Host top-k of f32 `x` (`dims`) along axis `ax`: for each line, positions sorted
/// stably by value (descending when `largest`, NaN above every number), first `k`.
fn host_topk(
    x: &[f32],
    dims: &[usize],
    ax: usize,
    k: usize,
    largest: bool,
) -> (Vec<f32>, Vec<i64>) {
    let mut odims = dims.to_vec();
    odims[ax] = k;
    let n: usize = odims.iter().product();
    let (mut v, mut ix) = (vec![0.0f32; n], vec![0i64; n]);
    for (e, c) in coords(&odims).iter().enumerate() {
        let r = c[ax];
        let mut line: Vec<usize> = (0..dims[ax]).collect();
        let at = |p: usize| {
            let mut cc = c.clone();
            cc[ax] = p;
            x[offset(&cc, dims)]
        };
        // NaN above every number (two NaNs equal); -0 == +0.
        line.sort_by(|&a, &b| {
            let (va, vb) = (at(a), at(b));
            let o = match (va.is_nan(), vb.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (na, nb) if na || nb => na.cmp(&nb),
                _ => va.partial_cmp(&vb).unwrap(),
            };
            if largest { o.reverse() } else { o }
        });
        v[e] = at(line[r]);
        ix[e] = line[r] as i64;
    }
    (v, ix)
}

#[test]
fn topk_matches_a_stable_sort_on_every_axis() {
    let dims = [3usize, 5, 4];
    let mut x = values(60, 21);
    // Exact ties, signed zeros, NaN and infinities.
    for (e, v) in [
        (0, 1.5),
        (5, 1.5),
        (9, -0.0),
        (13, 0.0),
        (17, f32::NAN),
        (22, f32::INFINITY),
    ] {
        x[e] = v;
    }
    for (e, src) in [(30, 31), (44, 40), (47, 43)] {
        x[e] = x[src];
    }
    let mut per_kit = Vec::new();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &dims).unwrap();
        for axis in [-3i64, -2, -1, 0, 1, 2] {
            let ax = axis.rem_euclid(3) as usize;
            for k in [0, 1, 2, dims[ax]] {
                for largest in [true, false] {
                    let (v, i) = t.topk(k, axis, largest).unwrap();
                    let mut od = dims.to_vec();
                    od[ax] = k;
                    let (wv, wi) = host_topk(&x, &dims, ax, k, largest);
                    check_f32(&v, &od, &wv);
                    assert_eq!(i.dtype(), DType::I64);
                    assert_eq!(i.dims(), &od[..]);
                    assert_eq!(
                        i.to_vec::<i64>().unwrap(),
                        wi,
                        "axis {axis} k {k} {largest}"
                    );
                    per_kit.push((v.to_vec::<f32>().unwrap(), i.to_vec::<i64>().unwrap()));
                }
            }
        }
        // A transposed view is read through its layout.
        let tv = t.permute(&[2, 0, 1]).unwrap();
        let (v, _) = tv.topk(2, 0, true).unwrap();
        let (w, _) = t.topk(2, 2, true).unwrap();
        assert!(same_f32(
            &v.to_vec::<f32>().unwrap(),
            &w.permute(&[2, 0, 1])
                .unwrap()
                .contiguous()
                .unwrap()
                .to_vec::<f32>()
                .unwrap()
        ));
    }
    let n = per_kit.len() / 2;
    for (a, b) in per_kit[..n].iter().zip(&per_kit[n..]) {
        assert!(same_f32(&a.0, &b.0) && a.1 == b.1, "cpu and ptx-emu differ");
    }
}

#[test]
fn topk_integers_f16_rank0_and_errors() {
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &[3i32, -7, 3, i32::MAX, i32::MIN, 0], &[6]).unwrap();
        let (v, i) = t.topk(4, 0, true).unwrap();
        assert_eq!(v.to_vec::<i32>().unwrap(), [i32::MAX, 3, 3, 0]);
        assert_eq!(i.to_vec::<i64>().unwrap(), [3, 0, 2, 5]);
        let (v, i) = t.topk(2, -1, false).unwrap();
        assert_eq!(v.to_vec::<i32>().unwrap(), [i32::MIN, -7]);
        assert_eq!(i.to_vec::<i64>().unwrap(), [4, 1]);
        let h: Vec<f16> = [0.5f32, -1.0, 2.0, 0.5]
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect();
        let th = Tensor::from_slice(&kit, &h, &[2, 2]).unwrap();
        let (v, i) = th.topk(1, 0, true).unwrap();
        assert_eq!(v.to_vec::<f16>().unwrap(), [h[2], h[3]]);
        assert_eq!(i.to_vec::<i64>().unwrap(), [1, 1]);
        // Errors name the op, k and the shape; rank 0 has no axis.
        let msg = err_text(t.topk(7, 0, true).map(|r| r.0));
        assert!(
            msg.contains("topk") && msg.contains("k = 7") && msg.contains("[6]"),
            "{msg}"
        );
        let msg = err_text(t.topk(1, 1, true).map(|r| r.0));
        assert!(msg.contains("topk"), "{msg}");
        let s = Tensor::from_slice(&kit, &[1.0f32], &[]).unwrap();
        assert!(s.topk(1, 0, true).is_err());
        // An empty axis with k = 0, and an empty outer extent.
        let e = Tensor::from_slice(&kit, &[0.0f32; 0], &[2, 0]).unwrap();
        let (v, i) = e.topk(0, 1, true).unwrap();
        assert_eq!((v.dims(), i.dims()), (&[2, 0][..], &[2, 0][..]));
        let e = Tensor::from_slice(&kit, &[0.0f32; 0], &[0, 3]).unwrap();
        assert_eq!(e.topk(2, 1, false).unwrap().0.dims(), &[0, 2]);
    }
}
