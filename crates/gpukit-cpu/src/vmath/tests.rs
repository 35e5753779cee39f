//! Bit-equality of the lane forms with the scalar functions.

use super::*;
use gpukit_core::math;

/// Inputs: specials, boundaries with neighbours, random bit patterns.
pub(crate) fn inputs_f32(random: usize) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
    ];
    let bounds: [f32; 23] = [
        f32::from_bits(0x0080_0000),
        f32::from_bits(0x3f35_04f3),
        1.0,
        4.5,
        6.0,
        std::f32::consts::FRAC_1_SQRT_2,
        f32::from_bits(0x42b1_7217),
        f32::from_bits(0xc2cf_f1b4),
        -87.33655,
        -103.27893,
        0.5625,
        9.5,
        18.0,
        -24.0,
        0.875,
        1.5,
        2.5,
        3.25,
        4.0,
        0.3465736,
        88.0,
        -88.0,
        // softplus: exp(-x) <= 2^-24, where 1 + exp(-x) rounds to 1 (24 ln 2).
        16.635532,
    ];
    for b in bounds {
        for d in -8i32..=8 {
            for s in [b, -b] {
                v.push(f32::from_bits((s.to_bits() as i32).wrapping_add(d) as u32));
            }
        }
    }
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..random {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.push(if i % 2 == 0 {
            f32::from_bits(s as u32)
        } else {
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 240.0 - 120.0
        });
    }
    v
}

pub(crate) fn inputs_f64(random: usize) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
    ];
    let bounds: [f64; 20] = [
        f64::from_bits(0x0010_0000_0000_0000),
        f64::from_bits(0x3fe6_a09e_667f_3bcd),
        1.0,
        std::f64::consts::FRAC_1_SQRT_2,
        -40.0,
        f64::from_bits(0x4086_2e42_fefa_39ef),
        f64::from_bits(0xc087_4910_d52d_3051),
        -708.3964185322641,
        -745.0,
        0.5625,
        22.0,
        40.0,
        -45.0,
        0.875,
        1.5,
        2.5,
        3.5,
        4.5,
        6.0,
        // softplus: 53 ln 2, where 1 + exp(-x) rounds to 1.
        36.7368005696771,
    ];
    for b in bounds {
        for d in -4i64..=4 {
            for s in [b, -b] {
                v.push(f64::from_bits((s.to_bits() as i64).wrapping_add(d) as u64));
            }
        }
    }
    let mut s = 0x2545_f491_4f6c_dd1du64;
    for i in 0..random {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.push(if i % 2 == 0 {
            f64::from_bits(s)
        } else {
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 1600.0 - 800.0
        });
    }
    v
}

pub(crate) fn same32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

pub(crate) fn same64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

/// Every input through the lane form, in a loop compiled at every SIMD level the
/// CPU has, against the scalar function.
pub(crate) fn check32(name: &str, lane: impl Fn(f32) -> f32 + Copy, scalar: fn(f32) -> f32) {
    let xs = inputs_f32(200_000);
    for level in crate::kernels::simd::levels() {
        let mut out = xs.clone();
        crate::kernels::simd::run_at(
            level,
            #[inline(always)]
            || {
                for v in out.iter_mut() {
                    *v = lane(*v);
                }
            },
        );
        for (&x, &y) in xs.iter().zip(&out) {
            let want = scalar(x);
            assert!(
                same32(y, want),
                "{name} f32 at {level:?}: x = {x:e} ({:#010x}): lane {y:e} ({:#010x}), scalar {want:e} ({:#010x})",
                x.to_bits(),
                y.to_bits(),
                want.to_bits()
            );
        }
    }
}

pub(crate) fn check64(name: &str, lane: impl Fn(f64) -> f64 + Copy, scalar: fn(f64) -> f64) {
    let xs = inputs_f64(100_000);
    for level in crate::kernels::simd::levels() {
        let mut out = xs.clone();
        crate::kernels::simd::run_at(
            level,
            #[inline(always)]
            || {
                for v in out.iter_mut() {
                    *v = lane(*v);
                }
            },
        );
        for (&x, &y) in xs.iter().zip(&out) {
            let want = scalar(x);
            assert!(
                same64(y, want),
                "{name} f64 at {level:?}: x = {x:e} ({:#018x}): lane {y:e}, scalar {want:e}",
                x.to_bits()
            );
        }
    }
}

