//! Unit tests of the ALU: the fast paths against the soft-float core and the
//! reference forms, and `exec` with the destination among the sources.

use super::*;

/// The warp-wide comparison is the lane-by-lane one, for every operator and type,
/// on NaNs, infinities, signed zeros, subnormals and garbage upper bits.
#[test]
fn compare_lanes_is_compare_on_every_lane() {
    use crate::float::{BF16, F16};
    let f32s = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        -f32::INFINITY,
        1e-40,
        -1e-45,
        3.5,
    ];
    let f64s = [
        0.0f64,
        -0.0,
        1.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        5e-324,
        -2.2e-308,
        3.5,
    ];
    let ops = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];
    let tys = [
        CmpTy::U(W::W16),
        CmpTy::U(W::W32),
        CmpTy::U(W::W64),
        CmpTy::S(W::W8),
        CmpTy::S(W::W32),
        CmpTy::S(W::W64),
        CmpTy::F(F32),
        CmpTy::F(F64),
        CmpTy::F(F16),
        CmpTy::F(BF16),
    ];
    let mut a = [0u64; 32];
    let mut b = [0u64; 32];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..40 {
        for l in 0..32 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pick = |k: u64| match (round + k) % 3 {
                0 => u64::from(f32s[(k % 10) as usize].to_bits()) | (seed & 0xFFFF_0000_0000_0000),
                1 => f64s[(k % 10) as usize].to_bits(),
                _ => seed.rotate_left(k as u32),
            };
            a[l] = pick((seed >> 8) % 97);
            b[l] = pick((seed >> 20) % 89);
            if l % 7 == 0 {
                b[l] = a[l];
            }
        }
        for &op in &ops {
            for &ty in &tys {
                for ftz in [false, true] {
                    let c = Cmp { op, ty, ftz };
                    let want =
                        (0..32).fold(0u32, |m, l| m | u32::from(compare(c, a[l], b[l])) << l);
                    assert_eq!(compare_lanes(c, &a, &b), want, "{c:?}");
                }
            }
        }
    }
}

/// Every f16 and bf16 converts to the f32 of the same value (NaNs to NaNs), as the
/// soft-float core reads it.
#[test]
fn f16_as_f32_is_exact_for_every_half() {
    for h in 0..=0xFFFFu64 {
        for (fmt, got) in [
            (crate::float::F16, f16_as_f32(h | 0xABCD_0000)),
            (crate::float::BF16, bf16_as_f32(h | 0xABCD_0000)),
        ] {
            let want = to_f64(fmt, h);
            if want.is_nan() {
                assert!(got.is_nan(), "{h:#x}");
            } else {
                assert_eq!(f64::from(got).to_bits(), want.to_bits(), "{h:#x}");
            }
        }
    }
}

/// The exact widenings' fast path gives the soft-float conversion's bits.
#[test]
fn widening_conversions_match_the_soft_float_path() {
    use crate::float::{BF16, F16};
    let cvt = plain_cvt;
    let mut seed = 0x1234_5678_9abc_def0u64;
    for round in 0..4096u64 {
        let regs: Vec<Lanes> = vec![std::array::from_fn(|l| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Every half once (round 0..2048 covers 65536), then random bits.
            if round < 2048 {
                (round * 32 + l as u64) | (seed << 32)
            } else {
                seed
            }
        })];
        for (from, to) in [(F16, F32), (BF16, F32), (F32, F64)] {
            let mut file = vec![regs[0], [0u64; 32]];
            exec(&cvt(from, to), &mut file, 1, &[0; 4], u32::MAX);
            let got = file[1];
            for l in 0..32 {
                let want = cvt_f2f(from, to, Rnd::Rn, false, false, false, false, regs[0][l]);
                assert_eq!(got[l], want, "{from:?} -> {to:?} of {:#x}", regs[0][l]);
            }
        }
    }
}

