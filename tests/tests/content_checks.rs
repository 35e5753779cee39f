//! Raw built-in launches whose index buffers lie in their CONTENTS (the broadcast and
//! strided copies' dims and strides, gather/scatter indices): the CPU and the
//! emulator give the same error variant for the same launch, because both apply the
//! one content check (`gpukit::abi::check_contents`; docs/reliability.md). Before it,
//! the CPU refused these with `Argument`/`IndexOutOfRange` while the emulator ran the
//! PTX: a memcheck `KernelFault`, or a launch that went through. Also `eos_gather`
//! with no token per row (`seq = 0`), now refused by the ABI check on every backend.

use gpukit::prelude::*;
use gpukit_tests::fill::cpu_and_emu;

/// The variant's name and, for argument errors, the argument index.
fn class(r: &Result<()>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(Error::Argument { index, .. }) => format!("Argument({index})"),
        Err(Error::IndexOutOfRange {
            index, axis_len, ..
        }) => {
            format!("IndexOutOfRange({index}, {axis_len})")
        }
        Err(e) => format!("other: {e:?}"),
    }
}

/// Runs `launch` on the CPU and on the emulator; asserts both give `want` (a
/// [`class`]) and returns both kits' output buffers' contents for accepted launches.
fn both(want: &str, launch: impl Fn(&Kit) -> (Result<()>, Buf)) -> Vec<Vec<f32>> {
    let mut outs = Vec::new();
    for (name, k) in cpu_and_emu() {
        let (r, out) = launch(&k);
        assert_eq!(class(&r), want, "{name}: {r:?}");
        outs.push(out.download::<f32>().unwrap());
    }
    outs
}

fn cfg() -> LaunchConfig {
    LaunchConfig::for_elements(1, 1).unwrap()
}

#[test]
fn gather_and_scatter_indices_out_of_range_are_index_errors_on_both() {
    // gather: out [1, 2, 1], data [1, 3, 1], idx [2]: the second index is 3.
    for (idx, want) in [
        (vec![0i64, 3], "IndexOutOfRange(3, 3)"),
        (vec![-4, 0], "IndexOutOfRange(-4, 3)"),
        (
            vec![i64::MIN, 0],
            &*format!("IndexOutOfRange({}, 3)", i64::MIN),
        ),
    ] {
        both(want, |k| {
            let out = k.upload(&[0f32; 2]).unwrap();
            let data = k.upload(&[1f32, 2.0, 3.0]).unwrap();
            let i = k.upload(&idx).unwrap();
            let r = k.launch_builtin(
                "gather_f32",
                cfg(),
                &[
                    DevArg::Buf(&out),
                    DevArg::Buf(&data),
                    DevArg::Buf(&i),
                    DevArg::I64(1),
                    DevArg::I64(3),
                    DevArg::I64(1),
                    DevArg::I64(2),
                ],
            );
            (r, out)
        });
        both(want, |k| {
            let y = k.upload(&[1f32, 2.0, 3.0]).unwrap();
            let i = k.upload(&idx).unwrap();
            let upd = k.upload(&[7f32, 8.0]).unwrap();
            let r = k.launch_builtin(
                "scatter_f32",
                cfg(),
                &[
                    DevArg::Buf(&y),
                    DevArg::Buf(&i),
                    DevArg::Buf(&upd),
                    DevArg::I64(1),
                    DevArg::I64(3),
                    DevArg::I64(1),
                    DevArg::I64(2),
                ],
            );
            (r, y)
        });
    }
    // In range (negative from the end): both run it and agree.
    let outs = both("ok", |k| {
        let out = k.upload(&[0f32; 2]).unwrap();
        let data = k.upload(&[1f32, 2.0, 3.0]).unwrap();
        let i = k.upload(&[-1i64, 0]).unwrap();
        let args = [
            DevArg::Buf(&out),
            DevArg::Buf(&data),
            DevArg::Buf(&i),
            DevArg::I64(1),
            DevArg::I64(3),
            DevArg::I64(1),
            DevArg::I64(2),
        ];
        (k.launch_builtin("gather_f32", cfg(), &args), out)
    });
    assert_eq!(outs, vec![vec![3.0, 1.0]; 2]);
}

