//! Accuracy, special-value and determinism tests for `gpukit_core::math`.
//!
//! Sample counts: `GPUKIT_ULP_SAMPLES` (random f32 inputs per function,
//! default 1_000_000) and `GPUKIT_ULP_SAMPLES_F64` (random f64 inputs per
//! function, default 20_000; the reference is a 192-bit big-float).
//! Run: `cargo test --release -j1 -- --nocapture`. The machinery (random inputs,
//! ulp errors, references) is in `accuracy/`, shared with `unary_accuracy.rs`.

mod accuracy;

use accuracy::*;
use astro_float::Consts;
use gpukit_core::math::*;

#[test]
fn exp_f32_accuracy() {
    let mut sp = boundaries_f32();
    sp.extend([
        88.72283,
        88.0,
        -87.33654,
        -103.27893,
        -103.97207,
        -104.0,
        1e-8,
        -1e-8,
        0.346_573_6,
    ]);
    for k in -150..=128 {
        sp.push((k as f32) * std::f32::consts::LN_2);
        sp.push((k as f32 + 0.5) * std::f32::consts::LN_2);
    }
    check_f32(
        "exp_f32",
        exp_f32,
        f64::exp,
        |x| x.abs() < 110.0,
        (-104.0, 89.0),
        &sp,
        1.0,
    );
}

#[test]
fn log_f32_accuracy() {
    let mut sp: Vec<f32> = boundaries_f32().into_iter().filter(|x| *x > 0.0).collect();
    sp.extend([
        std::f32::consts::SQRT_2,
        std::f32::consts::FRAC_1_SQRT_2,
        0.70710677,
    ]);
    sp.extend([
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        std::f32::consts::E,
    ]);
    check_f32(
        "log_f32",
        log_f32,
        f64::ln,
        |x| x > 0.0,
        (0.5, 2.0),
        &sp,
        1.0,
    );
}

#[test]
fn tanh_f32_accuracy() {
    let mut sp = boundaries_f32();
    sp.extend([0.5625, -0.5625, 9.5, -9.5, 9.0, 1e-4, 1e-20, 0.55, 0.549306]);
    check_f32(
        "tanh_f32",
        tanh_f32,
        f64::tanh,
        |x| x.abs() < 12.0,
        (-10.0, 10.0),
        &sp,
        2.0,
    );
}

#[test]
fn sigmoid_f32_accuracy() {
    let mut sp = boundaries_f32();
    sp.extend([
        18.0, -24.0, 17.3, -87.0, -103.0, -103.97207, -104.0, 1e-8, -1e-8,
    ]);
    check_f32(
        "sigmoid_f32",
        sigmoid_f32,
        sigmoid_ref_f64,
        |x| x > -110.0 && x < 25.0,
        (-110.0, 25.0),
        &sp,
        1.0,
    );
}

#[test]
fn erf_f32_accuracy() {
    let mut sp = boundaries_f32();
    sp.extend([
        0.875, -0.875, 1.5, -1.5, 2.5, -2.5, 4.0, -4.0, 3.92, 1e-4, 1e-30,
    ]);
    check_f32(
        "erf_f32",
        erf_f32,
        libm::erf,
        |x| x.abs() < 5.0,
        (-4.5, 4.5),
        &sp,
        2.0,
    );
}

#[test]
fn exp_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([
        709.782712893384,
        709.0,
        -708.3964185322641,
        -745.1332191019411,
        -744.44,
        -745.0,
        0.34657359027997264,
    ]);
    for k in -1074..=1023 {
        sp.push((k as f64) * std::f64::consts::LN_2);
    }
    check_f64(
        "exp_f64",
        exp_f64,
        ref_exp,
        |x| x > -746.0 && x <= 709.782712893384,
        (-745.2, 709.78),
        &sp,
        1.0,
    );
}

#[test]
fn log_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([
        std::f64::consts::SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
        1.0 + f64::EPSILON,
        std::f64::consts::E,
    ]);
    check_f64(
        "log_f64",
        log_f64,
        ref_log,
        |x| x > 0.0,
        (0.5, 2.0),
        &sp,
        1.0,
    );
}

#[test]
fn tanh_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([0.5625, -0.5625, 22.0, -22.0, 19.0, 1e-8, 0.5493061443340549]);
    check_f64(
        "tanh_f64",
        tanh_f64,
        ref_tanh,
        |x| x.abs() < 25.0 && x != 0.0,
        (-20.0, 20.0),
        &sp,
        2.0,
    );
}

