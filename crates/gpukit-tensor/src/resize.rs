//! Resize on tensors (ONNX Resize, opset 19, without `roi` / `tf_crop_and_resize`,
//! `antialias` and `keep_aspect_ratio_policy`): [`Tensor::resize`] with
//! [`ResizeOptions`]. The method maps ONNX's `sizes` / `scales` and `axes` onto every
//! axis and calls [`gpukit_ops::resize`], so its bits are that op's
//! (docs/ops/movement.md, "General resize").

use gpukit_core::Result;
pub use gpukit_ops::{CoordMode, NearestMode, ResizeMode};
use gpukit_ops::{ResizeSpec, ResizeTarget};

use crate::Tensor;
use crate::layout::invalid;

/// Options of [`Tensor::resize`]: ONNX Resize's inputs and attributes. Exactly one of
/// `sizes` and `scales` is given, one entry per axis of `axes` (every axis when `axes`
/// is empty); the axes not listed keep their extent.
#[derive(Debug, Clone, PartialEq)]
pub struct ResizeOptions {
    /// Output extents (ONNX input `sizes`).
    pub sizes: Option<Vec<usize>>,
    /// Scales (ONNX input `scales`, f32 as in ONNX): output `⌊in · scale⌋`, and the
    /// coordinate transform uses the scale itself.
    pub scales: Option<Vec<f32>>,
    /// The axes `sizes` / `scales` refer to (negative from the end); empty = all.
    pub axes: Vec<i64>,
    /// `mode`: nearest (any dtype), linear or cubic (floats).
    pub mode: ResizeMode,
    /// `coordinate_transformation_mode`.
    pub coord: CoordMode,
    /// `nearest_mode`.
    pub nearest: NearestMode,
    /// `cubic_coeff_a`.
    pub cubic_a: f32,
    /// `exclude_outside` (linear and cubic).
    pub exclude_outside: bool,
}

impl Default for ResizeOptions {
    /// ONNX's defaults (nearest, half_pixel, round_prefer_floor, A = −0.75), with
    /// neither sizes nor scales set.
    fn default() -> Self {
        ResizeOptions {
            sizes: None,
            scales: None,
            axes: Vec::new(),
            mode: ResizeMode::Nearest,
            coord: CoordMode::HalfPixel,
            nearest: NearestMode::RoundPreferFloor,
            cubic_a: -0.75,
            exclude_outside: false,
        }
    }
}

impl Tensor {
    /// Resizes the tensor (ONNX Resize; any rank up to 8, any axes): nearest copies
    /// bits (every dtype); linear and cubic interpolate in the compute type with the
    /// order of operations of [`gpukit_ops::resize`] (last axis innermost, one fma per
    /// further tap, stored once). Coordinates follow `o.coord`, rounding `o.nearest`.
    ///
    /// ```
    /// # use gpukit::prelude::*;
    /// # use gpukit::tensor::{ResizeMode, ResizeOptions};
    /// # let kit = gpukit::cpu().unwrap();
    /// let x = gpukit::Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0], &[1, 1, 2, 2]).unwrap();
    /// let y = x.resize(&ResizeOptions {
    ///     scales: Some(vec![2.0, 2.0]),
    ///     axes: vec![2, 3],
    ///     mode: ResizeMode::Linear,
    ///     ..ResizeOptions::default()
    /// }).unwrap();
    /// assert_eq!(y.shape(), &[1, 1, 4, 4]);
    /// assert_eq!(&y.to_vec::<f32>().unwrap()[..4], &[1.0, 1.25, 1.75, 2.0]);
    /// ```
    ///
    /// Errors: [`gpukit_core::Error::InvalidArgument`] (both or neither of sizes and
    /// scales, a length other than the axes', an axis out of range or repeated, a bad
    /// scale or `cubic_a`), and those of [`gpukit_ops::resize`] (integers with linear or
    /// cubic, an empty axis to a non-empty one, sizes too large).
    pub fn resize(&self, o: &ResizeOptions) -> Result<Tensor> {
        let op = "resize";
        let r = self.rank();
        let axes: Vec<usize> = if o.axes.is_empty() {
            (0..r).collect()
        } else {
            let mut v = Vec::with_capacity(o.axes.len());
            for &a in &o.axes {
                let ax = if a < 0 { a + r as i64 } else { a };
                if ax < 0 || ax >= r as i64 {
                    return Err(invalid(
                        op,
                        format!("axis {a} out of range for shape {:?}", self.shape()),
                    ));
                }
                if v.contains(&(ax as usize)) {
                    return Err(invalid(op, format!("axis {a} repeated in {:?}", o.axes)));
                }
                v.push(ax as usize);
            }
            v
        };
        let len_err = |what: &str, n: usize| {
            invalid(
                op,
                format!(
                    "{n} {what} for the axes {axes:?} of shape {:?}",
                    self.shape()
                ),
            )
        };
        let dims = self.shape().to_vec();
        let spec = ResizeSpec {
            mode: o.mode,
            coord: o.coord,
            nearest: o.nearest,
            cubic_a: f64::from(o.cubic_a),
            exclude_outside: o.exclude_outside,
        };
        let (sizes, scales);
        let target = match (&o.sizes, &o.scales) {
            (Some(s), None) => {
                if s.len() != axes.len() {
                    return Err(len_err("sizes", s.len()));
                }
                let mut full = dims.clone();
                for (&a, &v) in axes.iter().zip(s) {
                    full[a] = v;
                }
                sizes = full;
                ResizeTarget::Sizes(&sizes)
            }
            (None, Some(s)) => {
                if s.len() != axes.len() {
                    return Err(len_err("scales", s.len()));
                }
                let mut full = vec![1.0f64; r];
                for (&a, &v) in axes.iter().zip(s) {
                    full[a] = f64::from(v);
                }
                scales = full;
                ResizeTarget::Scales(&scales)
            }
            _ => {
                return Err(invalid(
                    op,
                    "give exactly one of sizes and scales".to_string(),
                ));
            }
        };
        let out_dims = gpukit_ops::resize_out_dims(&dims, target)?;
        let x = self.contiguous()?;
        let y = self.alloc_like(&out_dims, self.dtype())?;
        gpukit_ops::resize(&self.kit, &y.buf, &x.buf, &dims, target, &spec)?;
        Ok(y)
    }
}