/// A strided copy of `x` (6 elements 0..6) with the given dims, strides, offset, n_out.
fn strided(k: &Kit, dims: &[i64], strides: &[i64], offset: i64, n_out: usize) -> (Result<()>, Buf) {
    let out = k.upload(&vec![-1f32; n_out]).unwrap();
    let x = k.upload(&[0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let d = k.upload(dims).unwrap();
    let s = k.upload(strides).unwrap();
    let r = k.launch_builtin(
        "strided_copy_f32",
        cfg(),
        &[
            DevArg::Buf(&out),
            DevArg::Buf(&x),
            DevArg::Buf(&d),
            DevArg::Buf(&s),
            DevArg::I64(dims.len() as i64),
            DevArg::I64(offset),
            DevArg::I64(n_out as i64),
        ],
    );
    (r, out)
}

#[test]
fn strided_copy_contents_that_lie_are_argument_errors_on_both() {
    // A negative stride reading inside the buffer (x[2], x[1], x[0]): the emulator ran it.
    both("Argument(2)", |k| strided(k, &[3], &[-1], 2, 3));
    // A negative dim.
    both("Argument(2)", |k| strided(k, &[-3], &[1], 0, 3));
    // Dims whose product is not n_out.
    both("Argument(6)", |k| strided(k, &[2, 2], &[2, 1], 0, 3));
    // The last element read past x's 6 elements (the emulator faulted in its PTX).
    both("Argument(1)", |k| strided(k, &[3, 2], &[3, 1], 1, 6));
    // A stride whose product overflows.
    both("Argument(1)", |k| strided(k, &[2], &[i64::MAX], 0, 2));
    // A transpose of [2, 3]: both run it and agree.
    let outs = both("ok", |k| strided(k, &[3, 2], &[1, 3], 0, 6));
    assert_eq!(outs, vec![vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]; 2]);
}

/// `out[2, 3] = a ⊕ b` broadcast with the given dims and strides (a, b: 6 elements).
fn broadcast(k: &Kit, dims: &[i64], astr: &[i64], bstr: &[i64], n_out: usize) -> (Result<()>, Buf) {
    let out = k.upload(&vec![-1f32; n_out]).unwrap();
    let a = k.upload(&[0f32, 1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let b = k.upload(&[10f32, 20.0, 30.0, 40.0, 50.0, 60.0]).unwrap();
    let (d, sa, sb) = (
        k.upload(dims).unwrap(),
        k.upload(astr).unwrap(),
        k.upload(bstr).unwrap(),
    );
    let r = k.launch_builtin(
        "add_bc_f32",
        cfg(),
        &[
            DevArg::Buf(&out),
            DevArg::Buf(&a),
            DevArg::Buf(&b),
            DevArg::Buf(&d),
            DevArg::Buf(&sa),
            DevArg::Buf(&sb),
            DevArg::I64(dims.len() as i64),
            DevArg::I64(n_out as i64),
        ],
    );
    (r, out)
}

#[test]
fn broadcast_contents_that_lie_are_argument_errors_on_both() {
    // b's strides reach element 7 of 6.
    both("Argument(2)", |k| {
        broadcast(k, &[2, 3], &[3, 1], &[4, 1], 6)
    });
    // a read at a negative offset (a negative stride over a real axis).
    both("Argument(1)", |k| {
        broadcast(k, &[2, 3], &[3, -1], &[3, 1], 6)
    });
    // A negative dim; a product other than n_out.
    both("Argument(3)", |k| {
        broadcast(k, &[-2, 3], &[3, 1], &[3, 1], 6)
    });
    both("Argument(7)", |k| {
        broadcast(k, &[2, 2], &[2, 1], &[2, 1], 6)
    });
    // Row broadcast of b (stride 0 on the outer axis): both run it and agree.
    let outs = both("ok", |k| broadcast(k, &[2, 3], &[3, 1], &[0, 1], 6));
    assert_eq!(outs, vec![vec![10.0, 21.0, 32.0, 13.0, 24.0, 35.0]; 2]);
}

#[test]
fn eos_gather_with_no_token_is_an_argument_error_on_both() {
    // seq = 0 with batch = 2, d = 1: only the CPU kernel refused it before.
    both("Argument(4)", |k| {
        let out = k.upload(&[0f32; 2]).unwrap();
        let x = k.upload(&[0f32; 2]).unwrap();
        let ids = k.upload(&[0i64; 2]).unwrap();
        let r = k.launch_builtin(
            "eos_gather_f32",
            cfg(),
            &[
                DevArg::Buf(&out),
                DevArg::Buf(&x),
                DevArg::Buf(&ids),
                DevArg::I64(2),
                DevArg::I64(0),
                DevArg::I64(1),
            ],
        );
        (r, out)
    });
}