#[test]
fn sigmoid_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([40.0, -45.0, 37.0, -708.0, -744.0, -745.1, 1e-17, -1e-17]);
    check_f64(
        "sigmoid_f64",
        sigmoid_f64,
        ref_sigmoid,
        |x| x > -745.1 && x < 45.0,
        (-745.0, 45.0),
        &sp,
        1.0,
    );
}

#[test]
fn erf_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([
        0.875, -0.875, 1.5, 2.5, 3.5, 4.5, 6.0, -6.0, 5.9, 1e-8, 1e-200,
    ]);
    check_f64(
        "erf_f64",
        erf_f64,
        ref_erf,
        |x| x.abs() < 7.0 && x != 0.0,
        (-6.5, 6.5),
        &sp,
        2.0,
    );
}

// ----------------------------------------------------------------------------
// Special values.
// ----------------------------------------------------------------------------

type Case32 = (&'static str, fn(f32) -> f32, f32, f32);
type Case64 = (&'static str, fn(f64) -> f64, f64, f64);

fn same32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}
fn same64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[test]
fn special_values_f32() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let cases: &[Case32] = &[
        ("exp", exp_f32, nan, nan),
        ("exp", exp_f32, inf, inf),
        ("exp", exp_f32, -inf, 0.0),
        ("exp", exp_f32, 0.0, 1.0),
        ("exp", exp_f32, -0.0, 1.0),
        (
            "exp",
            exp_f32,
            f32::from_bits(0x42b1_7217),
            f32::from_bits(0x7f7f_ff84),
        ),
        ("exp", exp_f32, f32::from_bits(0x42b1_7218), inf),
        (
            "exp",
            exp_f32,
            f32::from_bits(0xc2cf_f1b4),
            f32::from_bits(1),
        ),
        ("exp", exp_f32, f32::from_bits(0xc2cf_f1b5), 0.0),
        ("exp", exp_f32, -1000.0, 0.0),
        ("exp", exp_f32, 1000.0, inf),
        ("exp", exp_f32, f32::from_bits(1), 1.0),
        ("log", log_f32, nan, nan),
        ("log", log_f32, 0.0, -inf),
        ("log", log_f32, -0.0, -inf),
        ("log", log_f32, -1.0, nan),
        ("log", log_f32, -inf, nan),
        ("log", log_f32, f32::from_bits(0x8000_0001), nan),
        ("log", log_f32, inf, inf),
        ("log", log_f32, 1.0, 0.0),
        ("log", log_f32, f32::from_bits(1), -103.27893),
        ("tanh", tanh_f32, nan, nan),
        ("tanh", tanh_f32, 0.0, 0.0),
        ("tanh", tanh_f32, -0.0, -0.0),
        ("tanh", tanh_f32, inf, 1.0),
        ("tanh", tanh_f32, -inf, -1.0),
        ("tanh", tanh_f32, f32::from_bits(1), f32::from_bits(1)),
        (
            "tanh",
            tanh_f32,
            f32::from_bits(0x8000_0001),
            f32::from_bits(0x8000_0001),
        ),
        ("sigmoid", sigmoid_f32, nan, nan),
        ("sigmoid", sigmoid_f32, inf, 1.0),
        ("sigmoid", sigmoid_f32, -inf, 0.0),
        ("sigmoid", sigmoid_f32, 0.0, 0.5),
        ("sigmoid", sigmoid_f32, -0.0, 0.5),
        ("sigmoid", sigmoid_f32, -1000.0, 0.0),
        (
            "sigmoid",
            sigmoid_f32,
            f32::from_bits(0xc2cf_f1b4),
            f32::from_bits(1),
        ),
        ("erf", erf_f32, nan, nan),
        ("erf", erf_f32, 0.0, 0.0),
        ("erf", erf_f32, -0.0, -0.0),
        ("erf", erf_f32, inf, 1.0),
        ("erf", erf_f32, -inf, -1.0),
        ("erf", erf_f32, 10.0, 1.0),
    ];
    for &(name, f, x, want) in cases {
        let got = f(x);
        assert!(
            same32(got, want),
            "{name}_f32({x:e}) = {got:e} ({:#x}), want {want:e} ({:#x})",
            got.to_bits(),
            want.to_bits()
        );
    }
    // Exact results in the subnormal range (gradual underflow, no flush).
    for k in -149..=-126 {
        let x = (k as f32) * std::f32::consts::LN_2;
        let y = exp_f32(x);
        assert!(
            y > 0.0 && ulp_err_f32(y, (x as f64).exp()) <= 1.0,
            "exp_f32({x}) = {y:e}"
        );
    }
}

