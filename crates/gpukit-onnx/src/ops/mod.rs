//! The ONNX ops gpukit runs: one [`OpSpec`] per op (its attributes, a load-time check
//! and the function that runs it through the tensor API). Families: `math`
//! (elementwise, comparisons, logic, casts), `shape` (shape, movement and glue ops),
//! `nn` (matmul, convolution, pooling, normalisation, reductions, indexing), `attention`,
//! `act` (ops composed of a few calls: activations, LRN, Trilu, Einsum).

mod act;
mod attention;
mod math;
pub(crate) mod narrow;
mod nn;
mod shape;

use gpukit_core::{DType, Kit};
use gpukit_tensor::Tensor;

use crate::attrs::Attrs;
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::Value;

/// What an op sees when it runs.
pub(crate) struct Ctx<'a> {
    pub kit: &'a Kit,
    pub attrs: &'a Attrs,
    /// The opset version of the default domain (ops whose signature changed read it).
    pub opset: i64,
    /// How many outputs the node lists (optional trailing outputs may be asked for).
    pub nout: usize,
}

/// Runs an op on its inputs (`None`: an absent optional input). The inputs are the
/// op's own handles: an op may take one out (`take`) and write its result over it when
/// nothing else holds that buffer (the session drops its handle on a value whose last
/// reader this is; constants, graph inputs and outputs stay held elsewhere).
pub(crate) type RunFn = fn(&Ctx<'_>, &mut [Option<Value>]) -> OpResult<Vec<Value>>;
/// Checks a node's attributes at load time: (attributes, opset, inputs, outputs).
pub(crate) type CheckFn = fn(&Attrs, i64, usize, usize) -> OpResult<()>;

/// One supported op.
pub(crate) struct OpSpec {
    pub name: &'static str,
    /// Every attribute the op understands; any other is refused at load time.
    pub attrs: &'static [&'static str],
    pub max_inputs: usize,
    pub check: Option<CheckFn>,
    pub run: RunFn,
}

impl std::fmt::Debug for OpSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every op's spec, family by family.
fn all() -> impl Iterator<Item = &'static OpSpec> {
    math::SPECS
        .iter()
        .chain(shape::SPECS)
        .chain(nn::SPECS)
        .chain(act::SPECS)
}

/// The spec of `op`, or `None` when gpukit does not run it.
pub(crate) fn find(op: &str) -> Option<&'static OpSpec> {
    all().find(|s| s.name == op)
}

/// Every ONNX op gpukit runs (default domain), sorted by name (docs/onnx.md lists
/// them; the backend-test runner reports them).
pub fn supported_ops() -> Vec<&'static str> {
    let mut v: Vec<&str> = all().map(|s| s.name).collect();
    v.sort_unstable();
    v
}

// ---- helpers shared by the families ------------------------------------------------

/// An op's inputs (`None`: an absent optional input).
pub(crate) type X<'a> = &'a [Option<Value>];

/// A spec without a load-time check.
pub(crate) const fn spec(
    name: &'static str,
    attrs: &'static [&'static str],
    max_inputs: usize,
    run: RunFn,
) -> OpSpec {
    OpSpec {
        name,
        attrs,
        max_inputs,
        check: None,
        run,
    }
}

/// Input `i` as a floating-point tensor (an integer or bool one is an error).
pub(crate) fn float_in(x: X<'_>, i: usize) -> OpResult<&Tensor> {
    let v = req(x, i)?;
    if !v.ty.is_float() {
        return Err(OpError::Invalid(format!(
            "input {i} is {}, the op takes floating-point tensors",
            v.ty
        )));
    }
    Ok(&v.t)
}

/// Input `i`, moved out of the op's inputs (which the op requires).
pub(crate) fn take(x: &mut [Option<Value>], i: usize) -> OpResult<Value> {
    x.get_mut(i)
        .and_then(Option::take)
        .ok_or_else(|| OpError::Invalid(format!("input {i} is required")))
}

