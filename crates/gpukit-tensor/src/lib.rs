//! **gpukit-tensor**: a [`Tensor`] — a device buffer with a shape — that a model can be
//! written in, on top of gpukit's op family ([`gpukit_ops`]).
//!
//! A tensor is a cheap-to-clone handle: the buffer ([`Buf`], shared), its dims, element
//! strides and offset (so `permute`, `narrow`, `slice`, `broadcast_to`, `squeeze` are
//! views that copy nothing), the dtype and the kit. Math follows numpy's broadcasting
//! rules, and every result has exactly the bits of the op it calls: a tensor method only
//! computes shapes and strides and calls one op (see docs/tensor.md).
//!
//! ```
//! use gpukit_tensor::Tensor;
//!
//! let kit = gpukit::cpu()?;
//! let x = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
//! let b = Tensor::from_slice(&kit, &[10.0f32, 20.0, 30.0], &[3])?;
//! let y = (&x + &b)?; // [2, 3] + [3] broadcasts
//! assert_eq!(y.to_vec2::<f32>()?, vec![vec![11.0, 22.0, 33.0], vec![14.0, 25.0, 36.0]]);
//! assert_eq!(y.t()?.dims(), &[3, 2]);
//! # Ok::<(), gpukit_core::Error>(())
//! ```

mod attention;
mod index;
#[cfg(feature = "io")]
pub mod io;
mod layout;
mod linalg;
mod mask;
mod math;
mod nn;
mod norm;
mod pool;
mod reduce;
mod resize;
mod scatter;
mod trig_pow;
mod view;

use std::sync::Arc;

use gpukit_core::{Buf, DType, Element, Error, Kit, Result};

pub use attention::AttentionOptions;
pub use gpukit_core::elements::ScatterReduction;
pub use gpukit_core::pad::PadMode;
pub use layout::broadcast_shapes;
pub use linalg::GemmOpts;
pub use nn::{ConvOptions, ConvTransposeOptions, Padding, PoolOptions};
pub use reduce::ReduceOp;
pub use resize::{CoordMode, NearestMode, ResizeMode, ResizeOptions};

/// An n-dimensional array on a kit's device: a shared buffer plus dims, element strides
/// and an element offset. Cloning is cheap (the buffer and the layout are shared).
///
/// Tensors are immutable: every method returns a new tensor (a view sharing the buffer,
/// or a fresh buffer an op wrote). Rank 0 (no dims) is a scalar of one element.
#[derive(Clone)]
pub struct Tensor {
    buf: Buf,
    kit: Kit,
    dims: Arc<[usize]>,
    strides: Arc<[isize]>,
    offset: usize,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("dims", &self.dims)
            .field("strides", &self.strides)
            .field("offset", &self.offset)
            .field("dtype", &self.dtype())
            .finish()
    }
}

impl Tensor {
    // ---- accessors -------------------------------------------------------------

    /// The dims (same as [`Tensor::dims`]).
    pub fn shape(&self) -> &[usize] {
        &self.dims
    }