/// `exec` gives the same register file whether the destination is a fresh
/// register, one of the sources, or every source, with every lane or some
/// executing (idle lanes keep their value).
#[test]
fn exec_with_the_destination_among_the_sources() {
    let mut seed = 0x0bad_cafe_1234_5678u64;
    let mut lanes = || -> Lanes {
        std::array::from_fn(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed
        })
    };
    let ops = [
        Alu::Add,
        Alu::FmaF32,
        Alu::MulF64,
        Alu::Lop3,
        Alu::Mov,
        Alu::Pack { bits: 16, n: 2 },
        Alu::MinMax(MinMax {
            max: true,
            nan: false,
            xorsign_abs: false,
            ftz: false,
            fmt: F32,
            x2: false,
        }),
    ];
    for f in &ops {
        for exec_mask in [u32::MAX, 0x5555_5555, 1, 0] {
            let file: Vec<Lanes> = (0..4).map(|_| lanes()).collect();
            // The reference: sources 0, 1, 2, 3 into a fresh register 4.
            let mut want = file.clone();
            want.push(file[0]);
            let srcs = [0, 1, 2, 3];
            exec(f, &mut want, 4, &srcs, exec_mask);
            for d in 0..4u32 {
                for srcs in [[0u32, 1, 2, 3], [d, d, d, d]] {
                    let mut got = file.clone();
                    got.push(file[0]);
                    // Put the destination's value in register 4's place.
                    got[4] = file[d as usize];
                    let mut reference = file.clone();
                    reference.push(file[d as usize]);
                    let s4 = srcs.map(|x| if x == d { 4 } else { x });
                    let mut fresh = reference.clone();
                    exec(f, &mut fresh, 4, &s4, exec_mask);
                    exec(f, &mut got, d, &srcs, exec_mask);
                    assert_eq!(
                        got[d as usize], fresh[4],
                        "{f:?} d={d} srcs={srcs:?} exec={exec_mask:#x}"
                    );
                }
            }
            // Partial or full, the idle lanes of a fresh destination keep its value.
            for l in 0..32 {
                if (exec_mask >> l) & 1 == 0 {
                    assert_eq!(want[4][l], file[0][l]);
                }
            }
        }
    }
}

/// f32 to f16 and bf16 with round-to-nearest-even through the branch-free narrowing
/// gives the soft-float core's bits: every f32 exponent with edge mantissas (ties,
/// just above and below), subnormal results, overflow, infinities, NaNs, and
/// random bit patterns.
#[test]
fn f32_narrowing_fast_path_matches_soft_float() {
    let mut vals: Vec<u64> = Vec::new();
    for exp in 0..256u64 {
        for man in [
            0u64, 1, 0xFFF, 0x1000, 0x1001, 0x2000, 0x7FFF, 0x8000, 0x8001, 0x7F_FFFF,
        ] {
            for sign in [0u64, 1 << 31] {
                vals.push(sign | (exp << 23) | man);
            }
        }
    }
    let mut seed = 0x5151_2626_3737_4848u64;
    for _ in 0..200_000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        vals.push(seed >> 32);
    }
    for to in [float::F16, float::BF16] {
        let f = plain_cvt(F32, to);
        for (&x, got) in vals.iter().zip(exec_over(&f, &vals)) {
            let want = cvt_f2f(F32, to, Rnd::Rn, false, false, false, false, x);
            assert_eq!(got, want, "{to:?} of {x:#x}");
        }
    }
}

/// Ties, signed zeros, fractions, huge and tiny values, infinities and NaN: the
/// cases every rounding to an integer must get right.
const ROUNDING_CASES: [f64; 17] = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.5,
    -1.5,
    2.5,
    -2.5,
    0.7,
    -0.7,
    1e300,
    -1e300,
    5e-324,
    -5e-324,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

/// `cvt.rn` from `from` to `to` without modifiers.
fn plain_cvt(from: Fmt, to: Fmt) -> Alu {
    Alu::CvtF2F {
        from,
        to,
        rnd: Rnd::Rn,
        ftz: false,
        sat: false,
        relu: false,
        satfinite: false,
    }
}

/// `f` of each value (a unary operation), run 32 lanes at a time through `exec`.
fn exec_over(f: &Alu, vals: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(vals.len());
    for chunk in vals.chunks(32) {
        let mut x = [0u64; 32];
        x[..chunk.len()].copy_from_slice(chunk);
        let mut file = vec![x, [0u64; 32]];
        exec(f, &mut file, 1, &[0; 4], u32::MAX);
        out.extend_from_slice(&file[1][..chunk.len()]);
    }
    out
}

/// The hardware rounding of `cvt.rn/rz/rm/rpi` for f32 and f64 gives the soft-float
/// core's bits: halves, ties, signed zeros, subnormals, huge values, infinities
/// and NaNs, and random bit patterns.
#[test]
fn round_to_integral_fast_path_matches_soft_float() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut vals64: Vec<u64> = ROUNDING_CASES
        .iter()
        .chain(&[0.49999999999999994, 4503599627370495.5, 4503599627370497.0])
        .chain(&[f64::MIN_POSITIVE, -f64::NAN])
        .map(|v| v.to_bits())
        .collect();
    let mut vals32: Vec<u64> = [
        0.0f32,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        8388607.5,
        8388609.0,
        1e-45,
        -1e-45,
        3.0e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.7,
        -0.7,
    ]
    .iter()
    .map(|v| u64::from(v.to_bits()))
    .collect();
    for _ in 0..4000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        vals64.push(seed);
        vals32.push(seed >> 32);
    }
    for (fmt, vals) in [(F64, &vals64), (F32, &vals32)] {
        for rnd in [Rnd::Rn, Rnd::Rz, Rnd::Rm, Rnd::Rp] {
            let f = Alu::CvtRoundInt {
                fmt,
                rnd,
                ftz: false,
                sat: false,
            };
            for (&x, got) in vals.iter().zip(exec_over(&f, vals)) {
                let want = float::round_to_integral(fmt, x & fmt_mask(fmt), rnd);
                assert_eq!(got, want, "{fmt:?} {rnd:?} {x:#x}");
            }
        }
    }
}