/// Input `i`, which the op requires.
pub(crate) fn req(x: &[Option<Value>], i: usize) -> OpResult<&Value> {
    x.get(i)
        .and_then(Option::as_ref)
        .ok_or_else(|| OpError::Invalid(format!("input {i} is required")))
}

/// Optional input `i`.
pub(crate) fn opt(x: &[Option<Value>], i: usize) -> Option<&Value> {
    x.get(i).and_then(Option::as_ref)
}

/// A value of the tensor's dtype.
pub(crate) fn val(t: Tensor) -> Value {
    Value::new(t)
}

/// A bool value from an op's 0/1 i32 mask.
pub(crate) fn boolv(t: Tensor) -> OpResult<Value> {
    Ok(Value::bool_mask(t)?)
}

/// A result of the same ONNX type as `like` (bool stays bool).
pub(crate) fn same(like: &Value, t: Tensor) -> Value {
    if like.ty == ElemType::Bool && t.dtype() == DType::I32 {
        Value {
            t,
            ty: ElemType::Bool,
        }
    } else {
        Value::new(t)
    }
}

/// An integer operand's values on the host (axes, shapes, pads, repeats, indices).
pub(crate) fn host_ints(v: &Value, what: &str) -> OpResult<Vec<i64>> {
    if v.ty.is_float() {
        return Err(OpError::Invalid(format!(
            "{what} must be an integer tensor, got {}",
            v.ty
        )));
    }
    Ok(v.t.to_dtype(DType::I64)?.to_vec::<i64>()?)
}

/// A one-element operand as f64 (exact for every dtype gpukit has but i64 beyond 2^53).
pub(crate) fn host_scalar(v: &Value, what: &str) -> OpResult<f64> {
    if v.t.numel() != 1 {
        return Err(OpError::Invalid(format!(
            "{what} must have one element, it has dims {:?}",
            v.t.dims()
        )));
    }
    Ok(v.t.to_dtype(DType::F64)?.to_vec::<f64>()?[0])
}

/// ONNX's axis: negative counts from the end; out of `[-rank, rank)` is an error.
pub(crate) fn norm_axis(axis: i64, rank: usize) -> OpResult<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(OpError::Invalid(format!(
            "axis {axis} out of range for rank {rank}"
        )));
    }
    Ok(if axis < 0 { axis + r } else { axis } as usize)
}

/// The dims `start..end` that ONNX's Shape returns: negative bounds count from the
/// end, both clamped to `0..=rank`, an empty range when `end < start`.
pub(crate) fn shape_range(rank: usize, start: i64, end: i64) -> (usize, usize) {
    let r = rank as i64;
    let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
    let s = clamp(start);
    (s, clamp(end).max(s))
}

/// Non-negative sizes from ints.
pub(crate) fn sizes(v: &[i64], what: &str) -> OpResult<Vec<usize>> {
    v.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| OpError::Invalid(format!("{what}: negative value {d}")))
        })
        .collect()
}

/// An enumerated string attribute's check: `Unsupported` names the value.
pub(crate) fn one_of(attrs: &Attrs, key: &str, default: &str, allowed: &[&str]) -> OpResult<()> {
    let v = attrs.string(key, default)?;
    if allowed.contains(&v.as_str()) {
        Ok(())
    } else {
        Err(OpError::Unsupported(format!("{key} = \"{v}\"")))
    }
}

/// The `reduction` attribute of ScatterElements and ScatterND.
pub(crate) fn check_reduction(a: &Attrs, _: i64, _: usize, _: usize) -> OpResult<()> {
    one_of(
        a,
        "reduction",
        "none",
        &["none", "add", "mul", "max", "min"],
    )
}

/// The dims as i64 (for reshape).
pub(crate) fn dims_i64(d: &[usize]) -> Vec<i64> {
    d.iter().map(|&x| x as i64).collect()
}
