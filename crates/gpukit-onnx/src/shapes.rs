//! Shape inference at load time: each value's dims (fixed, named or unknown) from the
//! graph inputs' declared dims and the initializers, through the ops whose output
//! shape follows from their inputs' shapes (and constant shape operands). A definite
//! conflict (dims that cannot broadcast, a MatMul's inner dims, a Concat's other dims,
//! a Reshape of the wrong element count, a graph output declared with other dims) is
//! an error at load time naming the node; whatever the rules cannot tell stays
//! unknown, and the run checks it.

use std::collections::HashMap;

use crate::graph::{Dim, IoInfo, Node};
use crate::host::HostTensor;
use crate::ops::{norm_axis, shape_range};

/// A value's inferred dims; `None`: the rank is unknown.
pub(crate) type Shape = Option<Vec<Dim>>;

/// Ops whose (first) output has the first input's dims.
const SAME: &[&str] = &[
    "Abs",
    "Neg",
    "Relu",
    "Exp",
    "Log",
    "Tanh",
    "Sigmoid",
    "Sqrt",
    "Softplus",
    "Sin",
    "Cos",
    "Erf",
    "Gelu",
    "LeakyRelu",
    "Reciprocal",
    "Identity",
    "Softmax",
    "LogSoftmax",
    "Elu",
    "Selu",
    "Celu",
    "Sign",
    "Softsign",
    "HardSigmoid",
    "HardSwish",
    "ThresholdedRelu",
    "Mish",
    "LRN",
    "Cast",
    "CastLike",
    "Not",
    "IsNaN",
    "IsInf",
    "Clip",
    "LayerNormalization",
    "GroupNormalization",
    "InstanceNormalization",
    "RMSNormalization",
    "BatchNormalization",
    "Dropout",
    "CumSum",
    "Trilu",
    "ScatterElements",
    "ScatterND",
    "PRelu",
];

/// Ops whose output is the numpy broadcast of all inputs.
const BROADCAST: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
    "Where",
    "Sum",
    "Mean",
    "Max",
    "Min",
];

/// Two dims broadcast: the result, or why they cannot.
fn bcast(a: &Dim, b: &Dim) -> Result<Dim, String> {
    use Dim::*;
    Ok(match (a, b) {
        (Fixed(1), x) | (x, Fixed(1)) => x.clone(),
        (Fixed(p), Fixed(q)) if p == q => Fixed(*p),
        (Fixed(p), Fixed(q)) => return Err(format!("dims {p} and {q} do not broadcast")),
        (Fixed(p), _) | (_, Fixed(p)) => Fixed(*p),
        (Symbolic(s), Symbolic(t)) if s == t => Symbolic(s.clone()),
        _ => Unknown,
    })
}

/// Numpy broadcasting of several shapes (right-aligned).
fn broadcast_all(shapes: &[&Shape]) -> Result<Shape, String> {
    let mut out: Vec<Dim> = Vec::new();
    for s in shapes {
        let Some(s) = s else { return Ok(None) };
        let r = out.len().max(s.len());
        let mut next = Vec::with_capacity(r);
        for i in 0..r {
            let a = (i + out.len()).checked_sub(r).map(|j| &out[j]);
            let b = (i + s.len()).checked_sub(r).map(|j| &s[j]);
            next.push(match (a, b) {
                (Some(a), Some(b)) => bcast(a, b)?,
                (Some(x), None) | (None, Some(x)) => x.clone(),
                (None, None) => Dim::Fixed(1),
            });
        }
        out = next;
    }
    Ok(Some(out))
}

fn fixed(d: &Dim) -> Option<usize> {
    match d {
        Dim::Fixed(n) => Some(*n),
        _ => None,
    }
}

/// The product of dims when all are fixed.
fn numel(d: &[Dim]) -> Option<usize> {
    d.iter()
        .map(fixed)
        .try_fold(1usize, |a, n| a.checked_mul(n?))
}

/// The small integer constants known at load time (initializers and Constant values of
/// i32/i64, at most 64 elements): shape operands.
fn ints_of(h: &HostTensor) -> Option<Vec<i64>> {
    if h.numel() > 64 {
        return None;
    }
    h.ints()
}

fn axis(a: i64, rank: usize) -> Option<usize> {
    norm_axis(a, rank).ok()
}

