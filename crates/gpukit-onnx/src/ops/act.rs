//! Ops composed from a few tensor-API calls, each in the order of the ONNX reference's
//! formula (the result matches the reference within the tolerance of the functions it
//! calls; the bits are the same on every device): LogSoftmax, Elu, Selu, Celu, Sign,
//! Softsign, HardSigmoid, HardSwish, ThresholdedRelu, Mish, LRN, ReduceSumSquare,
//! ReduceLogSum, Trilu, Einsum.

use std::collections::BTreeMap;

use gpukit_core::DType;
use gpukit_ops::CmpOp;
use gpukit_tensor::{Padding, PoolOptions, ReduceOp, Tensor};

use super::{Ctx, OpSpec, X, dims_i64, float_in, host_ints, norm_axis, opt, req, same, spec, val};
use crate::elem::ElemType;
use crate::error::{OpError, OpResult};
use crate::value::{Value, mask};

pub(super) static SPECS: &[OpSpec] = &[
    spec("LogSoftmax", &["axis"], 1, |c, x| {
        // x - logsumexp(x) over the axis (before opset 13: the input coerced to 2-D).
        let t = float_in(x, 0)?;
        let (t2, axis) = if c.opset >= 13 {
            (t.clone(), c.attrs.int("axis", -1)?)
        } else {
            let r = t.rank();
            let a = c.attrs.int("axis", 1)?;
            let a = if a == r as i64 { r } else { norm_axis(a, r)? };
            let outer: usize = t.dims()[..a].iter().product();
            let inner: usize = t.dims()[a..].iter().product();
            (t.reshape(&[outer as i64, inner as i64])?, -1)
        };
        let y = t2.sub(&t2.logsumexp_axes(&[axis], true)?)?;
        Ok(vec![val(y.reshape(&dims_i64(t.dims()))?)])
    }),
    spec("Elu", &["alpha"], 1, |c, x| {
        let t = float_in(x, 0)?;
        let alpha = c.attrs.float("alpha", 1.0)?;
        let neg = t.exp()?.sub_scalar(1.0)?.mul_scalar(alpha)?;
        Ok(vec![val(below_zero(t)?.where_(&neg, t)?)])
    }),
    spec("Selu", &["alpha", "gamma"], 1, |c, x| {
        let t = float_in(x, 0)?;
        let alpha = c.attrs.float("alpha", 1.673_263_192_176_818_8)?;
        let gamma = c.attrs.float("gamma", 1.050_701_022_148_132_3)?;
        let neg = t.exp()?.mul_scalar(alpha)?.sub_scalar(alpha)?;
        let y = mask(t, CmpOp::Le, 0.0)?
            .where_(&neg, t)?
            .mul_scalar(gamma)?;
        Ok(vec![val(y)])
    }),
    spec("Celu", &["alpha"], 1, |c, x| {
        // max(0, x) + min(0, alpha·(exp(x / alpha) - 1))
        let t = float_in(x, 0)?;
        let alpha = c.attrs.float("alpha", 1.0)?;
        let neg = t
            .div_scalar(alpha)?
            .exp()?
            .sub_scalar(1.0)?
            .mul_scalar(alpha)?;
        Ok(vec![val(below_zero(t)?.where_(&neg, t)?)])
    }),
    spec("Sign", &[], 1, |_, x| {
        let v = req(x, 0)?;
        let t = &v.t;
        // (t > 0) - (t < 0), the masks in t's dtype.
        let s = t.gt_scalar(0.0)?.sub(&t.lt_scalar(0.0)?)?;
        if t.dtype().is_float() {
            // NaN keeps its sign's NaN (numpy's sign).
            let nan = t.compare_as(CmpOp::Ne, t, DType::I32)?;
            return Ok(vec![val(nan.where_(t, &s)?)]);
        }
        Ok(vec![same(v, s)])
    }),
    spec("Softsign", &[], 1, |_, x| {
        let t = float_in(x, 0)?;
        Ok(vec![val(t.div(&t.abs()?.add_scalar(1.0)?)?)])
    }),
    spec("HardSigmoid", &["alpha", "beta"], 1, |c, x| {
        let t = float_in(x, 0)?;
        let y = t
            .mul_scalar(c.attrs.float("alpha", 0.2)?)?
            .add_scalar(c.attrs.float("beta", 0.5)?)?
            .clip(0.0, 1.0)?;
        Ok(vec![val(y)])
    }),
    spec("HardSwish", &[], 1, |_, x| {
        // x · max(0, min(1, x / 6 + 1/2))
        let t = float_in(x, 0)?;
        let g = t.mul_scalar(1.0 / 6.0)?.add_scalar(0.5)?.clip(0.0, 1.0)?;
        Ok(vec![val(t.mul(&g)?)])
    }),
    spec("ThresholdedRelu", &["alpha"], 1, |c, x| {
        let t = float_in(x, 0)?;
        let keep = mask(t, CmpOp::Gt, c.attrs.float("alpha", 1.0)?)?;
        let zero = Tensor::zeros(t.kit(), &[], t.dtype())?;
        Ok(vec![val(keep.where_(t, &zero)?)])
    }),
    spec("Mish", &[], 1, |_, x| {
        let t = float_in(x, 0)?;
        Ok(vec![val(t.mul(&t.softplus()?.tanh()?)?)])
    }),
    spec("LRN", &["alpha", "beta", "bias", "size"], 1, |c, x| {
        lrn(c, x)
    }),
    spec(
        "ReduceSumSquare",
        &["axes", "keepdims", "noop_with_empty_axes"],
        2,
        |c, x| {
            let t = &req(x, 0)?.t;
            reduce_after(c, x, &t.mul(t)?, ReduceOp::Sum, false)
        },
    ),
    spec(
        "ReduceLogSum",
        &["axes", "keepdims", "noop_with_empty_axes"],
        2,
        |c, x| reduce_after(c, x, &req(x, 0)?.t, ReduceOp::Sum, true),
    ),
    spec("Trilu", &["upper"], 2, |c, x| {
        let v = req(x, 0)?;
        let t = &v.t;
        if t.rank() < 2 {
            return Err(OpError::Invalid(format!("Trilu of dims {:?}", t.dims())));
        }
        let k = match opt(x, 1) {
            Some(k) => host_ints(k, "Trilu's k")?.first().copied().unwrap_or(0),
            None => 0,
        };
        let upper = c.attrs.flag("upper", true)?;
        let (n, m) = (t.dims()[t.rank() - 2], t.dims()[t.rank() - 1]);
        let keep: Vec<i32> = (0..n as i64)
            .flat_map(|i| {
                (0..m as i64).map(move |j| i32::from(if upper { j - i >= k } else { j - i <= k }))
            })
            .collect();
        let keep = Tensor::from_slice(c.kit, &keep, &[n, m])?;
        let zero = Tensor::zeros(c.kit, &[], t.dtype())?;
        Ok(vec![same(
            v,
            keep.where_(t, &zero.broadcast_to(t.dims())?)?,
        )])
    }),
    spec("Einsum", &["equation"], usize::MAX, |c, x| einsum(c, x)),
];

