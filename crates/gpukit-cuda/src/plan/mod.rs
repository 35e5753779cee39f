//! Launch plans: how one built-in kernel call of the kernel ABI
//! ([`gpukit_core::abi`]) becomes launches of PTX entries.
//!
//! The operator family launches built-ins by name with the ABI's argument list; the
//! CPU backend runs each as one Rust function. On CUDA a built-in may need its own
//! geometry (a warp per reduction chunk, a block per matmul tile), scratch memory (the
//! chunk sums of a long reduction) and more than one launch (chunk sums, then their
//! sum). A [`Plan`] says all of that, from the arguments alone, with no driver: the
//! CUDA backend and the PTX emulator execute the same plans, so the same launch code
//! serves both.
//!
//! Each op family has a module here, next to its `kernels-cuda/<family>.cu`.

use gpukit_core::{DType, DevicePtr, Dim3, Error, KernelArg, LaunchConfig, Result};

mod attention;
mod conv;
mod elements;
mod elementwise;
mod index;
mod linalg;
mod movement;
mod norm;
mod norm_ext;
mod reduce;
mod reduce_axes;

/// One argument of a planned launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlanArg {
    /// An argument as the caller gave it (a buffer or a scalar).
    Arg(KernelArg),
    /// A range of the plan's scratch memory: `bytes` bytes at `offset` (256-byte
    /// aligned by the planner), passed as a pointer.
    Scratch {
        /// Offset from the start of the scratch block.
        offset: usize,
        /// Length in bytes.
        bytes: usize,
    },
}

/// One launch of a plan: a PTX entry, its geometry, its arguments in PTX order.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The `.entry` name in the PTX (`{op}_{dtype}`, or an auxiliary entry of
    /// [`aux_entries`]).
    pub entry: String,
    /// Grid, block and dynamic shared memory.
    pub cfg: LaunchConfig,
    /// Arguments, in the entry's parameter order.
    pub args: Vec<PlanArg>,
}

/// What one built-in call becomes: scratch to provide and launches to run in order
/// (on one stream, so each sees the previous one's writes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Bytes of device scratch the steps use (0: none).
    pub scratch_bytes: usize,
    /// The launches, in order. Empty when there is nothing to do (zero items).
    pub steps: Vec<Step>,
}

/// Threads per block of the plain 1-D grid-stride kernels.
pub const BLOCK_1D: u32 = 256;

/// At most this many blocks for a grid-stride loop (enough to fill any current GPU
/// several times over; the kernel strides over the rest).
pub const MAX_GRID_1D: u32 = 65_535;

/// Auxiliary PTX entries (besides the `{op}_{dtype}` of the ABI) the plans launch:
/// `(aux name, ABI op)`, instantiated as `{aux}_{dtype}` for each dtype of that op.
/// Each family module lists its own in its `AUX` constant.
pub fn aux_entries() -> Vec<(&'static str, &'static str)> {
    [
        elementwise::AUX,
        elements::AUX,
        linalg::AUX,
        reduce::AUX,
        index::AUX,
        conv::AUX,
        norm::AUX,
        norm_ext::AUX,
        attention::AUX,
        movement::AUX,
        reduce_axes::AUX,
    ]
    .concat()
}

/// The argument view the family planners work from.
pub(crate) struct Call<'a> {
    /// The op part of the kernel name.
    pub(crate) op: &'a str,
    /// The dtype part.
    pub(crate) dtype: DType,
    /// The ABI arguments.
    pub(crate) args: &'a [KernelArg],
    /// The full kernel name (for errors).
    pub(crate) name: &'a str,
}

impl Call<'_> {
    /// The main entry, `{op}_{dtype}`.
    pub(crate) fn entry(&self) -> String {
        gpukit_core::abi::kernel_name(self.op, self.dtype)
    }

    /// An auxiliary entry `{aux}_{dtype}`.
    pub(crate) fn aux(&self, aux: &str) -> String {
        gpukit_core::abi::kernel_name(aux, self.dtype)
    }

    fn bad(&self, i: usize, want: &str) -> Error {
        Error::Argument {
            kernel: self.name.to_string(),
            index: i,
            reason: format!("expected {want}, got {:?}", self.args.get(i)),
        }
    }

    /// Argument `i` as an i64 scalar (ABI scalars are i64 unless marked).
    pub(crate) fn i64(&self, i: usize) -> Result<i64> {
        match self.args.get(i) {
            Some(KernelArg::I64(v)) => Ok(*v),
            _ => Err(self.bad(i, "an i64 scalar")),
        }
    }

    /// Argument `i` as a non-negative count.
    pub(crate) fn count(&self, i: usize) -> Result<u64> {
        let v = self.i64(i)?;
        u64::try_from(v).map_err(|_| self.bad(i, "a non-negative count"))
    }

    /// Argument `i` as given (buffer or scalar), for passing through.
    pub(crate) fn arg(&self, i: usize) -> Result<PlanArg> {
        self.args
            .get(i)
            .map(|a| PlanArg::Arg(*a))
            .ok_or_else(|| self.bad(i, "an argument"))
    }

    /// Every argument passed through unchanged, in ABI order.
    pub(crate) fn all_args(&self) -> Vec<PlanArg> {
        self.args.iter().map(|a| PlanArg::Arg(*a)).collect()
    }

    /// Argument `i`'s device pointer (it must be a buffer).
    #[allow(dead_code)]
    pub(crate) fn ptr(&self, i: usize) -> Result<DevicePtr> {
        match self.args.get(i) {
            Some(KernelArg::Buffer { ptr, .. }) => Ok(*ptr),
            _ => Err(self.bad(i, "a buffer")),
        }
    }
}

