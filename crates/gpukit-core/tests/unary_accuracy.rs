//! Accuracy of the composite unary maps of `gpukit_core::numeric` (`rsqrt`, `silu`,
//! `softplus`), measured like the portable functions in `math_accuracy.rs`: f32
//! results against an f64 evaluation of the definition, f64 results against a 192-bit
//! big-float, on specials and their neighbours, random bit patterns and a core range.
//! The bounds asserted here are the ones docs/numerics.md states.
//!
//! Sample counts: `GPUKIT_ULP_SAMPLES` / `GPUKIT_ULP_SAMPLES_F64` as in
//! `math_accuracy.rs`. Reproduce the table with
//! `GPUKIT_ULP_SAMPLES=10000000 GPUKIT_ULP_SAMPLES_F64=200000 cargo test --release
//! -p gpukit-core --test unary_accuracy -- --nocapture`.

mod accuracy;

use accuracy::*;
use astro_float::{BigFloat, Consts};
use gpukit_core::numeric::{abs, neg, rsqrt, silu, softplus};

// ----------------------------------------------------------------------------
// References.
// ----------------------------------------------------------------------------

/// `log(1 + exp(x))` in f64 without overflow or cancellation (log1p of `exp(-|x|)`).
fn softplus_ref_f64(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// `x * sigmoid(x)` in f64; `-inf` gives the limit `-0.0`, as the contract defines.
fn silu_ref_f64(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        -0.0
    } else {
        x * sigmoid_ref_f64(x)
    }
}

fn rsqrt_ref_f64(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// `log(1 + u)` for `0 <= u <= 1` at 192 bits: the series `u - u²/2 + u³/3` where `u` is
/// far below the precision (where `1 + u` would round to 1), `ln(1 + u)` otherwise.
fn big_log1p(u: &BigFloat, cc: &mut Consts) -> BigFloat {
    let tiny = u.is_zero() || u.exponent().is_some_and(|e| (e as i64) < -80);
    if tiny {
        let u2 = u.mul(u, PREC, RM);
        let u3 = u2.mul(u, PREC, RM);
        u.sub(&u2.div(&bf(2.0), PREC, RM), PREC, RM)
            .add(&u3.div(&bf(3.0), PREC, RM), PREC, RM)
    } else {
        bf(1.0).add(u, PREC, RM).ln(PREC, RM, cc)
    }
}

fn ref_softplus(x: f64, cc: &mut Consts) -> BigFloat {
    let a = bf(x.abs());
    let u = a.neg().exp(PREC, RM, cc);
    let l = big_log1p(&u, cc);
    if x > 0.0 { bf(x).add(&l, PREC, RM) } else { l }
}

fn ref_silu(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).mul(&ref_sigmoid(x, cc), PREC, RM)
}

fn ref_rsqrt(x: f64, _cc: &mut Consts) -> BigFloat {
    bf(1.0).div(&bf(x).sqrt(PREC, RM), PREC, RM)
}

// ----------------------------------------------------------------------------
// f32
// ----------------------------------------------------------------------------

#[test]
fn softplus_f32_accuracy() {
    let mut sp = boundaries_f32();
    // The w == 1 switch (24 ln 2), the x > 0 switch, exp's underflow and subnormal
    // range (the result is exp(x) there), large positive x.
    sp.extend([
        16.635532, -16.635532, 1e-8, -1e-8, 20.0, -20.0, -87.33654, -103.27893, -103.97207, -104.0,
        88.72283, 1e30,
    ]);
    check_f32(
        "softplus_f32",
        softplus::<f32>,
        softplus_ref_f64,
        |x| x > -110.0,
        (-110.0, 40.0),
        &sp,
        3.0,
    );
}

#[test]
fn silu_f32_accuracy_outside_the_subnormal_sigmoid_tail() {
    // Where sigmoid(x) is normal (x >= -87.3), x * sigmoid(x) errs by sigmoid's error
    // plus one rounding.
    let mut sp = boundaries_f32();
    sp.extend([18.0, -24.0, 17.3, -87.0, -80.0, 1e-8, -1e-8]);
    check_f32(
        "silu_f32",
        silu::<f32>,
        silu_ref_f64,
        |x| x >= -87.0,
        (-87.0, 40.0),
        &sp,
        2.0,
    );
}

#[test]
fn silu_f32_tail_where_sigmoid_is_subnormal() {
    // sigmoid(x) = exp(x) is subnormal below -87.34: its absolute error (half a
    // subnormal ulp) is multiplied by |x| in a product that may be normal, so the
    // error in the product's ulps grows to about |x| / 2. Measured and bounded here;
    // docs/numerics.md states it.
    check_f32(
        "silu_f32_tail",
        silu::<f32>,
        silu_ref_f64,
        |x| (-110.0..-87.0).contains(&x),
        (-110.0, -87.0),
        &[-87.33654, -90.0, -100.0, -103.27893, -103.97207, -104.0],
        64.0,
    );
}

#[test]
fn rsqrt_f32_accuracy() {
    let sp: Vec<f32> = boundaries_f32().into_iter().filter(|&x| x > 0.0).collect();
    check_f32(
        "rsqrt_f32",
        rsqrt::<f32>,
        rsqrt_ref_f64,
        |x| x > 0.0,
        (0.25, 4.0),
        &sp,
        2.0,
    );
}

// ----------------------------------------------------------------------------
// f64
// ----------------------------------------------------------------------------

#[test]
fn softplus_f64_accuracy() {
    let mut sp = boundaries_f64();
    sp.extend([
        36.7368005696771,
        -36.7368005696771,
        1e-17,
        -1e-17,
        -708.3964185322641,
        -745.1332191019411,
        -744.44,
        709.0,
    ]);
    check_f64(
        "softplus_f64",
        softplus::<f64>,
        ref_softplus,
        |x| x > -746.0 && x < 1e300,
        (-746.0, 60.0),
        &sp,
        3.0,
    );
}

