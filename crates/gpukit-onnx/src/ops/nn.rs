//! Network ops: MatMul, Gemm, Softmax, the normalisations, Attention, reductions,
//! ArgMax/ArgMin, CumSum, TopK, OneHot, ScatterElements, convolutions, pooling, Resize.

use gpukit_core::DType;
use gpukit_tensor::{
    ConvOptions, ConvTransposeOptions, CoordMode, NearestMode, Padding, PoolOptions, ReduceOp,
    ResizeMode, ResizeOptions, ScatterReduction, Tensor,
};

use super::{
    Ctx, OpSpec, X, dims_i64, host_ints, host_scalar, norm_axis, one_of, opt, req, same, sizes,
    spec, val,
};
use crate::attrs::Attrs;
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::Value;

/// A Reduce* op's spec.
macro_rules! reduce_spec {
    ($name:literal, $op:ident) => {
        spec($name, REDUCE_ATTRS, 2, |c, x| reduce(c, x, ReduceOp::$op))
    };
}

const ARG_ATTRS: &[&str] = &["axis", "keepdims", "select_last_index"];
const REDUCE_ATTRS: &[&str] = &["axes", "keepdims", "noop_with_empty_axes"];
const CONV_ATTRS: &[&str] = &[
    "auto_pad",
    "dilations",
    "group",
    "kernel_shape",
    "pads",
    "strides",
];
const CONVT_ATTRS: &[&str] = &[
    "auto_pad",
    "dilations",
    "group",
    "kernel_shape",
    "output_padding",
    "output_shape",
    "pads",
    "strides",
];
const POOL_ATTRS: &[&str] = &[
    "auto_pad",
    "ceil_mode",
    "dilations",
    "kernel_shape",
    "pads",
    "strides",
    "storage_order",
    "count_include_pad",
];

