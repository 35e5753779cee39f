//! Planning and running a model on a kit: initializers uploaded once, constant
//! subgraphs folded once, each intermediate value released after its last reader.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use gpukit_core::Kit;
use gpukit_tensor::Tensor;

use crate::elem::ElemType;
use crate::error::{OnnxError, OpError, Result};
use crate::fuse::{self, Step};
use crate::graph::{Dim, Node};
use crate::model::Model;
use crate::ops::Ctx;
use crate::value::Value;

/// Time spent in one op type during profiled runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpTime {
    /// Node executions.
    pub calls: u64,
    /// Wall time, the device synchronised after each node.
    pub seconds: f64,
}

/// A model planned on a kit: run it as often as needed; each run reuses the plan, the
/// uploaded initializers and the folded constants.
pub struct Session<'m> {
    model: &'m Model,
    kit: Kit,
    /// Values known before any run: initializers (not overridable) and folded nodes.
    consts: HashMap<usize, Value>,
    /// Initializers that are also graph inputs: defaults a run may replace.
    defaults: HashMap<usize, Value>,
    /// The steps of a run, in order: the nodes left after folding, MatMul + bias Add
    /// pairs fused (`fuse.rs`).
    steps: Vec<Step>,
    /// Per step: the values it is the last reader of, released after it (never a
    /// constant or a graph output).
    release: Vec<Vec<usize>>,
    nodes_per_run: usize,
    profile: Option<BTreeMap<String, OpTime>>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("steps", &self.steps.len())
            .field("constants", &self.consts.len())
            .finish()
    }
}

fn node_err(n: &Node, e: OpError) -> OnnxError {
    let what = match e {
        OpError::Unsupported(w) => format!("unsupported: {w}"),
        OpError::Invalid(w) => w,
        OpError::Core(e) => e.to_string(),
    };
    OnnxError::Node {
        node: n.name.clone(),
        op: n.op.clone(),
        what,
    }
}

/// Runs one node on its inputs (the op's own handles; see `ops::RunFn`).
fn exec(kit: &Kit, n: &Node, xs: &mut [Option<Value>]) -> Result<Vec<Value>> {
    let ctx = Ctx {
        kit,
        attrs: &n.attrs,
        opset: n.opset,
        nout: n.outputs.len(),
    };
    let outs = match crate::ops::narrow::involved(xs) {
        // A narrow input: the op runs with the type's semantics, or not at all.
        Some(ty) => crate::ops::narrow::run(&n.op, &ctx, xs, ty),
        None => (n.spec.run)(&ctx, xs),
    }
    .map_err(|e| node_err(n, e))?;
    let wanted = n
        .outputs
        .iter()
        .rposition(Option::is_some)
        .map_or(0, |p| p + 1);
    if outs.len() < wanted {
        return Err(node_err(
            n,
            OpError::Invalid(format!(
                "the op gave {} outputs, the node asks for {wanted}",
                outs.len()
            )),
        ));
    }
    Ok(outs)
}

