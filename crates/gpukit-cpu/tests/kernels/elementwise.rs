//! Element-wise kernels: binary ops, broadcasts and unary maps, every dtype.

use super::*;

fn check_binary<T: Gen + Arith>() {
    let kit = kit();
    let mut r = Rng(0x1234_5678 ^ T::DTYPE.size() as u64);
    at_each_level(|lvl| {
        for &n in SIZES {
            let a: Vec<T> = vals(&mut r, n, 100);
            let b: Vec<T> = vals(&mut r, n, 100);
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            for op in BinaryOp::ALL {
                let want: Vec<T> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| T::binary(op, x, y))
                    .collect();
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(op.name());
                let ni = DevArg::I64(n as i64);
                launch(&kit, &nm, &[(&out).into(), (&ab).into(), (&bb).into(), ni]).unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} n={n} {lvl:?}"),
                );
                // In place: out is a; out is b; out is both.
                let ia = kit.upload(&a).unwrap();
                launch(&kit, &nm, &[(&ia).into(), (&ia).into(), (&bb).into(), ni]).unwrap();
                assert_same(
                    &ia.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in-place a"),
                );
                let ib = kit.upload(&b).unwrap();
                launch(&kit, &nm, &[(&ib).into(), (&ab).into(), (&ib).into(), ni]).unwrap();
                assert_same(
                    &ib.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in-place b"),
                );
                let both = kit.upload(&a).unwrap();
                launch(
                    &kit,
                    &nm,
                    &[(&both).into(), (&both).into(), (&both).into(), ni],
                )
                .unwrap();
                let want2: Vec<T> = a.iter().map(|&x| T::binary(op, x, x)).collect();
                assert_same(
                    &both.download::<T>().unwrap(),
                    &want2,
                    &format!("{nm} a op a"),
                );
            }
        }
    });
}

#[test]
fn binary_all_dtypes() {
    check_binary::<f32>();
    check_binary::<f64>();
    check_binary::<f16>();
    check_binary::<bf16>();
    check_binary::<i64>();
    check_binary::<i32>();
}

/// Broadcast reference: out contiguous over dims, a/b at strides.
fn bc_ref<T: Arith>(
    op: BinaryOp,
    a: &[T],
    b: &[T],
    dims: &[usize],
    sa: &[i64],
    sb: &[i64],
) -> Vec<T> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|mut i| {
            let (mut ia, mut ib) = (0i64, 0i64);
            for d in (0..dims.len()).rev() {
                let c = (i % dims[d]) as i64;
                i /= dims[d];
                ia += c * sa[d];
                ib += c * sb[d];
            }
            T::binary(op, a[ia as usize], b[ib as usize])
        })
        .collect()
}

fn contiguous(dims: &[usize]) -> Vec<i64> {
    let mut s = vec![0i64; dims.len()];
    let mut acc = 1i64;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc *= dims[d] as i64;
    }
    s
}

/// Strides of a broadcast operand: 0 where `mask[d]`, contiguous over the rest.
fn bc_strides(dims: &[usize], mask: &[bool]) -> (Vec<i64>, usize) {
    let kept: Vec<usize> = dims
        .iter()
        .zip(mask)
        .map(|(&d, &m)| if m { 1 } else { d })
        .collect();
    let mut s = contiguous(&kept);
    for (d, &m) in mask.iter().enumerate() {
        if m {
            s[d] = 0;
        }
    }
    (s, kept.iter().product())
}

