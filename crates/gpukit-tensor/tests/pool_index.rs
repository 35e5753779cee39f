//! `Tensor::max_pool_with_indices` (ONNX MaxPool with `Indices`) against a host loop
//! written here: 1-D and 2-D, padding, strides, dilation, ceil mode, both storage
//! orders, a transposed view as input; values equal `max_pool`'s; cpu and ptx-emu
//! bit-identical.

mod common;

use common::*;
use gpukit::{DType, Tensor};
use gpukit_tensor::{Padding, PoolOptions};

/// Host indices for NCHW `x`: per output, the first in-image tap (row-major window
/// order) holding the window maximum (NaN wins; +0 over -0), flattened.
fn host(
    x: &[f32],
    d: [usize; 4],
    k: [usize; 2],
    s: [usize; 2],
    pads: [usize; 2],
    out: [usize; 2],
    cm: bool,
) -> Vec<i64> {
    let [n, c, h, w] = d;
    let mut v = Vec::new();
    for plane in 0..n * c {
        for oy in 0..out[0] {
            for ox in 0..out[1] {
                let taps: Vec<(usize, usize)> = (0..k[0])
                    .flat_map(|ky| (0..k[1]).map(move |kx| (ky, kx)))
                    .filter_map(|(ky, kx)| {
                        let iy = (oy * s[0] + ky).checked_sub(pads[0]).filter(|&v| v < h)?;
                        let ix = (ox * s[1] + kx).checked_sub(pads[1]).filter(|&v| v < w)?;
                        Some((iy, ix))
                    })
                    .collect();
                let at = |&(iy, ix): &(usize, usize)| x[(plane * h + iy) * w + ix];
                let best = taps
                    .iter()
                    .copied()
                    .reduce(|b, t| {
                        let (vb, vt) = (at(&b), at(&t));
                        let wins = !vb.is_nan()
                            && (vt.is_nan()
                                || vt > vb
                                || (vt == 0.0
                                    && vb == 0.0
                                    && vb.is_sign_negative()
                                    && !vt.is_sign_negative()));
                        if wins { t } else { b }
                    })
                    .unwrap();
                let (iy, ix) = best;
                v.push(if cm {
                    ((plane * w + ix) * h + iy) as i64
                } else {
                    ((plane * h + iy) * w + ix) as i64
                });
            }
        }
    }
    v
}

#[test]
fn indices_match_the_host_in_2d_and_1d() {
    let d = [2usize, 3, 5, 6];
    let mut x: Vec<f32> = values(180, 31).iter().map(|v| (v * 2.0).round()).collect();
    x[7] = -0.0;
    x[8] = 0.0;
    let opts = PoolOptions {
        kernel: vec![3, 2],
        strides: vec![2, 2],
        padding: Padding::Explicit(vec![1, 1, 1, 1]),
        ..PoolOptions::default()
    };
    let mut per_kit = Vec::new();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &d).unwrap();
        for cm in [false, true] {
            let (v, i) = t.max_pool_with_indices(&opts, cm).unwrap();
            assert_eq!(i.dtype(), DType::I64);
            assert_eq!(i.dims(), v.dims());
            assert!(same_f32(
                &v.to_vec::<f32>().unwrap(),
                &t.max_pool(&opts).unwrap().to_vec::<f32>().unwrap()
            ));
            let od = [v.dims()[2], v.dims()[3]];
            let got = i.to_vec::<i64>().unwrap();
            assert_eq!(
                got,
                host(&x, d, [3, 2], [2, 2], [1, 1], od, cm),
                "column major {cm}"
            );
            per_kit.push(got);
        }
        // 1-D: [n, c, w] as h = 1; both orders agree there.
        let t1 = Tensor::from_slice(&kit, &x[..60], &[2, 3, 10]).unwrap();
        let o1 = PoolOptions {
            kernel: vec![3],
            strides: vec![2],
            ..PoolOptions::default()
        };
        let (v1, i1) = t1.max_pool_with_indices(&o1, false).unwrap();
        assert_eq!(v1.dims(), &[2, 3, 4]);
        let want = host(
            &x[..60],
            [2, 3, 1, 10],
            [1, 3],
            [1, 2],
            [0, 0],
            [1, 4],
            false,
        );
        assert_eq!(i1.to_vec::<i64>().unwrap(), want);
        assert_eq!(
            t1.max_pool_with_indices(&o1, true)
                .unwrap()
                .1
                .to_vec::<i64>()
                .unwrap(),
            want
        );
        // A permuted view is pooled as its logical layout (indices into that layout).
        let tv = t.permute(&[0, 1, 3, 2]).unwrap();
        let (_, iv) = tv.max_pool_with_indices(&opts, false).unwrap();
        let (_, ic) = tv
            .contiguous()
            .unwrap()
            .max_pool_with_indices(&opts, false)
            .unwrap();
        assert_eq!(iv.to_vec::<i64>().unwrap(), ic.to_vec::<i64>().unwrap());
        // Errors as max_pool's.
        assert!(
            Tensor::from_slice(&kit, &x[..6], &[6])
                .unwrap()
                .max_pool_with_indices(&opts, false)
                .is_err()
        );
        let xi = Tensor::from_slice(&kit, &[1i64; 180], &d).unwrap();
        assert!(xi.max_pool_with_indices(&opts, false).is_err());
    }
    let n = per_kit.len() / 2;
    assert_eq!(per_kit[..n], per_kit[n..], "cpu and ptx-emu differ");
}
