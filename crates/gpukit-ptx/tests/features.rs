//! Instruction coverage (tests/fixtures/features.cu): warp shuffles, votes, reductions
//! and matches, a shared-memory block reduction over a partial warp, atomics, recursion
//! and local memory, directed roundings and conversions, integer intrinsics and inline
//! PTX. The references below are written from the PTX ISA's definitions, independently
//! of the emulator's code (directed roundings are checked with exact f64 arithmetic).

mod common;

use common::*;
use gpukit_ptx::{EmuOptions, ParamValue};
use half::{bf16, f16};

fn opts() -> EmuOptions {
    EmuOptions::default()
}

#[test]
fn warp_operations() {
    let m = fixture("features");
    let mut r = Rng(5);
    let input: Vec<u32> = (0..64)
        .map(|i| match i % 7 {
            0 => 0,
            1 => (r.next() % 4) as u32,
            _ => r.next() as u32,
        })
        .collect();
    let (bi, bo) = (buf_of(&input), Buf::zeroed(64 * 16 * 4));
    run(
        &m,
        "warp_ops",
        (1, 1, 1),
        (64, 1, 1),
        0,
        &[&bo, &bi],
        |p| vec![ParamValue::ptr(p[0]), ParamValue::ptr(p[1])],
        &opts(),
    )
    .unwrap();
    let got: Vec<u32> = read(&bo);
    for w in 0..2 {
        let v = &input[w * 32..w * 32 + 32];
        let ballot = (0..32)
            .filter(|&l| v[l] & 1 == 1)
            .fold(0u32, |m, l| m | 1 << l);
        let any = v.iter().any(|&x| x > 3_000_000_000) as u32;
        let all = v.iter().all(|&x| x != 0) as u32;
        let sum = v.iter().fold(0u32, |a, &x| a.wrapping_add(x));
        let min = *v.iter().min().unwrap();
        for l in 0..32usize {
            let o = &got[(w * 32 + l) * 16..(w * 32 + l + 1) * 16];
            let t = w * 32 + l;
            let want = [
                if l + 3 <= 31 { v[l + 3] } else { v[l] },
                if l >= 5 { v[l - 5] } else { v[l] },
                v[l ^ 6],
                v[(l * 7) & 31],
                v[(l & !7) + 3],
                if l + 2 <= ((l & 16) | 15) {
                    v[l + 2]
                } else {
                    v[l]
                },
                ballot,
                any,
                all,
                sum,
                min,
                (0..32)
                    .filter(|&k| v[k] & 3 == v[l] & 3)
                    .fold(0u32, |m, k| m | 1 << k),
                if l < 10 { v[9] } else { v[31] },
                if l % 3 == 0 { 0x4924_9249 } else { 0 },
                v[l].count_ones() + 100 * v[l].leading_zeros(),
                v[l].reverse_bits(),
            ];
            for k in 0..16 {
                assert_eq!(o[k], want[k], "thread {t} result {k} (input {:#x})", v[l]);
            }
        }
    }
}

#[test]
fn block_reduction_over_a_partial_warp() {
    let m = fixture("features");
    let mut r = Rng(6);
    let (blocks, threads) = (3usize, 80usize);
    let input: Vec<u32> = (0..blocks * threads).map(|_| r.next() as u32).collect();
    let (bi, bo) = (buf_of(&input), Buf::zeroed(blocks * 4));
    run(
        &m,
        "block_sum",
        (blocks as u32, 1, 1),
        (threads as u32, 1, 1),
        0,
        &[&bo, &bi],
        |p| vec![ParamValue::ptr(p[0]), ParamValue::ptr(p[1])],
        &opts(),
    )
    .unwrap();
    let got: Vec<u32> = read(&bo);
    for b in 0..blocks {
        let want = input[b * threads..(b + 1) * threads]
            .iter()
            .fold(0u32, |a, &x| a.wrapping_add(x));
        assert_eq!(got[b], want, "block {b}");
    }
}

