//! Fixed cases of the cast oracle, each result worked out by hand from the bit layout
//! of the target (the spacing of its values near the input, where the tie lies, which
//! neighbour is even), and a random cross-check of the oracle against the element
//! functions of `gpukit_core::cast` (two independent implementations) for all 36 pairs.

mod common;

use common::assert_bits;
use gpukit_core::Element;
use gpukit_core::cast::{CastElement, CastTo};
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::same_bits;
use gpukit_reference::cast;

fn p2(e: i32) -> f64 {
    2f64.powi(e)
}

fn h(bits: &[u16]) -> Vec<f16> {
    bits.iter().map(|&b| f16::from_bits(b)).collect()
}

fn b(bits: &[u16]) -> Vec<bf16> {
    bits.iter().map(|&x| bf16::from_bits(x)).collect()
}

fn f(bits: &[u32]) -> Vec<f32> {
    bits.iter().map(|&x| f32::from_bits(x)).collect()
}

#[test]
fn f64_to_f16() {
    let x = [
        1.0 + p2(-11) + p2(-40), // above the tie 1 + 2^-11: up (f32 would make it the tie)
        1.0 + p2(-11),           // the tie between 0x3c00 and 0x3c01: even, down
        1.0 + 3.0 * p2(-11),     // the tie between 0x3c01 and 0x3c02: even, up
        65504.0,                 // max
        65520.0 - p2(-30),       // just below the overflow threshold
        65520.0,                 // the threshold (a tie, to the even infinity)
        p2(-24),                 // smallest subnormal
        p2(-25),                 // half of it: a tie, to +0
        p2(-25) + p2(-60),       // above the tie: the smallest subnormal
        3.0 * p2(-25),           // the tie between 1 and 2 subnormal ulps: 2
        p2(-14) - p2(-25),       // the tie below the smallest normal: even, up
        -0.0,
        f64::NEG_INFINITY,
        1e-300,
        -1e300,
    ];
    let want = h(&[
        0x3c01, 0x3c00, 0x3c02, 0x7bff, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0001, 0x0002, 0x0400,
        0x8000, 0xfc00, 0x0000, 0xfc00,
    ]);
    assert_bits(&cast::<f64, f16>(&x), &want);
    assert!(cast::<f64, f16>(&[f64::NAN])[0].is_nan());
}

#[test]
fn f64_to_bf16_and_f32() {
    let t = (2.0 - p2(-8)) * p2(127); // bf16's overflow threshold
    let x = [
        1.0 + p2(-8) + p2(-30), // above the tie: up to 0x3f81
        1.0 + p2(-8),           // the tie: even, 0x3f80
        p2(-133),               // smallest bf16 subnormal
        p2(-134),               // half of it: +0
        p2(-134) + p2(-170),    // above: the smallest subnormal
        t,
        t - p2(80),
        f32::MAX as f64,
        1e39,
        -p2(-200),
    ];
    let want = b(&[
        0x3f81, 0x3f80, 0x0001, 0x0000, 0x0001, 0x7f80, 0x7f7f, 0x7f80, 0x7f80, 0x8000,
    ]);
    assert_bits(&cast::<f64, bf16>(&x), &want);
    let y = [
        1.0 + p2(-24),              // the tie: 1.0
        1.0 + p2(-24) + p2(-50),    // above: 0x3f800001
        p2(128) - p2(103),          // max + half an ulp: the tie, to inf
        p2(128) - p2(103) - p2(80), // below it: max
        p2(-150),                   // half the smallest subnormal: +0
        p2(-150) + p2(-200),        // above: the smallest subnormal
        -3.0 * p2(-150),            // tie between 1 and 2 ulps: 2
        1e-46,
    ];
    let want = f(&[
        0x3f80_0000,
        0x3f80_0001,
        0x7f80_0000,
        0x7f7f_ffff,
        0,
        1,
        0x8000_0002,
        0,
    ]);
    assert_bits(&cast::<f64, f32>(&y), &want);
}