/// A 1-D grid-stride launch over `items` work items: [`BLOCK_1D`] threads per block,
/// at most [`MAX_GRID_1D`] blocks. `items = 0` gives no launch.
pub(crate) fn grid_stride(entry: String, items: u64, args: Vec<PlanArg>) -> Plan {
    if items == 0 {
        return Plan::default();
    }
    let blocks = items.div_ceil(BLOCK_1D as u64).min(MAX_GRID_1D as u64) as u32;
    Plan {
        scratch_bytes: 0,
        steps: vec![Step {
            entry,
            cfg: LaunchConfig {
                grid: Dim3::x(blocks),
                block: Dim3::x(BLOCK_1D),
                shared_bytes: 0,
            },
            args,
        }],
    }
}

/// The launches for built-in kernel `name` (`{op}_{dtype}`) called with the ABI
/// arguments `args`.
///
/// Errors: [`Error::KernelNotFound`] for a name outside the ABI table;
/// [`Error::Argument`] when an argument has the wrong kind (a planner bug or a caller
/// bypassing the ops' validation).
pub fn plan(name: &str, args: &[KernelArg]) -> Result<Plan> {
    let (op, dtype) = split_name(name)?;
    let call = Call {
        op,
        dtype,
        args,
        name,
    };
    match op {
        "add" | "sub" | "mul" | "div" | "pow" | "add_bc" | "sub_bc" | "mul_bc" | "div_bc"
        | "pow_bc" | "relu" | "sigmoid" | "exp" | "tanh" | "sqrt" | "log" | "abs" | "neg"
        | "rsqrt" | "silu" | "softplus" | "sin" | "cos" => elementwise::plan(&call),
        "bmm" | "gemm" => linalg::plan(&call),
        "sum" | "dot" | "softmax" | "softmax_axis" | "argmax" | "reduce_l2" => reduce::plan(&call),
        "gather" | "scatter" | "check_index" => index::plan(&call),
        "conv2d" | "conv_transpose2d" | "max_pool2d" | "max_pool2d_index" => conv::plan(&call),
        "batch_norm" | "layer_norm" | "leaky_relu" | "clip" | "erf" | "gelu" | "gelu_tanh" => {
            norm::plan(&call)
        }
        "layer_norm_ex" | "group_norm" | "rms_norm" => norm_ext::plan(&call),
        "attention" | "attention_scores" | "attention_general" => attention::plan(&call),
        "copy_axis" | "strided_copy" | "resize_bilinear" | "resize_nearest" | "eos_gather" => {
            movement::plan(&call)
        }
        "reduce_axes" => reduce_axes::plan(&call),
        // kernels-cuda/resize.cu: one thread per output, grid-stride over n_out.
        "resize" => Ok(grid_stride(call.entry(), call.count(8)?, call.all_args())),
        "gather_elements" | "scatter_elements" | "pad" | "cumsum" | "topk" => elements::plan(&call),
        // kernels-cuda/cast.cu: out, a, n, one grid-stride launch over n.
        _ if gpukit_core::abi::cast::source_of(op).is_some() => {
            Ok(grid_stride(call.entry(), call.count(2)?, call.all_args()))
        }
        // kernels-cuda/compare.cu: n is the last argument, one grid-stride launch.
        _ if gpukit_core::abi::compare::family(op).is_some() => {
            Ok(grid_stride(call.entry(), call.count(4)?, call.all_args()))
        }
        _ => Err(Error::KernelNotFound {
            name: name.to_string(),
            backend: "cuda".into(),
            reason: "no launch plan for this op".into(),
        }),
    }
}

/// Splits `{op}_{dtype}` at the last underscore and checks the pair is in the ABI.
fn split_name(name: &str) -> Result<(&str, DType)> {
    let not_found = || Error::KernelNotFound {
        name: name.to_string(),
        backend: "cuda".into(),
        reason: "not a built-in kernel of the ABI table".into(),
    };
    let (op, d) = name.rsplit_once('_').ok_or_else(not_found)?;
    let dtype = DType::ALL
        .into_iter()
        .find(|t| t.name() == d)
        .ok_or_else(not_found)?;
    let sig = gpukit_core::abi::signature(op).ok_or_else(not_found)?;
    if !sig.dtypes.contains(&dtype) {
        return Err(not_found());
    }
    Ok((op, dtype))
}

/// Helpers of the family planners' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use gpukit_core::{DType, DevicePtr, KernelArg};

    /// A 1 MiB buffer argument of `dtype` at address `p`.
    pub(crate) fn buf(p: u64, dtype: DType) -> KernelArg {
        KernelArg::Buffer {
            ptr: DevicePtr(p),
            bytes: 1 << 20,
            dtype: Some(dtype),
        }
    }
}