pub(super) static SPECS: &[OpSpec] = &[
    spec("MatMul", &[], 2, |_, x| {
        Ok(vec![val(req(x, 0)?.t.matmul(&req(x, 1)?.t)?)])
    }),
    spec(
        "Gemm",
        &["alpha", "beta", "transA", "transB", "broadcast"],
        3,
        |c, x| {
            let mut a = req(x, 0)?.t.clone();
            let mut b = req(x, 1)?.t.clone();
            if c.attrs.flag("transA", false)? {
                a = a.t()?;
            }
            if c.attrs.flag("transB", false)? {
                b = b.t()?;
            }
            let mut y = a.matmul(&b)?;
            let alpha = c.attrs.float("alpha", 1.0)?;
            if alpha != 1.0 {
                y = y.mul_scalar(alpha)?;
            }
            if let Some(cc) = opt(x, 2) {
                let beta = c.attrs.float("beta", 1.0)?;
                let cc = if beta != 1.0 {
                    cc.t.mul_scalar(beta)?
                } else {
                    cc.t.clone()
                };
                y = y.add(&cc)?;
            }
            Ok(vec![val(y)])
        },
    ),
    spec("Softmax", &["axis"], 1, |c, x| {
        let t = &req(x, 0)?.t;
        if c.opset >= 13 {
            return Ok(vec![val(t.softmax(c.attrs.int("axis", -1)?)?)]);
        }
        // Before opset 13: the input is coerced to 2-D at `axis` (default 1).
        let r = t.rank();
        let a = c.attrs.int("axis", 1)?;
        let a = if a == r as i64 { r } else { norm_axis(a, r)? };
        let outer: usize = t.dims()[..a].iter().product();
        let inner: usize = t.dims()[a..].iter().product();
        let y = t.reshape(&[outer as i64, inner as i64])?.softmax(-1)?;
        Ok(vec![val(y.reshape(&dims_i64(t.dims()))?)])
    }),
    spec(
        "LayerNormalization",
        &["axis", "epsilon", "stash_type"],
        3,
        |c, x| {
            let t = &req(x, 0)?.t;
            if c.attrs.int("stash_type", 1)? != 1 {
                return Err(OpError::Unsupported(
                    "stash_type other than 1 (float)".into(),
                ));
            }
            let axis = c.attrs.int("axis", -1)?;
            let eps = c.attrs.float("epsilon", 1e-5)?;
            let (w, b) = (&req(x, 1)?.t, opt(x, 2).map(|v| &v.t));
            if c.nout > 1 {
                let (y, m, s) = t.layer_norm_with_stats(axis, w, b, eps)?;
                return Ok(vec![val(y), val(m), val(s)]);
            }
            Ok(vec![val(t.layer_norm_axis(axis, w, b, eps)?)])
        },
    ),
    spec(
        "GroupNormalization",
        &["epsilon", "num_groups", "stash_type"],
        3,
        |c, x| {
            if c.opset < 21 {
                return Err(OpError::Unsupported(
                    "GroupNormalization before opset 21 (per-group scale and bias)".into(),
                ));
            }
            if c.attrs.int("stash_type", 1)? != 1 {
                return Err(OpError::Unsupported(
                    "stash_type other than 1 (float)".into(),
                ));
            }
            let g = c.attrs.int("num_groups", 0)?;
            let g =
                usize::try_from(g).map_err(|_| OpError::Invalid(format!("num_groups = {g}")))?;
            let eps = c.attrs.float("epsilon", 1e-5)?;
            Ok(vec![val(req(x, 0)?.t.group_norm(
                g,
                &req(x, 1)?.t,
                &req(x, 2)?.t,
                eps,
            )?)])
        },
    ),
    spec("InstanceNormalization", &["epsilon"], 3, |c, x| {
        // Instance norm is group norm with one group per channel.
        let t = &req(x, 0)?.t;
        let ch = *t
            .dims()
            .get(1)
            .ok_or_else(|| OpError::Invalid(format!("input of dims {:?}", t.dims())))?;
        let eps = c.attrs.float("epsilon", 1e-5)?;
        Ok(vec![val(t.group_norm(
            ch,
            &req(x, 1)?.t,
            &req(x, 2)?.t,
            eps,
        )?)])
    }),
    spec(
        "RMSNormalization",
        &["axis", "epsilon", "stash_type"],
        2,
        |c, x| {
            if c.attrs.int("stash_type", 1)? != 1 {
                return Err(OpError::Unsupported(
                    "stash_type other than 1 (float)".into(),
                ));
            }
            Ok(vec![val(req(x, 0)?.t.rms_norm(
                c.attrs.int("axis", -1)?,
                &req(x, 1)?.t,
                c.attrs.float("epsilon", 1e-5)?,
            )?)])
        },
    ),
    spec(
        "BatchNormalization",
        &["epsilon", "momentum", "training_mode", "spatial", "is_test"],
        5,
        |c, x| {
            // Before opset 7 `is_test = 0` is training.
            let legacy_training = c.attrs.has("is_test") && !c.attrs.flag("is_test", false)?;
            if c.attrs.flag("training_mode", false)? || legacy_training || c.nout > 1 {
                return Err(OpError::Unsupported(
                    "BatchNormalization in training mode".into(),
                ));
            }
            if c.attrs.int("spatial", 1)? != 1 {
                return Err(OpError::Unsupported("spatial = 0".into()));
            }
            let t = |i| req(x, i).map(|v| &v.t);
            Ok(vec![val(t(0)?.batch_norm(
                t(1)?,
                t(2)?,
                t(3)?,
                t(4)?,
                c.attrs.float("epsilon", 1e-5)?,
            )?)])
        },
    ),
    spec(
        "Attention",
        &[
            "is_causal",
            "kv_num_heads",
            "q_num_heads",
            "scale",
            "softcap",
            "qk_matmul_output_mode",
            "softmax_precision",
            "left_window_size",
            "right_window_size",
        ],
        7,
        |c, x| super::attention::attention(c, x),
    ),
    reduce_spec!("ReduceSum", Sum),
    reduce_spec!("ReduceMean", Mean),
    reduce_spec!("ReduceMax", Max),
    reduce_spec!("ReduceMin", Min),
    reduce_spec!("ReduceProd", Prod),
    reduce_spec!("ReduceL1", L1),
    reduce_spec!("ReduceL2", L2),
    reduce_spec!("ReduceLogSumExp", LogSumExp),
    spec("ArgMax", ARG_ATTRS, 1, |c, x| arg(c, x, true)),
    spec("ArgMin", ARG_ATTRS, 1, |c, x| arg(c, x, false)),
    spec("CumSum", &["exclusive", "reverse"], 2, |c, x| {
        let axis = host_ints(req(x, 1)?, "CumSum's axis")?;
        let [axis] = axis[..] else {
            return Err(OpError::Invalid(
                "CumSum's axis must have one element".into(),
            ));
        };
        Ok(vec![val(req(x, 0)?.t.cumsum(
            axis,
            c.attrs.flag("exclusive", false)?,
            c.attrs.flag("reverse", false)?,
        )?)])
    }),
    spec("TopK", &["axis", "largest", "sorted", "k"], 2, |c, x| {
        let k = if c.opset < 10 {
            c.attrs.int("k", -1)?
        } else {
            let k = host_ints(req(x, 1)?, "TopK's K")?;
            *k.first()
                .ok_or_else(|| OpError::Invalid("TopK's K is empty".into()))?
        };
        let k = usize::try_from(k).map_err(|_| OpError::Invalid(format!("K = {k}")))?;
        let (v, i) =
            req(x, 0)?
                .t
                .topk(k, c.attrs.int("axis", -1)?, c.attrs.flag("largest", true)?)?;
        Ok(vec![val(v), val(i)])
    }),
    spec("OneHot", &["axis"], 3, |c, x| {
        let depth = host_scalar(req(x, 1)?, "OneHot's depth")?;
        if !(depth >= 0.0 && depth.fract() == 0.0 && depth < 1e9) {
            return Err(OpError::Invalid(format!("depth {depth}")));
        }
        let values = req(x, 2)?;
        Ok(vec![same(
            values,
            req(x, 0)?
                .t
                .one_hot(depth as usize, &values.t, c.attrs.int("axis", -1)?)?,
        )])
    }),
    OpSpec {
        check: Some(super::check_reduction),
        ..spec("ScatterElements", &["axis", "reduction"], 3, |c, x| {
            let name = c.attrs.string("reduction", "none")?;
            let red = ScatterReduction::parse(&name)
                .ok_or_else(|| OpError::Unsupported(format!("reduction = \"{name}\"")))?;
            let d = req(x, 0)?;
            Ok(vec![same(
                d,
                d.t.scatter_elements(c.attrs.int("axis", 0)?, &req(x, 1)?.t, &req(x, 2)?.t, red)?,
            )])
        })
    },
    OpSpec {
        check: Some(check_auto_pad),
        ..spec("Conv", CONV_ATTRS, 3, |c, x| {
            let o = ConvOptions {
                strides: usizes(c.attrs, "strides")?,
                dilations: usizes(c.attrs, "dilations")?,
                padding: padding(c.attrs)?,
                groups: group(c.attrs)?,
            };
            let (t, w, b) = conv_operands(c, x)?;
            Ok(vec![val(t.conv(w, b, &o)?)])
        })
    },
    OpSpec {
        check: Some(check_auto_pad),
        ..spec("ConvTranspose", CONVT_ATTRS, 3, |c, x| {
            let o = ConvTransposeOptions {
                strides: usizes(c.attrs, "strides")?,
                dilations: usizes(c.attrs, "dilations")?,
                padding: padding(c.attrs)?,
                output_padding: usizes(c.attrs, "output_padding")?,
                output_shape: c
                    .attrs
                    .ints("output_shape")?
                    .map(|v| sizes(&v, "output_shape"))
                    .transpose()?,
                groups: group(c.attrs)?,
            };
            let (t, w, b) = conv_operands(c, x)?;
            Ok(vec![val(t.conv_transpose(w, b, &o)?)])
        })
    },
    OpSpec {
        check: Some(check_auto_pad),
        ..spec("MaxPool", POOL_ATTRS, 1, |c, x| {
            let t = &req(x, 0)?.t;
            spatial_1d_2d(t)?;
            let o = pool_options(c.attrs)?;
            if c.nout > 1 {
                let order = c.attrs.flag("storage_order", false)?;
                let (v, i) = t.max_pool_with_indices(&o, order)?;
                return Ok(vec![val(v), val(i)]);
            }
            Ok(vec![val(t.max_pool(&o)?)])
        })
    },
    OpSpec {
        check: Some(check_auto_pad),
        ..spec("AveragePool", POOL_ATTRS, 1, |c, x| {
            spatial_1d_2d(&req(x, 0)?.t)?;
            let include = c.attrs.flag("count_include_pad", false)?;
            Ok(vec![val(req(x, 0)?
                .t
                .avg_pool(&pool_options(c.attrs)?, include)?)])
        })
    },
    spec("GlobalAveragePool", &[], 1, |_, x| {
        Ok(vec![val(req(x, 0)?.t.global_avg_pool()?)])
    }),
    spec("GlobalMaxPool", &[], 1, |_, x| {
        Ok(vec![val(req(x, 0)?.t.global_max_pool()?)])
    }),
    OpSpec {
        check: Some(check_resize),
        ..spec(
            "Resize",
            &[
                "antialias",
                "axes",
                "coordinate_transformation_mode",
                "cubic_coeff_a",
                "exclude_outside",
                "extrapolation_value",
                "keep_aspect_ratio_policy",
                "mode",
                "nearest_mode",
            ],
            4,
            |c, x| resize(c, x),
        )
    },
];