#[test]
fn integers_to_floats() {
    let big = (1i64 << 40) + (1 << 32) + 1;
    assert_bits(
        &cast::<i64, f32>(&[(1 << 24) + 1, (1 << 24) + 3, i64::MAX, i64::MIN, -1, 0]),
        &f(&[
            0x4b80_0000,
            0x4b80_0002,
            0x5f00_0000,
            0xdf00_0000,
            0xbf80_0000,
            0,
        ]),
    );
    assert_bits(
        &cast::<i64, f64>(&[(1 << 53) + 1, (1 << 53) + 3, i64::MAX]),
        &[p2(53), p2(53) + 4.0, p2(63)],
    );
    assert_bits(
        &cast::<i64, f16>(&[65519, 65520, -65520, 2049, 2051, i64::MIN, -3]),
        &h(&[0x7bff, 0x7c00, 0xfc00, 0x6800, 0x6802, 0xfc00, 0xc200]),
    );
    // bf16 at 2^40 has spacing 2^33: big is above the tie 2^40 + 2^32.
    assert_bits(
        &cast::<i64, bf16>(&[257, 259, big, -big, i64::MAX]),
        &b(&[0x4380, 0x4382, 0x5381, 0xd381, 0x5f00]),
    );
    assert_bits(
        &cast::<i32, f16>(&[2049, i32::MAX, i32::MIN]),
        &h(&[0x6800, 0x7c00, 0xfc00]),
    );
    assert_bits(
        &cast::<i32, bf16>(&[i32::MAX, (1 << 24) + (1 << 16) + 1, (1 << 24) + (1 << 16)]),
        &b(&[0x4f00, 0x4b81, 0x4b80]),
    );
    assert_bits(
        &cast::<i32, f32>(&[(1 << 24) + 1, i32::MAX, i32::MIN]),
        &f(&[0x4b80_0000, 0x4f00_0000, 0xcf00_0000]),
    );
    assert_bits(&cast::<i32, f64>(&[i32::MIN, -7]), &[-p2(31), -7.0]);
}

#[test]
fn narrow_floats() {
    // f32 -> f16 / bf16.
    assert_bits(
        &cast::<f32, f16>(&f(&[
            0x477f_f000,
            0x3380_0000,
            0x3300_0000,
            0x0000_0001,
            0xbf80_0000,
        ])),
        &h(&[0x7c00, 0x0001, 0x0000, 0x0000, 0xbc00]),
    );
    assert_bits(
        &cast::<f32, bf16>(&f(&[
            0x3f80_8000,
            0x3f81_8000,
            0x3f80_8001,
            0x0000_8001,
            0x7f7f_ffff,
        ])),
        &b(&[0x3f80, 0x3f82, 0x3f81, 0x0001, 0x7f80]),
    );
    // f16 -> bf16: 1 + 2^-10 -> 1.0 (spacing 2^-7); 65504 -> 65536 (spacing 256 at
    // 2^15, 65504 = 255.875 * 256); 2^-24 -> 0x3380 (a normal bf16).
    assert_bits(
        &cast::<f16, bf16>(&h(&[0x3c01, 0x7bff, 0x0001, 0xfc00])),
        &b(&[0x3f80, 0x4780, 0x3380, 0xff80]),
    );
    // bf16 -> f16: 65536 -> inf; 1 + 2^-7 exact (0x3c08); 2^-30 -> 0; max -> inf.
    assert_bits(
        &cast::<bf16, f16>(&b(&[0x4780, 0x3f81, 0x3080, 0x7f7f, 0x8000])),
        &h(&[0x7c00, 0x3c08, 0x0000, 0x7c00, 0x8000]),
    );
    // Widening is exact.
    assert_bits(
        &cast::<f16, f64>(&h(&[0x0001, 0xfbff])),
        &[p2(-24), -65504.0],
    );
    assert_bits(&cast::<bf16, f32>(&b(&[0x0001])), &f(&[0x0001_0000]));
}

