//! ONNX element types and the gpukit dtype each is stored in.

use gpukit_core::DType;

/// An ONNX tensor element type that gpukit runs.
///
/// gpukit's dtypes are f32, f64, f16, bf16, i32 and i64; the other ONNX numeric types
/// are *narrow* types, each stored exactly in a wider dtype ([`ElemType::dtype`]):
/// `Bool` as 0/1 in i32 (gpukit's comparison and logic ops take and give 0/1 masks);
/// the 8-, 16-, 4- and 2-bit integers in i32; uint32 in i64; uint64 as its bit pattern
/// in i64; the float8 and float4 formats as their (exact) values in f32. A value keeps
/// its ONNX type beside the tensor, and only the ops that know a narrow type's
/// semantics take it (`narrow.rs`: arithmetic wraps to the type's width, comparisons
/// and Max/Min of uint64 compare unsigned, casts round to the narrow format); any
/// other op given one is an error naming the node, the op and the type.
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
    /// `INT8` (3), stored in i32.
    I8,
    /// `UINT8` (2), stored in i32.
    U8,
    /// `INT16` (5), stored in i32.
    I16,
    /// `UINT16` (4), stored in i32.
    U16,
    /// `UINT32` (12), stored in i64.
    U32,
    /// `UINT64` (13), its bit pattern stored in i64.
    U64,
    /// `INT4` (22), stored in i32 (packed two to a byte in files).
    I4,
    /// `UINT4` (21), stored in i32.
    U4,
    /// `INT2` (26), stored in i32 (packed four to a byte in files).
    I2,
    /// `UINT2` (25), stored in i32.
    U2,
    /// `FLOAT8E4M3FN` (17), stored as its value in f32.
    F8E4M3FN,
    /// `FLOAT8E4M3FNUZ` (18), stored in f32.
    F8E4M3FNUZ,
    /// `FLOAT8E5M2` (19), stored in f32.
    F8E5M2,
    /// `FLOAT8E5M2FNUZ` (20), stored in f32.
    F8E5M2FNUZ,
    /// `FLOAT8E8M0` (24, powers of two), stored in f32.
    F8E8M0,
    /// `FLOAT4E2M1` (23), stored in f32.
    F4E2M1,
}

/// Every element type with its ONNX code and name.
const TABLE: [(ElemType, i32, &str); 23] = [
    (ElemType::F32, 1, "float"),
    (ElemType::U8, 2, "uint8"),
    (ElemType::I8, 3, "int8"),
    (ElemType::U16, 4, "uint16"),
    (ElemType::I16, 5, "int16"),
    (ElemType::I32, 6, "int32"),
    (ElemType::I64, 7, "int64"),
    (ElemType::Bool, 9, "bool"),
    (ElemType::F16, 10, "float16"),
    (ElemType::F64, 11, "double"),
    (ElemType::U32, 12, "uint32"),
    (ElemType::U64, 13, "uint64"),
    (ElemType::BF16, 16, "bfloat16"),
    (ElemType::F8E4M3FN, 17, "float8e4m3fn"),
    (ElemType::F8E4M3FNUZ, 18, "float8e4m3fnuz"),
    (ElemType::F8E5M2, 19, "float8e5m2"),
    (ElemType::F8E5M2FNUZ, 20, "float8e5m2fnuz"),
    (ElemType::U4, 21, "uint4"),
    (ElemType::I4, 22, "int4"),
    (ElemType::F4E2M1, 23, "float4e2m1"),
    (ElemType::F8E8M0, 24, "float8e8m0"),
    (ElemType::U2, 25, "uint2"),
    (ElemType::I2, 26, "int2"),
];

impl ElemType {
    /// The element type of ONNX's `TensorProto.DataType` code, or `None` for a type
    /// gpukit does not run (strings, complex, float6).
    pub fn from_onnx(code: i32) -> Option<ElemType> {
        TABLE.iter().find(|r| r.1 == code).map(|r| r.0)
    }

    /// ONNX's `TensorProto.DataType` code.
    pub fn onnx_code(self) -> i32 {
        TABLE.iter().find(|r| r.0 == self).map_or(0, |r| r.1)
    }

    /// The gpukit dtype the elements are stored in on the device.
    pub fn dtype(self) -> DType {
        use ElemType::*;
        match self {
            F32 | F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F8E8M0 | F4E2M1 => DType::F32,
            F64 => DType::F64,
            F16 => DType::F16,
            BF16 => DType::BF16,
            I32 | Bool | I8 | U8 | I16 | U16 | I4 | U4 | I2 | U2 => DType::I32,
            I64 | U32 | U64 => DType::I64,
        }
    }

    /// The element type of a gpukit dtype (never a narrow type).
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

    /// Whether this is a floating-point type (the float8 and float4 formats included).
    pub fn is_float(self) -> bool {
        self.dtype().is_float()
    }

    /// Whether the type is stored in a wider gpukit dtype than its own (every type but
    /// the six gpukit dtypes; `Bool` is not counted: gpukit's ops take 0/1 masks).
    pub fn is_narrow(self) -> bool {
        !matches!(
            self,
            ElemType::F32
                | ElemType::F64
                | ElemType::F16
                | ElemType::BF16
                | ElemType::I32
                | ElemType::I64
                | ElemType::Bool
        )
    }

    /// For a narrow integer type: (bits, signed). `None` otherwise.
    pub fn int_width(self) -> Option<(u32, bool)> {
        use ElemType::*;
        Some(match self {
            I8 => (8, true),
            U8 => (8, false),
            I16 => (16, true),
            U16 => (16, false),
            U32 => (32, false),
            U64 => (64, false),
            I4 => (4, true),
            U4 => (4, false),
            I2 => (2, true),
            U2 => (2, false),
            _ => return None,
        })
    }

    /// For a narrow integer type narrower than 64 bits: its range `(min, max)`. `None`
    /// otherwise.
    pub fn int_range(self) -> Option<(i64, i64)> {
        let (bits, signed) = self.int_width().filter(|w| w.0 < 64)?;
        Some(if signed {
            (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
        } else {
            (0, (1i64 << bits) - 1)
        })
    }

    /// ONNX's name of the type (`tensor(float)` without the wrapper).
    pub fn name(self) -> &'static str {
        TABLE.iter().find(|r| r.0 == self).map_or("?", |r| r.2)
    }
}

/// ONNX's name of a `TensorProto.DataType` code, for error messages.
pub(crate) fn onnx_type_name(code: i32) -> String {
    if let Some(t) = ElemType::from_onnx(code) {
        return t.name().to_string();
    }
    match code {
        0 => "undefined",
        8 => "string",
        14 => "complex64",
        15 => "complex128",
        27 => "float6e2m3",
        28 => "float6e3m2",
        _ => return format!("type code {code}"),
    }
    .to_string()
}

impl std::fmt::Display for ElemType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
