//! Tensor::gather_elements / scatter_elements (ONNX GatherElements, ScatterElements) on
//! cpu and ptx-emu against host loops over coordinates: every axis incl. negative ones,
//! i64 and i32 indices, negative indices, indices smaller than data on other axes
//! (gather), transposed views, empty tensors, duplicates under every reduction, NaN /
//! -0.0 bits, and the errors (rank, shapes, dtypes, out-of-range indices).

mod common;

use common::{coords_of, kits, offset};
use gpukit::half::{bf16, f16};
use gpukit::{DType, Error, Tensor};
use gpukit_tensor::ScatterReduction;

fn host_gather(x: &[f32], xd: &[usize], idx: &[i64], id: &[usize], ax: usize) -> Vec<f32> {
    (0..idx.len())
        .map(|e| {
            let mut c = coords_of(e, id);
            let v = idx[e];
            c[ax] = if v < 0 {
                (v + xd[ax] as i64) as usize
            } else {
                v as usize
            };
            x[offset(&c, xd)]
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter()
        .map(|x| if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() })
        .collect()
}

const VALS: [f32; 6] = [1.5, f32::NAN, -0.0, f32::INFINITY, -2.0, 1e-45];

#[test]
fn gather_elements_matches_host_loops_on_every_axis() {
    let xd = [3usize, 4, 2];
    let x: Vec<f32> = (0..24)
        .map(|i| VALS[i % 6] + if i % 6 == 0 { i as f32 } else { 0.0 })
        .collect();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &xd).unwrap();
        for axis in [-3i64, -2, -1, 0, 1, 2] {
            let ax = ((axis + 3) % 3) as usize;
            // Indices: the data's shape but 5 along the axis, and smaller on axis 0 when
            // it is not the gather axis (the leading part of data is read).
            let mut id = xd.to_vec();
            id[ax] = 5;
            if ax != 0 {
                id[0] = 2;
            }
            let n: usize = id.iter().product();
            let len = xd[ax] as i64;
            let idx: Vec<i64> = (0..n as i64).map(|i| (i * 7 % (2 * len)) - len).collect();
            let want = host_gather(&x, &xd, &idx, &id, ax);
            for dt in [DType::I64, DType::I32] {
                let it = Tensor::from_slice(&kit, &idx, &id)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap();
                let got = t.gather_elements(axis, &it).unwrap();
                assert_eq!(got.dims(), id, "axis {axis}");
                assert_eq!(
                    bits(&got.to_vec::<f32>().unwrap()),
                    bits(&want),
                    "axis {axis} {dt}"
                );
            }
        }
        // A transposed view as data: the view's logical layout is used.
        let tt = t.permute(&[2, 0, 1]).unwrap();
        let td = [2usize, 3, 4];
        let tx = tt.contiguous().unwrap().to_vec::<f32>().unwrap();
        let idx = vec![
            -1i64, 0, 2, 1, 0, 0, 2, 1, -2, -3, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2,
        ];
        let it = Tensor::from_slice(&kit, &idx, &td).unwrap();
        let got = tt.gather_elements(1, &it).unwrap();
        assert_eq!(
            bits(&got.to_vec::<f32>().unwrap()),
            bits(&host_gather(&tx, &td, &idx, &td, 1))
        );
        // Empty indices give an empty result of their shape.
        let e = Tensor::from_slice::<i64>(&kit, &[], &[3, 0, 2]).unwrap();
        assert_eq!(t.gather_elements(1, &e).unwrap().dims(), [3, 0, 2]);
    }
}

