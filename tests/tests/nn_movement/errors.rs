//! Bad input: each op's specific error (on the CPU kit), then a no-panic proptest of
//! random invalid calls.

use gpukit::ops::{self, AxisSlice, AxisSlot, Resize2d};
use gpukit::prelude::*;
use gpukit_tests::cfg;
use proptest::prelude::*;

fn kit() -> Kit {
    Kit::cpu().unwrap()
}

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn concat_errors() {
    let k = kit();
    let (a, b, out) = (f32s(&k, 4), f32s(&k, 6), f32s(&k, 10));
    ops::concat(&k, &out, &[&a, &b], 2, &[2, 3], 1).unwrap();
    assert!(matches!(
        ops::concat(&k, &out, &[], 2, &[], 1),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::concat(&k, &out, &[&a, &b], 2, &[2], 1),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::concat(&k, &out, &[&a, &b], 2, &[2, 2], 1),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::concat(&k, &f32s(&k, 9), &[&a, &b], 2, &[2, 3], 1),
        Err(Error::Length { .. })
    ));
    let d = k.upload(&[1.0f64; 6]).unwrap();
    assert!(matches!(
        ops::concat(&k, &out, &[&a, &d], 2, &[2, 3], 1),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    assert!(matches!(
        ops::concat(&k, &out, &[&a, &b], 2, &[usize::MAX, 3], 1),
        Err(Error::SizeOverflow { .. })
    ));
    let view = out.view(0, 4).unwrap();
    assert!(matches!(
        ops::concat(&k, &out, &[&view, &b], 2, &[2, 3], 1),
        Err(Error::InvalidArgument { .. })
    ));
    let far = f32s(&kit(), 4);
    assert!(matches!(
        ops::concat(&k, &out, &[&far, &b], 2, &[2, 3], 1),
        Err(Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        ops::concat(&k, &out, &[&Buf::absent(DType::F32), &b], 2, &[2, 3], 1),
        Err(Error::Absent { .. })
    ));
    // Nothing was written by the failed calls after validation: out still holds the
    // first concat's result (all ones).
    assert_eq!(out.download::<f32>().unwrap(), vec![1.0; 10]);
    let slot = AxisSlot {
        outer: 2,
        src_axis: 2,
        inner: 1,
        dst_axis: 5,
        offset: 4,
    };
    assert!(matches!(
        ops::copy_into_axis(&k, &out, &a, slot),
        Err(Error::Shape { .. })
    ));
    let slot = AxisSlot {
        offset: usize::MAX,
        ..slot
    };
    assert!(matches!(
        ops::copy_into_axis(&k, &out, &a, slot),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn slice_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 10), f32s(&k, 3));
    let s = AxisSlice {
        outer: 1,
        axis_len: 10,
        inner: 1,
        start: -3,
        len: 3,
        step: 1,
    };
    ops::slice(&k, &out, &x, s).unwrap();
    assert!(matches!(
        ops::slice(&k, &out, &x, AxisSlice { step: 0, ..s }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &out, &x, AxisSlice { start: -11, ..s }),
        Err(Error::IndexOutOfRange {
            index: -11,
            axis_len: 10,
            ..
        })
    ));
    assert!(matches!(
        ops::slice(
            &k,
            &out,
            &x,
            AxisSlice {
                start: i64::MIN,
                ..s
            }
        ),
        Err(Error::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &out, &x, AxisSlice { start: 8, ..s }),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::slice(
            &k,
            &out,
            &x,
            AxisSlice {
                start: 0,
                step: usize::MAX,
                ..s
            }
        ),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &out, &x, AxisSlice { len: 2, ..s }),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &out, &x, AxisSlice { axis_len: 9, ..s }),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &x.view(0, 3).unwrap(), &x, s),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::slice(&k, &k.upload(&[0i32; 3]).unwrap(), &x, s),
        Err(Error::DType { .. })
    ));
}