#[test]
fn silu_f64_accuracy_outside_the_subnormal_sigmoid_tail() {
    let mut sp = boundaries_f64();
    sp.extend([40.0, -45.0, 37.0, -700.0, 1e-17, -1e-17]);
    check_f64(
        "silu_f64",
        silu::<f64>,
        ref_silu,
        |x| (-708.0..1e300).contains(&x),
        (-708.0, 60.0),
        &sp,
        2.0,
    );
}

#[test]
fn silu_f64_tail_where_sigmoid_is_subnormal() {
    // As in f32: below -708.4 sigmoid(x) = exp(x) is subnormal and the product's error
    // grows to about |x| / 2 of its ulps.
    check_f64(
        "silu_f64_tail",
        silu::<f64>,
        ref_silu,
        |x| (-745.0..-708.0).contains(&x),
        (-745.0, -708.0),
        &[-708.3964185322641, -720.0, -740.0],
        512.0,
    );
}

#[test]
fn rsqrt_f64_accuracy() {
    let sp: Vec<f64> = boundaries_f64().into_iter().filter(|&x| x > 0.0).collect();
    check_f64(
        "rsqrt_f64",
        rsqrt::<f64>,
        ref_rsqrt,
        |x| x > 0.0,
        (0.25, 4.0),
        &sp,
        2.0,
    );
}

// ----------------------------------------------------------------------------
// Exact maps and specials.
// ----------------------------------------------------------------------------

#[test]
fn abs_and_neg_touch_only_the_sign_bit() {
    let mut rng = Rng(7);
    for _ in 0..100_000 {
        let b = rng.next();
        let (x, y) = (f32::from_bits(b as u32), f64::from_bits(b));
        assert_eq!(abs(x).to_bits(), x.to_bits() & 0x7fff_ffff);
        assert_eq!(neg(x).to_bits(), x.to_bits() ^ 0x8000_0000);
        assert_eq!(abs(y).to_bits(), y.to_bits() & !(1u64 << 63));
        assert_eq!(neg(y).to_bits(), y.to_bits() ^ (1u64 << 63));
    }
}

#[test]
fn specials() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let same = |a: f32, b: f32| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
    /// A map's name, the map, an input, the expected result.
    type Case = (&'static str, fn(f32) -> f32, f32, f32);
    let cases: &[Case] = &[
        ("rsqrt", rsqrt::<f32>, 0.0, inf),
        ("rsqrt", rsqrt::<f32>, -0.0, -inf),
        ("rsqrt", rsqrt::<f32>, inf, 0.0),
        ("rsqrt", rsqrt::<f32>, -1.0, nan),
        ("rsqrt", rsqrt::<f32>, -inf, nan),
        ("rsqrt", rsqrt::<f32>, 4.0, 0.5),
        ("silu", silu::<f32>, -inf, -0.0),
        ("silu", silu::<f32>, inf, inf),
        ("silu", silu::<f32>, 0.0, 0.0),
        ("silu", silu::<f32>, -0.0, -0.0),
        ("silu", silu::<f32>, nan, nan),
        ("silu", silu::<f32>, -200.0, -0.0),
        ("softplus", softplus::<f32>, inf, inf),
        ("softplus", softplus::<f32>, -inf, 0.0),
        ("softplus", softplus::<f32>, nan, nan),
        ("softplus", softplus::<f32>, 100.0, 100.0),
        ("softplus", softplus::<f32>, -200.0, 0.0),
        ("softplus", softplus::<f32>, f32::MAX, f32::MAX),
    ];
    for &(name, f, x, want) in cases {
        assert!(
            same(f(x), want),
            "{name}({x:e}) = {:e}, want {want:e}",
            f(x)
        );
    }
    // softplus(±0) = log(2) (f32: 0x3f317218 is ln 2 rounded).
    assert_eq!(softplus(0.0f32).to_bits(), 0x3f31_7218);
    assert_eq!(softplus(-0.0f32).to_bits(), 0x3f31_7218);
    // Below 24 ln 2 under zero, 1 + exp(x) rounds to 1 and softplus(x) is exp(x) itself,
    // into the subnormals.
    for x in [-17.0f32, -50.0, -90.0, -100.0, -103.0] {
        assert_eq!(
            softplus(x).to_bits(),
            gpukit_core::math::exp_f32(x).to_bits()
        );
    }
    for x in [-37.0f64, -300.0, -720.0, -744.0] {
        assert_eq!(
            softplus(x).to_bits(),
            gpukit_core::math::exp_f64(x).to_bits()
        );
    }
    assert_eq!(softplus(f64::NEG_INFINITY).to_bits(), 0);
    assert_eq!(silu(f64::NEG_INFINITY).to_bits(), (-0.0f64).to_bits());
    assert_eq!(rsqrt(-0.0f64), f64::NEG_INFINITY);
}

/// rsqrt is two roundings, not the correctly rounded `1/√x`: some inputs prove it.
#[test]
fn rsqrt_is_sqrt_then_divide() {
    let mut found = 0;
    let mut x = 1.0f32;
    while x < 4.0 {
        let two = 1.0f32 / x.sqrt();
        assert_eq!(rsqrt(x).to_bits(), two.to_bits());
        let exact = (1.0f64 / (x as f64).sqrt()) as f32;
        if exact != two {
            found += 1;
        }
        x = f32::from_bits(x.to_bits() + 977);
    }
    assert!(found > 0, "no input where the two roundings differ");
}
