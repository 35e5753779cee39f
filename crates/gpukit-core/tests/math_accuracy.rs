//! Accuracy, special-value and determinism tests for `gpukit_core::math`.
//!
//! Sample counts: `GPUKIT_ULP_SAMPLES` (random f32 inputs per function,
//! default 1_000_000) and `GPUKIT_ULP_SAMPLES_F64` (random f64 inputs per
//! function, default 20_000; the reference is a 192-bit big-float).
//! Run: `cargo test --release -j1 -- --nocapture`.

use astro_float::{BigFloat, Consts, RoundingMode};
use gpukit_core::math::*;

const RM: RoundingMode = RoundingMode::ToEven;
const PREC: usize = 192;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn n_f32() -> usize {
    env_count("GPUKIT_ULP_SAMPLES", 1_000_000)
}

fn n_f64() -> usize {
    env_count("GPUKIT_ULP_SAMPLES_F64", 20_000)
}

/// SplitMix64: deterministic, dependency-free random numbers.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }
    fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
}

fn pow2(e: i32) -> f64 {
    // exact power of two, also for subnormal / large exponents
    let mut r = 1.0f64;
    let mut e = e;
    while e > 1000 {
        r *= f64::from_bits(2000u64 << 52); // 2^977
        e -= 977;
    }
    while e < -1000 {
        r *= f64::from_bits(46u64 << 52); // 2^-977
        e += 977;
    }
    r * f64::from_bits(((e + 1023) as u64) << 52)
}

// ----------------------------------------------------------------------------
// f32: reference in f64, error in f32 ulps of the exact result's binade.
// ----------------------------------------------------------------------------

fn ulp_f32_at(r: f64) -> f64 {
    let a = r.abs();
    if a < pow2(-126) {
        return pow2(-149);
    }
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    pow2(e - 23)
}

/// Error of `got` in f32 ulps against the (much more precise) f64 `reference`.
fn ulp_err_f32(got: f32, reference: f64) -> f64 {
    if reference.is_nan() || got.is_nan() {
        return if reference.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if reference.is_infinite() || got.is_infinite() {
        // f32 overflow: inf is right iff the exact value >= MAX + ulp/2.
        let lim = f32::MAX as f64 + pow2(103);
        if got.is_infinite() && reference.abs() >= lim && got.signum() as f64 == reference.signum()
        {
            return 0.0;
        }
        if got.is_infinite() {
            return (pow2(128) - reference.abs()) / pow2(104);
        }
        return f64::INFINITY;
    }
    ((got as f64) - reference).abs() / ulp_f32_at(reference)
}

struct Stat {
    max: f64,
    arg: f64,
    n: usize,
}
impl Stat {
    fn new() -> Self {
        Stat {
            max: 0.0,
            arg: f64::NAN,
            n: 0,
        }
    }
    fn add(&mut self, err: f64, x: f64) {
        self.n += 1;
        if err > self.max || err.is_nan() {
            self.max = err;
            self.arg = x;
        }
    }
}

fn check_f32(
    name: &str,
    f: fn(f32) -> f32,
    r: fn(f64) -> f64,
    keep: fn(f32) -> bool,
    core: (f64, f64),
    specials: &[f32],
    bound: f64,
) {
    let n = n_f32();
    let mut rng = Rng(0x1234_5678 ^ name.len() as u64);
    let mut st = Stat::new();
    let test = |x: f32, st: &mut Stat| {
        let e = ulp_err_f32(f(x), r(x as f64));
        st.add(e, x as f64);
    };
    for &x in specials {
        test(x, &mut st);
        // neighbours of every special / boundary value
        for d in 1..=8u32 {
            if x.is_finite() {
                test(f32::from_bits(x.to_bits().wrapping_add(d)), &mut st);
                test(f32::from_bits(x.to_bits().wrapping_sub(d)), &mut st);
            }
        }
    }
    // half: uniformly random bit patterns restricted to the domain
    let mut k = 0;
    while k < n / 2 {
        let x = f32::from_bits(rng.next() as u32);
        if x.is_finite() && keep(x) {
            test(x, &mut st);
            k += 1;
        }
    }
    // half: uniform in the core range
    for _ in 0..n - n / 2 {
        test(rng.uniform(core.0, core.1) as f32, &mut st);
    }
    println!(
        "{name:>10}: max err {:.4} ulp at x = {:e} ({:#010x}), {} inputs",
        st.max,
        st.arg,
        (st.arg as f32).to_bits(),
        st.n
    );
    assert!(
        st.max <= bound,
        "{name}: max error {} > {bound} ulp at x = {:e}",
        st.max,
        st.arg
    );
}

fn sigmoid_ref_f64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn boundaries_f32() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1.0,
        -1.0,
        0.5,
        2.0,
    ];
    v.extend([
        f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        -f32::MAX,
    ]);
    v.extend([f32::from_bits(0x8000_0001), f32::from_bits(0x807f_ffff)]);
    v
}

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

// ----------------------------------------------------------------------------
// f64: reference is a 192-bit big-float, error in f64 ulps.
// ----------------------------------------------------------------------------

/// Approximate conversion (top 64 bits, round to nearest) of a finite BigFloat.
fn bf_to_f64(b: &BigFloat) -> f64 {
    if b.is_zero() {
        return 0.0;
    }
    let Some((m, _n, s, e, _)) = b.as_raw_parts() else {
        panic!("non-finite reference {b:?}");
    };
    let top = *m.last().unwrap();
    let v = (top as f64) * pow2(-64) * pow2(e);
    if s.is_negative() { -v } else { v }
}

