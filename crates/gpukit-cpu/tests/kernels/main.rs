//! Every CPU built-in kernel against a plain scalar loop written here, bit for bit
//! (`same_bits`: NaN equals any NaN), at every SIMD level this machine has, over
//! ragged sizes and special values; plus bad-argument launches.

use std::sync::Mutex;

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{Arith, BinaryOp, FloatElement, Real, UnaryOp, max_nan, same_bits};
use gpukit_core::{DevArg, Element, Error, Kit, LaunchConfig, reduce};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, detected_simd_level, set_simd_limit};

mod bad_args;
mod elementwise;
mod indexing;
mod matmul;
mod reductions;

/// Serialises tests so each one's SIMD level is the one it set.
static LEVEL_LOCK: Mutex<()> = Mutex::new(());

fn kit() -> Kit {
    Kit::from_device(Box::new(CpuDevice::new()))
}

/// Runs `f` once per SIMD level this machine supports.
fn at_each_level(mut f: impl FnMut(SimdLevel)) {
    let _g = LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for l in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
        if l <= detected_simd_level() {
            set_simd_limit(Some(l));
            f(l);
        }
    }
    set_simd_limit(None);
}

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) -> gpukit_core::Result<()> {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
}

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random test values, with special values at rate `special` (in 1/1000).
trait Gen: Element {
    fn gen_val(r: &mut Rng, special: u64) -> Self;
}

fn gen_float(r: &mut Rng, special: u64, tiny: f64) -> f64 {
    if r.below(1000) < special {
        match r.below(8) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => 0.0,
            4 => -0.0,
            5 => tiny,
            6 => -tiny * 3.0,
            _ => 1e30,
        }
    } else {
        (r.unit() * 2.0 - 1.0) * 4.0
    }
}

impl Gen for f32 {
    fn gen_val(r: &mut Rng, s: u64) -> f32 {
        if r.below(1000) < s / 4 {
            return f32::from_bits(1 + r.below(1 << 20) as u32); // subnormal
        }
        gen_float(r, s, f32::from_bits(3) as f64) as f32
    }
}
impl Gen for f64 {
    fn gen_val(r: &mut Rng, s: u64) -> f64 {
        if r.below(1000) < s / 4 {
            return f64::from_bits(1 + r.below(1 << 40));
        }
        gen_float(r, s, f64::from_bits(5))
    }
}
impl Gen for f16 {
    fn gen_val(r: &mut Rng, s: u64) -> f16 {
        f16::from_f64(gen_float(r, s, 2f64.powi(-24)))
    }
}
impl Gen for bf16 {
    fn gen_val(r: &mut Rng, s: u64) -> bf16 {
        bf16::from_f64(gen_float(r, s, 2f64.powi(-130)))
    }
}
impl Gen for i64 {
    fn gen_val(r: &mut Rng, s: u64) -> i64 {
        match r.below(1000) {
            x if x < s => [0, -1, 1, i64::MIN, i64::MAX][r.below(5) as usize],
            x if x < 500 => r.next() as i64,
            _ => r.below(200) as i64 - 100,
        }
    }
}
impl Gen for i32 {
    fn gen_val(r: &mut Rng, s: u64) -> i32 {
        match r.below(1000) {
            x if x < s => [0, -1, 1, i32::MIN, i32::MAX][r.below(5) as usize],
            x if x < 500 => r.next() as i32,
            _ => r.below(200) as i32 - 100,
        }
    }
}

fn vals<T: Gen>(r: &mut Rng, n: usize, special: u64) -> Vec<T> {
    (0..n).map(|_| T::gen_val(r, special)).collect()
}

#[track_caller]
fn assert_same<T: Element>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_bits(*g, *w),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

const SIZES: &[usize] = &[0, 1, 2, 7, 31, 32, 33, 257, 8193, 65_537, 140_001];

fn name<T: Element>(op: &str) -> String {
    gpukit_core::abi::kernel_name(op, T::DTYPE)
}
