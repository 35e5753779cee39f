//! Loading and saving tensors: safetensors checkpoints (memory-mapped, one raw upload
//! per tensor, no staging in another dtype) and numpy's `.npy` / `.npz` files.
//!
//! ```no_run
//! use gpukit_tensor::io::SafeTensorsFile;
//!
//! let kit = gpukit::cpu()?;
//! let file = SafeTensorsFile::open("model.safetensors")?;
//! for info in file.infos() {
//!     println!("{} {} {:?}", info.name, info.dtype, info.shape);
//! }
//! // Checked against what the model expects: a wrong dtype or shape is an error.
//! let w = file.load_checked(&kit, "encoder.layer.0.attention.self.query.weight",
//!     gpukit_core::DType::F32, &[384, 384])?;
//! # Ok::<(), gpukit_core::Error>(())
//! ```
//!
//! Files are little-endian (safetensors always; `.npy` says so in its header, and a
//! big-endian `.npy` is swapped on load). gpukit's dtypes are f32, f64, f16, bf16, i32
//! and i64; a file tensor of any other dtype (bool, u8, f8, ...) is refused by name,
//! never converted silently.

mod npy;
mod safetensors_file;
mod zip;

pub use npy::{NpyInt, read_npy, read_npz, write_npy, write_npy_bool, write_npy_int};
pub use safetensors_file::{SafeTensorsFile, TensorInfo, load_safetensors, save_safetensors};

use gpukit_core::{Buf, DType, Error, Kit, Result};

use crate::Tensor;

/// `Error::Io` naming the file.
fn io_err(path: &std::path::Path, what: impl std::fmt::Display) -> Error {
    Error::Io(format!("{}: {what}", path.display()))
}

/// One raw upload of `bytes` (little-endian elements of `dtype`) as a tensor of `shape`.
fn upload_le(kit: &Kit, dtype: DType, shape: &[usize], bytes: &[u8], what: &str) -> Result<Tensor> {
    let n = crate::layout::numel(what, shape)?;
    let want = n
        .checked_mul(dtype.size())
        .ok_or_else(|| Error::SizeOverflow {
            what: what.to_string(),
        })?;
    if bytes.len() != want {
        return Err(Error::Length {
            what: format!("{what}: bytes of a {dtype} tensor of shape {shape:?}"),
            expected: want,
            got: bytes.len(),
        });
    }
    let buf: Buf = kit.alloc(dtype, n)?;
    if cfg!(target_endian = "big") {
        let mut swapped = bytes.to_vec();
        for e in swapped.chunks_exact_mut(dtype.size()) {
            e.reverse();
        }
        buf.upload_raw(&swapped)?;
    } else {
        buf.upload_raw(bytes)?;
    }
    Tensor::from_buf(buf, shape)
}

/// The tensor's elements as little-endian bytes, row-major.
fn download_le(t: &Tensor) -> Result<Vec<u8>> {
    let buf = t.to_buf()?;
    let mut bytes = vec![0u8; buf.byte_len()];
    buf.download_raw(&mut bytes)?;
    if cfg!(target_endian = "big") {
        for e in bytes.chunks_exact_mut(t.dtype().size()) {
            e.reverse();
        }
    }
    Ok(bytes)
}
