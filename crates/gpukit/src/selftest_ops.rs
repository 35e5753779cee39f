//! Self-checks of the operator family: each op at each dtype on one random case
//! (with NaN, ±inf, -0.0 and subnormals among the values), compared bit for bit with
//! the reference oracle.

use gpukit_core::numeric::{Arith, BinaryOp, FloatElement, UnaryOp};
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, mismatch};

fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            if T::DTYPE.is_float() {
                let v = rng.f32_with_specials() as f64 * 64.0;
                T::from_f64(v).unwrap_or_default()
            } else {
                T::from_f64((rng.next_u64() % 20_001) as f64 - 10_000.0).unwrap_or_default()
            }
        })
        .collect()
}

fn binary<T: Arith>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x11);
    let n = 30_011;
    let (a, b) = (rand_vec::<T>(&mut rng, n), rand_vec::<T>(&mut rng, n));
    let (ba, bb, out) = (kit.upload(&a)?, kit.upload(&b)?, kit.alloc(T::DTYPE, n)?);
    for op in BinaryOp::ALL {
        ops::binary(kit, op, &out, &ba, &bb)?;
        if let Some(m) = mismatch(&out.download::<T>()?, &reference::binary(op, &a, &b)) {
            return Ok(Some(format!("{}: {m}", op.name())));
        }
    }
    Ok(None)
}

fn broadcast<T: Arith>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x12);
    // [7, 1, 33] op [1, 5, 33] -> [7, 5, 33]
    let dims = [7usize, 5, 33];
    let (a, b) = (
        rand_vec::<T>(&mut rng, 7 * 33),
        rand_vec::<T>(&mut rng, 5 * 33),
    );
    let (astr, bstr) = ([33usize, 0, 1], [0usize, 33, 1]);
    let (ba, bb, out) = (
        kit.upload(&a)?,
        kit.upload(&b)?,
        kit.alloc(T::DTYPE, 7 * 5 * 33)?,
    );
    for op in BinaryOp::ALL {
        ops::binary_broadcast(kit, op, &out, &dims, &ba, &astr, &bb, &bstr)?;
        let want = reference::binary_broadcast(op, &dims, &a, &astr, &b, &bstr);
        if let Some(m) = mismatch(&out.download::<T>()?, &want) {
            return Ok(Some(format!("{}: {m}", op.name())));
        }
    }
    Ok(None)
}

fn unary<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x13);
    let a = rand_vec::<T>(&mut rng, 20_011);
    let (ba, out) = (kit.upload(&a)?, kit.alloc(T::DTYPE, a.len())?);
    for op in UnaryOp::ALL {
        ops::unary(kit, op, &out, &ba)?;
        if let Some(m) = mismatch(&out.download::<T>()?, &reference::unary(op, &a)) {
            return Ok(Some(format!("{}: {m}", op.name())));
        }
    }
    Ok(None)
}

fn matmul<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x14);
    let (m, k, n) = (67, 129, 45);
    let (a, b) = (
        rand_vec::<T>(&mut rng, m * k),
        rand_vec::<T>(&mut rng, k * n),
    );
    let (ba, bb, c) = (
        kit.upload(&a)?,
        kit.upload(&b)?,
        kit.alloc(T::DTYPE, m * n)?,
    );
    ops::matmul(kit, &c, &ba, &bb, m, k, n)?;
    Ok(mismatch(
        &c.download::<T>()?,
        &reference::matmul(&a, &b, m, k, n),
    ))
}

fn bmm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x15);
    let (batch, m, k, n) = (3, 17, 33, 9);
    let (a, b) = (
        rand_vec::<T>(&mut rng, batch * m * k),
        rand_vec::<T>(&mut rng, k * n),
    );
    let (ba, bb, c) = (
        kit.upload(&a)?,
        kit.upload(&b)?,
        kit.alloc(T::DTYPE, batch * m * n)?,
    );
    ops::bmm(kit, &c, &ba, &bb, batch, m, k, n, m * k, 0)?;
    if let Some(e) = mismatch(
        &c.download::<T>()?,
        &reference::bmm(&a, &b, batch, m, k, n, m * k, 0),
    ) {
        return Ok(Some(e));
    }
    // numpy batch broadcasting (crates/gpukit/src/selftest_linalg.rs).
    crate::selftest_linalg::bmm_broadcast::<T>(kit, seed)
}