    /// The dims, outermost first.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The number of dims (0 for a scalar).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The number of elements (1 for a scalar, 0 when any dim is 0).
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.buf.dtype()
    }

    /// The element strides of the view (negative after a negative-step slice, 0 along a
    /// broadcast axis).
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The element offset of the first element in the underlying buffer.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The kit (device) the tensor lives on.
    pub fn kit(&self) -> &Kit {
        &self.kit
    }

    /// Whether the elements are laid out row-major without gaps (axes of length 1 may
    /// have any stride); such a tensor is read by ops without a copy.
    pub fn is_contiguous(&self) -> bool {
        layout::is_contiguous(&self.dims, &self.strides)
    }

    /// The buffer holding exactly the elements in row-major order: the tensor's own
    /// buffer (or a view of it) when contiguous, otherwise a fresh copy (see
    /// [`Tensor::contiguous`]).
    ///
    /// Errors: those of [`Tensor::contiguous`].
    pub fn to_buf(&self) -> Result<Buf> {
        Ok(self.contiguous()?.buf)
    }

    // ---- constructors ----------------------------------------------------------

    /// Wraps a buffer holding `shape`'s elements in row-major order (no copy).
    ///
    /// Errors: [`Error::Absent`] for the absent buffer; [`Error::Length`] when the
    /// buffer's length is not the product of `shape`; [`Error::SizeOverflow`].
    pub fn from_buf(buf: Buf, shape: &[usize]) -> Result<Tensor> {
        let op = "Tensor::from_buf";
        let Some(kit) = buf.kit().cloned() else {
            return Err(Error::Absent { what: op.into() });
        };
        let n = layout::numel(op, shape)?;
        if buf.len() != n {
            return Err(Error::Length {
                what: format!("{op}: buffer for shape {shape:?}"),
                expected: n,
                got: buf.len(),
            });
        }
        Ok(Tensor::contiguous_from(buf, kit, shape))
    }

    /// A tensor over a fresh row-major buffer (internal: the caller checked the length).
    pub(crate) fn contiguous_from(buf: Buf, kit: Kit, shape: &[usize]) -> Tensor {
        Tensor {
            buf,
            kit,
            strides: layout::contiguous_strides(shape).into(),
            dims: shape.into(),
            offset: 0,
        }
    }

    /// Uploads `data` (row-major) as a tensor of `shape`; the dtype is `T`'s.
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::from_slice(&kit, &[1i64, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(t.to_vec::<i64>()?, [1, 2, 3, 4]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Length`] when `data.len()` is not the product of `shape`;
    /// [`Error::SizeOverflow`]; allocation errors of the kit.
    pub fn from_slice<T: Element>(kit: &Kit, data: &[T], shape: &[usize]) -> Result<Tensor> {
        let op = "Tensor::from_slice";
        let n = layout::numel(op, shape)?;
        if data.len() != n {
            return Err(Error::Length {
                what: format!("{op}: data for shape {shape:?}"),
                expected: n,
                got: data.len(),
            });
        }
        Ok(Tensor::contiguous_from(
            kit.upload(data)?,
            kit.clone(),
            shape,
        ))
    }

    /// [`Tensor::from_slice`] taking the vector. Errors: as [`Tensor::from_slice`].
    pub fn from_vec<T: Element>(kit: &Kit, data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_slice(kit, &data, shape)
    }

    /// A rank-0 tensor holding `v`. Errors: allocation errors.
    pub fn scalar<T: Element>(kit: &Kit, v: T) -> Result<Tensor> {
        Tensor::from_slice(kit, &[v], &[])
    }

    /// A tensor of `shape` filled with zero bits (+0.0 / 0).
    ///
    /// Errors: [`Error::SizeOverflow`]; allocation errors.
    pub fn zeros(kit: &Kit, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n = layout::numel("Tensor::zeros", shape)?;
        Ok(Tensor::contiguous_from(
            kit.zeros(dtype, n)?,
            kit.clone(),
            shape,
        ))
    }

    /// A tensor of `shape` filled with 1.
    ///
    /// Errors: as [`Tensor::full`].
    pub fn ones(kit: &Kit, shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(kit, shape, 1.0, dtype)
    }

    /// A tensor of `shape` filled with `value` converted to `dtype` (floats round to
    /// nearest even; integers must be exact), written by the `expand` op from one
    /// element.
    ///
    /// Errors: [`Error::Conversion`] for a value an integer dtype cannot hold exactly;
    /// [`Error::SizeOverflow`]; allocation errors.
    pub fn full(kit: &Kit, shape: &[usize], value: f64, dtype: DType) -> Result<Tensor> {
        let one = kit.upload_f64(dtype, &[value])?;
        let t = Tensor::contiguous_from(one, kit.clone(), &[]);
        t.broadcast_to(shape)?.contiguous()
    }

    /// `[start, start + step, ...)` below `end` (above it for a negative step), as a
    /// rank-1 tensor of `dtype`: element `i` is `start + i * step` computed in f64 and
    /// converted once (numpy's `arange`; the length is `ceil((end - start) / step)`).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::arange(&kit, 0.0, 5.0, 2.0, gpukit_core::DType::F32)?;
    /// assert_eq!(t.to_vec::<f32>()?, [0.0, 2.0, 4.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] for a zero or non-finite step, or a
    /// non-finite bound; [`Error::Conversion`] for values an integer dtype cannot hold.
    pub fn arange(kit: &Kit, start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        let op = "Tensor::arange";
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() {
            return Err(layout::invalid(
                op,
                format!(
                    "need finite start, end and a finite non-zero step, got {start}, {end}, {step}"
                ),
            ));
        }
        let count = ((end - start) / step).ceil();
        if count > (1u64 << 40) as f64 {
            return Err(Error::SizeOverflow {
                what: format!("{op}: {count} elements"),
            });
        }
        let n = if count > 0.0 { count as usize } else { 0 };
        let vals: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
        Ok(Tensor::contiguous_from(
            kit.upload_f64(dtype, &vals)?,
            kit.clone(),
            &[n],
        ))
    }

    // ---- downloads -------------------------------------------------------------

    /// The elements in row-major order.
    ///
    /// Errors: [`Error::DType`] when `T` is not the tensor's dtype; those of
    /// [`Tensor::contiguous`].
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::DType {
                op: "Tensor::to_vec".into(),
                expected: T::DTYPE.to_string(),
                got: self.dtype(),
            });
        }
        self.to_buf()?.download::<T>()
    }

    /// The elements of a rank-2 tensor as rows.
    ///
    /// Errors: [`Error::Shape`] unless the rank is 2; those of [`Tensor::to_vec`].
    pub fn to_vec2<T: Element>(&self) -> Result<Vec<Vec<T>>> {
        self.expect_rank("Tensor::to_vec2", 2)?;
        let v = self.to_vec::<T>()?;
        let c = self.dims[1];
        Ok((0..self.dims[0])
            .map(|r| v[r * c..(r + 1) * c].to_vec())
            .collect())
    }

    /// The elements of a rank-3 tensor as nested rows.
    ///
    /// Errors: [`Error::Shape`] unless the rank is 3; those of [`Tensor::to_vec`].
    pub fn to_vec3<T: Element>(&self) -> Result<Vec<Vec<Vec<T>>>> {
        self.expect_rank("Tensor::to_vec3", 3)?;
        let v = self.to_vec::<T>()?;
        let (b, c) = (self.dims[1], self.dims[2]);
        Ok((0..self.dims[0])
            .map(|i| {
                (0..b)
                    .map(|r| v[(i * b + r) * c..(i * b + r + 1) * c].to_vec())
                    .collect()
            })
            .collect())
    }

    /// The single element of a tensor with one element (any rank).
    ///
    /// Errors: [`Error::Shape`] unless it has exactly one element; those of
    /// [`Tensor::to_vec`].
    pub fn to_scalar<T: Element>(&self) -> Result<T> {
        if self.numel() != 1 {
            return Err(layout::shape_err(
                "Tensor::to_scalar",
                format!("needs exactly one element, shape is {:?}", self.dims),
            ));
        }
        Ok(self.to_vec::<T>()?[0])
    }

    pub(crate) fn expect_rank(&self, op: &str, rank: usize) -> Result<()> {
        if self.rank() == rank {
            Ok(())
        } else {
            Err(layout::shape_err(
                op,
                format!("needs rank {rank}, got shape {:?}", self.dims),
            ))
        }
    }
}
