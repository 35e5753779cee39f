//! ReduceSum and dot: the reduction shape (lanes, tree, chunking) by hand, specials,
//! storage rounding and integer wrap, and dot's fma in lanes.

use gpukit_core::half::{bf16, f16};
use gpukit_reference as reference;

/// Source: the reduction shape (rule 4; reduce.rs: 32 lanes, lane l takes items
/// l, l+32, ...; tree w = 16, 8, 4, 2, 1), derived by hand in f32 where ulp(1e8) = 8.
/// Input: 1e8 followed by 63 ones (n = 64).
/// * lane 0 = 1e8 + 1 (item 32) -> 1e8 (1 is below half an ulp); lanes 1..31 = 2.
/// * w=16: acc0 = 1e8 + 2 -> 1e8; acc1..15 = 4.
/// * w=8:  acc0 = 1e8 + 4: a tie between 1e8 (= 12500000 * 8, even) and 1e8 + 8 -> 1e8;
///   acc1..7 = 8.
/// * w=4:  acc0 = 1e8 + 8 (exact); acc1..3 = 16.
/// * w=2:  acc0 = 1e8 + 24 (exact); acc1 = 32.
/// * w=1:  acc0 = 1e8 + 56 (exact).
///
/// Result 100000056. (The exact sum is 100000063; a sequential left fold gives 1e8.)
#[test]
fn sum_order_is_the_reduction_shape() {
    let mut a = vec![1.0f32; 64];
    a[0] = 1e8;
    assert_eq!(reference::sum(&a).to_bits(), 100_000_056.0f32.to_bits());
}

/// Source: the reduction shape's chunking (rule 4; CHUNK = 8192), by hand, f32
/// (ulp 8 throughout: every value below stays in [2^26, 2^27)).
/// Input: 1e8 followed by 8223 ones (n = 8224 = 8192 + 32).
/// Chunk 0 (items 0..8192, 256 per lane): lane 0 = 1e8 + 255 ones, each one below half
/// an ulp -> 1e8; lanes 1..31 = 256 each (exact). Tree:
/// * w=16: acc0 = 1e8 + acc16 = 1e8 + 256; acc1..15 = 512.
/// * w=8:  acc0 = 1e8 + 768;  acc1..7 = 1024.
/// * w=4:  acc0 = 1e8 + 1792; acc1..3 = 2048.
/// * w=2:  acc0 = 1e8 + 3840; acc1 = 4096.
/// * w=1:  acc0 = 1e8 + 7936 (every step a multiple of 8: exact).
///
/// Chunk 1 (items 8192..8224, 32 ones): one per lane, tree -> 32.
/// The partials [1e8 + 7936, 32] go through the same shape: lane 0 = 1e8 + 7936,
/// lane 1 = 32, tree -> 1e8 + 7968 = 100007968 (exact).
/// Without chunking (32 lanes over all 8224 items, 257 per lane) the same derivation
/// gives 1e8+256, +768, +1792 (1e8+1796 is a tie, to even), +3848, +7960 = 100007960,
/// so the chunk boundary is observable.
#[test]
fn sum_order_includes_chunking() {
    let mut a = vec![1.0f32; 8224];
    a[0] = 1e8;
    assert_eq!(reference::sum(&a).to_bits(), 100_007_968.0f32.to_bits());
}

/// Source: rule 4 and 6, by hand.
/// * empty: every lane starts at +0.0 -> +0.0 (ONNX ReduceSum of an empty set is 0).
/// * [-0.0, -0.0]: lanes start at +0.0 and +0 + -0 = +0, so the sum is +0.0 (numpy's
///   sum, which starts from the first element, would give -0.0: gpukit defines +0.0).
/// * NaN anywhere -> NaN; +inf and -inf -> NaN.
/// * f16: 8193 ones accumulate in f32 to 8193 exactly; one store to f16 (ulp 8 at 8192):
///   8193 is 1/8 ulp above 8192 -> 8192. (Accumulating in f16 would stall at 2048.)
/// * i32/i64 wrap: MAX + 1 = MIN.
#[test]
fn sum_specials_storage_and_ints() {
    assert_eq!(reference::sum::<f32>(&[]).to_bits(), 0);
    assert_eq!(reference::sum(&[-0.0f64, -0.0]).to_bits(), 0);
    assert!(reference::sum(&[1.0f32, f32::NAN, 2.0]).is_nan());
    assert!(reference::sum(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    let ones = vec![f16::ONE; 8193];
    assert_eq!(reference::sum(&ones), f16::from_f32(8192.0));
    let ones = vec![bf16::ONE; 300];
    // bf16 ulp at 256 is 2: 300 is representable -> exact.
    assert_eq!(reference::sum(&ones), bf16::from_f32(300.0));
    assert_eq!(reference::sum(&[i32::MAX, 1]), i32::MIN);
    assert_eq!(reference::sum(&[i64::MAX, 2, -1]), i64::MIN);
    assert_eq!(reference::sum::<i64>(&[]), 0);
    assert_eq!(reference::sum(&[1.5f32, 2.25, -0.75]), 3.0);
}

/// Source: rules 2 and 4 (dot: lane step fma(a_i, b_i, acc), combine +), by hand.
/// n = 33: lane 0 gets items 0 and 32, lanes 1..31 one item each (all zero here).
/// Item 0: a = 1, b = -1 -> lane 0 = fma(1, -1, +0) = -1.
/// Item 32: a = b = 1 + 2^-12 -> lane 0 = fma(1+2^-12, 1+2^-12, -1) = 2^-11 + 2^-24
/// exactly (a rounded product would lose the 2^-24: tie to even gives 1 + 2^-11).
/// Tree: adding the +0.0 lanes changes nothing. Result 2^-11 + 2^-24.
#[test]
fn dot_fma_in_lanes_by_hand() {
    let e = 2f32.powi(-12);
    let mut a = vec![0.0f32; 33];
    let mut b = vec![0.0f32; 33];
    a[0] = 1.0;
    b[0] = -1.0;
    a[32] = 1.0 + e;
    b[32] = 1.0 + e;
    let got = reference::dot(&a, &b);
    assert_eq!(got.to_bits(), (2f32.powi(-11) + 2f32.powi(-24)).to_bits());
    // Hand product: [1,2,3].[4,5,6] = 32. Empty: +0.0.
    assert_eq!(reference::dot(&[1.0f64, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
    assert_eq!(reference::dot::<f32>(&[], &[]).to_bits(), 0);
    // bf16 inputs, f32 accumulation, one store: 1*1 + 3 * (1 * 2^-9) in different lanes
    // = 1 + 0.75 ulp(bf16) -> rounds to 1 + 2^-7.
    let q = bf16::from_f32(2f32.powi(-9));
    let got = reference::dot(&[bf16::ONE; 4], &[bf16::ONE, q, q, q]);
    assert_eq!(got.to_bits(), 0x3f81);
}
