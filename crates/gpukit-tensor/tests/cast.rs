//! `Tensor::to_dtype` / `Tensor::cast`: every pair of dtypes on cpu and ptx-emu, on
//! views (transposed, negative-step, broadcast), rank 0 and empty tensors; the bits are
//! those of the contract's element conversion (`gpukit::cast::CastTo`), the same on
//! both backends.

mod common;

use common::kits;
use gpukit::cast::{CastElement, CastTo};
use gpukit::half::{bf16, f16};
use gpukit::{DType, Element, Tensor};

/// Host reference: the view's elements in row-major order, each converted.
fn host<S: CastElement + CastTo<D>, D: Element>(src: &[S]) -> Vec<D> {
    src.iter().map(|&x| x.cast_to()).collect()
}

fn same<D: Element>(a: &[D], b: &[D]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| gpukit::numeric::same_bits(*x, *y))
}

/// `t` (whose row-major elements are `elems`) cast to D matches the host conversion.
fn check<S: CastElement + CastTo<D>, D: Element>(t: &Tensor, elems: &[S]) {
    let c = t.to_dtype(D::DTYPE).unwrap();
    assert_eq!(c.dims(), t.dims());
    assert_eq!(c.dtype(), D::DTYPE);
    let got = c.to_vec::<D>().unwrap();
    let want = host::<S, D>(elems);
    assert!(
        same(&got, &want),
        "{} -> {}: {got:?} != {want:?}",
        S::DTYPE,
        D::DTYPE
    );
    // `cast` is the same method.
    assert!(same(
        &t.cast(D::DTYPE).unwrap().to_vec::<D>().unwrap(),
        &want
    ));
}

fn all_targets<S>(t: &Tensor, elems: &[S])
where
    S: CastElement,
{
    check::<S, f32>(t, elems);
    check::<S, f64>(t, elems);
    check::<S, f16>(t, elems);
    check::<S, bf16>(t, elems);
    check::<S, i64>(t, elems);
    check::<S, i32>(t, elems);
}

/// Values with the specials and rounding cases of every dtype, as f64.
fn source_values() -> Vec<f64> {
    vec![
        1.5,
        -2.7,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        1e300,
        -1e-310,
        1.0 + 2f64.powi(-11) + 2f64.powi(-40),
        65520.0,
        65519.0,
        3e9,
        -3e9,
        9.3e18,
        16_777_217.0,
        0.49999999999999994,
        -1.0,
        2f64.powi(-24),
    ]
}

#[test]
fn every_pair_on_views_matches_the_element_rule() {
    let vals = source_values();
    for kit in kits() {
        macro_rules! from {
            ($s:ty) => {{
                let data: Vec<$s> = vals.iter().map(|&v| CastTo::<$s>::cast_to(v)).collect();
                let t = Tensor::from_slice(&kit, &data, &[3, 6]).unwrap();
                all_targets::<$s>(&t, &data);
                // A transposed view: the elements in its row-major order.
                let tt = t.t().unwrap();
                let te: Vec<$s> = (0..6)
                    .flat_map(|j| (0..3).map(move |i| (i, j)))
                    .map(|(i, j)| data[i * 6 + j])
                    .collect();
                all_targets::<$s>(&tt, &te);
                // A negative-step slice (reversed rows) and a broadcast.
                let r = t.slice(&[0], &[-1], &[i64::MIN], &[-1]).unwrap();
                let re: Vec<$s> = (0..3)
                    .rev()
                    .flat_map(|i| data[i * 6..i * 6 + 6].to_vec())
                    .collect();
                all_targets::<$s>(&r, &re);
                let row = t.narrow(0, 1, 1).unwrap().broadcast_to(&[2, 1, 6]).unwrap();
                let be: Vec<$s> = [data[6..12].to_vec(), data[6..12].to_vec()].concat();
                all_targets::<$s>(&row, &be);
                // Rank 0 and empty.
                let s = Tensor::scalar(&kit, data[1]).unwrap();
                all_targets::<$s>(&s, &data[1..2]);
                let e = Tensor::from_slice::<$s>(&kit, &[], &[0, 4]).unwrap();
                all_targets::<$s>(&e, &[]);
            }};
        }
        from!(f32);
        from!(f64);
        from!(f16);
        from!(bf16);
        from!(i64);
        from!(i32);
    }
}

#[test]
fn known_values_and_same_dtype() {
    for kit in kits() {
        let x = Tensor::from_slice(&kit, &[1.0 + 2f64.powi(-11) + 2f64.powi(-40), -1e300], &[2])
            .unwrap();
        // One rounding: 1 + 2^-10 (0x3c01), not the double-rounded 1.0.
        let h = x.to_dtype(DType::F16).unwrap().to_vec::<f16>().unwrap();
        assert_eq!((h[0].to_bits(), h[1]), (0x3c01, f16::NEG_INFINITY));
        let i = x.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(i, [1, i64::MIN]);
        // A 0/1 mask as f32, and back: exact.
        let m = Tensor::from_slice(&kit, &[0i64, 1, 1, 0], &[2, 2]).unwrap();
        let f = m.to_dtype(DType::F32).unwrap();
        assert_eq!(f.to_vec2::<f32>().unwrap(), [[0.0, 1.0], [1.0, 0.0]]);
        assert_eq!(
            f.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap(),
            [0, 1, 1, 0]
        );
        // i64 -> i32 wraps.
        let w = Tensor::from_slice(&kit, &[(1i64 << 32) + 7, -1], &[2]).unwrap();
        assert_eq!(
            w.to_dtype(DType::I32).unwrap().to_vec::<i32>().unwrap(),
            [7, -1]
        );
        // The same dtype is the tensor itself (its view and buffer, no copy).
        let v = x.narrow(0, 1, 1).unwrap();
        let same = v.to_dtype(DType::F64).unwrap();
        assert_eq!((same.offset(), same.strides()), (v.offset(), v.strides()));
        assert_eq!(same.to_vec::<f64>().unwrap(), [-1e300]);
    }
}
