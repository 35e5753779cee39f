//! General N-D resize (ONNX Resize, opset 19 without `tf_crop_and_resize` and
//! `antialias`): the modes, and the per-axis tap tables every backend consumes
//! (docs/ops/movement.md, "General resize").
//!
//! The source coordinates and the interpolation coefficients are computed on the host,
//! once per launch, by [`plan_resize`], in f64 and in the order of operations of
//! onnx's reference evaluator (`onnx/reference/ops/op_resize.py`), then each
//! coefficient is rounded once to the compute type (f32 for f32/f16/bf16, f64 for f64)
//! and the taps whose rounded weight is zero are dropped. The kernels read these
//! tables; none of them computes a coordinate, so the CPU, the CUDA kernels, the
//! emulator and the oracle (which computes its tables itself) agree bit for bit.
//!
//! Per axis `a` with input extent `in`, output extent `out` and scale `s` (the given
//! scale, or `out / in` in f64 when sizes are given), output index `y` (an f64):
//!
//! | mode | source coordinate `x` |
//! |---|---|
//! | `half_pixel` | `(y + 0.5) / s − 0.5` |
//! | `pytorch_half_pixel` | `w == 1 ? −0.5 : (y + 0.5) / s − 0.5` |
//! | `align_corners` | `w == 1 ? 0 : y · (in − 1) / (w − 1)` |
//! | `asymmetric` | `y / s` |
//! | `tf_half_pixel_for_nn` | `(y + 0.5) / s` (ONNX Resize-11) |
//! | `half_pixel_symmetric` | `c·(1 − out / w) + (y + 0.5) / s − 0.5`, `c = in / 2` |
//!
//! with `w = s · in` (an f64, not the integer `out`), each operation one f64 rounding,
//! left to right. Then `ratio = 1` when `x` is an integer, else `x − ⌊x⌋`; the
//! coefficients of `n` taps (`n = 2` for nearest and linear, 4 for cubic):
//! nearest `[1, 0]` or `[0, 1]` by the nearest mode (`ratio == 1` always `[0, 1]`),
//! linear `[1 − ratio, ratio]`, cubic the Keys polynomials of the reference with
//! `A = cubic_coeff_a`. The taps are the `n` consecutive indices starting at
//! `⌊x + p⌋ − p − n/2 + (frac == 0 ? 0 : 1)` (`p = ⌈n/2⌉`, `frac = (x + p) − ⌊x + p⌋`),
//! clamped into `[0, in − 1]` (edge padding). `exclude_outside` zeroes the
//! coefficients of taps outside `[0, in)` before the clamp and divides the rest by
//! their sum. An axis whose scale is within `1e-9` (relative) of 1 and whose extent is
//! kept is the identity (one tap of weight 1), as in the reference.

use crate::{Error, Result};

/// The most axes a resize kernel takes.
pub const MAX_RANK: usize = 8;

/// ONNX Resize `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResizeMode {
    /// Nearest neighbour (a copy of bits; every dtype).
    Nearest,
    /// Linear along each resized axis (floats).
    Linear,
    /// Cubic along each resized axis (floats).
    Cubic,
}

/// ONNX Resize `coordinate_transformation_mode` (the table in the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordMode {
    /// `(y + 0.5) / s − 0.5` (ONNX's default).
    HalfPixel,
    /// As half_pixel, but `−0.5` when the output length is 1.
    PytorchHalfPixel,
    /// `y · (in − 1) / (w − 1)`, 0 when the output length is 1.
    AlignCorners,
    /// `y / s`.
    Asymmetric,
    /// `(y + 0.5) / s` (Resize-11; removed from the ONNX spec in opset 13).
    TfHalfPixelForNn,
    /// half_pixel shifted so the centre of the input maps to the centre of the output.
    HalfPixelSymmetric,
}

/// ONNX Resize `nearest_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NearestMode {
    /// Round half down (ONNX's default).
    RoundPreferFloor,
    /// Round half up.
    RoundPreferCeil,
    /// `⌊x⌋`.
    Floor,
    /// `⌈x⌉`.
    Ceil,
}

impl ResizeMode {
    /// The ONNX attribute string.
    pub fn name(self) -> &'static str {
        match self {
            ResizeMode::Nearest => "nearest",
            ResizeMode::Linear => "linear",
            ResizeMode::Cubic => "cubic",
        }
    }
}

impl CoordMode {
    /// Every mode.
    pub const ALL: [CoordMode; 6] = [
        CoordMode::HalfPixel,
        CoordMode::PytorchHalfPixel,
        CoordMode::AlignCorners,
        CoordMode::Asymmetric,
        CoordMode::TfHalfPixelForNn,
        CoordMode::HalfPixelSymmetric,
    ];

