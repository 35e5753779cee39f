//! The op mapping: [`run`] takes one ONNX node of the manifest through the tensor API
//! (the executable form of docs/onnx.md's table), or says why it cannot.

use gpukit_core::DType;
use gpukit_ops::{BinaryOp, CmpOp, LogicOp, UnaryOp};
use gpukit_tensor::{
    AttentionOptions, ConvOptions, ConvTransposeOptions, CoordMode, NearestMode, Padding,
    PoolOptions, ReduceOp, ResizeMode, ResizeOptions, Tensor,
};

use crate::manifest::Case;

/// Why a case did not produce outputs.
#[derive(Debug)]
pub(crate) enum Fail {
    /// The tensor API has no mapping for this op or attribute.
    Unsupported(String),
    /// The mapping exists but gpukit returned an error.
    Error(gpukit_core::Error),
}

impl From<gpukit_core::Error> for Fail {
    fn from(e: gpukit_core::Error) -> Fail {
        Fail::Error(e)
    }
}

type Run = std::result::Result<Vec<Tensor>, Fail>;

/// An i64 tensor's values on the host (shape operands such as axes, pads, repeats).
fn host_i64(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().expect("i64 operand")
}

/// A scalar operand (Clip's bounds) as f64.
fn host_f64(t: &Tensor) -> f64 {
    t.to_dtype(DType::F64)
        .and_then(|t| t.to_vec::<f64>())
        .expect("scalar operand")[0]
}

/// ONNX's axis normalisation (`axis < 0` counts from the end).
fn norm_axis(axis: i64, rank: usize) -> usize {
    if axis < 0 {
        (axis + rank as i64) as usize
    } else {
        axis as usize
    }
}

fn unary(op: &str) -> Option<UnaryOp> {
    Some(match op {
        "Abs" => UnaryOp::Abs,
        "Neg" => UnaryOp::Neg,
        "Relu" => UnaryOp::Relu,
        "Exp" => UnaryOp::Exp,
        "Log" => UnaryOp::Log,
        "Tanh" => UnaryOp::Tanh,
        "Sigmoid" => UnaryOp::Sigmoid,
        "Sqrt" => UnaryOp::Sqrt,
        "Softplus" => UnaryOp::Softplus,
        "Sin" => UnaryOp::Sin,
        "Cos" => UnaryOp::Cos,
        _ => return None,
    })
}

fn reduce_op(op: &str) -> Option<ReduceOp> {
    Some(match op {
        "ReduceSum" => ReduceOp::Sum,
        "ReduceMean" => ReduceOp::Mean,
        "ReduceMax" => ReduceOp::Max,
        "ReduceMin" => ReduceOp::Min,
        "ReduceProd" => ReduceOp::Prod,
        "ReduceL1" => ReduceOp::L1,
        "ReduceL2" => ReduceOp::L2,
        "ReduceLogSumExp" => ReduceOp::LogSumExp,
        _ => return None,
    })
}

/// An optional int-list attribute as sizes (empty when absent).
fn usizes(v: Option<Vec<i64>>) -> Vec<usize> {
    v.unwrap_or_default().iter().map(|&i| i as usize).collect()
}

/// ONNX `auto_pad` plus `pads` as a [`Padding`].
fn padding(c: &Case) -> std::result::Result<Padding, Fail> {
    Ok(match c.string("auto_pad", "NOTSET").as_str() {
        "NOTSET" => Padding::Explicit(usizes(c.ints("pads"))),
        "VALID" => Padding::Valid,
        "SAME_UPPER" => Padding::SameUpper,
        "SAME_LOWER" => Padding::SameLower,
        other => return Err(Fail::Unsupported(format!("auto_pad = {other}"))),
    })
}

