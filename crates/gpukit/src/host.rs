//! One-call helpers over `&[f64]` (the seed's kernels.nu): upload, run one op, download.
//! Each computes in f64 on the kit's device and returns the same bits on every backend.

use gpukit_core::{DType, Error, Kit, Result};

use crate::ops;

fn same_len(what: &str, a: &[f64], b: &[f64]) -> Result<()> {
    if a.len() == b.len() {
        Ok(())
    } else {
        Err(Error::Length {
            what: what.to_string(),
            expected: a.len(),
            got: b.len(),
        })
    }
}

fn binary(kit: &Kit, op: ops::BinaryOp, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    same_len(op.name(), a, b)?;
    let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
    ops::binary(kit, op, &ba, &ba, &bb)?;
    ba.download()
}

/// `a + b` elementwise. Errors: [`Error::Length`] if the lengths differ; device errors.
pub fn add(kit: &Kit, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    binary(kit, ops::BinaryOp::Add, a, b)
}

/// `a - b` elementwise. Errors: as [`add`].
pub fn sub(kit: &Kit, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    binary(kit, ops::BinaryOp::Sub, a, b)
}

/// `a * b` elementwise. Errors: as [`add`].
pub fn mul(kit: &Kit, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    binary(kit, ops::BinaryOp::Mul, a, b)
}

/// `a / b` elementwise. Errors: as [`add`].
pub fn div(kit: &Kit, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    binary(kit, ops::BinaryOp::Div, a, b)
}

/// `f(x)` for every element, with a user map ([`ops::MapFn`]; its f64 form runs).
/// Errors: device errors.
pub fn map(kit: &Kit, f: &ops::MapFn, a: &[f64]) -> Result<Vec<f64>> {
    let ba = kit.upload(a)?;
    ops::map(kit, f, &ba, &ba)?;
    ba.download()
}

/// `a[m×k] · b[k×n]`, row-major, each output a fused multiply-add chain over k ascending.
/// Errors: [`Error::Length`] when a slice does not hold its matrix; device errors.
pub fn matmul(kit: &Kit, a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Result<Vec<f64>> {
    let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
    let c = kit.alloc(DType::F64, ops::numel(&[m, n])?)?;
    ops::matmul(kit, &c, &ba, &bb, m, k, n)?;
    c.download()
}

/// The sum of `a` in the contract's reduction shape (not a sequential left fold).
/// Errors: device errors.
pub fn reduce_sum(kit: &Kit, a: &[f64]) -> Result<f64> {
    let ba = kit.upload(a)?;
    let out = kit.alloc(DType::F64, 1)?;
    ops::sum(kit, &out, &ba)?;
    Ok(out.download::<f64>()?[0])
}

/// `Σ a_i·b_i` in the reduction shape with fused multiply-adds.
/// Errors: [`Error::Length`] if the lengths differ; device errors.
pub fn dot(kit: &Kit, a: &[f64], b: &[f64]) -> Result<f64> {
    same_len("dot", a, b)?;
    let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
    let out = kit.alloc(DType::F64, 1)?;
    ops::dot(kit, &out, &ba, &bb)?;
    Ok(out.download::<f64>()?[0])
}