fn check_bc<T: Gen + Arith>() {
    let kit = kit();
    let mut r = Rng(99);
    let cases: &[(&[usize], &[bool], &[bool])] = &[
        (&[5], &[false], &[true]),
        (&[1], &[false], &[false]),
        (&[0, 3], &[false, false], &[true, false]),
        (&[3, 4, 5], &[false, false, false], &[true, false, true]),
        (&[2, 1, 7], &[false, true, false], &[true, false, false]),
        (&[7, 33], &[true, false], &[false, true]),
        (
            &[4, 3, 2, 5],
            &[false, true, false, true],
            &[true, false, true, false],
        ),
        (&[3, 70_001], &[false, false], &[true, false]),
        (&[70_001, 2], &[false, true], &[false, false]),
    ];
    at_each_level(|lvl| {
        for &(dims, ma, mb) in cases {
            let (sa, na) = bc_strides(dims, ma);
            let (sb, nb) = bc_strides(dims, mb);
            let a: Vec<T> = vals(&mut r, na, 50);
            let b: Vec<T> = vals(&mut r, nb, 50);
            let n: usize = dims.iter().product();
            let dd: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let (db, sab, sbb) = (
                kit.upload(&dd).unwrap(),
                kit.upload(&sa).unwrap(),
                kit.upload(&sb).unwrap(),
            );
            for op in BinaryOp::ALL {
                let want = bc_ref(op, &a, &b, dims, &sa, &sb);
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(&format!("{}_bc", op.name()));
                launch(
                    &kit,
                    &nm,
                    &[
                        (&out).into(),
                        (&ab).into(),
                        (&bb).into(),
                        (&db).into(),
                        (&sab).into(),
                        (&sbb).into(),
                        DevArg::I64(dims.len() as i64),
                        DevArg::I64(n as i64),
                    ],
                )
                .unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} {dims:?} {lvl:?}"),
                );
            }
        }
        // Transposed (non-unit, non-zero) strides and in-place bias add.
        let dims = [6usize, 9];
        let a: Vec<T> = vals(&mut r, 54, 50);
        let b: Vec<T> = vals(&mut r, 9, 50);
        let (sa, sb) = ([1i64, 6], [0i64, 1]);
        let want = bc_ref(BinaryOp::Sub, &a, &b, &dims, &sa, &sb);
        let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        let db = kit.upload(&[6i64, 9]).unwrap();
        let (sab, sbb) = (kit.upload(&sa).unwrap(), kit.upload(&sb).unwrap());
        let out = kit.zeros(T::DTYPE, 54).unwrap();
        let args = |o| {
            [
                DevArg::Buf(o),
                (&ab).into(),
                (&bb).into(),
                (&db).into(),
                (&sab).into(),
                (&sbb).into(),
                DevArg::I64(2),
                DevArg::I64(54),
            ]
        };
        launch(&kit, &name::<T>("sub_bc"), &args(&out)).unwrap();
        assert_same(&out.download::<T>().unwrap(), &want, "sub_bc transposed");
        let ca = kit.upload(&contiguous(&dims)).unwrap();
        let want = bc_ref(BinaryOp::Add, &a, &b, &dims, &[9, 1], &sb);
        let inplace = kit.upload(&a).unwrap();
        launch(
            &kit,
            &name::<T>("add_bc"),
            &[
                (&inplace).into(),
                (&inplace).into(),
                (&bb).into(),
                (&db).into(),
                (&ca).into(),
                (&sbb).into(),
                DevArg::I64(2),
                DevArg::I64(54),
            ],
        )
        .unwrap();
        assert_same(&inplace.download::<T>().unwrap(), &want, "add_bc in place");
    });
}

#[test]
fn broadcast_all_dtypes() {
    check_bc::<f32>();
    check_bc::<f64>();
    check_bc::<f16>();
    check_bc::<bf16>();
    check_bc::<i64>();
    check_bc::<i32>();
}

fn check_unary<T: Gen + FloatElement>() {
    let kit = kit();
    let mut r = Rng(7);
    at_each_level(|lvl| {
        for &n in SIZES {
            let a: Vec<T> = (0..n)
                .map(|_| {
                    let v = T::gen_val(&mut r, 100);
                    if r.below(4) == 0 {
                        T::from_f64(v.to_f64() * 30.0).unwrap()
                    } else {
                        v
                    }
                })
                .collect();
            let ab = kit.upload(&a).unwrap();
            for op in UnaryOp::ALL {
                let want: Vec<T> = a.iter().map(|&x| op.float(x)).collect();
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(op.name());
                launch(
                    &kit,
                    &nm,
                    &[(&out).into(), (&ab).into(), DevArg::I64(n as i64)],
                )
                .unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} n={n} {lvl:?}"),
                );
                let ip = kit.upload(&a).unwrap();
                launch(
                    &kit,
                    &nm,
                    &[(&ip).into(), (&ip).into(), DevArg::I64(n as i64)],
                )
                .unwrap();
                assert_same(
                    &ip.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in place"),
                );
            }
        }
    });
}

#[test]
fn unary_all_dtypes() {
    check_unary::<f32>();
    check_unary::<f64>();
    check_unary::<f16>();
    check_unary::<bf16>();
}
