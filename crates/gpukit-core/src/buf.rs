//! [`Buf`]: a dtype-tagged device allocation, its views, and host transfers.

use std::fmt;
use std::sync::Arc;

use crate::kit::lock;
use crate::{DType, DevicePtr, Element, Error, KernelArg, Kit, Result};

/// The owner of one pooled block: returns it to its kit's pool on drop, and holds the
/// kit so the device outlives its memory whatever order owners go in.
struct MemBlock {
    kit: Kit,
    slot: usize,
}

impl Drop for MemBlock {
    fn drop(&mut self) {
        lock(&self.kit.inner.pool).give(self.slot);
    }
}

#[derive(Clone)]
enum Storage {
    /// Holds a pooled block (shared by every view of it).
    Pooled(Arc<MemBlock>),
    /// Memory something else owns; the kit is held for its device only.
    Wrapped(Kit),
    /// No buffer (a missing operand).
    Absent,
}

/// A dtype-tagged range of device memory (the seed's GkBuf).
///
/// Every clone and view holds the underlying block; its last owner hands the block
/// back to the kit's pool. Nothing is freed by hand.
#[derive(Clone)]
pub struct Buf {
    storage: Storage,
    ptr: DevicePtr,
    len: usize,
    dtype: DType,
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.storage {
            Storage::Pooled(_) => "pooled",
            Storage::Wrapped(_) => "wrapped",
            Storage::Absent => "absent",
        };
        f.debug_struct("Buf")
            .field("dtype", &self.dtype)
            .field("len", &self.len)
            .field("ptr", &format_args!("{:#x}", self.ptr.0))
            .field("kind", &kind)
            .finish()
    }
}

fn byte_len(what: &str, n: usize, dtype: DType) -> Result<usize> {
    n.checked_mul(dtype.size())
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("{what}: {n} elements of {dtype}"),
        })
}

fn check_dtype(op: &str, want: DType, got: DType) -> Result<()> {
    if want == got {
        Ok(())
    } else {
        Err(Error::DType {
            op: op.to_string(),
            expected: want.to_string(),
            got,
        })
    }
}

fn check_len(what: &str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::Length {
            what: what.to_string(),
            expected,
            got,
        })
    }
}

/// Calls `$body` with `$T` bound to the Rust type of a runtime [`DType`].
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::F16 => {
                type $T = $crate::half::f16;
                $body
            }
            $crate::DType::BF16 => {
                type $T = $crate::half::bf16;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
        }
    };
}

impl Kit {
    /// Allocates `n` elements of `dtype` from the pool. The contents are unspecified
    /// (a reused block keeps old data); use [`Kit::zeros`] for zeroed memory.
    ///
    /// Errors: [`Error::SizeOverflow`] if `n * size` overflows, [`Error::OutOfMemory`]
    /// if the device cannot provide it.
    pub fn alloc(&self, dtype: DType, n: usize) -> Result<Buf> {
        let bytes = byte_len("alloc", n, dtype)?;
        let (slot, ptr) = self.acquire(bytes)?;
        Ok(Buf {
            storage: Storage::Pooled(Arc::new(MemBlock {
                kit: self.clone(),
                slot,
            })),
            ptr,
            len: n,
            dtype,
        })
    }

    /// Allocates `n` zeroed elements of `dtype`. Errors: as [`Kit::alloc`].
    pub fn zeros(&self, dtype: DType, n: usize) -> Result<Buf> {
        let b = self.alloc(dtype, n)?;
        // SAFETY: the range is exactly the fresh block's first `byte_len` bytes.
        unsafe { self.device().fill_zero(b.ptr, b.byte_len())? };
        Ok(b)
    }

    /// Allocates a buffer holding a copy of `data`. Errors: as [`Kit::alloc`].
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buf> {
        let b = self.alloc(T::DTYPE, data.len())?;
        b.write(data)?;
        Ok(b)
    }