    /// The ONNX attribute string.
    pub fn name(self) -> &'static str {
        match self {
            CoordMode::HalfPixel => "half_pixel",
            CoordMode::PytorchHalfPixel => "pytorch_half_pixel",
            CoordMode::AlignCorners => "align_corners",
            CoordMode::Asymmetric => "asymmetric",
            CoordMode::TfHalfPixelForNn => "tf_half_pixel_for_nn",
            CoordMode::HalfPixelSymmetric => "half_pixel_symmetric",
        }
    }
}

impl NearestMode {
    /// Every mode.
    pub const ALL: [NearestMode; 4] = [
        NearestMode::RoundPreferFloor,
        NearestMode::RoundPreferCeil,
        NearestMode::Floor,
        NearestMode::Ceil,
    ];

    /// The ONNX attribute string.
    pub fn name(self) -> &'static str {
        match self {
            NearestMode::RoundPreferFloor => "round_prefer_floor",
            NearestMode::RoundPreferCeil => "round_prefer_ceil",
            NearestMode::Floor => "floor",
            NearestMode::Ceil => "ceil",
        }
    }
}

/// How to resize: ONNX Resize's attributes (without roi, antialias and
/// keep_aspect_ratio_policy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResizeSpec {
    /// Interpolation.
    pub mode: ResizeMode,
    /// Source coordinate of an output index.
    pub coord: CoordMode,
    /// Rounding of nearest (ignored by linear and cubic).
    pub nearest: NearestMode,
    /// Cubic's `A` (ONNX `cubic_coeff_a`, default −0.75).
    pub cubic_a: f64,
    /// Taps outside the input get weight 0, the rest renormalised.
    pub exclude_outside: bool,
}

impl Default for ResizeSpec {
    /// ONNX's defaults: nearest, half_pixel, round_prefer_floor, A = −0.75.
    fn default() -> Self {
        ResizeSpec {
            mode: ResizeMode::Nearest,
            coord: CoordMode::HalfPixel,
            nearest: NearestMode::RoundPreferFloor,
            cubic_a: -0.75,
            exclude_outside: false,
        }
    }
}