#[test]
fn atomics() {
    let m = fixture("features");
    let counters = buf_of(&[0i32, -1, 1000, 0, 0, 0, -1, 0, 0]);
    let fvals = buf_of(&[0.0f32; 3]);
    let dvals = buf_of(&[0.0f64]);
    let (grid, block) = (3u32, 64u32);
    run(
        &m,
        "atomics",
        (grid, 1, 1),
        (block, 1, 1),
        0,
        &[&counters, &fvals, &dvals],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::ptr(p[2]),
            ]
        },
        &opts(),
    )
    .unwrap();
    let n = (grid * block) as i32;
    let c: Vec<i32> = read(&counters);
    let xor = (0..n).fold(0, |a, t| a ^ t);
    assert_eq!(
        c,
        vec![
            n,
            n - 1,
            -(n - 1),
            n,
            n % 7,
            -1,
            0xFFFF_0000u32 as i32,
            xor,
            42
        ]
    );
    let f: Vec<f32> = read(&fvals);
    assert_eq!(f[0], n as f32);
    // Global f32 atomic adds flush subnormals (PTX ISA, atom); shared ones keep them.
    assert_eq!(f[1].to_bits(), 0);
    assert_eq!(f[2], 1e-40f32);
    assert_eq!(read::<f64>(&dvals)[0], f64::from(n) * 0.5);
}

fn fib(n: i32) -> i32 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

#[test]
fn recursion_and_local_memory() {
    let m = fixture("features");
    assert!(m.kernel("calls").unwrap().instructions > 0);
    let mut r = Rng(7);
    let n = 100usize;
    let input: Vec<i32> = (0..n).map(|_| (r.next() % 100_000) as i32).collect();
    let (bi, bo) = (buf_of(&input), Buf::zeroed(2 * n * 4));
    run(
        &m,
        "calls",
        (2, 1, 1),
        (64, 1, 1),
        0,
        &[&bo, &bi],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::i32(n as i32),
            ]
        },
        &opts(),
    )
    .unwrap();
    let got: Vec<i32> = read(&bo);
    for t in 0..n {
        assert_eq!(got[2 * t], fib(input[t] & 15), "fib at {t}");
        let k = ((input[t] >> 4) % 24) as usize;
        let want = input[(t + k) % n].wrapping_mul(k as i32 + 1);
        assert_eq!(got[2 * t + 1], want, "local at {t}");
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dir {
    Z,
    D,
    U,
}

/// Rounds an exactly known value to f32 in a direction.
fn round_dir(x: f64, d: Dir) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    let r = x as f32;
    if f64::from(r) == x {
        return r;
    }
    match d {
        Dir::Z => {
            if f64::from(r).abs() > x.abs() {
                if r > 0.0 { r.next_down() } else { r.next_up() }
            } else {
                r
            }
        }
        Dir::D => {
            if f64::from(r) > x {
                r.next_down()
            } else {
                r
            }
        }
        Dir::U => {
            if f64::from(r) < x {
                r.next_up()
            } else {
                r
            }
        }
    }
}

/// `x + y` in f64 if exact.
fn exact_sum(x: f32, y: f32) -> Option<f64> {
    let (a, b) = (f64::from(x), f64::from(y));
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s.is_finite() && err == 0.0).then_some(s)
}

/// The directed quotient of finite nonzero `x / y` whose result is a normal f32.
fn div_dir(x: f32, y: f32, d: Dir) -> Option<f32> {
    let (a, b) = (f64::from(x), f64::from(y));
    let r0 = (a / b) as f32;
    if !r0.is_normal() || !r0.next_down().is_normal() || !r0.next_up().is_normal() {
        return None;
    }
    // sign(c - q) = sign(c*y - x) * sign(y); products are exact in f64.
    let cmp = |c: f32| {
        let s = f64::from(c) * b - a;
        if b > 0.0 { s } else { -s }
    };
    let cands = [r0.next_down(), r0, r0.next_up()];
    if let Some(&c) = cands.iter().find(|&&c| cmp(c) == 0.0) {
        return Some(c);
    }
    let below = *cands.iter().rfind(|&&c| cmp(c) < 0.0)?;
    let above = *cands.iter().find(|&&c| cmp(c) > 0.0)?;
    Some(match d {
        Dir::D => below,
        Dir::U => above,
        Dir::Z => {
            if below >= 0.0 {
                below
            } else {
                above
            }
        }
    })
}

