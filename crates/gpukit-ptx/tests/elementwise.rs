//! kernels-cuda/ptx/elementwise.ptx on the emulator against gpukit_core's numerics, bit
//! for bit (any NaN equals any NaN), on inputs full of NaN, ±inf, ±0 and subnormals.

mod common;

use common::*;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{Arith, BinaryOp, FloatElement, UnaryOp};
use gpukit_ptx::{EmuOptions, Module, ParamValue};

trait El: Arith + Pod + std::fmt::Debug {
    const SFX: &'static str;
    fn sample(r: &mut Rng) -> Self;
    fn same(a: Self, b: Self) -> bool;
}

impl El for f32 {
    const SFX: &'static str = "f32";
    fn sample(r: &mut Rng) -> Self {
        r.f32()
    }
    fn same(a: Self, b: Self) -> bool {
        same_f32(a, b)
    }
}
impl El for f64 {
    const SFX: &'static str = "f64";
    fn sample(r: &mut Rng) -> Self {
        r.f64()
    }
    fn same(a: Self, b: Self) -> bool {
        same_f64(a, b)
    }
}
impl El for f16 {
    const SFX: &'static str = "f16";
    fn sample(r: &mut Rng) -> Self {
        f16::from_bits(r.next() as u16)
    }
    fn same(a: Self, b: Self) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }
}
impl El for bf16 {
    const SFX: &'static str = "bf16";
    fn sample(r: &mut Rng) -> Self {
        bf16::from_bits(r.next() as u16)
    }
    fn same(a: Self, b: Self) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }
}
impl El for i64 {
    const SFX: &'static str = "i64";
    fn sample(r: &mut Rng) -> Self {
        r.i64()
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
}
impl El for i32 {
    const SFX: &'static str = "i32";
    fn sample(r: &mut Rng) -> Self {
        r.i32()
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
    }
}

fn opts() -> EmuOptions {
    EmuOptions::default()
}

fn check_binary<T: El>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    // n not a multiple of the block; a grid smaller than n / 256 exercises the
    // grid-stride loop and its unrolled part.
    for (n, grid) in [(1usize, 1u32), (1000, 4), (5003, 3)] {
        let a: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
        let b: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
        for op in BinaryOp::ALL {
            let name = format!("{}_{}", op.name(), T::SFX);
            let (ba, bb, bo) = (buf_of(&a), buf_of(&b), Buf::zeroed(n * T::SIZE));
            run(
                m,
                &name,
                (grid, 1, 1),
                (256, 1, 1),
                0,
                &[&bo, &ba, &bb],
                |p| {
                    vec![
                        ParamValue::ptr(p[0]),
                        ParamValue::ptr(p[1]),
                        ParamValue::ptr(p[2]),
                        ParamValue::i64(n as i64),
                    ]
                },
                &opts(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<T> = read(&bo);
            for i in 0..n {
                let want = T::binary(op, a[i], b[i]);
                assert!(
                    T::same(got[i], want),
                    "{name}[{i}]: {:?} op {:?} = {:?}, want {:?}",
                    a[i],
                    b[i],
                    got[i],
                    want
                );
            }
        }
    }
}

fn check_broadcast<T: El>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    // out [3, 5, 7]; a [3, 1, 7] (stride 0 on axis 1); b [1, 5, 1].
    let dims = [3i64, 5, 7];
    let astr = [7i64, 0, 1];
    let bstr = [0i64, 1, 0];
    let n = 105usize;
    let a: Vec<T> = (0..21).map(|_| T::sample(&mut r)).collect();
    let b: Vec<T> = (0..5).map(|_| T::sample(&mut r)).collect();
    for op in BinaryOp::ALL {
        let name = format!("{}_bc_{}", op.name(), T::SFX);
        let (ba, bb, bo) = (buf_of(&a), buf_of(&b), Buf::zeroed(n * T::SIZE));
        let (bd, bas, bbs) = (buf_of(&dims), buf_of(&astr), buf_of(&bstr));
        run(
            m,
            &name,
            (1, 1, 1),
            (256, 1, 1),
            0,
            &[&bo, &ba, &bb, &bd, &bas, &bbs],
            |p| {
                let mut v: Vec<ParamValue> = p.iter().map(|&x| ParamValue::ptr(x)).collect();
                v.push(ParamValue::i64(3));
                v.push(ParamValue::i64(n as i64));
                v
            },
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<T> = read(&bo);
        for i in 0..3 {
            for (j, &bj) in b.iter().enumerate() {
                for k in 0..7 {
                    let o = i * 35 + j * 7 + k;
                    let want = T::binary(op, a[i * 7 + k], bj);
                    assert!(T::same(got[o], want), "{name}[{o}]");
                }
            }
        }
    }
}

fn check_unary<T: El + FloatElement>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    let n = 777usize;
    let a: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
    for op in UnaryOp::ALL {
        let name = format!("{}_{}", op.name(), T::SFX);
        let (ba, bo) = (buf_of(&a), Buf::zeroed(n * T::SIZE));
        let stats = run(
            m,
            &name,
            (2, 1, 1),
            (256, 1, 1),
            0,
            &[&bo, &ba],
            |p| {
                vec![
                    ParamValue::ptr(p[0]),
                    ParamValue::ptr(p[1]),
                    ParamValue::i64(n as i64),
                ]
            },
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            stats.approx_instructions, 0,
            "{name} uses .approx instructions"
        );
        let got: Vec<T> = read(&bo);
        for i in 0..n {
            let want = op.float(a[i]);
            assert!(
                T::same(got[i], want),
                "{name}[{i}]: f({:?}) = {:?}, want {:?}",
                a[i],
                got[i],
                want
            );
        }
    }
}

#[test]
fn binary_ops_match_the_numerics() {
    let m = shipped("elementwise");
    check_binary::<f32>(&m, 1);
    check_binary::<f64>(&m, 2);
    check_binary::<f16>(&m, 3);
    check_binary::<bf16>(&m, 4);
    check_binary::<i64>(&m, 5);
    check_binary::<i32>(&m, 6);
}

#[test]
fn broadcast_ops_match_the_numerics() {
    let m = shipped("elementwise");
    check_broadcast::<f32>(&m, 11);
    check_broadcast::<f64>(&m, 12);
    check_broadcast::<f16>(&m, 13);
    check_broadcast::<bf16>(&m, 14);
    check_broadcast::<i64>(&m, 15);
    check_broadcast::<i32>(&m, 16);
}

#[test]
fn unary_maps_match_the_numerics() {
    let m = shipped("elementwise");
    check_unary::<f32>(&m, 21);
    check_unary::<f64>(&m, 22);
    check_unary::<f16>(&m, 23);
    check_unary::<bf16>(&m, 24);
}
