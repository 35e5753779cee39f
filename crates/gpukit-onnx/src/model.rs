//! Loading and checking a model: the protobuf decoded, every node resolved to an op
//! gpukit runs (or refused by name), values numbered, nodes in topological order.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use prost::Message;

use crate::attrs::{self, Attrs};
use crate::elem::{ElemType, onnx_type_name};
use crate::error::{OnnxError, OpError, Result};
use crate::graph::Node;
pub use crate::graph::{Dim, IoInfo};
use crate::host::{self, HostTensor};
use crate::ops::{self, OpSpec};
use crate::proto::{self, DimValue, ModelProto};
use crate::shapes::{self, Shape};

/// The opsets of the default domain gpukit reads. 28 is the newest of onnx 1.23: the op
/// changes since 23 add element types gpukit does not run, or attributes and inputs the
/// specs check. Before opset 7 the ops differ by attributes (`broadcast`,
/// `consumed_inputs`, Reshape's `shape`, ...), which every spec refuses by name, or by
/// not broadcasting, which gpukit's broadcasting extends; the ops whose inputs became
/// attributes or the reverse read the opset (Softmax, Slice, Pad, Split, Squeeze,
/// Unsqueeze, Clip, TopK, the reductions).
const OPSETS: std::ops::RangeInclusive<i64> = 1..=28;

/// A loaded, checked ONNX model: what [`crate::Session`] plans and runs.
#[derive(Debug)]
pub struct Model {
    pub(crate) names: Vec<String>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) inputs: Vec<(usize, IoInfo)>,
    pub(crate) outputs: Vec<(usize, IoInfo)>,
    pub(crate) initializers: Vec<(usize, HostTensor)>,
    /// Each value's dims as inferred at load time (`shapes.rs`).
    shapes: Vec<Shape>,
    opset: i64,
    ir_version: i64,
    producer: String,
}