fn sqrt_dir(x: f32, d: Dir) -> Option<f32> {
    if !(x.is_normal() && x > 0.0) {
        return None;
    }
    let r0 = f64::from(x).sqrt() as f32;
    let cmp = |c: f32| f64::from(c) * f64::from(c) - f64::from(x);
    let cands = [r0.next_down(), r0, r0.next_up()];
    if let Some(&c) = cands.iter().find(|&&c| cmp(c) == 0.0) {
        return Some(c);
    }
    let below = *cands.iter().rfind(|&&c| cmp(c) < 0.0)?;
    let above = *cands.iter().find(|&&c| cmp(c) > 0.0)?;
    Some(if d == Dir::U { above } else { below })
}

fn f2i(x: f32, mode: fn(f32) -> f32) -> u32 {
    if x.is_nan() {
        return 0;
    }
    let v = mode(x);
    (if v >= 2_147_483_648.0 {
        i32::MAX
    } else if v < -2_147_483_648.0 {
        i32::MIN
    } else {
        v as i32
    }) as u32
}

/// Rounds an exact value to a 16-bit format toward zero, given its RN rounding's bits.
fn to16_rz(x: f64, rn_bits: u16, back: impl Fn(u16) -> f64) -> u16 {
    if x.is_nan() {
        return 0x7FFF;
    }
    let r = back(rn_bits);
    if r.abs() > x.abs() {
        rn_bits - 1
    } else {
        rn_bits
    }
}

fn min_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() {
        y
    } else if y.is_nan() {
        x
    } else if x == y {
        if x.is_sign_negative() { x } else { y }
    } else {
        x.min(y)
    }
}

fn max_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() {
        y
    } else if y.is_nan() {
        x
    } else if x == y {
        if x.is_sign_negative() { y } else { x }
    } else {
        x.max(y)
    }
}

/// Moderate values (inexact results in every direction) and special ones.
fn operand(r: &mut Rng) -> f32 {
    if r.next() % 5 < 3 {
        let e = (r.next() % 21) as i32 - 10;
        let m = 1.0 + (r.next() % (1 << 23)) as f32 / (1 << 23) as f32;
        let s = if r.next() & 1 == 1 { -1.0 } else { 1.0 };
        s * m * 2f32.powi(e)
    } else {
        r.f32()
    }
}

