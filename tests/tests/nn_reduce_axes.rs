//! Reductions along axes (`ops::reduce_axes`: sum, mean, max, min, prod, L1, L2,
//! log-sum-exp) on every backend of [`gpukit_tests::backends`] against the reference
//! oracle, bit for bit (any NaN equals any NaN); an independent f64 check of the values;
//! thread-count and SIMD-level independence.
//!
//! Shapes reach rank 0, empty axes, extents 0 and 1, negative axes, every axis, lines
//! past one chunk (8192); values reach NaN, ±inf, -0.0, subnormals, and for L2 whole
//! lines of huge or tiny magnitudes. `GPUKIT_CASES=N` changes the case count.

use gpukit::half::{bf16, f16};
use gpukit::prelude::*;
use gpukit::{Buf, ops};
use gpukit_reference as reference;
use gpukit_reference::ReduceElem;
use gpukit_tests::{TestElem, cfg, check_same_bits, cpu_variants, on_backends, value};
use ops::ReduceOp;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// A shape and its axes: mostly small ranks 0..=4 with extents 0, 1, 2, 3, 5, 7, 33;
/// sometimes one long line (past a chunk) in a rank-1 or rank-2 shape.
fn shape_axes() -> impl Strategy<Value = (Vec<usize>, Vec<i64>)> {
    let small = prop::collection::vec(
        prop_oneof![
            6 => prop::sample::select(vec![1usize, 2, 3, 5, 7]),
            1 => Just(0usize),
            1 => Just(33usize),
        ],
        0..=4,
    );
    let long = prop_oneof![
        prop::sample::select(vec![8193usize, 16385]).prop_map(|n| vec![n]),
        prop::sample::select(vec![8193usize, 8200]).prop_map(|n| vec![2, n]),
        prop::sample::select(vec![8193usize]).prop_map(|n| vec![n, 2]),
    ];
    prop_oneof![12 => small, 1 => long]
        .prop_flat_map(|dims| {
            let rank = dims.len();
            (
                Just(dims),
                prop::collection::vec(any::<bool>(), rank),
                prop::collection::vec(any::<bool>(), rank),
                prop::sample::select(vec![0u8, 1, 1, 1, 1, 2]),
            )
        })
        .prop_map(|(dims, pick, neg, mode)| {
            let rank = dims.len() as i64;
            let axes: Vec<i64> = match mode {
                // Empty: every axis.
                0 => vec![],
                // Every axis, written out (negative where drawn).
                2 => (0..rank)
                    .map(|a| if neg[a as usize] { a - rank } else { a })
                    .collect(),
                _ => (0..rank)
                    .filter(|&a| pick[a as usize])
                    .map(|a| if neg[a as usize] { a - rank } else { a })
                    .rev()
                    .collect(),
            };
            (dims, axes)
        })
}

/// Values for a case: the usual mix (specials included), or whole arrays clustered at
/// a huge or tiny binary exponent (L2's scaling and logsumexp's overflow paths).
fn case_values<T: TestElem>(n: usize) -> impl Strategy<Value = Vec<T>> {
    prop_oneof![
        3 => prop::collection::vec(value::<T>(), n),
        1 => prop::sample::select(vec![-1070i32, -1030, -148, -140, -126, -24, -14, 14, 100, 126, 1000, 1022])
            .prop_flat_map(move |e0| {
                prop::collection::vec(
                    (0i32..40, -1.0f64..1.0).prop_map(move |(d, m)| T::from_moderate(m * 2f64.powi(e0 - d) / 1000.0)),
                    n,
                )
            }),
    ]
}

fn ops_for<T: gpukit::Element>() -> Vec<ReduceOp> {
    let int = matches!(T::DTYPE, DType::I32 | DType::I64);
    ReduceOp::ALL
        .into_iter()
        .filter(|o| !int || o.supports_ints())
        .collect()
}