/// Float-to-integer conversions of f32 and f64 to 32- and 64-bit integers, every
/// rounding and signedness, give the soft-float core's bits (NaN, infinities,
/// out-of-range values, ties, signed zeros, random patterns).
#[test]
fn float_to_int_fast_path_matches_soft_float() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut vals: Vec<f64> = ROUNDING_CASES.to_vec();
    vals.extend([
        2147483647.5,
        2147483648.0,
        -2147483648.5,
        -2147483649.0,
        4294967295.7,
        4294967296.0,
        9.3e18,
        -9.3e18,
        1.8e19,
    ]);
    for _ in 0..3000 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        vals.push(f64::from_bits(seed));
        vals.push((seed >> 11) as f64 / (1u64 << 20) as f64 - 4.0e9);
    }
    for from in [F64, F32] {
        let bits: Vec<u64> = vals
            .iter()
            .map(|&v| {
                if from == F64 {
                    v.to_bits()
                } else {
                    u64::from((v as f32).to_bits())
                }
            })
            .collect();
        for rnd in [Rnd::Rn, Rnd::Rz, Rnd::Rm, Rnd::Rp] {
            for to in [W::W32, W::W64] {
                for signed in [true, false] {
                    let f = Alu::CvtF2I {
                        from,
                        rnd,
                        to,
                        signed,
                        ftz: false,
                        nan: 0,
                    };
                    for (&x, got) in bits.iter().zip(exec_over(&f, &bits)) {
                        let v = float::to_int(from, x, rnd, to.bits(), signed, 0);
                        let want = if signed { sx(v, to) as u64 } else { v };
                        assert_eq!(got, want, "{from:?} {rnd:?} {to:?} signed {signed}: {x:#x}");
                    }
                }
            }
        }
    }
}

#[test]
fn bit_field_ops() {
    assert_eq!(bfe(W::W32, false, 0xABCD_1234, 8, 8), 0x12);
    assert_eq!(
        bfe(W::W32, true, 0xABCD_F234, 12, 8),
        0xFFFF_FFFF_FFFF_FFDF & 0xFFFF_FFFF
    );
    assert_eq!(bfe(W::W32, true, 0x8000_0000, 31, 8), 0xFFFF_FFFF);
    assert_eq!(bfe(W::W32, false, 0xFFFF_FFFF, 40, 8), 0);
    assert_eq!(bfi(W::W32, 0xF, 0, 4, 4), 0xF0);
    assert_eq!(bfind(W::W32, false, false, 0x10), 4);
    assert_eq!(bfind(W::W32, false, true, 0x10), 27);
    assert_eq!(bfind(W::W32, false, false, 0), 0xFFFF_FFFF);
    assert_eq!(prmt(0, 0x3322_1100, 0x7766_5544, 0x5410), 0x5544_1100);
    assert_eq!(prmt(0, 0x0000_0080, 0, 0x8880), 0xFFFF_FF80);
    assert_eq!(lop3(0b1100, 0b1010, 0b0111, 0x96), 0b0001);
}

#[test]
fn min_max_rules() {
    let mm = |max, nan| MinMax {
        max,
        nan,
        xorsign_abs: false,
        ftz: false,
        fmt: F32,
        x2: false,
    };
    let b = |x: f32| u64::from(x.to_bits());
    assert_eq!(min_max(mm(false, false), b(-0.0), b(0.0)), b(-0.0));
    assert_eq!(min_max(mm(false, false), b(0.0), b(-0.0)), b(-0.0));
    assert_eq!(min_max(mm(true, false), b(-0.0), b(0.0)), b(0.0));
    assert_eq!(min_max(mm(true, false), b(0.0), b(-0.0)), b(0.0));
    assert_eq!(min_max(mm(true, false), b(f32::NAN), b(1.0)), b(1.0));
    assert_eq!(min_max(mm(false, false), b(2.0), b(f32::NAN)), b(2.0));
    assert_eq!(
        min_max(mm(true, true), b(f32::NAN), b(1.0)),
        u64::from(CANON32)
    );
    assert_eq!(min_max(mm(true, false), b(3.0), b(-7.0)), b(3.0));
}