fn gather_scatter<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x16);
    let (outer, axis, inner) = (3, 11, 5);
    let data = rand_vec::<T>(&mut rng, outer * axis * inner);
    let idx: Vec<i64> = (0..7).map(|_| (rng.next_u64() % 22) as i64 - 11).collect();
    let upd = rand_vec::<T>(&mut rng, outer * idx.len() * inner);
    let (bd, bi, bu) = (kit.upload(&data)?, kit.upload(&idx)?, kit.upload(&upd)?);
    let out = kit.alloc(T::DTYPE, outer * idx.len() * inner)?;
    ops::gather(kit, &out, &bd, &bi, outer, axis, inner)?;
    if let Some(m) = mismatch(
        &out.download::<T>()?,
        &reference::gather(&data, &idx, outer, axis, inner)?,
    ) {
        return Ok(Some(format!("gather: {m}")));
    }
    let y = kit.alloc(T::DTYPE, data.len())?;
    ops::scatter(kit, &y, &bd, &bi, &bu, outer, axis, inner)?;
    let want = reference::scatter(&data, &idx, &upd, outer, axis, inner)?;
    Ok(mismatch(&y.download::<T>()?, &want).map(|m| format!("scatter: {m}")))
}

fn softmax<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x17);
    let (rows, cols) = (5, 9001);
    let a = rand_vec::<T>(&mut rng, rows * cols);
    let (ba, out) = (kit.upload(&a)?, kit.alloc(T::DTYPE, a.len())?);
    ops::softmax_rows(kit, &out, &ba, rows, cols)?;
    Ok(mismatch(
        &out.download::<T>()?,
        &reference::softmax_rows(&a, rows, cols),
    ))
}

fn sum<T: Arith>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x18);
    let a = rand_vec::<T>(&mut rng, 100_003);
    let (ba, out) = (kit.upload(&a)?, kit.alloc(T::DTYPE, 1)?);
    ops::sum(kit, &out, &ba)?;
    Ok(mismatch(&out.download::<T>()?, &[reference::sum(&a)]))
}

fn dot<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x19);
    let (a, b) = (
        rand_vec::<T>(&mut rng, 100_003),
        rand_vec::<T>(&mut rng, 100_003),
    );
    let (ba, bb, out) = (kit.upload(&a)?, kit.upload(&b)?, kit.alloc(T::DTYPE, 1)?);
    ops::dot(kit, &out, &ba, &bb)?;
    Ok(mismatch(&out.download::<T>()?, &[reference::dot(&a, &b)]))
}

macro_rules! float_checks {
    ($v:ident, $op:literal, $f:ident) => {
        $v.push(Check {
            op: $op,
            dtype: DType::F32,
            run: $f::<f32>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::F64,
            run: $f::<f64>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::F16,
            run: $f::<gpukit_core::half::f16>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::BF16,
            run: $f::<gpukit_core::half::bf16>,
        });
    };
}

macro_rules! all_checks {
    ($v:ident, $op:literal, $f:ident) => {
        float_checks!($v, $op, $f);
        $v.push(Check {
            op: $op,
            dtype: DType::I64,
            run: $f::<i64>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::I32,
            run: $f::<i32>,
        });
    };
}

/// The operator family's checks, in a fixed order.
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(48);
    all_checks!(v, "add/sub/mul/div", binary);
    all_checks!(v, "broadcast", broadcast);
    float_checks!(v, "unary maps", unary);
    float_checks!(v, "matmul", matmul);
    float_checks!(v, "bmm", bmm);
    all_checks!(v, "gather/scatter", gather_scatter);
    float_checks!(v, "softmax", softmax);
    all_checks!(v, "sum", sum);
    float_checks!(v, "dot", dot);
    v
}