/// Runs one ONNX node through the tensor API.
pub(crate) fn run(c: &Case, x: &[Option<Tensor>]) -> Run {
    let req = |i: usize| -> &Tensor { x[i].as_ref().expect("required input") };
    let op = c.op.as_str();
    if let Some(u) = unary(op) {
        let t = req(0);
        return Ok(vec![match u {
            // Integers too: the Tensor methods compose them.
            UnaryOp::Abs => t.abs()?,
            UnaryOp::Neg => t.neg()?,
            _ => t.unary(u)?,
        }]);
    }
    if let Some(r) = reduce_op(op) {
        let t = req(0);
        let keep = c.int("keepdims", 1) != 0;
        let axes = x.get(1).and_then(|a| a.as_ref()).map(host_i64);
        let axes = match axes {
            Some(a) if !a.is_empty() => a,
            _ if c.int("noop_with_empty_axes", 0) != 0 => return Ok(vec![t.clone()]),
            _ => (0..t.rank() as i64).collect(),
        };
        return Ok(vec![t.reduce(r, &axes, keep)?]);
    }
    Ok(match op {
        "Erf" => vec![req(0).erf()?],
        "Gelu" => match c.string("approximate", "none").as_str() {
            "none" => vec![req(0).gelu()?],
            "tanh" => vec![req(0).gelu_tanh()?],
            a => return Err(Fail::Unsupported(format!("Gelu approximate = {a}"))),
        },
        "LeakyRelu" => vec![req(0).leaky_relu(c.float("alpha", 0.01))?],
        "Clip" => {
            let t = req(0);
            let lo = x.get(1).and_then(|v| v.as_ref()).map(host_f64);
            let hi = x.get(2).and_then(|v| v.as_ref()).map(host_f64);
            vec![t.clip(lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY))?]
        }
        "Add" => vec![req(0).binary(BinaryOp::Add, req(1))?],
        "Sub" => vec![req(0).binary(BinaryOp::Sub, req(1))?],
        "Mul" => vec![req(0).binary(BinaryOp::Mul, req(1))?],
        "Div" => vec![req(0).binary(BinaryOp::Div, req(1))?],
        "Pow" => vec![req(0).pow(req(1))?],
        "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" => {
            let cmp = match op {
                "Equal" => CmpOp::Eq,
                "Less" => CmpOp::Lt,
                "LessOrEqual" => CmpOp::Le,
                "Greater" => CmpOp::Gt,
                _ => CmpOp::Ge,
            };
            vec![req(0).compare_as(cmp, req(1), DType::I64)?]
        }
        "Where" => vec![req(0).where_(req(1), req(2))?],
        "And" => vec![req(0).logical(LogicOp::And, req(1))?],
        "Or" => vec![req(0).logical(LogicOp::Or, req(1))?],
        "Xor" => vec![req(0).logical(LogicOp::Xor, req(1))?],
        "Not" => vec![req(0).not()?],
        "Cast" => {
            let to = match c.int("to", 0) {
                1 => DType::F32,
                6 => DType::I32,
                7 => DType::I64,
                10 => DType::F16,
                11 => DType::F64,
                16 => DType::BF16,
                t => return Err(Fail::Unsupported(format!("Cast to ONNX type {t}"))),
            };
            vec![req(0).to_dtype(to)?]
        }
        "MatMul" => vec![req(0).matmul(req(1))?],
        "Gemm" => {
            let mut a = req(0).clone();
            let mut b = req(1).clone();
            if c.int("transA", 0) != 0 {
                a = a.t()?;
            }
            if c.int("transB", 0) != 0 {
                b = b.t()?;
            }
            let mut y = a.matmul(&b)?;
            let alpha = c.float("alpha", 1.0);
            if alpha != 1.0 {
                y = y.mul_scalar(alpha)?;
            }
            if let Some(cc) = x.get(2).and_then(|v| v.as_ref()) {
                let beta = c.float("beta", 1.0);
                let cc = if beta != 1.0 {
                    cc.mul_scalar(beta)?
                } else {
                    cc.clone()
                };
                y = y.add(&cc)?;
            }
            vec![y]
        }
        "Softmax" => vec![req(0).softmax(c.int("axis", -1))?],
        "GroupNormalization" => {
            let groups = c.int("num_groups", 1);
            let groups = usize::try_from(groups)
                .map_err(|_| Fail::Unsupported(format!("num_groups = {groups}")))?;
            vec![req(0).group_norm(groups, req(1), req(2), c.float("epsilon", 1e-5))?]
        }
        "RMSNormalization" => {
            vec![req(0).rms_norm(c.int("axis", -1), req(1), c.float("epsilon", 1e-5))?]
        }
        "Attention" => {
            // 4-D [batch, heads, seq, dim] inputs; a bool mask (stored 0/1) keeps keys.
            let q = req(0);
            let boolean_mask = c.inputs.get(3).and_then(|d| d.as_deref()) == Some("bool");
            let mask = match x.get(3).and_then(|m| m.as_ref()) {
                Some(m) => Some(m.to_dtype(q.dtype())?),
                None => None,
            };
            let o = AttentionOptions {
                mask,
                boolean_mask,
                causal: c.int("is_causal", 0) != 0,
                scale: c.attrs.contains_key("scale").then(|| c.float("scale", 1.0)),
            };
            vec![Tensor::attention(q, req(1), req(2), &o)?]
        }
        "LayerNormalization" => {
            let t = req(0);
            let axis = norm_axis(c.int("axis", -1), t.rank());
            let inner: usize = t.dims()[axis..].iter().product();
            let lead: Vec<i64> = t.dims()[..axis].iter().map(|&d| d as i64).collect();
            let flat = t.reshape(&[lead.iter().product::<i64>(), inner as i64])?;
            let w = req(1).reshape(&[inner as i64])?;
            let b = match x.get(2).and_then(|v| v.as_ref()) {
                Some(b) => b.reshape(&[inner as i64])?,
                None => Tensor::zeros(t.kit(), &[inner], t.dtype())?,
            };
            let y = flat.layer_norm(&w, &b, c.float("epsilon", 1e-5))?;
            let dims: Vec<i64> = t.dims().iter().map(|&d| d as i64).collect();
            vec![y.reshape(&dims)?]
        }
        "ArgMax" => vec![req(0).argmax_select(
            c.int("axis", 0),
            c.int("keepdims", 1) != 0,
            c.int("select_last_index", 0) != 0,
        )?],
        "ArgMin" => vec![req(0).argmin(
            c.int("axis", 0),
            c.int("keepdims", 1) != 0,
            c.int("select_last_index", 0) != 0,
        )?],
        "Gather" => vec![req(0).gather(c.int("axis", 0), req(1))?],
        "Pad" => {
            let mode = c.string("mode", "constant");
            let mode = gpukit_tensor::PadMode::parse(&mode)
                .ok_or_else(|| Fail::Unsupported(format!("mode {mode}")))?;
            let pads = host_i64(req(1));
            let value = match x.get(2).and_then(|v| v.as_ref()) {
                Some(v) => v.to_dtype(gpukit_core::DType::F64)?.to_vec::<f64>()?[0],
                None => 0.0,
            };
            let axes = x.get(3).and_then(|a| a.as_ref()).map(host_i64);
            vec![req(0).pad(&pads, mode, value, axes.as_deref())?]
        }
        "CumSum" => {
            let axis = req(1).to_dtype(DType::I64)?.to_vec::<i64>()?;
            vec![req(0).cumsum(
                axis[0],
                c.int("exclusive", 0) != 0,
                c.int("reverse", 0) != 0,
            )?]
        }
        "TopK" => {
            // `sorted` = 0 leaves the order open: gpukit's sorted output is one valid answer.
            let k = req(1).to_dtype(DType::I64)?.to_vec::<i64>()?;
            let k =
                usize::try_from(k[0]).map_err(|_| Fail::Unsupported(format!("K = {}", k[0])))?;
            let (v, i) = req(0).topk(k, c.int("axis", -1), c.int("largest", 1) != 0)?;
            vec![v, i]
        }
        "OneHot" => {
            let depth = host_f64(req(1));
            if !(depth >= 0.0 && depth.fract() == 0.0) {
                return Err(Fail::Unsupported(format!("depth {depth}")));
            }
            vec![req(0).one_hot(depth as usize, req(2), c.int("axis", -1))?]
        }
        "GatherElements" => vec![req(0).gather_elements(c.int("axis", 0), req(1))?],
        "ScatterElements" => {
            let name = c.string("reduction", "none");
            let red = gpukit_tensor::ScatterReduction::parse(&name)
                .ok_or_else(|| Fail::Unsupported(format!("reduction {name}")))?;
            vec![req(0).scatter_elements(c.int("axis", 0), req(1), req(2), red)?]
        }
        "Tile" => {
            let reps: Vec<usize> = host_i64(req(1)).iter().map(|&r| r as usize).collect();
            vec![req(0).tile(&reps)?]
        }
        "Reshape" => {
            let t = req(0);
            let mut shape = host_i64(req(1));
            if c.int("allowzero", 0) == 0 {
                for (i, s) in shape.iter_mut().enumerate() {
                    if *s == 0 {
                        *s = t.dims()[i] as i64;
                    }
                }
            }
            vec![t.reshape(&shape)?]
        }
        "Transpose" => {
            let t = req(0);
            let perm = c
                .ints("perm")
                .unwrap_or_else(|| (0..t.rank() as i64).rev().collect());
            vec![t.permute(&perm)?.contiguous()?]
        }
        "Slice" => {
            let t = req(0);
            let starts = host_i64(req(1));
            let ends = host_i64(req(2));
            let axes = x
                .get(3)
                .and_then(|v| v.as_ref())
                .map(host_i64)
                .unwrap_or_else(|| (0..starts.len() as i64).collect());
            let steps = x
                .get(4)
                .and_then(|v| v.as_ref())
                .map(host_i64)
                .unwrap_or_else(|| vec![1; starts.len()]);
            vec![t.slice(&axes, &starts, &ends, &steps)?.contiguous()?]
        }
        "Expand" => {
            // ONNX Expand broadcasts both ways: the result is broadcast(shape, dims).
            let t = req(0);
            let want: Vec<usize> = host_i64(req(1)).iter().map(|&d| d as usize).collect();
            let dims = gpukit_tensor::broadcast_shapes("Expand", t.dims(), &want)?;
            vec![t.broadcast_to(&dims)?.contiguous()?]
        }
        "Squeeze" => {
            let t = req(0);
            match x.get(1).and_then(|v| v.as_ref()) {
                None => vec![t.squeeze_all()],
                Some(axes) => {
                    let mut ax: Vec<usize> = host_i64(axes)
                        .iter()
                        .map(|&a| norm_axis(a, t.rank()))
                        .collect();
                    ax.sort_unstable();
                    let mut y = t.clone();
                    for a in ax.iter().rev() {
                        y = y.squeeze(*a as i64)?;
                    }
                    vec![y]
                }
            }
        }
        "Unsqueeze" => {
            let t = req(0);
            let out_rank = t.rank() + req(1).numel();
            let mut ax: Vec<usize> = host_i64(req(1))
                .iter()
                .map(|&a| norm_axis(a, out_rank))
                .collect();
            ax.sort_unstable();
            let mut y = t.clone();
            for a in ax {
                y = y.unsqueeze(a as i64)?;
            }
            vec![y]
        }
        "Concat" => {
            let ts: Vec<&Tensor> = x.iter().flatten().collect();
            vec![Tensor::concat(&ts, c.int("axis", 0))?]
        }
        "Split" => {
            let t = req(0);
            let axis = norm_axis(c.int("axis", 0), t.rank());
            let len = t.dims()[axis];
            let sizes: Vec<usize> = match x.get(1).and_then(|v| v.as_ref()) {
                Some(s) => host_i64(s).iter().map(|&v| v as usize).collect(),
                None => {
                    // ONNX: num_outputs pieces of ceil(len / n), the last one smaller.
                    let n = c.int("num_outputs", c.outputs.len() as i64) as usize;
                    let piece = len.div_ceil(n);
                    (0..n)
                        .map(|i| piece.min(len.saturating_sub(i * piece)))
                        .collect()
                }
            };
            t.split(&sizes, axis as i64)?
                .into_iter()
                .map(|p| p.contiguous())
                .collect::<gpukit_core::Result<Vec<_>>>()?
        }
        "Conv" => {
            let o = ConvOptions {
                strides: usizes(c.ints("strides")),
                dilations: usizes(c.ints("dilations")),
                padding: padding(c)?,
                groups: c.int("group", 1) as usize,
            };
            vec![req(0).conv(req(1), x.get(2).and_then(|v| v.as_ref()), &o)?]
        }
        "ConvTranspose" => {
            let o = ConvTransposeOptions {
                strides: usizes(c.ints("strides")),
                dilations: usizes(c.ints("dilations")),
                padding: padding(c)?,
                output_padding: usizes(c.ints("output_padding")),
                output_shape: c.ints("output_shape").map(|v| usizes(Some(v))),
                groups: c.int("group", 1) as usize,
            };
            vec![req(0).conv_transpose(req(1), x.get(2).and_then(|v| v.as_ref()), &o)?]
        }
        "MaxPool" if c.outputs.len() == 2 => {
            let order = c.int("storage_order", 0) != 0;
            let (v, i) = req(0).max_pool_with_indices(&pool_options(c)?, order)?;
            vec![v, i]
        }
        "MaxPool" => vec![req(0).max_pool(&pool_options(c)?)?],
        "AveragePool" => {
            let include = c.int("count_include_pad", 0) != 0;
            vec![req(0).avg_pool(&pool_options(c)?, include)?]
        }
        "GlobalAveragePool" => vec![req(0).global_avg_pool()?],
        "GlobalMaxPool" => vec![req(0).global_max_pool()?],
        "BatchNormalization" => {
            vec![req(0).batch_norm(req(1), req(2), req(3), req(4), c.float("epsilon", 1e-5))?]
        }
        "Resize" => vec![resize(c, x)?],
        other => return Err(Fail::Unsupported(format!("op {other} is not mapped"))),
    })
}