#[test]
fn exp_lane_matches_scalar() {
    check32("exp", exp_f32, math::exp_f32);
    check64("exp", exp_f64, math::exp_f64);
}

#[test]
fn log_lane_matches_scalar() {
    check32("log", log_f32, math::log_f32);
    check64("log", log_f64, math::log_f64);
}

#[test]
fn tanh_lane_matches_scalar() {
    check32("tanh", tanh_f32, math::tanh_f32);
    check64("tanh", tanh_f64, math::tanh_f64);
}

#[test]
fn sigmoid_lane_matches_scalar() {
    check32("sigmoid", sigmoid_f32, math::sigmoid_f32);
    check64("sigmoid", sigmoid_f64, math::sigmoid_f64);
}

#[test]
fn erf_lane_matches_scalar() {
    check32("erf", erf_f32, math::erf_f32);
    check64("erf", erf_f64, math::erf_f64);
}

#[test]
fn silu_lane_matches_scalar() {
    use gpukit_core::numeric::silu;
    check32("silu", |x: f32| x.silu_l(), silu::<f32>);
    check64("silu", |x: f64| x.silu_l(), silu::<f64>);
}

#[test]
fn softplus_lane_matches_scalar() {
    use gpukit_core::numeric::softplus;
    check32("softplus", |x: f32| x.softplus_l(), softplus::<f32>);
    check64("softplus", |x: f64| x.softplus_l(), softplus::<f64>);
}

#[test]
fn sin_cos_lane_matches_scalar() {
    check32("sin", |x: f32| x.sin_l(), math::sin_f32);
    check64("sin", |x: f64| x.sin_l(), math::sin_f64);
    check32("cos", |x: f32| x.cos_l(), math::cos_f32);
    check64("cos", |x: f64| x.cos_l(), math::cos_f64);
}

/// Whether the exhaustive tests run (`GPUKIT_VMATH_EXHAUSTIVE=1`), and for `name`
/// (`GPUKIT_VMATH_EXHAUSTIVE_FNS=exp,erf` picks functions; all when unset).
pub(crate) fn exhaustive_wanted(name: &str) -> bool {
    if std::env::var("GPUKIT_VMATH_EXHAUSTIVE").as_deref() != Ok("1") {
        return false;
    }
    match std::env::var("GPUKIT_VMATH_EXHAUSTIVE_FNS") {
        Ok(o) => o.split(',').any(|f| f.trim() == name),
        Err(_) => true,
    }
}

/// The levels above scalar this CPU has.
fn simd_levels() -> Vec<crate::kernels::simd::SimdLevel> {
    let mut v = crate::kernels::simd::levels();
    v.retain(|&l| l != crate::kernels::simd::SimdLevel::Scalar);
    v
}

/// Every f32 input (2^32 of them), in blocks of 2^20 on rayon's threads: `check(xs,
/// want)` gets a block and `scalar`'s values for it (computed in a loop compiled for the
/// detected level) and returns how many of its candidate's values differ. Returns the
/// total.
pub(crate) fn sweep_all_f32(
    scalar: impl Fn(f32) -> f32 + Copy + Sync,
    check: impl Fn(&[f32], &[f32]) -> u64 + Sync,
) -> u64 {
    use rayon::prelude::*;
    const BLOCK: u64 = 1 << 20;
    (0..(1u64 << 32) / BLOCK)
        .into_par_iter()
        .map(|b| {
            let xs: Vec<f32> = (b * BLOCK..(b + 1) * BLOCK)
                .map(|i| f32::from_bits(i as u32))
                .collect();
            let mut want = xs.clone();
            crate::kernels::simd::dispatch(
                #[inline(always)]
                || want.iter_mut().for_each(|v| *v = scalar(*v)),
            );
            check(&xs, &want)
        })
        .sum()
}