    /// Allocates a `dtype` buffer from f64 values, converting each by the rules of
    /// [`Element`] (floats round to nearest even; integers must be exact).
    ///
    /// Errors: [`Error::Conversion`] for a value the dtype cannot hold exactly (integer
    /// dtypes), and those of [`Kit::alloc`].
    pub fn upload_f64(&self, dtype: DType, data: &[f64]) -> Result<Buf> {
        let b = self.alloc(dtype, data.len())?;
        b.write_f64(data)?;
        Ok(b)
    }

    /// Allocates an integer buffer (`I64` or `I32`) from i64 values, exactly.
    ///
    /// Errors: [`Error::DType`] for a float dtype, [`Error::Conversion`] for an i64
    /// outside i32's range, and those of [`Kit::alloc`].
    pub fn upload_i64(&self, dtype: DType, data: &[i64]) -> Result<Buf> {
        if !matches!(dtype, DType::I64 | DType::I32) {
            return Err(Error::DType {
                op: "upload_i64".into(),
                expected: "i64 or i32".into(),
                got: dtype,
            });
        }
        let b = self.alloc(dtype, data.len())?;
        b.write_i64(data)?;
        Ok(b)
    }

    /// A buffer over device memory something else owns (another library's allocation).
    /// It owns nothing; launches and copies through it use this kit's device.
    ///
    /// # Safety
    /// `ptr .. ptr + n * dtype.size()` must be memory of this kit's device (host memory
    /// for the CPU backend), aligned to `dtype.size()`, valid for reads and writes for
    /// as long as the returned `Buf` or any clone or view of it is used, and not
    /// accessed by anything else while gpukit uses it.
    pub unsafe fn wrap(&self, ptr: DevicePtr, n: usize, dtype: DType) -> Result<Buf> {
        byte_len("wrap", n, dtype)?;
        if !ptr.0.is_multiple_of(dtype.size() as u64) {
            return Err(Error::Misaligned {
                what: "wrap".into(),
                byte_offset: ptr.0 as usize,
                align: dtype.size(),
            });
        }
        Ok(Buf {
            storage: Storage::Wrapped(self.clone()),
            ptr,
            len: n,
            dtype,
        })
    }
}

impl Buf {
    /// A buffer that is not there: the placeholder for an absent operand (a missing
    /// bias or mask). Launches pass it as a null pointer with zero length.
    pub fn absent(dtype: DType) -> Buf {
        Buf {
            storage: Storage::Absent,
            ptr: DevicePtr::NULL,
            len: 0,
            dtype,
        }
    }

    /// Whether this is the absent buffer.
    pub fn is_absent(&self) -> bool {
        matches!(self.storage, Storage::Absent)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Bytes per element.
    pub fn elem_size(&self) -> usize {
        self.dtype.size()
    }

    /// Length in bytes.
    pub fn byte_len(&self) -> usize {
        // Cannot overflow: checked when the buffer or view was made.
        self.len * self.dtype.size()
    }

    /// The device address of the first element (null for the absent buffer).
    pub fn device_ptr(&self) -> DevicePtr {
        self.ptr
    }

    /// The kit this buffer belongs to; `None` for the absent buffer.
    pub fn kit(&self) -> Option<&Kit> {
        match &self.storage {
            Storage::Pooled(b) => Some(&b.kit),
            Storage::Wrapped(k) => Some(k),
            Storage::Absent => None,
        }
    }

    /// Whether this buffer's memory is owned by a pool block (not wrapped, not absent).
    pub fn is_owned(&self) -> bool {
        matches!(self.storage, Storage::Pooled(_))
    }

    /// Whether this handle is the only one on its memory: a pooled block that no other
    /// clone or view of any buffer holds (wrapped and absent buffers: `false`). Whoever
    /// owns such a handle may write a result over it, since nothing else can read it.
    pub fn is_unique(&self) -> bool {
        match &self.storage {
            Storage::Pooled(b) => Arc::strong_count(b) == 1,
            _ => false,
        }
    }

    fn present_kit(&self, what: &str) -> Result<&Kit> {
        self.kit().ok_or_else(|| Error::Absent {
            what: what.to_string(),
        })
    }

    /// The argument that passes this buffer to a kernel, checked to be on `kit`.
    ///
    /// Errors: [`Error::DeviceMismatch`] if the buffer belongs to another kit.
    pub fn kernel_arg(&self, kit: &Kit, op: &str, operand: &str) -> Result<KernelArg> {
        if let Some(k) = self.kit()
            && !k.same(kit)
        {
            return Err(Kit::mismatch(op, operand));
        }
        Ok(KernelArg::Buffer {
            ptr: self.ptr,
            bytes: self.byte_len(),
            dtype: Some(self.dtype),
        })
    }

    /// `n` elements starting at element `off`, same dtype; holds this buffer's block.
    ///
    /// Errors: [`Error::OutOfBounds`] if `off + n > len`; [`Error::Absent`].
    pub fn view(&self, off: usize, n: usize) -> Result<Buf> {
        self.present_kit("view")?;
        let end = off.checked_add(n).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(Error::OutOfBounds {
                what: "view (elements)".into(),
                offset: off,
                len: n,
                capacity: self.len,
            });
        }
        Ok(Buf {
            storage: self.storage.clone(),
            ptr: self.ptr.add(off * self.dtype.size()),
            len: n,
            dtype: self.dtype,
        })
    }

