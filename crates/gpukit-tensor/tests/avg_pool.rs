//! Tensor::avg_pool (ONNX AveragePool) on cpu and ptx-emu against host loops that run
//! the same order of operations (each window's taps in row-major order added to `+0.0`
//! one at a time, padding as `+0.0`, then one division by the count), bit for bit: 1-D
//! and 2-D, explicit and SAME pads, strides, dilations, ceil_mode, both count modes,
//! f64 and f16 (computed in f32), NaN / ±inf in windows, empty batches, and the errors.

mod common;

use common::{kits, same_f32};
use gpukit::half::f16;
use gpukit::{DType, Error, Tensor};
use gpukit_tensor::{Padding, PoolOptions};

/// One 2-D case: the host's average pooling of `x` (`[n, c, h, w]`).
#[allow(clippy::too_many_arguments)]
fn host(
    x: &[f32],
    [n, c, h, w]: [usize; 4],
    [kh, kw]: [usize; 2],
    [sh, sw]: [usize; 2],
    [dh, dw]: [usize; 2],
    // [top, left, bottom, right] asked for, and the bottom / right ceil extension.
    pads: [usize; 4],
    ext: [usize; 2],
    include: bool,
) -> (Vec<usize>, Vec<f32>) {
    let (pt, pl) = (pads[0] as i64, pads[1] as i64);
    let hp = h + pads[0] + pads[2] + ext[0];
    let wp = w + pads[1] + pads[3] + ext[1];
    let oh = (hp - (kh - 1) * dh - 1) / sh + 1;
    let ow = (wp - (kw - 1) * dw - 1) / sw + 1;
    let mut y = Vec::new();
    for b in 0..n * c {
        for oy in 0..oh {
            for ox in 0..ow {
                let (mut acc, mut count) = (0.0f32, 0.0f32);
                for ky in 0..kh {
                    for kx in 0..kw {
                        let iy = (oy * sh + ky * dh) as i64 - pt;
                        let ix = (ox * sw + kx * dw) as i64 - pl;
                        let inside = iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w;
                        let v = if inside {
                            x[(b * h + iy as usize) * w + ix as usize]
                        } else {
                            0.0
                        };
                        acc += v;
                        // Counted: inside the input, or (include) inside the explicit pads.
                        let in_pads = iy >= -pt
                            && ix >= -pl
                            && iy < (h + pads[2]) as i64
                            && ix < (w + pads[3]) as i64;
                        if inside || (include && in_pads) {
                            count += 1.0;
                        }
                    }
                }
                y.push(acc / count);
            }
        }
    }
    (vec![n, c, oh, ow], y)
}

fn data(len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| ((i * 29 % 53) as f32 - 26.0) * 0.173)
        .collect()
}

#[test]
fn avg_pool_2d_matches_host_loops() {
    let dims = [2usize, 3, 7, 6];
    let mut x = data(dims.iter().product());
    x[5] = f32::NAN;
    x[40] = f32::INFINITY;
    x[41] = -0.0;
    // (kernel, strides, dilations, pads asked, ceil_mode).
    type Case = ([usize; 2], [usize; 2], [usize; 2], [usize; 4], bool);
    let cases: [Case; 5] = [
        ([3, 3], [1, 1], [1, 1], [1, 1, 1, 1], false),
        ([2, 3], [2, 2], [1, 1], [0, 1, 1, 0], true),
        ([3, 2], [2, 3], [2, 1], [1, 0, 0, 1], true),
        ([1, 1], [1, 1], [1, 1], [0, 0, 0, 0], false),
        ([4, 4], [3, 3], [1, 1], [2, 2, 2, 2], true),
    ];
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &dims).unwrap();
        for (k, s, d, pads, ceil) in cases {
            let o = PoolOptions {
                kernel: k.to_vec(),
                strides: s.to_vec(),
                dilations: d.to_vec(),
                padding: Padding::Explicit(pads.to_vec()),
                ceil_mode: ceil,
            };
            // The ceil extension the options imply: the max_pool geometry's.
            let plain = PoolOptions {
                ceil_mode: false,
                ..o.clone()
            };
            for include in [false, true] {
                let got = t.avg_pool(&o, include).unwrap();
                let floor = t.avg_pool(&plain, include).unwrap();
                let ext = [
                    extension(7, k[0], s[0], d[0], pads[0], pads[2], ceil),
                    extension(6, k[1], s[1], d[1], pads[1], pads[3], ceil),
                ];
                let (od, want) = host(&x, dims, k, s, d, pads, ext, include);
                assert_eq!(
                    got.dims(),
                    od.as_slice(),
                    "{k:?} {s:?} {d:?} {pads:?} {ceil}"
                );
                let g = got.to_vec::<f32>().unwrap();
                assert!(
                    same_f32(&g, &want),
                    "{k:?} {s:?} {d:?} {pads:?} ceil {ceil} include {include}:\n{g:?}\n{want:?}"
                );
                assert!(floor.dims()[2] <= od[2] && floor.dims()[3] <= od[3]);
            }
        }
    }
}