#[test]
fn gather_elements_copies_bits_in_every_dtype() {
    for kit in kits() {
        let idx = Tensor::from_slice(&kit, &[1i64, 0, -1, 0], &[2, 2]).unwrap();
        let h: [u16; 4] = [0x7e01, 0x8000, 0xfc00, 0x0001];
        let want: [u16; 4] = [h[1], h[0], h[3], h[2]];
        let f: Vec<f16> = h.iter().map(|&b| f16::from_bits(b)).collect();
        let got = Tensor::from_slice(&kit, &f, &[2, 2])
            .unwrap()
            .gather_elements(1, &idx)
            .unwrap();
        let got: Vec<u16> = got
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(got, want);
        let b: Vec<bf16> = h.iter().map(|&b| bf16::from_bits(b)).collect();
        let got = Tensor::from_slice(&kit, &b, &[2, 2])
            .unwrap()
            .gather_elements(1, &idx)
            .unwrap();
        let got: Vec<u16> = got
            .to_vec::<bf16>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(got, want);
        let i: Vec<i64> = vec![i64::MIN, -1, i64::MAX, 0];
        let t = Tensor::from_slice(&kit, &i, &[2, 2]).unwrap();
        assert_eq!(
            t.gather_elements(1, &idx).unwrap().to_vec::<i64>().unwrap(),
            [-1, i64::MIN, 0, i64::MAX]
        );
        let f: Vec<f64> = vec![f64::from_bits(0x7ff0_0000_0000_0001), -0.0, 1.0, 2.0];
        let t = Tensor::from_slice(&kit, &f, &[2, 2]).unwrap();
        let got = t.gather_elements(1, &idx).unwrap().to_vec::<f64>().unwrap();
        let got: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
        assert_eq!(
            got,
            [
                (-0.0f64).to_bits(),
                0x7ff0_0000_0000_0001,
                2.0f64.to_bits(),
                1.0f64.to_bits()
            ]
        );
    }
}

fn host_scatter(
    x: &[f32],
    xd: &[usize],
    idx: &[i64],
    upd: &[f32],
    id: &[usize],
    ax: usize,
    red: ScatterReduction,
) -> Vec<f32> {
    let mut y = x.to_vec();
    for e in 0..idx.len() {
        let mut c = coords_of(e, id);
        let v = idx[e];
        c[ax] = if v < 0 {
            (v + xd[ax] as i64) as usize
        } else {
            v as usize
        };
        let t = offset(&c, xd);
        let (a, b) = (y[t], upd[e]);
        y[t] = match red {
            ScatterReduction::None => b,
            ScatterReduction::Add => a + b,
            ScatterReduction::Mul => a * b,
            ScatterReduction::Max => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else if a == b {
                    if a.is_sign_negative() { b } else { a }
                } else {
                    a.max(b)
                }
            }
            ScatterReduction::Min => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else if a == b {
                    if a.is_sign_negative() { a } else { b }
                } else {
                    a.min(b)
                }
            }
        };
    }
    y
}

#[test]
fn scatter_elements_matches_host_loops_with_duplicates() {
    let xd = [3usize, 4, 2];
    let x: Vec<f32> = (0..24).map(|i| VALS[i % 6] * (1 + i % 4) as f32).collect();
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &x, &xd).unwrap();
        for axis in [-3i64, -1, 0, 1, 2] {
            let ax = ((axis + 3) % 3) as usize;
            let mut id = xd.to_vec();
            id[ax] = 6; // more updates than rows: duplicates
            let n: usize = id.iter().product();
            let len = xd[ax] as i64;
            let idx: Vec<i64> = (0..n as i64).map(|i| (i * 5 % (2 * len)) - len).collect();
            let upd: Vec<f32> = (0..n)
                .map(|i| [-0.0, 2.0, 0.5, -3.0, f32::NAN, 0.0][i % 6] + (i / 6) as f32)
                .collect();
            let it = Tensor::from_slice(&kit, &idx, &id).unwrap();
            let ut = Tensor::from_slice(&kit, &upd, &id).unwrap();
            for red in ScatterReduction::ALL {
                let want = host_scatter(&x, &xd, &idx, &upd, &id, ax, red);
                let got = t.scatter_elements(axis, &it, &ut, red).unwrap();
                assert_eq!(got.dims(), xd);
                assert_eq!(
                    bits(&got.to_vec::<f32>().unwrap()),
                    bits(&want),
                    "axis {axis} {}",
                    red.name()
                );
                let it32 = it.to_dtype(DType::I32).unwrap();
                let got32 = t.scatter_elements(axis, &it32, &ut, red).unwrap();
                assert_eq!(bits(&got32.to_vec::<f32>().unwrap()), bits(&want));
            }
        }
        // Integers wrap under add and mul.
        let t = Tensor::from_slice(&kit, &[i32::MAX, 3], &[2]).unwrap();
        let i = Tensor::from_slice(&kit, &[0i64, 0, 1], &[3]).unwrap();
        let u = Tensor::from_slice(&kit, &[1i32, 1, i32::MIN], &[3]).unwrap();
        let got = t
            .scatter_elements(0, &i, &u, ScatterReduction::Add)
            .unwrap();
        assert_eq!(got.to_vec::<i32>().unwrap(), [i32::MIN + 1, i32::MIN + 3]);
        // No updates: a copy.
        let e = Tensor::from_slice::<i64>(&kit, &[], &[0]).unwrap();
        let eu = Tensor::from_slice::<i32>(&kit, &[], &[0]).unwrap();
        let got = t
            .scatter_elements(0, &e, &eu, ScatterReduction::Mul)
            .unwrap();
        assert_eq!(got.to_vec::<i32>().unwrap(), [i32::MAX, 3]);
    }
}