/// The dims left after reducing axes `ax` (kept as 1 with `keep`).
fn reduce_dims(d: &[Dim], ax: &[usize], keep: bool) -> Vec<Dim> {
    d.iter()
        .enumerate()
        .filter_map(|(i, x)| match (ax.contains(&i), keep) {
            (false, _) => Some(x.clone()),
            (true, true) => Some(Dim::Fixed(1)),
            (true, false) => None,
        })
        .collect()
}

/// A convolution's or pool's output dims `[N, C_out, spatial...]`: per spatial axis
/// `floor((in + pads - dilation·(k - 1) - 1) / stride) + 1` (`ceil` for a pool's
/// `ceil_mode`), `ceil(in / stride)` for `SAME_*` padding and `ceil((in - dilation·(k -
/// 1)) / stride)` for `VALID`; a Conv's C_out is the weight's first dim, and its input
/// channels must be the weight's second times `group`. Unknown where an input dim or the
/// kernel is; `Err` for a definite channel conflict or an empty output.
fn window_dims(n: &Node, x: &Shape, w: &Shape) -> Result<Shape, String> {
    let Some(x) = x else { return Ok(None) };
    if x.len() < 3 {
        return Ok(None);
    }
    let sp = x.len() - 2;
    let conv = n.op == "Conv";
    let attr = |k: &str| n.attrs.ints(k).ok().flatten();
    let kernel: Option<Vec<Option<usize>>> = match attr("kernel_shape") {
        Some(k) => Some(k.iter().map(|&v| usize::try_from(v).ok()).collect()),
        None if conv => w
            .as_ref()
            .filter(|w| w.len() == x.len())
            .map(|w| w[2..].iter().map(fixed).collect()),
        None => None,
    };
    let Some(kernel) = kernel.filter(|k| k.len() == sp) else {
        return Ok(None);
    };
    let c_out = if conv {
        let Some(w) = w.as_ref().filter(|w| w.len() == x.len()) else {
            return Ok(None);
        };
        let group = n.attrs.int("group", 1).unwrap_or(1);
        if let (Some(c), Some(wc)) = (fixed(&x[1]), fixed(&w[1]))
            && usize::try_from(group).ok().and_then(|g| wc.checked_mul(g)) != Some(c)
        {
            return Err(format!(
                "input channels {c} and weight channels {wc} × group {group} differ"
            ));
        }
        w[0].clone()
    } else {
        x[1].clone()
    };
    let get = |k: &str, len: usize, d: i64| -> Vec<i64> {
        attr(k).filter(|v| v.len() == len).unwrap_or(vec![d; len])
    };
    let strides = get("strides", sp, 1);
    let dil = get("dilations", sp, 1);
    let pads = get("pads", 2 * sp, 0);
    let ceil = n.attrs.int("ceil_mode", 0).unwrap_or(0) != 0;
    let auto = n.attrs.string("auto_pad", "NOTSET").unwrap_or_default();
    let mut out = vec![x[0].clone(), c_out];
    for i in 0..sp {
        let (Some(inp), Some(k)) = (fixed(&x[i + 2]), kernel[i]) else {
            out.push(Dim::Unknown);
            continue;
        };
        // In i128: attribute values are any i64, and no sum or product below overflows.
        let (inp, k) = (inp as i128, k as i128);
        let (s, d) = (i128::from(strides[i].max(1)), i128::from(dil[i].max(1)));
        let (p0, p1) = (i128::from(pads[i]), i128::from(pads[i + sp]));
        let span = d * (k - 1) + 1;
        let o = match auto.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => (inp + s - 1) / s,
            "VALID" => (inp - span + s).div_euclid(s),
            _ => {
                let num = inp + p0 + p1 - span;
                if num < 0 {
                    return Err(format!(
                        "spatial axis {i}: input {inp} with pads is smaller than the window {span}"
                    ));
                }
                if ceil {
                    // A last window starting in the right padding does not count.
                    let mut o = (num + s - 1) / s + 1;
                    if (o - 1) * s >= inp + p0 {
                        o -= 1;
                    }
                    o
                } else {
                    num / s + 1
                }
            }
        };
        out.push(usize::try_from(o).map_or(Dim::Unknown, Dim::Fixed));
    }
    Ok(Some(out))
}