type Case<T> = (Vec<usize>, Vec<i64>, Vec<T>, ReduceOp);

fn case<T: TestElem>() -> impl Strategy<Value = Case<T>> {
    let ops = ops_for::<T>();
    (shape_axes(), prop::sample::select(ops)).prop_flat_map(|((dims, axes), op)| {
        let n: usize = dims.iter().product();
        (Just(dims), Just(axes), case_values::<T>(n), Just(op))
    })
}

fn run_reduce<T: gpukit::Element>(
    kit: &Kit,
    x: &[T],
    dims: &[usize],
    axes: &[i64],
    op: ReduceOp,
) -> gpukit::Result<Vec<T>> {
    let (out_dims, _) = ops::reduce_out_dims(dims, axes)?;
    let bx = kit.upload(x)?;
    let out: Buf = kit.alloc(T::DTYPE, out_dims.iter().product())?;
    ops::reduce_axes(kit, &out, &bx, dims, axes, op)?;
    out.download()
}

fn check<T: TestElem + ReduceElem>(c: &Case<T>) -> TestResult {
    let (dims, axes, x, op) = c;
    let want = reference::reduce_axes(x, dims, axes, *op);
    on_backends(
        &format!("reduce_{op} {dims:?} axes {axes:?}"),
        &want,
        |kit| run_reduce(kit, x, dims, axes, *op),
    )
}

mod equivalence {
    use super::*;
    proptest! {
        #![proptest_config(cfg())]
        #[test] fn t_f32(c in case::<f32>()) { check::<f32>(&c)?; }
        #[test] fn t_f64(c in case::<f64>()) { check::<f64>(&c)?; }
        #[test] fn t_f16(c in case::<f16>()) { check::<f16>(&c)?; }
        #[test] fn t_bf16(c in case::<bf16>()) { check::<bf16>(&c)?; }
        #[test] fn t_i64(c in case::<i64>()) { check::<i64>(&c)?; }
        #[test] fn t_i32(c in case::<i32>()) { check::<i32>(&c)?; }
    }
}

// ---------------------------------------------------------------------------------------
// An independent f64 check of the values (f32 data: finite, moderate or clustered at a
// huge or tiny exponent), within the tolerance docs/numerics.md states.
// ---------------------------------------------------------------------------------------

/// The f64 value of op over a line of f32 items (naive: f64 has room for f32's range).
fn host_f64(op: ReduceOp, v: &[f64]) -> f64 {
    let n = v.len() as f64;
    match op {
        ReduceOp::Sum => v.iter().sum(),
        ReduceOp::Mean => v.iter().sum::<f64>() / n,
        ReduceOp::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ReduceOp::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
        ReduceOp::Prod => v.iter().product(),
        ReduceOp::L1 => v.iter().map(|x| x.abs()).sum(),
        ReduceOp::L2 => v.iter().map(|x| x * x).sum::<f64>().sqrt(),
        ReduceOp::LogSumExp => {
            let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
        }
    }
}

fn finite_case() -> impl Strategy<Value = (Vec<usize>, Vec<i64>, Vec<f32>, ReduceOp)> {
    (shape_axes(), prop::sample::select(ReduceOp::ALL.to_vec())).prop_flat_map(
        |((dims, axes), op)| {
            let n: usize = dims.iter().product();
            let vals = case_values::<f32>(n).prop_map(|v| {
                v.into_iter()
                    .map(|x| if x.is_finite() { x } else { 1.5 })
                    .collect::<Vec<f32>>()
            });
            (Just(dims), Just(axes), vals, Just(op))
        },
    )
}

