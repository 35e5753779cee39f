//! Accuracy of gpukit's portable `pow` (`gpukit_core::math::pow_*`), measured like the
//! other portable functions: f32 against the platform's f64 `powf` (accurate to about
//! one f64 ulp, i.e. 2^-29 f32 ulp), f64 against astro-float at 192 bits.
//!
//! The pairs `(x, y)` come from four families: uniform bases and exponents over a core
//! range; random bit patterns for `x` with `y` chosen so that `x^y` lands anywhere in
//! the finite range (subnormals included), which is where the product `y·log x` is
//! large and its error matters most; bases close to one with large exponents; and
//! negative bases with integer exponents. The bounds asserted are the ones
//! docs/numerics.md states. Reproduce the table with `GPUKIT_ULP_SAMPLES=10000000
//! GPUKIT_ULP_SAMPLES_F64=200000 cargo test --release -p gpukit-core --test
//! pow_accuracy -- --nocapture`.

mod accuracy;

use accuracy::*;
use astro_float::Consts;
use gpukit_core::math::{pow_f32, pow_f64};

/// One sample `(x, y)` of family `fam` for a format whose largest and smallest
/// binary exponents of a result are `emax` and `emin`.
fn sample(rng: &mut Rng, fam: u64, emax: f64, emin: f64, f64_bits: bool) -> (f64, f64) {
    match fam {
        0 => (rng.uniform(0.0, 4.0), rng.uniform(-30.0, 30.0)),
        1 => {
            // A random positive finite base; y puts x^y at 2^u.
            let x = if f64_bits {
                f64::from_bits(rng.next() >> 1)
            } else {
                f32::from_bits((rng.next() as u32) >> 1) as f64
            };
            if !x.is_finite() || x == 0.0 || x == 1.0 {
                return (2.0, 0.5);
            }
            let u = rng.uniform(emin, emax);
            (x, u / x.log2())
        }
        2 => {
            // 1 ± 2^-e with |y log x| up to the limits.
            let e = rng.uniform(1.0, if f64_bits { 52.0 } else { 23.0 });
            let d = pow2(-(e as i32)) * rng.uniform(1.0, 2.0);
            let x = if rng.next() & 1 == 0 {
                1.0 + d
            } else {
                1.0 - d / 2.0
            };
            let u = rng.uniform(emin, emax);
            (x, u / x.log2())
        }
        _ => {
            let x = -rng.uniform(0.01, 40.0);
            let y = (rng.uniform(-40.0, 40.0)).round();
            (x, y)
        }
    }
}

#[test]
fn pow_f32_accuracy() {
    let n = n_f32();
    let mut rng = Rng(0x5eed_0f32);
    // [normal results, subnormal results]
    let mut st = [Stat::new(), Stat::new()];
    let mut worst = [(0.0f32, 0.0f32); 2];
    for i in 0..n {
        let (x, y) = sample(&mut rng, i as u64 % 4, 127.9, -149.0, false);
        let (x, y) = (x as f32, y as f32);
        let got = pow_f32(x, y);
        let want = (x as f64).powf(y as f64);
        let e = ulp_err_f32(got, want);
        let c = usize::from(want.abs() < f32::MIN_POSITIVE as f64);
        if e > st[c].max {
            worst[c] = (x, y);
        }
        st[c].add(e, x as f64);
    }
    let bits = worst.map(|(x, y)| format!("{:#010x}, {:#010x}", x.to_bits(), y.to_bits()));
    let worst = worst.map(|(x, y)| (f64::from(x), f64::from(y)));
    report("pow_f32", &st, worst, bits, 0.65);
}

/// Prints the table row of each result class and asserts the bounds docs/numerics.md
/// states: `normal_bound` for normal results; below one ulp for subnormal ones (rounded
/// twice, to the format's precision and then to the subnormal's by the scaling, as in
/// exp).
fn report(
    name: &str,
    st: &[Stat; 2],
    worst: [(f64, f64); 2],
    bits: [String; 2],
    normal_bound: f64,
) {
    for (c, what) in ["normal", "subnormal"].iter().enumerate() {
        let (x, y) = worst[c];
        println!(
            "   {name} ({what} results): max err {:.4} ulp at x = {x:e}, y = {y:e} ({}), {} inputs",
            st[c].max, bits[c], st[c].n
        );
    }
    assert!(
        st[0].max <= normal_bound,
        "{name}: {} ulp at {:?}",
        st[0].max,
        worst[0]
    );
    assert!(
        st[1].max < 1.0,
        "{name}: {} ulp at {:?}",
        st[1].max,
        worst[1]
    );
}

#[test]
fn pow_f64_accuracy() {
    // astro-float's pow is slow (about a millisecond a call): a tenth of the default.
    let n = env_count("GPUKIT_ULP_SAMPLES_F64", 2_000);
    let mut rng = Rng(0x5eed_0f64);
    let mut cc = Consts::new().unwrap();
    let mut st = [Stat::new(), Stat::new()];
    let mut worst = [(0.0f64, 0.0f64); 2];
    for i in 0..n {
        let (x, y) = sample(&mut rng, i as u64 % 4, 1023.9, -1074.0, true);
        let got = pow_f64(x, y);
        let r = bf(x.abs()).pow(&bf(y), PREC, RM, &mut cc);
        let odd = y.fract() == 0.0 && (y / 2.0).fract() != 0.0;
        let r = if x < 0.0 && odd { r.neg() } else { r };
        let (hi, _) = dd(&r);
        if !hi.is_finite() || hi.abs() > f64::MAX {
            assert!(got.is_infinite(), "pow_f64({x:e}, {y:e}) = {got:e}");
            continue;
        }
        let e = ulp_err_f64(got, &r);
        let c = usize::from(hi.abs() < f64::MIN_POSITIVE);
        if e > st[c].max {
            worst[c] = (x, y);
        }
        st[c].add(e, x);
    }
    let bits = worst.map(|(x, y)| format!("{:#018x}, {:#018x}", x.to_bits(), y.to_bits()));
    report("pow_f64", &st, worst, bits, 0.6);
}
