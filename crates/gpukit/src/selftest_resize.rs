//! Self-checks of the general resize (`resize`): at each dtype a few shapes, targets and
//! modes (every coordinate mode and nearest mode; linear and cubic on floats) of one
//! random tensor (NaN, ±inf, -0.0 and subnormals among the float values), compared bit
//! for bit with the reference oracle (which finds its taps itself).

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops::{self, CoordMode, NearestMode, ResizeMode, ResizeSpec, ResizeTarget};
use crate::selftest_common::{Check, Rng, mismatch, rand_vec};

/// `(dims, sizes)` of the cases: NCHW up and down, a 3-D tensor with every axis
/// resized, a size-1 axis both ways.
const CASES: &[(&[usize], &[usize])] = &[
    (&[2, 3, 5, 4], &[2, 3, 9, 3]),
    (&[3, 4, 2], &[5, 2, 7]),
    (&[1, 6, 1], &[3, 1, 4]),
];

fn specs(float: bool) -> Vec<ResizeSpec> {
    let mut v = Vec::new();
    for (i, coord) in CoordMode::ALL.into_iter().enumerate() {
        v.push(ResizeSpec {
            mode: ResizeMode::Nearest,
            coord,
            nearest: NearestMode::ALL[i % 4],
            ..ResizeSpec::default()
        });
        if float {
            for mode in [ResizeMode::Linear, ResizeMode::Cubic] {
                v.push(ResizeSpec {
                    mode,
                    coord,
                    exclude_outside: i % 2 == 1,
                    cubic_a: -0.5 - 0.05 * i as f64,
                    ..ResizeSpec::default()
                });
            }
        }
    }
    v
}

fn run_case<T: Element>(
    kit: &Kit,
    rng: &mut Rng,
    oracle: impl Fn(&[T], &[usize], ResizeTarget<'_>, &ResizeSpec) -> Vec<T>,
) -> Result<Option<String>> {
    for &(dims, sizes) in CASES {
        let x = rand_vec::<T>(rng, dims.iter().product());
        let bx = kit.upload(&x)?;
        let out = kit.alloc(T::DTYPE, sizes.iter().product())?;
        let scales: Vec<f64> = dims
            .iter()
            .zip(sizes)
            .map(|(&i, &o)| (o as f32 / i as f32) as f64)
            .collect();
        for s in specs(T::DTYPE.is_float()) {
            for t in [ResizeTarget::Sizes(sizes), ResizeTarget::Scales(&scales)] {
                let n: usize = ops::resize_out_dims(dims, t)?.iter().product();
                if n != out.len() {
                    continue; // a scale whose floor loses an element
                }
                ops::resize(kit, &out, &bx, dims, t, &s)?;
                let want = oracle(&x, dims, t, &s);
                if let Some(m) = mismatch(&out.download::<T>()?, &want) {
                    return Ok(Some(format!("{dims:?} to {t:?} with {s:?}: {m}")));
                }
            }
        }
    }
    Ok(None)
}

fn resize_float<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x7e);
    run_case::<T>(kit, &mut rng, |x, d, t, s| reference::resize_nd(x, d, t, s))
}

fn resize_int<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x7e);
    run_case::<T>(kit, &mut rng, |x, d, t, s| {
        reference::resize_nearest_nd(x, d, t, s)
    })
}

/// The group's checks, in a fixed order (one per dtype of `resize`).
pub(crate) fn checks() -> Vec<Check> {
    let c = |dtype, run| Check {
        op: "resize",
        dtype,
        run,
    };
    vec![
        c(DType::F32, resize_float::<f32>),
        c(DType::F64, resize_float::<f64>),
        c(DType::F16, resize_float::<f16>),
        c(DType::BF16, resize_float::<bf16>),
        c(DType::I64, resize_int::<i64>),
        c(DType::I32, resize_int::<i32>),
    ]
}
