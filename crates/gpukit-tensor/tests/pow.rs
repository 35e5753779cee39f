//! `Tensor::pow` / `pow_scalar` against the host: f32 results within one ulp of the
//! f64 `powf` (C99 special values exact), f64 within one ulp of the sign-aware
//! reference below, integers exactly as wrapping repeated multiplication; broadcasting,
//! dtype conversion of the exponent and the dtype error; cpu and ptx-emu bit-identical.

mod common;

use common::*;
use gpukit::{DType, Error, Tensor};

/// Distance in f32 ulps between `got` and the f64 value `want` (both finite), measured
/// in the ulp of `want` rounded to f32 (the subnormal ulp below the normal range).
fn ulps_f32(got: f32, want: f64) -> f64 {
    let w = want as f32;
    let ulp = if w == 0.0 || !w.is_normal() {
        f64::from(f32::from_bits(1))
    } else {
        f64::from(f32::from_bits(w.abs().to_bits() + 1) - w.abs())
    };
    (f64::from(got) - want).abs() / ulp
}

/// Checks `got` against `powf` in f64 element by element: specials (NaN, infinities,
/// zeros, their signs) exact, finite results within one f32 ulp.
fn check_pow_f32(base: &[f32], exp: &[f32], got: &[f32]) {
    for ((&x, &y), &g) in base.iter().zip(exp).zip(got) {
        let want = f64::from(x).powf(f64::from(y));
        let w = want as f32;
        if w.is_nan() || g.is_nan() {
            assert!(
                w.is_nan() && g.is_nan(),
                "pow({x:e}, {y:e}) = {g:e}, want {w:e}"
            );
        } else if !w.is_finite() || w == 0.0 || !g.is_finite() || g == 0.0 {
            // Overflow, underflow to zero, and exact specials: the same value and sign
            // (a result within an ulp of the underflow threshold may round either way).
            let near_edge = ulps_f32(g, want) <= 1.0;
            assert!(
                g.to_bits() == w.to_bits() || near_edge,
                "pow({x:e}, {y:e}) = {g:e}, want {w:e}"
            );
        } else {
            assert!(
                ulps_f32(g, want) <= 1.0,
                "pow({x:e}, {y:e}) = {g:e}, want {want:e}"
            );
        }
    }
}

#[test]
fn pow_f32_broadcasts_and_matches_powf() {
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        3.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
        -1e-40,
        1e30,
        -1e30,
        2.0,
        -3.0,
        0.25,
        10.0,
    ];
    // Every special against every special through a [18, 1] x [18] broadcast, and the
    // finite values against fractional exponents.
    let mut frac = finite(18, 7);
    frac.iter_mut()
        .for_each(|v| *v = (*v * 8.0).clamp(-20.0, 20.0));
    let mut per_kit = Vec::new();
    for kit in kits() {
        let b = Tensor::from_slice(&kit, &specials, &[18, 1]).unwrap();
        for exps in [&specials[..], &frac[..]] {
            let e = Tensor::from_slice(&kit, exps, &[18]).unwrap();
            let r = b.pow(&e).unwrap();
            assert_eq!(r.dims(), &[18, 18]);
            let got = r.to_vec::<f32>().unwrap();
            let (bb, ee): (Vec<f32>, Vec<f32>) = (0..18 * 18)
                .map(|i| (specials[i / 18], exps[i % 18]))
                .unzip();
            check_pow_f32(&bb, &ee, &got);
            per_kit.push(got);
        }
        // pow_scalar: one exponent converted to f32 and broadcast.
        let x = Tensor::from_slice(&kit, &specials, &[2, 9]).unwrap();
        let sq = x.pow_scalar(2.0).unwrap().to_vec::<f32>().unwrap();
        check_pow_f32(&specials, &[2.0; 18], &sq);
        let half = x.pow_scalar(-0.5).unwrap().to_vec::<f32>().unwrap();
        check_pow_f32(&specials, &[-0.5; 18], &half);
        per_kit.push(sq);
        per_kit.push(half);
    }
    let n = per_kit.len() / 2;
    for (a, b) in per_kit[..n].iter().zip(&per_kit[n..]) {
        assert!(same_f32(a, b), "cpu and ptx-emu differ");
    }
}

