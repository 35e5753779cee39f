//! Element-wise index methods (ONNX GatherElements and ScatterElements) built on the
//! `gather_elements` / `scatter_elements` ops, ONNX Pad on the `pad` op, ONNX
//! CumSum on the `cumsum` op and ONNX TopK on the `topk` op.

use gpukit_core::elements::ScatterReduction;
use gpukit_core::pad::PadMode;
use gpukit_core::{DType, Error, Result};

use crate::Tensor;
use crate::layout::{self, shape_err};

/// `indices` as a contiguous i64 tensor (an i32 tensor is cast; other dtypes refused).
fn i64_indices(op: &str, indices: &Tensor) -> Result<Tensor> {
    match indices.dtype() {
        DType::I64 => indices.contiguous(),
        DType::I32 => indices.to_dtype(DType::I64),
        got => Err(Error::DType {
            op: op.into(),
            expected: "i64 or i32 (indices)".into(),
            got,
        }),
    }
}

/// The axis of an element-wise index op and `(outer, inner)` of the indices' shape.
fn geometry(op: &str, axis: i64, data: &Tensor, indices: &Tensor) -> Result<usize> {
    if indices.rank() != data.rank() {
        return Err(shape_err(
            op,
            format!(
                "indices of shape {:?} must have the rank of data {:?}",
                indices.dims, data.dims
            ),
        ));
    }
    layout::axis(op, axis, &data.dims)
}

impl Tensor {
    /// ONNX GatherElements (PyTorch `gather`, `numpy.take_along_axis`): the result has
    /// the shape of `indices` and `out[.., j, ..] = self[.., indices[.., j, ..], ..]`
    /// along `axis` (negative counts from the end), every other coordinate unchanged.
    /// `indices` has the rank of `self` and, on every other axis, at most `self`'s
    /// length (as onnxruntime and PyTorch allow; the leading part of `self` is read).
    /// Indices are i64 or i32; a negative index counts from the end of the axis. Bits
    /// are copied (data movement only).
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let i = Tensor::from_slice(&kit, &[0i64, 0, -1, 0], &[2, 2])?;
    /// assert_eq!(t.gather_elements(1, &i)?.to_vec2::<f32>()?, [[1.0, 1.0], [4.0, 3.0]]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] naming the axis and shape when `axis` is out of
    /// range (a rank-0 tensor has none); [`Error::Shape`] when the ranks differ or an
    /// index axis is longer than `self`'s; [`Error::DType`] when `indices` is not i64 or
    /// i32; [`Error::IndexOutOfRange`] for an index outside `-len..len` (also when the
    /// result is empty); [`Error::DeviceMismatch`] when `indices` lives on another kit.
    pub fn gather_elements(&self, axis: i64, indices: &Tensor) -> Result<Tensor> {
        let op = "gather_elements";
        let ax = geometry(op, axis, self, indices)?;
        let mut x = self.clone();
        for (a, (&di, &dx)) in indices.dims.iter().zip(self.dims.iter()).enumerate() {
            if a == ax || di == dx {
                continue;
            }
            if di > dx {
                return Err(shape_err(
                    op,
                    format!(
                        "indices {:?} are longer than data {:?} on axis {a}",
                        indices.dims, self.dims
                    ),
                ));
            }
            x = x.narrow(a as i64, 0, di)?;
        }
        let idx = i64_indices(op, indices)?;
        let x = x.contiguous()?;
        let outer: usize = indices.dims[..ax].iter().product();
        let inner: usize = indices.dims[ax + 1..].iter().product();
        let n = layout::numel(op, &indices.dims)?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(self.dtype(), n)?,
            self.kit.clone(),
            &indices.dims,
        );
        gpukit_ops::gather_elements(
            &self.kit,
            &out.buf,
            &x.buf,
            &idx.buf,
            outer,
            self.dims[ax],
            inner,
            indices.dims[ax],
        )?;
        Ok(out)
    }

    /// ONNX ScatterElements (PyTorch `scatter` / `scatter_reduce`): a copy of `self`
    /// where, for every element of `updates` in row-major order,
    /// `out[.., indices[.., j, ..], ..] = combine(out[..], updates[.., j, ..])` along
    /// `axis` (negative counts from the end). `reduction` is ONNX's attribute: `None`
    /// (the update replaces; with duplicate targets the last in row-major order wins),
    /// `Add`, `Mul`, `Max`, `Min` (folded in that order, one rounding per step; NaN wins
    /// max and min; integers wrap). The order is the same on every backend.
    ///
    /// `indices` (i64 or i32, negative from the end) and `updates` have the same shape,
    /// the rank of `self`, and `self`'s length on every axis but `axis` (a smaller
    /// extent elsewhere, which ONNX allows, is refused). `updates` has `self`'s dtype.
    ///
    /// ```
    /// use gpukit_tensor::{ScatterReduction, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[0i32; 3], &[3])?;
    /// let i = Tensor::from_slice(&kit, &[1i64, 1, -1], &[3])?;
    /// let u = Tensor::from_slice(&kit, &[5i32, 7, 9], &[3])?;
    /// assert_eq!(t.scatter_elements(0, &i, &u, ScatterReduction::Add)?.to_vec::<i32>()?, [0, 12, 9]);
    /// assert_eq!(t.scatter_elements(0, &i, &u, ScatterReduction::None)?.to_vec::<i32>()?, [0, 7, 9]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] for `axis` out of range; [`Error::Shape`] when
    /// `indices` and `updates` differ in shape or do not match `self` as above;
    /// [`Error::DType`] for indices not i64/i32 or `updates` of another dtype;
    /// [`Error::IndexOutOfRange`] for an index outside `-len..len` (nothing is written);
    /// [`Error::DeviceMismatch`].
    pub fn scatter_elements(
        &self,
        axis: i64,
        indices: &Tensor,
        updates: &Tensor,
        reduction: ScatterReduction,
    ) -> Result<Tensor> {
        let op = "scatter_elements";
        let ax = geometry(op, axis, self, indices)?;
        if updates.dims != indices.dims {
            return Err(shape_err(
                op,
                format!(
                    "updates of shape {:?} must have the shape of indices {:?}",
                    updates.dims, indices.dims
                ),
            ));
        }
        for (a, (&di, &dx)) in indices.dims.iter().zip(self.dims.iter()).enumerate() {
            if a != ax && di != dx {
                return Err(shape_err(
                    op,
                    format!(
                        "indices {:?} must match data {:?} on every axis but {ax} (axis {a} differs)",
                        indices.dims, self.dims
                    ),
                ));
            }
        }
        if updates.dtype() != self.dtype() {
            return Err(Error::DType {
                op: op.into(),
                expected: format!("{} (updates, as data)", self.dtype()),
                got: updates.dtype(),
            });
        }
        let idx = i64_indices(op, indices)?;
        let (x, u) = (self.contiguous()?, updates.contiguous()?);
        let outer: usize = self.dims[..ax].iter().product();
        let inner: usize = self.dims[ax + 1..].iter().product();
        let out = Tensor::contiguous_from(
            self.kit.alloc(self.dtype(), self.numel())?,
            self.kit.clone(),
            &self.dims,
        );
        gpukit_ops::scatter_elements(
            &self.kit,
            &out.buf,
            &x.buf,
            &idx.buf,
            &u.buf,
            outer,
            self.dims[ax],
            inner,
            indices.dims[ax],
            reduction,
        )?;
        Ok(out)
    }
}

