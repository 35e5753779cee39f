//! Indexing methods built on the index ops: `gather` along an axis (ONNX Gather),
//! `embedding` (a row lookup), and `tile` (ONNX Tile, pure data movement).

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
}