#[test]
fn permute_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 24), f32s(&k, 24));
    ops::permute(&k, &out, &x, &[2, 3, 4], &[2, 0, 1]).unwrap();
    assert!(matches!(
        ops::permute(&k, &out, &x, &[2, 3, 4], &[0, 1]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::permute(&k, &out, &x, &[2, 3, 4], &[0, 1, 1]),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::permute(&k, &out, &x, &[2, 3, 4], &[0, 1, 3]),
        Err(Error::InvalidArgument { .. })
    ));
    let nine = [1usize; 9];
    let p: Vec<usize> = (0..9).collect();
    assert!(matches!(
        ops::permute(&k, &f32s(&k, 1), &f32s(&k, 1), &nine, &p),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::permute(&k, &out, &x, &[2, 3, 5], &[2, 0, 1]),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::permute(&k, &out, &x, &[usize::MAX, 3, 4], &[2, 0, 1]),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::permute(&k, &x, &x, &[2, 3, 4], &[2, 0, 1]),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn expand_errors() {
    let k = kit();
    let (x, out) = (f32s(&k, 3), f32s(&k, 12));
    ops::expand(&k, &out, &x, &[3, 1], &[3, 4]).unwrap();
    ops::expand_last(&k, &out, &x, 3, 4).unwrap();
    assert!(matches!(
        ops::expand(&k, &out, &x, &[3, 2], &[3, 4]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::expand(&k, &out, &x, &[1, 3, 1], &[3, 4]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ops::expand_last(&k, &out, &x, 3, 5),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::expand(&k, &out, &x, &[1], &[1; 9]),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::expand(&k, &out, &x, &[3, 1], &[3, usize::MAX]),
        Err(Error::SizeOverflow { .. })
    ));
}

#[test]
fn resize_errors() {
    let k = kit();
    let r = Resize2d {
        n: 1,
        c: 2,
        in_h: 2,
        in_w: 3,
        out_h: 4,
        out_w: 5,
    };
    let (x, out) = (f32s(&k, 12), f32s(&k, 40));
    ops::resize_bilinear(&k, &out, &x, r, false).unwrap();
    ops::resize_nearest(&k, &out, &x, r).unwrap();
    let xi = k.upload(&[1i64; 12]).unwrap();
    let oi = k.upload(&[1i64; 40]).unwrap();
    ops::resize_nearest(&k, &oi, &xi, r).unwrap();
    assert!(matches!(
        ops::resize_bilinear(&k, &oi, &xi, r, true),
        Err(Error::DType {
            got: DType::I64,
            ..
        })
    ));
    assert!(matches!(
        ops::resize_bilinear(&k, &f32s(&k, 39), &x, r, true),
        Err(Error::Length { .. })
    ));
    let empty = Resize2d { in_h: 0, ..r };
    assert!(matches!(
        ops::resize_nearest(&k, &out, &f32s(&k, 0), empty),
        Err(Error::Shape { .. })
    ));
    let huge = Resize2d {
        n: 0,
        in_h: 1 << 30,
        out_h: 1 << 30,
        ..r
    };
    assert!(matches!(
        ops::resize_bilinear(&k, &f32s(&k, 0), &f32s(&k, 0), huge, false),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::resize_bilinear(
            &k,
            &x,
            &x,
            Resize2d {
                out_h: 2,
                out_w: 3,
                ..r
            },
            false
        ),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn eos_gather_errors() {
    let k = kit();
    let ids = k.upload(&[1i64, 5, 2, 7, 7, 0]).unwrap();
    let (x, out) = (f32s(&k, 12), f32s(&k, 4));
    ops::eos_gather(&k, &out, &x, &ids, 2, 3, 2).unwrap();
    assert!(matches!(
        ops::eos_gather(&k, &out, &x, &ids, 2, 0, 2),
        Err(Error::InvalidArgument { .. })
    ));
    let ids32 = k.upload(&[1i32; 6]).unwrap();
    assert!(matches!(
        ops::eos_gather(&k, &out, &x, &ids32, 2, 3, 2),
        Err(Error::DType {
            got: DType::I32,
            ..
        })
    ));
    assert!(matches!(
        ops::eos_gather(&k, &out, &x, &ids, 3, 2, 2),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::eos_gather(&k, &x.view(0, 4).unwrap(), &x, &ids, 2, 3, 2),
        Err(Error::InvalidArgument { .. })
    ));
}

proptest! {
    #![proptest_config(cfg())]

    /// Random (mostly invalid) calls return an error or succeed, never panic.
    #[test]
    fn random_calls_never_panic(
        sizes in proptest::collection::vec(0usize..12, 8),
        start in -15i64..15,
        step in 0usize..4,
        perm in proptest::collection::vec(0usize..5, 0..5),
        lens in proptest::collection::vec(0usize..12, 3),
        flag in any::<bool>(),
        dt in 0usize..3,
    ) {
        let k = kit();
        let d = [DType::F32, DType::I64, DType::F16][dt];
        let a = k.alloc(d, lens[0]).unwrap();
        let b = k.alloc(d, lens[1]).unwrap();
        let ids = k.alloc(DType::I64, lens[2]).unwrap();
        let s = &sizes;
        let _ = ops::concat(&k, &a, &[&b, &b], s[0], &s[1..3], s[3]);
        let _ = ops::copy_into_axis(&k, &a, &b, AxisSlot {
            outer: s[0], src_axis: s[1], inner: s[2], dst_axis: s[3], offset: s[4],
        });
        let _ = ops::slice(&k, &a, &b, AxisSlice {
            outer: s[0], axis_len: s[1], inner: s[2], start, len: s[3], step,
        });
        let _ = ops::permute(&k, &a, &b, &s[..perm.len()], &perm);
        let _ = ops::expand(&k, &a, &b, &s[..2], &s[2..2 + perm.len()]);
        let _ = ops::expand_last(&k, &a, &b, s[0], s[1]);
        let r = Resize2d { n: s[0], c: s[1], in_h: s[2], in_w: s[3], out_h: s[4], out_w: s[5] };
        let _ = ops::resize_bilinear(&k, &a, &b, r, flag);
        let _ = ops::resize_nearest(&k, &a, &b, r);
        let _ = ops::eos_gather(&k, &a, &b, &ids, s[0], s[1], s[2]);
    }
}