#[test]
fn element_index_errors_name_the_problem() {
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        let i = Tensor::from_slice(&kit, &[0i64, 2], &[1, 2]).unwrap();
        let e = t.gather_elements(0, &i).unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfRange {
                    index: 2,
                    axis_len: 2,
                    ..
                }
            ),
            "{e}"
        );
        let u = Tensor::from_slice(&kit, &[5.0f32, 6.0], &[1, 2]).unwrap();
        let e = t
            .scatter_elements(0, &i, &u, ScatterReduction::None)
            .unwrap_err();
        assert!(matches!(e, Error::IndexOutOfRange { .. }), "{e}");
        // Axis out of range; rank 0 has no axis.
        let ok = Tensor::from_slice(&kit, &[0i64, 1], &[1, 2]).unwrap();
        assert!(matches!(
            t.gather_elements(2, &ok),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.gather_elements(-3, &ok),
            Err(Error::InvalidArgument { .. })
        ));
        let s = Tensor::scalar(&kit, 1.0f32).unwrap();
        let s0 = Tensor::scalar(&kit, 0i64).unwrap();
        assert!(s.gather_elements(0, &s0).is_err());
        assert!(
            s.scatter_elements(0, &s0, &s, ScatterReduction::None)
                .is_err()
        );
        // Rank mismatch, longer index axes, float indices.
        let r1 = Tensor::from_slice(&kit, &[0i64, 1], &[2]).unwrap();
        assert!(matches!(
            t.gather_elements(0, &r1),
            Err(Error::Shape { .. })
        ));
        let long = Tensor::from_slice(&kit, &[0i64; 3], &[1, 3]).unwrap();
        assert!(matches!(
            t.gather_elements(0, &long),
            Err(Error::Shape { .. })
        ));
        let fi = Tensor::from_slice(&kit, &[0.0f32, 1.0], &[1, 2]).unwrap();
        assert!(matches!(
            t.gather_elements(0, &fi),
            Err(Error::DType { .. })
        ));
        // scatter: updates of another shape or dtype, a narrower index elsewhere.
        let u3 = Tensor::from_slice(&kit, &[5.0f32, 6.0, 7.0], &[1, 3]).unwrap();
        assert!(matches!(
            t.scatter_elements(0, &ok, &u3, ScatterReduction::Add),
            Err(Error::Shape { .. })
        ));
        let ui = Tensor::from_slice(&kit, &[5i32, 6], &[1, 2]).unwrap();
        assert!(matches!(
            t.scatter_elements(0, &ok, &ui, ScatterReduction::Add),
            Err(Error::DType { .. })
        ));
        let narrow = Tensor::from_slice(&kit, &[0i64], &[1, 1]).unwrap();
        let un = Tensor::from_slice(&kit, &[5.0f32], &[1, 1]).unwrap();
        assert!(matches!(
            t.scatter_elements(0, &narrow, &un, ScatterReduction::Add),
            Err(Error::Shape { .. })
        ));
    }
}