#[test]
fn float_roundings_and_conversions() {
    let m = fixture("features");
    let mut r = Rng(8);
    let n = 3000usize;
    let a: Vec<f32> = (0..n).map(|_| operand(&mut r)).collect();
    let b: Vec<f32> = (0..n).map(|_| operand(&mut r)).collect();
    let (ba, bb, bo) = (buf_of(&a), buf_of(&b), Buf::zeroed(n * 24 * 4));
    run(
        &m,
        "float_ops",
        (12, 1, 1),
        (256, 1, 1),
        0,
        &[&bo, &ba, &bb],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::ptr(p[2]),
                ParamValue::i32(n as i32),
            ]
        },
        &opts(),
    )
    .unwrap();
    let got: Vec<u32> = read(&bo);
    let mut checked = [0usize; 24];
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let o = &got[24 * i..24 * i + 24];
        let f = |k: usize| f32::from_bits(o[k]);
        let mut check = |k: usize, want: Option<f32>| {
            if let Some(w) = want {
                assert!(
                    same_f32(f(k), w),
                    "element {i} result {k}: x={x:e} y={y:e}: got {:e}, want {w:e}",
                    f(k)
                );
                checked[k] += 1;
            }
        };
        let finite = x.is_finite() && y.is_finite();
        for (k, d) in [(0, Dir::Z), (1, Dir::D), (2, Dir::U)] {
            let want = if x.is_nan() || y.is_nan() {
                Some(f32::NAN)
            } else if x == 0.0 && y == 0.0 {
                Some(if x.is_sign_negative() == y.is_sign_negative() {
                    x
                } else if d == Dir::D {
                    -0.0
                } else {
                    0.0
                })
            } else if finite {
                exact_sum(x, y).map(|s| {
                    if s == 0.0 {
                        if d == Dir::D { -0.0 } else { 0.0 }
                    } else {
                        round_dir(s, d)
                    }
                })
            } else {
                Some(x + y)
            };
            check(k, want);
        }
        for (k, d) in [(3, Dir::Z), (4, Dir::D), (5, Dir::U)] {
            let want = if finite {
                Some(round_dir(f64::from(x) * f64::from(y), d))
            } else {
                Some(x * y)
            };
            check(k, want);
        }
        for (k, d) in [(6, Dir::Z), (7, Dir::D), (8, Dir::U)] {
            let want = if x.is_finite() && y.is_finite() && x != 0.0 && y != 0.0 {
                div_dir(x, y, d)
            } else if x.is_nan()
                || y.is_nan()
                || (x.is_infinite() && y.is_infinite())
                || (x == 0.0 && y == 0.0)
            {
                Some(f32::NAN)
            } else {
                Some(x / y)
            };
            check(k, want);
        }
        for (k, d) in [(9, Dir::Z), (10, Dir::D), (11, Dir::U)] {
            let ax = x.abs();
            let want = if ax.is_normal() {
                sqrt_dir(ax, d)
            } else if ax.is_nan() {
                Some(f32::NAN)
            } else if ax == 0.0 || ax.is_infinite() {
                Some(ax)
            } else {
                None
            };
            check(k, want);
        }
        check(12, Some(min_f32(x, y)));
        check(13, Some(max_f32(x, y)));
        let fi = |k: usize, v: u32| (k, f32::from_bits(v));
        for (k, w) in [
            fi(14, f2i(x, f32::round_ties_even)),
            fi(15, f2i(x, f32::trunc)),
            fi(16, f2i(x, f32::floor)),
            fi(17, f2i(x, f32::ceil)),
        ] {
            assert_eq!(o[k], w.to_bits(), "element {i} result {k}: x={x:e}");
        }
        let u = if y.is_nan() || y <= -1.0 {
            0
        } else if y >= 4_294_967_296.0 {
            u32::MAX
        } else {
            y.trunc() as u32
        };
        assert_eq!(o[18], u, "element {i}: __float2uint_rz({y:e})");
        check(19, Some(round_dir(f64::from(y.to_bits() as i32), Dir::Z)));
        check(20, Some(round_dir(f64::from(y.to_bits()), Dir::U)));
        // f16 / bf16, round to nearest even and toward zero.
        let h_rn = f16::from_f32(x);
        let h_rz = to16_rz(f64::from(x), f16::from_f64(f64::from(x)).to_bits(), |b| {
            f16::from_bits(b).to_f64()
        });
        let (g_rn, g_rz) = (o[21] as u16, (o[21] >> 16) as u16);
        let same16 =
            |g: u16, w: u16, nan: bool| (nan && (g & 0x7C00 == 0x7C00 && g & 0x3FF != 0)) || g == w;
        assert!(
            same16(g_rn, h_rn.to_bits(), x.is_nan()),
            "element {i}: f16 rn of {x:e}: {g_rn:#x}"
        );
        assert!(
            same16(g_rz, h_rz, x.is_nan()),
            "element {i}: f16 rz of {x:e}: {g_rz:#x} want {h_rz:#x}"
        );
        let b_rn = bf16::from_f32(x);
        let b_rz = to16_rz(f64::from(x), bf16::from_f64(f64::from(x)).to_bits(), |b| {
            bf16::from_bits(b).to_f64()
        });
        let (g_rn, g_rz) = (o[22] as u16, (o[22] >> 16) as u16);
        let same_b =
            |g: u16, w: u16, nan: bool| (nan && (g & 0x7F80 == 0x7F80 && g & 0x7F != 0)) || g == w;
        assert!(
            same_b(g_rn, b_rn.to_bits(), x.is_nan()),
            "element {i}: bf16 rn of {x:e}: {g_rn:#x}"
        );
        assert!(
            same_b(g_rz, b_rz, x.is_nan()),
            "element {i}: bf16 rz of {x:e}: {g_rz:#x} want {b_rz:#x}"
        );
        let sat = if x.is_nan() || x <= 0.0 {
            0.0
        } else {
            x.min(1.0)
        };
        assert_eq!(o[23], sat.to_bits(), "element {i}: saturate({x:e})");
    }
    // The exact references covered most inputs of every directed operation.
    for (k, c) in checked.iter().enumerate().take(12) {
        assert!(
            *c > n / 2,
            "result {k} checked for only {c} of {n} elements"
        );
    }
}

