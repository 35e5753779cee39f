//! `Tensor::gemm` (ONNX Gemm: trans_a, trans_b, C broadcast) and the no-copy batch
//! broadcasting of `Tensor::matmul`, against the raw ops and a host fma chain, on the
//! CPU and the PTX emulator.

mod common;

use common::*;
use gpukit::ops::{self, GemmC, GemmParams};
use gpukit::{DType, Error, Tensor};
use gpukit_tensor::GemmOpts;

/// ONNX Gemm on the host: per output the fma chain over t ascending from +0.0, then
/// `alpha·acc`, then `fma(beta, c, ·)`; C read through `c_at`.
#[allow(clippy::too_many_arguments)]
fn host_gemm(
    a: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
    ta: bool,
    tb: bool,
    c_at: &dyn Fn(usize, usize) -> f32,
    alpha: f32,
    beta: f32,
) -> Vec<f32> {
    let mut y = Vec::new();
    for r in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for t in 0..k {
                let av = if ta { a[t * m + r] } else { a[r * k + t] };
                let bv = if tb { b[j * k + t] } else { b[t * n + j] };
                acc = av.mul_add(bv, acc);
            }
            y.push(beta.mul_add(c_at(r, j), alpha * acc));
        }
    }
    y
}

#[test]
fn gemm_transposes_and_broadcast_c() {
    let (m, k, n) = (3, 5, 4);
    let a = finite(m * k, 7);
    let b = finite(k * n, 8);
    let cfull = finite(m * n, 9);
    for kit in &kits() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let ad: &[usize] = if ta { &[k, m] } else { &[m, k] };
            let bd: &[usize] = if tb { &[n, k] } else { &[k, n] };
            let tav = Tensor::from_slice(kit, &a, ad).unwrap();
            let tbv = Tensor::from_slice(kit, &b, bd).unwrap();
            let opts = GemmOpts {
                alpha: 0.5,
                beta: -1.5,
                trans_a: ta,
                trans_b: tb,
            };
            // C of each ONNX shape: full, row [n] and [1, n], column [m, 1], scalars.
            let shapes: [&[usize]; 7] = [&[m, n], &[n], &[1, n], &[m, 1], &[], &[1], &[1, 1]];
            for cd in shapes {
                let len: usize = cd.iter().product();
                let c = &cfull[..len];
                let tc = Tensor::from_slice(kit, c, cd).unwrap();
                let got = tav.gemm(&tbv, Some(&tc), opts).unwrap();
                let layout = GemmC::from_shape(cd, m, n).unwrap();
                let (rs, cs) = layout.strides(n);
                let want = host_gemm(
                    &a,
                    &b,
                    (m, k, n),
                    ta,
                    tb,
                    &|r, j| c[r * rs + j * cs],
                    0.5,
                    -1.5,
                );
                check_f32(&got, &[m, n], &want);
                // The same bits as the raw op.
                let y = kit.alloc(DType::F32, m * n).unwrap();
                let p = GemmParams {
                    alpha: 0.5,
                    beta: -1.5,
                    trans_a: ta,
                    trans_b: tb,
                    c_layout: layout,
                    ..GemmParams::new(m, k, n)
                };
                let (ab, bb, cb) = (
                    kit.upload(&a).unwrap(),
                    kit.upload(&b).unwrap(),
                    kit.upload(c).unwrap(),
                );
                ops::gemm(kit, &y, &ab, &bb, Some(&cb), None, &p).unwrap();
                assert!(same_f32(
                    &got.to_vec::<f32>().unwrap(),
                    &y.download::<f32>().unwrap()
                ));
            }
            // No C: alpha·acc.
            let got = tav.gemm(&tbv, None, opts).unwrap();
            let want = host_gemm(&a, &b, (m, k, n), ta, tb, &|_, _| 0.0, 0.5, 0.0);
            check_f32(&got, &[m, n], &want);
        }
        // Errors name the op and the shapes.
        let ta = Tensor::from_slice(kit, &a, &[m, k]).unwrap();
        let tb = Tensor::from_slice(kit, &b, &[k, n]).unwrap();
        let bad_c = Tensor::from_slice(kit, &cfull[..2], &[2]).unwrap();
        let msg = err_text(ta.gemm(&tb, Some(&bad_c), GemmOpts::default()));
        assert!(
            msg.contains("gemm") && msg.contains("[2]") && msg.contains("broadcast"),
            "{msg}"
        );
        let opts = GemmOpts {
            trans_a: true,
            ..GemmOpts::default()
        };
        let msg = err_text(ta.gemm(&tb, None, opts));
        assert!(msg.contains("inner dims"), "{msg}");
        let v = Tensor::from_slice(kit, &a[..k], &[k]).unwrap();
        assert!(matches!(
            v.gemm(&tb, None, GemmOpts::default()),
            Err(Error::Shape { .. })
        ));
    }
}

