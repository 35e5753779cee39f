//! Plan-time fusion that keeps every bit: `MatMul(x, W)` whose only reader is
//! `Add(·, bias)`, with `W` a constant `[k, n]` and `bias` a constant `[n]`, runs as one
//! `gemm` of the `[rows, k]` activations with the bias as a broadcast C row. The gemm
//! op's bits are the product's chain over k, then one addition of the bias (the
//! contract's epilogue order), exactly those of MatMul followed by Add; the fused step
//! skips a pass over the output and its temporary.

use std::collections::HashMap;

use gpukit_tensor::{GemmOpts, Tensor};

use crate::model::Model;
use crate::value::Value;

/// One step of a run: a node, or a fused MatMul + Add.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    Node(usize),
    MatMulAdd {
        /// The MatMul and Add nodes (for errors and the fallback).
        mm: usize,
        add: usize,
        x: usize,
        w: usize,
        bias: usize,
        out: usize,
    },
}

impl Step {
    /// The value ids the step reads.
    pub(crate) fn reads(&self, model: &Model) -> Vec<usize> {
        match *self {
            Step::Node(i) => model.nodes[i].inputs.iter().flatten().copied().collect(),
            Step::MatMulAdd { x, w, bias, .. } => vec![x, w, bias],
        }
    }
}

/// Turns the nodes to run into steps, fusing each MatMul + bias Add it can.
pub(crate) fn plan(model: &Model, run: &[usize], consts: &HashMap<usize, Value>) -> Vec<Step> {
    let outputs: Vec<usize> = model.outputs.iter().map(|(id, _)| *id).collect();
    let mut readers: HashMap<usize, Vec<usize>> = HashMap::new();
    for &i in run {
        for id in model.nodes[i].inputs.iter().flatten() {
            readers.entry(*id).or_default().push(i);
        }
    }
    let mut fused_adds = Vec::new();
    let mut steps = Vec::with_capacity(run.len());
    for &i in run {
        if fused_adds.contains(&i) {
            continue;
        }
        let n = &model.nodes[i];
        let fusion = (|| {
            if n.op != "MatMul" {
                return None;
            }
            let (Some(x), Some(w)) = (n.inputs.first().copied()?, n.inputs.get(1).copied()?) else {
                return None;
            };
            let v = n.outputs.first().copied()??;
            let wt = consts.get(&w)?;
            if wt.t.rank() != 2 || !wt.ty.is_float() || outputs.contains(&v) {
                return None;
            }
            let [add] = readers.get(&v)?.as_slice() else {
                return None;
            };
            let a = &model.nodes[*add];
            if a.op != "Add" || a.inputs.len() != 2 || a.outputs.len() != 1 {
                return None;
            }
            let bias = match (a.inputs[0], a.inputs[1]) {
                (Some(p), Some(q)) if p == v && q != v => q,
                (Some(p), Some(q)) if q == v && p != v => p,
                _ => return None,
            };
            let bt = consts.get(&bias)?;
            if bt.t.dims() != [wt.t.dims()[1]] || bt.ty != wt.ty {
                return None;
            }
            Some(Step::MatMulAdd {
                mm: i,
                add: *add,
                x,
                w,
                bias,
                out: a.outputs[0]?,
            })
        })();
        match fusion {
            Some(s @ Step::MatMulAdd { add, .. }) => {
                fused_adds.push(add);
                steps.push(s);
            }
            _ => steps.push(Step::Node(i)),
        }
    }
    steps
}

/// The fused step: `x` `[..., k]` as `[rows, k]`, one gemm with the bias row, back to
/// `[..., n]`; `None` when `x` is not a matrix batch of W's dtype (the caller then runs
/// the two nodes).
pub(crate) fn matmul_add(x: &Value, w: &Value, bias: &Value) -> Option<gpukit_core::Result<Value>> {
    let (xt, wt) = (&x.t, &w.t);
    if x.ty != w.ty || xt.rank() < 2 || xt.dims()[xt.rank() - 1] != wt.dims()[0] {
        return None;
    }
    let run = || -> gpukit_core::Result<Value> {
        let k = wt.dims()[0];
        let rows: usize = xt.dims()[..xt.rank() - 1].iter().product();
        let y =
            xt.reshape(&[rows as i64, k as i64])?
                .gemm(wt, Some(&bias.t), GemmOpts::default())?;
        let mut dims: Vec<i64> = xt.dims()[..xt.rank() - 1]
            .iter()
            .map(|&d| d as i64)
            .collect();
        dims.push(wt.dims()[1] as i64);
        Ok(Value::new(Tensor::reshape(&y, &dims)?))
    };
    Some(run())
}
