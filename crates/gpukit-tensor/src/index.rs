//! Indexing methods built on the index ops: `gather` along an axis (ONNX Gather),
//! `embedding` (a row lookup), `tile` (ONNX Tile, pure data movement) and `one_hot`
//! (ONNX OneHot, built on the comparison and select ops).

use gpukit_core::{DType, Result};

use crate::Tensor;
use crate::layout::{self, shape_err};

impl Tensor {
    /// Elements of `self` picked along `axis` by `indices` (ONNX Gather, `numpy.take`):
    /// the result has shape `self.dims[..axis] ++ indices.dims ++ self.dims[axis+1..]`,
    /// `out[.., g.., ..] = self[.., indices[g..], ..]`. Indices are i64 or i32 (an i32
    /// tensor is cast to i64 first); a negative index counts from the end of the axis.
    /// Same bits as the `gather` op (data movement only).
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
    /// let i = Tensor::from_slice(&kit, &[2i64, -3], &[2])?;
    /// assert_eq!(t.gather(0, &i)?.to_vec::<f32>()?, [5.0, 6.0, 1.0, 2.0]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::InvalidArgument`](gpukit_core::Error::InvalidArgument) naming the
    /// axis and shape when `axis` is out of range (a rank-0 tensor has none);
    /// [`Error::DType`](gpukit_core::Error::DType) when `indices` is not i64 or i32;
    /// [`Error::IndexOutOfRange`](gpukit_core::Error::IndexOutOfRange) for an index
    /// outside `-len..len` (also when the result would be empty);
    /// [`Error::DeviceMismatch`](gpukit_core::Error::DeviceMismatch) when `indices`
    /// lives on another kit.
    pub fn gather(&self, axis: i64, indices: &Tensor) -> Result<Tensor> {
        let op = "gather";
        let ax = layout::axis(op, axis, &self.dims)?;
        let idx = match indices.dtype() {
            DType::I64 => indices.contiguous()?,
            DType::I32 => indices.to_dtype(DType::I64)?,
            got => {
                return Err(gpukit_core::Error::DType {
                    op: op.into(),
                    expected: "i64 or i32 (indices)".into(),
                    got,
                });
            }
        };
        let outer: usize = self.dims[..ax].iter().product();
        let inner: usize = self.dims[ax + 1..].iter().product();
        let mut dims = self.dims[..ax].to_vec();
        dims.extend_from_slice(&indices.dims);
        dims.extend_from_slice(&self.dims[ax + 1..]);
        let x = self.contiguous()?;
        let out = Tensor::contiguous_from(
            self.kit.alloc(self.dtype(), layout::numel(op, &dims)?)?,
            self.kit.clone(),
            &dims,
        );
        gpukit_ops::gather(
            &self.kit,
            &out.buf,
            &x.buf,
            &idx.buf,
            outer,
            self.dims[ax],
            inner,
        )?;
        Ok(out)
    }

    /// An embedding lookup: row `ids[..]` of the `[vocab, dim]` table `self`, giving
    /// shape `ids.dims ++ [dim]` (PyTorch `nn.Embedding`, ONNX Gather on axis 0). Ids are
    /// i64 or i32; a negative id counts from the end, as in [`Tensor::gather`].
    ///
    /// Errors: [`Error::Shape`](gpukit_core::Error::Shape) when `self` is not rank 2;
    /// otherwise those of [`Tensor::gather`].
    pub fn embedding(&self, ids: &Tensor) -> Result<Tensor> {
        if self.rank() != 2 {
            return Err(shape_err(
                "embedding",
                format!("the table must be [vocab, dim], got shape {:?}", self.dims),
            ));
        }
        self.gather(0, ids)
    }

