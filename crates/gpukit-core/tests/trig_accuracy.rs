//! Accuracy of gpukit's portable `sin` and `cos` (`gpukit_core::math::{sin, cos}_*`),
//! measured like the other portable functions (`math_accuracy.rs`): f32 against the
//! platform's f64 `sin`/`cos` (accurate to about 1 f64 ulp, i.e. 2^-29 f32 ulp), f64
//! against astro-float at 1400 bits (enough to reduce the largest f64 exactly), on
//! specials and their neighbours, random bit patterns over the whole finite range and
//! a core range. The bounds asserted are the ones docs/numerics.md states.
//!
//! With `GPUKIT_VMATH_EXHAUSTIVE=1` (and `GPUKIT_VMATH_EXHAUSTIVE_FNS=sin,cos` to pick)
//! the f32 functions are also checked over all 2^32 inputs against the correctly
//! rounded result: the f64 reference decides, except within 2^-24 f32 ulp of a
//! rounding boundary, where astro-float at 512 bits decides. Reproduce the table with
//! `GPUKIT_ULP_SAMPLES=10000000 GPUKIT_ULP_SAMPLES_F64=200000 cargo test --release
//! -p gpukit-core --test trig_accuracy -- --nocapture`.

mod accuracy;

use accuracy::*;
use astro_float::{BigFloat, Consts};
use gpukit_core::math::{cos_f32, cos_f64, sin_f32, sin_f64};

/// Precision of the f64 references: a 1024-bit integer part plus 376 bits.
const REF_PREC: usize = 1400;

fn ref_sin(x: f64, cc: &mut Consts) -> BigFloat {
    bf_p(x, REF_PREC).sin(REF_PREC, RM, cc)
}

fn ref_cos(x: f64, cc: &mut Consts) -> BigFloat {
    bf_p(x, REF_PREC).cos(REF_PREC, RM, cc)
}

fn specials_f32() -> Vec<f32> {
    let mut v = boundaries_f32();
    v.extend([
        std::f32::consts::FRAC_PI_4,
        std::f32::consts::FRAC_PI_2,
        std::f32::consts::PI,
        -std::f32::consts::PI,
        1e-4,
        3.0e38,
        f32::MAX,
        16777216.0,
        // Close to multiples of pi/2 (a few of the closest f32 values).
        f32::from_bits(0x5922_aa80),
        f32::from_bits(0x4b7c_e56a),
        f32::from_bits(0x7a69_31a2),
    ]);
    v
}

fn specials_f64() -> Vec<f64> {
    let mut v = boundaries_f64();
    v.extend([
        std::f64::consts::FRAC_PI_4,
        0.785,
        f64::from_bits(0.785f64.to_bits() + 1),
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        7.450580596923828e-9,
        1e22,
        1e300,
        f64::MAX,
        // Muller's worst case for argument reduction in binary64.
        6381956970095103.0 * 2f64.powi(797),
        // 2^54 and 2^80: the first chunk skips (i0 = 0 -> 1).
        18014398509481984.0,
        1.2089258196146292e24,
    ]);
    v
}

#[test]
fn sin_f32_accuracy() {
    check_f32(
        "sin_f32",
        sin_f32,
        f64::sin,
        |_| true,
        (-10.0, 10.0),
        &specials_f32(),
        0.501,
    );
}

#[test]
fn cos_f32_accuracy() {
    check_f32(
        "cos_f32",
        cos_f32,
        f64::cos,
        |_| true,
        (-10.0, 10.0),
        &specials_f32(),
        0.501,
    );
}

#[test]
fn sin_f64_accuracy() {
    check_f64(
        "sin_f64",
        sin_f64,
        ref_sin,
        |_| true,
        (-10.0, 10.0),
        &specials_f64(),
        1.0,
    );
}

#[test]
fn cos_f64_accuracy() {
    check_f64(
        "cos_f64",
        cos_f64,
        ref_cos,
        |_| true,
        (-10.0, 10.0),
        &specials_f64(),
        1.0,
    );
}