#[test]
fn pow_f64_and_mixed_dtype_exponents() {
    let base = [2.0f64, -2.0, 0.5, 10.0, -0.0, 1e-310, 7.0, -1.5];
    let exps = [10.0f64, 3.0, -1.0, -2.0, -3.0, 0.5, 0.0, 2.0];
    let mut per_kit = Vec::new();
    for kit in kits() {
        let b = Tensor::from_slice(&kit, &base, &[8]).unwrap();
        let e = Tensor::from_slice(&kit, &exps, &[8]).unwrap();
        let got = b.pow(&e).unwrap().to_vec::<f64>().unwrap();
        // Exact powers of two and small integer powers are representable: exact.
        let want = [
            1024.0,
            -8.0,
            2.0,
            0.01,
            f64::NEG_INFINITY,
            1e-310f64.sqrt(),
            1.0,
            2.25,
        ];
        for ((g, w), x) in got.iter().zip(want).zip(base) {
            let tol = if x == 10.0 || x == 1e-310 {
                w.abs() * 2.0 * f64::EPSILON
            } else {
                0.0
            };
            let ok = if tol == 0.0 {
                g.to_bits() == w.to_bits()
            } else {
                (g - w).abs() <= tol
            };
            assert!(ok, "pow({x:e}) = {g:e}, want {w:e}");
        }
        // An i64 exponent on an f32 base is converted exactly; an f64 exponent rounds
        // to f32 first.
        let bf = Tensor::from_slice(&kit, &[3.0f32, -2.0, 0.5], &[3]).unwrap();
        let ei = Tensor::from_slice(&kit, &[2i64, 3, -2], &[3]).unwrap();
        assert_eq!(
            bf.pow(&ei).unwrap().to_vec::<f32>().unwrap(),
            vec![9.0, -8.0, 4.0]
        );
        let ed = Tensor::from_slice(&kit, &[0.5f64], &[]).unwrap();
        let r = bf.pow(&ed).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(r[0].to_bits(), 3f32.sqrt().to_bits());
        assert!(r[1].is_nan());
        per_kit.push(got);
    }
    assert!(same_f64(&per_kit[0], &per_kit[1]));
}

#[test]
fn pow_integers_wrap_and_truncate() {
    let base = [2i64, -3, 0, 1, -1, 5, 7, i64::MAX];
    let exps = [62i64, 3, 0, -4, -3, -1, 2, 2];
    for kit in kits() {
        let b = Tensor::from_slice(&kit, &base, &[8]).unwrap();
        let e = Tensor::from_slice(&kit, &exps, &[8]).unwrap();
        let got = b.pow(&e).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(got, vec![1 << 62, -27, 1, 1, -1, 0, 49, 1]);
        // i32 with an i64 exponent (converted, exact) and wrapping.
        let b32 = Tensor::from_slice(&kit, &[2i32, 3, -2], &[3]).unwrap();
        let e64 = Tensor::from_slice(&kit, &[31i64, 20, 31], &[3]).unwrap();
        let got = b32.pow(&e64).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(got, vec![i32::MIN, 3i32.wrapping_pow(20), i32::MIN]);
        // A float exponent on an integer base is a dtype error naming the op.
        let ef = Tensor::from_slice(&kit, &[0.5f32], &[1]).unwrap();
        match b.pow(&ef) {
            Err(Error::DType { op, got, .. }) => {
                assert!(op.contains("pow"), "{op}");
                assert_eq!(got, DType::F32);
            }
            r => panic!(
                "expected a dtype error, got {:?}",
                r.map(|t| t.dims().to_vec())
            ),
        }
        // Shapes that do not broadcast name both shapes.
        let e3 = Tensor::from_slice(&kit, &[1i64, 2, 3], &[3]).unwrap();
        let msg = err_text(b.pow(&e3));
        assert!(msg.contains('8') && msg.contains('3'), "{msg}");
    }
}
