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

    /// The elements as i64, for an integer tensor (`None` for floats and bools;
    /// uint64 as its bit pattern).
    pub(crate) fn ints(&self) -> Option<Vec<i64>> {
        if self.ty.is_float() || self.ty == ElemType::Bool {
            return None;
        }
        match self.ty.dtype() {
            gpukit_core::DType::I64 => Some(
                self.bytes
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect(),
            ),
            gpukit_core::DType::I32 => Some(
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

/// Bytes of ONNX's `raw_data` for `n` elements (bool and the 8-bit types one byte
/// each, the 4-bit types two to a byte, the 2-bit types four).
fn raw_len(ty: ElemType, n: usize) -> usize {
    use ElemType::*;
    match ty {
        Bool | I8 | U8 | F8E4M3FN | F8E4M3FNUZ | F8E5M2 | F8E5M2FNUZ | F8E8M0 => n,
        I16 | U16 => 2 * n,
        U32 => 4 * n,
        I4 | U4 | F4E2M1 => n.div_ceil(2),
        I2 | U2 => n.div_ceil(4),
        _ => n * storage_size(ty),
    }
}

/// Element `k` of a packed sub-byte array (`bits` of 2 or 4, low bits first).
fn packed(raw: &[u8], k: usize, bits: usize) -> u8 {
    let per = 8 / bits;
    (raw[k / per] >> (bits * (k % per))) & ((1u8 << bits) - 1)
}

/// Sign-extends the low `bits` of `v`.
fn sext(v: u8, bits: u32) -> i32 {
    let s = 32 - bits;
    (i32::from(v) << s) >> s
}

/// `raw_data` of a narrow type (not bool) as its storage dtype's bytes.
fn widen_raw(ty: ElemType, raw: &[u8], n: usize, out: &mut Vec<u8>) {
    use ElemType::*;
    let i32s = |out: &mut Vec<u8>, f: &dyn Fn(usize) -> i32| {
        (0..n).for_each(|k| out.extend_from_slice(&f(k).to_le_bytes()))
    };
    match ty {
        I8 => i32s(out, &|k| i32::from(raw[k] as i8)),
        U8 => i32s(out, &|k| i32::from(raw[k])),
        I16 => i32s(out, &|k| {
            i32::from(i16::from_le_bytes([raw[2 * k], raw[2 * k + 1]]))
        }),
        U16 => i32s(out, &|k| {
            i32::from(u16::from_le_bytes([raw[2 * k], raw[2 * k + 1]]))
        }),
        I4 => i32s(out, &|k| sext(packed(raw, k, 4), 4)),
        U4 => i32s(out, &|k| i32::from(packed(raw, k, 4))),
        I2 => i32s(out, &|k| sext(packed(raw, k, 2), 2)),
        U2 => i32s(out, &|k| i32::from(packed(raw, k, 2))),
        U32 => raw.chunks_exact(4).for_each(|c| {
            let v = u32::from_le_bytes(c.try_into().expect("4 bytes"));
            out.extend_from_slice(&i64::from(v).to_le_bytes())
        }),
        F4E2M1 => (0..n).for_each(|k| {
            let v = crate::minifloat::decode(ty, packed(raw, k, 4)).unwrap_or(f32::NAN);
            out.extend_from_slice(&v.to_le_bytes())
        }),
        _ if ty.is_float() => raw.iter().for_each(|&b| {
            let v = crate::minifloat::decode(ty, b).unwrap_or(f32::NAN);
            out.extend_from_slice(&v.to_le_bytes())
        }),
        // uint64 keeps its bit pattern in i64; the gpukit dtypes are their own storage.
        _ => out.extend_from_slice(raw),
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
        Some(read_external(t, name, dir, raw_len(ty, n))?)
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
        if raw.len() != raw_len(ty, n) {
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
            t if t.is_narrow() => widen_raw(t, &raw, n, &mut bytes),
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
        // The 8- and 16-bit integers one value per int32, checked against the range.
        ElemType::I8 | ElemType::U8 | ElemType::I16 | ElemType::U16 => {
            let (lo, hi) = ty.int_range().expect("a narrow integer");
            if let Some(v) = t
                .int32_data
                .iter()
                .find(|&&v| !(lo..=hi).contains(&i64::from(v)))
            {
                return Err(format!("tensor `{name}` of type {ty} holds {v}"));
            }
            take(&t.int32_data, n, count_err, |v| v.to_le_bytes(), &mut bytes)?
        }
        ElemType::U32 => {
            if let Some(v) = t.uint64_data.iter().find(|&&v| v > u64::from(u32::MAX)) {
                return Err(format!("tensor `{name}` of type uint32 holds {v}"));
            }
            take(
                &t.uint64_data,
                n,
                count_err,
                |&v| (v as i64).to_le_bytes(),
                &mut bytes,
            )?
        }
        ElemType::U64 => take(
            &t.uint64_data,
            n,
            count_err,
            |&v| (v as i64).to_le_bytes(),
            &mut bytes,
        )?,
        // The float8 patterns one per int32 (their low byte).
        ElemType::F8E4M3FN
        | ElemType::F8E4M3FNUZ
        | ElemType::F8E5M2
        | ElemType::F8E5M2FNUZ
        | ElemType::F8E8M0 => take(
            &t.int32_data,
            n,
            count_err,
            |&v| {
                crate::minifloat::decode(ty, v as u8)
                    .unwrap_or(f32::NAN)
                    .to_le_bytes()
            },
            &mut bytes,
        )?,
        // The packed sub-byte types: one packed byte per int32 (two 4-bit or four
        // 2-bit elements), as in raw_data.
        ElemType::I4 | ElemType::U4 | ElemType::I2 | ElemType::U2 | ElemType::F4E2M1 => {
            if t.int32_data.len() != raw_len(ty, n) {
                return Err(format!(
                    "tensor `{name}` of dims {:?} ({n} {ty} elements) holds {} packed int32 values",
                    t.dims,
                    t.int32_data.len()
                ));
            }
            let raw: Vec<u8> = t.int32_data.iter().map(|&v| v as u8).collect();
            widen_raw(ty, &raw, n, &mut bytes);
        }
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