/// ArgMax (`max`) or ArgMin: i64 indices along `axis`.
fn arg(c: &Ctx<'_>, x: X<'_>, max: bool) -> OpResult<Vec<Value>> {
    let t = &req(x, 0)?.t;
    let (axis, keep, last) = (
        c.attrs.int("axis", 0)?,
        c.attrs.flag("keepdims", true)?,
        c.attrs.flag("select_last_index", false)?,
    );
    Ok(vec![val(if max {
        t.argmax_select(axis, keep, last)?
    } else {
        t.argmin(axis, keep, last)?
    })])
}

/// The Reduce* family: axes as an attribute before opset 18 (13 for ReduceSum), as an
/// input after; absent axes reduce everything unless `noop_with_empty_axes`.
fn reduce(c: &Ctx<'_>, x: X<'_>, op: ReduceOp) -> OpResult<Vec<Value>> {
    let v = req(x, 0)?;
    if v.ty == ElemType::Bool && !matches!(op, ReduceOp::Max | ReduceOp::Min) {
        return Err(OpError::Invalid(format!("{op:?} of a bool tensor")));
    }
    let t = &v.t;
    let keep = c.attrs.flag("keepdims", true)?;
    let input_axes = if op == ReduceOp::Sum { 13 } else { 18 };
    let axes = if c.opset < input_axes {
        c.attrs.ints("axes")?
    } else {
        opt(x, 1).map(|a| host_ints(a, "axes")).transpose()?
    };
    let axes = match axes {
        Some(a) if !a.is_empty() => a,
        _ if c.attrs.flag("noop_with_empty_axes", false)? => return Ok(vec![val(t.clone())]),
        _ => (0..t.rank() as i64).collect(),
    };
    let y = t.reduce(op, &axes, keep)?;
    if v.ty == ElemType::Bool {
        // Max and Min of bools stay bool; over an empty set they give false and true
        // (the i32 reduction's identities are i32::MIN and i32::MAX).
        return Ok(vec![Value::bool_mask(crate::value::mask(
            &y,
            gpukit_ops::CmpOp::Gt,
            0.0,
        )?)?]);
    }
    Ok(vec![val(y)])
}