#[test]
fn floats_to_integers() {
    assert_eq!(
        cast::<f64, i32>(&[
            2.9,
            -2.9,
            -0.0,
            f64::NAN,
            2147483647.9,
            2147483648.0,
            -2147483649.0,
            f64::NEG_INFINITY
        ]),
        [2, -2, 0, 0, i32::MAX, i32::MAX, i32::MIN, i32::MIN]
    );
    assert_eq!(
        cast::<f32, i64>(&[9.3e18, -9.3e18, f32::INFINITY, 0.99999994, -f32::NAN]),
        [i64::MAX, i64::MIN, i64::MAX, 0, 0]
    );
    assert_eq!(
        cast::<f64, i64>(&[9_223_372_036_854_774_784.0, -9_223_372_036_854_775_808.0]),
        [9_223_372_036_854_774_784, i64::MIN]
    );
    assert_eq!(
        cast::<f16, i32>(&h(&[0x7bff, 0xfc00, 0x7e00, 0x3bff])),
        [65504, i32::MIN, 0, 0]
    );
    assert_eq!(cast::<bf16, i64>(&b(&[0x7f7f, 0xbfc0])), [i64::MAX, -1]);
}

#[test]
fn integers_to_integers_and_copies() {
    assert_eq!(
        cast::<i64, i32>(&[0x1_8000_0001, -1, i64::MIN, i64::MAX, 1 << 31]),
        [i32::MIN + 1, -1, 0, -1, i32::MIN]
    );
    assert_eq!(
        cast::<i32, i64>(&[i32::MIN, -5, i32::MAX]),
        [-2_147_483_648, -5, 2_147_483_647]
    );
    // The same dtype keeps NaN payloads (a copy of the bits).
    let nan = f32::from_bits(0x7fa0_1234);
    assert_eq!(cast::<f32, f32>(&[nan])[0].to_bits(), 0x7fa0_1234);
    assert_eq!(cast::<f16, f16>(&h(&[0xfd01]))[0].to_bits(), 0xfd01);
}

struct Xs(u64);
impl Xs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// An element from 64 random bits: any bit pattern of a float; an integer of random bit
/// length, sometimes with its low bits a tie pattern.
fn elem<T: Element>(r: &mut Xs) -> T {
    let bits = r.next();
    let v = if T::DTYPE.is_float() {
        bits
    } else {
        let s = (r.next() % 64) as u32;
        let mut v = (bits as i64 >> s) as u64;
        if bits & 1 == 1 {
            let p = 1 + (r.next() % 40) as u32;
            v = (v & !((1u64 << p) - 1)) | (1 << (p - 1));
        }
        v
    };
    let bytes = v.to_ne_bytes();
    let n = T::DTYPE.size();
    let lo = if cfg!(target_endian = "little") {
        &bytes[..n]
    } else {
        &bytes[8 - n..]
    };
    gpukit_core::bytemuck::pod_read_unaligned(lo)
}

fn cross<S: CastElement + CastTo<D>, D: Element>(r: &mut Xs) {
    let a: Vec<S> = (0..100_000).map(|_| elem::<S>(r)).collect();
    let want = cast::<S, D>(&a);
    for (x, w) in a.iter().zip(&want) {
        let g: D = x.cast_to();
        assert!(
            same_bits(g, *w),
            "{} -> {}: {x:?} gives {g:?} (gpukit_core::cast) and {w:?} (oracle)",
            S::DTYPE,
            D::DTYPE
        );
    }
}

fn cross_all<S: CastElement>(r: &mut Xs) {
    cross::<S, f32>(r);
    cross::<S, f64>(r);
    cross::<S, f16>(r);
    cross::<S, bf16>(r);
    cross::<S, i64>(r);
    cross::<S, i32>(r);
}

#[test]
fn the_oracle_agrees_with_the_element_functions_on_random_bits() {
    let mut r = Xs(0x0123_4567_89ab_cdef);
    cross_all::<f32>(&mut r);
    cross_all::<f64>(&mut r);
    cross_all::<f16>(&mut r);
    cross_all::<bf16>(&mut r);
    cross_all::<i64>(&mut r);
    cross_all::<i32>(&mut r);
}
