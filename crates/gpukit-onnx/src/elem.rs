//! ONNX element types and the gpukit dtype each is stored in.

use gpukit_core::DType;

/// An ONNX tensor element type that gpukit runs. `Bool` is stored as 0/1 in
/// [`DType::I32`] on the device (gpukit has no boolean dtype; its comparison and logic
/// ops take and give 0/1 masks), and read and written as numpy's `bool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    /// `FLOAT` (1).
    F32,
    /// `DOUBLE` (11).
    F64,
    /// `FLOAT16` (10).
    F16,
    /// `BFLOAT16` (16).
    BF16,
    /// `INT32` (6).
    I32,
    /// `INT64` (7).
    I64,
    /// `BOOL` (9), stored as 0/1 in i32.
    Bool,
}

impl ElemType {
    /// The element type of ONNX's `TensorProto.DataType` code, or `None` for a type
    /// gpukit does not run (int8, uint8, strings, complex, float8, ...).
    pub fn from_onnx(code: i32) -> Option<ElemType> {
        Some(match code {
            1 => ElemType::F32,
            6 => ElemType::I32,
            7 => ElemType::I64,
            9 => ElemType::Bool,
            10 => ElemType::F16,
            11 => ElemType::F64,
            16 => ElemType::BF16,
            _ => return None,
        })
    }

    /// ONNX's `TensorProto.DataType` code.
    pub fn onnx_code(self) -> i32 {
        match self {
            ElemType::F32 => 1,
            ElemType::I32 => 6,
            ElemType::I64 => 7,
            ElemType::Bool => 9,
            ElemType::F16 => 10,
            ElemType::F64 => 11,
            ElemType::BF16 => 16,
        }
    }

    /// The gpukit dtype the elements are stored in on the device.
    pub fn dtype(self) -> DType {
        match self {
            ElemType::F32 => DType::F32,
            ElemType::F64 => DType::F64,
            ElemType::F16 => DType::F16,
            ElemType::BF16 => DType::BF16,
            ElemType::I32 | ElemType::Bool => DType::I32,
            ElemType::I64 => DType::I64,
        }
    }

    /// The element type of a gpukit dtype (never `Bool`).
    pub fn of_dtype(d: DType) -> ElemType {
        match d {
            DType::F32 => ElemType::F32,
            DType::F64 => ElemType::F64,
            DType::F16 => ElemType::F16,
            DType::BF16 => ElemType::BF16,
            DType::I32 => ElemType::I32,
            DType::I64 => ElemType::I64,
        }
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F32 | ElemType::F64 | ElemType::F16 | ElemType::BF16
        )
    }

    /// ONNX's name of the type (`tensor(float)` without the wrapper).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::F32 => "float",
            ElemType::F64 => "double",
            ElemType::F16 => "float16",
            ElemType::BF16 => "bfloat16",
            ElemType::I32 => "int32",
            ElemType::I64 => "int64",
            ElemType::Bool => "bool",
        }
    }
}

/// ONNX's name of a `TensorProto.DataType` code, for error messages.
pub(crate) fn onnx_type_name(code: i32) -> String {
    let n = match code {
        0 => "undefined",
        1 => "float",
        2 => "uint8",
        3 => "int8",
        4 => "uint16",
        5 => "int16",
        6 => "int32",
        7 => "int64",
        8 => "string",
        9 => "bool",
        10 => "float16",
        11 => "double",
        12 => "uint32",
        13 => "uint64",
        14 => "complex64",
        15 => "complex128",
        16 => "bfloat16",
        17..=20 => "float8",
        21 => "uint4",
        22 => "int4",
        23 => "float4e2m1",
        _ => return format!("type code {code}"),
    };
    n.to_string()
}

impl std::fmt::Display for ElemType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