/// Infers every value's dims; `Err` is a definite conflict, naming the node (or the
/// graph output).
pub(crate) fn infer(
    names: &[String],
    nodes: &[Node],
    inputs: &[(usize, IoInfo)],
    outputs: &[(usize, IoInfo)],
    inits: &[(usize, HostTensor)],
) -> Result<Vec<Shape>, String> {
    let mut shapes: Vec<Shape> = vec![None; names.len()];
    let mut ints: HashMap<usize, Vec<i64>> = HashMap::new();
    for (id, h) in inits {
        shapes[*id] = Some(h.dims.iter().map(|&d| Dim::Fixed(d)).collect());
        if let Some(v) = ints_of(h) {
            ints.insert(*id, v);
        }
    }
    for (id, info) in inputs {
        if !info.has_default {
            shapes[*id] = info.dims.clone();
        }
    }
    for n in nodes {
        let inp = |i: usize| -> &Shape {
            static NONE: Shape = None;
            match n.inputs.get(i).copied().flatten() {
                Some(id) => &shapes[id],
                None => &NONE,
            }
        };
        let const_in = |i: usize| {
            n.inputs
                .get(i)
                .copied()
                .flatten()
                .and_then(|id| ints.get(&id))
        };
        let here = |what: String| format!("node `{}` ({}): {what}", n.name, n.op);
        // Squeeze's and Unsqueeze's axes: the attribute before opset 13, else a
        // constant input.
        let axes_of = || {
            if n.opset < 13 {
                n.attrs.ints("axes").ok().flatten()
            } else {
                const_in(1).cloned()
            }
        };
        let op = n.op.as_str();
        let out: Shape = if SAME.contains(&op) {
            inp(0).clone()
        } else if BROADCAST.contains(&op) {
            let all: Vec<&Shape> = (0..n.inputs.len()).map(inp).collect();
            broadcast_all(&all).map_err(here)?
        } else {
            match op {
                "MatMul" => match (inp(0), inp(1)) {
                    (Some(a), Some(b)) if a.len() >= 2 && b.len() >= 2 => {
                        let (k1, k2) = (&a[a.len() - 1], &b[b.len() - 2]);
                        if let (Some(p), Some(q)) = (fixed(k1), fixed(k2))
                            && p != q
                        {
                            return Err(here(format!(
                                "inner dims {p} and {q} differ (A {a:?}, B {b:?})"
                            )));
                        }
                        let batch = broadcast_all(&[
                            &Some(a[..a.len() - 2].to_vec()),
                            &Some(b[..b.len() - 2].to_vec()),
                        ])
                        .map_err(here)?;
                        batch.map(|mut d| {
                            d.push(a[a.len() - 2].clone());
                            d.push(b[b.len() - 1].clone());
                            d
                        })
                    }
                    _ => None,
                },
                "Gemm" => match (inp(0), inp(1)) {
                    (Some(a), Some(b)) if a.len() == 2 && b.len() == 2 => {
                        let ta = n.attrs.int("transA", 0).unwrap_or(0) != 0;
                        let tb = n.attrs.int("transB", 0).unwrap_or(0) != 0;
                        let (m, ka) = if ta { (&a[1], &a[0]) } else { (&a[0], &a[1]) };
                        let (kb, nn) = if tb { (&b[1], &b[0]) } else { (&b[0], &b[1]) };
                        if let (Some(p), Some(q)) = (fixed(ka), fixed(kb))
                            && p != q
                        {
                            return Err(here(format!("inner dims {p} and {q} differ")));
                        }
                        Some(vec![m.clone(), nn.clone()])
                    }
                    _ => None,
                },
                "Transpose" => inp(0).as_ref().and_then(|d| {
                    let perm = n
                        .attrs
                        .ints("perm")
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| (0..d.len() as i64).rev().collect());
                    perm.iter()
                        .map(|&p| usize::try_from(p).ok().and_then(|p| d.get(p).cloned()))
                        .collect::<Option<Vec<_>>>()
                        .filter(|v| v.len() == d.len())
                }),
                "Reshape" => match const_in(1) {
                    Some(target) => {
                        let allowzero = n.attrs.int("allowzero", 0).unwrap_or(0) != 0;
                        let src = inp(0);
                        let mut dims = Vec::with_capacity(target.len());
                        let mut infer_at = None;
                        for (i, &t) in target.iter().enumerate() {
                            dims.push(match t {
                                -1 => {
                                    infer_at = Some(i);
                                    Dim::Unknown
                                }
                                0 if !allowzero => src
                                    .as_ref()
                                    .and_then(|s| s.get(i).cloned())
                                    .unwrap_or(Dim::Unknown),
                                t if t >= 0 => Dim::Fixed(t as usize),
                                _ => Dim::Unknown,
                            });
                        }
                        let total = src.as_ref().and_then(|s| numel(s));
                        if let Some(total) = total {
                            let others: Option<usize> = dims
                                .iter()
                                .enumerate()
                                .filter(|(i, _)| Some(*i) != infer_at)
                                .map(|(_, d)| fixed(d))
                                .try_fold(1usize, |a, n| a.checked_mul(n?));
                            match (infer_at, others) {
                                (Some(i), Some(o)) if o > 0 && total % o == 0 => {
                                    dims[i] = Dim::Fixed(total / o);
                                }
                                (None, Some(o)) if o != total => {
                                    return Err(here(format!(
                                        "{total} elements reshaped to {target:?}"
                                    )));
                                }
                                _ => {}
                            }
                        }
                        Some(dims)
                    }
                    None => None,
                },
                "Unsqueeze" => match (inp(0), axes_of()) {
                    (Some(d), Some(axes)) => {
                        let r = d.len() + axes.len();
                        let mut ax: Vec<usize> = axes.iter().filter_map(|&a| axis(a, r)).collect();
                        ax.sort_unstable();
                        ax.dedup();
                        (ax.len() == axes.len()).then(|| {
                            let mut it = d.iter();
                            (0..r)
                                .map(|i| {
                                    if ax.contains(&i) {
                                        Dim::Fixed(1)
                                    } else {
                                        it.next().cloned().unwrap_or(Dim::Unknown)
                                    }
                                })
                                .collect()
                        })
                    }
                    _ => None,
                },
                "Squeeze" => match (inp(0), axes_of()) {
                    (Some(d), Some(axes)) => {
                        let ax: Vec<usize> =
                            axes.iter().filter_map(|&a| axis(a, d.len())).collect();
                        Some(
                            d.iter()
                                .enumerate()
                                .filter(|(i, _)| !ax.contains(i))
                                .map(|(_, x)| x.clone())
                                .collect(),
                        )
                    }
                    _ => None,
                },
                "Concat" => {
                    let all: Vec<&Shape> = (0..n.inputs.len()).map(inp).collect();
                    match all.iter().map(|s| s.as_ref()).collect::<Option<Vec<_>>>() {
                        Some(ds) if !ds.is_empty() => {
                            let r = ds[0].len();
                            let a = n.attrs.int("axis", 0).ok().and_then(|a| axis(a, r));
                            match a {
                                Some(a) if ds.iter().all(|d| d.len() == r) => {
                                    let mut out = ds[0].clone();
                                    for d in &ds[1..] {
                                        for i in (0..r).filter(|&i| i != a) {
                                            if let (Some(p), Some(q)) =
                                                (fixed(&out[i]), fixed(&d[i]))
                                                && p != q
                                            {
                                                return Err(here(format!(
                                                    "axis {i} is {p} in one input and {q} in another"
                                                )));
                                            }
                                        }
                                    }
                                    out[a] = ds
                                        .iter()
                                        .map(|d| fixed(&d[a]))
                                        .try_fold(0usize, |s, n| Some(s + n?))
                                        .map_or(Dim::Unknown, Dim::Fixed);
                                    Some(out)
                                }
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                "Shape" => inp(0).as_ref().map(|d| {
                    let r = d.len();
                    let (s, e) = shape_range(
                        r,
                        n.attrs.int("start", 0).unwrap_or(0),
                        n.attrs.int("end", r as i64).unwrap_or(r as i64),
                    );
                    vec![Dim::Fixed(e - s)]
                }),
                "Size" => Some(Vec::new()),
                "Flatten" => inp(0).as_ref().and_then(|d| {
                    let a = n.attrs.int("axis", 1).ok()?;
                    let a = if a == d.len() as i64 {
                        d.len()
                    } else {
                        axis(a, d.len())?
                    };
                    let f = |s: &[Dim]| numel(s).map_or(Dim::Unknown, Dim::Fixed);
                    Some(vec![f(&d[..a]), f(&d[a..])])
                }),
                "Gather" => match (inp(0), inp(1)) {
                    (Some(d), Some(i)) => n
                        .attrs
                        .int("axis", 0)
                        .ok()
                        .and_then(|a| axis(a, d.len()))
                        .map(|a| {
                            let mut out = d[..a].to_vec();
                            out.extend(i.iter().cloned());
                            out.extend(d[a + 1..].iter().cloned());
                            out
                        }),
                    _ => None,
                },
                "Expand" => match (inp(0), const_in(1)) {
                    (Some(d), Some(t)) => {
                        let t: Shape = Some(
                            t.iter()
                                .map(|&v| usize::try_from(v).map_or(Dim::Unknown, Dim::Fixed))
                                .collect(),
                        );
                        broadcast_all(&[&Some(d.clone()), &t]).map_err(here)?
                    }
                    _ => None,
                },
                "Tile" => match (inp(0), const_in(1)) {
                    (Some(d), Some(r)) if r.len() == d.len() => Some(
                        d.iter()
                            .zip(r)
                            .map(|(x, &k)| match (fixed(x), usize::try_from(k).ok()) {
                                (Some(x), Some(k)) => {
                                    x.checked_mul(k).map_or(Dim::Unknown, Dim::Fixed)
                                }
                                _ => Dim::Unknown,
                            })
                            .collect(),
                    ),
                    _ => None,
                },
                "GlobalAveragePool" | "GlobalMaxPool" => {
                    inp(0).as_ref().filter(|d| d.len() >= 2).map(|d| {
                        let mut out = d[..2].to_vec();
                        out.extend(std::iter::repeat_n(Dim::Fixed(1), d.len() - 2));
                        out
                    })
                }
                "ArgMax" | "ArgMin" => inp(0).as_ref().and_then(|d| {
                    let a = axis(n.attrs.int("axis", 0).ok()?, d.len())?;
                    let keep = n.attrs.int("keepdims", 1).ok()? != 0;
                    Some(reduce_dims(d, &[a], keep))
                }),
                op if op.starts_with("Reduce") => inp(0).as_ref().and_then(|d| {
                    let keep = n.attrs.int("keepdims", 1).ok()? != 0;
                    let axes = match n.attrs.ints("axes").ok()? {
                        Some(a) => a,
                        None if n.inputs.get(1).copied().flatten().is_some() => {
                            const_in(1)?.clone()
                        }
                        None => Vec::new(),
                    };
                    let ax: Vec<usize> = if axes.is_empty() {
                        if n.attrs.int("noop_with_empty_axes", 0).ok()? != 0 {
                            return Some(d.clone());
                        }
                        (0..d.len()).collect()
                    } else {
                        axes.iter()
                            .map(|&a| axis(a, d.len()))
                            .collect::<Option<_>>()?
                    };
                    Some(reduce_dims(d, &ax, keep))
                }),
                "Conv" | "MaxPool" | "AveragePool" | "LpPool" => {
                    window_dims(n, inp(0), inp(1)).map_err(here)?
                }
                _ => None,
            }
        };
        if let Some(id) = n.outputs.first().copied().flatten() {
            shapes[id] = out;
        }
        // The small integer constants a shape chain is built from.
        if op == "Constant"
            && let Some(id) = n.outputs.first().copied().flatten()
            && let Some(Ok(Some(h))) = Some(n.attrs.tensor("value"))
        {
            shapes[id] = Some(h.dims.iter().map(|&d| Dim::Fixed(d)).collect());
            if let Some(v) = ints_of(h) {
                ints.insert(id, v);
            }
        }
    }
    for (id, info) in outputs {
        if let (Some(got), Some(want)) = (&shapes[*id], &info.dims) {
            let conflict = got.len() != want.len()
                || got
                    .iter()
                    .zip(want)
                    .any(|(g, w)| matches!((g, w), (Dim::Fixed(p), Dim::Fixed(q)) if p != q));
            if conflict {
                return Err(format!(
                    "graph output `{}` is declared with dims {want:?}, its node gives {got:?}",
                    info.name
                ));
            }
        }
    }
    Ok(shapes)
}