impl<'m> Session<'m> {
    /// Plans `model` on `kit`: uploads the initializers and runs every node whose
    /// inputs are all constant (folding), so that [`Session::run`] runs only the rest.
    ///
    /// Errors: a folded node's failure ([`OnnxError::Node`], naming it), and upload
    /// errors of the kit.
    pub fn new(model: &'m Model, kit: &Kit) -> Result<Session<'m>> {
        let input_ids: HashSet<usize> = model.inputs.iter().map(|(id, _)| *id).collect();
        let mut consts = HashMap::new();
        let mut defaults = HashMap::new();
        for (id, h) in &model.initializers {
            let v = Value {
                t: h.to_tensor(kit)?,
                ty: h.ty,
            };
            if input_ids.contains(id) {
                defaults.insert(*id, v);
            } else {
                consts.insert(*id, v);
            }
        }
        let mut run_list = Vec::new();
        for (i, n) in model.nodes.iter().enumerate() {
            let foldable = n.inputs.iter().flatten().all(|id| consts.contains_key(id));
            if !foldable {
                run_list.push(i);
                continue;
            }
            // The constants stay held here, so no folded op writes over one.
            let mut xs: Vec<Option<Value>> = n
                .inputs
                .iter()
                .map(|i| i.map(|id| consts[&id].clone()))
                .collect();
            let outs = exec(kit, n, &mut xs)?;
            for (o, v) in n.outputs.iter().zip(outs) {
                if let Some(id) = o {
                    consts.insert(*id, v);
                }
            }
        }
        let nodes_per_run = run_list.len();
        let steps = fuse::plan(model, &run_list, &consts);
        let mut last_use: HashMap<usize, usize> = HashMap::new();
        for (pos, st) in steps.iter().enumerate() {
            for id in st.reads(model) {
                last_use.insert(id, pos);
            }
        }
        let mut release = vec![Vec::new(); steps.len()];
        for (id, pos) in last_use {
            let kept = consts.contains_key(&id) || model.outputs.iter().any(|(o, _)| *o == id);
            if !kept {
                release[pos].push(id);
            }
        }
        Ok(Session {
            model,
            kit: kit.clone(),
            consts,
            defaults,
            steps,
            nodes_per_run,
            release,
            profile: None,
        })
    }

    /// The kit the session runs on.
    pub fn kit(&self) -> &Kit {
        &self.kit
    }

    /// The number of nodes each run executes (the others were folded at plan time).
    pub fn nodes_per_run(&self) -> usize {
        self.nodes_per_run
    }

    /// Turns per-op timing on (the device is synchronised after every node, so runs
    /// are slower) or off; [`Session::profile`] reads the totals.
    pub fn set_profiling(&mut self, on: bool) {
        self.profile = on.then(BTreeMap::new);
    }

    /// Per-op totals of the profiled runs so far (`None` when profiling is off).
    pub fn profile(&self) -> Option<&BTreeMap<String, OpTime>> {
        self.profile.as_ref()
    }

    /// Runs the model on `inputs` (graph input name, tensor) and returns the graph
    /// outputs in the model's order. A `bool` input is given as any integer tensor
    /// (nonzero is true); every other input must have its type's dtype and the
    /// declared dims (named dims must agree across inputs).
    ///
    /// Errors: [`OnnxError::Input`] naming a missing, unknown or mismatched input;
    /// [`OnnxError::Node`] naming the node that failed (shapes that do not fit its op,
    /// device errors).
    pub fn run(&mut self, inputs: &[(&str, &Tensor)]) -> Result<Vec<Value>> {
        let model = self.model;
        let mut slots: Vec<Option<Value>> = vec![None; model.names.len()];
        for (id, v) in &self.consts {
            slots[*id] = Some(v.clone());
        }
        let mut given: HashMap<&str, &Tensor> = HashMap::new();
        for (name, t) in inputs {
            if given.insert(name, t).is_some() {
                return Err(input_err(name, "given twice"));
            }
            if !model.inputs.iter().any(|(_, i)| i.name == *name) {
                return Err(input_err(name, "the model has no such input"));
            }
        }
        let mut sizes: HashMap<&str, usize> = HashMap::new();
        for (id, info) in &model.inputs {
            let v = match given.get(info.name.as_str()) {
                Some(t) => {
                    if !t.kit().same(&self.kit) {
                        return Err(input_err(
                            &info.name,
                            "the tensor belongs to another kit than the session's",
                        ));
                    }
                    if let Some(dims) = &info.dims {
                        check_dims(&info.name, t.dims(), dims, &mut sizes)?;
                    }
                    to_input_value(&info.name, info.ty, t)?
                }
                None => match self.defaults.get(id) {
                    Some(v) => v.clone(),
                    None => return Err(input_err(&info.name, "missing")),
                },
            };
            slots[*id] = Some(v);
        }
        for (pos, step) in self.steps.iter().enumerate() {
            let t0 = self.profile.is_some().then(Instant::now);
            let label = match *step {
                Step::Node(i) => {
                    self.run_node(i, &mut slots, &self.release[pos])?;
                    model.nodes[i].op.as_str()
                }
                Step::MatMulAdd {
                    mm,
                    add,
                    x,
                    w,
                    bias,
                    out,
                } => {
                    let get = |id: usize| slots[id].clone();
                    let fused = match (get(x), get(w), get(bias)) {
                        (Some(xv), Some(wv), Some(bv)) => fuse::matmul_add(&xv, &wv, &bv),
                        _ => None,
                    };
                    match fused {
                        Some(r) => {
                            slots[out] = Some(r.map_err(|e| node_err(&model.nodes[mm], e.into()))?);
                        }
                        None => {
                            self.run_node(mm, &mut slots, &[])?;
                            self.run_node(add, &mut slots, &[])?;
                        }
                    }
                    "MatMul+Add (fused gemm)"
                }
            };
            if let (Some(t0), Some(p)) = (t0, self.profile.as_mut()) {
                self.kit.sync()?;
                let e = p.entry(label.to_string()).or_default();
                e.calls += 1;
                e.seconds += t0.elapsed().as_secs_f64();
            }
            for &id in &self.release[pos] {
                slots[id] = None;
            }
        }
        let mut outs = Vec::with_capacity(model.outputs.len());
        for (id, info) in &model.outputs {
            let Some(v) = slots[*id].clone() else {
                return Err(OnnxError::Invalid(format!(
                    "graph output `{}` was not computed",
                    info.name
                )));
            };
            if v.ty != info.ty {
                return Err(OnnxError::Invalid(format!(
                    "graph output `{}` is {}, the model declares {}",
                    info.name, v.ty, info.ty
                )));
            }
            outs.push(v);
        }
        Ok(outs)
    }
}

impl Session<'_> {
    /// Runs node `i` on the values in `slots` and stores its outputs there. The values
    /// in `last` (those this node reads for the last time) leave `slots` first, so the
    /// op holds the only handle on each (unless a view or a second use shares it) and
    /// may write its result over it: in-place execution, decided per buffer at run time.
    fn run_node(&self, i: usize, slots: &mut [Option<Value>], last: &[usize]) -> Result<()> {
        let n = &self.model.nodes[i];
        let mut xs: Vec<Option<Value>> = n
            .inputs
            .iter()
            .map(|i| i.and_then(|id| slots[id].clone()))
            .collect();
        // A node step's release list holds only its own inputs (`Step::reads`).
        for &id in last {
            slots[id] = None;
        }
        let outs = exec(&self.kit, n, &mut xs)?;
        for (o, v) in n.outputs.iter().zip(outs) {
            if let Some(id) = o {
                slots[*id] = Some(v);
            }
        }
        Ok(())
    }
}

