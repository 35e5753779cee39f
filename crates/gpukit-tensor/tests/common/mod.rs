//! Shared helpers of the tensor tests: the kits every test runs on, and bitwise checks.
#![allow(dead_code)]

use gpukit::{Error, Kit, Result, Tensor};

/// The CPU backend and the PTX emulator (the CUDA kernels run on the CPU).
pub(crate) fn kits() -> Vec<Kit> {
    let kits = vec![
        gpukit::open("cpu").expect("cpu kit"),
        gpukit::open("ptx-emu").expect("ptx-emu kit"),
    ];
    assert_eq!(kits[0].info().backend, gpukit::Backend::Cpu);
    assert_eq!(kits[1].info().backend, gpukit::Backend::PtxEmu);
    kits
}

/// Bitwise equality with the contract's NaN rule (any NaN equals any NaN).
pub(crate) fn same_f32(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

/// As [`same_f32`] for f64.
pub(crate) fn same_f64(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

/// Asserts `t` holds `expected` bit for bit (and has `dims`).
pub(crate) fn check_f32(t: &Tensor, dims: &[usize], expected: &[f32]) {
    assert_eq!(t.dims(), dims, "dims");
    let got = t.to_vec::<f32>().expect("download");
    assert!(
        same_f32(&got, expected),
        "got {got:?}\nexpected {expected:?}"
    );
}

/// Row-major host strides.
pub(crate) fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

/// Every coordinate of `dims` in row-major order.
pub(crate) fn coords(dims: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = dims.iter().product();
    let st = strides(dims);
    (0..n)
        .map(|i| (0..dims.len()).map(|d| (i / st[d]) % dims[d]).collect())
        .collect()
}

/// Test values with the edge cases: NaN, ±inf, -0.0, subnormals, mixed magnitudes.
pub(crate) fn values(n: usize, seed: u32) -> Vec<f32> {
    const EDGE: [f32; 6] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 1e-40, 0.0];
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            if i % 7 == 3 {
                EDGE[(s as usize) % EDGE.len()]
            } else {
                (s % 2001) as f32 / 250.0 - 4.0
            }
        })
        .collect()
}

/// Finite test values only.
pub(crate) fn finite(n: usize, seed: u32) -> Vec<f32> {
    values(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if v.is_finite() {
                v
            } else {
                i as f32 * 0.25 - 1.0
            }
        })
        .collect()
}

/// The op named in an error, for checking that errors name what failed.
pub(crate) fn err_text(r: Result<Tensor>) -> String {
    match r {
        Ok(t) => panic!("expected an error, got a tensor of shape {:?}", t.dims()),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.is_empty());
            let _: &Error = &e;
            s
        }
    }
}

/// Row-major coordinates of element `e` of `dims`.
pub(crate) fn coords_of(mut e: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        c[d] = e % dims[d];
        e /= dims[d];
    }
    c
}

/// The row-major offset of coordinates `c` in `dims`.
pub(crate) fn offset(c: &[usize], dims: &[usize]) -> usize {
    c.iter().zip(dims).fold(0, |acc, (&x, &d)| acc * d + x)
}
