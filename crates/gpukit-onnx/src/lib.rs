//! **gpukit-onnx**: load an ONNX model file and run it on any gpukit backend (CPU,
//! CUDA, the PTX emulator) with the same bits on each.
//!
//! ```no_run
//! use gpukit_onnx::{Model, Session};
//! use gpukit_tensor::Tensor;
//!
//! let model = Model::load("model.onnx")?;
//! let kit = gpukit::cpu()?;
//! let mut session = Session::new(&model, &kit)?;
//! let ids = Tensor::from_slice(&kit, &[101i64, 7592, 102], &[1, 3])?;
//! let mask = Tensor::from_slice(&kit, &[1i64, 1, 1], &[1, 3])?;
//! let outputs = session.run(&[("input_ids", &ids), ("attention_mask", &mask)])?;
//! println!("{:?}", outputs[0].dims());
//! # Ok::<(), gpukit_onnx::OnnxError>(())
//! ```
//!
//! Loading ([`Model::load`]) decodes the protobuf and checks every node: an op, an
//! attribute or an element type gpukit does not run is an [`OnnxError::Unsupported`]
//! naming the node and op, never a wrong answer later. Planning ([`Session::new`])
//! uploads the initializers and folds every node whose inputs are all constant;
//! running ([`Session::run`]) executes the rest in topological order, releasing each
//! intermediate value after its last reader. Every op is one or a few calls of the
//! tensor API (docs/onnx.md lists them), so each result has the bits gpukit's
//! contract fixes, whatever the device.
//!
//! The ONNX element types gpukit has no dtype for (int8 ... uint64, int4, int2, the
//! float8 formats, float4) are stored exactly in a wider dtype with their ONNX type
//! beside ([`ElemType`]); only the ops that know a narrow type's semantics take it
//! (wrapping arithmetic, unsigned uint64 order, casts rounding to float8 on the host),
//! and any other op given one is an error naming the node, the op and the type.

mod attrs;
mod elem;
mod error;
mod fuse;
mod graph;
mod host;
mod minifloat;
mod model;
mod ops;
pub mod proto;
mod session;
mod shapes;
mod value;

pub use elem::ElemType;
pub use error::{OnnxError, Result};
pub use host::read_tensor_proto;
pub use model::{Dim, IoInfo, Model};
pub use ops::supported_ops;
pub use session::{OpTime, Session};
pub use value::Value;
