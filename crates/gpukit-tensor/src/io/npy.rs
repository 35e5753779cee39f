//! numpy's `.npy` format (versions 1.0, 2.0 and 3.0) and `.npz` archives of them.

use std::collections::BTreeMap;
use std::path::Path;

use gpukit_core::{DType, Error, Kit, Result};

use super::{download_le, io_err, upload_le, zip};
use crate::Tensor;

const MAGIC: &[u8] = b"\x93NUMPY";

/// A parsed header: dtype, whether the file's bytes are big-endian, Fortran order,
/// shape, and where the data starts.
#[derive(Debug, PartialEq)]
struct Header {
    dtype: DType,
    /// numpy's `bool` (`|b1`): one byte per element, read as i32 0/1.
    bool_: bool,
    /// A narrower integer in the file (bytes per element, signed), widened exactly to
    /// `dtype` (i8, u8, i16, u16 to i32; u32, u64 to i64).
    narrow: Option<(usize, bool)>,
    big_endian: bool,
    fortran: bool,
    shape: Vec<usize>,
    data_start: usize,
}

/// A value of the header's Python dict literal.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
}

/// Parses `{'key': value, ...}` with string, bool and int-tuple values.
fn parse_dict(s: &str) -> std::result::Result<Vec<(String, Lit)>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize| {
        while *i < b.len() && (b[*i] as char).is_ascii_whitespace() {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> std::result::Result<String, String> {
        let q = b[*i];
        let start = *i + 1;
        let end = b[start..]
            .iter()
            .position(|&c| c == q)
            .ok_or("an unterminated string")?;
        *i = start + end + 1;
        Ok(s[start..start + end].to_string())
    };
    skip(&mut i);
    if b.get(i) != Some(&b'{') {
        return Err("the header is not a dict".into());
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        skip(&mut i);
        match b.get(i) {
            Some(b'}') => break,
            Some(b'\'') | Some(b'"') => {}
            _ => return Err("expected a key".into()),
        }
        let key = string(&mut i)?;
        skip(&mut i);
        if b.get(i) != Some(&b':') {
            return Err(format!("expected ':' after '{key}'"));
        }
        i += 1;
        skip(&mut i);
        let val = match b.get(i) {
            Some(b'\'') | Some(b'"') => Lit::Str(string(&mut i)?),
            Some(b'(') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b')')
                    .ok_or("an unterminated tuple")?;
                let inner = &s[i + 1..i + end];
                i += end + 1;
                let dims = inner
                    .split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| {
                        t.parse::<usize>()
                            .map_err(|_| format!("a bad dimension '{t}'"))
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Lit::Tuple(dims)
            }
            _ if s[i..].starts_with("True") => {
                i += 4;
                Lit::Bool(true)
            }
            _ if s[i..].starts_with("False") => {
                i += 5;
                Lit::Bool(false)
            }
            _ => {
                return Err(format!(
                    "a value of '{key}' that is not a string, bool or tuple"
                ));
            }
        };
        out.push((key, val));
        skip(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => break,
            _ => return Err("expected ',' or '}'".into()),
        }
    }
    Ok(out)
}

/// Parses the header of a `.npy` image.
fn parse_header(bytes: &[u8]) -> std::result::Result<Header, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (len, at): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let text = bytes
        .get(at..at.saturating_add(len))
        .ok_or("the header runs past the end")?;
    let text = std::str::from_utf8(text).map_err(|_| "the header is not text")?;
    let dict = parse_dict(text)?;
    let get = |k: &str| dict.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let Some(Lit::Str(descr)) = get("descr") else {
        return Err("no 'descr' string in the header".into());
    };
    let Some(Lit::Bool(fortran)) = get("fortran_order") else {
        return Err("no 'fortran_order' bool in the header".into());
    };
    let Some(Lit::Tuple(shape)) = get("shape") else {
        return Err("no 'shape' tuple in the header".into());
    };
    if descr == "|b1" {
        return Ok(Header {
            dtype: DType::I32,
            bool_: true,
            narrow: None,
            big_endian: false,
            fortran: *fortran,
            shape: shape.clone(),
            data_start: at + len,
        });
    }
    let (order, code) = descr.split_at(descr.len().min(1));
    let big_endian = match order {
        "<" => false,
        ">" => true,
        // "Not applicable": one-byte types.
        "|" if descr.ends_with('1') => false,
        "=" => cfg!(target_endian = "big"),
        _ => return Err(format!("dtype '{descr}' is not supported")),
    };
    let (dtype, narrow) = match code {
        "f2" => (DType::F16, None),
        "f4" => (DType::F32, None),
        "f8" => (DType::F64, None),
        "i4" => (DType::I32, None),
        "i8" => (DType::I64, None),
        "i1" => (DType::I32, Some((1, true))),
        "u1" => (DType::I32, Some((1, false))),
        "i2" => (DType::I32, Some((2, true))),
        "u2" => (DType::I32, Some((2, false))),
        "u4" => (DType::I64, Some((4, false))),
        "u8" => (DType::I64, Some((8, false))),
        _ => {
            return Err(format!(
                "dtype '{descr}' is not supported (f2, f4, f8, i4, i8: gpukit's f16, f32, \
                 f64, i32, i64; b1 as i32 0/1; i1, u1, i2, u2 widened to i32; u4, u8 to i64)"
            ));
        }
    };
    Ok(Header {
        dtype,
        narrow,
        bool_: false,
        big_endian,
        fortran: *fortran,
        shape: shape.clone(),
        data_start: at + len,
    })
}

