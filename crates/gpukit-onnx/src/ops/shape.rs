//! Shape, movement and glue ops: Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
//! Concat, Split, Slice, Transpose, Expand, Tile, Pad, Gather, GatherElements,
//! ScatterND, Constant, ConstantOfShape, Range, Dropout.

use gpukit_core::DType;
use gpukit_tensor::{PadMode, Tensor};

use super::{
    Ctx, OpSpec, X, dims_i64, host_ints, host_scalar, norm_axis, one_of, opt, req, same,
    shape_range, sizes, spec, val,
};
use crate::attrs::{Attr, Attrs};
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::host::HostTensor;
use crate::value::Value;

/// The most elements Range computes on the host (2^26): a larger one is an error, not
/// an allocation a malformed model could make arbitrarily large.
const MAX_RANGE: usize = 1 << 26;

pub(super) static SPECS: &[OpSpec] = &[
    spec("Shape", &["start", "end"], 1, |c, x| {
        let d = req(x, 0)?.dims();
        let r = d.len();
        let (s, e) = shape_range(r, c.attrs.int("start", 0)?, c.attrs.int("end", r as i64)?);
        let v = dims_i64(&d[s..e]);
        Ok(vec![ints(c, &v, &[v.len()])?])
    }),
    spec("Size", &[], 1, |c, x| {
        Ok(vec![ints(c, &[req(x, 0)?.t.numel() as i64], &[])?])
    }),
    spec("Reshape", &["allowzero"], 2, |c, x| {
        let v = req(x, 0)?;
        let mut shape = host_ints(req(x, 1)?, "Reshape's shape")?;
        if c.attrs.int("allowzero", 0)? == 0 {
            for (i, s) in shape.iter_mut().enumerate() {
                if *s == 0 {
                    *s = *v.dims().get(i).ok_or_else(|| {
                        OpError::Invalid(format!("shape {i} is 0 past the input's rank"))
                    })? as i64;
                }
            }
        }
        Ok(vec![same(v, v.t.reshape(&shape)?)])
    }),
    spec("Flatten", &["axis"], 1, |c, x| {
        let v = req(x, 0)?;
        let r = v.dims().len();
        let a = c.attrs.int("axis", 1)?;
        let a = if a == r as i64 { r } else { norm_axis(a, r)? };
        let outer: usize = v.dims()[..a].iter().product();
        let inner: usize = v.dims()[a..].iter().product();
        Ok(vec![same(v, v.t.reshape(&[outer as i64, inner as i64])?)])
    }),
    spec("Squeeze", &["axes"], 2, |c, x| {
        let v = req(x, 0)?;
        let axes = axes_of(c, x, 1)?;
        let Some(axes) = axes else {
            return Ok(vec![same(v, v.t.squeeze_all())]);
        };
        let mut ax = axes
            .iter()
            .map(|&a| norm_axis(a, v.dims().len()))
            .collect::<OpResult<Vec<_>>>()?;
        ax.sort_unstable();
        ax.dedup();
        let mut t = v.t.clone();
        for a in ax.iter().rev() {
            t = t.squeeze(*a as i64)?;
        }
        Ok(vec![same(v, t)])
    }),
    spec("Unsqueeze", &["axes"], 2, |c, x| {
        let v = req(x, 0)?;
        let axes =
            axes_of(c, x, 1)?.ok_or_else(|| OpError::Invalid("Unsqueeze needs axes".into()))?;
        let out_rank = v.dims().len() + axes.len();
        let mut ax = axes
            .iter()
            .map(|&a| norm_axis(a, out_rank))
            .collect::<OpResult<Vec<_>>>()?;
        ax.sort_unstable();
        if ax.windows(2).any(|w| w[0] == w[1]) {
            return Err(OpError::Invalid(format!("repeated axes {axes:?}")));
        }
        let mut t = v.t.clone();
        for a in ax {
            t = t.unsqueeze(a as i64)?;
        }
        Ok(vec![same(v, t)])
    }),
    spec("Concat", &["axis"], usize::MAX, |c, x| {
        let vs: Vec<&Value> = x.iter().flatten().collect();
        let Some(first) = vs.first() else {
            return Err(OpError::Invalid("Concat needs at least one input".into()));
        };
        let ts: Vec<&Tensor> = vs.iter().map(|v| &v.t).collect();
        let axis = c.attrs.int("axis", i64::MIN)?;
        if axis == i64::MIN {
            return Err(OpError::Invalid("Concat needs its axis attribute".into()));
        }
        Ok(vec![same(first, Tensor::concat(&ts, axis)?)])
    }),
    spec("Split", &["axis", "split", "num_outputs"], 2, |c, x| {
        let v = req(x, 0)?;
        let axis = norm_axis(c.attrs.int("axis", 0)?, v.dims().len())?;
        let len = v.dims()[axis];
        let given = if c.opset < 13 {
            c.attrs.ints("split")?
        } else {
            opt(x, 1)
                .map(|s| host_ints(s, "Split's sizes"))
                .transpose()?
        };
        let pieces = match given {
            Some(s) => sizes(&s, "split")?,
            None => {
                let n = c.attrs.int("num_outputs", c.nout as i64)?;
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| OpError::Invalid(format!("num_outputs = {n}")))?;
                if c.attrs.has("num_outputs") {
                    // Opset 18: pieces of ceil(len / n), the last one smaller.
                    let piece = len.div_ceil(n);
                    (0..n)
                        .map(|i| piece.min(len.saturating_sub(i * piece)))
                        .collect()
                } else {
                    if len % n != 0 {
                        return Err(OpError::Invalid(format!(
                            "axis of {len} does not split into {n} equal parts"
                        )));
                    }
                    vec![len / n; n]
                }
            }
        };
        v.t.split(&pieces, axis as i64)?
            .into_iter()
            .map(|p| Ok(same(v, p.contiguous()?)))
            .collect()
    }),
    spec("Slice", &["starts", "ends", "axes"], 5, |c, x| {
        let v = req(x, 0)?;
        let (starts, ends, axes, steps) = if c.opset < 10 {
            let need = |k: &str| {
                c.attrs
                    .ints(k)?
                    .ok_or_else(|| OpError::Invalid(format!("Slice needs `{k}`")))
            };
            (need("starts")?, need("ends")?, c.attrs.ints("axes")?, None)
        } else {
            let h = |i: usize, w: &str| opt(x, i).map(|t| host_ints(t, w)).transpose();
            (
                host_ints(req(x, 1)?, "Slice's starts")?,
                host_ints(req(x, 2)?, "Slice's ends")?,
                h(3, "Slice's axes")?,
                h(4, "Slice's steps")?,
            )
        };
        let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
        let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
        Ok(vec![same(
            v,
            v.t.slice(&axes, &starts, &ends, &steps)?.contiguous()?,
        )])
    }),
    spec("Transpose", &["perm"], 1, |c, x| {
        let v = req(x, 0)?;
        let perm = c
            .attrs
            .ints("perm")?
            .unwrap_or_else(|| (0..v.dims().len() as i64).rev().collect());
        Ok(vec![same(v, v.t.permute(&perm)?.contiguous()?)])
    }),
    spec("Expand", &[], 2, |_, x| {
        let v = req(x, 0)?;
        let want = sizes(&host_ints(req(x, 1)?, "Expand's shape")?, "Expand's shape")?;
        let dims = gpukit_tensor::broadcast_shapes("Expand", v.dims(), &want)?;
        Ok(vec![same(v, v.t.broadcast_to(&dims)?.contiguous()?)])
    }),
    spec("Tile", &[], 2, |_, x| {
        let v = req(x, 0)?;
        let reps = sizes(&host_ints(req(x, 1)?, "Tile's repeats")?, "Tile's repeats")?;
        Ok(vec![same(v, v.t.tile(&reps)?)])
    }),
    OpSpec {
        check: Some(|a, _, _, _| {
            one_of(
                a,
                "mode",
                "constant",
                &["constant", "reflect", "edge", "wrap"],
            )
        }),
        ..spec("Pad", &["mode", "pads", "value"], 4, |c, x| {
            let v = req(x, 0)?;
            let mode = c.attrs.string("mode", "constant")?;
            let mode = PadMode::parse(&mode)
                .ok_or_else(|| OpError::Unsupported(format!("mode = \"{mode}\"")))?;
            let (pads, value, axes) = if c.opset < 11 {
                let pads = c
                    .attrs
                    .ints("pads")?
                    .ok_or_else(|| OpError::Invalid("Pad needs `pads`".into()))?;
                (pads, c.attrs.float("value", 0.0)?, None)
            } else {
                let pads = host_ints(req(x, 1)?, "Pad's pads")?;
                let value = opt(x, 2)
                    .map(|s| host_scalar(s, "Pad's constant"))
                    .transpose()?
                    .unwrap_or(0.0);
                let axes = opt(x, 3).map(|a| host_ints(a, "Pad's axes")).transpose()?;
                (pads, value, axes)
            };
            Ok(vec![same(v, v.t.pad(&pads, mode, value, axes.as_deref())?)])
        })
    },
    spec("Gather", &["axis"], 2, |c, x| {
        let v = req(x, 0)?;
        let idx = index_in(x, 1)?;
        Ok(vec![same(v, v.t.gather(c.attrs.int("axis", 0)?, idx)?)])
    }),
    spec("GatherElements", &["axis"], 2, |c, x| {
        let v = req(x, 0)?;
        let idx = index_in(x, 1)?;
        Ok(vec![same(
            v,
            v.t.gather_elements(c.attrs.int("axis", 0)?, idx)?,
        )])
    }),
    OpSpec {
        check: Some(check_constant),
        ..spec(
            "Constant",
            &[
                "value",
                "value_float",
                "value_floats",
                "value_int",
                "value_ints",
            ],
            0,
            |c, _| {
                let h = constant_value(c.attrs)?;
                Ok(vec![Value {
                    t: h.to_tensor(c.kit)?,
                    ty: h.ty,
                }])
            },
        )
    },
    spec("ConstantOfShape", &["value"], 1, |c, x| {
        let shape = sizes(
            &host_ints(req(x, 0)?, "ConstantOfShape's shape")?,
            "ConstantOfShape's shape",
        )?;
        let fill = match c.attrs.tensor("value")? {
            Some(h) if h.numel() == 1 => h.clone(),
            Some(h) => {
                return Err(OpError::Invalid(format!(
                    "value has {} elements, want 1",
                    h.numel()
                )));
            }
            None => HostTensor {
                ty: ElemType::F32,
                dims: vec![1],
                bytes: 0f32.to_le_bytes().to_vec(),
            },
        };
        let one = HostTensor {
            dims: vec![],
            ..fill
        };
        let t = one.to_tensor(c.kit)?.broadcast_to(&shape)?.contiguous()?;
        Ok(vec![Value { t, ty: one.ty }])
    }),
    spec("Range", &["stash_type"], 3, |c, x| {
        let (s, l, d) = (req(x, 0)?, req(x, 1)?, req(x, 2)?);
        let ty = s.ty;
        if ty.is_float() {
            let (s, l, d) = (
                host_scalar(s, "start")?,
                host_scalar(l, "limit")?,
                host_scalar(d, "delta")?,
            );
            if d == 0.0 || !d.is_finite() {
                return Err(OpError::Invalid(format!("delta {d}")));
            }
            if c.attrs.int("stash_type", 1)? != 1 {
                return Err(OpError::Unsupported("stash_type other than float".into()));
            }
            // The count `ceil((limit - start) / delta)` and each `start + i·delta` in
            // the input's precision (f32 for f32, f16 and bf16: the stash type), on the
            // host: the same bits on every device.
            let wide = ty == ElemType::F64;
            let n = if wide {
                ((l - s) / d).ceil()
            } else {
                f64::from(((l as f32 - s as f32) / d as f32).ceil())
            }
            .max(0.0);
            if n.is_nan() || n > MAX_RANGE as f64 {
                return Err(OpError::Invalid(format!("Range of {n} elements")));
            }
            let v: Vec<f64> = (0..n as usize)
                .map(|i| {
                    if wide {
                        s + i as f64 * d
                    } else {
                        f64::from(s as f32 + i as f32 * d as f32)
                    }
                })
                .collect();
            let t = Tensor::from_slice(c.kit, &v, &[v.len()])?.to_dtype(ty.dtype())?;
            return Ok(vec![val(t)]);
        }
        let h = |v: &Value| -> OpResult<i64> { Ok(super::host_ints(v, "Range")?[0]) };
        let (s, l, d) = (h(s)?, h(l)?, h(d)?);
        if d == 0 {
            return Err(OpError::Invalid("delta 0".into()));
        }
        let n = ((l as i128 - s as i128) + d as i128 - d.signum() as i128) / d as i128;
        let n = n.max(0);
        if n > MAX_RANGE as i128 {
            return Err(OpError::Invalid(format!("Range of {n} elements")));
        }
        let v: Vec<i64> = (0..n as i64)
            .map(|i| s.wrapping_add(i.wrapping_mul(d)))
            .collect();
        let t = Tensor::from_slice(c.kit, &v, &[v.len()])?.to_dtype(ty.dtype())?;
        Ok(vec![Value { t, ty }])
    }),
    OpSpec {
        check: Some(super::check_reduction),
        ..spec("ScatterND", &["reduction"], 3, |c, x| scatter_nd(c, x))
    },
    spec("Dropout", &["ratio", "seed", "is_test"], 3, |c, x| {
        // Inference: the input passes unchanged, the mask is all true.
        let v = req(x, 0)?;
        if let Some(tm) = opt(x, 2)
            && host_scalar(tm, "training_mode")? != 0.0
        {
            return Err(OpError::Unsupported("Dropout in training mode".into()));
        }
        let mut out = vec![v.clone()];
        if c.nout > 1 {
            let ones = Tensor::full(c.kit, v.dims(), 1.0, DType::I32)?;
            out.push(Value::bool_mask(ones)?);
        }
        Ok(out)
    }),
];

