//! Views (no copy: reshape of a contiguous tensor, narrow, slice, permute, broadcast,
//! squeeze) and the copies that materialise them (`contiguous`, `concat`, `stack`).

use gpukit_core::abi::movement::MAX_RANK;
use gpukit_core::{Buf, DType, Error, Result};

use crate::Tensor;
use crate::layout::{self, invalid, shape_err};

impl Tensor {
    /// A view with new dims/strides/offset over the same buffer.
    pub(crate) fn with_layout(
        &self,
        dims: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
    ) -> Tensor {
        Tensor {
            buf: self.buf.clone(),
            kit: self.kit.clone(),
            dims: dims.into(),
            strides: strides.into(),
            offset,
        }
    }

    /// The buffer range `[offset, offset + len)` of the elements a non-negative-stride
    /// view reads (for ops that take a buffer plus strides).
    pub(crate) fn span_buf(&self) -> Result<Buf> {
        match layout::extent(&self.dims, &self.strides) {
            None => self.buf.view(self.offset, 0),
            Some((_, hi)) => self.buf.view(self.offset, hi as usize + 1),
        }
    }

    /// A row-major copy of the view, or the tensor itself (sharing its buffer) when it is
    /// already contiguous. Copies use the movement ops: `expand` for broadcast views,
    /// `permute` for transposed ones, and `gather` (with element indices computed on the
    /// host) for anything else (steps, negative steps, narrowed inner axes).
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::arange(&kit, 0.0, 6.0, 1.0, gpukit_core::DType::F32)?
    ///     .reshape(&[2, 3])?
    ///     .t()?;
    /// assert!(!t.is_contiguous());
    /// assert_eq!(t.contiguous()?.to_vec::<f32>()?, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: allocation and op errors of the kit.
    pub fn contiguous(&self) -> Result<Tensor> {
        let n = self.numel();
        let dims = self.dims.to_vec();
        if self.is_contiguous() {
            if self.offset == 0 && self.buf.len() == n {
                return Ok(Tensor::contiguous_from(
                    self.buf.clone(),
                    self.kit.clone(),
                    &dims,
                ));
            }
            let b = self.buf.view(if n == 0 { 0 } else { self.offset }, n)?;
            return Ok(Tensor::contiguous_from(b, self.kit.clone(), &dims));
        }
        let out = self.kit.alloc(self.dtype(), n)?;
        let kit = &self.kit;
        // Non-negative strides (permutes, narrows, steps, broadcasts and any mix): one
        // strided copy on the device, no index table.
        if dims.len() <= MAX_RANK && self.strides.iter().all(|&s| s >= 0) {
            let strides: Vec<usize> = self.strides.iter().map(|&s| s as usize).collect();
            gpukit_ops::as_strided(kit, &out, &self.buf, &dims, &strides, self.offset)?;
            return Ok(Tensor::contiguous_from(out, kit.clone(), &dims));
        }
        // Negative strides (reversing slices) or a rank above MAX_RANK: gather with the
        // element index of every output element.
        let mut idx = Vec::with_capacity(n);
        let mut coord = vec![0usize; dims.len()];
        let mut pos = self.offset as isize;
        for _ in 0..n {
            idx.push(pos as i64);
            for d in (0..dims.len()).rev() {
                coord[d] += 1;
                pos += self.strides[d];
                if coord[d] < dims[d] {
                    break;
                }
                pos -= self.strides[d] * dims[d] as isize;
                coord[d] = 0;
            }
        }
        let ib = kit.upload(&idx)?;
        gpukit_ops::gather(kit, &out, &self.buf, &ib, 1, self.buf.len(), 1)?;
        Ok(Tensor::contiguous_from(out, kit.clone(), &dims))
    }