#[test]
fn integer_intrinsics() {
    let m = fixture("features");
    let mut r = Rng(9);
    let n = 2000usize;
    let a: Vec<u32> = (0..n)
        .map(|i| {
            if i % 9 == 0 {
                [0, 1, u32::MAX, 0x8000_0000][i % 4]
            } else {
                r.next() as u32
            }
        })
        .collect();
    let b: Vec<u32> = (0..n)
        .map(|i| {
            if i % 11 == 0 {
                [0, 1, u32::MAX, 32][i % 4]
            } else {
                r.next() as u32
            }
        })
        .collect();
    let (ba, bb, bo) = (buf_of(&a), buf_of(&b), Buf::zeroed(n * 16 * 4));
    run(
        &m,
        "int_ops",
        (8, 1, 1),
        (256, 1, 1),
        0,
        &[&bo, &ba, &bb],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::ptr(p[2]),
                ParamValue::i32(n as i32),
            ]
        },
        &opts(),
    )
    .unwrap();
    let got: Vec<u32> = read(&bo);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let o = &got[16 * i..16 * i + 16];
        let cat = (u64::from(y) << 32) | u64::from(x);
        let bytes = cat.to_le_bytes();
        let sel = y & 0x7777;
        let perm = (0..4).fold(0u32, |acc, k| {
            acc | u32::from(bytes[((sel >> (4 * k)) & 7) as usize]) << (8 * k)
        });
        let s24 = |v: u32| ((v << 8) as i32) >> 8;
        let sdiv = if y as i32 != 0 && !(x as i32 == i32::MIN && y as i32 == -1) {
            ((x as i32) / (y as i32)) as u32
        } else {
            0
        };
        let want = [
            perm,
            ((cat << (x & 31)) >> 32) as u32,
            (cat >> (x & 31)) as u32,
            ((cat << x.min(32)) >> 32) as u32,
            ((u64::from(x) * u64::from(y)) >> 32) as u32,
            ((i64::from(x as i32) * i64::from(y as i32)) >> 32) as u32,
            if x == 0 { 0 } else { x.trailing_zeros() + 1 },
            x.abs_diff(y).wrapping_add(7),
            (x & 0xFF_FFFF).wrapping_mul(y & 0xFF_FFFF),
            s24(x).wrapping_mul(s24(y)) as u32,
            (x >> (y & 31)) & 0xFF,
            ((x as i32) >> (y & 31)) as u32,
            x.checked_div(y).unwrap_or(0),
            if y != 0 { x % y } else { 0 },
            sdiv,
            (((u128::from(cat.rotate_left(32)) * 0x9E37_79B9_7F4A_7C15u128) >> 64) as u64 >> 7)
                as u32,
        ];
        for k in 0..16 {
            assert_eq!(o[k], want[k], "element {i} result {k}: x={x:#x} y={y:#x}");
        }
    }
}

fn bfe_s32(a: u32, pos: u32, len: u32) -> u32 {
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let sbit = if len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(31)) & 1
    };
    (0..32).fold(0u32, |d, i| {
        d | (if i < len && pos + i <= 31 {
            (a >> (pos + i)) & 1
        } else {
            sbit
        }) << i
    })
}