impl Model {
    /// Reads and checks the model file at `path`; external tensor data is read from
    /// files beside it.
    ///
    /// Errors: [`OnnxError::Io`] when the file cannot be read; otherwise those of
    /// [`Model::from_bytes`].
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| OnnxError::Io {
            path: path.display().to_string(),
            msg: e.to_string(),
        })?;
        let dir = path.parent().map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        });
        Model::decode(&bytes, dir)
    }

    /// Checks a model held in memory (external data is refused: there is no folder to
    /// read it from).
    ///
    /// Errors: [`OnnxError::Malformed`] for bytes that are not a well-formed model
    /// (truncated, not protobuf, tensor data that does not match its dims);
    /// [`OnnxError::Unsupported`] naming the node and op for an op, attribute, element
    /// type or opset gpukit does not run; [`OnnxError::Invalid`] for an inconsistent
    /// graph (an undefined or twice-defined value, a cycle, shapes that load-time
    /// inference finds in conflict, naming the node).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        Model::decode(bytes, None)
    }

    fn decode(bytes: &[u8], dir: Option<&Path>) -> Result<Model> {
        let m = ModelProto::decode(bytes).map_err(|e| OnnxError::Malformed(e.to_string()))?;
        let Some(graph) = m.graph.as_ref() else {
            return Err(OnnxError::Malformed("the model has no graph".into()));
        };
        let mut opset = None;
        for o in &m.opset_import {
            let d = o.domain.as_deref().unwrap_or("");
            if d.is_empty() || d == "ai.onnx" {
                opset = o.version;
            }
        }
        // IR version 2 models may omit the import: ONNX then means opset 1, which
        // gpukit does not read.
        let opset = opset.ok_or_else(|| OnnxError::Unsupported {
            node: "(model)".into(),
            op: "opset".into(),
            what: "the model imports no opset of the default ONNX domain".into(),
        })?;
        if !OPSETS.contains(&opset) {
            return Err(OnnxError::Unsupported {
                node: "(model)".into(),
                op: "opset".into(),
                what: format!(
                    "opset {opset} of the default domain (gpukit reads {}..={})",
                    OPSETS.start(),
                    OPSETS.end()
                ),
            });
        }
        if !graph.sparse_initializer.is_empty() {
            return Err(OnnxError::Unsupported {
                node: "(graph)".into(),
                op: "initializer".into(),
                what: "sparse initializers".into(),
            });
        }
        let mut b = Builder::default();
        let mut initializers = Vec::new();
        for t in &graph.initializer {
            let name = t.name.clone().unwrap_or_default();
            let h = host::decode(t, dir).map_err(|e| e.into_onnx("(initializer)", &name))?;
            let id = b.define(&name, "an initializer")?;
            initializers.push((id, h));
        }
        let init_ids: HashMap<usize, usize> = initializers
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        let mut inputs = Vec::new();
        for vi in &graph.input {
            let name = vi.name.clone().unwrap_or_default();
            let info = io_info(vi, "input")?;
            let id = match b.ids.get(&name) {
                Some(&id) if init_ids.contains_key(&id) => id,
                _ => b.define(&name, "a graph input")?,
            };
            inputs.push((
                id,
                IoInfo {
                    has_default: init_ids.contains_key(&id),
                    ..info
                },
            ));
        }
        // Nodes: resolve ops and attributes, then order them.
        let mut raw = Vec::with_capacity(graph.node.len());
        for (i, n) in graph.node.iter().enumerate() {
            raw.push(resolve_node(i, n, opset)?);
        }
        let mut producer: HashMap<String, usize> = HashMap::new();
        for (i, n) in graph.node.iter().enumerate() {
            for o in n.output.iter().filter(|o| !o.is_empty()) {
                if b.ids.contains_key(o) || producer.insert(o.clone(), i).is_some() {
                    return Err(OnnxError::Invalid(format!(
                        "value `{o}` is defined more than once (node `{}`)",
                        raw[i].0
                    )));
                }
            }
        }
        let order = topo_order(graph, &producer, &b.ids, &raw)?;
        let mut nodes = Vec::with_capacity(order.len());
        for i in order {
            let n = &graph.node[i];
            let (name, op, spec, attrs) = std::mem::take(&mut raw[i]).into_parts();
            let ins = n
                .input
                .iter()
                .map(|s| (!s.is_empty()).then(|| b.ids[s]))
                .collect();
            let mut outs = Vec::with_capacity(n.output.len());
            for o in &n.output {
                outs.push(if o.is_empty() {
                    None
                } else {
                    Some(b.define(o, "a node output")?)
                });
            }
            nodes.push(Node {
                name,
                op,
                opset,
                spec: spec.expect("resolved"),
                attrs,
                inputs: ins,
                outputs: outs,
            });
        }
        // A node fed directly by a narrow-typed graph input or initializer must be an op
        // that takes narrow types (the rest is checked when the values exist).
        let known: HashMap<usize, ElemType> = inputs
            .iter()
            .map(|(id, i)| (*id, i.ty))
            .chain(initializers.iter().map(|(id, h)| (*id, h.ty)))
            .collect();
        for n in &nodes {
            let narrow = n
                .inputs
                .iter()
                .flatten()
                .filter_map(|id| known.get(id))
                .find(|t| t.is_narrow());
            if let Some(ty) = narrow
                && !ops::narrow::accepts(&n.op)
            {
                return Err(OnnxError::Unsupported {
                    node: n.name.clone(),
                    op: n.op.clone(),
                    what: format!("{} on {ty} tensors", n.op),
                });
            }
        }
        let mut outputs = Vec::new();
        for vi in &graph.output {
            let name = vi.name.clone().unwrap_or_default();
            let Some(&id) = b.ids.get(&name) else {
                return Err(OnnxError::Invalid(format!(
                    "graph output `{name}` is not defined by any node, input or initializer"
                )));
            };
            outputs.push((id, io_info(vi, "output")?));
        }
        let shapes = shapes::infer(&b.names, &nodes, &inputs, &outputs, &initializers)
            .map_err(OnnxError::Invalid)?;
        Ok(Model {
            shapes,
            names: b.names,
            nodes,
            inputs,
            outputs,
            initializers,
            opset,
            ir_version: m.ir_version.unwrap_or(0),
            producer: format!(
                "{} {}",
                m.producer_name.as_deref().unwrap_or(""),
                m.producer_version.as_deref().unwrap_or("")
            )
            .trim()
            .to_string(),
        })
    }

    /// The graph inputs a run takes (those with an initializer may be left out).
    pub fn inputs(&self) -> impl Iterator<Item = &IoInfo> {
        self.inputs.iter().map(|(_, i)| i)
    }

    /// The graph outputs, in the order a run returns them.
    pub fn outputs(&self) -> impl Iterator<Item = &IoInfo> {
        self.outputs.iter().map(|(_, i)| i)
    }

    /// The opset version of the default domain.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    /// The IR version of the file.
    pub fn ir_version(&self) -> i64 {
        self.ir_version
    }

    /// The producer's name and version as the file gives them.
    pub fn producer(&self) -> &str {
        &self.producer
    }

    /// How many nodes of each op the graph has.
    pub fn op_counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for n in &self.nodes {
            *m.entry(n.op.clone()).or_insert(0) += 1;
        }
        m
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The dims of value `name` as inferred at load time from the graph inputs' declared
    /// dims and the initializers (`Dim::Unknown` where the rules cannot tell), or `None`
    /// when its rank is unknown or no value has that name.
    pub fn value_dims(&self, name: &str) -> Option<&[Dim]> {
        let id = self.names.iter().position(|n| n == name)?;
        self.shapes[id].as_deref()
    }
}

/// Value names to ids.
#[derive(Default)]
struct Builder {
    names: Vec<String>,
    ids: HashMap<String, usize>,
}

