//! Elementwise ops: unary math, arithmetic with broadcasting, comparisons, logic,
//! casts, Clip, Where.

use gpukit_core::DType;
use gpukit_ops::{BinaryOp, CmpOp, LogicOp, UnaryOp};
use gpukit_tensor::Tensor;

use super::{OpSpec, X, boolv, float_in, host_scalar, one_of, opt, req, same, spec, take, val};
use crate::attrs::Attrs;
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::{Value, mask};

pub(super) static SPECS: &[OpSpec] = &[
    spec("Abs", &[], 1, |_, x| Ok(vec![val(req(x, 0)?.t.abs()?)])),
    spec("Neg", &[], 1, |_, x| Ok(vec![val(req(x, 0)?.t.neg()?)])),
    spec("Relu", &[], 1, |_, x| unary(x, UnaryOp::Relu)),
    spec("Exp", &[], 1, |_, x| unary(x, UnaryOp::Exp)),
    spec("Log", &[], 1, |_, x| unary(x, UnaryOp::Log)),
    spec("Tanh", &[], 1, |_, x| unary(x, UnaryOp::Tanh)),
    spec("Sigmoid", &[], 1, |_, x| unary(x, UnaryOp::Sigmoid)),
    spec("Sqrt", &[], 1, |_, x| unary(x, UnaryOp::Sqrt)),
    spec("Softplus", &[], 1, |_, x| unary(x, UnaryOp::Softplus)),
    spec("Sin", &[], 1, |_, x| unary(x, UnaryOp::Sin)),
    spec("Cos", &[], 1, |_, x| unary(x, UnaryOp::Cos)),
    spec("Erf", &[], 1, |_, x| Ok(vec![val(float_in(x, 0)?.erf()?)])),
    OpSpec {
        check: Some(|a, _, _, _| one_of(a, "approximate", "none", &["none", "tanh"])),
        ..spec("Gelu", &["approximate"], 1, |c, x| {
            let t = float_in(x, 0)?;
            Ok(vec![val(
                match c.attrs.string("approximate", "none")?.as_str() {
                    "tanh" => t.gelu_tanh()?,
                    _ => t.gelu()?,
                },
            )])
        })
    },
    spec("LeakyRelu", &["alpha"], 1, |c, x| {
        Ok(vec![val(
            float_in(x, 0)?.leaky_relu(c.attrs.float("alpha", 0.01)?)?
        )])
    }),
    spec("PRelu", &[], 2, |c, x| {
        // slope · x where x < 0 (an exact product), else x. Before opset 7 a 1-D slope
        // of the channel count applies along axis 1.
        let (t, s) = (float_in(x, 0)?, &req(x, 1)?.t);
        let legacy;
        let s = if c.opset < 7 && s.rank() == 1 && t.rank() > 2 && t.dims()[1] == s.dims()[0] {
            let mut d = vec![s.dims()[0] as i64];
            d.extend(std::iter::repeat_n(1, t.rank() - 2));
            legacy = s.reshape(&d)?;
            &legacy
        } else {
            s
        };
        let neg = mask(t, CmpOp::Lt, 0.0)?;
        Ok(vec![val(neg.where_(&t.mul(s)?, t)?)])
    }),
    spec("Reciprocal", &[], 1, |_, x| {
        let t = float_in(x, 0)?;
        let one = Tensor::full(t.kit(), &[], 1.0, t.dtype())?;
        Ok(vec![val(one.div(t)?)])
    }),
    spec("Identity", &[], 1, |_, x| Ok(vec![req(x, 0)?.clone()])),
    spec("Add", &["broadcast", "axis"], 2, |c, x| {
        binary(c, x, BinaryOp::Add)
    }),
    spec("Sub", &["broadcast", "axis"], 2, |c, x| {
        binary(c, x, BinaryOp::Sub)
    }),
    spec("Mul", &["broadcast", "axis"], 2, |c, x| {
        binary(c, x, BinaryOp::Mul)
    }),
    spec("Div", &["broadcast", "axis"], 2, |c, x| {
        binary(c, x, BinaryOp::Div)
    }),
    spec("Pow", &[], 2, |_, x| {
        let (b, e) = (req(x, 0)?, req(x, 1)?);
        if !b.ty.is_float() && e.ty.is_float() {
            // An integer base with a float exponent (ONNX allows it; the result has
            // the base's type): computed in f64 and converted back, as the
            // reference's numpy promotion does.
            let y = b.t.to_dtype(DType::F64)?.pow(&e.t.to_dtype(DType::F64)?)?;
            return Ok(vec![val(y.to_dtype(b.t.dtype())?)]);
        }
        Ok(vec![val(b.t.pow(&e.t)?)])
    }),
    spec("Sum", &[], usize::MAX, |_, x| variadic(x, "Sum")),
    spec("Mean", &[], usize::MAX, |_, x| variadic(x, "Mean")),
    spec("Max", &[], usize::MAX, |_, x| variadic(x, "Max")),
    spec("Min", &[], usize::MAX, |_, x| variadic(x, "Min")),
    spec("Equal", &[], 2, |_, x| compare(x, CmpOp::Eq)),
    spec("Less", &[], 2, |_, x| compare(x, CmpOp::Lt)),
    spec("LessOrEqual", &[], 2, |_, x| compare(x, CmpOp::Le)),
    spec("Greater", &[], 2, |_, x| compare(x, CmpOp::Gt)),
    spec("GreaterOrEqual", &[], 2, |_, x| compare(x, CmpOp::Ge)),
    spec("IsNaN", &[], 1, |_, x| {
        let t = float_in(x, 0)?;
        Ok(vec![boolv(t.compare_as(CmpOp::Ne, t, DType::I32)?)?])
    }),
    OpSpec {
        check: None,
        ..spec(
            "IsInf",
            &["detect_negative", "detect_positive"],
            1,
            |c, x| {
                let t = float_in(x, 0)?;
                let (neg, pos) = (
                    c.attrs.flag("detect_negative", true)?,
                    c.attrs.flag("detect_positive", true)?,
                );
                let hit = |v: f64| mask(t, CmpOp::Eq, v);
                let m = match (neg, pos) {
                    (true, true) => {
                        hit(f64::NEG_INFINITY)?.logical(LogicOp::Or, &hit(f64::INFINITY)?)?
                    }
                    (true, false) => hit(f64::NEG_INFINITY)?,
                    (false, true) => hit(f64::INFINITY)?,
                    (false, false) => Tensor::zeros(t.kit(), t.dims(), DType::I32)?,
                };
                Ok(vec![boolv(m)?])
            },
        )
    },
    spec("And", &[], 2, |_, x| logic(x, LogicOp::And)),
    spec("Or", &[], 2, |_, x| logic(x, LogicOp::Or)),
    spec("Xor", &[], 2, |_, x| logic(x, LogicOp::Xor)),
    spec("Not", &[], 1, |_, x| {
        let v = bool_in(x, 0)?;
        Ok(vec![boolv(v.t.not()?)?])
    }),
    spec("Where", &[], 3, |_, x| {
        let c = bool_in(x, 0)?;
        let (a, b) = (req(x, 1)?, req(x, 2)?);
        Ok(vec![same(a, c.t.where_(&a.t, &b.t)?)])
    }),
    OpSpec {
        check: Some(check_cast),
        ..spec("Cast", &["to", "saturate", "round_mode"], 1, |c, x| {
            let to = cast_target(c.attrs)?;
            Ok(vec![cast(c, req(x, 0)?, to)?])
        })
    },
    OpSpec {
        check: Some(|a, _, _, _| one_of(a, "round_mode", "up", &["up", "down", "nearest"])),
        ..spec("CastLike", &["saturate", "round_mode"], 2, |c, x| {
            Ok(vec![cast(c, req(x, 0)?, req(x, 1)?.ty)?])
        })
    },
    spec("Clip", &["min", "max"], 3, |c, x| {
        let t = req(x, 0)?;
        let (lo, hi) = if c.opset < 11 {
            (
                c.attrs.float("min", f64::from(f32::MIN))?,
                c.attrs.float("max", f64::from(f32::MAX))?,
            )
        } else {
            let b = |i: usize, d: f64| -> OpResult<f64> {
                opt(x, i).map_or(Ok(d), |v| host_scalar(v, "Clip's bound"))
            };
            (b(1, f64::NEG_INFINITY)?, b(2, f64::INFINITY)?)
        };
        Ok(vec![val(t.t.clip(lo, hi)?)])
    }),
];

