//! Average pooling (ONNX AveragePool) on the convolution op: each window's sum is a
//! depthwise convolution with a kernel of ones (the convolution's chain: taps in
//! row-major order, one rounding each), divided once by the window's count, itself the
//! same convolution over a tensor of ones. Same bits on every backend.

use gpukit_core::{DType, Error, Result};

use crate::Tensor;
use crate::nn::{ConvOptions, Padding, PoolOptions, pool_geometry};

/// `e` with its op named `op` (the geometry check is shared with `max_pool2d`).
fn renamed(e: Error, op: &str) -> Error {
    match e {
        Error::InvalidArgument { reason, .. } => Error::InvalidArgument {
            op: op.into(),
            reason,
        },
        Error::Shape { detail, .. } => Error::Shape {
            op: op.into(),
            detail,
        },
        other => other,
    }
}

impl Tensor {
    /// Average pooling (ONNX AveragePool; PyTorch `avg_pool1d/2d`), NCW or NCHW, float
    /// dtypes, with the options of [`Tensor::max_pool`] (kernel, strides, dilations,
    /// padding incl. `auto_pad`, `ceil_mode`). Each output is the sum of its window's
    /// input elements, in row-major tap order with one rounding per tap, divided once
    /// by the window's count: with `count_include_pad` every tap inside the explicitly
    /// padded input counts (ONNX `count_include_pad = 1`; `ceil_mode`'s extension past
    /// the pads never counts), without it only the taps inside the input (ONNX's
    /// default). f16 and bf16 are summed and divided in f32 and rounded once. A NaN in
    /// a window makes its average NaN (onnxruntime and PyTorch; ONNX's reference skips
    /// NaN when `count_include_pad = 0`).
    ///
    /// ```
    /// use gpukit_tensor::{Padding, PoolOptions, Tensor};
    /// let kit = gpukit::cpu()?;
    /// let x = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4])?;
    /// let o = PoolOptions {
    ///     kernel: vec![2],
    ///     strides: vec![2],
    ///     padding: Padding::Explicit(vec![1, 0]),
    ///     ..Default::default()
    /// };
    /// assert_eq!(x.avg_pool(&o, false)?.to_vec::<f32>()?, [1.0, 2.5]);
    /// assert_eq!(x.avg_pool(&o, true)?.to_vec::<f32>()?, [0.5, 2.5]);
    /// # Ok::<(), gpukit_core::Error>(())
    /// ```
    ///
    /// Errors: [`Error::Shape`] for ranks other than 3 and 4 or an input smaller than
    /// the window; [`Error::InvalidArgument`] for a kernel list of the wrong length,
    /// zero sizes, or a window lying wholly in padding (as [`Tensor::max_pool`], in both
    /// modes); [`Error::DType`] for integers.
    #[doc(alias = "avg_pool2d")]
    #[doc(alias = "AveragePool")]
    pub fn avg_pool(&self, o: &PoolOptions, count_include_pad: bool) -> Result<Tensor> {
        let op = "avg_pool";
        if !self.dtype().is_float() {
            return Err(Error::DType {
                op: op.into(),
                expected: "a float dtype".into(),
                got: self.dtype(),
            });
        }
        let (p, one_d, asked) = pool_geometry(op, &self.dims, o)?;
        let shape = gpukit_ops::max_pool2d_out_shape(&p).map_err(|e| renamed(e, op))?;
        let out_dims: Vec<usize> = if one_d {
            vec![shape[0], shape[1], shape[3]]
        } else {
            shape.to_vec()
        };
        let ct = match self.dtype() {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        };
        if out_dims.contains(&0) {
            return Tensor::zeros(&self.kit, &out_dims, self.dtype());
        }
        let x = if ct == self.dtype() {
            self.clone()
        } else {
            self.to_dtype(ct)?
        };
        let x = if one_d { x.unsqueeze(2)? } else { x };
        let conv = |padding: [usize; 4], groups: usize| ConvOptions {
            strides: p.strides.to_vec(),
            dilations: p.dilations.to_vec(),
            padding: Padding::Explicit(padding.to_vec()),
            groups,
        };
        let w = Tensor::full(&self.kit, &[p.c, 1, p.kh, p.kw], 1.0, ct)?;
        let sum = x.conv(&w, None, &conv(p.pads, p.c))?;
        // The count of each window: the same windows over ones, `+0.0` outside them.
        let w1 = Tensor::full(&self.kit, &[1, 1, p.kh, p.kw], 1.0, ct)?;
        let counts = if count_include_pad {
            // Ones over the explicitly padded input; ceil_mode's extension is padding.
            let (t, l, b, r) = if one_d {
                (0, asked[0], 0, asked[1])
            } else {
                (asked[0], asked[1], asked[2], asked[3])
            };
            let ones = Tensor::full(&self.kit, &[1, 1, p.h + t + b, p.w + l + r], 1.0, ct)?;
            let ext = [0, 0, p.pads[2] - b, p.pads[3] - r];
            ones.conv(&w1, None, &conv(ext, 1))?
        } else {
            let ones = Tensor::full(&self.kit, &[1, 1, p.h, p.w], 1.0, ct)?;
            ones.conv(&w1, None, &conv(p.pads, 1))?
        };
        let y = sum.div(&counts)?;
        let y = if one_d { y.squeeze(2)? } else { y };
        if ct == self.dtype() {
            Ok(y)
        } else {
            y.to_dtype(self.dtype())
        }
    }
}