/// Reference as a double-double `hi + lo`.
fn dd(b: &BigFloat) -> (f64, f64) {
    let hi = bf_to_f64(b);
    if !hi.is_finite() {
        return (hi, 0.0);
    }
    let lo = bf_to_f64(&b.sub(&bf(hi), PREC, RM));
    (hi, lo)
}

fn ulp_f64_at(r: f64) -> f64 {
    let a = r.abs();
    if a < f64::MIN_POSITIVE {
        return pow2(-1074);
    }
    let e = (((a.to_bits() >> 52) as i32) - 1023).min(1023);
    pow2(e - 52)
}

/// Error of `got` in f64 ulps (of the exact result's binade), computed in
/// big-float arithmetic.
fn ulp_err_f64(got: f64, r: &BigFloat) -> f64 {
    if !got.is_finite() {
        return f64::INFINITY;
    }
    let (hi, _) = dd(r);
    let ulp = ulp_f64_at(hi);
    let diff = bf(got).sub(r, PREC, RM).div(&bf(ulp), PREC, RM);
    assert!(
        diff.as_raw_parts().is_some() || diff.is_zero(),
        "got {got:e} hi {hi:e} ulp {ulp:e} r {r:?}"
    );
    bf_to_f64(&diff).abs()
}

/// Exact conversion f64 -> BigFloat. (astro-float 0.9.6 `from_f64` is off by
/// a factor of 2 for subnormal inputs, so those are scaled through 2^64.)
fn bf_p(x: f64, p: usize) -> BigFloat {
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * pow2(64), p).mul(&BigFloat::from_f64(pow2(-64), p), p, RM)
    } else {
        BigFloat::from_f64(x, p)
    }
}

fn bf(x: f64) -> BigFloat {
    bf_p(x, PREC)
}

fn ref_exp(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).exp(PREC, RM, cc)
}
fn ref_log(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).ln(PREC, RM, cc)
}
fn ref_tanh(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).tanh(PREC, RM, cc)
}
fn ref_sigmoid(x: f64, cc: &mut Consts) -> BigFloat {
    let e = bf(-x).exp(PREC, RM, cc);
    let one = bf(1.0);
    one.div(&one.add(&e, PREC, RM), PREC, RM)
}
/// erf(x) = 2/sqrt(pi) e^{-x^2} sum_n 2^n x^{2n+1} / (2n+1)!!  (all terms > 0).
fn ref_erf(x: f64, cc: &mut Consts) -> BigFloat {
    if x.abs() >= 6.5 {
        return bf(x.signum()); // erfc(6.5) < 2^-64: negligible
    }
    let p = PREC + 64;
    let xb = bf_p(x, p);
    let x2 = xb.mul(&xb, p, RM);
    let two_x2 = x2.add(&x2, p, RM);
    let mut term = xb.clone();
    let mut sum = xb.clone();
    let mut n = 0u64;
    loop {
        n += 1;
        term = term
            .mul(&two_x2, p, RM)
            .div(&BigFloat::from_word(2 * n + 1, p), p, RM);
        sum = sum.add(&term, p, RM);
        let (te, se) = (term.exponent(), sum.exponent());
        if term.is_zero() || (se.unwrap() as i64 - te.unwrap() as i64) > p as i64 + 4 {
            break;
        }
    }
    let pi = cc.pi(p, RM);
    let c = BigFloat::from_f64(2.0, p).div(&pi.sqrt(p, RM), p, RM);
    let e = x2.neg().exp(p, RM, cc);
    c.mul(&e, p, RM).mul(&sum, p, RM)
}

fn check_f64(
    name: &str,
    f: fn(f64) -> f64,
    r: fn(f64, &mut Consts) -> BigFloat,
    keep: fn(f64) -> bool,
    core: (f64, f64),
    specials: &[f64],
    bound: f64,
) {
    let n = n_f64();
    let mut cc = Consts::new().unwrap();
    let mut rng = Rng(0x9abc_def0 ^ name.len() as u64);
    let mut st = Stat::new();
    let test = |x: f64, st: &mut Stat, cc: &mut Consts| {
        let rx = r(x, cc);
        assert!(
            rx.as_raw_parts().is_some() || rx.is_zero(),
            "{name}: reference not finite at x = {x:e}: {rx:?}"
        );
        let e = ulp_err_f64(f(x), &rx);
        st.add(e, x);
    };
    for &x in specials {
        for d in 0..=4u64 {
            for y in [
                f64::from_bits(x.to_bits().wrapping_add(d)),
                f64::from_bits(x.to_bits().wrapping_sub(d)),
            ] {
                if y.is_finite() && keep(y) {
                    test(y, &mut st, &mut cc);
                }
            }
        }
    }
    let mut k = 0;
    while k < n / 2 {
        let x = f64::from_bits(rng.next());
        if x.is_finite() && keep(x) {
            test(x, &mut st, &mut cc);
            k += 1;
        }
    }
    for _ in 0..n - n / 2 {
        let x = rng.uniform(core.0, core.1);
        if keep(x) {
            test(x, &mut st, &mut cc);
        }
    }
    println!(
        "{name:>10}: max err {:.4} ulp at x = {:e} ({:#018x}), {} inputs",
        st.max,
        st.arg,
        st.arg.to_bits(),
        st.n
    );
    assert!(
        st.max <= bound,
        "{name}: max error {} > {bound} ulp at x = {:e}",
        st.max,
        st.arg
    );
}

fn boundaries_f64() -> Vec<f64> {
    vec![
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MAX,
        1.0,
        -1.0,
        0.5,
        2.0,
        1e-300,
        -1e-300,
    ]
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