fn usizes(a: &Attrs, key: &str) -> OpResult<Vec<usize>> {
    sizes(&a.ints(key)?.unwrap_or_default(), key)
}

fn group(a: &Attrs) -> OpResult<usize> {
    let g = a.int("group", 1)?;
    usize::try_from(g)
        .ok()
        .filter(|&g| g > 0)
        .ok_or_else(|| OpError::Invalid(format!("group = {g}")))
}

fn check_auto_pad(a: &Attrs, _: i64, _: usize, _: usize) -> OpResult<()> {
    one_of(
        a,
        "auto_pad",
        "NOTSET",
        &["NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"],
    )
}

/// gpukit's convolutions and pools are 1-D and 2-D: a 3-D one is unsupported.
fn spatial_1d_2d(t: &Tensor) -> OpResult<()> {
    if t.rank() > 4 {
        return Err(OpError::Unsupported(format!(
            "{}-D spatial input (gpukit runs 1-D and 2-D), dims {:?}",
            t.rank() - 2,
            t.dims()
        )));
    }
    Ok(())
}

/// Conv's and ConvTranspose's input, weight and optional bias, after the checks both
/// share: 1-D or 2-D, `kernel_shape` agreeing with the weight.
fn conv_operands<'a>(
    c: &Ctx<'_>,
    x: X<'a>,
) -> OpResult<(&'a Tensor, &'a Tensor, Option<&'a Tensor>)> {
    let (t, w) = (&req(x, 0)?.t, &req(x, 1)?.t);
    check_kernel_shape(c.attrs, w)?;
    spatial_1d_2d(t)?;
    Ok((t, w, opt(x, 2).map(|v| &v.t)))
}

/// A `kernel_shape` attribute must agree with the weight's spatial dims.
fn check_kernel_shape(a: &Attrs, w: &Tensor) -> OpResult<()> {
    if let Some(k) = a.ints("kernel_shape")?
        && dims_i64(w.dims().get(2..).unwrap_or(&[])) != k
    {
        return Err(OpError::Invalid(format!(
            "kernel_shape {k:?} differs from the weight's dims {:?}",
            w.dims()
        )));
    }
    Ok(())
}

