//! Ops on the narrow element types (int8, uint8, int16, uint16, uint32, uint64, the 4-
//! and 2-bit integers, float8 and float4), each stored exactly in a wider gpukit dtype
//! (`elem.rs`). A node with a narrow input runs here or not at all:
//!
//! - **arithmetic** (Add, Sub, Mul, Div) computes in the storage dtype, whose integer
//!   arithmetic wraps, then wraps the result to the type's width: the same value as
//!   the narrow type's own wrapping arithmetic, because 2^width divides 2^32 and 2^64.
//!   uint64 keeps its bit pattern in i64, where Add, Sub and Mul wrap alike; its Div
//!   needs the unsigned order and runs only on values below 2^63 (an error otherwise).
//! - **comparisons, Max, Min** compare the stored values, which keep the order, but
//!   for uint64, whose bit patterns are compared after adding 2^63 (wrapping): the
//!   signed order of `x + 2^63` is the unsigned order of `x`.
//! - **Clip** on the integer types but uint64, bounds of the same type; **TopK** on the
//!   integer types (uint64 by the unsigned order); **Pow** of a float base with a
//!   narrow integer exponent.
//! - **Cast, CastLike** (`math.rs`'s `cast`): see [`cast_narrow`].
//! - **data movement** (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
//!   Expand, Slice, Concat, Split, Gather, GatherElements, Tile, Where) copies stored
//!   values and keeps the type; Shape and Size read only dims.
//!
//! Any other op on a narrow type is an error naming the node, the op and the type.

use gpukit_core::DType;
use gpukit_ops::{BinaryOp, CmpOp, LogicOp};
use gpukit_tensor::Tensor;

use super::{Ctx, X, find, host_scalar, req};
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::{Value, mask};

/// The first narrow type among the inputs, if any (each op below checks its operands'
/// types).
pub(crate) fn involved(x: X<'_>) -> Option<ElemType> {
    x.iter().flatten().map(|v| v.ty).find(|t| t.is_narrow())
}

/// The inputs of a data-movement op that carry its data (the others are indices,
/// shapes, axes or a condition).
fn data_inputs(op: &str, n: usize) -> std::ops::Range<usize> {
    match op {
        "Concat" => 0..n,
        "Where" => 1..n.min(3),
        _ => 0..n.min(1),
    }
}

/// Ops that copy stored values: their outputs of the storage dtype take the type.
const MOVEMENT: &[&str] = &[
    "Identity",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Expand",
    "Slice",
    "Concat",
    "Split",
    "Gather",
    "GatherElements",
    "Tile",
    "Where",
];

/// Whether `op` takes narrow types at all (which ones, and on which inputs, the run
/// checks): the load-time check refuses any other op fed by a narrow graph input or
/// initializer.
pub(crate) fn accepts(op: &str) -> bool {
    MOVEMENT.contains(&op)
        || [
            "Add",
            "Sub",
            "Mul",
            "Div",
            "Equal",
            "Less",
            "LessOrEqual",
            "Greater",
            "GreaterOrEqual",
            "Max",
            "Min",
            "Clip",
            "Cast",
            "CastLike",
            "Shape",
            "Size",
            "Pow",
            "TopK",
        ]
        .contains(&op)
}