#[test]
fn pad_modes_axes_and_crops() {
    use gpukit_tensor::PadMode;
    for kit in kits() {
        let t = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        // Every axis: [begin0, begin1, end0, end1].
        let got = t.pad(&[1, 0, 0, 2], PadMode::Constant, -0.0, None).unwrap();
        assert_eq!(got.dims(), [3, 5]);
        let v = got.to_vec::<f32>().unwrap();
        assert_eq!(v[0].to_bits(), (-0.0f32).to_bits());
        assert_eq!(
            &v[5..],
            [1.0, 2.0, 3.0, -0.0, -0.0, 4.0, 5.0, 6.0, -0.0, -0.0]
        );
        // Only the last axis (negative), reflect past the axis, edge, wrap.
        let r = t.pad(&[4, 1], PadMode::Reflect, 0.0, Some(&[-1])).unwrap();
        assert_eq!(
            r.to_vec2::<f32>().unwrap(),
            [
                [1.0, 2.0, 3.0, 2.0, 1.0, 2.0, 3.0, 2.0],
                [4.0, 5.0, 6.0, 5.0, 4.0, 5.0, 6.0, 5.0]
            ]
        );
        let e = t.pad(&[0, 2], PadMode::Edge, 0.0, Some(&[1])).unwrap();
        assert_eq!(
            e.to_vec2::<f32>().unwrap(),
            [[1.0, 2.0, 3.0, 3.0, 3.0], [4.0, 5.0, 6.0, 6.0, 6.0]]
        );
        let w = t.pad(&[1, 0], PadMode::Wrap, 0.0, Some(&[0])).unwrap();
        assert_eq!(
            w.to_vec2::<f32>().unwrap(),
            [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        );
        // Crop one side, pad the other (crop first).
        let c = t.pad(&[-1, 2], PadMode::Wrap, 0.0, Some(&[1])).unwrap();
        assert_eq!(
            c.to_vec2::<f32>().unwrap(),
            [[2.0, 3.0, 2.0, 3.0], [5.0, 6.0, 5.0, 6.0]]
        );
        // A transposed view; integers keep their bits; rank 0 is a copy.
        let p = t
            .permute(&[1, 0])
            .unwrap()
            .pad(&[0, 1, 0, 0], PadMode::Edge, 0.0, None)
            .unwrap();
        assert_eq!(
            p.to_vec2::<f32>().unwrap(),
            [[1.0, 1.0, 4.0], [2.0, 2.0, 5.0], [3.0, 3.0, 6.0]]
        );
        let i = Tensor::from_slice(&kit, &[i64::MIN, i64::MAX], &[2]).unwrap();
        assert_eq!(
            i.pad(&[1, 1], PadMode::Reflect, 0.0, None)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            [i64::MAX, i64::MIN, i64::MAX, i64::MIN]
        );
        let s = Tensor::scalar(&kit, 2.5f32).unwrap();
        assert_eq!(
            s.pad(&[], PadMode::Reflect, 0.0, None)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            [2.5]
        );
        // Empty input padded with a constant; errors.
        let z = Tensor::from_slice::<f32>(&kit, &[], &[0, 2]).unwrap();
        assert_eq!(
            z.pad(&[1, 0, 0, 0], PadMode::Constant, 7.0, None)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            [7.0, 7.0]
        );
        assert!(matches!(
            z.pad(&[1, 0, 0, 0], PadMode::Edge, 0.0, None),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.pad(&[1, 2, 3], PadMode::Constant, 0.0, None),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.pad(&[-3, 0], PadMode::Constant, 0.0, Some(&[0])),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.pad(&[1, 1, 1, 1], PadMode::Constant, 0.0, Some(&[0, -2])),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.pad(&[1, 1], PadMode::Constant, 0.0, Some(&[2])),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