impl Builder {
    fn define(&mut self, name: &str, what: &str) -> Result<usize> {
        if name.is_empty() {
            return Err(OnnxError::Invalid(format!("{what} without a name")));
        }
        if self.ids.contains_key(name) {
            return Err(OnnxError::Invalid(format!(
                "value `{name}` is defined more than once ({what})"
            )));
        }
        let id = self.names.len();
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }
}

/// A node's name (or `#index`), op, spec and attributes, before ordering.
#[derive(Default)]
struct Resolved(String, String, Option<&'static OpSpec>, Attrs);

impl Resolved {
    fn into_parts(self) -> (String, String, Option<&'static OpSpec>, Attrs) {
        (self.0, self.1, self.2, self.3)
    }
}

fn resolve_node(i: usize, n: &proto::NodeProto, opset: i64) -> Result<Resolved> {
    let name = match n.name.as_deref() {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => format!("#{i}"),
    };
    let op_type = n.op_type.clone().unwrap_or_default();
    let domain = n.domain.as_deref().unwrap_or("");
    let op = if domain.is_empty() || domain == "ai.onnx" {
        op_type.clone()
    } else {
        format!("{domain}.{op_type}")
    };
    let unsupported = |what: String| OnnxError::Unsupported {
        node: name.clone(),
        op: op.clone(),
        what,
    };
    if !(domain.is_empty() || domain == "ai.onnx") {
        return Err(unsupported(format!(
            "domain `{domain}` (gpukit runs the default ONNX domain only)"
        )));
    }
    let Some(spec) = ops::find(&op_type) else {
        return Err(unsupported("the op is not implemented".into()));
    };
    let mut attrs = Attrs::default();
    for a in &n.attribute {
        let (k, v) = attrs::decode(a).map_err(unsupported)?;
        if k == "consumed_inputs" && opset < 7 {
            // Opsets 1-6: an in-place hint that changes no result.
            continue;
        }
        if !spec.attrs.contains(&k.as_str()) {
            return Err(unsupported(format!("attribute `{k}`")));
        }
        attrs.0.insert(k, v);
    }
    if n.input.len() > spec.max_inputs {
        return Err(OnnxError::Invalid(format!(
            "node `{name}` ({op}) has {} inputs, the op takes at most {}",
            n.input.len(),
            spec.max_inputs
        )));
    }
    if let Some(check) = spec.check {
        check(&attrs, opset, n.input.len(), n.output.len()).map_err(|e| match e {
            OpError::Unsupported(w) => unsupported(w),
            OpError::Invalid(w) => OnnxError::Invalid(format!("node `{name}` ({op}): {w}")),
            OpError::Core(e) => OnnxError::Invalid(format!("node `{name}` ({op}): {e}")),
        })?;
    }
    Ok(Resolved(name, op, Some(spec), attrs))
}

/// Kahn's order over the node graph (ties in file order); a value used but never
/// defined, or a cycle, is an error naming it.
fn topo_order(
    graph: &proto::GraphProto,
    producer: &HashMap<String, usize>,
    defined: &HashMap<String, usize>,
    raw: &[Resolved],
) -> Result<Vec<usize>> {
    let n = graph.node.len();
    let mut indeg = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in graph.node.iter().enumerate() {
        for inp in node.input.iter().filter(|s| !s.is_empty()) {
            if let Some(&p) = producer.get(inp) {
                indeg[i] += 1;
                users[p].push(i);
            } else if !defined.contains_key(inp) {
                return Err(OnnxError::Invalid(format!(
                    "node `{}` reads `{inp}`, which no node, input or initializer defines",
                    raw[i].0
                )));
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.insert(u);
            }
        }
    }
    if order.len() != n {
        let stuck = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
        return Err(OnnxError::Invalid(format!(
            "the graph has a cycle through node `{}`",
            raw[stuck].0
        )));
    }
    Ok(order)
}

fn io_info(vi: &proto::ValueInfoProto, what: &str) -> Result<IoInfo> {
    let name = vi.name.clone().unwrap_or_default();
    let unsupported = |w: String| OnnxError::Unsupported {
        node: format!("(graph {what})"),
        op: name.clone(),
        what: w,
    };
    let Some(tt) = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()) else {
        return Err(unsupported(
            "not a dense tensor (sequences, maps, optionals and sparse tensors are not supported)"
                .into(),
        ));
    };
    let code = tt.elem_type.unwrap_or(0);
    let ty = ElemType::from_onnx(code).ok_or_else(|| {
        unsupported(format!(
            "element type {}, which gpukit does not run",
            onnx_type_name(code)
        ))
    })?;
    let dims = tt.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::DimValue(v)) if *v >= 0 => Dim::Fixed(*v as usize),
                Some(DimValue::DimParam(p)) if !p.is_empty() => Dim::Symbolic(p.clone()),
                _ => Dim::Unknown,
            })
            .collect()
    });
    Ok(IoInfo {
        name,
        ty,
        dims,
        has_default: false,
    })
}
