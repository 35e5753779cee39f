//! The one-call f64 helpers (`gpukit::host`) against the reference oracle, bit for bit.

use gpukit::host;
use gpukit::ops::{BinaryOp, MapFn};
use gpukit_reference as reference;
use gpukit_tests::{backends, check_same_bits, len_with_edges, values};
use proptest::prelude::*;

/// A host helper of the binary family.
type HostBinary = fn(&gpukit::Kit, &[f64], &[f64]) -> gpukit::Result<Vec<f64>>;

fn cube_plus() -> MapFn {
    MapFn {
        name: "cube_plus".into(),
        cuda_expr: "x * x * x + x".into(),
        f32: |x| x * x * x + x,
        f64: |x| x * x * x + x,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn helpers_match_the_oracle(
        (a, b) in len_with_edges(20_000).prop_flat_map(|n| (values::<f64>(n), values::<f64>(n))),
        (m, k, n) in (0usize..20, 0usize..20, 0usize..20),
    ) {
        for (name, kit) in backends() {
            let ops: [(BinaryOp, HostBinary); 4] =
                [(BinaryOp::Add, host::add), (BinaryOp::Sub, host::sub), (BinaryOp::Mul, host::mul), (BinaryOp::Div, host::div)];
            for (op, f) in ops {
                let got = f(&kit, &a, &b).unwrap();
                check_same_bits(&format!("{name} host {}", op.name()), &got, &reference::binary(op, &a, &b)).map_err(TestCaseError::fail)?;
            }
            // A user map is CUDA C on CUDA and the emulator: it needs NVRTC there.
            if gpukit_tests::backends_compiling_cuda().iter().any(|(n, _)| *n == name) {
                let got = host::map(&kit, &cube_plus(), &a).unwrap();
                check_same_bits(&format!("{name} host map"), &got, &reference::map(|x: f64| x * x * x + x, &a)).map_err(TestCaseError::fail)?;
            }
            let got = [host::reduce_sum(&kit, &a).unwrap()];
            check_same_bits(&format!("{name} host reduce_sum"), &got, &[reference::sum(&a)]).map_err(TestCaseError::fail)?;
            let got = [host::dot(&kit, &a, &b).unwrap()];
            check_same_bits(&format!("{name} host dot"), &got, &[reference::dot(&a, &b)]).map_err(TestCaseError::fail)?;
            let (x, y) = (&a[..a.len().min(m * k)], &b[..b.len().min(k * n)]);
            if x.len() == m * k && y.len() == k * n {
                let got = host::matmul(&kit, x, y, m, k, n).unwrap();
                check_same_bits(&format!("{name} host matmul"), &got, &reference::matmul(x, y, m, k, n)).map_err(TestCaseError::fail)?;
            }
        }
    }
}

#[test]
fn helpers_reject_mismatched_lengths() {
    let kit = gpukit::cpu().unwrap();
    assert!(matches!(
        host::add(&kit, &[1.0], &[1.0, 2.0]),
        Err(gpukit::Error::Length { .. })
    ));
    assert!(matches!(
        host::dot(&kit, &[1.0], &[]),
        Err(gpukit::Error::Length { .. })
    ));
    assert!(matches!(
        host::matmul(&kit, &[1.0; 5], &[1.0; 6], 2, 3, 2),
        Err(gpukit::Error::Length { .. })
    ));
    assert_eq!(host::reduce_sum(&kit, &[]).unwrap().to_bits(), 0);
}
