//! The loaded graph's shared types: dims, graph inputs and outputs, resolved nodes (a
//! leaf module: the loader, the shape inference and the session read them).

use crate::attrs::Attrs;
use crate::elem::ElemType;
use crate::ops::OpSpec;

/// One dim of a graph input or output as the model declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Fixed(usize),
    /// A named size (`batch_size`): every input dim of the same name must agree.
    Symbolic(String),
    /// Not given.
    Unknown,
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Symbolic(s) => f.write_str(s),
            Dim::Unknown => f.write_str("?"),
        }
    }
}

/// A graph input or output: its name, element type and declared dims (`None` when the
/// model gives no shape).
#[derive(Debug, Clone, PartialEq)]
pub struct IoInfo {
    /// The value's name.
    pub name: String,
    /// The element type.
    pub ty: ElemType,
    /// The declared dims, `None` when the rank is not given.
    pub dims: Option<Vec<Dim>>,
    /// For an input: whether it has an initializer (a default value), so it may be
    /// left out of a run.
    pub has_default: bool,
}

/// A node, resolved: its op's spec, attributes and value ids.
#[derive(Debug)]
pub(crate) struct Node {
    pub name: String,
    pub op: String,
    pub opset: i64,
    pub spec: &'static OpSpec,
    pub attrs: Attrs,
    pub inputs: Vec<Option<usize>>,
    pub outputs: Vec<Option<usize>>,
}