/// The 0/1 mask of `t < 0`.
fn below_zero(t: &Tensor) -> OpResult<Tensor> {
    Ok(mask(t, CmpOp::Lt, 0.0)?)
}

/// A reduction of `t` (already transformed) with the Reduce* axes rules (axes as an
/// input from opset 18); `log` takes the logarithm of the result.
fn reduce_after(
    c: &Ctx<'_>,
    x: X<'_>,
    t: &Tensor,
    op: ReduceOp,
    log: bool,
) -> OpResult<Vec<Value>> {
    let keep = c.attrs.flag("keepdims", true)?;
    let axes = if c.opset < 18 {
        c.attrs.ints("axes")?
    } else {
        opt(x, 1).map(|a| host_ints(a, "axes")).transpose()?
    };
    let axes = match axes {
        Some(a) if !a.is_empty() => a,
        _ if c.attrs.flag("noop_with_empty_axes", false)? => {
            return Ok(vec![val(if log { t.log()? } else { t.clone() })]);
        }
        _ => (0..t.rank() as i64).collect(),
    };
    let y = t.reduce(op, &axes, keep)?;
    Ok(vec![val(if log { y.log()? } else { y })])
}

/// LRN over channels: `x / (bias + alpha / size · Σ x²)^beta`, the sum over the
/// `size` channels around each one (`floor((size-1)/2)` before, `ceil` after).
fn lrn(c: &Ctx<'_>, x: X<'_>) -> OpResult<Vec<Value>> {
    let t = float_in(x, 0)?;
    let size = c.attrs.int("size", 0)?;
    if size <= 0 || t.rank() < 3 {
        return Err(OpError::Invalid(format!(
            "LRN of size {size} on dims {:?}",
            t.dims()
        )));
    }
    let (alpha, beta, bias) = (
        c.attrs.float("alpha", 1e-4)?,
        c.attrs.float("beta", 0.75)?,
        c.attrs.float("bias", 1.0)?,
    );
    let d = t.dims().to_vec();
    let (n, ch) = (d[0], d[1]);
    let rest: usize = d[2..].iter().product();
    // [n, c, rest] -> [n·rest, 1, c]: a 1-D window over the channels.
    let sq = t.mul(t)?;
    let lines = sq
        .reshape(&[n as i64, ch as i64, rest as i64])?
        .permute(&[0, 2, 1])?
        .reshape(&[(n * rest) as i64, 1, ch as i64])?;
    let size = size as usize;
    let o = PoolOptions {
        kernel: vec![size],
        strides: vec![1],
        dilations: vec![1],
        padding: Padding::Explicit(vec![(size - 1) / 2, (size - 1).div_ceil(2)]),
        ceil_mode: false,
    };
    let sum = lines.avg_pool(&o, true)?.mul_scalar(size as f64)?;
    let sum = sum
        .reshape(&[n as i64, rest as i64, ch as i64])?
        .permute(&[0, 2, 1])?
        .reshape(&dims_i64(&d))?;
    let den = sum
        .mul_scalar(alpha / size as f64)?
        .add_scalar(bias)?
        .pow_scalar(beta)?;
    Ok(vec![val(t.div(&den)?)])
}