/// The output extents: given directly, or from scales (`⌊in · s⌋`, in f64).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ResizeTarget<'a> {
    /// One output extent per input axis.
    Sizes(&'a [usize]),
    /// One scale per input axis (ONNX's scales are f32: pass their exact f64 value).
    Scales(&'a [f64]),
}

/// The launch of a resize: shapes and the per-axis tap tables.
#[derive(Debug, Clone, PartialEq)]
pub struct ResizePlan {
    /// Input extents (rank 0 becomes `[1]`).
    pub in_dims: Vec<usize>,
    /// Output extents.
    pub out_dims: Vec<usize>,
    /// Tap slots per output index (1 nearest, 2 linear, 4 cubic).
    pub k: usize,
    /// Interpolating (linear, cubic) rather than copying (nearest).
    pub interp: bool,
    /// Per axis, per output index: the count of taps then `k` indices (unused slots 0);
    /// `(1 + k) · Σ out_dims` entries.
    pub taps: Vec<i64>,
    /// Per axis, per output index: `k` weights, each a value of the compute type
    /// (unused slots 0); `k · Σ out_dims` entries.
    pub weights: Vec<f64>,
}

impl ResizePlan {
    /// `Σ out_dims`: the rows of the tables.
    pub fn rows(&self) -> usize {
        self.out_dims.iter().sum()
    }

    /// The number of output elements.
    pub fn n_out(&self) -> usize {
        self.out_dims.iter().product()
    }
}

fn invalid<T>(op: &str, reason: String) -> Result<T> {
    Err(Error::InvalidArgument {
        op: op.to_string(),
        reason,
    })
}

/// `math.isclose(s, 1.0)` with its default relative tolerance 1e-9.
fn near_one(s: f64) -> bool {
    (s - 1.0).abs() <= 1e-9 * s.abs().max(1.0)
}

/// The source coordinate of output index `y` (module docs' table).
pub fn source_coord(coord: CoordMode, y: f64, s: f64, inp: usize, out: usize) -> f64 {
    let w = s * inp as f64;
    match coord {
        CoordMode::HalfPixel => (y + 0.5) / s - 0.5,
        CoordMode::PytorchHalfPixel => {
            if w == 1.0 {
                -0.5
            } else {
                (y + 0.5) / s - 0.5
            }
        }
        CoordMode::AlignCorners => {
            if w == 1.0 {
                0.0
            } else {
                y * (inp as f64 - 1.0) / (w - 1.0)
            }
        }
        CoordMode::Asymmetric => y / s,
        CoordMode::TfHalfPixelForNn => (y + 0.5) / s,
        CoordMode::HalfPixelSymmetric => {
            let adjustment = out as f64 / w;
            let center = inp as f64 / 2.0;
            let offset = center * (1.0 - adjustment);
            offset + (y + 0.5) / s - 0.5
        }
    }
}

/// The f64 coefficients of `spec` at `ratio` (in `(0, 1]`): 2 or 4 entries.
pub fn coefficients(spec: &ResizeSpec, ratio: f64) -> Vec<f64> {
    match spec.mode {
        ResizeMode::Nearest => {
            let hi = ratio == 1.0
                || match spec.nearest {
                    NearestMode::RoundPreferFloor => ratio > 0.5,
                    NearestMode::RoundPreferCeil => ratio >= 0.5,
                    NearestMode::Floor => false,
                    NearestMode::Ceil => true,
                };
            if hi { vec![0.0, 1.0] } else { vec![1.0, 0.0] }
        }
        ResizeMode::Linear => vec![1.0 - ratio, ratio],
        ResizeMode::Cubic => {
            let a = spec.cubic_a;
            let r1 = ratio + 1.0;
            let q = 1.0 - ratio;
            let q1 = q + 1.0;
            vec![
                ((a * r1 - 5.0 * a) * r1 + 8.0 * a) * r1 - 4.0 * a,
                ((a + 2.0) * ratio - (a + 3.0)) * ratio * ratio + 1.0,
                ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0,
                ((a * q1 - 5.0 * a) * q1 + 8.0 * a) * q1 - 4.0 * a,
            ]
        }
    }
}

/// The taps of output index `y` along one axis before rounding: `(index, coefficient)`
/// with the index clamped into `[0, inp − 1]` (`inp >= 1`).
pub fn axis_taps(spec: &ResizeSpec, y: usize, s: f64, inp: usize, out: usize) -> Vec<(usize, f64)> {
    let x = source_coord(spec.coord, y as f64, s, inp, out);
    let xi = x.floor();
    let ratio = if x == xi { 1.0 } else { x - xi };
    let mut c = coefficients(spec, ratio);
    let n = c.len() as i64;
    let pad = (n + 1) / 2;
    let xp = x + pad as f64;
    let p = xp.floor();
    let frac = xp - p;
    let off = if frac == 0.0 { -(n / 2) } else { -(n / 2) + 1 };
    let start = p as i64 + off - pad;
    let last = inp as i64 - 1;
    if spec.exclude_outside && spec.mode != ResizeMode::Nearest {
        for (t, v) in c.iter_mut().enumerate() {
            let i = start + t as i64;
            if i < 0 || i > last {
                *v = 0.0;
            }
        }
        let sum: f64 = c.iter().sum();
        let sum = if sum == 0.0 { 1.0 } else { sum };
        for v in c.iter_mut() {
            *v /= sum;
        }
    }
    c.iter()
        .enumerate()
        .map(|(t, &v)| ((start + t as i64).clamp(0, last) as usize, v))
        .collect()
}

/// The output extents and per-axis scales of `target` for an input `in_dims`: sizes as
/// given (scale `out / in` in f64), or `⌊in · s⌋` from scales. Builds no table.
///
/// Errors (naming `op`): [`Error::InvalidArgument`] (rank above [`MAX_RANK`], a
/// target of the wrong length, a scale not finite and positive), [`Error::Shape`] (an
/// empty input axis with a non-empty output axis), [`Error::SizeOverflow`] (an extent
/// from a scale beyond 2^53, `in · out` beyond 2^53 on an axis, or the output's
/// element count).
pub fn resize_dims(
    op: &str,
    in_dims: &[usize],
    target: ResizeTarget<'_>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let rank = in_dims.len();
    if rank > MAX_RANK {
        return invalid(op, format!("rank {rank} of {in_dims:?} above {MAX_RANK}"));
    }
    let n_target = match target {
        ResizeTarget::Sizes(v) => v.len(),
        ResizeTarget::Scales(v) => v.len(),
    };
    if n_target != rank {
        return invalid(
            op,
            format!("{n_target} sizes/scales for an input of rank {rank} ({in_dims:?})"),
        );
    }
    let mut out_dims = Vec::with_capacity(rank);
    let mut scales = Vec::with_capacity(rank);
    for a in 0..rank {
        let i = in_dims[a];
        let (o, s) = match target {
            ResizeTarget::Sizes(v) => (v[a], v[a] as f64 / i as f64),
            ResizeTarget::Scales(v) => {
                let s = v[a];
                if !(s.is_finite() && s > 0.0) {
                    return invalid(
                        op,
                        format!("scale {s} of axis {a} is not finite and positive"),
                    );
                }
                let o = (i as f64 * s).floor();
                if o >= (1u64 << 53) as f64 {
                    return Err(Error::SizeOverflow {
                        what: format!("{op}: axis {a}: {i} x scale {s}"),
                    });
                }
                (o as usize, s)
            }
        };
        if i == 0 && o > 0 {
            return Err(Error::Shape {
                op: op.to_string(),
                detail: format!(
                    "axis {a} of the input {in_dims:?} is empty and cannot fill {o} outputs"
                ),
            });
        }
        if !matches!(i.checked_mul(o).and_then(|v| v.checked_add(i + o)), Some(v) if v < 1 << 53) {
            return Err(Error::SizeOverflow {
                what: format!("{op}: axis {a}: resize {i} -> {o} (in x out must stay below 2^53)"),
            });
        }
        out_dims.push(o);
        scales.push(s);
    }
    out_dims
        .iter()
        .try_fold(1usize, |acc, &o| acc.checked_mul(o))
        .ok_or_else(|| Error::SizeOverflow {
            what: format!("{op}: output extents {out_dims:?}"),
        })?;
    Ok((out_dims, scales))
}

/// Plans a resize of an input of extents `in_dims` to `target` with `spec`, weights
/// rounded to f64 (`wide`) or f32. The tables are laid out as [`ResizePlan`] says;
/// a tap whose rounded weight is zero is dropped (not read by any backend), nearest
/// keeps its one tap of coefficient 1. The tables have `Σ out` rows, so callers check
/// the output's element count first; an output with an empty axis gets empty tables
/// (nothing is launched for it).
///
/// Errors (naming `op`): those of [`resize_dims`]; [`Error::InvalidArgument`] for a
/// non-finite `cubic_a`.
pub fn plan_resize(
    op: &str,
    in_dims: &[usize],
    target: ResizeTarget<'_>,
    spec: &ResizeSpec,
    wide: bool,
) -> Result<ResizePlan> {
    if !spec.cubic_a.is_finite() {
        return invalid(op, format!("cubic_coeff_a {} is not finite", spec.cubic_a));
    }
    let (mut out_dims, mut scales) = resize_dims(op, in_dims, target)?;
    let rank = in_dims.len();
    let empty = out_dims.contains(&0);
    let mut in_dims = in_dims.to_vec();
    if rank == 0 {
        in_dims.push(1);
        out_dims.push(1);
        scales.push(1.0);
    }
    let interp = spec.mode != ResizeMode::Nearest;
    let k = match spec.mode {
        ResizeMode::Nearest => 1,
        ResizeMode::Linear => 2,
        ResizeMode::Cubic => 4,
    };
    let round = |c: f64| if wide { c } else { c as f32 as f64 };
    if empty {
        // Nothing to launch: no tables (their rows could be many).
        return Ok(ResizePlan {
            in_dims,
            out_dims,
            k,
            interp,
            taps: Vec::new(),
            weights: Vec::new(),
        });
    }
    let rows: usize = out_dims.iter().sum();
    let mut taps = Vec::with_capacity(rows * (1 + k));
    let mut weights = Vec::with_capacity(rows * k);
    for a in 0..in_dims.len() {
        let (i, o, s) = (in_dims[a], out_dims[a], scales[a]);
        let identity = i == o && near_one(s);
        for y in 0..o {
            let mut row: Vec<(usize, f64)> = if identity {
                vec![(y, 1.0)]
            } else {
                axis_taps(spec, y, s, i, o)
                    .into_iter()
                    .map(|(t, c)| (t, round(c)))
                    .filter(|&(_, w)| w != 0.0)
                    .collect()
            };
            if row.is_empty() {
                // Every coefficient rounded to zero (a degenerate cubic_a): the first
                // tap with weight 0.
                row.push((axis_taps(spec, y, s, i, o)[0].0, 0.0));
            }
            if !interp {
                row.retain(|&(_, w)| w == 1.0);
                row.truncate(1);
            }
            taps.push(row.len() as i64);
            for slot in 0..k {
                let (t, w) = row.get(slot).copied().unwrap_or((0, 0.0));
                taps.push(t as i64);
                weights.push(w);
            }
        }
    }
    Ok(ResizePlan {
        in_dims,
        out_dims,
        k,
        interp,
        taps,
        weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mode: ResizeMode, coord: CoordMode) -> ResizeSpec {
        ResizeSpec {
            mode,
            coord,
            ..ResizeSpec::default()
        }
    }

    #[test]
    fn onnx_upsample_linear_half_pixel_taps() {
        // [1, 2] -> 4 (half_pixel): x = -0.25, 0.25, 0.75, 1.25.
        let s = spec(ResizeMode::Linear, CoordMode::HalfPixel);
        assert_eq!(axis_taps(&s, 0, 2.0, 2, 4), vec![(0, 0.25), (0, 0.75)]);
        assert_eq!(axis_taps(&s, 1, 2.0, 2, 4), vec![(0, 0.75), (1, 0.25)]);
        assert_eq!(axis_taps(&s, 3, 2.0, 2, 4), vec![(1, 0.75), (1, 0.25)]);
        // An integer coordinate puts all the weight on it (ratio 1).
        let a = spec(ResizeMode::Linear, CoordMode::Asymmetric);
        assert_eq!(axis_taps(&a, 2, 2.0, 2, 4), vec![(0, 0.0), (1, 1.0)]);
    }

    #[test]
    fn nearest_modes_round_as_named() {
        // asymmetric, scale 2/5 (sizes 5 -> 2): x = 0, 2.5.
        for (m, want) in [
            (NearestMode::RoundPreferFloor, 2),
            (NearestMode::RoundPreferCeil, 3),
            (NearestMode::Floor, 2),
            (NearestMode::Ceil, 3),
        ] {
            let s = ResizeSpec {
                nearest: m,
                ..spec(ResizeMode::Nearest, CoordMode::Asymmetric)
            };
            let p = plan_resize("t", &[5], ResizeTarget::Sizes(&[2]), &s, false).unwrap();
            assert_eq!(p.taps, vec![1, 0, 1, want], "{m:?}");
            assert_eq!(p.weights, vec![1.0, 1.0]);
        }
    }

    #[test]
    fn cubic_coefficients_sum_to_one_and_match_keys() {
        let s = spec(ResizeMode::Cubic, CoordMode::HalfPixel);
        let c = coefficients(&s, 0.5);
        // Keys with A = -0.75 at 0.5: [-0.09375, 0.59375, 0.59375, -0.09375].
        assert_eq!(c, vec![-0.09375, 0.59375, 0.59375, -0.09375]);
        let t = axis_taps(
            &ResizeSpec {
                exclude_outside: true,
                ..s
            },
            0,
            2.0,
            4,
            8,
        );
        // x = -0.25: taps -2..1, the two outside dropped and the rest renormalised.
        assert_eq!(t.iter().map(|v| v.0).collect::<Vec<_>>(), vec![0, 0, 0, 1]);
        assert_eq!(t[0].1, 0.0);
        assert_eq!(t[1].1, 0.0);
        assert!((t[2].1 + t[3].1 - 1.0).abs() < 1e-15);
    }

    #[test]
    fn plans_refuse_bad_targets() {
        let s = ResizeSpec::default();
        let e = |r: Result<ResizePlan>| r.unwrap_err().to_string();
        assert!(
            e(plan_resize(
                "t",
                &[2, 3],
                ResizeTarget::Sizes(&[2]),
                &s,
                false
            ))
            .contains("rank 2")
        );
        assert!(
            e(plan_resize(
                "t",
                &[2],
                ResizeTarget::Scales(&[0.0]),
                &s,
                false
            ))
            .contains("scale 0")
        );
        assert!(
            e(plan_resize(
                "t",
                &[2],
                ResizeTarget::Scales(&[f64::NAN]),
                &s,
                false
            ))
            .contains("scale NaN")
        );
        assert!(e(plan_resize("t", &[0], ResizeTarget::Sizes(&[3]), &s, false)).contains("empty"));
        assert!(
            e(plan_resize(
                "t",
                &[1; 9],
                ResizeTarget::Sizes(&[1; 9]),
                &s,
                false
            ))
            .contains("above 8")
        );
        // Scales give floor(in * s); an empty input to an empty output is fine.
        let p = plan_resize("t", &[3, 0], ResizeTarget::Scales(&[1.5, 2.0]), &s, false).unwrap();
        assert_eq!(p.out_dims, vec![4, 0]);
        let p = plan_resize("t", &[], ResizeTarget::Sizes(&[]), &s, false).unwrap();
        assert_eq!((p.in_dims, p.out_dims), (vec![1], vec![1]));
    }
}
