//! Bad-argument launches of every kernel, and the registry of ABI names.

use super::*;

#[track_caller]
fn is_arg_err(r: gpukit_core::Result<()>) {
    match r {
        Err(Error::Argument { .. }) => {}
        other => panic!("expected Error::Argument, got {other:?}"),
    }
}

#[test]
fn bad_arguments_are_errors() {
    let kit = kit();
    let f = |n: usize| kit.zeros(gpukit_core::DType::F32, n).unwrap();
    let (a, b, short) = (f(10), f(10), f(9));
    let i = |v: i64| DevArg::I64(v);
    // Too-short buffers.
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&short).into(), (&a).into(), (&b).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&short).into(), (&b).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "exp_f32",
        &[(&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "sum_f32",
        &[(&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "dot_f32",
        &[(&a).into(), (&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "softmax_f32",
        &[(&short).into(), (&a).into(), i(2), i(5)],
    ));
    // Negative, missing and wrongly typed arguments.
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into(), i(-1)],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into()],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into(), DevArg::F64(1.0)],
    ));
    let d64 = kit.zeros(gpukit_core::DType::F64, 10).unwrap();
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&d64).into(), (&b).into(), i(10)],
    ));
    // Matmul: short, overflowing, bad batch strides.
    let bmm = |c: &gpukit_core::Buf, s: [i64; 6]| {
        launch(
            &kit,
            "bmm_f32",
            &[
                c.into(),
                (&a).into(),
                (&b).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
                i(s[4]),
                i(s[5]),
            ],
        )
    };
    bmm(&a, [1, 2, 5, 2, 10, 10]).unwrap();
    is_arg_err(bmm(&short, [1, 2, 5, 5, 0, 0]));
    is_arg_err(bmm(&a, [1, 2, 6, 2, 0, 0]));
    is_arg_err(bmm(&a, [2, 1, 5, 2, 6, 0]));
    is_arg_err(bmm(&a, [1, 1 << 40, 1, 1 << 40, 0, 0]));
    is_arg_err(bmm(&a, [1 << 62, 1, 1, 1, 1 << 62, 0]));
    is_arg_err(bmm(&a, [3, 1, 1, 1, i64::MAX, 0]));
    // Broadcast: strides reading outside, dims product mismatch, negative dims, ndim 0.
    let dims = kit.upload(&[2i64, 5]).unwrap();
    let good = kit.upload(&[5i64, 1]).unwrap();
    let far = kit.upload(&[5i64, 2]).unwrap();
    let neg = kit.upload(&[-5i64, 1]).unwrap();
    let bc = |d: &gpukit_core::Buf, sa: &gpukit_core::Buf, nd: i64, n: i64| {
        launch(
            &kit,
            "add_bc_f32",
            &[
                (&a).into(),
                (&a).into(),
                (&b).into(),
                d.into(),
                sa.into(),
                (&good).into(),
                i(nd),
                i(n),
            ],
        )
    };
    bc(&dims, &good, 2, 10).unwrap();
    is_arg_err(bc(&dims, &far, 2, 10));
    is_arg_err(bc(&dims, &neg, 2, 10));
    is_arg_err(bc(&dims, &good, 2, 11));
    is_arg_err(bc(&dims, &good, 0, 10));
    is_arg_err(bc(&dims, &good, 3, 10));
    let hugedims = kit.upload(&[i64::MAX, i64::MAX]).unwrap();
    is_arg_err(bc(&hugedims, &good, 2, 10));
    // Gather/scatter: short buffers, overflow, out-of-range index.
    let idx = kit.upload(&[0i64, 5]).unwrap();
    let g = |o: &gpukit_core::Buf, s: [i64; 4]| {
        launch(
            &kit,
            "gather_f32",
            &[
                o.into(),
                (&a).into(),
                (&idx).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
            ],
        )
    };
    is_arg_err(g(&a, [1, 11, 1, 2]));
    is_arg_err(g(&a, [1 << 40, 1 << 40, 1, 2]));
    is_arg_err(g(&a, [1, 10, 1, 3]));
    match g(&a, [1, 5, 1, 2]) {
        Err(Error::IndexOutOfRange {
            index: 5,
            axis_len: 5,
            ..
        }) => {}
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
    let s = |s: [i64; 4]| {
        launch(
            &kit,
            "scatter_f32",
            &[
                (&a).into(),
                (&idx).into(),
                (&b).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
            ],
        )
    };
    is_arg_err(s([1, 11, 1, 2]));
    match s([1, 5, 1, 2]) {
        Err(Error::IndexOutOfRange { index: 5, .. }) => {}
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
    let res = kit.zeros(gpukit_core::DType::I64, 0).unwrap();
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(2), i(3), (&res).into()],
    ));
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(3), i(3), (&idx).into()],
    ));
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(2), i(-3), (&idx).into()],
    ));
}

#[test]
fn every_abi_name_is_registered_and_nothing_else() {
    // The arithmetic core (abi::KERNELS) first, so a gap there is named on its own.
    let have = gpukit_cpu::builtins::names();
    for sig in gpukit_core::abi::KERNELS {
        for &d in sig.dtypes {
            let n = gpukit_core::abi::kernel_name(sig.op, d);
            assert!(have.contains(&n), "{n} is not registered");
        }
    }
    // Then the whole table: every abi name (all groups) and nothing else.
    let mut want = gpukit_core::abi::all_kernel_names();
    want.sort();
    assert_eq!(gpukit_cpu::builtins::names(), want);
    let kit = kit();
    for n in &want {
        kit.builtin(n).unwrap();
    }
    assert!(kit.builtin("add_u8").is_err());
}
