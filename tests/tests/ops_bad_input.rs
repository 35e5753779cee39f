//! Every op rejects bad shapes, dtypes, lengths, indices, overlaps and foreign or absent
//! buffers with a specific error; random invalid calls never panic.

use gpukit::prelude::*;
use gpukit::{Buf, ops};
use proptest::prelude::*;

fn kit() -> Kit {
    Kit::cpu().unwrap()
}

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn elementwise_errors() {
    let k = kit();
    let (a, b, out) = (f32s(&k, 8), f32s(&k, 8), f32s(&k, 8));
    let short = f32s(&k, 7);
    assert!(matches!(
        ops::add(&k, &out, &a, &short),
        Err(Error::Length {
            expected: 8,
            got: 7,
            ..
        })
    ));
    let d = k.upload(&[1.0f64; 8]).unwrap();
    assert!(matches!(
        ops::mul(&k, &out, &a, &d),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    let i = k.upload(&[1i64; 8]).unwrap();
    assert!(matches!(
        ops::relu(&k, &i, &i),
        Err(Error::DType {
            got: DType::I64,
            ..
        })
    ));
    // Partial overlap of the output with an input.
    let big = f32s(&k, 16);
    let (lo, mid) = (big.view(0, 8).unwrap(), big.view(4, 8).unwrap());
    assert!(matches!(
        ops::sub(&k, &mid, &lo, &b),
        Err(Error::InvalidArgument { .. })
    ));
    // Exactly in place is fine.
    ops::add(&k, &a, &a, &b).unwrap();
    assert_eq!(a.download::<f32>().unwrap(), vec![2.0; 8]);
    // Foreign and absent buffers.
    let other = kit();
    let far = f32s(&other, 8);
    assert!(matches!(
        ops::div(&k, &out, &far, &b),
        Err(Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        ops::exp(&k, &out, &Buf::absent(DType::F32)),
        Err(Error::Absent { .. })
    ));
}

/// Every unary map, the ones added for models included, rejects the same bad inputs
/// with the same specific errors, naming the op, and runs in place.
#[test]
fn unary_errors_for_every_map() {
    let k = kit();
    let other = kit();
    for op in ops::UnaryOp::ALL {
        let name = op.name();
        let (a, out) = (f32s(&k, 8), f32s(&k, 8));
        // Integer dtypes: DType naming the op.
        for d in [DType::I64, DType::I32] {
            let i = k.zeros(d, 8).unwrap();
            match ops::unary(&k, op, &i, &i) {
                Err(Error::DType { op: o, got, .. }) => {
                    assert_eq!((o.as_str(), got), (name, d));
                }
                r => panic!("{name} on {d}: {r:?}"),
            }
        }
        // Mixed dtypes.
        let d64 = k.upload(&[1.0f64; 8]).unwrap();
        assert!(
            matches!(ops::unary(&k, op, &out, &d64), Err(Error::DType { .. })),
            "{name}: mixed dtypes"
        );
        // Wrong length.
        assert!(
            matches!(
                ops::unary(&k, op, &out, &f32s(&k, 7)),
                Err(Error::Length {
                    expected: 8,
                    got: 7,
                    ..
                })
            ),
            "{name}: length"
        );
        // Partial overlap.
        let big = f32s(&k, 16);
        let (lo, mid) = (big.view(0, 8).unwrap(), big.view(4, 8).unwrap());
        assert!(
            matches!(
                ops::unary(&k, op, &mid, &lo),
                Err(Error::InvalidArgument { .. })
            ),
            "{name}: partial overlap"
        );
        // Foreign and absent buffers.
        assert!(
            matches!(
                ops::unary(&k, op, &out, &f32s(&other, 8)),
                Err(Error::DeviceMismatch { .. })
            ),
            "{name}: foreign buffer"
        );
        assert!(
            matches!(
                ops::unary(&k, op, &out, &Buf::absent(DType::F32)),
                Err(Error::Absent { .. })
            ),
            "{name}: absent buffer"
        );
        // Exactly in place is fine and gives the out-of-place bits.
        ops::unary(&k, op, &out, &a).unwrap();
        ops::unary(&k, op, &a, &a).unwrap();
        assert_eq!(
            a.download::<f32>().unwrap(),
            out.download::<f32>().unwrap(),
            "{name}: in place"
        );
    }
}

/// Every binary op (pow included) rejects mismatched lengths, dtypes, devices and
/// partial overlaps, naming the op, through `ops::binary` and its broadcast form.
#[test]
fn binary_errors_for_every_op() {
    let k = kit();
    let other = kit();
    for op in ops::BinaryOp::ALL {
        let name = op.name();
        let (a, b, out) = (f32s(&k, 8), f32s(&k, 8), f32s(&k, 8));
        match ops::binary(&k, op, &out, &a, &f32s(&k, 7)) {
            Err(Error::Length {
                what: o,
                expected: 8,
                got: 7,
            }) => {
                assert!(o.contains(name), "{name}: {o}")
            }
            r => panic!("{name} length: {r:?}"),
        }
        let d = k.upload(&[1.0f64; 8]).unwrap();
        assert!(
            matches!(
                ops::binary(&k, op, &out, &a, &d),
                Err(Error::DType {
                    got: DType::F64,
                    ..
                })
            ),
            "{name}: mixed dtypes"
        );
        let big = f32s(&k, 16);
        let (lo, mid) = (big.view(0, 8).unwrap(), big.view(4, 8).unwrap());
        assert!(
            matches!(
                ops::binary(&k, op, &mid, &lo, &b),
                Err(Error::InvalidArgument { .. })
            ),
            "{name}: partial overlap"
        );
        assert!(
            matches!(
                ops::binary(&k, op, &out, &f32s(&other, 8), &b),
                Err(Error::DeviceMismatch { .. })
            ),
            "{name}: foreign buffer"
        );
        // A broadcast whose strides reach past an operand.
        assert!(
            matches!(
                ops::binary_broadcast(&k, op, &out, &[2, 4], &a, &[5, 1], &b, &[0, 1]),
                Err(Error::Shape { .. })
            ),
            "{name}: broadcast stride past the end"
        );
        // Exactly in place works.
        ops::binary(&k, op, &a, &a, &b).unwrap();
    }
}

#[test]
fn broadcast_errors() {
    let k = kit();
    let (a, b) = (f32s(&k, 3), f32s(&k, 4));
    let out = f32s(&k, 12);
    // Wrong number of strides.
    assert!(matches!(
        ops::binary_broadcast(&k, ops::BinaryOp::Add, &out, &[3, 4], &a, &[1], &b, &[0, 1]),
        Err(Error::Shape { .. })
    ));
    // A stride that reads past the end of `a`.
    assert!(matches!(
        ops::binary_broadcast(
            &k,
            ops::BinaryOp::Add,
            &out,
            &[3, 4],
            &a,
            &[2, 0],
            &b,
            &[0, 1]
        ),
        Err(Error::Shape { .. })
    ));
    // Output length not the product of the dims.
    assert!(matches!(
        ops::binary_broadcast(
            &k,
            ops::BinaryOp::Add,
            &f32s(&k, 11),
            &[3, 4],
            &a,
            &[1, 0],
            &b,
            &[0, 1]
        ),
        Err(Error::Length { .. })
    ));
    // Overflowing dims.
    assert!(matches!(
        ops::binary_broadcast(
            &k,
            ops::BinaryOp::Add,
            &out,
            &[usize::MAX, 4],
            &a,
            &[0, 0],
            &b,
            &[0, 0]
        ),
        Err(Error::SizeOverflow { .. })
    ));
    ops::binary_broadcast(
        &k,
        ops::BinaryOp::Add,
        &out,
        &[3, 4],
        &a,
        &[1, 0],
        &b,
        &[0, 1],
    )
    .unwrap();
    assert_eq!(out.download::<f32>().unwrap(), vec![2.0; 12]);
}

#[test]
fn matmul_errors() {
    let k = kit();
    let (a, b, c) = (f32s(&k, 6), f32s(&k, 6), f32s(&k, 4));
    assert!(matches!(
        ops::matmul(&k, &c, &a, &b, 2, 3, 3),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::matmul(&k, &c, &a, &f32s(&k, 5), 2, 3, 2),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::matmul(&k, &c, &a, &b, usize::MAX, 3, 2),
        Err(Error::SizeOverflow { .. })
    ));
    let ints = k.upload(&[1i32; 6]).unwrap();
    assert!(matches!(
        ops::matmul(&k, &k.upload(&[0i32; 4]).unwrap(), &ints, &ints, 2, 3, 2),
        Err(Error::DType { .. })
    ));
    // The output may not alias an input.
    let sq = f32s(&k, 4);
    assert!(matches!(
        ops::matmul(&k, &sq, &sq, &f32s(&k, 4), 2, 2, 2),
        Err(Error::InvalidArgument { .. })
    ));
    // bmm: the last batch passes the end of `a`.
    assert!(matches!(
        ops::bmm(&k, &f32s(&k, 8), &a, &b, 2, 2, 3, 2, 6, 0),
        Err(Error::Length { .. })
    ));
    ops::matmul(&k, &c, &a, &b, 2, 3, 2).unwrap();
    assert_eq!(c.download::<f32>().unwrap(), vec![3.0; 4]);
}

#[test]
fn index_errors() {
    let k = kit();
    let data = f32s(&k, 12); // [2, 3, 2]
    let out = f32s(&k, 8); // [2, 2, 2]
    let idx = k.upload(&[0i64, 3]).unwrap();
    match ops::gather(&k, &out, &data, &idx, 2, 3, 2) {
        Err(Error::IndexOutOfRange {
            index: 3,
            axis_len: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let idx = k.upload(&[-4i64, 0]).unwrap();
    assert!(matches!(
        ops::gather(&k, &out, &data, &idx, 2, 3, 2),
        Err(Error::IndexOutOfRange { index: -4, .. })
    ));
    let idx32 = k.upload(&[0i32, 1]).unwrap();
    assert!(matches!(
        ops::gather(&k, &out, &data, &idx32, 2, 3, 2),
        Err(Error::DType { .. })
    ));
    let idx = k.upload(&[0i64, -1]).unwrap();
    assert!(matches!(
        ops::gather(&k, &f32s(&k, 7), &data, &idx, 2, 3, 2),
        Err(Error::Length { .. })
    ));
    // Scatter: a bad index writes nothing.
    let y = k.upload(&[5.0f32; 12]).unwrap();
    let upd = f32s(&k, 8);
    let bad = k.upload(&[1i64, 9]).unwrap();
    assert!(matches!(
        ops::scatter(&k, &y, &data, &bad, &upd, 2, 3, 2),
        Err(Error::IndexOutOfRange { index: 9, .. })
    ));
    assert_eq!(y.download::<f32>().unwrap(), vec![5.0; 12]);
    assert!(matches!(
        ops::scatter(&k, &upd, &data, &idx, &upd, 2, 3, 2),
        Err(Error::Length { .. })
    ));
    ops::gather(&k, &out, &data, &idx, 2, 3, 2).unwrap();
}

#[test]
fn reduction_errors() {
    let k = kit();
    let a = f32s(&k, 6);
    assert!(matches!(
        ops::softmax_rows(&k, &f32s(&k, 6), &a, 2, 4),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::sum(&k, &f32s(&k, 2), &a),
        Err(Error::Length { expected: 1, .. })
    ));
    assert!(matches!(
        ops::dot(&k, &f32s(&k, 1), &a, &f32s(&k, 5)),
        Err(Error::Length { .. })
    ));
    let i = k.upload(&[1i64; 6]).unwrap();
    assert!(matches!(
        ops::dot(&k, &k.upload(&[0i64]).unwrap(), &i, &i),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        ops::softmax_rows(&k, &i, &i, 2, 3),
        Err(Error::DType { .. })
    ));
    let s = k.upload(&[0i64]).unwrap();
    ops::sum(&k, &s, &i).unwrap();
    assert_eq!(s.download::<i64>().unwrap(), vec![6]);
}

/// `cast` rejects a length mismatch (naming the dtypes and lengths), any overlap
/// between different dtypes, a partial overlap, and foreign or absent buffers; the same
/// dtype runs exactly in place; empty buffers are a no-op for every pair.
#[test]
fn cast_errors() {
    let k = kit();
    let a = f32s(&k, 8);
    let out = k.zeros(DType::F16, 7).unwrap();
    match ops::cast(&k, &out, &a) {
        Err(Error::Length {
            what,
            expected: 8,
            got: 7,
        }) => {
            assert!(
                what.contains("cast") && what.contains("f32") && what.contains("f16"),
                "{what}"
            );
        }
        other => panic!("expected a length error, got {other:?}"),
    }
    // Different dtypes never run in place: the same bytes viewed as i32, refused.
    let f = k.upload(&[1.5f32; 16]).unwrap();
    let same_bytes = f.view_as(0, 16, DType::I32).unwrap();
    match ops::cast(&k, &same_bytes, &f) {
        Err(Error::InvalidArgument { op, reason }) => {
            assert_eq!(op, "cast");
            assert!(reason.contains("in place"), "{reason}");
        }
        other => panic!("expected an overlap error, got {other:?}"),
    }
    assert_eq!(
        f.download::<f32>().unwrap(),
        vec![1.5; 16],
        "nothing written"
    );
    // Disjoint parts of one allocation are fine.
    let i = f.view_as(32, 8, DType::I32).unwrap();
    ops::cast(&k, &i, &f.view(0, 8).unwrap()).unwrap();
    assert_eq!(i.download::<i32>().unwrap(), vec![1; 8]);
    let f = k.upload(&[1.5f32; 16]).unwrap();
    // Partial overlap of the same dtype; exact overlap is in place.
    let (lo, mid) = (f.view(0, 8).unwrap(), f.view(4, 8).unwrap());
    match ops::cast(&k, &mid, &lo) {
        Err(Error::InvalidArgument { op, reason }) => {
            assert_eq!(op, "cast");
            assert!(reason.contains("overlaps"), "{reason}");
        }
        other => panic!("expected an overlap error, got {other:?}"),
    }
    ops::cast(&k, &lo, &lo).unwrap();
    assert_eq!(lo.download::<f32>().unwrap(), vec![1.5; 8]);
    // Foreign and absent buffers.
    let other = kit();
    let far = f32s(&other, 8);
    let o8 = k.zeros(DType::F64, 8).unwrap();
    assert!(matches!(
        ops::cast(&k, &o8, &far),
        Err(Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        ops::cast(&k, &o8, &Buf::absent(DType::I64)),
        Err(Error::Absent { .. })
    ));
    assert!(matches!(
        ops::cast(&k, &Buf::absent(DType::I64), &a),
        Err(Error::Absent { .. })
    ));
    // Empty: every pair is accepted and writes nothing.
    for s in DType::ALL {
        for d in DType::ALL {
            let (x, y) = (k.zeros(s, 0).unwrap(), k.zeros(d, 0).unwrap());
            ops::cast(&k, &y, &x).unwrap();
        }
    }
}

/// The raw launch of a cast kernel checks both dtypes and the lengths on every backend
/// (the ABI's `buf<src>` kind), before the kernel runs.
#[test]
fn cast_raw_launches_are_checked() {
    let k = kit();
    let cfg = LaunchConfig::for_elements(1, 1).unwrap();
    let (out, a) = (
        k.zeros(DType::F64, 4).unwrap(),
        k.zeros(DType::I32, 4).unwrap(),
    );
    k.launch_builtin(
        "cast_i32_to_f64",
        cfg,
        &[DevArg::Buf(&out), DevArg::Buf(&a), DevArg::I64(4)],
    )
    .unwrap();
    for (name, n) in [
        ("cast_i64_to_f64", 4),
        ("cast_i32_to_f32", 4),
        ("cast_i32_to_f64", 5),
    ] {
        let r = k.launch_builtin(
            name,
            cfg,
            &[DevArg::Buf(&out), DevArg::Buf(&a), DevArg::I64(n)],
        );
        assert!(
            matches!(r, Err(Error::Argument { .. })),
            "{name} n={n}: {r:?}"
        );
    }
}

/// `compare`, `where_`, `logical` and `logical_not` reject mixed input dtypes (naming the
/// op), a length mismatch (naming the op, the operand, the dtypes and the lengths), any
/// overlap but exactly in place with one dtype, foreign and absent buffers; empty
/// buffers are a no-op.
#[test]
fn compare_where_logical_errors() {
    let k = kit();
    let a = f32s(&k, 8);
    let b = f32s(&k, 8);
    let out = k.zeros(DType::I32, 8).unwrap();
    // Mixed input dtypes.
    let bi = k.zeros(DType::I64, 8).unwrap();
    match ops::compare(&k, &out, &a, &bi, ops::CmpOp::Lt) {
        Err(Error::DType { op, got, .. }) => {
            assert!(op.contains("compare lt"), "{op}");
            assert_eq!(got, DType::I64);
        }
        other => panic!("expected a dtype error, got {other:?}"),
    }
    match ops::logical(&k, &out, &a, &bi, ops::LogicOp::Or) {
        Err(Error::DType { op, .. }) => assert!(op.contains("logical or"), "{op}"),
        other => panic!("expected a dtype error, got {other:?}"),
    }
    // where: a, b and out share one dtype.
    let of = k.zeros(DType::F64, 8).unwrap();
    match ops::where_(&k, &of, &out, &a, &b) {
        Err(Error::DType { op, .. }) => assert_eq!(op, "where"),
        other => panic!("expected a dtype error, got {other:?}"),
    }
    // Lengths.
    let short = k.zeros(DType::F16, 7).unwrap();
    match ops::compare(&k, &short, &a, &b, ops::CmpOp::Eq) {
        Err(Error::Length {
            what,
            expected: 7,
            got: 8,
        }) => assert!(
            what.contains("compare eq") && what.contains("f32") && what.contains("f16"),
            "{what}"
        ),
        other => panic!("expected a length error, got {other:?}"),
    }
    let c7 = k.zeros(DType::I64, 7).unwrap();
    match ops::where_(&k, &b, &c7, &a, &b) {
        Err(Error::Length { what, .. }) => {
            assert!(
                what.contains("where") && what.contains("cond") && what.contains("i64"),
                "{what}"
            )
        }
        other => panic!("expected a length error, got {other:?}"),
    }
    match ops::logical_not(&k, &short, &a) {
        Err(Error::Length { what, .. }) => assert!(what.contains("logical not"), "{what}"),
        other => panic!("expected a length error, got {other:?}"),
    }
    // Overlap: another dtype over the same bytes is refused, nothing written; exactly
    // in place with one dtype runs.
    let f = k.upload(&[1.5f32; 16]).unwrap();
    let same_bytes = f.view_as(0, 16, DType::I32).unwrap();
    match ops::compare(&k, &same_bytes, &f, &f, ops::CmpOp::Eq) {
        Err(Error::InvalidArgument { op, reason }) => {
            assert_eq!(op, "compare eq");
            assert!(reason.contains("overlaps"), "{reason}");
        }
        other => panic!("expected an overlap error, got {other:?}"),
    }
    assert_eq!(f.download::<f32>().unwrap(), vec![1.5; 16]);
    let (lo, mid) = (f.view(0, 8).unwrap(), f.view(4, 8).unwrap());
    assert!(matches!(
        ops::where_(&k, &mid, &lo, &lo, &lo),
        Err(Error::InvalidArgument { .. })
    ));
    ops::compare(&k, &lo, &lo, &lo, ops::CmpOp::Le).unwrap();
    assert_eq!(lo.download::<f32>().unwrap(), vec![1.0; 8]);
    ops::logical_not(&k, &lo, &lo).unwrap();
    assert_eq!(lo.download::<f32>().unwrap(), vec![0.0; 8]);
    // Foreign and absent buffers.
    let other = kit();
    let far = f32s(&other, 8);
    assert!(matches!(
        ops::compare(&k, &out, &a, &far, ops::CmpOp::Gt),
        Err(Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        ops::where_(&k, &b, &Buf::absent(DType::I32), &a, &b),
        Err(Error::Absent { .. })
    ));
    assert!(matches!(
        ops::logical(&k, &Buf::absent(DType::I32), &a, &b, ops::LogicOp::And),
        Err(Error::Absent { .. })
    ));
    // Empty: accepted for every dtype pair.
    for s in DType::ALL {
        for d in DType::ALL {
            let (x, y) = (k.zeros(s, 0).unwrap(), k.zeros(d, 0).unwrap());
            ops::compare(&k, &y, &x, &x, ops::CmpOp::Ne).unwrap();
            ops::logical(&k, &y, &x, &x, ops::LogicOp::Xor).unwrap();
            ops::where_(&k, &y, &x, &y, &y).unwrap();
        }
    }
}

/// Raw launches of the comparison and logical kernels check the dtypes, the lengths
/// and the op code on every backend before the kernel runs.
#[test]
fn compare_raw_launches_are_checked() {
    let k = kit();
    let cfg = LaunchConfig::for_elements(1, 1).unwrap();
    let out = k.zeros(DType::I32, 4).unwrap();
    let a = k.zeros(DType::F16, 4).unwrap();
    let args = |code: i64, n: i64| {
        [
            DevArg::Buf(&out),
            DevArg::Buf(&a),
            DevArg::Buf(&a),
            DevArg::I64(code),
            DevArg::I64(n),
        ]
    };
    k.launch_builtin("compare_f16_to_i32", cfg, &args(5, 4))
        .unwrap();
    k.launch_builtin("logical_f16_to_i32", cfg, &args(3, 4))
        .unwrap();
    for (name, code, n) in [
        ("compare_f16_to_i32", 6, 4),
        ("compare_f16_to_i32", -1, 4),
        ("compare_f16_to_i32", 0, 5),
        ("compare_f32_to_i32", 0, 4),
        ("compare_f16_to_f16", 0, 4),
        ("logical_f16_to_i32", 4, 4),
    ] {
        let r = k.launch_builtin(name, cfg, &args(code, n));
        assert!(
            matches!(r, Err(Error::Argument { .. })),
            "{name} op={code} n={n}: {r:?}"
        );
    }
}

#[derive(Debug, Clone)]
enum Call {
    Binary(u8, usize, usize, usize),
    Broadcast(Vec<usize>, Vec<usize>, Vec<usize>, usize),
    Unary(u8, usize, usize),
    Matmul(usize, usize, usize, usize, usize),
    Bmm(usize, usize, usize, usize, usize, usize, usize),
    Gather(usize, usize, usize, Vec<i64>, usize),
    Scatter(usize, usize, usize, Vec<i64>, usize),
    Softmax(usize, usize, usize),
    Sum(usize, usize),
    Dot(u8, usize, usize, usize),
    Map(u8, usize, usize),
    Cast(u8, u8, usize, usize),
    // The comparison / where / logical group: (kind, input dtype, output dtype, lengths).
    Mask(u8, u8, u8, usize, usize, usize),
}

fn small() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..12, 1 => Just(usize::MAX), 1 => Just(1usize << 62)]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (any::<u8>(), small(), small(), small()).prop_map(|(d, a, b, c)| Call::Binary(d, a, b, c)),
        (
            proptest::collection::vec(small(), 0..4),
            proptest::collection::vec(small(), 0..4),
            proptest::collection::vec(small(), 0..4),
            small()
        )
            .prop_map(|(d, a, b, n)| Call::Broadcast(d, a, b, n)),
        (any::<u8>(), small(), small()).prop_map(|(d, a, b)| Call::Unary(d, a, b)),
        (small(), small(), small(), small(), small())
            .prop_map(|(m, k, n, la, lb)| Call::Matmul(m, k, n, la, lb)),
        (
            small(),
            small(),
            small(),
            small(),
            small(),
            small(),
            small()
        )
            .prop_map(|(b, m, k, n, sa, sb, l)| Call::Bmm(b, m, k, n, sa, sb, l)),
        (
            small(),
            small(),
            small(),
            proptest::collection::vec(any::<i64>(), 0..4),
            small()
        )
            .prop_map(|(o, a, i, x, l)| Call::Gather(o, a, i, x, l)),
        (
            small(),
            small(),
            small(),
            proptest::collection::vec(-5i64..5, 0..4),
            small()
        )
            .prop_map(|(o, a, i, x, l)| Call::Scatter(o, a, i, x, l)),
        (small(), small(), small()).prop_map(|(r, c, l)| Call::Softmax(r, c, l)),
        (any::<u8>().prop_map(|d| d as usize), small()).prop_map(|(d, l)| Call::Sum(d, l)),
        (any::<u8>(), small(), small(), small()).prop_map(|(d, o, a, b)| Call::Dot(d, o, a, b)),
        (any::<u8>(), small(), small()).prop_map(|(d, o, a)| Call::Map(d, o, a)),
        (any::<u8>(), any::<u8>(), small(), small())
            .prop_map(|(s, d, o, a)| Call::Cast(s, d, o, a)),
        (
            any::<u8>(),
            any::<u8>(),
            any::<u8>(),
            small(),
            small(),
            small()
        )
            .prop_map(|(w, s, d, o, a, b)| Call::Mask(w, s, d, o, a, b)),
    ]
}

fn buf(k: &Kit, d: u8, n: usize) -> Buf {
    let n = n.min(64);
    k.zeros(DType::ALL[d as usize % 6], n).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random (mostly invalid) op calls: each returns, none panics.
    #[test]
    fn random_op_calls_never_panic(calls in proptest::collection::vec(call(), 1..8)) {
        let k = kit();
        for c in calls {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _ = match &c {
                    Call::Binary(d, a, b, o) => ops::add(&k, &buf(&k, *d, *o), &buf(&k, *d, *a), &buf(&k, d.wrapping_add((a % 2) as u8 * 3), *b)),
                    Call::Broadcast(dims, sa, sb, n) => ops::binary_broadcast(&k, ops::BinaryOp::Div, &buf(&k, 0, *n), dims, &buf(&k, 0, *n), sa, &buf(&k, 0, 5), sb),
                    Call::Unary(d, a, o) => ops::unary(&k, ops::UnaryOp::ALL[(*d as usize / 6) % ops::UnaryOp::ALL.len()], &buf(&k, *d, *o), &buf(&k, *d, *a)),
                    Call::Matmul(m, kk, n, la, lb) => ops::matmul(&k, &buf(&k, 0, m.saturating_mul(*n)), &buf(&k, 0, *la), &buf(&k, 0, *lb), *m, *kk, *n),
                    Call::Bmm(b, m, kk, n, sa, sb, l) => ops::bmm(&k, &buf(&k, 1, *l), &buf(&k, 1, *l), &buf(&k, 1, *l), *b, *m, *kk, *n, *sa, *sb),
                    Call::Gather(o, a, i, idx, l) => ops::gather(&k, &buf(&k, 2, *l), &buf(&k, 2, o.saturating_mul(*a).saturating_mul(*i)), &k.upload(idx).unwrap(), *o, *a, *i),
                    Call::Scatter(o, a, i, idx, l) => ops::scatter(&k, &buf(&k, 4, o.saturating_mul(*a).saturating_mul(*i)), &buf(&k, 4, o.saturating_mul(*a).saturating_mul(*i)), &k.upload(idx).unwrap(), &buf(&k, 4, *l), *o, *a, *i),
                    Call::Softmax(r, cols, l) => ops::softmax_rows(&k, &buf(&k, 3, *l), &buf(&k, 3, *l), *r, *cols),
                    Call::Sum(d, l) => ops::sum(&k, &buf(&k, *d as u8, 1), &buf(&k, *d as u8, *l)),
                    Call::Dot(d, o, a, b) => ops::dot(&k, &buf(&k, *d, *o), &buf(&k, *d, *a), &buf(&k, d.wrapping_add(*b as u8 % 2), *b)),
                    Call::Map(d, o, a) => ops::map(&k, &ops::MapFn { name: "twice".into(), cuda_expr: "x + x".into(), f32: |x| x + x, f64: |x| x + x }, &buf(&k, *d, *o), &buf(&k, *d, *a)),
                    Call::Cast(s, d, o, a) => {
                        let a = buf(&k, *s, *a);
                        // Sometimes the output is the input itself (in place).
                        if *o % 5 == 0 { ops::cast(&k, &a, &a) } else { ops::cast(&k, &buf(&k, *d, *o), &a) }
                    }
                    Call::Mask(w, s, d, o, a, b) => {
                        let (x, y) = (buf(&k, *s, *a), buf(&k, s.wrapping_add(*w / 64), *b));
                        let out = if *o % 7 == 0 { x.clone() } else { buf(&k, *d, *o) };
                        match w % 4 {
                            0 => ops::compare(&k, &out, &x, &y, ops::CmpOp::ALL[*w as usize % 6]),
                            1 => ops::where_(&k, &out, &x, &y, &buf(&k, *d, *b)),
                            2 => ops::logical(&k, &out, &x, &y, ops::LogicOp::ALL[*w as usize % 4]),
                            _ => ops::logical_not(&k, &out, &x),
                        }
                    }
                };
            }));
            prop_assert!(r.is_ok(), "panicked on {c:?}");
        }
    }
}

/// Scalar parameters are checked in the op's compute type: a value finite as an f64
/// but infinite once rounded to f32 (1e300) is refused for f32/f16/bf16 and accepted
/// for f64, where it is finite.
#[test]
fn scalar_parameters_are_checked_in_the_compute_type() {
    let k = kit();
    let (x, out) = (f32s(&k, 4), f32s(&k, 4));
    let err = ops::leaky_relu(&k, &out, &x, 1e300).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { reason, .. } if reason.contains("alpha") && reason.contains("f32")),
        "{err}"
    );
    ops::leaky_relu(&k, &out, &x, 3e38).unwrap();
    let xd = k.upload(&[-1.0f64; 4]).unwrap();
    let od = k.upload(&[0.0f64; 4]).unwrap();
    ops::leaky_relu(&k, &od, &xd, 1e300).unwrap();
    assert_eq!(od.download::<f64>().unwrap(), vec![-1e300; 4]);
    let (scale, bias) = (f32s(&k, 4), f32s(&k, 4));
    let p = ops::LayerNorm {
        rows: 1,
        n: 4,
        eps: 1e300,
    };
    let err = ops::layer_norm(&k, &out, &x, &scale, &bias, p).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument { reason, .. } if reason.contains("eps")),
        "{err}"
    );
}
