//! safetensors checkpoints: memory-mapped, parsed once, one raw upload per tensor.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use gpukit_core::{DType, Error, Kit, Result};
use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors, View};

use super::{download_le, io_err, upload_le};
use crate::Tensor;

/// A tensor's entry in a checkpoint: its name, gpukit dtype and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The tensor's name in the file.
    pub name: String,
    /// Its dtype.
    pub dtype: DType,
    /// Its shape (empty for a scalar).
    pub shape: Vec<usize>,
}

/// One entry: where its bytes lie in the map, or why its dtype is not gpukit's.
#[derive(Debug, Clone)]
struct Entry {
    dtype: std::result::Result<DType, String>,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// An open safetensors file: memory-mapped and its header parsed once; tensors are
/// uploaded on request straight from the map (no copy on the host for the CPU backend
/// beyond the upload itself, no conversion).
pub struct SafeTensorsFile {
    path: PathBuf,
    map: Mmap,
    entries: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for SafeTensorsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SafeTensorsFile")
            .field("path", &self.path)
            .field("tensors", &self.entries.len())
            .finish()
    }
}

/// gpukit's dtype for a safetensors dtype, or the file dtype's name.
fn dtype_of(d: Dtype) -> std::result::Result<DType, String> {
    match d {
        Dtype::F32 => Ok(DType::F32),
        Dtype::F64 => Ok(DType::F64),
        Dtype::F16 => Ok(DType::F16),
        Dtype::BF16 => Ok(DType::BF16),
        Dtype::I32 => Ok(DType::I32),
        Dtype::I64 => Ok(DType::I64),
        other => Err(format!("{other:?}")),
    }
}

/// The safetensors dtype of a gpukit dtype.
fn file_dtype(d: DType) -> Dtype {
    match d {
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
    }
}

