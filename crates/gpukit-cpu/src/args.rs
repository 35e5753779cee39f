//! The arguments of a built-in launch as the CPU kernels read them: [`BuiltinArgs`]
//! (checked accessors) and [`RawBuf`] (a raw view of one buffer), and the kernels'
//! entry-point type [`BuiltinFn`]. A leaf module: the kernels and the registry
//! ([`crate::builtins`]) both import it, and it imports neither.

use std::marker::PhantomData;

use gpukit_core::{Element, Error, KernelArg, Result};

/// A built-in kernel's entry point.
pub type BuiltinFn = fn(&BuiltinArgs<'_>) -> Result<()>;

/// The arguments of one built-in launch, with checked accessors.
pub struct BuiltinArgs<'a> {
    kernel: &'a str,
    args: &'a [KernelArg],
}

/// A raw view of a buffer argument: host pointer and length in elements.
///
/// Copyable and shareable across rayon tasks; every access is `unsafe` because the
/// kernel itself guarantees that concurrent tasks touch disjoint elements (and that an
/// output aliasing an input is only ever the exact same range, read before written).
pub struct RawBuf<'a, T> {
    ptr: *mut T,
    len: usize,
    _life: PhantomData<&'a T>,
}

impl<T> Clone for RawBuf<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RawBuf<'_, T> {}

// SAFETY: a RawBuf is an address and a length; the kernels using it guarantee that
// concurrent accesses are to disjoint elements (see the type's docs).
unsafe impl<T: Send> Send for RawBuf<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for RawBuf<'_, T> {}

impl<'a, T: Element> RawBuf<'a, T> {
    /// A view of a slice the view borrows mutably (for tests).
    #[cfg(test)]
    pub(crate) fn from_mut_slice(s: &'a mut [T]) -> RawBuf<'a, T> {
        RawBuf {
            ptr: s.as_mut_ptr(),
            len: s.len(),
            _life: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first element's address.
    pub fn ptr(&self) -> *mut T {
        self.ptr
    }

    /// The whole buffer as a shared slice.
    ///
    /// # Safety
    /// Nothing may write the buffer while the slice lives.
    pub unsafe fn slice(&self) -> &'a [T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the launch guarantees ptr..ptr+len is a live, aligned host range for
        // the launch; the caller guarantees no concurrent writes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Elements `start..end` as a mutable slice.
    ///
    /// # Safety
    /// `start <= end <= len`, and nothing else may read or write those elements while
    /// the slice lives.
    pub unsafe fn slice_mut(&self, start: usize, end: usize) -> &'a mut [T] {
        debug_assert!(start <= end && end <= self.len);
        if start == end {
            return &mut [];
        }
        // SAFETY: in bounds (caller), exclusive (caller), live and aligned (launch).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(start), end - start) }
    }

    /// Reads element `i`.
    ///
    /// # Safety
    /// `i < len`, and no concurrent write of element `i`.
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        // SAFETY: in bounds and race-free (caller), live and aligned (launch).
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// `i < len`, and no concurrent read or write of element `i` by another task.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        // SAFETY: in bounds and exclusive (caller), live and aligned (launch).
        unsafe { self.ptr.add(i).write(v) }
    }
}

impl<'a> BuiltinArgs<'a> {
    /// Wraps a launch's arguments (the backend does this).
    pub(crate) fn new(kernel: &'a str, args: &'a [KernelArg]) -> BuiltinArgs<'a> {
        BuiltinArgs { kernel, args }
    }

    /// The kernel's name.
    pub fn kernel(&self) -> &str {
        self.kernel
    }

    fn err<T>(&self, index: usize, reason: String) -> Result<T> {
        Err(Error::Argument {
            kernel: self.kernel.to_string(),
            index,
            reason,
        })
    }

    fn get(&self, index: usize) -> Result<KernelArg> {
        match self.args.get(index) {
            Some(a) => Ok(*a),
            None => self.err(
                index,
                format!("the launch has only {} arguments", self.args.len()),
            ),
        }
    }

    /// Argument `index` as a buffer of `T` (checked kind and dtype).
    ///
    /// Errors: [`Error::Argument`].
    pub fn buf<T: Element>(&self, index: usize) -> Result<RawBuf<'a, T>> {
        match self.get(index)? {
            KernelArg::Buffer { ptr, bytes, dtype } if dtype == Some(T::DTYPE) => Ok(RawBuf {
                ptr: ptr.0 as usize as *mut T,
                len: bytes / std::mem::size_of::<T>(),
                _life: PhantomData,
            }),
            other => self.err(
                index,
                format!("expected a buffer of {}, got {other:?}", T::DTYPE),
            ),
        }
    }

    /// Argument `index` as an i64 scalar. Errors: [`Error::Argument`].
    pub fn i64(&self, index: usize) -> Result<i64> {
        match self.get(index)? {
            KernelArg::I64(v) => Ok(v),
            other => self.err(index, format!("expected an i64 scalar, got {other:?}")),
        }
    }

    /// Argument `index` as a non-negative i64 scalar, as usize. Errors: [`Error::Argument`].
    pub fn usize(&self, index: usize) -> Result<usize> {
        let v = self.i64(index)?;
        match usize::try_from(v) {
            Ok(u) => Ok(u),
            Err(_) => self.err(index, format!("expected a non-negative size, got {v}")),
        }
    }

    /// Argument `index` as an f64 scalar. Errors: [`Error::Argument`].
    pub fn f64(&self, index: usize) -> Result<f64> {
        match self.get(index)? {
            KernelArg::F64(v) => Ok(v),
            other => self.err(index, format!("expected an f64 scalar, got {other:?}")),
        }
    }

    /// Checks that buffer argument `index` holds at least `need` elements.
    ///
    /// Errors: [`Error::Argument`] naming the shortfall.
    pub fn need<T: Element>(&self, index: usize, buf: &RawBuf<'_, T>, need: usize) -> Result<()> {
        if buf.len() >= need {
            Ok(())
        } else {
            self.err(
                index,
                format!(
                    "buffer holds {} elements, the launch needs {need}",
                    buf.len()
                ),
            )
        }
    }
}
