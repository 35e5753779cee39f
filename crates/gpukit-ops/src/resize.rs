//! The general N-D resize (ONNX Resize, opset 19, without `tf_crop_and_resize`,
//! `antialias` and `keep_aspect_ratio_policy`): [`resize`] with a [`ResizeSpec`]
//! (nearest / linear / cubic, every coordinate transformation mode, every nearest
//! mode, `cubic_coeff_a`, `exclude_outside`) to sizes or scales.

use gpukit_core::numeric::FLOAT_DTYPES;
pub use gpukit_core::resize::{
    CoordMode, NearestMode, ResizeMode, ResizePlan, ResizeSpec, ResizeTarget,
};
use gpukit_core::resize::{plan_resize, resize_dims};
use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

use crate::check;

/// Resizes `x` (shape `in_dims`, row-major, contiguous, rank 0..=8) into `out` to
/// `target` (an output extent, or a scale giving `⌊in · s⌋`, per axis; any axis may be
/// resized) as `spec` says.
///
/// The source coordinates and coefficients of each axis are computed once on the host
/// in f64, in onnx's reference order (the table in [`gpukit_core::resize`] and
/// docs/ops/movement.md); each coefficient is rounded once to the compute type and a
/// zero weight is not read. Nearest copies the chosen element's bits (every dtype);
/// linear and cubic (floats) evaluate each output with the last axis innermost, on each
/// axis `acc = w0·v0` then `acc = fma(w_t, v_t, acc)` over the taps in index order, in
/// the compute type (f32 for f16/bf16), stored once: the bits do not depend on the
/// backend. An axis with scale 1 (within 1e-9) and its extent kept is copied.
///
/// Errors (naming `resize`): [`Error::DType`] (`out` and `x` differ, or an integer
/// dtype with linear or cubic), [`Error::InvalidArgument`] (rank above 8, a target of
/// the wrong length, a scale not finite and positive, a non-finite `cubic_a`, `out`
/// overlaps `x`), [`Error::Shape`] (an empty input axis with a non-empty output
/// axis), [`Error::Length`] (`x` not the product of `in_dims`, `out` not the output's
/// element count), [`Error::SizeOverflow`], [`Error::Absent`],
/// [`Error::DeviceMismatch`] and device errors.
pub fn resize(
    kit: &Kit,
    out: &Buf,
    x: &Buf,
    in_dims: &[usize],
    target: ResizeTarget<'_>,
    spec: &ResizeSpec,
) -> Result<()> {
    let name = "resize";
    let ops = [(out, "out"), (x, "x")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    if spec.mode != ResizeMode::Nearest && !FLOAT_DTYPES.contains(&d) {
        return Err(Error::DType {
            op: name.to_string(),
            expected: format!(
                "f32, f64, f16 or bf16 ({} resize interpolates; nearest takes any dtype)",
                spec.mode.name()
            ),
            got: d,
        });
    }
    if !spec.cubic_a.is_finite() {
        return Err(Error::InvalidArgument {
            op: name.to_string(),
            reason: format!("cubic_coeff_a {} is not finite", spec.cubic_a),
        });
    }
    let n_in = check::product(name, &format!("x of shape {in_dims:?}"), in_dims)?;
    check::len(name, &format!("x of shape {in_dims:?}"), x, n_in)?;
    let (out_dims, _) = resize_dims(name, in_dims, target)?;
    let n_out: usize = out_dims.iter().product();
    check::len(
        name,
        &format!("out of shape {out_dims:?} (x {in_dims:?})"),
        out,
        n_out,
    )?;
    check::no_overlap(name, out, &[(x, "x")], false)?;
    if n_out == 0 {
        return Ok(());
    }
    // Σ out <= rank · n_out: the tables are bounded by the output buffer.
    let plan = plan_resize(name, in_dims, target, spec, d == DType::F64)?;
    let mut dims = Vec::with_capacity(2 * plan.in_dims.len());
    for &e in plan.in_dims.iter().chain(&plan.out_dims) {
        dims.push(check::i64_of(name, "shape entry", e)?);
    }
    let bd = kit.upload(&dims)?;
    let bt = kit.upload(&plan.taps)?;
    let bw = kit.upload(&plan.weights)?;
    kit.launch_builtin(
        &check::name("resize", d),
        check::launch_1d(n_out)?,
        &[
            out.into(),
            x.into(),
            (&bd).into(),
            (&bt).into(),
            (&bw).into(),
            DevArg::I64(plan.in_dims.len() as i64),
            DevArg::I64(plan.k as i64),
            DevArg::I64(check::i64_of(name, "rows", plan.rows())?),
            DevArg::I64(check::i64_of(name, "n_out", n_out)?),
            DevArg::I64(i64::from(plan.interp)),
        ],
    )
}

/// The output extents of [`resize`] for `in_dims` and `target` (sizes as given, or
/// `⌊in · s⌋`).
///
/// Errors: as [`resize`]'s shape errors ([`Error::InvalidArgument`],
/// [`Error::Shape`], [`Error::SizeOverflow`]).
pub fn resize_out_dims(in_dims: &[usize], target: ResizeTarget<'_>) -> Result<Vec<usize>> {
    resize_dims("resize", in_dims, target).map(|(d, _)| d)
}