impl SafeTensorsFile {
    /// Opens and memory-maps `path` and parses its header (names, dtypes, shapes and
    /// byte ranges, all checked against the file's length).
    ///
    /// The file must not be changed by another process while it is open (the usual
    /// condition of a memory-mapped file).
    ///
    /// Errors: [`Error::Io`] naming the file when it cannot be opened or mapped, or is
    /// not a valid safetensors file (the parser's reason is included).
    pub fn open(path: impl AsRef<Path>) -> Result<SafeTensorsFile> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|e| io_err(&path, e))?;
        // SAFETY: a read-only private mapping of a file we opened for reading; gpukit
        // never writes through it. Its bytes are only read as plain `u8`, so any
        // content is valid; the documented condition is that no other process changes
        // the file while it is mapped.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| io_err(&path, e))?;
        let st = SafeTensors::deserialize(&map)
            .map_err(|e| io_err(&path, format!("not a valid safetensors file: {e}")))?;
        let base = map.as_ptr() as usize;
        let mut entries = BTreeMap::new();
        for (name, view) in st.iter() {
            let data = view.data();
            let start = data.as_ptr() as usize - base;
            entries.insert(
                name.to_string(),
                Entry {
                    dtype: dtype_of(view.dtype()),
                    shape: view.shape().to_vec(),
                    start,
                    end: start + data.len(),
                },
            );
        }
        Ok(SafeTensorsFile { path, map, entries })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tensor names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// Whether the file holds a tensor named `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The entries of every tensor whose dtype gpukit has, sorted by name (see
    /// [`SafeTensorsFile::info`] for the others).
    pub fn infos(&self) -> Vec<TensorInfo> {
        self.entries
            .keys()
            .filter_map(|n| self.info(n).ok())
            .collect()
    }

    fn entry(&self, name: &str) -> Result<&Entry> {
        self.entries.get(name).ok_or_else(|| {
            io_err(
                &self.path,
                format!(
                    "no tensor named `{name}` ({} tensors in the file)",
                    self.entries.len()
                ),
            )
        })
    }

    /// The dtype and shape of `name`.
    ///
    /// Errors: [`Error::Io`] when the file has no such tensor, or when its dtype is not
    /// one of gpukit's (the file's dtype is named).
    pub fn info(&self, name: &str) -> Result<TensorInfo> {
        let e = self.entry(name)?;
        let dtype = e.dtype.clone().map_err(|d| {
            io_err(
                &self.path,
                format!("tensor `{name}` has dtype {d}, which gpukit does not support"),
            )
        })?;
        Ok(TensorInfo {
            name: name.to_string(),
            dtype,
            shape: e.shape.clone(),
        })
    }

    /// Uploads tensor `name` to `kit` in its own dtype and shape (one raw upload).
    ///
    /// Errors: those of [`SafeTensorsFile::info`]; the kit's allocation errors.
    pub fn load(&self, kit: &Kit, name: &str) -> Result<Tensor> {
        let info = self.info(name)?;
        let e = self.entry(name)?;
        upload_le(
            kit,
            info.dtype,
            &info.shape,
            &self.map[e.start..e.end],
            &format!("safetensors tensor `{name}`"),
        )
    }

    /// [`SafeTensorsFile::load`], first checking that the tensor has the dtype and
    /// shape the caller expects (a model's layer sizes).
    ///
    /// Errors: [`Error::DType`] or [`Error::Shape`] naming the tensor and both
    /// values; those of [`SafeTensorsFile::load`].
    pub fn load_checked(
        &self,
        kit: &Kit,
        name: &str,
        dtype: DType,
        shape: &[usize],
    ) -> Result<Tensor> {
        let info = self.info(name)?;
        let op = format!("safetensors tensor `{name}`");
        if info.dtype != dtype {
            return Err(Error::DType {
                op,
                expected: dtype.to_string(),
                got: info.dtype,
            });
        }
        if info.shape != shape {
            return Err(Error::Shape {
                op,
                detail: format!("expected shape {shape:?}, the file has {:?}", info.shape),
            });
        }
        self.load(kit, name)
    }

    /// Uploads every tensor, by name.
    ///
    /// Errors: those of [`SafeTensorsFile::load`] for the first tensor that fails
    /// (including a dtype gpukit does not have).
    pub fn load_all(&self, kit: &Kit) -> Result<BTreeMap<String, Tensor>> {
        self.entries
            .keys()
            .map(|n| Ok((n.clone(), self.load(kit, n)?)))
            .collect()
    }
}

/// Opens `path` and uploads every tensor ([`SafeTensorsFile::load_all`]).
///
/// Errors: those of [`SafeTensorsFile::open`] and [`SafeTensorsFile::load_all`].
pub fn load_safetensors(kit: &Kit, path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    SafeTensorsFile::open(path)?.load_all(kit)
}

/// A tensor's bytes prepared for the writer.
struct Bytes {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &Bytes {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// Writes `tensors` (name, tensor; any layout, downloaded row-major) to `path` as a
/// safetensors file.
///
/// Errors: [`Error::InvalidArgument`] for a repeated name; download errors;
/// [`Error::Io`] naming the file when it cannot be written.
pub fn save_safetensors(path: impl AsRef<Path>, tensors: &[(&str, &Tensor)]) -> Result<()> {
    let path = path.as_ref();
    let mut prepared: BTreeMap<&str, Bytes> = BTreeMap::new();
    for (name, t) in tensors {
        let b = Bytes {
            dtype: file_dtype(t.dtype()),
            shape: t.dims().to_vec(),
            data: download_le(t)?,
        };
        if prepared.insert(name, b).is_some() {
            return Err(Error::InvalidArgument {
                op: "save_safetensors".into(),
                reason: format!("the name `{name}` is given twice"),
            });
        }
    }
    safetensors::serialize_to_file(prepared.iter().map(|(n, b)| (*n, b)), None, path)
        .map_err(|e| io_err(path, e))
}
