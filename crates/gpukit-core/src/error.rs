//! The one error type every gpukit call returns.

use crate::DType;

/// Shorthand for `std::result::Result<T, gpukit_core::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gpukit, with enough structure to act on.
///
/// Bad input is always reported through one of these variants before any
/// memory is touched; gpukit never panics on bad input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Operand shapes do not fit together (or a shape is invalid on its own).
    #[error("{op}: shape error: {detail}")]
    Shape {
        /// The operation that rejected the shape.
        op: String,
        /// What was wrong, with the offending dimensions.
        detail: String,
    },
    /// An operand has the wrong element type.
    #[error("{op}: dtype mismatch: expected {expected}, got {got}")]
    DType {
        /// The operation that rejected the dtype.
        op: String,
        /// What was expected (a dtype or a set of them).
        expected: String,
        /// The dtype that was passed.
        got: DType,
    },
    /// A host slice or buffer has the wrong number of elements.
    #[error("{what}: length mismatch: expected {expected}, got {got}")]
    Length {
        /// Which operand or call.
        what: String,
        /// The length required.
        expected: usize,
        /// The length passed.
        got: usize,
    },
    /// A view or index range does not lie inside its buffer.
    #[error("{what}: range {offset}..{offset}+{len} is out of bounds of {capacity}")]
    OutOfBounds {
        /// Which operand or call.
        what: String,
        /// First element (or byte, see `what`) of the requested range.
        offset: usize,
        /// Length of the requested range.
        len: usize,
        /// Size of what it had to fit into.
        capacity: usize,
    },
    /// An index value (gather/scatter/...) is outside its axis.
    #[error("{op}: index {index} is out of range for an axis of length {axis_len}")]
    IndexOutOfRange {
        /// The operation.
        op: String,
        /// The offending index as given (negative counts from the end).
        index: i64,
        /// Length of the indexed axis.
        axis_len: usize,
    },
    /// A reinterpreting view does not start at a multiple of the element size.
    #[error("{what}: byte offset {byte_offset} is not aligned to {align} bytes")]
    Misaligned {
        /// Which operand or call.
        what: String,
        /// The byte offset (from the start of the allocation).
        byte_offset: usize,
        /// The alignment the element type needs.
        align: usize,
    },
    /// A size computation overflowed (elements × element size, shape products...).
    #[error("{what}: size overflows the address space")]
    SizeOverflow {
        /// Which allocation or shape.
        what: String,
    },
    /// The device could not provide the memory.
    #[error("out of device memory: requested {requested} bytes, device has {available} bytes")]
    OutOfMemory {
        /// Bytes requested.
        requested: usize,
        /// Bytes the device reports (total, or free where known).
        available: usize,
    },
    /// No such device, no driver, or the device failed to open.
    #[error("device {device} unavailable: {reason}")]
    DeviceUnavailable {
        /// The device asked for (`cpu`, `cuda:1`, ...).
        device: String,
        /// Why it could not be used.
        reason: String,
    },
    /// Operands live on different kits (devices).
    #[error("{op}: operand {operand} belongs to a different kit/device")]
    DeviceMismatch {
        /// The operation.
        op: String,
        /// Which operand (position or name).
        operand: String,
    },
    /// The backend has no kernel of this name (or no body for this backend).
    #[error("kernel `{name}` not found on the {backend} backend: {reason}")]
    KernelNotFound {
        /// Kernel name.
        name: String,
        /// Backend that was asked.
        backend: String,
        /// Why (no CPU body, not in the module, ...).
        reason: String,
    },
    /// A kernel failed to compile; `log` is the compiler's output.
    #[error("kernel `{name}` failed to compile:\n{log}")]
    Compile {
        /// Kernel name.
        name: String,
        /// The compiler's log.
        log: String,
    },
    /// The arguments passed to a kernel do not match what it reads.
    #[error("kernel `{kernel}`: argument {index}: {reason}")]
    Argument {
        /// Kernel name.
        kernel: String,
        /// Position of the argument.
        index: usize,
        /// What was wrong.
        reason: String,
    },
    /// A launch configuration the device cannot run.
    #[error("kernel `{kernel}`: invalid launch: {reason}")]
    Launch {
        /// Kernel name.
        kernel: String,
        /// What was wrong.
        reason: String,
    },
    /// A kernel faulted while running (on the CPU backend: a panic inside a
    /// user body, such as an out-of-bounds access, caught at the launch).
    #[error("kernel `{kernel}` faulted: {message}")]
    KernelFault {
        /// Kernel name.
        kernel: String,
        /// The fault.
        message: String,
    },
    /// A value cannot be represented in the target dtype (converting uploads).
    #[error("value {value} cannot be converted exactly to {dtype}")]
    Conversion {
        /// The value, printed.
        value: String,
        /// The target dtype.
        dtype: DType,
    },
    /// An operand is the absent buffer where a real one is required.
    #[error("{what}: buffer is absent")]
    Absent {
        /// Which operand.
        what: String,
    },
    /// Any other invalid parameter (axis, epsilon, scalar range...).
    #[error("{op}: invalid argument: {reason}")]
    InvalidArgument {
        /// The operation.
        op: String,
        /// What was wrong.
        reason: String,
    },
    /// An I/O failure (writing a trace file, ...).
    #[error("i/o error: {0}")]
    Io(String),
    /// The backend's driver reported an error.
    #[error("driver error in {call}: {message}")]
    Driver {
        /// The driver call.
        call: String,
        /// The driver's message.
        message: String,
    },
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e.to_string())
    }
}
