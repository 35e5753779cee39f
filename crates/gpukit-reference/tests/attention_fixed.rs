//! Fixed cases of the attention group, with expected values derived by hand from the
//! definition of scaled-dot-product attention (ONNX Attention, opset 23: `Y =
//! softmax(scale·Q·Kᵀ + mask)·V`, its reference `onnx/reference/ops/op_attention.py`)
//! and from the contract of docs/ops/attention.md. Exact bit comparisons, except where
//! the expected value involves `exp` of a non-zero argument (stated in the test).

use gpukit_core::half::{bf16, f16};
use gpukit_reference::{attention, attention_batch, attention_composed, attention_scores};

/// Definition: with one key, softmax over one score is exp(0)/exp(0) = 1, so the
/// output is that key's value row, exactly (p = 1, l = 1, acc = fma(1, v, +0) = v).
#[test]
fn one_token_returns_the_value_row() {
    let q = [3.0f32, -2.0, 0.5];
    let k = [1.0f32, 7.0, -1.0];
    let v = [0.25f32, -8.0, 1e-3];
    let out = attention(&q, &k, &v, None, 1, 1, 1, 3, 1, 0.7);
    assert_eq!(out, v.to_vec());
}

/// Definition: equal scores give equal weights 1/nkv, so the output is the mean of the
/// values. With q = 0 every score is 0; values 0..nkv-1 sum to nkv(nkv-1)/2, so the mean
/// is (nkv-1)/2, exact in f32. Crossing tile edges (63, 64, 65, 129): every tile has the
/// same maximum 0, c = exp(0) = 1, and the sums stay exact integers.
#[test]
fn equal_scores_give_the_mean_across_tile_edges() {
    for nkv in [1usize, 2, 63, 64, 65, 128, 129, 200] {
        let hd = 2;
        let q = vec![0.0f32; hd];
        let k: Vec<f32> = (0..nkv * hd).map(|x| (x % 7) as f32 - 3.0).collect();
        let v: Vec<f32> = (0..nkv).flat_map(|j| [j as f32, 2.0 * j as f32]).collect();
        let out = attention(&q, &k, &v, None, 1, 1, nkv, hd, 1, 1.0);
        let mean = (nkv - 1) as f32 / 2.0;
        assert_eq!(out, vec![mean, 2.0 * mean], "nkv {nkv}");
    }
}

/// Definition: when one score exceeds the others by far more than the exp underflow
/// threshold (~104 in f32), its weight is 1 and the others' exp(s - m) are exactly 0:
/// the output is that key's value row. Here the winning key is in the second tile, so
/// the first tile's accumulator is rescaled by c = exp(-big) = 0 exactly.
#[test]
fn a_dominant_key_wins_exactly_even_in_a_later_tile() {
    let nkv = 70;
    let q = [1.0f32];
    let mut k = vec![0.0f32; nkv];
    k[66] = 1000.0;
    let v: Vec<f32> = (0..nkv).map(|j| j as f32 + 0.5).collect();
    let out = attention(&q, &k, &v, None, 1, 1, nkv, 1, 1, 1.0);
    assert_eq!(out, vec![66.5]);
}

/// Definition with exp: q = [1, 0], k = [[1, 0], [0, 1]], v = [[1, 2], [3, 4]], scale 1.
/// Scores [1, 0]; weights e/(e+1), 1/(e+1); out = [(e + 3)/(e + 1), (2e + 4)/(e + 1)].
/// Tolerance 4 ulp: the expected value uses the platform's f64 exp, the oracle
/// gpukit's f32 exp (≤ 1 ulp) then three roundings.
#[test]
fn two_keys_match_the_softmax_formula() {
    let q = [1.0f32, 0.0];
    let k = [1.0f32, 0.0, 0.0, 1.0];
    let v = [1.0f32, 2.0, 3.0, 4.0];
    let out = attention(&q, &k, &v, None, 1, 1, 2, 2, 1, 1.0);
    let e = 1f64.exp();
    let want = [(e + 3.0) / (e + 1.0), (2.0 * e + 4.0) / (e + 1.0)];
    for (g, w) in out.iter().zip(want) {
        let ulps = (g.to_bits() as i64 - (w as f32).to_bits() as i64).abs();
        assert!(ulps <= 4, "got {g}, want {w}");
    }
    // The default scale: 1/sqrt(2) in f64, rounded to f32.
    let s = gpukit_core::abi::attention::default_scale(2);
    assert_eq!(s, 1.0 / 2f64.sqrt());
}

