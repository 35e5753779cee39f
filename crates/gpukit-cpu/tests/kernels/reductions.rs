//! Reductions: sum, dot and the softmax rows, every dtype they take.

use super::*;

const RSIZES: &[usize] = &[
    0,
    1,
    2,
    31,
    32,
    33,
    100,
    8191,
    8192,
    8193,
    3 * 8192 + 5,
    300_001,
];

fn check_sum<T: Gen + Arith>(special: u64) {
    let kit = kit();
    let mut r = Rng(31337);
    at_each_level(|lvl| {
        for &n in RSIZES {
            let a: Vec<T> = vals(&mut r, n, special);
            let want = T::acc_store(reduce::fold(
                n,
                T::acc_zero(),
                |acc, i| T::acc_step(acc, a[i]),
                T::acc_combine,
            ));
            let ab = kit.upload(&a).unwrap();
            let out = kit.zeros(T::DTYPE, 1).unwrap();
            let nm = name::<T>("sum");
            launch(
                &kit,
                &nm,
                &[(&out).into(), (&ab).into(), DevArg::I64(n as i64)],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &[want],
                &format!("{nm} n={n} {lvl:?}"),
            );
            // Summing a prefix of a longer buffer, and out aliasing a.
            if n > 1 {
                let want = T::acc_store(reduce::fold(
                    n - 1,
                    T::acc_zero(),
                    |acc, i| T::acc_step(acc, a[i + 1]),
                    T::acc_combine,
                ));
                let ip = kit.upload(&a[1..]).unwrap();
                let nm1 = DevArg::I64(n as i64 - 1);
                launch(&kit, &nm, &[(&ip).into(), (&ip).into(), nm1]).unwrap();
                assert!(
                    same_bits(ip.download::<T>().unwrap()[0], want),
                    "{nm} aliased"
                );
            }
        }
    });
}

#[test]
fn sum_all_dtypes() {
    check_sum::<f32>(0);
    check_sum::<f32>(1);
    check_sum::<f64>(0);
    check_sum::<f64>(1);
    check_sum::<f16>(0);
    check_sum::<bf16>(0);
    check_sum::<bf16>(1);
    check_sum::<i64>(10);
    check_sum::<i32>(10);
}

fn check_dot<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(777);
    at_each_level(|lvl| {
        for &n in RSIZES {
            let a: Vec<T> = vals(&mut r, n, special);
            let b: Vec<T> = vals(&mut r, n, special);
            let want = T::store(reduce::fold(
                n,
                T::Real::ZERO,
                |acc, i| a[i].load().fma(b[i].load(), acc),
                |x, y| x + y,
            ));
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let out = kit.zeros(T::DTYPE, 1).unwrap();
            let nm = name::<T>("dot");
            launch(
                &kit,
                &nm,
                &[
                    (&out).into(),
                    (&ab).into(),
                    (&bb).into(),
                    DevArg::I64(n as i64),
                ],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &[want],
                &format!("{nm} n={n} {lvl:?}"),
            );
        }
    });
}

#[test]
fn dot_all_dtypes() {
    for s in [0, 1] {
        check_dot::<f32>(s);
        check_dot::<f64>(s);
        check_dot::<f16>(s);
        check_dot::<bf16>(s);
    }
}

fn softmax_ref<T: FloatElement>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len());
    for r in 0..rows {
        let x: Vec<T::Real> = a[r * cols..(r + 1) * cols]
            .iter()
            .map(|v| v.load())
            .collect();
        let m = x.iter().fold(T::Real::NEG_INFINITY, |m, &v| max_nan(m, v));
        let e: Vec<T::Real> = x.iter().map(|&v| (v - m).exp()).collect();
        let s = reduce::fold(cols, T::Real::ZERO, |acc, j| acc + e[j], |p, q| p + q);
        out.extend(e.iter().map(|&v| T::store(v / s)));
    }
    out
}

fn check_softmax<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(2024);
    let shapes = [
        (0, 5),
        (3, 0),
        (1, 1),
        (4, 7),
        (5, 33),
        (3, 8193),
        (1, 20_000),
        (300, 257),
    ];
    at_each_level(|lvl| {
        for &(rows, cols) in &shapes {
            let a: Vec<T> = vals(&mut r, rows * cols, special);
            let want = softmax_ref(&a, rows, cols);
            let ab = kit.upload(&a).unwrap();
            let out = kit.zeros(T::DTYPE, rows * cols).unwrap();
            let nm = name::<T>("softmax");
            let (ri, ci) = (DevArg::I64(rows as i64), DevArg::I64(cols as i64));
            launch(&kit, &nm, &[(&out).into(), (&ab).into(), ri, ci]).unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &want,
                &format!("{nm} {rows}x{cols} {lvl:?}"),
            );
            launch(&kit, &nm, &[(&ab).into(), (&ab).into(), ri, ci]).unwrap();
            assert_same(
                &ab.download::<T>().unwrap(),
                &want,
                &format!("{nm} in place"),
            );
        }
    });
}

#[test]
fn softmax_all_dtypes() {
    for s in [0, 5] {
        check_softmax::<f32>(s);
        check_softmax::<f64>(s);
        check_softmax::<f16>(s);
        check_softmax::<bf16>(s);
    }
}
