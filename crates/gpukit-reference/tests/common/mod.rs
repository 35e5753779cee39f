//! Helpers shared by the fixed-case test files: bitwise slice equality under the
//! contract's NaN rule, and ulp distances.

#![allow(dead_code)] // each test binary uses a subset

use gpukit_core::Element;
use gpukit_core::numeric::same_bits;

/// Bitwise equality of two slices under rule 8, with a readable failure.
#[track_caller]
pub(crate) fn assert_bits<T: Element>(got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "length: got {got:?}, want {want:?}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_bits(g, w),
            "element {i}: got {g:?}, want {w:?}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// Distance in ulps between two finite f32 values (on the ordered integer line).
pub(crate) fn ulps_f32(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i64::from(i32::MIN) - i64::from(i)
        } else {
            i64::from(i)
        }
    };
    key(a).abs_diff(key(b))
}
