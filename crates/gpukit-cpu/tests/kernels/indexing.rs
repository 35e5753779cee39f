//! Gather and scatter, and the index check that names the first bad index.

use super::*;

fn check_gather_scatter<T: Gen>() {
    let kit = kit();
    let mut r = Rng(555);
    let shapes = [
        (1, 5, 1, 3),
        (2, 4, 3, 6),
        (3, 1, 70, 4),
        (0, 3, 2, 2),
        (2, 3, 0, 2),
        (2, 3, 2, 0),
        (1, 7, 30_000, 5),
        (40, 9, 11, 13),
    ];
    at_each_level(|lvl| {
        for &(outer, axis, inner, nidx) in &shapes {
            let data: Vec<T> = vals(&mut r, outer * axis * inner, 10);
            let idx: Vec<i64> = (0..nidx)
                .map(|_| r.below(2 * axis as u64) as i64 - axis as i64)
                .collect();
            let res = |i: i64| {
                if i < 0 {
                    (i + axis as i64) as usize
                } else {
                    i as usize
                }
            };
            // gather
            let mut want = Vec::new();
            for o in 0..outer {
                for &g in &idx {
                    let s = (o * axis + res(g)) * inner;
                    want.extend_from_slice(&data[s..s + inner]);
                }
            }
            let (db, ib) = (kit.upload(&data).unwrap(), kit.upload(&idx).unwrap());
            let out = kit.zeros(T::DTYPE, outer * nidx * inner).unwrap();
            let i = |v: usize| DevArg::I64(v as i64);
            launch(
                &kit,
                &name::<T>("gather"),
                &[
                    (&out).into(),
                    (&db).into(),
                    (&ib).into(),
                    i(outer),
                    i(axis),
                    i(inner),
                    i(nidx),
                ],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &want,
                &format!("gather {lvl:?}"),
            );
            // scatter (duplicates: the largest g wins)
            let upd: Vec<T> = vals(&mut r, outer * nidx * inner, 10);
            let mut want = data.clone();
            for o in 0..outer {
                for (g, &gi) in idx.iter().enumerate() {
                    for c in 0..inner {
                        want[(o * axis + res(gi)) * inner + c] = upd[(o * nidx + g) * inner + c];
                    }
                }
            }
            let y = kit.upload(&data).unwrap();
            let ub = kit.upload(&upd).unwrap();
            launch(
                &kit,
                &name::<T>("scatter"),
                &[
                    (&y).into(),
                    (&ib).into(),
                    (&ub).into(),
                    i(outer),
                    i(axis),
                    i(inner),
                    i(nidx),
                ],
            )
            .unwrap();
            assert_same(
                &y.download::<T>().unwrap(),
                &want,
                &format!("scatter {lvl:?}"),
            );
        }
    });
}

#[test]
fn gather_scatter_all_dtypes() {
    check_gather_scatter::<f32>();
    check_gather_scatter::<f64>();
    check_gather_scatter::<f16>();
    check_gather_scatter::<bf16>();
    check_gather_scatter::<i64>();
    check_gather_scatter::<i32>();
}

#[test]
fn check_index_finds_first_bad() {
    let kit = kit();
    let res = kit.upload(&[7i64]).unwrap();
    let run = |idx: &[i64], axis: i64| {
        let ib = kit.upload(idx).unwrap();
        launch(
            &kit,
            "check_index_i64",
            &[
                (&ib).into(),
                DevArg::I64(idx.len() as i64),
                DevArg::I64(axis),
                (&res).into(),
            ],
        )
        .unwrap();
        res.download::<i64>().unwrap()[0]
    };
    assert_eq!(run(&[], 3), -1);
    assert_eq!(run(&[0, 1, 2, -1, -3], 3), -1);
    assert_eq!(run(&[0, 3, -4], 3), 1);
    assert_eq!(run(&[-4, 3], 3), 0);
    assert_eq!(run(&[0], 0), 0);
    assert_eq!(run(&[i64::MIN, 0], 5), 0);
    let mut big = vec![1i64; 200_000];
    big[150_001] = 10;
    big[190_000] = -11;
    assert_eq!(run(&big, 10), 150_001);
    big[150_001] = 9;
    assert_eq!(run(&big, 10), 190_000);
}