/// Seed / contract: a key masked with -1e30 or -inf is dropped: never in the maximum,
/// nothing in the denominator, V never read (so even an inf in its V row is harmless).
/// A row padded at the end with dropped keys is bit-identical to the unpadded row.
#[test]
fn dropped_keys_are_exactly_absent() {
    let hd = 3;
    let real = 67usize; // crosses a tile edge
    let q = [0.3f32, -0.7, 0.11];
    let kf = |j: usize, d: usize| ((j * 31 + d * 7) % 17) as f32 * 0.125 - 1.0;
    let vf = |j: usize, d: usize| ((j * 13 + d * 5) % 11) as f32 - 5.0;
    let k: Vec<f32> = (0..real)
        .flat_map(|j| (0..hd).map(move |d| kf(j, d)))
        .collect();
    let v: Vec<f32> = (0..real)
        .flat_map(|j| (0..hd).map(move |d| vf(j, d)))
        .collect();
    let want = attention(&q, &k, &v, None, 1, 1, real, hd, 1, 0.5);
    for pad in [1usize, 60, 62, 130] {
        for drop in [-1e30f32, f32::NEG_INFINITY] {
            let mut kp = k.clone();
            let mut vp = v.clone();
            kp.extend((0..pad * hd).map(|_| 9.0f32));
            vp.extend((0..pad * hd).map(|_| f32::INFINITY));
            let mut mask = vec![0.0f32; real];
            mask.extend(std::iter::repeat_n(drop, pad));
            let got = attention(&q, &kp, &vp, Some(&mask), 1, 1, real + pad, hd, 1, 0.5);
            assert_eq!(got, want, "pad {pad}, drop {drop}");
        }
    }
}

/// ONNX Attention (its reference: softmax(x) = exp(x - max) / sum with max = -inf over a
/// fully -inf-masked row) gives NaN for a fully masked row. The fused op gives NaN for a
/// row whose keys are all dropped (-1e30 or -inf), and for nkv = 0 (0 / 0).
#[test]
fn fully_masked_rows_are_nan() {
    let q = [1.0f32, 2.0];
    let k = [1.0f32, 0.0, 0.0, 1.0];
    let v = [1.0f32, 2.0, 3.0, 4.0];
    // Two heads, one mask row each (hpb = 1): head 0 fully masked, head 1 partly.
    let q2 = [1.0f32, 2.0, 1.0, 2.0];
    let k2 = [k, k].concat();
    let v2 = [v, v].concat();
    let mask = [-1e30f32, f32::NEG_INFINITY, 0.0, f32::NEG_INFINITY];
    let out = attention(&q2, &k2, &v2, Some(&mask), 2, 1, 2, 2, 1, 1.0);
    assert!(out[0].is_nan() && out[1].is_nan());
    // Head 1 keeps key 0 only: its value row, exactly.
    assert_eq!(&out[2..], &[1.0, 2.0]);
    let empty = attention::<f32>(&q, &[], &[], None, 1, 1, 0, 2, 1, 1.0);
    assert!(empty.iter().all(|x| x.is_nan()));
}

/// hpb > 1: heads 0 and 1 read mask row 0, heads 2 and 3 row 1. Each head keeps one key
/// and returns its value row exactly (one kept key: weight exp(0)/exp(0) = 1).
#[test]
fn heads_share_mask_rows_by_hpb() {
    let (heads, nkv, hd) = (4, 2, 1);
    let q = vec![1.0f32; heads];
    let k = vec![0.5f32; heads * nkv];
    let v: Vec<f32> = (0..heads * nkv).map(|x| x as f32).collect();
    let mask = [0.0f32, -1e30, -1e30, 0.0];
    let out = attention(&q, &k, &v, Some(&mask), heads, 1, nkv, hd, 2, 1.0);
    assert_eq!(out, vec![0.0, 2.0, 5.0, 7.0]);
}