fn bfi_b32(a: u32, b: u32, pos: u32, len: u32) -> u32 {
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let mut f = b;
    let mut i = 0;
    while i < len && pos + i <= 31 {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

fn prmt_mode(a: u32, b: u32, c: u32, table: [[u32; 4]; 4]) -> u32 {
    let bytes = ((u64::from(b) << 32) | u64::from(a)).to_le_bytes();
    let s = table[(c & 3) as usize];
    (0..4).fold(0u32, |d, k| d | u32::from(bytes[s[k] as usize]) << (8 * k))
}

fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        if x.is_sign_negative() { -0.0 } else { 0.0 }
    } else {
        x
    }
}

#[test]
fn inline_ptx() {
    let m = fixture("features");
    let mut r = Rng(10);
    let n = 2000usize;
    let a: Vec<u32> = (0..n)
        .map(|_| {
            operand(&mut r).to_bits()
                ^ if r.next().is_multiple_of(7) {
                    r.next() as u32
                } else {
                    0
                }
        })
        .collect();
    let b: Vec<u32> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                a[i]
            } else {
                operand(&mut r).to_bits()
            }
        })
        .collect();
    let (ba, bb, bo) = (buf_of(&a), buf_of(&b), Buf::zeroed(n * 16 * 4));
    run(
        &m,
        "asm_ops",
        (8, 1, 1),
        (256, 1, 1),
        0,
        &[&bo, &ba, &bb],
        |p| {
            vec![
                ParamValue::ptr(p[0]),
                ParamValue::ptr(p[1]),
                ParamValue::ptr(p[2]),
                ParamValue::i32(n as i32),
            ]
        },
        &opts(),
    )
    .unwrap();
    let got: Vec<u32> = read(&bo);
    // Byte selections of prmt's special modes (PTX ISA table), indexed by c[1:0].
    let f4e = [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]];
    let ecl = [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]];
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
        let o = &got[16 * i..16 * i + 16];
        let min_nan = if fx.is_nan() || fy.is_nan() {
            0x7FFF_FFFF
        } else {
            min_f32(fx, fy).to_bits()
        };
        let min_ftz = ftz(min_f32(ftz(fx), ftz(fy)));
        let rni = if fx.is_nan() {
            f32::NAN
        } else {
            fx.round_ties_even()
        };
        let h = |v: f32| u32::from(f16::from_f32(v).to_bits());
        let neu = fx.is_nan() || fy.is_nan() || fx != fy;
        let (lo, carry) = x.overflowing_add(y);
        let hi = x.wrapping_add(carry as u32);
        let want = [
            bfe_s32(x, y & 63, (y >> 8) & 63),
            bfi_b32(x, y, x & 63, (y >> 8) & 63),
            prmt_mode(x, y, x, f4e),
            prmt_mode(x, y, y, ecl),
            if y & 63 >= 32 { 0 } else { x << (y & 63) },
            ((x as i32) >> (y & 63).min(31)) as u32,
            (x as i32).saturating_add(y as i32) as u32,
            (x & y) | (x & (x ^ y)) | (y & (x ^ y)),
            {
                let v = x >> (y & 31);
                if v == 0 {
                    u32::MAX
                } else {
                    31 - v.leading_zeros()
                }
            },
            min_nan,
            min_ftz.to_bits(),
            rni.to_bits(),
            (h(fx) << 16) | h(fy),
            if neu { 1 } else { 2 },
            fx.is_subnormal() as u32,
            hi.wrapping_mul(65536).wrapping_add(lo),
        ];
        for k in 0..16 {
            let ok = match k {
                10 | 11 => same_f32(f32::from_bits(o[k]), f32::from_bits(want[k])),
                12 => {
                    // f16 NaNs: any NaN.
                    let nan16 = |v: u32| v & 0x7C00 == 0x7C00 && v & 0x3FF != 0;
                    let (gh, gl, wh, wl) =
                        (o[k] >> 16, o[k] & 0xFFFF, want[k] >> 16, want[k] & 0xFFFF);
                    (gh == wh || (nan16(gh) && nan16(wh))) && (gl == wl || (nan16(gl) && nan16(wl)))
                }
                _ => o[k] == want[k],
            };
            assert!(
                ok,
                "element {i} result {k}: x={x:#x} y={y:#x}: got {:#x}, want {:#x}",
                o[k], want[k]
            );
        }
    }
}