/// ONNX `auto_pad` plus `pads` as a [`Padding`].
fn padding(a: &Attrs) -> OpResult<Padding> {
    Ok(match a.string("auto_pad", "NOTSET")?.as_str() {
        "NOTSET" => Padding::Explicit(usizes(a, "pads")?),
        "VALID" => Padding::Valid,
        "SAME_UPPER" => Padding::SameUpper,
        "SAME_LOWER" => Padding::SameLower,
        other => return Err(OpError::Unsupported(format!("auto_pad = \"{other}\""))),
    })
}

fn pool_options(a: &Attrs) -> OpResult<PoolOptions> {
    let kernel = a
        .ints("kernel_shape")?
        .ok_or_else(|| OpError::Invalid("kernel_shape is required".into()))?;
    Ok(PoolOptions {
        kernel: sizes(&kernel, "kernel_shape")?,
        strides: usizes(a, "strides")?,
        dilations: usizes(a, "dilations")?,
        padding: padding(a)?,
        ceil_mode: a.flag("ceil_mode", false)?,
    })
}

fn check_resize(a: &Attrs, _: i64, _: usize, _: usize) -> OpResult<()> {
    one_of(a, "mode", "nearest", &["nearest", "linear", "cubic"])?;
    one_of(
        a,
        "coordinate_transformation_mode",
        "half_pixel",
        &[
            "half_pixel",
            "pytorch_half_pixel",
            "align_corners",
            "asymmetric",
            "tf_half_pixel_for_nn",
            "half_pixel_symmetric",
        ],
    )?;
    one_of(
        a,
        "nearest_mode",
        "round_prefer_floor",
        &["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
    )?;
    one_of(a, "keep_aspect_ratio_policy", "stretch", &["stretch"])?;
    if a.int("antialias", 0)? != 0 {
        return Err(OpError::Unsupported("antialias = 1".into()));
    }
    Ok(())
}

/// ONNX Resize from opset 11 (inputs X, roi, scales, sizes).
fn resize(c: &Ctx<'_>, x: X<'_>) -> OpResult<Vec<Value>> {
    let a = c.attrs;
    let t = req(x, 0)?;
    let mode = match a.string("mode", "nearest")?.as_str() {
        "nearest" => ResizeMode::Nearest,
        "linear" => ResizeMode::Linear,
        "cubic" => ResizeMode::Cubic,
        m => return Err(OpError::Unsupported(format!("mode = \"{m}\""))),
    };
    let coord = match a
        .string("coordinate_transformation_mode", "half_pixel")?
        .as_str()
    {
        "half_pixel" => CoordMode::HalfPixel,
        "pytorch_half_pixel" => CoordMode::PytorchHalfPixel,
        "align_corners" => CoordMode::AlignCorners,
        "asymmetric" => CoordMode::Asymmetric,
        "tf_half_pixel_for_nn" => CoordMode::TfHalfPixelForNn,
        "half_pixel_symmetric" => CoordMode::HalfPixelSymmetric,
        m => {
            return Err(OpError::Unsupported(format!(
                "coordinate_transformation_mode = \"{m}\""
            )));
        }
    };
    let nearest = match a.string("nearest_mode", "round_prefer_floor")?.as_str() {
        "round_prefer_floor" => NearestMode::RoundPreferFloor,
        "round_prefer_ceil" => NearestMode::RoundPreferCeil,
        "floor" => NearestMode::Floor,
        "ceil" => NearestMode::Ceil,
        m => return Err(OpError::Unsupported(format!("nearest_mode = \"{m}\""))),
    };
    if c.opset < 11 {
        // Resize-10 names no coordinate rule (onnxruntime and the reference each pick
        // one): refused rather than answered one way.
        return Err(OpError::Unsupported(
            "Resize before opset 11 (its coordinate rule is unspecified)".into(),
        ));
    }
    // roi (input 1) is read only by tf_crop_and_resize, which is refused.
    let (scales, sizes_in) = (opt(x, 2), opt(x, 3));
    let scales = match scales {
        Some(s) if s.t.numel() > 0 => Some(s.t.to_dtype(DType::F32)?.to_vec::<f32>()?),
        _ => None,
    };
    let sizes_v = match sizes_in {
        Some(s) if s.t.numel() > 0 => Some(sizes(&host_ints(s, "sizes")?, "sizes")?),
        _ => None,
    };
    let o = ResizeOptions {
        sizes: sizes_v,
        scales,
        axes: a.ints("axes")?.unwrap_or_default(),
        mode,
        coord,
        nearest,
        cubic_a: a.float("cubic_coeff_a", -0.75)? as f32,
        exclude_outside: a.flag("exclude_outside", false)?,
    };
    Ok(vec![same(t, t.t.resize(&o)?)])
}