/// ONNX's ceil_mode extension of the end padding (a window must start inside the
/// input or the begin padding).
fn extension(len: usize, k: usize, s: usize, d: usize, pb: usize, pe: usize, ceil: bool) -> usize {
    if !ceil {
        return 0;
    }
    let span = (k - 1) * d + 1;
    let padded = len + pb + pe;
    let mut out = (padded - span).div_ceil(s) + 1;
    if (out - 1) * s >= len + pb {
        out -= 1;
    }
    ((out - 1) * s + span).saturating_sub(padded)
}

#[test]
fn avg_pool_1d_same_padding_f64_f16_and_empty() {
    for kit in kits() {
        // 1-D SAME_UPPER, kernel 3: pads [1, 1] on 5 elements.
        let x = [1.0f32, 2.0, 4.0, 8.0, 16.0];
        let t = Tensor::from_slice(&kit, &x, &[1, 1, 5]).unwrap();
        let o = PoolOptions {
            kernel: vec![3],
            padding: Padding::SameUpper,
            ..Default::default()
        };
        let got = t.avg_pool(&o, false).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [1.5, 7.0 / 3.0, 14.0 / 3.0, 28.0 / 3.0, 12.0]);
        let got = t.avg_pool(&o, true).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [1.0, 7.0 / 3.0, 14.0 / 3.0, 28.0 / 3.0, 8.0]);
        // f64 keeps its dtype; f16 is averaged in f32 and rounded once.
        let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let td = Tensor::from_slice(&kit, &xd, &[1, 1, 5]).unwrap();
        let got = td.avg_pool(&o, false).unwrap();
        assert_eq!(got.dtype(), DType::F64);
        assert_eq!(got.to_vec::<f64>().unwrap()[1], 7.0 / 3.0);
        let xh: Vec<f16> = [2049.0f32, 1.0, 1.0]
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect();
        let th = Tensor::from_slice(&kit, &xh, &[1, 1, 3]).unwrap();
        let o3 = PoolOptions {
            kernel: vec![3],
            ..Default::default()
        };
        let got = th.avg_pool(&o3, false).unwrap();
        assert_eq!(got.dtype(), DType::F16);
        // f16(2049) = 2048; (2048 + 1 + 1) / 3 in f32, rounded once to f16.
        assert_eq!(got.to_vec::<f16>().unwrap()[0], f16::from_f32(2050.0 / 3.0));
        // An empty batch gives an empty result of the right shape.
        let e = Tensor::zeros(&kit, &[0, 2, 4, 4], DType::F32).unwrap();
        let o22 = PoolOptions {
            kernel: vec![2, 2],
            ..Default::default()
        };
        assert_eq!(e.avg_pool(&o22, true).unwrap().dims(), [0, 2, 3, 3]);
    }
}

#[test]
fn avg_pool_errors_name_avg_pool() {
    let kit = gpukit::open("cpu").unwrap();
    let t = Tensor::from_slice(&kit, &[1.0f32; 8], &[1, 2, 4]).unwrap();
    let o = |kernel: Vec<usize>, pads: Vec<usize>| PoolOptions {
        kernel,
        padding: Padding::Explicit(pads),
        ..Default::default()
    };
    let r = t.avg_pool(&o(vec![2, 2], vec![]), false);
    assert!(
        matches!(r, Err(Error::InvalidArgument { ref op, .. }) if op == "avg_pool"),
        "{r:?}"
    );
    let r = t.avg_pool(&o(vec![0], vec![]), false);
    assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
    let r = t.avg_pool(&o(vec![9], vec![]), false);
    assert!(
        matches!(r, Err(Error::Shape { ref op, .. }) if op == "avg_pool"),
        "{r:?}"
    );
    // A window wholly in the padding.
    let r = t.avg_pool(&o(vec![2], vec![3, 0]), true);
    assert!(
        matches!(r, Err(Error::InvalidArgument { ref op, .. }) if op == "avg_pool"),
        "{r:?}"
    );
    let i = Tensor::from_slice(&kit, &[1i32; 8], &[1, 2, 4]).unwrap();
    let r = i.avg_pool(&o(vec![2], vec![]), false);
    assert!(matches!(r, Err(Error::DType { .. })), "{r:?}");
    let r2 = Tensor::from_slice(&kit, &[1.0f32; 4], &[2, 2]).unwrap();
    let r = r2.avg_pool(&o(vec![2], vec![]), false);
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
}
