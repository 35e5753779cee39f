//! Softmax (ONNX Softmax): ONNX's example within a few ulps of an f64 derivation, exact
//! rows and specials by hand.

use gpukit_core::half::f16;
use gpukit_reference as reference;

use crate::common::{assert_bits, ulps_f32};

/// Distance in ulps between two finite f64 values.
fn ulps_f64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i128::from(i64::MIN) - i128::from(i)
        } else {
            i128::from(i)
        }
    };
    key(a).abs_diff(key(b)) as u64
}

/// Source: ONNX Softmax, `Softmax(x) = Exp(x) / ReduceSum(Exp(x), axis, keepdims=1)`,
/// Operators.md example x = [[-1, 0, 1]] -> [[0.09003058, 0.24472848, 0.66524094]], and
/// [1, 2, 3] (the same values: softmax is shift-invariant), evaluated here in f64 and
/// rounded. Tolerance (this test only): softmax uses gpukit's exp (< 1 ulp, rule 3),
/// then a 3-term sum and a division, each correctly rounded; the result is within a few
/// ulp of the true value. 4 ulp allowed in f32 (the f64 derivation is far more precise
/// than that); 8 ulp in f64, where the derivation (platform exp, sum, division, all in
/// f64) carries a few ulp of error of its own.
#[test]
fn softmax_onnx_example_within_ulps() {
    let rows = [[1.0f64, 2.0, 3.0], [-1.0, 0.0, 1.0]];
    let want_rows: Vec<[f64; 3]> = rows
        .iter()
        .map(|r| {
            let e: Vec<f64> = r.iter().map(|x| x.exp()).collect();
            let s: f64 = e.iter().sum();
            [e[0] / s, e[1] / s, e[2] / s]
        })
        .collect();
    // Sanity of the f64 derivation against the documented ONNX numbers.
    for (w, doc) in want_rows[1]
        .iter()
        .zip([0.09003058f64, 0.24472848, 0.66524094])
    {
        // The documented numbers are f32 values printed to 8 decimals.
        assert!((w - doc).abs() < 5e-8);
    }

    let a32: Vec<f32> = rows.iter().flatten().map(|&x| x as f32).collect();
    let got32 = reference::softmax_rows(&a32, 2, 3);
    let a64: Vec<f64> = rows.iter().flatten().copied().collect();
    let got64 = reference::softmax_rows(&a64, 2, 3);
    for (i, w) in want_rows.iter().flatten().enumerate() {
        assert!(
            ulps_f32(got32[i], *w as f32) <= 4,
            "f32 [{i}]: {} vs {}",
            got32[i],
            w
        );
        assert!(
            ulps_f64(got64[i], *w) <= 8,
            "f64 [{i}]: {} vs {}",
            got64[i],
            w
        );
    }
}

/// Source: the ONNX Softmax definition evaluated where every step is exact, and the
/// contract's specials (rule 7; ONNX's max-subtracted reference gives the same NaNs),
/// by hand:
/// * [5,5,5,5]: m = 5, e_j = exp(0) = 1 exactly, s = 4, out = 1/4 exactly.
/// * [-inf, 0]: m = 0, e = [exp(-inf), exp(0)] = [0, 1], s = 1, out = [+0, 1].
/// * a NaN anywhere: m = NaN, every e_j = NaN: the row is all NaN.
/// * all -inf: m = -inf, x - m = -inf - -inf = NaN: the row is all NaN.
/// * a +inf: m = +inf, inf - inf = NaN at that position, so s = NaN: all NaN.
/// * 8193 zeros (past one reduction chunk of 8192): e_j = 1, s = 8193 (integer sums are
///   exact below 2^24), out = the correctly rounded 1/8193.
/// * rows or cols = 0: empty output.
#[test]
fn softmax_exact_rows_and_specials() {
    let inf = f32::INFINITY;
    let nan = f32::NAN;
    let a = [
        5.0f32, 5.0, 5.0, 5.0, // exact quarter
        -inf, 0.0, -inf, -inf, // zeros and one
        1.0, nan, 2.0, 3.0, // NaN row
        -inf, -inf, -inf, -inf, // all -inf
        1.0, inf, 2.0, 0.0, // +inf
    ];
    let got = reference::softmax_rows(&a, 5, 4);
    let want = [
        0.25f32, 0.25, 0.25, 0.25, //
        0.0, 1.0, 0.0, 0.0, //
        nan, nan, nan, nan, //
        nan, nan, nan, nan, //
        nan, nan, nan, nan,
    ];
    assert_bits(&got, &want);
    assert_eq!(got[4].to_bits(), 0, "exp(-inf) / 1 is +0.0");

    let zeros = vec![0.0f32; 8193];
    let got = reference::softmax_rows(&zeros, 1, 8193);
    assert!(
        got.iter()
            .all(|&v| v.to_bits() == (1.0f32 / 8193.0).to_bits())
    );

    // f16: [0, 0] -> 0.5 each, exact.
    let got = reference::softmax_rows(&[f16::ZERO, f16::ZERO], 1, 2);
    assert_bits(&got, &[f16::from_f32(0.5); 2]);

    assert!(reference::softmax_rows::<f32>(&[], 3, 0).is_empty());
    assert!(reference::softmax_rows::<f32>(&[], 0, 3).is_empty());
}