/// Input `i` as a bool mask (0/1 i32).
fn bool_in(x: X<'_>, i: usize) -> OpResult<&Value> {
    let v = req(x, i)?;
    if v.ty != ElemType::Bool {
        return Err(OpError::Invalid(format!(
            "input {i} is {}, the op takes bool",
            v.ty
        )));
    }
    Ok(v)
}

/// A unary map, written over its input when the op holds the only handle on it.
fn unary(x: &mut [Option<Value>], op: UnaryOp) -> OpResult<Vec<Value>> {
    float_in(x, 0)?;
    Ok(vec![val(take(x, 0)?.t.unary_owned(op)?)])
}

/// Arithmetic with broadcasting; written over A when the op holds the only handle on
/// it and B has A's dims.
fn binary(c: &super::Ctx<'_>, x: &mut [Option<Value>], op: BinaryOp) -> OpResult<Vec<Value>> {
    let (a, b) = (req(x, 0)?, req(x, 1)?);
    if a.ty == ElemType::Bool || b.ty == ElemType::Bool {
        return Err(OpError::Invalid("arithmetic on bool tensors".into()));
    }
    let b = legacy_broadcast(c, &a.t, &b.t)?;
    Ok(vec![val(take(x, 0)?.t.binary_owned(op, &b)?)])
}