/// `data`'s integers of `width` bytes (ragged tail ignored: the length check after
/// reports it) as little-endian `to` (i32 or i64) bytes; a uint64 above `i64::MAX` is
/// an error.
fn widen_ints(
    data: &[u8],
    width: usize,
    signed: bool,
    big_endian: bool,
    to: DType,
) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() / width * to.size());
    for c in data.chunks_exact(width) {
        let mut b = [0u8; 8];
        b[..width].copy_from_slice(c);
        if big_endian {
            b[..width].reverse();
        }
        let u = u64::from_le_bytes(b);
        let v = if signed {
            let s = 64 - 8 * width as u32;
            ((u << s) as i64) >> s
        } else {
            i64::try_from(u)
                .map_err(|_| format!("uint64 value {u} is above i64::MAX (gpukit's i64)"))?
        };
        match to {
            DType::I32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
            _ => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    Ok(out)
}

/// The tensor of a `.npy` image `bytes` (`what` names it in errors).
fn load_image(kit: &Kit, bytes: &[u8], what: &str, path: &Path) -> Result<Tensor> {
    let h = parse_header(bytes).map_err(|e| io_err(path, format!("{what}: {e}")))?;
    let data = &bytes[h.data_start.min(bytes.len())..];
    let owned;
    let data = if h.bool_ {
        owned = data
            .iter()
            .flat_map(|&b| i32::from(b != 0).to_le_bytes())
            .collect::<Vec<u8>>();
        &owned[..]
    } else if let Some((width, signed)) = h.narrow {
        owned = widen_ints(data, width, signed, h.big_endian, h.dtype)
            .map_err(|e| io_err(path, format!("{what}: {e}")))?;
        &owned[..]
    } else if h.big_endian {
        let mut v = data.to_vec();
        for e in v.chunks_exact_mut(h.dtype.size()) {
            e.reverse();
        }
        owned = v;
        &owned[..]
    } else {
        data
    };
    if !h.fortran {
        return upload_le(kit, h.dtype, &h.shape, data, what);
    }
    // Fortran order: the bytes are the C-order image of the reversed shape.
    let rev: Vec<usize> = h.shape.iter().rev().copied().collect();
    let t = upload_le(kit, h.dtype, &rev, data, what)?;
    let perm: Vec<i64> = (0..h.shape.len() as i64).rev().collect();
    t.permute(&perm)?.contiguous()
}

/// Reads a `.npy` file (little- or big-endian f16/f32/f64/i32/i64, C or Fortran order;
/// numpy's `bool` as an i32 tensor of 0/1; int8, uint8, int16 and uint16 widened exactly
/// to i32, uint32 and uint64 to i64) into a contiguous tensor on `kit`.
///
/// Errors: [`Error::Io`] naming the file when it cannot be read, is not a `.npy` file,
/// or holds a dtype gpukit cannot hold (a uint64 above `i64::MAX` included);
/// [`Error::Length`] when the data does not match the shape; the kit's allocation
/// errors.
pub fn read_npy(kit: &Kit, path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    load_image(kit, &bytes, ".npy", path)
}

/// Reads every array of a `.npz` archive (`numpy.savez`, stored, or
/// `numpy.savez_compressed`, deflated), by name (the member name without `.npy`).
///
/// Errors: [`Error::Io`] naming the file and the member for an unreadable archive, a
/// CRC mismatch or a member that [`read_npy`] would refuse.
pub fn read_npz(kit: &Kit, path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| io_err(path, e))?;
    let members = zip::members(&bytes).map_err(|e| io_err(path, e))?;
    let mut out = BTreeMap::new();
    for m in members {
        let key = m.name.strip_suffix(".npy").unwrap_or(&m.name).to_string();
        let t = load_image(kit, &m.data, &format!("member `{}`", m.name), path)?;
        out.insert(key, t);
    }
    Ok(out)
}

/// Writes `t` (any layout, row-major on disk) as a version 1.0 `.npy` file.
///
/// Errors: [`Error::InvalidArgument`] for bf16, which `.npy` has no dtype for; download
/// errors; [`Error::Io`] naming the file when it cannot be written.
pub fn write_npy(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    let descr = match t.dtype() {
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::BF16 => {
            return Err(Error::InvalidArgument {
                op: "write_npy".into(),
                reason: "numpy's .npy format has no bf16 dtype (save as f32, or safetensors)"
                    .into(),
            });
        }
    };
    write_image(path.as_ref(), t, descr, &download_le(t)?)
}

