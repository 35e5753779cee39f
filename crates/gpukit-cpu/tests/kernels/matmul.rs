//! The batched matmul kernel: every float dtype, special values, and the order of
//! its sums.

use super::*;

fn bmm_ref<T: FloatElement>(
    a: &[T],
    b: &[T],
    (batch, m, k, n): (usize, usize, usize, usize),
    (abs, bbs): (usize, usize),
) -> Vec<T> {
    let mut c = Vec::with_capacity(batch * m * n);
    for i in 0..batch {
        for r in 0..m {
            for j in 0..n {
                let mut acc = T::Real::ZERO;
                for t in 0..k {
                    acc = a[i * abs + r * k + t]
                        .load()
                        .fma(b[i * bbs + t * n + j].load(), acc);
                }
                c.push(T::store(acc));
            }
        }
    }
    c
}

fn check_bmm<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(4242);
    // (batch, m, k, n, a broadcast, b broadcast)
    let shapes: &[(usize, usize, usize, usize, bool, bool)] = &[
        (1, 0, 5, 3, false, false),
        (1, 3, 0, 4, false, false),
        (1, 4, 5, 0, false, false),
        (0, 4, 5, 6, false, false),
        (1, 1, 1, 1, false, false),
        (1, 1, 37, 1, false, false),
        (1, 1, 300, 70, false, false),
        (1, 13, 17, 33, false, false),
        (2, 7, 3, 17, false, true),
        (3, 5, 9, 11, true, false),
        (1, 25, 300, 47, false, false),
        (1, 97, 5, 513, false, false),
        (1, 130, 513, 35, false, false),
        (2, 49, 260, 18, false, false),
    ];
    at_each_level(|lvl| {
        for &(batch, m, k, n, abc, bbc) in shapes {
            let abs = if abc { 0 } else { m * k };
            let bbs = if bbc { 0 } else { k * n };
            let na = if abc { m * k } else { batch * m * k };
            let nb = if bbc { k * n } else { batch * k * n };
            let a: Vec<T> = vals(&mut r, na, special);
            let b: Vec<T> = vals(&mut r, nb, special);
            let want = bmm_ref(&a, &b, (batch, m, k, n), (abs, bbs));
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let c = kit
                .upload(&vec![T::from_f64(7.0).unwrap(); batch * m * n])
                .unwrap();
            let nm = name::<T>("bmm");
            let i = |v: usize| DevArg::I64(v as i64);
            launch(
                &kit,
                &nm,
                &[
                    (&c).into(),
                    (&ab).into(),
                    (&bb).into(),
                    i(batch),
                    i(m),
                    i(k),
                    i(n),
                    i(abs),
                    i(bbs),
                ],
            )
            .unwrap();
            assert_same(
                &c.download::<T>().unwrap(),
                &want,
                &format!("{nm} {batch}x{m}x{k}x{n} {lvl:?}"),
            );
        }
    });
}

#[test]
fn bmm_f32() {
    check_bmm::<f32>(0);
    check_bmm::<f32>(2);
}
#[test]
fn bmm_f64() {
    check_bmm::<f64>(0);
    check_bmm::<f64>(2);
}
#[test]
fn bmm_f16() {
    check_bmm::<f16>(0);
    check_bmm::<f16>(2);
}
#[test]
fn bmm_bf16() {
    check_bmm::<bf16>(0);
    check_bmm::<bf16>(2);
}

/// Cancellation-heavy data shows any change of order: big and small magnitudes mixed.
#[test]
fn bmm_order_sensitive() {
    let kit = kit();
    let (m, k, n) = (19, 600, 37);
    let mut r = Rng(5);
    let a: Vec<f32> = (0..m * k)
        .map(|_| ((r.unit() - 0.5) * 2f64.powi(r.below(40) as i32 - 20)) as f32)
        .collect();
    let b: Vec<f32> = (0..k * n).map(|_| (r.unit() - 0.5) as f32).collect();
    let want = bmm_ref(&a, &b, (1, m, k, n), (0, 0));
    at_each_level(|lvl| {
        let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        let c = kit.zeros(gpukit_core::DType::F32, m * n).unwrap();
        let i = |v: usize| DevArg::I64(v as i64);
        launch(
            &kit,
            "bmm_f32",
            &[
                (&c).into(),
                (&ab).into(),
                (&bb).into(),
                i(1),
                i(m),
                i(k),
                i(n),
                i(0),
                i(0),
            ],
        )
        .unwrap();
        assert_same(
            &c.download::<f32>().unwrap(),
            &want,
            &format!("order {lvl:?}"),
        );
    });
}