/// Runs `op` on inputs of which some have the narrow type `ty`.
pub(crate) fn run(
    op: &str,
    c: &Ctx<'_>,
    x: &mut [Option<Value>],
    ty: ElemType,
) -> OpResult<Vec<Value>> {
    let spec = find(op).ok_or_else(|| OpError::Unsupported(format!("op {op}")))?;
    let retag = |outs: Vec<Value>| -> Vec<Value> {
        outs.into_iter()
            .map(|v| {
                if v.t.dtype() == ty.dtype() && v.ty != ElemType::Bool {
                    Value { t: v.t, ty }
                } else {
                    v
                }
            })
            .collect()
    };
    match op {
        "Add" | "Sub" | "Mul" | "Div" => {
            if c.attrs.has("broadcast") || c.attrs.has("axis") {
                return Err(OpError::Unsupported(format!(
                    "the opset-1 broadcast attributes on {ty} tensors"
                )));
            }
            let (a, b) = (same_ty(x, 0, ty)?, same_ty(x, 1, ty)?);
            let bop = match op {
                "Add" => BinaryOp::Add,
                "Sub" => BinaryOp::Sub,
                "Mul" => BinaryOp::Mul,
                _ => BinaryOp::Div,
            };
            if ty.is_float() {
                return Err(unsupported(op, ty));
            }
            if ty == ElemType::U64 && bop == BinaryOp::Div {
                below_2_63(a, "divided")?;
                below_2_63(b, "divided")?;
            }
            let r = a.binary(bop, b)?;
            Ok(vec![Value {
                t: wrap(&r, ty)?,
                ty,
            }])
        }
        "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" => {
            let (a, b) = (same_ty(x, 0, ty)?, same_ty(x, 1, ty)?);
            let cmp = match op {
                "Equal" => CmpOp::Eq,
                "Less" => CmpOp::Lt,
                "LessOrEqual" => CmpOp::Le,
                "Greater" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            let (a, b) = (unsigned_key(a, ty)?, unsigned_key(b, ty)?);
            Ok(vec![Value::bool_mask(a.compare_as(
                cmp,
                &b,
                DType::I32,
            )?)?])
        }
        "Max" | "Min" => {
            let mut keyed: Vec<Option<Value>> = x
                .iter()
                .map(|v| {
                    v.as_ref()
                        .map(|v| {
                            let t = same_ty_v(v, ty)?;
                            Ok::<_, OpError>(Value {
                                t: unsigned_key(t, ty)?,
                                ty: ElemType::of_dtype(t.dtype()),
                            })
                        })
                        .transpose()
                })
                .collect::<OpResult<_>>()?;
            let out = (spec.run)(c, &mut keyed)?;
            let first = out
                .first()
                .ok_or_else(|| OpError::Invalid(format!("{op} gave no output")))?;
            let t = unsigned_key(&first.t, ty)?;
            Ok(vec![Value { t, ty }])
        }
        "Clip" if !ty.is_float() && ty != ElemType::U64 && c.opset >= 11 => {
            // `min(max(x, lo), hi)` on the stored values, bounds of the same type.
            let mut t = same_ty(x, 0, ty)?.clone();
            for (i, op) in [(1, CmpOp::Lt), (2, CmpOp::Gt)] {
                if let Some(v) = x.get(i).and_then(Option::as_ref) {
                    same_ty_v(v, ty)?;
                    let b = host_scalar(v, "Clip's bound")?;
                    let bound = Tensor::full(t.kit(), &[], b, t.dtype())?;
                    t = mask(&t, op, b)?.where_(&bound, &t)?;
                }
            }
            Ok(vec![Value { t, ty }])
        }
        "Cast" | "CastLike" | "Shape" | "Size" => (spec.run)(c, x),
        // A float base with a narrow integer exponent: the exponent's value as int64
        // (exact; uint64 below 2^63), then Pow as for int64.
        "Pow" if req(x, 0)?.ty.is_float() && !req(x, 0)?.ty.is_narrow() && !ty.is_float() => {
            let e = req(x, 1)?;
            if e.ty == ElemType::U64 {
                below_2_63(&e.t, "as an exponent")?;
            }
            let e = Value::new(e.t.to_dtype(DType::I64)?);
            (spec.run)(c, &mut [x[0].clone(), Some(e)])
        }
        // TopK on the unsigned order of uint64 (the keys above), the values mapped back;
        // the indices stay int64. Other narrow types compare as stored.
        "TopK" if !ty.is_float() => {
            let keyed = Value {
                t: unsigned_key(same_ty(x, 0, ty)?, ty)?,
                ty: ElemType::of_dtype(ty.dtype()),
            };
            let mut ins = x.to_vec();
            ins[0] = Some(keyed);
            let mut out = (spec.run)(c, &mut ins)?;
            if let Some(v) = out.first_mut() {
                *v = Value {
                    t: unsigned_key(&v.t, ty)?,
                    ty,
                };
            }
            Ok(out)
        }
        _ if MOVEMENT.contains(&op) => {
            for i in data_inputs(op, x.len()) {
                if let Some(v) = x.get(i).and_then(Option::as_ref) {
                    same_ty_v(v, ty)?;
                }
            }
            Ok(retag((spec.run)(c, x)?))
        }
        _ => Err(unsupported(op, ty)),
    }
}

fn unsupported(op: &str, ty: ElemType) -> OpError {
    OpError::Unsupported(format!("{op} on {ty} tensors"))
}

/// Input `i`, which must be of type `ty`.
fn same_ty(x: X<'_>, i: usize, ty: ElemType) -> OpResult<&Tensor> {
    same_ty_v(req(x, i)?, ty)
}

fn same_ty_v(v: &Value, ty: ElemType) -> OpResult<&Tensor> {
    if v.ty != ty {
        return Err(OpError::Invalid(format!(
            "inputs of types {ty} and {} (the op takes one type)",
            v.ty
        )));
    }
    Ok(&v.t)
}

/// For uint64: `x + 2^63` (wrapping), whose signed order is `x`'s unsigned order (and
/// which is its own inverse). Other types: `x` itself.
fn unsigned_key(t: &Tensor, ty: ElemType) -> OpResult<Tensor> {
    if ty != ElemType::U64 {
        return Ok(t.clone());
    }
    let bias = Tensor::full(t.kit(), &[], -(2f64.powi(63)), DType::I64)?;
    Ok(t.add(&bias)?)
}

/// How many elements of a 0/1 mask are set, counted on the device (one value comes
/// back to the host).
fn count(m: &Tensor) -> gpukit_core::Result<i64> {
    let n = m.to_dtype(DType::I64)?.sum()?;
    Ok(n.to_dtype(DType::I64)?.to_vec::<i64>()?[0])
}

/// An error unless every uint64 in `t` is below 2^63 (non-negative as stored).
pub(crate) fn below_2_63(t: &Tensor, what: &str) -> OpResult<()> {
    if t.numel() > 0 && count(&mask(t, CmpOp::Lt, 0.0)?)? != 0 {
        return Err(OpError::Unsupported(format!(
            "uint64 values of 2^63 and above {what} (gpukit stores uint64 in int64)"
        )));
    }
    Ok(())
}

/// `t` (integers in `ty`'s storage dtype, any value) wrapped to `ty`'s width: the value
/// congruent to `t` modulo 2^bits in the type's range. With the storage's truncating
/// division, `r = t - lo - 2^bits·trunc((t - lo) / 2^bits)` lies in `(-2^bits, 2^bits)`
/// and is congruent to `t - lo` even when `t - lo` wraps (2^bits divides the storage's
/// modulus); `r + 2^bits` where negative, then `+ lo`.
pub(crate) fn wrap(t: &Tensor, ty: ElemType) -> OpResult<Tensor> {
    let Some((bits, signed)) = ty.int_width() else {
        return Ok(t.clone());
    };
    let storage = ty.dtype();
    if bits == 64 || (bits == 32 && storage == DType::I32) {
        return Ok(t.clone());
    }
    let t = t.to_dtype(storage)?;
    let kit = t.kit();
    let m = 2f64.powi(bits as i32);
    let lo = if signed { -m / 2.0 } else { 0.0 };
    let s = |v: f64| Tensor::full(kit, &[], v, storage);
    let u = t.sub(&s(lo)?)?;
    let q = u.div(&s(m)?)?;
    let r = u.sub(&q.mul(&s(m)?)?)?;
    let neg = mask(&r, CmpOp::Lt, 0.0)?;
    let r = neg.where_(&r.add(&s(m)?)?, &r)?;
    Ok(r.add(&s(lo)?)?)
}

/// ONNX Cast where the source or the target is narrow.
///
/// - To a narrow integer: from an integer, the value wrapped to the width (C's
///   conversion); from a float, truncated toward zero (NaN: 0, saturating at i64) and
///   wrapped, but for the 4- and 2-bit types, where a truncated value out of the
///   type's range gives 0 (the reference's `ml_dtypes` conversion).
/// - To float8 / float4: rounded on the host as [`crate::minifloat::round`] (with
///   `saturate`, and `round_mode` for float8e8m0).
/// - From a narrow type to a gpukit type: the stored (exact) value converted as
///   gpukit converts it; uint64 values of 2^63 and above only to the integer types.
pub(crate) fn cast_narrow(
    v: &Value,
    to: ElemType,
    saturate: bool,
    round_mode: &str,
) -> OpResult<Value> {
    let src = &v.t;
    if v.ty == ElemType::U64 && to.is_float() {
        below_2_63(src, "converted to a float type")?;
    }
    if to.is_float() && to.is_narrow() {
        let xs = src.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let ys: Vec<f32> = xs
            .iter()
            .map(|&x| crate::minifloat::round(to, x, saturate, round_mode))
            .collect();
        let t = Tensor::from_slice(src.kit(), &ys, src.dims())?;
        return Ok(Value { t, ty: to });
    }
    if let Some((bits, _)) = to.int_width() {
        let storage = to.dtype();
        let t = if v.ty.is_float() {
            let wide = src.to_dtype(DType::I64)?;
            if bits <= 4 {
                let (lo, hi) = range(to).expect("a 4- or 2-bit type");
                let inside = mask(&wide, CmpOp::Ge, lo)?
                    .logical(LogicOp::And, &mask(&wide, CmpOp::Le, hi)?)?;
                let zero = Tensor::zeros(src.kit(), &[], DType::I64)?;
                inside.where_(&wide, &zero)?.to_dtype(storage)?
            } else {
                wrap(&wide, to)?
            }
        } else {
            // Integers (and bools, 0/1): wrapped. i64 to i32 storage keeps the low
            // 32 bits, which wrapping to at most 16 bits does not look past.
            wrap(&src.to_dtype(storage)?, to)?
        };
        return Ok(Value { t, ty: to });
    }
    // A narrow source to a gpukit type: the stored value converts exactly as gpukit's.
    if to == ElemType::Bool {
        return Ok(Value::nonzero(src)?);
    }
    Ok(Value {
        t: src.to_dtype(to.dtype())?,
        ty: to,
    })
}

/// A narrow integer type's range (below 64 bits) as f64.
fn range(ty: ElemType) -> Option<(f64, f64)> {
    ty.int_range().map(|(lo, hi)| (lo as f64, hi as f64))
}

/// Checks a run's input for a narrow integer type: the tensor (of the storage dtype)
/// must hold values of the type's range. An error names the first value outside it.
pub(crate) fn check_range(t: &Tensor, ty: ElemType) -> std::result::Result<(), String> {
    let Some((lo, hi)) = range(ty) else {
        return Ok(());
    };
    if t.numel() == 0 {
        return Ok(());
    }
    // Counted on the device; the values come to the host only to name a bad one.
    let outside = || -> gpukit_core::Result<i64> {
        let below = mask(t, CmpOp::Lt, lo)?;
        count(&below.logical(LogicOp::Or, &mask(t, CmpOp::Gt, hi)?)?)
    };
    if outside().map_err(|e| e.to_string())? == 0 {
        return Ok(());
    }
    let v = t
        .to_dtype(DType::I64)
        .and_then(|w| w.to_vec::<i64>())
        .map_err(|e| e.to_string())?;
    match v.iter().find(|&&x| (x as f64) < lo || (x as f64) > hi) {
        Some(x) => Err(format!("holds {x}, outside {ty}'s range {lo}..={hi}")),
        None => Ok(()),
    }
}

/// Checks a run's input for a float8 / float4 type: the f32 tensor must hold values of
/// the format (NaN only where the format has one). An error names the first other.
pub(crate) fn check_format(t: &Tensor, ty: ElemType) -> std::result::Result<(), String> {
    let v = t
        .to_dtype(DType::F32)
        .and_then(|w| w.to_vec::<f32>())
        .map_err(|e| e.to_string())?;
    let holds = |x: f32| {
        let r = crate::minifloat::round(ty, f64::from(x), false, "down");
        if x.is_nan() {
            r.is_nan()
        } else {
            r.to_bits() == x.to_bits()
        }
    };
    match v.iter().find(|&&x| !holds(x)) {
        Some(x) => Err(format!("holds {x}, which is not a {ty} value")),
        None => Ok(()),
    }
}