/// Whether the exhaustive check of `name` runs (`GPUKIT_VMATH_EXHAUSTIVE=1`, and
/// `name` in `GPUKIT_VMATH_EXHAUSTIVE_FNS` when that is set).
fn exhaustive_wanted(name: &str) -> bool {
    if std::env::var("GPUKIT_VMATH_EXHAUSTIVE").as_deref() != Ok("1") {
        return false;
    }
    match std::env::var("GPUKIT_VMATH_EXHAUSTIVE_FNS") {
        Ok(list) => list.split(',').any(|f| f.trim() == name),
        Err(_) => true,
    }
}

/// The correctly rounded f32 of `f(x)` when the f64 reference is too close to a
/// rounding boundary to decide: astro-float at 512 bits.
fn cr_slow(x: f32, cos: bool) -> f32 {
    let mut cc = Consts::new().unwrap();
    let b = bf_p(x as f64, 512);
    let r = if cos {
        b.cos(512, RM, &mut cc)
    } else {
        b.sin(512, RM, &mut cc)
    };
    let (hi, lo) = dd(&r);
    // hi + lo carries 106 bits: enough to round to 24 unless exactly a midpoint,
    // which sin/cos of a nonzero float never are.
    let h = hi as f32;
    let mid = |a: f32, b: f32| (a as f64 + b as f64) * 0.5;
    let up = f32::from_bits(h.to_bits() + 1);
    let dn = f32::from_bits(h.to_bits() - 1);
    let v = hi + lo;
    if (v - h as f64).abs()
        <= (mid(h, up) - h as f64)
            .abs()
            .min((h as f64 - mid(h, dn)).abs())
    {
        h
    } else if (v - up as f64).abs() < (v - dn as f64).abs() {
        up
    } else {
        dn
    }
}

/// All 2^32 inputs of one function: max error in ulps and the number of results
/// that are not the correctly rounded value.
fn exhaustive(name: &str, f: fn(f32) -> f32, r: fn(f64) -> f64, cos: bool) {
    if !exhaustive_wanted(name) {
        eprintln!("{name}: exhaustive check skipped (GPUKIT_VMATH_EXHAUSTIVE=1 runs it)");
        return;
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let per = (1u64 << 32) / threads as u64;
    let results: Vec<(f64, u32, u64, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads as u64)
            .map(|t| {
                s.spawn(move || {
                    let (mut max, mut arg, mut not_cr, mut slow) = (0.0f64, 0u32, 0u64, 0u64);
                    let end = if t + 1 == threads as u64 {
                        1u64 << 32
                    } else {
                        (t + 1) * per
                    };
                    for b in t * per..end {
                        let x = f32::from_bits(b as u32);
                        let got = f(x);
                        let rf = r(x as f64);
                        if !x.is_finite() {
                            assert!(got.is_nan(), "{name}({x}) = {got}");
                            continue;
                        }
                        let e = ulp_err_f32(got, rf);
                        if e > max {
                            max = e;
                            arg = b as u32;
                        }
                        // Correct rounding: decided by the f64 reference unless it
                        // lies within 2^-24 ulp of the half-way point.
                        let frac = ((rf - got as f64).abs() / ulp_f32_at(rf)).fract();
                        let near_mid = (frac - 0.5).abs() < 6e-8;
                        let cr = if near_mid || e > 0.49 {
                            slow += 1;
                            cr_slow(x, cos)
                        } else {
                            rf as f32
                        };
                        if got.to_bits() != cr.to_bits() && !(got == 0.0 && cr == 0.0) {
                            not_cr += 1;
                        }
                    }
                    (max, arg, not_cr, slow)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (max, arg) = results.iter().fold(
        (0.0f64, 0u32),
        |m, r| if r.0 > m.0 { (r.0, r.1) } else { m },
    );
    let not_cr: u64 = results.iter().map(|r| r.2).sum();
    let slow: u64 = results.iter().map(|r| r.3).sum();
    println!(
        "{name}: all 2^32 inputs: max err {max:.6} ulp at {:e} ({arg:#010x}); {not_cr} not \
         correctly rounded ({slow} decided at 512 bits)",
        f32::from_bits(arg)
    );
    assert!(max <= 0.501, "{name}: {max} ulp");
}

#[test]
fn sin_f32_exhaustive() {
    exhaustive("sin", sin_f32, f64::sin, false);
}

#[test]
fn cos_f32_exhaustive() {
    exhaustive("cos", cos_f32, f64::cos, true);
}
