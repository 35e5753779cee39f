//! Tensor data on the host: decoding a `TensorProto` (inline or external data) into
//! the little-endian bytes of its gpukit storage dtype, and uploading it.

use std::path::{Component, Path};

use gpukit_core::Kit;
use gpukit_tensor::Tensor;

use crate::elem::{ElemType, onnx_type_name};
use crate::proto::TensorProto;

/// The largest tensor the loader accepts (bytes of its storage dtype): a bound on what
/// a malformed file can make it allocate before its data is checked.
const MAX_TENSOR_BYTES: u64 = 1 << 36;

/// A tensor's elements on the host, in its storage dtype's little-endian layout
/// (`Bool` as i32 0/1).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HostTensor {
    pub ty: ElemType,
    pub dims: Vec<usize>,
    pub bytes: Vec<u8>,
}

impl HostTensor {
    /// The element count.
    pub(crate) fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// The elements as i64, for an i32 or i64 tensor (`None` for other types).
    pub(crate) fn ints(&self) -> Option<Vec<i64>> {
        match self.ty {
            ElemType::I64 => Some(
                self.bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            ),
            ElemType::I32 => Some(
                self.bytes
                    .chunks_exact(4)
                    .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Uploads the tensor to `kit`.
    pub(crate) fn to_tensor(&self, kit: &Kit) -> gpukit_core::Result<Tensor> {
        let buf = kit.zeros(self.ty.dtype(), self.numel())?;
        if !self.bytes.is_empty() {
            buf.upload_raw(&self.bytes)?;
        }
        Tensor::from_buf(buf, &self.dims)
    }
}

/// Bytes per element of the storage dtype.
fn storage_size(ty: ElemType) -> usize {
    ty.dtype().size()
}

/// Bytes per element in ONNX's `raw_data` (bool is one byte there).
fn raw_size(ty: ElemType) -> usize {
    match ty {
        ElemType::Bool => 1,
        _ => storage_size(ty),
    }
}

/// Decodes `t`. External data is read relative to `dir` (the model's folder; `None`
/// when the model came from bytes, so external data is an error). Errors are one-line
/// reasons naming the tensor.
pub(crate) fn decode(t: &TensorProto, dir: Option<&Path>) -> Result<HostTensor, TensorErr> {
    let name = t.name.as_deref().unwrap_or("");
    let code = t.data_type.unwrap_or(0);
    let Some(ty) = ElemType::from_onnx(code) else {
        return Err(TensorErr::Unsupported(format!(
            "tensor `{name}` has element type {}, which gpukit does not run",
            onnx_type_name(code)
        )));
    };
    decode_data(t, name, ty, dir).map_err(TensorErr::Malformed)
}

/// Why a tensor could not be decoded.
#[derive(Debug)]
pub(crate) enum TensorErr {
    /// An element type gpukit does not run.
    Unsupported(String),
    /// Data that does not match the dims, or unreadable external data.
    Malformed(String),
}

impl TensorErr {
    /// The error as the loader reports it, `node` and `op` naming where the tensor is.
    pub(crate) fn into_onnx(self, node: &str, op: &str) -> crate::OnnxError {
        match self {
            TensorErr::Unsupported(what) => crate::OnnxError::Unsupported {
                node: node.into(),
                op: op.into(),
                what,
            },
            TensorErr::Malformed(m) => crate::OnnxError::Malformed(m),
        }
    }

    /// The one-line reason.
    pub(crate) fn message(self) -> String {
        match self {
            TensorErr::Unsupported(m) | TensorErr::Malformed(m) => m,
        }
    }
}

fn decode_data(
    t: &TensorProto,
    name: &str,
    ty: ElemType,
    dir: Option<&Path>,
) -> Result<HostTensor, String> {
    if t.segment.is_some() {
        return Err(format!("tensor `{name}` is segmented (not supported)"));
    }
    let mut dims = Vec::with_capacity(t.dims.len());
    let mut numel: u64 = 1;
    for &d in &t.dims {
        let Ok(d) = u64::try_from(d) else {
            return Err(format!("tensor `{name}` has a negative dim {d}"));
        };
        numel = numel
            .checked_mul(d)
            .filter(|&n| n.saturating_mul(8) <= MAX_TENSOR_BYTES)
            .ok_or_else(|| format!("tensor `{name}` is too large ({:?})", t.dims))?;
        dims.push(d as usize);
    }
    let n = numel as usize;
    let raw: Option<Vec<u8>> = if t.data_location == Some(1) {
        Some(read_external(t, name, dir, n * raw_size(ty))?)
    } else {
        t.raw_data.clone()
    };
    let mut bytes = Vec::with_capacity(n * storage_size(ty));
    let count_err = |got: usize| {
        format!(
            "tensor `{name}` of dims {:?} ({n} elements) holds {got} values",
            t.dims
        )
    };
    if let Some(raw) = raw {
        if raw.len() != n * raw_size(ty) {
            return Err(format!(
                "tensor `{name}` of dims {:?} ({n} {ty} elements) holds {} bytes of raw data",
                t.dims,
                raw.len()
            ));
        }
        match ty {
            ElemType::Bool => {
                for &b in &raw {
                    bytes.extend_from_slice(&i32::from(b != 0).to_le_bytes());
                }
            }
            _ => bytes = raw,
        }
        return Ok(HostTensor { ty, dims, bytes });
    }
    // Each typed field's values, checked against the element count.
    fn take<T, const N: usize>(
        vals: &[T],
        n: usize,
        err: impl Fn(usize) -> String,
        le: impl Fn(&T) -> [u8; N],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        if vals.len() != n {
            return Err(err(vals.len()));
        }
        vals.iter().for_each(|v| out.extend_from_slice(&le(v)));
        Ok(())
    }
    match ty {
        ElemType::F32 => take(&t.float_data, n, count_err, |v| v.to_le_bytes(), &mut bytes)?,
        ElemType::F64 => take(
            &t.double_data,
            n,
            count_err,
            |v| v.to_le_bytes(),
            &mut bytes,
        )?,
        ElemType::I64 => take(&t.int64_data, n, count_err, |v| v.to_le_bytes(), &mut bytes)?,
        ElemType::I32 => take(&t.int32_data, n, count_err, |v| v.to_le_bytes(), &mut bytes)?,
        ElemType::Bool => take(
            &t.int32_data,
            n,
            count_err,
            |&v| i32::from(v != 0).to_le_bytes(),
            &mut bytes,
        )?,
        // ONNX stores the 16-bit patterns in int32_data's low bits.
        ElemType::F16 | ElemType::BF16 => take(
            &t.int32_data,
            n,
            count_err,
            |&v| (v as u16).to_le_bytes(),
            &mut bytes,
        )?,
    }
    Ok(HostTensor { ty, dims, bytes })
}

/// Reads a tensor's external data (`location`, `offset`, `length` keys) from a file in
/// `dir`; the location must be a relative path that stays inside `dir`.
fn read_external(
    t: &TensorProto,
    name: &str,
    dir: Option<&Path>,
    want: usize,
) -> Result<Vec<u8>, String> {
    let Some(dir) = dir else {
        return Err(format!(
            "tensor `{name}` has external data, but the model was not loaded from a file"
        ));
    };
    let (mut location, mut offset, mut length) = (None, 0u64, None);
    for e in &t.external_data {
        let v = e.value.as_deref().unwrap_or("");
        match e.key.as_deref().unwrap_or("") {
            "location" => location = Some(v.to_string()),
            "offset" => {
                offset = v
                    .parse()
                    .map_err(|_| format!("tensor `{name}`: external data offset `{v}`"))?
            }
            "length" => {
                length = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("tensor `{name}`: external data length `{v}`"))?,
                )
            }
            _ => {}
        }
    }
    let location =
        location.ok_or_else(|| format!("tensor `{name}`: external data without a location"))?;
    let rel = Path::new(&location);
    if !rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "tensor `{name}`: external data location `{location}` leaves the model's folder"
        ));
    }
    if let Some(l) = length
        && l != want as u64
    {
        return Err(format!(
            "tensor `{name}`: external data length {l}, the dims need {want} bytes"
        ));
    }
    use std::io::{Read, Seek, SeekFrom};
    let path = dir.join(rel);
    let io = |e: std::io::Error| format!("tensor `{name}`: {}: {e}", path.display());
    let mut f = std::fs::File::open(&path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if offset.checked_add(want as u64).is_none_or(|end| end > size) {
        return Err(format!(
            "tensor `{name}`: external data {}..+{want} past the end of {} ({size} bytes)",
            offset,
            path.display()
        ));
    }
    f.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut out = vec![0u8; want];
    f.read_exact(&mut out).map_err(io)?;
    Ok(out)
}

/// Decodes a serialized `TensorProto` (an ONNX test's `input_0.pb`) and uploads it:
/// the tensor's name and value.
///
/// Errors: [`crate::OnnxError::Malformed`] for bytes that are not a well-formed
/// tensor (or use external data); [`crate::OnnxError::Unsupported`] for an element
/// type gpukit does not run; upload errors.
pub fn read_tensor_proto(bytes: &[u8], kit: &Kit) -> crate::Result<(String, crate::Value)> {
    use prost::Message;
    let t = crate::proto::TensorProto::decode(bytes)
        .map_err(|e| crate::OnnxError::Malformed(e.to_string()))?;
    let name = t.name.clone().unwrap_or_default();
    let h = decode(&t, None).map_err(|e| e.into_onnx("(tensor)", &name))?;
    Ok((
        name,
        crate::Value {
            t: h.to_tensor(kit)?,
            ty: h.ty,
        },
    ))
}