fn input_err(name: &str, what: &str) -> OnnxError {
    OnnxError::Input {
        name: name.to_string(),
        what: what.to_string(),
    }
}

/// Checks an input's dims against the declared ones, binding named dims.
fn check_dims<'a>(
    name: &str,
    got: &[usize],
    want: &'a [Dim],
    sizes: &mut HashMap<&'a str, usize>,
) -> Result<()> {
    let show = || {
        let w: Vec<String> = want.iter().map(ToString::to_string).collect();
        format!("dims {got:?}, the model declares [{}]", w.join(", "))
    };
    if got.len() != want.len() {
        return Err(input_err(name, &show()));
    }
    for (g, w) in got.iter().zip(want) {
        match w {
            Dim::Fixed(n) if n != g => return Err(input_err(name, &show())),
            Dim::Symbolic(s) => {
                if let Some(&prev) = sizes.get(s.as_str())
                    && prev != *g
                {
                    return Err(input_err(
                        name,
                        &format!("{}: `{s}` is {prev} in another input", show()),
                    ));
                }
                sizes.insert(s, *g);
            }
            _ => {}
        }
    }
    Ok(())
}

/// An input tensor as a value of the declared type.
fn to_input_value(name: &str, ty: ElemType, t: &Tensor) -> Result<Value> {
    if ty == ElemType::Bool {
        if t.dtype().is_float() {
            return Err(input_err(
                name,
                &format!(
                    "a {} tensor for a bool input (give 0/1 integers)",
                    t.dtype()
                ),
            ));
        }
        return Ok(Value::nonzero(t)?);
    }
    if t.dtype() != ty.dtype() {
        let stored = if ty.is_narrow() {
            format!(" (stored as {})", ty.dtype())
        } else {
            String::new()
        };
        return Err(input_err(
            name,
            &format!("a {} tensor, the model takes {ty}{stored}", t.dtype()),
        ));
    }
    if ty.is_narrow() {
        crate::ops::narrow::check_range(t, ty).map_err(|w| input_err(name, &w))?;
        if ty.is_float() {
            crate::ops::narrow::check_format(t, ty).map_err(|w| input_err(name, &w))?;
        }
    }
    Ok(Value { t: t.clone(), ty })
}
