//! The error type of loading and running a model.

/// What went wrong loading, checking or running an ONNX model. Every variant names
/// what was wrong: the file, the node and its op, the input.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    /// The file could not be read.
    #[error("{path}: {msg}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        msg: String,
    },
    /// The bytes are not a well-formed ONNX model (truncated, not protobuf, missing
    /// graph, a tensor whose data does not match its dims).
    #[error("malformed ONNX model: {0}")]
    Malformed(String),
    /// The model uses something gpukit does not run: an op, an attribute value, an
    /// element type, an opset. Reported at load time, naming the node and op.
    #[error("node `{node}` ({op}): unsupported: {what}")]
    Unsupported {
        /// The node's name (or `#index` when it has none).
        node: String,
        /// The node's op type (with its domain when not the default one).
        op: String,
        /// What is missing.
        what: String,
    },
    /// The model is inconsistent (an undefined value, a cycle, a bad attribute).
    #[error("invalid model: {0}")]
    Invalid(String),
    /// A run's inputs do not match the graph's: missing, extra, wrong type or shape.
    #[error("input `{name}`: {what}")]
    Input {
        /// The graph input.
        name: String,
        /// What is wrong with it.
        what: String,
    },
    /// A node failed while running (the operands' shapes or values do not fit the op,
    /// or the device failed).
    #[error("node `{node}` ({op}): {what}")]
    Node {
        /// The node's name (or `#index`).
        node: String,
        /// The node's op type.
        op: String,
        /// The failure.
        what: String,
    },
    /// A gpukit error outside any node (uploading inputs, reading outputs).
    #[error(transparent)]
    Core(#[from] gpukit_core::Error),
}

/// The result type of gpukit-onnx.
pub type Result<T> = std::result::Result<T, OnnxError>;

/// Why one op could not run: refused (unsupported or invalid for the op), or the
/// gpukit call failed. The runner adds the node's name and op.
#[derive(Debug)]
pub(crate) enum OpError {
    Unsupported(String),
    Invalid(String),
    Core(gpukit_core::Error),
}

impl From<gpukit_core::Error> for OpError {
    fn from(e: gpukit_core::Error) -> OpError {
        OpError::Core(e)
    }
}

pub(crate) type OpResult<T> = std::result::Result<T, OpError>;