/// The window attributes of MaxPool and AveragePool.
fn pool_options(c: &Case) -> std::result::Result<PoolOptions, Fail> {
    Ok(PoolOptions {
        kernel: usizes(c.ints("kernel_shape")),
        strides: usizes(c.ints("strides")),
        dilations: usizes(c.ints("dilations")),
        padding: padding(c)?,
        ceil_mode: c.int("ceil_mode", 0) != 0,
    })
}

/// ONNX Resize (inputs X, roi, scales, sizes; attributes as ONNX names them).
fn resize(c: &Case, x: &[Option<Tensor>]) -> std::result::Result<Tensor, Fail> {
    let input = |i: usize| x.get(i).and_then(|v| v.as_ref());
    let t = input(0).expect("X");
    let unsupported = |what: String| Err(Fail::Unsupported(what));
    let mode = match c.string("mode", "nearest").as_str() {
        "nearest" => ResizeMode::Nearest,
        "linear" => ResizeMode::Linear,
        "cubic" => ResizeMode::Cubic,
        m => return unsupported(format!("mode {m}")),
    };
    let coord = match c
        .string("coordinate_transformation_mode", "half_pixel")
        .as_str()
    {
        "half_pixel" => CoordMode::HalfPixel,
        "pytorch_half_pixel" => CoordMode::PytorchHalfPixel,
        "align_corners" => CoordMode::AlignCorners,
        "asymmetric" => CoordMode::Asymmetric,
        "tf_half_pixel_for_nn" => CoordMode::TfHalfPixelForNn,
        "half_pixel_symmetric" => CoordMode::HalfPixelSymmetric,
        m => return unsupported(format!("coordinate_transformation_mode {m}")),
    };
    let nearest = match c.string("nearest_mode", "round_prefer_floor").as_str() {
        "round_prefer_floor" => NearestMode::RoundPreferFloor,
        "round_prefer_ceil" => NearestMode::RoundPreferCeil,
        "floor" => NearestMode::Floor,
        "ceil" => NearestMode::Ceil,
        m => return unsupported(format!("nearest_mode {m}")),
    };
    if c.int("antialias", 0) != 0 || c.string("keep_aspect_ratio_policy", "stretch") != "stretch" {
        return unsupported("antialias / keep_aspect_ratio_policy".into());
    }
    let scales = input(2).map(|s| s.to_vec::<f32>().expect("f32 scales"));
    let sizes = input(3).map(|s| usizes(Some(host_i64(s))));
    let o = ResizeOptions {
        sizes: sizes.filter(|v| !v.is_empty()),
        scales: scales.filter(|v| !v.is_empty()),
        axes: c.ints("axes").unwrap_or_default(),
        mode,
        coord,
        nearest,
        cubic_a: c.float("cubic_coeff_a", -0.75) as f32,
        exclude_outside: c.int("exclude_outside", 0) != 0,
    };
    Ok(t.resize(&o)?)
}