    /// `n` elements of `dtype` at byte offset `byte_off` into this buffer: a view that
    /// reinterprets the bytes (an f32 block read as i32, say); holds this buffer's block.
    ///
    /// Errors: [`Error::OutOfBounds`] if the range passes the end, [`Error::Misaligned`]
    /// if the address is not a multiple of `dtype`'s size, [`Error::SizeOverflow`],
    /// [`Error::Absent`].
    pub fn view_as(&self, byte_off: usize, n: usize, dtype: DType) -> Result<Buf> {
        self.present_kit("view_as")?;
        let bytes = byte_len("view_as", n, dtype)?;
        let end = byte_off
            .checked_add(bytes)
            .filter(|&e| e <= self.byte_len());
        if end.is_none() {
            return Err(Error::OutOfBounds {
                what: "view_as (bytes)".into(),
                offset: byte_off,
                len: bytes,
                capacity: self.byte_len(),
            });
        }
        let ptr = self.ptr.add(byte_off);
        if !ptr.0.is_multiple_of(dtype.size() as u64) {
            return Err(Error::Misaligned {
                what: "view_as".into(),
                byte_offset: byte_off,
                align: dtype.size(),
            });
        }
        Ok(Buf {
            storage: self.storage.clone(),
            ptr,
            len: n,
            dtype,
        })
    }

    /// Copies `data` into the buffer.
    ///
    /// Errors: [`Error::DType`] if `T` is not the buffer's dtype, [`Error::Length`] if
    /// `data.len() != len`, [`Error::Absent`].
    pub fn write<T: Element>(&self, data: &[T]) -> Result<()> {
        check_dtype("write", self.dtype, T::DTYPE)?;
        check_len("write", self.len, data.len())?;
        self.upload_raw(bytemuck::cast_slice(data))
    }

    /// Copies bytes that are already in the buffer's element type: no conversion, no
    /// staging, one copy (a memory-mapped checkpoint is the intended source).
    ///
    /// Errors: [`Error::Length`] if `bytes.len() != byte_len()`, [`Error::Absent`].
    pub fn upload_raw(&self, bytes: &[u8]) -> Result<()> {
        let kit = self.present_kit("upload_raw")?;
        check_len("upload_raw (bytes)", self.byte_len(), bytes.len())?;
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the buffer's range lies inside its live block (or wrapped memory the
        // caller of `wrap` vouched for), and `bytes` has exactly its length.
        unsafe { kit.device().write(self.ptr, bytes) }
    }