/// Entry 3's layout: [batch*n, heads*hd], head h at column h*hd; the mask row is per
/// sequence. Each sequence equals the head-major computation of the same data.
#[test]
fn batch_layout_matches_head_major() {
    let (batch, heads, n, nkv, hd) = (2usize, 3usize, 2usize, 3usize, 2usize);
    let width = heads * hd;
    let val = |x: usize| ((x * 37) % 23) as f32 * 0.25 - 2.5;
    let q: Vec<f32> = (0..batch * n * width).map(val).collect();
    let k: Vec<f32> = (0..batch * nkv * width).map(|x| val(x + 5)).collect();
    let v: Vec<f32> = (0..batch * nkv * width).map(|x| val(x + 11)).collect();
    let mask = [0.0f32, -1e30, 0.5, 0.0, 0.0, f32::NEG_INFINITY];
    let out = attention_batch(&q, &k, &v, Some(&mask), batch, heads, n, nkv, hd, 0.6);
    for b in 0..batch {
        // Permute sequence b to head-major [heads, len, hd].
        let hm = |x: &[f32], len: usize| -> Vec<f32> {
            let mut r = Vec::new();
            for h in 0..heads {
                for i in 0..len {
                    let at = (b * len + i) * width + h * hd;
                    r.extend_from_slice(&x[at..at + hd]);
                }
            }
            r
        };
        let row = &mask[b * nkv..(b + 1) * nkv];
        let want = attention(
            &hm(&q, n),
            &hm(&k, nkv),
            &hm(&v, nkv),
            Some(row),
            heads,
            n,
            nkv,
            hd,
            heads,
            0.6,
        );
        assert_eq!(hm(&out, n), want, "sequence {b}");
    }
}

/// The composed op follows ONNX: scores are plain sums (-1e30 is added, not dropped).
/// A fully -1e30-masked row then has equal scores -1e30 (the small q·k vanish in the
/// rounding), so every weight is 1/nkv and the output is the mean of V (ONNX's
/// reference gives the same); a fully -inf-masked row is NaN (-inf - -inf).
#[test]
fn composed_follows_onnx_on_masked_rows() {
    let q = [0.5f32, 1.0];
    let k = [1.0f32, 0.0, 0.0, 1.0];
    let v = [1.0f32, 2.0, 3.0, 4.0];
    let (out, p) = attention_composed(&q, &k, &v, Some(&[-1e30, -1e30]), 1, 1, 2, 2, 1, 1.0);
    assert_eq!(p, vec![0.5, 0.5]);
    assert_eq!(out, vec![2.0, 3.0]);
    let (out, _) = attention_composed(
        &q,
        &k,
        &v,
        Some(&[f32::NEG_INFINITY; 2]),
        1,
        1,
        2,
        2,
        1,
        1.0,
    );
    assert!(out.iter().all(|x| x.is_nan()));
    // The scores themselves: q·k = [0.5, 1.0] × scale 2 + mask [0, 1].
    let s = attention_scores(&q, &k, Some(&[0.0, 1.0]), 1, 1, 2, 2, 1, 2.0);
    assert_eq!(s, vec![1.0, 3.0]);
}

/// A NaN in the inputs of a row makes that row NaN (IEEE propagation through the score,
/// the running maximum and the rescale), as ONNX's reference does; other heads are
/// untouched.
#[test]
fn nan_propagates_to_its_row_only() {
    let q = [f32::NAN, 1.0];
    let k = [1.0f32, 1.0];
    let v = [5.0f32, 6.0];
    let out = attention(&q, &k, &v, None, 2, 1, 1, 1, 1, 1.0);
    assert!(out[0].is_nan());
    assert_eq!(out[1], 6.0);
}

/// Storage types: f16 and bf16 compute in f32 and store once. The mean of the values
/// (equal scores) is exact: 1.5 and 3.0 are representable.
#[test]
fn half_types_store_once() {
    let q = [f16::ZERO];
    let k = [f16::ONE, f16::from_f32(2.0)];
    let v = [f16::ONE, f16::from_f32(2.0)];
    // q = 0: both scores are 0 -> equal weights -> mean 1.5.
    assert_eq!(
        attention(&q, &k, &v, None, 1, 1, 2, 1, 1, 1.0),
        vec![f16::from_f32(1.5)]
    );
    let qb = [bf16::ZERO];
    let kb = [bf16::ONE, bf16::ONE];
    let vb = [bf16::from_f32(2.0), bf16::from_f32(4.0)];
    assert_eq!(
        attention(&qb, &kb, &vb, None, 1, 1, 2, 1, 1, 1.0),
        vec![bf16::from_f32(3.0)]
    );
    // An f16 mask of -1e30 is -inf: the key is dropped.
    let m16 = [f16::from_f64(-1e30), f16::ZERO];
    assert!(m16[0].is_infinite());
    assert_eq!(
        attention(&q, &k, &v, Some(&m16), 1, 1, 2, 1, 1, 1.0),
        vec![f16::from_f32(2.0)]
    );
    // bf16's rounding of -1e30 still drops.
    let mb = [bf16::from_f64(-1e30), bf16::ZERO];
    assert_eq!(
        attention(&qb, &kb, &vb, Some(&mb), 1, 1, 2, 1, 1, 1.0),
        vec![bf16::from_f32(4.0)]
    );
}