    /// The same elements with new dims; one entry may be `-1` (inferred). A view when
    /// the tensor is contiguous, otherwise a reshaped [`Tensor::contiguous`] copy.
    ///
    /// Errors: [`Error::Shape`] when the element counts differ, more than one dim is
    /// `-1`, a dim is below `-1`, or `-1` cannot be inferred (the other dims multiply
    /// to 0); [`Error::SizeOverflow`].
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let op = "reshape";
        let n = self.numel();
        let bad = |why: &str| shape_err(op, format!("{:?} to {shape:?}: {why}", self.dims));
        let mut infer = None;
        let mut known = 1usize;
        for (i, &d) in shape.iter().enumerate() {
            match d {
                -1 if infer.is_some() => return Err(bad("more than one -1")),
                -1 => infer = Some(i),
                d if d < 0 => return Err(bad("dims must be >= 0 or -1")),
                d => {
                    known = known
                        .checked_mul(d as usize)
                        .ok_or_else(|| bad("the dims overflow"))?
                }
            }
        }
        let mut dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(i) = infer {
            if known == 0 || !n.is_multiple_of(known) {
                return Err(bad("cannot infer the -1 dim"));
            }
            dims[i] = n / known;
        } else if known != n {
            return Err(bad(&format!("{n} elements vs {known}")));
        }
        layout::numel(op, &dims)?;
        let base = if self.is_contiguous() {
            self.clone()
        } else {
            self.contiguous()?
        };
        let strides = layout::contiguous_strides(&dims);
        Ok(base.with_layout(dims, strides, base.offset))
    }

    /// [`Tensor::reshape`] with `usize` dims (no inference). Errors: as `reshape`.
    pub fn view(&self, dims: &[usize]) -> Result<Tensor> {
        let v: Vec<i64> = dims
            .iter()
            .map(|&d| d.min(i64::MAX as usize) as i64)
            .collect();
        self.reshape(&v)
    }

    /// Elements `start..start + len` along `axis` (a view).
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range; [`Error::Shape`]
    /// when the range passes the end of the axis.
    pub fn narrow(&self, axis: i64, start: usize, len: usize) -> Result<Tensor> {
        let op = "narrow";
        let a = layout::axis(op, axis, &self.dims)?;
        if start.checked_add(len).is_none_or(|e| e > self.dims[a]) {
            return Err(shape_err(
                op,
                format!(
                    "range {start}..{start}+{len} passes axis {axis} of length {} (shape {:?})",
                    self.dims[a], self.dims
                ),
            ));
        }
        let mut dims = self.dims.to_vec();
        dims[a] = len;
        let offset = if len == 0 {
            self.offset
        } else {
            (self.offset as isize + start as isize * self.strides[a]) as usize
        };
        Ok(self.with_layout(dims, self.strides.to_vec(), offset))
    }

    /// ONNX Slice as a view: for each `axes[i]`, elements from `starts[i]` towards
    /// `ends[i]` (exclusive) by `steps[i]` (empty `steps` means all 1). Negative starts
    /// and ends count from the end; out-of-range values are clamped exactly as ONNX
    /// Slice clamps them (`[0, dim]` for a positive step, `[-1, dim - 1]` for a negative
    /// one), so `i64::MAX` / `i64::MIN` mean "to the end".
    ///
    /// ```
    /// let kit = gpukit::cpu()?;
    /// let t = gpukit_tensor::Tensor::arange(&kit, 0.0, 6.0, 1.0, gpukit_core::DType::F64)?;
    /// let r = t.slice(&[0], &[-1], &[i64::MIN], &[-2])?; // t[::-2]
    /// assert_eq!(r.to_vec::<f64>()?, [5.0, 3.0, 1.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`] for a zero step, an axis out of range or
    /// repeated, or lists of different lengths.
    pub fn slice(
        &self,
        axes: &[i64],
        starts: &[i64],
        ends: &[i64],
        steps: &[i64],
    ) -> Result<Tensor> {
        let op = "slice";
        if starts.len() != axes.len()
            || ends.len() != axes.len()
            || !(steps.is_empty() || steps.len() == axes.len())
        {
            return Err(invalid(
                op,
                format!(
                    "axes, starts, ends and steps differ in length ({}, {}, {}, {})",
                    axes.len(),
                    starts.len(),
                    ends.len(),
                    steps.len()
                ),
            ));
        }
        let mut dims = self.dims.to_vec();
        let mut strides = self.strides.to_vec();
        let mut offset = self.offset as isize;
        let mut seen = vec![false; dims.len()];
        let mut empty = false;
        for i in 0..axes.len() {
            let a = layout::axis(op, axes[i], &self.dims)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(invalid(
                    op,
                    format!("axis {} is repeated in {axes:?}", axes[i]),
                ));
            }
            let step = steps.get(i).copied().unwrap_or(1);
            if step == 0 {
                return Err(invalid(op, format!("step 0 on axis {}", axes[i])));
            }
            let dim = dims[a] as i64;
            let fix = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
            let (s, e) = (fix(starts[i]), fix(ends[i]));
            let (s, e, len) = if dim == 0 {
                (0, 0, 0)
            } else if step > 0 {
                let (s, e) = (s.clamp(0, dim), e.clamp(0, dim));
                (s, e, if e > s { (e - s - 1) / step + 1 } else { 0 })
            } else {
                let (s, e) = (s.clamp(0, (dim - 1).max(0)), e.clamp(-1, dim - 1));
                // i128: `-step` of i64::MIN does not fit an i64.
                let len = if s > e {
                    ((s - e - 1) as i128 / -(step as i128) + 1) as i64
                } else {
                    0
                };
                (s, e, len)
            };
            let _ = e;
            if len > 0 {
                offset += s as isize * strides[a];
            } else {
                empty = true;
            }
            dims[a] = len as usize;
            strides[a] = strides[a].saturating_mul(step as isize);
        }
        let offset = if empty { self.offset } else { offset as usize };
        Ok(self.with_layout(dims, strides, offset))
    }

    /// Reorders the axes (a view): output axis `i` is input axis `perm[i]`; negative
    /// entries count from the end.
    ///
    /// Errors: [`Error::InvalidArgument`] unless `perm` is a permutation of the axes.
    pub fn permute(&self, perm: &[i64]) -> Result<Tensor> {
        let op = "permute";
        if perm.len() != self.rank() {
            return Err(invalid(
                op,
                format!(
                    "perm {perm:?} for shape {:?} (rank {})",
                    self.dims,
                    self.rank()
                ),
            ));
        }
        let mut seen = vec![false; perm.len()];
        let mut axes = Vec::with_capacity(perm.len());
        for &p in perm {
            let a = layout::axis(op, p, &self.dims)?;
            if std::mem::replace(&mut seen[a], true) {
                return Err(invalid(op, format!("perm {perm:?} repeats axis {p}")));
            }
            axes.push(a);
        }
        Ok(self.with_layout(
            axes.iter().map(|&a| self.dims[a]).collect(),
            axes.iter().map(|&a| self.strides[a]).collect(),
            self.offset,
        ))
    }

    /// Swaps two axes (a view). Errors: [`Error::InvalidArgument`] for an axis out of
    /// range.
    pub fn transpose(&self, a: i64, b: i64) -> Result<Tensor> {
        let (a, b) = (
            layout::axis("transpose", a, &self.dims)?,
            layout::axis("transpose", b, &self.dims)?,
        );
        let mut perm: Vec<i64> = (0..self.rank() as i64).collect();
        perm.swap(a, b);
        self.permute(&perm)
    }

    /// The matrix transpose (PyTorch's `t()`): swaps the two axes of a rank-2 tensor;
    /// rank 0 and 1 are returned as they are.
    ///
    /// Errors: [`Error::Shape`] for rank above 2.
    pub fn t(&self) -> Result<Tensor> {
        match self.rank() {
            0 | 1 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            _ => Err(shape_err(
                "t",
                format!("needs rank <= 2, got shape {:?} (use transpose)", self.dims),
            )),
        }
    }

    /// Broadcasts to `shape` by numpy's rules (a view with stride 0 along repeated
    /// axes): dims align right; each dim equals the target's or is 1.
    ///
    /// Errors: [`Error::Shape`] naming both shapes and the axis that does not fit.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let op = "broadcast_to";
        let fits = shape.len() >= self.rank()
            && layout::broadcast_shapes(op, &self.dims, shape).is_ok_and(|s| s == shape);
        if !fits {
            let lead = shape.len().saturating_sub(self.rank());
            let axis = (0..self.rank())
                .find(|&d| {
                    shape.len() < self.rank()
                        || (self.dims[d] != 1 && self.dims[d] != shape[lead + d])
                })
                .unwrap_or(0);
            return Err(shape_err(
                op,
                format!(
                    "{:?} does not broadcast to {shape:?} (axis {axis})",
                    self.dims
                ),
            ));
        }
        layout::numel(op, shape)?;
        let strides = layout::broadcast_strides(&self.dims, &self.strides, shape);
        Ok(self.with_layout(shape.to_vec(), strides, self.offset))
    }

    /// Same as [`Tensor::broadcast_to`] (ONNX Expand with the result shape given).
    pub fn expand(&self, shape: &[usize]) -> Result<Tensor> {
        self.broadcast_to(shape)
    }

    /// Removes `axis`, which must have length 1 (a view).
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range; [`Error::Shape`]
    /// when its length is not 1.
    pub fn squeeze(&self, axis: i64) -> Result<Tensor> {
        let a = layout::axis("squeeze", axis, &self.dims)?;
        if self.dims[a] != 1 {
            return Err(shape_err(
                "squeeze",
                format!(
                    "axis {axis} of shape {:?} has length {}, not 1",
                    self.dims, self.dims[a]
                ),
            ));
        }
        let (mut d, mut s) = (self.dims.to_vec(), self.strides.to_vec());
        d.remove(a);
        s.remove(a);
        Ok(self.with_layout(d, s, self.offset))
    }

    /// Removes every axis of length 1 (a view).
    pub fn squeeze_all(&self) -> Tensor {
        let keep: Vec<usize> = (0..self.rank()).filter(|&a| self.dims[a] != 1).collect();
        self.with_layout(
            keep.iter().map(|&a| self.dims[a]).collect(),
            keep.iter().map(|&a| self.strides[a]).collect(),
            self.offset,
        )
    }

    /// Inserts an axis of length 1 at `axis` (in `[-rank-1, rank]`; a view).
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range.
    pub fn unsqueeze(&self, axis: i64) -> Result<Tensor> {
        let a = layout::axis_in("unsqueeze", axis, self.rank() + 1, &self.dims)?;
        let (mut d, mut s) = (self.dims.to_vec(), self.strides.to_vec());
        d.insert(a, 1);
        s.insert(a, 1);
        Ok(self.with_layout(d, s, self.offset))
    }

    /// Concatenates tensors along `axis` (ONNX Concat) with the `concat` op: all have
    /// one dtype and rank, and equal dims except along `axis`.
    ///
    /// Errors: [`Error::InvalidArgument`] for no tensors or an axis out of range;
    /// [`Error::DType`] for mixed dtypes; [`Error::Shape`] naming the first tensor
    /// whose shape does not fit; [`Error::DeviceMismatch`] for tensors on other kits.
    pub fn concat(tensors: &[&Tensor], axis: i64) -> Result<Tensor> {
        let op = "concat";
        let Some(first) = tensors.first() else {
            return Err(invalid(op, "needs at least one tensor".into()));
        };
        let a = layout::axis(op, axis, &first.dims)?;
        for (i, t) in tensors.iter().enumerate() {
            if t.dtype() != first.dtype() {
                return Err(Error::DType {
                    op: format!("{op}: tensor {i}"),
                    expected: first.dtype().to_string(),
                    got: t.dtype(),
                });
            }
            let fits = t.rank() == first.rank()
                && (0..t.rank()).all(|d| d == a || t.dims[d] == first.dims[d]);
            if !fits {
                return Err(shape_err(
                    op,
                    format!(
                        "tensor {i} has shape {:?}, tensor 0 {:?}: only axis {axis} may differ",
                        t.dims, first.dims
                    ),
                ));
            }
        }
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.contiguous())
            .collect::<Result<_>>()?;
        let lens: Vec<usize> = parts.iter().map(|t| t.dims[a]).collect();
        let mut dims = first.dims.to_vec();
        dims[a] = lens
            .iter()
            .try_fold(0usize, |s, &l| s.checked_add(l))
            .ok_or_else(|| Error::SizeOverflow {
                what: format!("{op}: axis lengths {lens:?}"),
            })?;
        let n = layout::numel(op, &dims)?;
        let kit = &first.kit;
        let out = kit.alloc(first.dtype(), n)?;
        let outer = dims[..a].iter().product();
        let inner = dims[a + 1..].iter().product();
        let bufs: Vec<&Buf> = parts.iter().map(|t| &t.buf).collect();
        gpukit_ops::concat(kit, &out, &bufs, outer, &lens, inner)?;
        Ok(Tensor::contiguous_from(out, kit.clone(), &dims))
    }

    /// Stacks tensors of one shape along a new axis `axis` (in `[-rank-1, rank]`).
    ///
    /// Errors: [`Error::Shape`] when the shapes differ; those of [`Tensor::concat`].
    pub fn stack(tensors: &[&Tensor], axis: i64) -> Result<Tensor> {
        let op = "stack";
        let Some(first) = tensors.first() else {
            return Err(invalid(op, "needs at least one tensor".into()));
        };
        if let Some((i, t)) = tensors
            .iter()
            .enumerate()
            .find(|(_, t)| t.dims != first.dims)
        {
            return Err(shape_err(
                op,
                format!(
                    "tensor {i} has shape {:?}, tensor 0 {:?}",
                    t.dims, first.dims
                ),
            ));
        }
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.unsqueeze(axis))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = parts.iter().collect();
        let a = layout::axis_in(op, axis, first.rank() + 1, &first.dims)?;
        Tensor::concat(&refs, a as i64)
    }

    /// Splits along `axis` into views of the given lengths (they must add up to the
    /// axis length).
    ///
    /// Errors: [`Error::InvalidArgument`] for an axis out of range; [`Error::Shape`]
    /// when the lengths do not add up.
    pub fn split(&self, sizes: &[usize], axis: i64) -> Result<Vec<Tensor>> {
        let a = layout::axis("split", axis, &self.dims)?;
        if sizes.iter().try_fold(0usize, |s, &l| s.checked_add(l)) != Some(self.dims[a]) {
            return Err(shape_err(
                "split",
                format!(
                    "sizes {sizes:?} do not add up to axis {axis} of shape {:?}",
                    self.dims
                ),
            ));
        }
        let mut start = 0;
        let mut out = Vec::with_capacity(sizes.len());
        for &s in sizes {
            out.push(self.narrow(a as i64, start, s)?);
            start += s;
        }
        Ok(out)
    }

    /// Splits along `axis` into `chunks` views of `ceil(len / chunks)` elements (the
    /// last one shorter; fewer views when the axis is short), as PyTorch's `chunk`.
    ///
    /// Errors: [`Error::InvalidArgument`] for `chunks = 0` or an axis out of range.
    pub fn chunk(&self, chunks: usize, axis: i64) -> Result<Vec<Tensor>> {
        let a = layout::axis("chunk", axis, &self.dims)?;
        if chunks == 0 {
            return Err(invalid("chunk", "chunks must be at least 1".into()));
        }
        let len = self.dims[a];
        let size = len.div_ceil(chunks).max(1);
        let mut sizes = Vec::new();
        let mut left = len;
        while left > 0 {
            let s = size.min(left);
            sizes.push(s);
            left -= s;
        }
        if sizes.is_empty() {
            sizes.push(0);
        }
        self.split(&sizes, a as i64)
    }

    /// Checks that `other` has this tensor's dtype (for binary ops).
    pub(crate) fn same_dtype(&self, op: &str, other: &Tensor) -> Result<DType> {
        if self.dtype() != other.dtype() {
            return Err(Error::DType {
                op: format!("{op} ({:?} and {:?})", self.dims, other.dims),
                expected: self.dtype().to_string(),
                got: other.dtype(),
            });
        }
        Ok(self.dtype())
    }
}