    /// Copies the buffer's bytes out, as they are.
    ///
    /// Errors: [`Error::Length`] if `out.len() != byte_len()`, [`Error::Absent`].
    pub fn download_raw(&self, out: &mut [u8]) -> Result<()> {
        let kit = self.present_kit("download_raw")?;
        check_len("download_raw (bytes)", self.byte_len(), out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: as in `upload_raw`.
        unsafe { kit.device().read(self.ptr, out) }
    }

    /// Copies the buffer into `out`. Errors: as [`Buf::write`].
    pub fn read_into<T: Element>(&self, out: &mut [T]) -> Result<()> {
        check_dtype("read_into", self.dtype, T::DTYPE)?;
        check_len("read_into", self.len, out.len())?;
        self.download_raw(bytemuck::cast_slice_mut(out))
    }

    /// Copies the buffer to a new vector.
    ///
    /// Errors: [`Error::DType`] if `T` is not the buffer's dtype, [`Error::Absent`].
    pub fn download<T: Element>(&self) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Writes f64 values, converting each to the buffer's dtype by the rules of
    /// [`Element`] (through one host staging vector).
    ///
    /// Errors: [`Error::Length`], [`Error::Conversion`], [`Error::Absent`].
    pub fn write_f64(&self, data: &[f64]) -> Result<()> {
        check_len("write_f64", self.len, data.len())?;
        with_dtype!(self.dtype, T => {
            let staged = data.iter().map(|&v| <T as Element>::from_f64(v)).collect::<Result<Vec<T>>>()?;
            self.write(&staged)
        })
    }

    /// Reads the buffer as f64 values (exact for every float dtype and i32; i64
    /// beyond ±2^53 rounds to nearest even).
    ///
    /// Errors: [`Error::Absent`].
    pub fn download_f64(&self) -> Result<Vec<f64>> {
        with_dtype!(self.dtype, T => {
            Ok(self.download::<T>()?.into_iter().map(<T as Element>::to_f64).collect())
        })
    }

    /// Writes i64 values exactly into an `I64` or `I32` buffer.
    ///
    /// Errors: [`Error::DType`] for a float buffer, [`Error::Conversion`] for a value
    /// outside i32 range, [`Error::Length`], [`Error::Absent`].
    pub fn write_i64(&self, data: &[i64]) -> Result<()> {
        check_len("write_i64", self.len, data.len())?;
        match self.dtype {
            DType::I64 => self.write(data),
            DType::I32 => {
                let staged = data
                    .iter()
                    .map(|&v| {
                        i32::try_from(v).map_err(|_| Error::Conversion {
                            value: v.to_string(),
                            dtype: DType::I32,
                        })
                    })
                    .collect::<Result<Vec<i32>>>()?;
                self.write(&staged)
            }
            d => Err(Error::DType {
                op: "write_i64".into(),
                expected: "i64 or i32".into(),
                got: d,
            }),
        }
    }

    /// Reads an `I64` or `I32` buffer as i64 values, exactly.
    ///
    /// Errors: [`Error::DType`] for a float buffer, [`Error::Absent`].
    pub fn download_i64(&self) -> Result<Vec<i64>> {
        match self.dtype {
            DType::I64 => self.download::<i64>(),
            DType::I32 => Ok(self.download::<i32>()?.into_iter().map(i64::from).collect()),
            d => Err(Error::DType {
                op: "download_i64".into(),
                expected: "i64 or i32".into(),
                got: d,
            }),
        }
    }

    /// Copies `src` into this buffer on the device (same dtype and length).
    ///
    /// Errors: [`Error::DType`], [`Error::Length`], [`Error::DeviceMismatch`],
    /// [`Error::Absent`].
    pub fn copy_from(&self, src: &Buf) -> Result<()> {
        let kit = self.present_kit("copy_from (dst)")?;
        src.present_kit("copy_from (src)")?;
        src.kernel_arg(kit, "copy_from", "src")?;
        check_dtype("copy_from", self.dtype, src.dtype)?;
        check_len("copy_from", self.len, src.len)?;
        if self.len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges lie inside live memory of this kit's device (checked
        // above to be the same device); the device copy handles overlap.
        unsafe { kit.device().copy(src.ptr, self.ptr, self.byte_len()) }
    }
}