/// Every f32 input (2^32 of them) through `lane` at every SIMD level, against `scalar`
/// (both inlined into loops compiled for the level).
pub(crate) fn exhaustive32(
    name: &str,
    lane: impl Fn(f32) -> f32 + Copy + Sync,
    scalar: impl Fn(f32) -> f32 + Copy + Sync,
) {
    let t = std::time::Instant::now();
    let bad = sweep_all_f32(scalar, |xs, want| {
        let mut bad = 0u64;
        // The SIMD levels (the scalar level runs the same Rust code without
        // vectorisation, with the library fma: covered by the sampled tests, and
        // hours to run over 2^32 inputs).
        for level in simd_levels() {
            let mut out = xs.to_vec();
            crate::kernels::simd::run_at(
                level,
                #[inline(always)]
                || out.iter_mut().for_each(|v| *v = lane(*v)),
            );
            for ((&x, &y), &w) in xs.iter().zip(&out).zip(want) {
                if !same32(y, w) {
                    if bad == 0 {
                        eprintln!(
                            "{name} at {level:?}: x = {:#010x}: lane {:#010x}, scalar {:#010x}",
                            x.to_bits(),
                            y.to_bits(),
                            w.to_bits()
                        );
                    }
                    bad += 1;
                }
            }
        }
        bad
    });
    eprintln!(
        "exhaustive {name}: {bad} mismatches over 2^32 inputs at {:?}, {:.0} s",
        simd_levels(),
        t.elapsed().as_secs_f64()
    );
    assert_eq!(bad, 0, "{name}: {bad} mismatching inputs");
}

/// How many of `got` differ from `want` (any NaN equals any NaN).
pub(crate) fn mismatches32(got: &[f32], want: &[f32]) -> u64 {
    got.iter()
        .zip(want)
        .filter(|&(&y, &w)| !same32(y, w))
        .count() as u64
}

/// All 2^32 f32 inputs of each function, only with `GPUKIT_VMATH_EXHAUSTIVE=1`
/// (minutes per function).
#[test]
fn exhaustive_f32_when_asked() {
    if exhaustive_wanted("exp") {
        exhaustive32("exp", exp_f32, math::exp_f32);
    }
    if exhaustive_wanted("log") {
        exhaustive32("log", log_f32, math::log_f32);
    }
    if exhaustive_wanted("tanh") {
        exhaustive32("tanh", tanh_f32, math::tanh_f32);
    }
    if exhaustive_wanted("sigmoid") {
        exhaustive32("sigmoid", sigmoid_f32, math::sigmoid_f32);
    }
    if exhaustive_wanted("erf") {
        exhaustive32("erf", erf_f32, math::erf_f32);
    }
    if exhaustive_wanted("silu") {
        exhaustive32(
            "silu",
            |x: f32| x.silu_l(),
            gpukit_core::numeric::silu::<f32>,
        );
    }
    if exhaustive_wanted("softplus") {
        exhaustive32(
            "softplus",
            |x: f32| x.softplus_l(),
            gpukit_core::numeric::softplus::<f32>,
        );
    }
    if exhaustive_wanted("sin") {
        exhaustive32("sin", |x: f32| x.sin_l(), math::sin_f32);
    }
    if exhaustive_wanted("cos") {
        exhaustive32("cos", |x: f32| x.cos_l(), math::cos_f32);
    }
}

#[test]
fn max_nan_lane_matches_scalar() {
    use gpukit_core::numeric::max_nan;
    let xs = inputs_f32(2000);
    for level in crate::kernels::simd::levels() {
        for &b in xs.iter().step_by(7) {
            let mut out = xs.clone();
            crate::kernels::simd::run_at(
                level,
                #[inline(always)]
                || out.iter_mut().for_each(|v| *v = v.max_nan_l(b)),
            );
            for (&a, &y) in xs.iter().zip(&out) {
                let w = max_nan(a, b);
                assert!(
                    y.to_bits() == w.to_bits(),
                    "max_nan({a:e}, {b:e}) at {level:?}: {y:e} vs {w:e}"
                );
            }
        }
    }
    let ys = inputs_f64(500);
    for &b in ys.iter().step_by(5) {
        for &a in &ys {
            assert_eq!(a.max_nan_l(b).to_bits(), max_nan(a, b).to_bits());
        }
    }
}