    /// `self` repeated `reps[a]` times along each axis `a` (ONNX Tile, `numpy.tile`
    /// with one rep per axis): shape `dims[a] * reps[a]`, element
    /// `out[i..] = self[i_a % dims[a] ..]`. Data movement only (same bits).
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let t = Tensor::from_slice(&kit, &[1i32, 2], &[1, 2])?;
    /// assert_eq!(t.tile(&[2, 2])?.to_vec2::<i32>()?, [[1, 2, 1, 2], [1, 2, 1, 2]]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`](gpukit_core::Error::Shape) when `reps` does not have
    /// one entry per axis; [`Error::SizeOverflow`](gpukit_core::Error::SizeOverflow)
    /// when the result's size overflows.
    pub fn tile(&self, reps: &[usize]) -> Result<Tensor> {
        let op = "tile";
        if reps.len() != self.rank() {
            return Err(shape_err(
                op,
                format!(
                    "reps {reps:?} must have one entry per axis of shape {:?}",
                    self.dims
                ),
            ));
        }
        // [d0, d1, ..] viewed as [1, d0, 1, d1, ..], expanded to [r0, d0, r1, d1, ..]
        // (stride 0 on the rep axes), copied, then merged pairwise.
        let mut split = Vec::with_capacity(2 * self.rank());
        let mut big = Vec::with_capacity(2 * self.rank());
        let mut out = Vec::with_capacity(self.rank());
        for (&d, &r) in self.dims.iter().zip(reps) {
            split.extend_from_slice(&[1, d]);
            big.extend_from_slice(&[r, d]);
            out.push(
                d.checked_mul(r)
                    .ok_or_else(|| gpukit_core::Error::SizeOverflow {
                        what: format!("{op}: dims {:?} times reps {reps:?}", self.dims),
                    })?,
            );
        }
        layout::numel(op, &out)?;
        let as_i64 = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<_>>();
        self.reshape(&as_i64(&split))?
            .broadcast_to(&big)?
            .contiguous()?
            .reshape(&as_i64(&out))
    }

    /// ONNX OneHot: `self` holds indices (any dtype; floats are truncated toward zero by
    /// the contract's cast, NaN to 0); the result has a new axis of length `depth` at
    /// `axis` (in `[-rank-1, rank]`, negative from the end; ONNX's default is `-1`) and
    /// the dtype of `values`, a 2-element tensor `[off, on]`: element `[.., j, ..]` is `on`
    /// where the index equals `j` or `j - depth` (a negative index counts from the end),
    /// else `off`. An index outside `[-depth, depth)` gives a row of `off` (as ONNX and
    /// onnxruntime). `on` / `off` are copied bit for bit.
    ///
    /// ```
    /// use gpukit_tensor::Tensor;
    /// let kit = gpukit::cpu()?;
    /// let ids = Tensor::from_slice(&kit, &[2i64, -1, 7], &[3])?;
    /// let v = Tensor::from_slice(&kit, &[0.0f32, 1.0], &[2])?;
    /// let h = ids.one_hot(3, &v, -1)?;
    /// assert_eq!(h.to_vec2::<f32>()?, [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`](gpukit_core::Error::Shape) when `values` does not hold
    /// exactly 2 elements; [`Error::InvalidArgument`](gpukit_core::Error::InvalidArgument)
    /// when `axis` is out of range or `depth` exceeds 2^53;
    /// [`Error::SizeOverflow`](gpukit_core::Error::SizeOverflow) when the result's size
    /// overflows; [`Error::DeviceMismatch`](gpukit_core::Error::DeviceMismatch) when
    /// `values` lives on another kit.
    pub fn one_hot(&self, depth: usize, values: &Tensor, axis: i64) -> Result<Tensor> {
        let op = "one_hot";
        if values.numel() != 2 {
            return Err(shape_err(
                op,
                format!("values must hold [off, on], got shape {:?}", values.dims()),
            ));
        }
        if depth as u64 > 1 << 53 {
            return Err(layout::invalid(op, format!("depth {depth} exceeds 2^53")));
        }
        let ax = layout::axis_in(op, axis, self.rank() + 1, &self.dims)?;
        let mut out: Vec<usize> = self.dims.to_vec();
        out.insert(ax, depth);
        layout::numel(op, &out)?;
        // Indices as i64, with the new axis inserted: [.., 1, ..].
        let idx = match self.dtype() {
            DType::I64 => self.clone(),
            _ => self.to_dtype(DType::I64)?,
        }
        .unsqueeze(ax as i64)?;
        // j and j - depth along the new axis: [1, .., depth, .., 1].
        let mut along = vec![1i64; out.len()];
        along[ax] = depth as i64;
        let d = depth as f64;
        let j = Tensor::arange(&self.kit, 0.0, d, 1.0, DType::I64)?.reshape(&along)?;
        let back = Tensor::arange(&self.kit, -d, 0.0, 1.0, DType::I64)?.reshape(&along)?;
        let hot = idx.eq(&j)?.or(&idx.eq(&back)?)?;
        let v = values.reshape(&[2])?;
        let (off, on) = (v.narrow(0, 0, 1)?, v.narrow(0, 1, 1)?);
        let r = hot.where_(&on, &off)?;
        debug_assert_eq!(r.dims(), &out[..]);
        Ok(r)
    }
}