/// ScatterND as ScatterElements on the flattened data: each index tuple (the last axis
/// of `indices`, negative from the end) names a slice of `data`, whose elements the
/// matching `updates` slice writes (or combines with `reduction`), in the row-major
/// order of `updates` (duplicates as the reference applies them).
fn scatter_nd(c: &Ctx<'_>, x: X<'_>) -> OpResult<Vec<Value>> {
    let (d, iv, u) = (req(x, 0)?, req(x, 1)?, req(x, 2)?);
    let name = c.attrs.string("reduction", "none")?;
    let red = gpukit_tensor::ScatterReduction::parse(&name)
        .ok_or_else(|| OpError::Unsupported(format!("reduction = \"{name}\"")))?;
    let dims = d.dims();
    let idims = iv.dims();
    let k = *idims
        .last()
        .ok_or_else(|| OpError::Invalid("indices must have rank >= 1".into()))?;
    if k == 0 || k > dims.len() {
        return Err(OpError::Invalid(format!(
            "index tuples of {k} for data of rank {}",
            dims.len()
        )));
    }
    let mut want: Vec<usize> = idims[..idims.len() - 1].to_vec();
    want.extend_from_slice(&dims[k..]);
    if u.dims() != want.as_slice() {
        return Err(OpError::Invalid(format!(
            "updates of dims {:?}, want {want:?}",
            u.dims()
        )));
    }
    let idx = host_ints(iv, "ScatterND's indices")?;
    let slice: usize = dims[k..].iter().product();
    let mut flat = Vec::with_capacity(u.t.numel());
    for tuple in idx.chunks_exact(k) {
        let mut base = 0usize;
        for (j, &i) in tuple.iter().enumerate() {
            let len = dims[j] as i64;
            let i = if i < 0 { i + len } else { i };
            if !(0..len).contains(&i) {
                return Err(OpError::Invalid(format!(
                    "index {i} out of range for axis {j} of length {len}"
                )));
            }
            base = base * dims[j] + i as usize;
        }
        flat.extend((0..slice).map(|e| (base * slice + e) as i64));
    }
    let n = d.t.numel();
    let fi = Tensor::from_slice(c.kit, &flat, &[flat.len()])?;
    let y = d.t.reshape(&[n as i64])?.scatter_elements(
        0,
        &fi,
        &u.t.reshape(&[flat.len() as i64])?,
        red,
    )?;
    Ok(vec![same(d, y.reshape(&dims_i64(dims))?)])
}