impl Tensor {
    /// ONNX Pad (`numpy.pad` for `Constant`, `Reflect`, `Edge`, `Wrap`): `pads` holds
    /// `[begin_0 .., end_0 ..]` for the axes in `axes` (every axis, in order, when
    /// `None`; negative axes count from the end), as ONNX orders them. A negative pad
    /// crops that many elements (first, as onnxruntime does), a positive one adds
    /// elements: `value` (converted to the tensor's dtype as [`Tensor::full`] does)
    /// under `Constant`, the mirror image without the edge under `Reflect` (repeating
    /// periodically for pads longer than the axis, as numpy; an axis of one element
    /// repeats it), the end element under `Edge`, the other end under `Wrap`. Bits are
    /// copied.
    ///
    /// ```
    /// use gpukit_tensor::{PadMode, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[1i64, 2, 3], &[3])?;
    /// assert_eq!(t.pad(&[2, 1], PadMode::Reflect, 0.0, None)?.to_vec::<i64>()?, [3, 2, 1, 2, 3, 2]);
    /// assert_eq!(t.pad(&[-1, 2], PadMode::Constant, 9.0, None)?.to_vec::<i64>()?, [2, 3, 9, 9]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] when `pads` is not twice as long as the axes,
    /// an axis is out of range or repeated, an axis is cropped below zero, or a mode
    /// other than `Constant` pads an axis with no element left;
    /// [`Error::SizeOverflow`] when the result's size overflows.
    pub fn pad(
        &self,
        pads: &[i64],
        mode: PadMode,
        value: f64,
        axes: Option<&[i64]>,
    ) -> Result<Tensor> {
        let op = "pad";
        let r = self.rank();
        let axes: Vec<usize> = match axes {
            None => (0..r).collect(),
            Some(a) => a
                .iter()
                .map(|&x| layout::axis(op, x, &self.dims))
                .collect::<Result<_>>()?,
        };
        let k = axes.len();
        if pads.len() != 2 * k {
            return Err(layout::invalid(
                op,
                format!(
                    "pads {pads:?} must hold 2 * {k} values (begins, then ends) for axes {axes:?}"
                ),
            ));
        }
        let mut full = vec![0i64; 2 * r];
        let mut seen = vec![false; r];
        for (j, &a) in axes.iter().enumerate() {
            if std::mem::replace(&mut seen[a], true) {
                return Err(layout::invalid(
                    op,
                    format!("axis {a} is repeated in {axes:?}"),
                ));
            }
            full[a] = pads[j];
            full[r + a] = pads[k + j];
        }
        let od = gpukit_ops::pad_out_dims(&self.dims, &full, mode)?;
        let n = layout::numel(op, &od)?;
        let x = self.contiguous()?;
        let v = Tensor::full(&self.kit, &[], value, self.dtype())?;
        let out = Tensor::contiguous_from(self.kit.alloc(self.dtype(), n)?, self.kit.clone(), &od);
        gpukit_ops::pad(&self.kit, &out.buf, &x.buf, &v.buf, &self.dims, &full, mode)?;
        Ok(out)
    }