/// Einsum without repeated letters inside one operand (no diagonals) and with an
/// explicit or implicit output: each operand is permuted to a common letter order and
/// broadcast, the product taken left to right, and the letters not in the output
/// summed. `...` is supported when every operand has it.
fn einsum(c: &Ctx<'_>, x: X<'_>) -> OpResult<Vec<Value>> {
    let eq: String = c
        .attrs
        .string("equation", "")?
        .chars()
        .filter(|ch| !ch.is_whitespace())
        .collect();
    let ops: Vec<&Value> = x.iter().flatten().collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() || ops.is_empty() {
        return Err(OpError::Invalid(format!(
            "equation `{eq}` has {} operands, the node {}",
            terms.len(),
            ops.len()
        )));
    }
    if ops.iter().any(|v| v.ty == ElemType::Bool) {
        return Err(OpError::Invalid("Einsum of bool tensors".into()));
    }
    // Expand `...` to upper-case letters (the broadcast dims), right-aligned.
    // Each operand's count of `...` dims: its rank less its letters.
    let ell_of = |t: &str, v: &Value| -> OpResult<usize> {
        (v.t.rank() + 3).checked_sub(t.len()).ok_or_else(|| {
            OpError::Invalid(format!("term `{t}` does not fit dims {:?}", v.t.dims()))
        })
    };
    let mut ell_rank = 0;
    for (t, v) in terms.iter().zip(&ops) {
        if t.contains("...") {
            ell_rank = ell_rank.max(ell_of(t, v)?);
        }
    }
    if ell_rank > 26 {
        return Err(OpError::Unsupported(format!("{ell_rank} broadcast dims")));
    }
    let ell: String = (0..ell_rank).map(|i| (b'A' + i as u8) as char).collect();
    let mut labels: Vec<Vec<char>> = Vec::new();
    for (t, v) in terms.iter().zip(&ops) {
        let expanded = if t.contains("...") {
            let here = ell_of(t, v)?;
            t.replace("...", &ell[ell_rank - here..])
        } else {
            t.to_string()
        };
        let l: Vec<char> = expanded.chars().collect();
        if l.len() != v.t.rank() || !l.iter().all(|c| c.is_ascii_alphabetic()) {
            return Err(OpError::Invalid(format!(
                "term `{t}` does not fit dims {:?}",
                v.t.dims()
            )));
        }
        let mut seen = l.clone();
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            return Err(OpError::Unsupported(format!(
                "a letter repeated within `{t}` (diagonals)"
            )));
        }
        labels.push(l);
    }
    // Sizes per letter (1 broadcasts).
    let mut size: BTreeMap<char, usize> = BTreeMap::new();
    for (l, v) in labels.iter().zip(&ops) {
        for (ch, &d) in l.iter().zip(v.t.dims()) {
            let e = size.entry(*ch).or_insert(d);
            if *e == 1 {
                *e = d;
            } else if d != 1 && d != *e {
                return Err(OpError::Invalid(format!("letter `{ch}` is {e} and {d}")));
            }
        }
    }
    let out: Vec<char> = match rhs {
        Some(r) => r.replace("...", &ell).chars().collect(),
        None => {
            // Implicit: the broadcast dims, then the letters seen once, in order.
            let mut count: BTreeMap<char, usize> = BTreeMap::new();
            labels
                .iter()
                .flatten()
                .for_each(|c| *count.entry(*c).or_insert(0) += 1);
            ell.chars()
                .chain(
                    count
                        .iter()
                        .filter(|(c, n)| **n == 1 && c.is_ascii_lowercase())
                        .map(|(c, _)| *c),
                )
                .collect()
        }
    };
    let mut sorted = out.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(OpError::Invalid(format!(
            "output `{}` repeats a letter",
            String::from_iter(&out)
        )));
    }
    if let Some(ch) = out.iter().find(|c| !size.contains_key(c)) {
        return Err(OpError::Invalid(format!(
            "output letter `{ch}` is in no operand"
        )));
    }
    // The common order: output letters, then the summed ones.
    let order: Vec<char> = out
        .iter()
        .copied()
        .chain(size.keys().copied().filter(|c| !out.contains(c)))
        .collect();
    let mut acc: Option<Tensor> = None;
    for (l, v) in labels.iter().zip(&ops) {
        // Permute to the order of `order` restricted to l, then insert 1-dims.
        let perm: Vec<i64> = order
            .iter()
            .filter_map(|c| l.iter().position(|x| x == c).map(|p| p as i64))
            .collect();
        let mut t = v.t.permute(&perm)?;
        let present: Vec<char> = order.iter().copied().filter(|c| l.contains(c)).collect();
        let shape: Vec<i64> = order
            .iter()
            .map(|c| {
                if present.contains(c) {
                    v.t.dims()[l.iter().position(|x| x == c).expect("present")] as i64
                } else {
                    1
                }
            })
            .collect();
        t = t.reshape(&shape)?;
        acc = Some(match acc {
            None => t,
            Some(a) => a.mul(&t)?,
        });
    }
    let mut y = acc.expect("at least one operand");
    let full: Vec<usize> = order.iter().map(|c| size[c]).collect();
    y = y.broadcast_to(&full)?;
    if order.len() > out.len() {
        let axes: Vec<i64> = (out.len() as i64..order.len() as i64).collect();
        y = y.reduce(ReduceOp::Sum, &axes, false)?;
    } else {
        y = y.contiguous()?;
    }
    Ok(vec![val(y)])
}