/// Writes an integer tensor as numpy's `bool` (`|b1`): nonzero elements are `True`.
///
/// Errors: [`Error::DType`] for a float tensor; download errors; [`Error::Io`] naming
/// the file when it cannot be written.
pub fn write_npy_bool(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    if t.dtype().is_float() {
        return Err(Error::DType {
            op: "write_npy_bool".into(),
            expected: "an integer dtype (0/1 flags)".into(),
            got: t.dtype(),
        });
    }
    let v = t.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()?;
    let bytes: Vec<u8> = v.iter().map(|&x| u8::from(x != 0)).collect();
    write_image(path.as_ref(), t, "|b1", &bytes)
}

/// numpy's narrow integer dtypes that [`write_npy_int`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyInt {
    /// `|i1` (int8).
    I8,
    /// `|u1` (uint8).
    U8,
    /// `<i2` (int16).
    I16,
    /// `<u2` (uint16).
    U16,
    /// `<u4` (uint32).
    U32,
    /// `<u8` (uint64), written from an i64's two's-complement bit pattern.
    U64Bits,
}

/// Writes an integer tensor as one of numpy's narrower integer dtypes.
///
/// Every value must lie in the dtype's range, except for [`NpyInt::U64Bits`], which
/// writes each i64's bit pattern (how gpukit-onnx keeps uint64 values).
///
/// Errors: [`Error::DType`] for a float tensor; [`Error::InvalidArgument`] naming the
/// first value outside the dtype's range; download errors; [`Error::Io`] naming the
/// file when it cannot be written.
pub fn write_npy_int(path: impl AsRef<Path>, t: &Tensor, as_: NpyInt) -> Result<()> {
    if t.dtype().is_float() {
        return Err(Error::DType {
            op: "write_npy_int".into(),
            expected: "an integer dtype".into(),
            got: t.dtype(),
        });
    }
    let v = t.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()?;
    let (descr, width, lo, hi) = match as_ {
        NpyInt::I8 => ("|i1", 1, i64::from(i8::MIN), i64::from(i8::MAX)),
        NpyInt::U8 => ("|u1", 1, 0, i64::from(u8::MAX)),
        NpyInt::I16 => ("<i2", 2, i64::from(i16::MIN), i64::from(i16::MAX)),
        NpyInt::U16 => ("<u2", 2, 0, i64::from(u16::MAX)),
        NpyInt::U32 => ("<u4", 4, 0, i64::from(u32::MAX)),
        NpyInt::U64Bits => ("<u8", 8, i64::MIN, i64::MAX),
    };
    if let Some(x) = v.iter().find(|&&x| x < lo || x > hi) {
        return Err(Error::InvalidArgument {
            op: "write_npy_int".into(),
            reason: format!("{x} is outside {descr}'s range {lo}..={hi}"),
        });
    }
    let bytes: Vec<u8> = v
        .iter()
        .flat_map(|x| x.to_le_bytes().into_iter().take(width))
        .collect();
    write_image(path.as_ref(), t, descr, &bytes)
}

/// Writes a version 1.0 `.npy` image of `t`'s dims with dtype `descr` and `data`.
fn write_image(path: &Path, t: &Tensor, descr: &str, data: &[u8]) -> Result<()> {
    let shape = match t.dims() {
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad with spaces and a newline so the data starts at a multiple of 64 bytes.
    let total = (10 + header.len() + 1).div_ceil(64) * 64;
    let pad = total - 10 - header.len() - 1;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    let len = u16::try_from(header.len()).map_err(|_| Error::InvalidArgument {
        op: "write_npy".into(),
        reason: format!("rank {} is too large for a version 1.0 header", t.rank()),
    })?;
    let mut bytes = Vec::with_capacity(total);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&[1, 0]);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).map_err(|e| io_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_in_any_key_order_and_rank() {
        let mk = |h: &str| {
            let mut b = MAGIC.to_vec();
            b.extend_from_slice(&[1, 0]);
            b.extend_from_slice(&(h.len() as u16).to_le_bytes());
            b.extend_from_slice(h.as_bytes());
            b
        };
        let h = parse_header(&mk(
            "{'shape': (2, 3), 'fortran_order': True, 'descr': '>f8'}",
        ))
        .unwrap();
        assert_eq!(h.dtype, DType::F64);
        assert!(h.big_endian && h.fortran);
        assert_eq!(h.shape, vec![2, 3]);
        let h = parse_header(&mk(
            "{'descr': '<i8', 'fortran_order': False, 'shape': (), }\n",
        ))
        .unwrap();
        assert_eq!((h.dtype, h.shape.len()), (DType::I64, 0));
        let h = parse_header(&mk(
            "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }",
        ))
        .unwrap();
        assert_eq!(h.shape, vec![5]);
        let h = parse_header(&mk(
            "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }",
        ))
        .unwrap();
        assert!(h.bool_ && h.dtype == DType::I32 && !h.big_endian);
        for bad in [
            "{'descr': '<b1', 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<c8', 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<f4', 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5,)",
            "['descr']",
            "{'descr: '<f4'}",
            "",
        ] {
            assert!(parse_header(&mk(bad)).is_err(), "{bad}");
        }
        assert!(parse_header(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        assert!(parse_header(b"garbage").is_err());
    }
}