/// Before opset 7, `broadcast = 1` with `axis` aligned B's dims with A's starting at
/// `axis` (default: the trailing dims, numpy's rule): B gets trailing 1-dims.
pub(super) fn legacy_broadcast(c: &super::Ctx<'_>, a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    if !c.attrs.has("broadcast") && !c.attrs.has("axis") {
        return Ok(b.clone());
    }
    if c.opset >= 7 {
        return Err(OpError::Invalid(
            "`broadcast` and `axis` are attributes of opsets before 7".into(),
        ));
    }
    if !c.attrs.flag("broadcast", false)? || !c.attrs.has("axis") {
        return Ok(b.clone());
    }
    let axis = super::norm_axis(c.attrs.int("axis", 0)?, a.rank())?;
    let trailing = a.rank().checked_sub(axis + b.rank()).ok_or_else(|| {
        OpError::Invalid(format!(
            "B of dims {:?} does not fit A of dims {:?} at axis {axis}",
            b.dims(),
            a.dims()
        ))
    })?;
    let mut dims = super::dims_i64(b.dims());
    dims.extend(std::iter::repeat_n(1, trailing));
    Ok(b.reshape(&dims)?)
}

fn compare(x: X<'_>, op: CmpOp) -> OpResult<Vec<Value>> {
    let (a, b) = (req(x, 0)?, req(x, 1)?);
    Ok(vec![boolv(a.t.compare_as(op, &b.t, DType::I32)?)?])
}

fn logic(x: X<'_>, op: LogicOp) -> OpResult<Vec<Value>> {
    let (a, b) = (bool_in(x, 0)?, bool_in(x, 1)?);
    Ok(vec![boolv(a.t.logical(op, &b.t)?)?])
}

/// Sum, Mean, Max, Min over one or more inputs with broadcasting, folded left to right
/// (`((a ∘ b) ∘ c)`, the reference's order). Max and Min propagate NaN and give the
/// first operand on ties (numpy's `maximum`): `a >= b || a != a ? a : b`.
fn variadic(x: X<'_>, op: &str) -> OpResult<Vec<Value>> {
    let xs: Vec<&Value> = x.iter().flatten().collect();
    let Some(first) = xs.first() else {
        return Err(OpError::Invalid(format!("{op} needs at least one input")));
    };
    if xs.iter().any(|v| v.ty == ElemType::Bool) {
        return Err(OpError::Invalid(format!("{op} of bool tensors")));
    }
    let mut acc = first.t.clone();
    for v in &xs[1..] {
        acc = match op {
            "Sum" | "Mean" => acc.add(&v.t)?,
            _ => {
                let cmp = if op == "Max" { CmpOp::Ge } else { CmpOp::Le };
                let pick = acc.compare_as(cmp, &v.t, DType::I32)?;
                let pick = if acc.dtype().is_float() {
                    let nan = acc.compare_as(CmpOp::Ne, &acc, DType::I32)?;
                    pick.logical(LogicOp::Or, &nan)?
                } else {
                    pick
                };
                let dims = gpukit_tensor::broadcast_shapes(op, acc.dims(), v.t.dims())?;
                let a = acc.broadcast_to(&dims)?;
                pick.where_(&a, &v.t.broadcast_to(&dims)?)?
            }
        };
    }
    if op == "Mean" && xs.len() > 1 {
        let n = Tensor::full(acc.kit(), &[], xs.len() as f64, acc.dtype())?;
        acc = acc.div(&n)?;
    }
    if op != "Mean" && xs.len() == 1 {
        return Ok(vec![(*first).clone()]);
    }
    Ok(vec![val(acc)])
}

fn check_cast(a: &Attrs, _: i64, _: usize, _: usize) -> OpResult<()> {
    cast_target(a).map(|_| ())?;
    // round_mode applies to float8e8m0 only.
    one_of(a, "round_mode", "up", &["up", "down", "nearest"])
}

fn cast_target(a: &Attrs) -> OpResult<ElemType> {
    let code = a.int("to", 0)?;
    i32::try_from(code)
        .ok()
        .and_then(ElemType::from_onnx)
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "Cast to {}",
                crate::elem::onnx_type_name(code as i32)
            ))
        })
}

/// ONNX Cast: to bool, nonzero (NaN included) is true; from bool, 0/1; to or from a
/// narrow type, [`super::narrow::cast_narrow`] (`saturate`, default 1, and
/// `round_mode`, default `up`, read there).
fn cast(c: &super::Ctx<'_>, v: &Value, to: ElemType) -> OpResult<Value> {
    if to == v.ty {
        return Ok(v.clone());
    }
    if to.is_narrow() || v.ty.is_narrow() {
        let saturate = c.attrs.flag("saturate", true)?;
        let mode = c.attrs.string("round_mode", "up")?;
        return super::narrow::cast_narrow(v, to, saturate, &mode);
    }
    if to == ElemType::Bool {
        return Ok(Value::nonzero(&v.t)?);
    }
    Ok(val(v.t.to_dtype(to.dtype())?))
}