#[test]
fn matmul_broadcasts_both_sides_without_expanding() {
    // [2, 1, m, k] @ [1, 3, k, n] and [m, k] @ [2, 3, k, n] against matmul per matrix.
    let (m, k, n) = (3, 4, 2);
    let a = finite(2 * m * k, 11);
    let b = finite(6 * k * n, 12);
    for kit in &kits() {
        let ta = Tensor::from_slice(kit, &a, &[2, 1, m, k]).unwrap();
        let tb = Tensor::from_slice(kit, &b[..3 * k * n], &[1, 3, k, n]).unwrap();
        let r = ta.matmul(&tb).unwrap();
        let mut want = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                let x = Tensor::from_slice(kit, &a[i * m * k..][..m * k], &[m, k]).unwrap();
                let y = Tensor::from_slice(kit, &b[j * k * n..][..k * n], &[k, n]).unwrap();
                want.extend(x.matmul(&y).unwrap().to_vec::<f32>().unwrap());
            }
        }
        check_f32(&r, &[2, 3, m, n], &want);
        let t2 = Tensor::from_slice(kit, &a[..m * k], &[m, k]).unwrap();
        let tb = Tensor::from_slice(kit, &b, &[2, 3, k, n]).unwrap();
        let r = t2.matmul(&tb).unwrap();
        let mut want = Vec::new();
        for j in 0..6 {
            let y = Tensor::from_slice(kit, &b[j * k * n..][..k * n], &[k, n]).unwrap();
            want.extend(t2.matmul(&y).unwrap().to_vec::<f32>().unwrap());
        }
        check_f32(&r, &[2, 3, m, n], &want);
        // 1-D operands against a batch: [k] @ [2, 3, k, n] -> [2, 3, n].
        let v = Tensor::from_slice(kit, &a[..k], &[k]).unwrap();
        let r = v.matmul(&tb).unwrap();
        assert_eq!(r.dims(), &[2, 3, n]);
        // Empty batch and k = 0.
        let tb13 = Tensor::from_slice(kit, &b[..3 * k * n], &[1, 3, k, n]).unwrap();
        let e = Tensor::from_slice(kit, &[] as &[f32], &[0, 1, m, k]).unwrap();
        assert_eq!(e.matmul(&tb13).unwrap().dims(), &[0, 3, m, n]);
        let e = Tensor::from_slice(kit, &[] as &[f32], &[2, 1, 0, k]).unwrap();
        assert_eq!(e.matmul(&tb13).unwrap().dims(), &[2, 3, 0, n]);
        let z1 = Tensor::from_slice(kit, &[] as &[f32], &[2, 1, m, 0]).unwrap();
        let z2 = Tensor::from_slice(kit, &[] as &[f32], &[3, 0, n]).unwrap();
        check_f32(
            &z1.matmul(&z2).unwrap(),
            &[2, 3, m, n],
            &vec![0.0; 6 * m * n],
        );
    }
}