    /// ONNX CumSum: the running sum along `axis` (negative counts from the end), same
    /// shape and dtype (any dtype). Each line's sum starts as its first element and adds
    /// the next ones in order (from the end when `reverse`) with one rounding each in the
    /// compute type (f16 / bf16 in f32, rounded once per output; integers wrap); with
    /// `exclusive` each position holds the sum of the elements before it (`0` first).
    /// The same bits on every backend.
    ///
    /// ```
    /// # fn main() -> gpukit_core::Result<()> {
    /// let kit = gpukit::cpu()?;
    /// let x = gpukit_tensor::Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.cumsum(1, false, false)?.to_vec::<f32>()?, [1.0, 3.0, 3.0, 7.0]);
    /// assert_eq!(x.cumsum(0, true, false)?.to_vec::<f32>()?, [0.0, 0.0, 1.0, 2.0]);
    /// assert_eq!(x.cumsum(-1, false, true)?.to_vec::<f32>()?, [3.0, 2.0, 7.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] when `axis` is out of range (a rank-0 tensor
    /// has no axis).
    pub fn cumsum(&self, axis: i64, exclusive: bool, reverse: bool) -> Result<Tensor> {
        let op = "cumsum";
        let ax = layout::axis(op, axis, &self.dims)?;
        let x = self.contiguous()?;
        let n = layout::numel(op, &self.dims)?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(self.dtype(), n)?,
            self.kit.clone(),
            &self.dims,
        );
        let outer: usize = self.dims[..ax].iter().product();
        let inner: usize = self.dims[ax + 1..].iter().product();
        gpukit_ops::cumsum(
            &self.kit,
            &out.buf,
            &x.buf,
            outer,
            self.dims[ax],
            inner,
            exclusive,
            reverse,
        )?;
        Ok(out)
    }

    /// ONNX TopK (sorted): the `k` largest elements along `axis` (negative counts from
    /// the end), or the `k` smallest when `largest` is false, best first, with their
    /// positions along the axis. Returns `(values, indices)`, both of the input's shape
    /// with `axis` of length `k`; values keep the input's dtype (bit copies), indices are
    /// i64. The order is total, so every backend gives the same answer: NaN above every
    /// number (first when `largest`, last otherwise, as ONNX's reference and
    /// `torch.topk`), `-0.0` equal to `+0.0`, and equal values keep the lower position
    /// first (ONNX's rule). Any dtype.
    ///
    /// ```
    /// # fn main() -> gpukit_core::Result<()> {
    /// let kit = gpukit::cpu()?;
    /// let x = gpukit_tensor::Tensor::from_slice(&kit, &[3.0f32, 1.0, 4.0, 1.0, 5.0, 9.0], &[2, 3])?;
    /// let (v, i) = x.topk(2, -1, true)?;
    /// assert_eq!(v.dims(), &[2, 2]);
    /// assert_eq!(v.to_vec::<f32>()?, [4.0, 3.0, 9.0, 5.0]);
    /// assert_eq!(i.to_vec::<i64>()?, [2, 0, 2, 1]);
    /// let (v, i) = x.topk(1, 0, false)?;
    /// assert_eq!((v.to_vec::<f32>()?, i.to_vec::<i64>()?), (vec![1.0, 1.0, 4.0], vec![1, 0, 0]));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] when `axis` is out of range (a rank-0 tensor
    /// has no axis) or `k` exceeds the axis length, naming both.
    pub fn topk(&self, k: usize, axis: i64, largest: bool) -> Result<(Tensor, Tensor)> {
        let op = "topk";
        let ax = layout::axis(op, axis, &self.dims)?;
        let len = self.dims[ax];
        if k > len {
            return Err(Error::InvalidArgument {
                op: op.into(),
                reason: format!(
                    "k = {k} exceeds the length {len} of axis {axis} of shape {:?}",
                    self.dims
                ),
            });
        }
        let x = self.contiguous()?;
        let mut dims = self.dims.to_vec();
        dims[ax] = k;
        let values = self.alloc_like(&dims, self.dtype())?;
        let indices = self.alloc_like(&dims, DType::I64)?;
        let outer: usize = self.dims[..ax].iter().product();
        let inner: usize = self.dims[ax + 1..].iter().product();
        gpukit_ops::topk(
            &self.kit,
            &values.buf,
            &indices.buf,
            &x.buf,
            outer,
            len,
            inner,
            k,
            largest,
        )?;
        Ok((values, indices))
    }
}