proptest! {
    #![proptest_config(cfg())]
    #[test]
    fn values_match_an_f64_host_computation(c in finite_case()) {
        let (dims, axes, x, op) = c;
        if op == ReduceOp::Prod {
            // Products of many moderate values overflow f32; the bits are the oracle's
            // (the equivalence test), the value is checked on short lines only.
            prop_assume!(dims.iter().product::<usize>() <= 4);
        }
        let kit = gpukit::cpu().unwrap();
        let got = run_reduce(&kit, &x, &dims, &axes, op).unwrap();
        // The same items per output through the oracle's enumeration: run the host
        // computation over an index array reduced with the oracle's order by gathering
        // the items of each output as the reference does (sum of indices is not
        // needed: gather by marking).
        let plan = gpukit::reduce_axes::plan_axes("t", &dims, &axes).unwrap();
        let rank = dims.len();
        let mut strides = vec![1usize; rank];
        for i in (0..rank.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * dims[i + 1];
        }
        // Output index of every input element: its kept coordinates, row-major.
        let mut lines: Vec<Vec<f64>> = vec![Vec::new(); plan.n_out];
        for (flat, &v) in x.iter().enumerate() {
            let mut o = 0;
            for i in 0..rank {
                let c = (flat / strides[i]) % dims[i];
                if !plan.reduced[i] {
                    o = o * dims[i] + c;
                }
            }
            lines[o].push(v as f64);
        }
        prop_assert_eq!(got.len(), plan.n_out);
        for (o, (line, &g)) in lines.iter().zip(&got).enumerate() {
            let want = host_f64(op, line);
            let g = g as f64;
            let n = line.len() as f64;
            let eps = f32::EPSILON as f64;
            let mag: f64 = line.iter().map(|v| v.abs()).sum();
            let tol = match op {
                ReduceOp::Max | ReduceOp::Min => 0.0,
                // Documented: |err| <= (n + 1)·eps·Σ|x| (each item's rounding in its
                // lane and the tree's log2(32) levels, bounded by n).
                ReduceOp::Sum | ReduceOp::L1 => (n + 1.0) * eps * mag,
                ReduceOp::Mean => ((n + 2.0) * eps * mag) / n.max(1.0),
                ReduceOp::Prod => (2.0 * n + 1.0) * eps * want.abs(),
                ReduceOp::L2 => (n + 3.0) * eps * want.abs(),
                // exp and log ulp bounds (docs/numerics.md) plus the sum's error.
                ReduceOp::LogSumExp => (n + 8.0) * eps * (want.abs() + 1.0),
            };
            let max32 = f32::MAX as f64;
            // Sum-like parts may overflow f32 on the way (the contract sums in f32; lanes
            // overflowing to +inf and -inf give NaN):
            // mean = sum / n overflows where the sum does); products are compared
            // only where no partial product leaves [2^-60, 2^60].
            let sum_like = matches!(op, ReduceOp::Sum | ReduceOp::Mean | ReduceOp::L1);
            let wild = line.iter().any(|v| v.abs() > 2f64.powi(60) / 1e3 || v.abs() < 2f64.powi(-60) * 1e3);
            if op == ReduceOp::Prod && wild {
                continue;
            }
            let ok = if want.is_nan() {
                g.is_nan()
            } else if !g.is_finite() && sum_like && mag >= max32 * (1.0 - 2.0 * eps) {
                true
            } else if want.is_infinite() || g.is_infinite() {
                // f32 overflow: only where f64's value is past f32's range.
                want == g || want.abs() >= max32 * (1.0 - 2.0 * eps) - tol
            } else {
                (g - want).abs() <= tol + f64::from(f32::from_bits(1))
            };
            prop_assert!(
                ok,
                "reduce_{} {:?} axes {:?} output {}: got {:e}, f64 {:e} (tol {:e})",
                op, dims, axes, o, g, want, tol
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Thread-count and SIMD-level independence: many outputs (several rayon tasks) and one
// long output, every CPU variant (1, 2, 3 threads × every SIMD level) bit-identical.
// ---------------------------------------------------------------------------------------

#[test]
fn every_thread_count_and_simd_level_gives_the_same_bits() {
    let kit = gpukit::cpu().unwrap();
    let n = 3 * 70_001;
    let x: Vec<f32> = (0..n)
        .map(|i| ((i as u64 * 2_654_435_761) % 100_003) as f32 * 1.37e-3 - 60.0)
        .collect();
    for (dims, axes) in [
        (vec![3usize, 70_001], vec![1i64]),
        (vec![70_001, 3], vec![-1]),
        (vec![3, 70_001], vec![0]),
        (vec![n], vec![]),
    ] {
        for op in ReduceOp::ALL {
            let want = reference::reduce_axes(&x, &dims, &axes, op);
            let got = run_reduce(&kit, &x, &dims, &axes, op).unwrap();
            check_same_bits(&format!("default {op} {dims:?}"), &got, &want).unwrap();
            for v in cpu_variants() {
                let got = v.run(|| run_reduce(&kit, &x, &dims, &axes, op)).unwrap();
                check_same_bits(&format!("{v} {op} {dims:?}"), &got, &want).unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Fixed cases: L2 of huge and tiny values, specials, empty reductions, keepdims shapes.
// ---------------------------------------------------------------------------------------

#[test]
fn l2_neither_overflows_nor_underflows() {
    for (name, kit) in gpukit_tests::backends() {
        let l2 = |x: &[f32]| run_reduce(&kit, x, &[x.len()], &[0], ReduceOp::L2).unwrap()[0];
        assert_eq!(
            l2(&[2.5e38, 3e38]),
            f32::INFINITY,
            "{name}: true value past f32"
        );
        assert_eq!(l2(&[3e37, -4e37]), 5e37, "{name}");
        let t = f32::from_bits(3);
        assert_eq!(l2(&[t, f32::from_bits(4)]), f32::from_bits(5), "{name}");
        assert_eq!(l2(&[3e-30, 4e-30]), 5e-30, "{name}");
        assert_eq!(l2(&[f32::INFINITY, 1.0]), f32::INFINITY, "{name}");
        assert!(l2(&[f32::INFINITY, f32::NAN]).is_nan(), "{name}");
        assert_eq!(l2(&[-0.0, 0.0]).to_bits(), 0, "{name}");
        assert_eq!(l2(&[]).to_bits(), 0, "{name}");
        let d = run_reduce(&kit, &[3e300f64, 4e300], &[2], &[0], ReduceOp::L2).unwrap();
        assert_eq!(d, vec![5e300], "{name}");
        let d = run_reduce(&kit, &[3e-320f64, 4e-320], &[2], &[0], ReduceOp::L2).unwrap();
        assert_eq!(d, vec![5e-320], "{name}");
    }
}

#[test]
fn specials_and_empty_reductions() {
    for (name, kit) in gpukit_tests::backends() {
        let r = |x: &[f32], dims: &[usize], op| run_reduce(&kit, x, dims, &[-1], op).unwrap();
        assert_eq!(r(&[], &[2, 0], ReduceOp::Sum), vec![0.0; 2], "{name}");
        assert_eq!(r(&[], &[2, 0], ReduceOp::Max), vec![f32::NEG_INFINITY; 2]);
        assert_eq!(r(&[], &[2, 0], ReduceOp::Min), vec![f32::INFINITY; 2]);
        assert_eq!(r(&[], &[2, 0], ReduceOp::Prod), vec![1.0; 2]);
        assert_eq!(
            r(&[], &[1, 0], ReduceOp::LogSumExp),
            vec![f32::NEG_INFINITY]
        );
        assert!(r(&[], &[1, 0], ReduceOp::Mean)[0].is_nan());
        assert_eq!(
            r(&[-0.0, 0.0], &[2], ReduceOp::Max)[0].to_bits(),
            0,
            "{name}"
        );
        assert_eq!(
            r(&[0.0, -0.0], &[2], ReduceOp::Min)[0].to_bits(),
            (-0.0f32).to_bits()
        );
        assert!(r(&[1.0, f32::NAN, 2.0], &[3], ReduceOp::Max)[0].is_nan());
        let ninf = f32::NEG_INFINITY;
        assert_eq!(r(&[ninf, ninf], &[2], ReduceOp::LogSumExp), vec![ninf]);
        assert_eq!(
            r(&[f32::INFINITY, 1.0], &[2], ReduceOp::LogSumExp),
            vec![f32::INFINITY]
        );
        let lse = r(&[1000.0, 1000.0], &[2], ReduceOp::LogSumExp)[0];
        assert!(
            (lse - (1000.0 + std::f32::consts::LN_2)).abs() <= 1e-4,
            "{name}: {lse}"
        );
        let i = run_reduce(&kit, &[i32::MAX, 1, 5], &[3], &[0], ReduceOp::Sum).unwrap();
        assert_eq!(i, vec![i32::MIN + 5], "{name}: wrapping");
        let i = run_reduce(&kit, &[] as &[i64], &[0], &[0], ReduceOp::Max).unwrap();
        assert_eq!(i, vec![i64::MIN], "{name}");
        let s = run_reduce(&kit, &[2.5f32], &[], &[], ReduceOp::Mean).unwrap();
        assert_eq!(s, vec![2.5], "{name}: rank 0");
    }
}

#[test]
fn bad_inputs_are_clear_errors() {
    let kit = gpukit::cpu().unwrap();
    let x = kit.upload(&[1.0f32; 6]).unwrap();
    let out = kit.alloc(DType::F32, 2).unwrap();
    let e = ops::reduce_axes(&kit, &out, &x, &[2, 3], &[2], ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, gpukit::Error::InvalidArgument { .. }), "{e}");
    assert!(
        e.to_string().contains("reduce_sum") && e.to_string().contains("axis 2"),
        "{e}"
    );
    let e = ops::reduce_axes(&kit, &out, &x, &[2, 3], &[1, -1], ReduceOp::Max).unwrap_err();
    assert!(
        e.to_string().contains("reduce_max") && e.to_string().contains("repeats"),
        "{e}"
    );
    let e = ops::reduce_axes(&kit, &out, &x, &[2, 3], &[0], ReduceOp::Sum).unwrap_err();
    assert!(
        matches!(e, gpukit::Error::Length { expected: 3, .. }),
        "{e}"
    );
    let e = ops::reduce_axes(&kit, &out, &x, &[2, 4], &[1], ReduceOp::Sum).unwrap_err();
    assert!(
        matches!(e, gpukit::Error::Length { expected: 8, .. }),
        "{e}"
    );
    let xi = kit.upload(&[1i32; 6]).unwrap();
    let oi = kit.alloc(DType::I32, 2).unwrap();
    let e = ops::reduce_axes(&kit, &oi, &xi, &[2, 3], &[1], ReduceOp::Mean).unwrap_err();
    assert!(
        matches!(e, gpukit::Error::DType { .. }) && e.to_string().contains("reduce_mean"),
        "{e}"
    );
    let e = ops::reduce_axes(&kit, &oi, &x, &[2, 3], &[1], ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, gpukit::Error::DType { .. }), "{e}");
    let e = ops::reduce_axes(&kit, &x, &x, &[6], &[], ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, gpukit::Error::Length { .. }), "{e}");
    let big = [usize::MAX, 2];
    let e = ops::reduce_axes(&kit, &out, &x, &big, &[0], ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, gpukit::Error::SizeOverflow { .. }), "{e}");
    let x10 = kit.upload(&[1.0f32; 1024]).unwrap();
    let o32 = kit.alloc(DType::F32, 32).unwrap();
    let e =
        ops::reduce_axes(&kit, &o32, &x10, &[2; 10], &[0, 2, 4, 6, 8], ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, gpukit::Error::InvalidArgument { .. }), "{e}");
}
