//! The shipped reduction, linear-algebra and normalisation kernels on the emulator
//! (racecheck on), launched as gpukit-cuda's plans launch them, against
//! gpukit-reference bit for bit (any NaN equals any NaN).

mod common;

use common::*;
use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{Arith, FloatElement};
use gpukit_ptx::{EmuOptions, Module, ParamValue};

trait El: Arith + Pod + std::fmt::Debug + PartialEq {
    const SFX: &'static str;
    fn sample(r: &mut Rng) -> Self;
    fn same(a: Self, b: Self) -> bool;
}

macro_rules! float_el {
    ($t:ty, $sfx:literal, $gen:expr) => {
        impl El for $t {
            const SFX: &'static str = $sfx;
            fn sample(r: &mut Rng) -> Self {
                let f: fn(&mut Rng) -> $t = $gen;
                f(r)
            }
            fn same(a: Self, b: Self) -> bool {
                let (x, y) = (a.to_f64(), b.to_f64());
                (x.is_nan() && y.is_nan()) || bits(a) == bits(b)
            }
        }
    };
}

fn bits<T: Pod>(x: T) -> Vec<u8> {
    let mut v = Vec::new();
    x.to_le(&mut v);
    v
}

trait F64 {
    fn to_f64(self) -> f64;
}
impl F64 for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}
impl F64 for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}
impl F64 for f16 {
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}
impl F64 for bf16 {
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

/// Mostly ordinary values (sums stay finite and rounding matters), some specials.
fn ordinary(r: &mut Rng) -> f64 {
    if r.next().is_multiple_of(50) {
        [0.0, -0.0, f64::NAN, f64::INFINITY][(r.next() % 4) as usize]
    } else {
        ((r.next() % 2_000_001) as f64 / 1000.0 - 1000.0) * 1.000_000_123
    }
}

float_el!(f32, "f32", |r| ordinary(r) as f32);
float_el!(f64, "f64", ordinary);
float_el!(f16, "f16", |r| f16::from_f64(ordinary(r) / 64.0));
float_el!(bf16, "bf16", |r| bf16::from_f64(ordinary(r)));

impl El for i32 {
    const SFX: &'static str = "i32";
    fn sample(r: &mut Rng) -> Self {
        r.i32()
    }
    fn same(a: Self, b: Self) -> bool {
        a == b
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

fn opts() -> EmuOptions {
    EmuOptions::default()
}

const CHUNK: usize = 8192;

fn check_sum<T: El>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    for n in [0usize, 1, 31, 1000, CHUNK, CHUNK + 1, 3 * CHUNK + 77] {
        let a: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
        let (ba, bo) = (buf_of(&a), Buf::zeroed(T::SIZE));
        let name = format!("sum_{}", T::SFX);
        if n <= CHUNK {
            run(
                m,
                &name,
                (1, 1, 1),
                (32, 1, 1),
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
            .unwrap_or_else(|e| panic!("{name} n={n}: {e}"));
        } else {
            let nc = n.div_ceil(CHUNK);
            let acc = if T::SIZE == 8 { 8 } else { 4 };
            let part = Buf::zeroed(nc * acc);
            let chunks = format!("sum_chunks_{}", T::SFX);
            run(
                m,
                &chunks,
                ((nc as u32).div_ceil(8), 1, 1),
                (256, 1, 1),
                0,
                &[&part, &ba],
                |p| {
                    vec![
                        ParamValue::ptr(p[0]),
                        ParamValue::ptr(p[1]),
                        ParamValue::i64(n as i64),
                    ]
                },
                &opts(),
            )
            .unwrap_or_else(|e| panic!("{chunks} n={n}: {e}"));
            let partials = format!("sum_partials_{}", T::SFX);
            run(
                m,
                &partials,
                (1, 1, 1),
                (32, 1, 1),
                0,
                &[&bo, &part],
                |p| {
                    vec![
                        ParamValue::ptr(p[0]),
                        ParamValue::ptr(p[1]),
                        ParamValue::i64(nc as i64),
                    ]
                },
                &opts(),
            )
            .unwrap_or_else(|e| panic!("{partials} n={n}: {e}"));
        }
        let got: Vec<T> = read(&bo);
        let want = gpukit_reference::sum(&a);
        assert!(
            T::same(got[0], want),
            "{name} n={n}: {:?}, want {want:?}",
            got[0]
        );
    }
}

#[test]
fn sums_follow_the_reduction_shape() {
    let m = shipped("reduce");
    check_sum::<f32>(&m, 1);
    check_sum::<f64>(&m, 2);
    check_sum::<f16>(&m, 3);
    check_sum::<bf16>(&m, 4);
    check_sum::<i32>(&m, 5);
    check_sum::<i64>(&m, 6);
}

fn check_softmax<T: El + FloatElement>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    for (rows, cols) in [(20usize, 300usize), (3, 1), (9, 64)] {
        let a: Vec<T> = (0..rows * cols).map(|_| T::sample(&mut r)).collect();
        let (ba, bo) = (buf_of(&a), Buf::zeroed(rows * cols * T::SIZE));
        let name = format!("softmax_{}", T::SFX);
        run(
            m,
            &name,
            ((rows as u32).div_ceil(8), 1, 1),
            (256, 1, 1),
            0,
            &[&bo, &ba],
            |p| {
                vec![
                    ParamValue::ptr(p[0]),
                    ParamValue::ptr(p[1]),
                    ParamValue::i64(rows as i64),
                    ParamValue::i64(cols as i64),
                ]
            },
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<T> = read(&bo);
        let want = gpukit_reference::softmax_rows(&a, rows, cols);
        for i in 0..rows * cols {
            assert!(
                T::same(got[i], want[i]),
                "{name} [{i}]: {:?}, want {:?}",
                got[i],
                want[i]
            );
        }
    }
}

#[test]
fn softmax_rows_match() {
    let m = shipped("reduce");
    check_softmax::<f32>(&m, 11);
    check_softmax::<f64>(&m, 12);
    check_softmax::<bf16>(&m, 13);
}

fn check_bmm<T: El + FloatElement>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    let (batch, mm, k, n) = (2usize, 70usize, 33usize, 50usize);
    let a: Vec<T> = (0..batch * mm * k).map(|_| T::sample(&mut r)).collect();
    let b: Vec<T> = (0..batch * k * n).map(|_| T::sample(&mut r)).collect();
    let want = gpukit_reference::bmm(&a, &b, batch, mm, k, n, mm * k, k * n);
    let f64_ty = T::SIZE == 8;
    for (entry, (tm, tn)) in [
        (
            format!("bmm_{}", T::SFX),
            if f64_ty { (64, 64) } else { (128, 64) },
        ),
        (
            format!("bmm_small_{}", T::SFX),
            if f64_ty { (32, 32) } else { (64, 64) },
        ),
    ] {
        let (ba, bb, bc) = (
            buf_of(&a),
            buf_of(&b),
            Buf::zeroed(batch * mm * n * T::SIZE),
        );
        let grid = (n.div_ceil(tn) as u32, mm.div_ceil(tm) as u32, batch as u32);
        run(
            m,
            &entry,
            grid,
            (256, 1, 1),
            0,
            &[&bc, &ba, &bb],
            |p| {
                let mut v: Vec<ParamValue> = p.iter().map(|&x| ParamValue::ptr(x)).collect();
                for x in [batch, mm, k, n, mm * k, k * n] {
                    v.push(ParamValue::i64(x as i64));
                }
                v
            },
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        let got: Vec<T> = read(&bc);
        for i in 0..want.len() {
            assert!(
                T::same(got[i], want[i]),
                "{entry} [{i}]: {:?}, want {:?}",
                got[i],
                want[i]
            );
        }
    }
}

#[test]
fn batched_matmuls_match() {
    let m = shipped("linalg");
    check_bmm::<f32>(&m, 21);
    check_bmm::<f64>(&m, 22);
    check_bmm::<f16>(&m, 23);
}

fn check_layer_norm<T: El + FloatElement>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    let (rows, n) = (13usize, 200usize);
    let x: Vec<T> = (0..rows * n).map(|_| T::sample(&mut r)).collect();
    let scale: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
    let bias: Vec<T> = (0..n).map(|_| T::sample(&mut r)).collect();
    let eps = 1e-5;
    let want = gpukit_reference::layer_norm(&x, &scale, &bias, rows, n, eps);
    let (bx, bs, bb, bo) = (
        buf_of(&x),
        buf_of(&scale),
        buf_of(&bias),
        Buf::zeroed(rows * n * T::SIZE),
    );
    let name = format!("layer_norm_{}", T::SFX);
    run(
        m,
        &name,
        ((rows as u32).div_ceil(8), 1, 1),
        (256, 1, 1),
        0,
        &[&bo, &bx, &bs, &bb],
        |p| {
            let mut v: Vec<ParamValue> = p.iter().map(|&a| ParamValue::ptr(a)).collect();
            v.extend([
                ParamValue::i64(rows as i64),
                ParamValue::i64(n as i64),
                ParamValue::f64(eps),
            ]);
            v
        },
        &opts(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let got: Vec<T> = read(&bo);
    for i in 0..want.len() {
        assert!(
            T::same(got[i], want[i]),
            "{name} [{i}]: {:?}, want {:?}",
            got[i],
            want[i]
        );
    }
}

#[test]
fn layer_norm_matches() {
    let m = shipped("norm");
    check_layer_norm::<f32>(&m, 31);
    check_layer_norm::<f64>(&m, 32);
    check_layer_norm::<f16>(&m, 33);
}

fn check_attention<T: El + FloatElement>(m: &Module, seed: u64) {
    let mut r = Rng(seed);
    let (batch, heads, n, nkv, hd) = (2usize, 3usize, 20usize, 70usize, 24usize);
    let width = heads * hd;
    let small = |r: &mut Rng| T::sample(r);
    let q: Vec<T> = (0..batch * n * width).map(|_| small(&mut r)).collect();
    let k: Vec<T> = (0..batch * nkv * width).map(|_| small(&mut r)).collect();
    let v: Vec<T> = (0..batch * nkv * width).map(|_| small(&mut r)).collect();
    let mask: Vec<T> = (0..batch * nkv).map(|_| small(&mut r)).collect();
    let scale = 0.125;
    let rows = if T::SIZE == 8 { 8 } else { 16 };
    for has_mask in [false, true] {
        let want = gpukit_reference::attention_batch(
            &q,
            &k,
            &v,
            has_mask.then_some(&mask[..]),
            batch,
            heads,
            n,
            nkv,
            hd,
            scale,
        );
        let (bq, bk, bv, bm) = (buf_of(&q), buf_of(&k), buf_of(&v), buf_of(&mask));
        let bo = Buf::zeroed(q.len() * T::SIZE);
        let name = format!("attention_{}", T::SFX);
        let tasks = (batch * heads * n.div_ceil(rows)) as u32;
        run(
            m,
            &name,
            (tasks, 1, 1),
            (256, 1, 1),
            0,
            &[&bo, &bq, &bk, &bv, &bm],
            |p| {
                let mut a: Vec<ParamValue> = p.iter().map(|&x| ParamValue::ptr(x)).collect();
                for x in [has_mask as usize, batch, heads, n, nkv, hd, heads, 1] {
                    a.push(ParamValue::i64(x as i64));
                }
                a.push(ParamValue::f64(scale));
                a
            },
            &opts(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<T> = read(&bo);
        for i in 0..want.len() {
            assert!(
                T::same(got[i], want[i]),
                "{name} mask={has_mask} [{i}]: {:?}, want {:?}",
                got[i],
                want[i]
            );
        }
    }
}

#[test]
fn fused_attention_matches() {
    let m = shipped("attention");
    check_attention::<f32>(&m, 41);
    check_attention::<f64>(&m, 42);
    check_attention::<bf16>(&m, 43);
}