#[test]
fn special_values_f64() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let cases: &[Case64] = &[
        ("exp", exp_f64, nan, nan),
        ("exp", exp_f64, inf, inf),
        ("exp", exp_f64, -inf, 0.0),
        ("exp", exp_f64, 0.0, 1.0),
        ("exp", exp_f64, -0.0, 1.0),
        ("exp", exp_f64, f64::from_bits(0x4086_2e42_fefa_39f0), inf),
        (
            "exp",
            exp_f64,
            f64::from_bits(0xc087_4910_d52d_3051),
            f64::from_bits(1),
        ),
        ("exp", exp_f64, f64::from_bits(0xc087_4910_d52d_3052), 0.0),
        ("exp", exp_f64, -1e10, 0.0),
        ("exp", exp_f64, 1e10, inf),
        ("log", log_f64, nan, nan),
        ("log", log_f64, 0.0, -inf),
        ("log", log_f64, -0.0, -inf),
        ("log", log_f64, -1.0, nan),
        ("log", log_f64, -inf, nan),
        ("log", log_f64, inf, inf),
        ("log", log_f64, 1.0, 0.0),
        ("log", log_f64, f64::from_bits(1), -744.4400719213812),
        ("tanh", tanh_f64, nan, nan),
        ("tanh", tanh_f64, 0.0, 0.0),
        ("tanh", tanh_f64, -0.0, -0.0),
        ("tanh", tanh_f64, inf, 1.0),
        ("tanh", tanh_f64, -inf, -1.0),
        ("tanh", tanh_f64, f64::from_bits(1), f64::from_bits(1)),
        ("sigmoid", sigmoid_f64, nan, nan),
        ("sigmoid", sigmoid_f64, inf, 1.0),
        ("sigmoid", sigmoid_f64, -inf, 0.0),
        ("sigmoid", sigmoid_f64, 0.0, 0.5),
        ("sigmoid", sigmoid_f64, -0.0, 0.5),
        ("sigmoid", sigmoid_f64, -1e5, 0.0),
        ("erf", erf_f64, nan, nan),
        ("erf", erf_f64, 0.0, 0.0),
        ("erf", erf_f64, -0.0, -0.0),
        ("erf", erf_f64, inf, 1.0),
        ("erf", erf_f64, -inf, -1.0),
        ("erf", erf_f64, 30.0, 1.0),
    ];
    for &(name, f, x, want) in cases {
        let got = f(x);
        assert!(
            same64(got, want),
            "{name}_f64({x:e}) = {got:e} ({:#x}), want {want:e} ({:#x})",
            got.to_bits(),
            want.to_bits()
        );
    }
    let m = exp_f64(709.782712893384);
    assert!(m.is_finite() && m > 1.797e308);
    let mut cc = Consts::new().unwrap();
    for k in -1074..=-1022 {
        let x = (k as f64) * std::f64::consts::LN_2;
        let y = exp_f64(x);
        assert!(
            y > 0.0 && ulp_err_f64(y, &ref_exp(x, &mut cc)) <= 1.0,
            "exp_f64({x}) = {y:e}"
        );
    }
}

// ----------------------------------------------------------------------------
// Determinism and symmetry.
// ----------------------------------------------------------------------------

#[test]
fn deterministic_and_odd() {
    let mut rng = Rng(42);
    let f32s: [fn(f32) -> f32; 5] = [exp_f32, log_f32, tanh_f32, sigmoid_f32, erf_f32];
    let f64s: [fn(f64) -> f64; 5] = [exp_f64, log_f64, tanh_f64, sigmoid_f64, erf_f64];
    for _ in 0..100_000 {
        let b = rng.next();
        let x = f32::from_bits(b as u32);
        let y = f64::from_bits(b);
        let xs = [x, rng.uniform(-30.0, 30.0) as f32];
        let ys = [y, rng.uniform(-30.0, 30.0)];
        for f in f32s {
            for x in xs {
                assert_eq!(f(x).to_bits(), f(std::hint::black_box(x)).to_bits());
            }
        }
        for f in f64s {
            for y in ys {
                assert_eq!(f(y).to_bits(), f(std::hint::black_box(y)).to_bits());
            }
        }
        for x in xs {
            if !x.is_nan() {
                assert_eq!(tanh_f32(-x).to_bits(), (-tanh_f32(x)).to_bits());
                assert_eq!(erf_f32(-x).to_bits(), (-erf_f32(x)).to_bits());
            }
        }
        for y in ys {
            if !y.is_nan() {
                assert_eq!(tanh_f64(-y).to_bits(), (-tanh_f64(y)).to_bits());
                assert_eq!(erf_f64(-y).to_bits(), (-erf_f64(y)).to_bits());
            }
        }
    }
}
