//! The accuracy machinery shared by the accuracy tests: a dependency-free random
//! generator, ulp errors of f32 results against an f64 reference and of f64 results
//! against a 192-bit big-float (astro-float), and the sampling drivers `check_f32` /
//! `check_f64` (specials and their neighbours, random bit patterns, a core range).

#![allow(dead_code)]

use astro_float::{BigFloat, Consts, RoundingMode};

pub(crate) const RM: RoundingMode = RoundingMode::ToEven;
pub(crate) const PREC: usize = 192;

pub(crate) fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

pub(crate) fn n_f32() -> usize {
    env_count("GPUKIT_ULP_SAMPLES", 1_000_000)
}

pub(crate) fn n_f64() -> usize {
    env_count("GPUKIT_ULP_SAMPLES_F64", 20_000)
}

/// SplitMix64: deterministic, dependency-free random numbers.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }
    pub(crate) fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.unit()
    }
}

pub(crate) fn pow2(e: i32) -> f64 {
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

pub(crate) fn ulp_f32_at(r: f64) -> f64 {
    let a = r.abs();
    if a < pow2(-126) {
        return pow2(-149);
    }
    let e = ((a.to_bits() >> 52) as i32) - 1023;
    pow2(e - 23)
}

/// Error of `got` in f32 ulps against the (much more precise) f64 `reference`.
pub(crate) fn ulp_err_f32(got: f32, reference: f64) -> f64 {
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

pub(crate) struct Stat {
    pub(crate) max: f64,
    pub(crate) arg: f64,
    pub(crate) n: usize,
}
impl Stat {
    pub(crate) fn new() -> Self {
        Stat {
            max: 0.0,
            arg: f64::NAN,
            n: 0,
        }
    }
    pub(crate) fn add(&mut self, err: f64, x: f64) {
        self.n += 1;
        if err > self.max || err.is_nan() {
            self.max = err;
            self.arg = x;
        }
    }
}

pub(crate) fn check_f32(
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

pub(crate) fn sigmoid_ref_f64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

pub(crate) fn boundaries_f32() -> Vec<f32> {
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

// ----------------------------------------------------------------------------
// f64: reference is a 192-bit big-float, error in f64 ulps.
// ----------------------------------------------------------------------------

/// Approximate conversion (top 64 bits, round to nearest) of a finite BigFloat.
pub(crate) fn bf_to_f64(b: &BigFloat) -> f64 {
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
pub(crate) fn dd(b: &BigFloat) -> (f64, f64) {
    let hi = bf_to_f64(b);
    if !hi.is_finite() {
        return (hi, 0.0);
    }
    let lo = bf_to_f64(&b.sub(&bf(hi), PREC, RM));
    (hi, lo)
}

pub(crate) fn ulp_f64_at(r: f64) -> f64 {
    let a = r.abs();
    if a < f64::MIN_POSITIVE {
        return pow2(-1074);
    }
    let e = (((a.to_bits() >> 52) as i32) - 1023).min(1023);
    pow2(e - 52)
}

/// Error of `got` in f64 ulps (of the exact result's binade), computed in
/// big-float arithmetic.
pub(crate) fn ulp_err_f64(got: f64, r: &BigFloat) -> f64 {
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
pub(crate) fn bf_p(x: f64, p: usize) -> BigFloat {
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        BigFloat::from_f64(x * pow2(64), p).mul(&BigFloat::from_f64(pow2(-64), p), p, RM)
    } else {
        BigFloat::from_f64(x, p)
    }
}

pub(crate) fn bf(x: f64) -> BigFloat {
    bf_p(x, PREC)
}

pub(crate) fn ref_exp(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).exp(PREC, RM, cc)
}
pub(crate) fn ref_log(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).ln(PREC, RM, cc)
}
pub(crate) fn ref_tanh(x: f64, cc: &mut Consts) -> BigFloat {
    bf(x).tanh(PREC, RM, cc)
}
pub(crate) fn ref_sigmoid(x: f64, cc: &mut Consts) -> BigFloat {
    let e = bf(-x).exp(PREC, RM, cc);
    let one = bf(1.0);
    one.div(&one.add(&e, PREC, RM), PREC, RM)
}
/// erf(x) = 2/sqrt(pi) e^{-x^2} sum_n 2^n x^{2n+1} / (2n+1)!!  (all terms > 0).
pub(crate) fn ref_erf(x: f64, cc: &mut Consts) -> BigFloat {
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

pub(crate) fn check_f64(
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

pub(crate) fn boundaries_f64() -> Vec<f64> {
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