#[test]
fn comparisons_with_nan() {
    let c = |op| Cmp {
        op,
        ty: CmpTy::F(F32),
        ftz: false,
    };
    let (n, one) = (u64::from(f32::NAN.to_bits()), u64::from(1.0f32.to_bits()));
    assert!(!compare(c(CmpOp::Ne), n, one));
    assert!(compare(c(CmpOp::Neu), n, one));
    assert!(compare(c(CmpOp::Nan), n, one));
    assert!(!compare(c(CmpOp::Num), n, one));
    assert!(compare(c(CmpOp::Ne), one, 0));
    let s = Cmp {
        op: CmpOp::Lt,
        ty: CmpTy::S(W::W32),
        ftz: false,
    };
    assert!(compare(s, 0xFFFF_FFFF, 0));
    let u = Cmp {
        op: CmpOp::Lt,
        ty: CmpTy::U(W::W32),
        ftz: false,
    };
    assert!(!compare(u, 0xFFFF_FFFF, 0));
}

/// Integer `cvt` without saturation (the shift-pair path) and with it, for every
/// width and signedness pair, against the conversion written out in i128: the value
/// extended from the source width, clamped (`.sat`) or wrapped to the destination
/// width, and extended in the register by the destination's signedness.
#[test]
fn integer_conversions_match_the_i128_reference() {
    let widths = [W::W8, W::W16, W::W32, W::W64];
    let mut vals: Vec<u64> = vec![
        0,
        1,
        0x7F,
        0x80,
        0xFF,
        0x7FFF,
        0x8000,
        0xFFFF,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFF,
        i64::MAX as u64,
        i64::MIN as u64,
        u64::MAX,
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..50 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        vals.push(seed);
    }
    let reference = |x: u64, from: W, fs: bool, to: W, ts: bool, sat: bool| -> u64 {
        let fb = from.bits();
        let low = if fb == 64 { x } else { x & ((1u64 << fb) - 1) };
        let v: i128 = if fs && fb < 64 && (low >> (fb - 1)) & 1 == 1 {
            i128::from(low) - (1i128 << fb)
        } else if fs && fb == 64 {
            i128::from(low as i64)
        } else {
            i128::from(low)
        };
        let tb = to.bits();
        let (lo, hi) = if ts {
            (-(1i128 << (tb - 1)), (1i128 << (tb - 1)) - 1)
        } else {
            (0, (1i128 << tb) - 1)
        };
        let v = if sat { v.clamp(lo, hi) } else { v };
        let m = if tb == 64 { u64::MAX } else { (1u64 << tb) - 1 };
        let t = (v as u64) & m;
        if ts && tb < 64 && (t >> (tb - 1)) & 1 == 1 {
            t | !m
        } else {
            t
        }
    };
    for from in widths {
        for to in widths {
            for from_signed in [false, true] {
                for to_signed in [false, true] {
                    for sat in [false, true] {
                        let f = Alu::CvtInt {
                            from,
                            from_signed,
                            to,
                            to_signed,
                            sat,
                        };
                        let got = exec_over(&f, &vals);
                        for (&x, &g) in vals.iter().zip(&got) {
                            let want = reference(x, from, from_signed, to, to_signed, sat);
                            assert_eq!(
                                g, want,
                                "cvt {from:?}{from_signed} -> {to:?}{to_signed} sat {sat} of {x:#x}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Integer to f32/f64 with round to nearest (the hardware conversion) gives the
/// soft-float core's bits for every source width and signedness: zero, the extremes,
/// values past 2^24 and 2^53 that round (ties included), and random bits.
#[test]
fn int_to_float_fast_path_matches_soft_float() {
    let mut vals: Vec<u64> = vec![
        0,
        1,
        u64::MAX,
        i64::MIN as u64,
        i64::MAX as u64,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFF,
        (1 << 24) + 1,
        (1 << 24) + 3,
        (1 << 53) + 1,
        (1 << 53) + 3,
        0x0123_4567_89AB_CDEF,
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        vals.push(seed);
        vals.push(seed >> (seed % 64));
    }
    for from in [W::W8, W::W16, W::W32, W::W64] {
        for signed in [false, true] {
            for to in [F32, F64] {
                let f = Alu::CvtI2F {
                    from,
                    signed,
                    to,
                    rnd: Rnd::Rn,
                    sat: false,
                };
                let got = exec_over(&f, &vals);
                for (&x, &g) in vals.iter().zip(&got) {
                    let (neg, mag) = if signed {
                        let v = sx(x, from);
                        (v < 0, u128::from(v.unsigned_abs()))
                    } else {
                        (false, u128::from(zx(x, from)))
                    };
                    let want = float::from_int(to, neg, mag, Rnd::Rn);
                    assert_eq!(
                        g, want,
                        "cvt.rn {from:?} signed {signed} -> {to:?} of {x:#x}"
                    );
                }
            }
        }
    }
}
