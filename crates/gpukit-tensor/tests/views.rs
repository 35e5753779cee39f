//! Constructors, downloads, views and movement of `Tensor` against host computations,
//! on the CPU and the PTX emulator.

mod common;

use common::*;
use gpukit::{DType, Error, Tensor};

/// Host gather of a strided view: `out[c] = data[offset + Σ c_d·strides_d]`.
fn host_view(data: &[f32], dims: &[usize], st: &[isize], offset: isize) -> Vec<f32> {
    coords(dims)
        .iter()
        .map(|c| {
            let p: isize = offset
                + c.iter()
                    .zip(st)
                    .map(|(&i, &s)| i as isize * s)
                    .sum::<isize>();
            data[p as usize]
        })
        .collect()
}

#[test]
fn constructors_and_downloads() {
    for kit in kits() {
        let t =
            Tensor::from_slice(&kit, &[1.0f64, -0.0, f64::NAN, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        assert_eq!((t.rank(), t.numel(), t.dtype()), (2, 6, DType::F64));
        assert_eq!(t.strides(), &[3, 1]);
        assert!(t.is_contiguous());
        let v = t.to_vec2::<f64>().unwrap();
        assert_eq!(v[0][1].to_bits(), (-0.0f64).to_bits());
        assert!(v[0][2].is_nan());
        assert_eq!(v[1], [4.0, 5.0, 6.0]);
        let t3 = Tensor::from_vec(&kit, (0..24).collect::<Vec<i32>>(), &[2, 3, 4]).unwrap();
        assert_eq!(t3.to_vec3::<i32>().unwrap()[1][2], [20, 21, 22, 23]);
        // Rank 0 and empty tensors.
        let s = Tensor::scalar(&kit, 7i64).unwrap();
        assert_eq!((s.rank(), s.numel()), (0, 1));
        assert_eq!(s.to_scalar::<i64>().unwrap(), 7);
        let e = Tensor::from_slice::<f32>(&kit, &[], &[3, 0]).unwrap();
        assert_eq!(e.numel(), 0);
        assert!(e.to_vec::<f32>().unwrap().is_empty());
        // zeros, ones, full, arange.
        assert_eq!(
            Tensor::zeros(&kit, &[2, 2], DType::I32)
                .unwrap()
                .to_vec::<i32>()
                .unwrap(),
            [0; 4]
        );
        assert_eq!(
            Tensor::ones(&kit, &[3], DType::F32)
                .unwrap()
                .to_vec::<f32>()
                .unwrap(),
            [1.0; 3]
        );
        let f = Tensor::full(&kit, &[2, 1], 0.1, DType::F32).unwrap();
        assert_eq!(f.to_vec::<f32>().unwrap(), [0.1f32; 2]);
        assert_eq!(
            Tensor::full(&kit, &[], -2.0, DType::I64)
                .unwrap()
                .to_scalar::<i64>()
                .unwrap(),
            -2
        );
        let a = Tensor::arange(&kit, 5.0, -1.0, -1.5, DType::F64).unwrap();
        assert_eq!(a.to_vec::<f64>().unwrap(), [5.0, 3.5, 2.0, 0.5]);
        assert_eq!(
            Tensor::arange(&kit, 0.0, 0.0, 1.0, DType::I64)
                .unwrap()
                .numel(),
            0
        );
        let b = kit.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(
            Tensor::from_buf(b, &[2, 2])
                .unwrap()
                .to_vec2::<f32>()
                .unwrap()[1],
            [3.0, 4.0]
        );
    }
}

#[test]
fn constructor_errors() {
    let kit = gpukit::cpu().unwrap();
    assert!(matches!(
        Tensor::from_slice(&kit, &[1.0f32; 5], &[2, 3]),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        Tensor::from_buf(kit.upload(&[1i64, 2]).unwrap(), &[3]),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        Tensor::from_buf(gpukit::Buf::absent(DType::F32), &[1]),
        Err(Error::Absent { .. })
    ));
    assert!(matches!(
        Tensor::from_slice(&kit, &[1.0f32], &[usize::MAX, 2]),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        Tensor::full(&kit, &[2], 0.5, DType::I32),
        Err(Error::Conversion { .. })
    ));
    assert!(matches!(
        Tensor::arange(&kit, 0.0, 1.0, 0.0, DType::F32),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        Tensor::arange(&kit, 0.0, f64::INFINITY, 1.0, DType::F32),
        Err(Error::InvalidArgument { .. })
    ));
    let t = Tensor::from_slice(&kit, &[1.0f32, 2.0], &[2]).unwrap();
    assert!(matches!(t.to_vec::<f64>(), Err(Error::DType { .. })));
    assert!(matches!(t.to_vec2::<f32>(), Err(Error::Shape { .. })));
    assert!(matches!(t.to_vec3::<f32>(), Err(Error::Shape { .. })));
    assert!(matches!(t.to_scalar::<f32>(), Err(Error::Shape { .. })));
    assert_eq!(
        t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        [1.0, 2.0]
    );
    assert_eq!(
        t.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(),
        [1.0, 2.0]
    );
}

#[test]
fn reshape_view_and_errors() {
    for kit in kits() {
        let data = values(24, 1);
        let t = Tensor::from_slice(&kit, &data, &[2, 3, 4]).unwrap();
        let r = t.reshape(&[4, -1]).unwrap();
        check_f32(&r, &[4, 6], &data);
        check_f32(&t.view(&[24]).unwrap(), &[24], &data);
        // Reshape of a non-contiguous view copies it in row-major order first.
        let tt = t.transpose(0, 2).unwrap();
        let host = host_view(&data, &[4, 3, 2], &[1, 4, 12], 0);
        check_f32(&tt.reshape(&[-1]).unwrap(), &[24], &host);
        // Empty and rank-0 reshapes.
        let e = Tensor::from_slice::<f32>(&kit, &[], &[0, 3]).unwrap();
        assert_eq!(e.reshape(&[3, 0, 5]).unwrap().dims(), &[3, 0, 5]);
        let s = Tensor::scalar(&kit, 2.5f32).unwrap();
        check_f32(&s.reshape(&[1, 1]).unwrap(), &[1, 1], &[2.5]);
        check_f32(
            &s.reshape(&[1, 1]).unwrap().reshape(&[]).unwrap(),
            &[],
            &[2.5],
        );
        for bad in [&[5, -1][..], &[-1, -1], &[-2, 12], &[7], &[]] {
            let msg = err_text(t.reshape(bad));
            assert!(
                msg.contains("reshape") && msg.contains("[2, 3, 4]"),
                "{msg}"
            );
        }
        assert!(matches!(e.reshape(&[0, -1]), Err(Error::Shape { .. })));
    }
}

#[test]
fn narrow_split_chunk() {
    for kit in kits() {
        let data = values(30, 2);
        let t = Tensor::from_slice(&kit, &data, &[5, 6]).unwrap();
        let n = t.narrow(-1, 2, 3).unwrap();
        check_f32(&n, &[5, 3], &host_view(&data, &[5, 3], &[6, 1], 2));
        let n0 = t.narrow(0, 1, 2).unwrap();
        assert!(n0.is_contiguous());
        check_f32(&n0, &[2, 6], &data[6..18]);
        assert_eq!(t.narrow(1, 6, 0).unwrap().numel(), 0);
        assert!(matches!(t.narrow(1, 4, 3), Err(Error::Shape { .. })));
        assert!(matches!(
            t.narrow(2, 0, 1),
            Err(Error::InvalidArgument { .. })
        ));
        let parts = t.split(&[1, 0, 5], 1).unwrap();
        check_f32(&parts[0], &[5, 1], &host_view(&data, &[5, 1], &[6, 1], 0));
        assert_eq!(parts[1].dims(), &[5, 0]);
        check_f32(&parts[2], &[5, 5], &host_view(&data, &[5, 5], &[6, 1], 1));
        assert!(matches!(t.split(&[1, 2], 1), Err(Error::Shape { .. })));
        let ch = t.chunk(2, -2).unwrap();
        assert_eq!(ch.iter().map(|c| c.dims()[0]).collect::<Vec<_>>(), [3, 2]);
        check_f32(&ch[1], &[2, 6], &data[18..]);
        assert_eq!(t.chunk(4, 1).unwrap().len(), 3); // 6 by 2: three chunks
        assert!(matches!(t.chunk(0, 0), Err(Error::InvalidArgument { .. })));
    }
}

/// The ONNX Slice reference on one axis, written as a loop: the taken indices.
fn onnx_slice(dim: i64, start: i64, end: i64, step: i64) -> Vec<i64> {
    let fix = |v: i64| if v < 0 { v + dim } else { v };
    let (mut s, mut e) = (fix(start), fix(end));
    let mut out = Vec::new();
    if step > 0 {
        s = s.clamp(0, dim);
        e = e.clamp(0, dim);
        let mut i = s;
        while i < e {
            out.push(i);
            i += step;
        }
    } else {
        s = s.clamp(0, dim - 1);
        e = e.clamp(-1, dim - 1);
        let mut i = s;
        while i > e {
            out.push(i);
            i += step;
        }
    }
    out
}

#[test]
fn slice_matches_onnx_clamping_on_every_small_case() {
    let kits = kits();
    let data: Vec<f32> = (0..5).map(|i| i as f32).collect();
    for start in [-7i64, -5, -1, 0, 2, 4, 5, 9, i64::MIN, i64::MAX] {
        for end in [-7i64, -5, -2, 0, 1, 3, 5, 8, i64::MIN, i64::MAX] {
            for step in [-3i64, -1, 1, 2, 7] {
                let want: Vec<f32> = onnx_slice(5, start, end, step)
                    .iter()
                    .map(|&i| i as f32)
                    .collect();
                for kit in &kits {
                    let t = Tensor::from_slice(kit, &data, &[5]).unwrap();
                    let s = t.slice(&[0], &[start], &[end], &[step]).unwrap();
                    check_f32(&s, &[want.len()], &want);
                }
            }
        }
    }
}

#[test]
fn multi_axis_slice_permute_and_contiguous_paths() {
    for kit in kits() {
        let data = values(60, 3);
        let t = Tensor::from_slice(&kit, &data, &[3, 4, 5]).unwrap();
        // t[::-1, 1:4:2, -1::-2] (negative steps: the gather path).
        let s = t
            .slice(
                &[0, -2, 2],
                &[-1, 1, -1],
                &[i64::MIN, 4, i64::MIN],
                &[-1, 2, -2],
            )
            .unwrap();
        check_f32(
            &s,
            &[3, 2, 3],
            &host_view(&data, &[3, 2, 3], &[-20, 10, -2], 40 + 5 + 4),
        );
        // Permute of a contiguous tensor (the permute path), negative axes.
        let p = t.permute(&[-1, 0, 1]).unwrap();
        assert!(!p.is_contiguous());
        check_f32(
            &p.contiguous().unwrap(),
            &[5, 3, 4],
            &host_view(&data, &[5, 3, 4], &[1, 20, 5], 0),
        );
        // Permute of a narrowed tensor (offset; the permute path on a sub-block).
        let q = t.narrow(0, 1, 2).unwrap().transpose(1, 2).unwrap();
        check_f32(
            &q,
            &[2, 5, 4],
            &host_view(&data, &[2, 5, 4], &[20, 1, 5], 20),
        );
        // Broadcast (the expand path), from 1 and from a new axis.
        let col = t.narrow(2, 0, 1).unwrap().narrow(0, 2, 1).unwrap(); // [1, 4, 1], strided
        let b = col.broadcast_to(&[2, 3, 4, 2]).unwrap();
        check_f32(
            &b,
            &[2, 3, 4, 2],
            &host_view(&data, &[2, 3, 4, 2], &[0, 0, 5, 0], 40),
        );
        let row = Tensor::from_slice(&kit, &data[..5], &[5])
            .unwrap()
            .expand(&[3, 5])
            .unwrap();
        assert_eq!(row.strides(), &[0, 1]);
        check_f32(&row, &[3, 5], &host_view(&data, &[3, 5], &[0, 1], 0));
        // Bits survive every path (NaN, -0.0, infinities in `values`).
        let bits: Vec<u32> = p
            .contiguous()
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let host: Vec<u32> = host_view(&data, &[5, 3, 4], &[1, 20, 5], 0)
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(bits, host);
        // Errors name the op, the axis and the shape.
        let msg = err_text(t.slice(&[3], &[0], &[1], &[1]));
        assert!(
            msg.contains("slice") && msg.contains("axis 3") && msg.contains("[3, 4, 5]"),
            "{msg}"
        );
        assert!(matches!(
            t.slice(&[0], &[0], &[1], &[0]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.slice(&[0, -3], &[0, 0], &[1, 1], &[]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.slice(&[0], &[0, 1], &[1], &[]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.permute(&[0, 1]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.permute(&[0, 1, -2]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            t.transpose(0, 3),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(t.t(), Err(Error::Shape { .. })));
        let msg = err_text(t.broadcast_to(&[3, 2, 5]));
        assert!(
            msg.contains("broadcast_to") && msg.contains("axis 1"),
            "{msg}"
        );
        assert!(matches!(t.broadcast_to(&[4, 5]), Err(Error::Shape { .. })));
    }
}

#[test]
fn t_squeeze_unsqueeze() {
    for kit in kits() {
        let data = finite(6, 4);
        let m = Tensor::from_slice(&kit, &data, &[2, 3]).unwrap();
        check_f32(
            &m.t().unwrap(),
            &[3, 2],
            &host_view(&data, &[3, 2], &[1, 3], 0),
        );
        let v = Tensor::from_slice(&kit, &data, &[6]).unwrap();
        assert_eq!(v.t().unwrap().dims(), &[6]);
        let u = m.unsqueeze(-1).unwrap().unsqueeze(0).unwrap();
        assert_eq!(u.dims(), &[1, 2, 3, 1]);
        check_f32(&u.squeeze(-1).unwrap().squeeze(0).unwrap(), &[2, 3], &data);
        check_f32(&u.squeeze_all(), &[2, 3], &data);
        assert!(matches!(u.squeeze(1), Err(Error::Shape { .. })));
        assert!(matches!(u.unsqueeze(5), Err(Error::InvalidArgument { .. })));
        let s = Tensor::scalar(&kit, 1.5f32).unwrap();
        check_f32(&s.unsqueeze(0).unwrap(), &[1], &[1.5]);
        assert!(matches!(s.squeeze(0), Err(Error::InvalidArgument { .. })));
    }
}

#[test]
fn concat_and_stack() {
    for kit in kits() {
        let a = finite(6, 5);
        let b = values(9, 6);
        let ta = Tensor::from_slice(&kit, &a, &[2, 3]).unwrap();
        let tb = Tensor::from_slice(&kit, &b, &[3, 3]).unwrap();
        let c = Tensor::concat(&[&ta, &tb], -2).unwrap();
        check_f32(&c, &[5, 3], &[a.clone(), b.clone()].concat());
        // Along the last axis, with a transposed (non-contiguous) operand and an empty one.
        let e = Tensor::from_slice::<f32>(&kit, &[], &[3, 0]).unwrap();
        let c1 = Tensor::concat(&[&tb, &e, &ta.t().unwrap()], 1).unwrap();
        let mut want = Vec::new();
        for r in 0..3 {
            want.extend_from_slice(&b[r * 3..r * 3 + 3]);
            want.extend([a[r], a[3 + r]]);
        }
        check_f32(&c1, &[3, 5], &want);
        let s = Tensor::stack(&[&ta, &ta], -1).unwrap();
        let want: Vec<f32> = a.iter().flat_map(|&v| [v, v]).collect();
        check_f32(&s, &[2, 3, 2], &want);
        let s0 = Tensor::stack(&[&ta, &ta], 0).unwrap();
        check_f32(&s0, &[2, 2, 3], &[a.clone(), a.clone()].concat());
        assert!(matches!(
            Tensor::concat(&[], 0),
            Err(Error::InvalidArgument { .. })
        ));
        let msg = err_text(Tensor::concat(&[&ta, &tb], 1));
        assert!(
            msg.contains("concat") && msg.contains("[3, 3]") && msg.contains("axis 1"),
            "{msg}"
        );
        let ti = Tensor::from_slice(&kit, &[1i32; 6], &[2, 3]).unwrap();
        assert!(matches!(
            Tensor::concat(&[&ta, &ti], 0),
            Err(Error::DType { .. })
        ));
        assert!(matches!(
            Tensor::stack(&[&ta, &tb], 0),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            Tensor::stack(&[&ta], 3),
            Err(Error::InvalidArgument { .. })
        ));
    }
}

#[test]
fn other_dtypes_high_ranks_and_extreme_steps() {
    use gpukit::half::{bf16, f16};
    for kit in kits() {
        // f64, f16, bf16 and i32 through views and broadcasting.
        let d: Vec<f64> = (0..6).map(|i| i as f64 * 0.5 - 1.0).collect();
        let t = Tensor::from_slice(&kit, &d, &[2, 3]).unwrap();
        let r = t
            .t()
            .unwrap()
            .add(&Tensor::from_slice(&kit, &[10.0f64, 20.0], &[2]).unwrap())
            .unwrap();
        let want: Vec<f64> = (0..6)
            .map(|i| d[(i % 2) * 3 + i / 2] + [10.0, 20.0][i % 2])
            .collect();
        assert!(same_f64(&r.to_vec::<f64>().unwrap(), &want));
        let h: Vec<f16> = d.iter().map(|&v| f16::from_f64(v)).collect();
        let th = Tensor::from_slice(&kit, &h, &[2, 3]).unwrap();
        let rev = th.slice(&[1], &[i64::MAX], &[i64::MIN], &[-1]).unwrap();
        let want: Vec<f16> = (0..6).map(|i| h[(i / 3) * 3 + 2 - i % 3]).collect();
        assert_eq!(rev.to_vec::<f16>().unwrap(), want);
        let b: Vec<bf16> = d.iter().map(|&v| bf16::from_f64(v)).collect();
        let tb = Tensor::from_slice(&kit, &b, &[3, 2]).unwrap();
        let m = tb.mul(&tb).unwrap();
        let want: Vec<bf16> = b
            .iter()
            .map(|&v| bf16::from_f32(v.to_f32() * v.to_f32()))
            .collect();
        assert_eq!(m.to_vec::<bf16>().unwrap(), want);
        let ti = Tensor::from_slice(&kit, &[1i32, -2, 3], &[3, 1]).unwrap();
        let s = ti.expand(&[3, 3]).unwrap().sub(&ti.t().unwrap()).unwrap();
        assert_eq!(s.to_vec::<i32>().unwrap(), [0, 3, -2, -3, 0, -5, 2, 5, 0]);
        // Rank 9 (above the movement ops' rank limit): the gather path copies it.
        let dims = [2usize, 1, 2, 1, 2, 1, 2, 1, 2];
        let data = values(32, 9);
        let nine = Tensor::from_slice(&kit, &data, &dims).unwrap();
        let p = nine.permute(&[8, 7, 6, 5, 4, 3, 2, 1, 0]).unwrap();
        let rdims: Vec<usize> = dims.iter().rev().copied().collect();
        let st = strides(&dims);
        let rst: Vec<isize> = st.iter().rev().map(|&s| s as isize).collect();
        check_f32(
            &p.contiguous().unwrap(),
            &rdims,
            &host_view(&data, &rdims, &rst, 0),
        );
        // Steps of i64::MIN / i64::MAX take one element.
        let v = Tensor::from_slice(&kit, &data[..5], &[5]).unwrap();
        check_f32(
            &v.slice(&[0], &[-1], &[i64::MIN], &[i64::MIN]).unwrap(),
            &[1],
            &data[4..5],
        );
        check_f32(
            &v.slice(&[0], &[1], &[i64::MAX], &[i64::MAX]).unwrap(),
            &[1],
            &data[1..2],
        );
        check_f32(&v.slice(&[0], &[3], &[3], &[1]).unwrap(), &[0], &[]);
    }
}