/// An i64 tensor from host values.
fn ints(c: &Ctx<'_>, v: &[i64], dims: &[usize]) -> OpResult<Value> {
    Ok(val(Tensor::from_slice(c.kit, v, dims)?))
}

/// Input `i` as an index tensor (i32 or i64).
fn index_in(x: X<'_>, i: usize) -> OpResult<&Tensor> {
    let v = req(x, i)?;
    match v.ty {
        ElemType::I32 | ElemType::I64 => Ok(&v.t),
        t => Err(OpError::Invalid(format!(
            "indices (input {i}) are {t}, want int32 or int64"
        ))),
    }
}

/// Squeeze's and Unsqueeze's axes: the attribute before opset 13, the input from 13.
fn axes_of(c: &Ctx<'_>, x: X<'_>, i: usize) -> OpResult<Option<Vec<i64>>> {
    if c.opset < 13 {
        c.attrs.ints("axes")
    } else {
        opt(x, i).map(|a| host_ints(a, "axes")).transpose()
    }
}

fn check_constant(a: &Attrs, _: i64, _: usize, _: usize) -> OpResult<()> {
    constant_value(a).map(|_| ())
}

/// Constant's one value attribute as a host tensor.
fn constant_value(a: &Attrs) -> OpResult<HostTensor> {
    if a.0.len() != 1 {
        return Err(OpError::Invalid(format!(
            "Constant needs exactly one value attribute, it has {}",
            a.0.len()
        )));
    }
    let (k, v) = a.0.iter().next().expect("one attribute");
    let f32s = |v: &[f32], dims: Vec<usize>| HostTensor {
        ty: ElemType::F32,
        dims,
        bytes: v.iter().flat_map(|f| f.to_le_bytes()).collect(),
    };
    let i64s = |v: &[i64], dims: Vec<usize>| HostTensor {
        ty: ElemType::I64,
        dims,
        bytes: v.iter().flat_map(|f| f.to_le_bytes()).collect(),
    };
    Ok(match (k.as_str(), v) {
        ("value", Attr::Tensor(t)) => t.clone(),
        ("value_float", Attr::Float(f)) => f32s(&[*f], vec![]),
        ("value_floats", Attr::Floats(f)) => f32s(f, vec![f.len()]),
        ("value_int", Attr::Int(i)) => i64s(&[*i], vec![]),
        ("value_ints", Attr::Ints(i)) => i64s(i, vec![i.len()]),
        (k, _) => {
            return Err(OpError::Invalid(format!(
                "Constant's `{k}` has the wrong kind"
            )));
        }
    })
}
