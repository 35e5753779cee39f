//! Shared test helpers: module loading, device buffers over atomics, launches.
#![allow(dead_code)]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use gpukit_ptx::{EmuError, EmuOptions, GlobalMemory, LaunchStats, Module, ParamValue, launch};

/// Parses a module of kernels-cuda/ptx (`name` without extension).
pub(crate) fn shipped(name: &str) -> Module {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../kernels-cuda/ptx/{name}.ptx"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Module::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Parses a fixture module of tests/fixtures.
pub(crate) fn fixture(name: &str) -> Module {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/{name}.ptx"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Module::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A device buffer: 8-byte-aligned host memory accessed only through atomics.
pub(crate) struct Buf {
    words: Vec<AtomicU64>,
    len: usize,
}

impl Buf {
    pub(crate) fn zeroed(len: usize) -> Buf {
        Buf {
            words: (0..len.div_ceil(8).max(1))
                .map(|_| AtomicU64::new(0))
                .collect(),
            len,
        }
    }

    pub(crate) fn from_bytes(b: &[u8]) -> Buf {
        let buf = Buf::zeroed(b.len());
        for (i, c) in b.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            buf.words[i].store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
        buf
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self
            .words
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        out.truncate(self.len);
        out
    }

    pub(crate) fn words(&self) -> &[AtomicU64] {
        &self.words
    }
}

pub(crate) trait Pod: Copy {
    const SIZE: usize;
    fn to_le(self, out: &mut Vec<u8>);
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! pod {
    ($($t:ty),*) => {$(
        impl Pod for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn to_le(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); }
            fn from_le(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().unwrap()) }
        }
    )*};
}
pod!(u8, u16, u32, u64, i32, i64, f32, f64);

impl Pod for half::f16 {
    const SIZE: usize = 2;
    fn to_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        half::f16::from_bits(u16::from_le_bytes(b.try_into().unwrap()))
    }
}

impl Pod for half::bf16 {
    const SIZE: usize = 2;
    fn to_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        half::bf16::from_bits(u16::from_le_bytes(b.try_into().unwrap()))
    }
}

pub(crate) fn buf_of<T: Pod>(v: &[T]) -> Buf {
    let mut b = Vec::with_capacity(v.len() * T::SIZE);
    for &x in v {
        x.to_le(&mut b);
    }
    Buf::from_bytes(&b)
}

pub(crate) fn read<T: Pod>(b: &Buf) -> Vec<T> {
    b.bytes().chunks_exact(T::SIZE).map(T::from_le).collect()
}

/// Launches with the given buffers registered.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
pub(crate) fn run(
    m: &Module,
    kernel: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared: usize,
    bufs: &[&Buf],
    params: impl FnOnce(&[u64]) -> Vec<ParamValue>,
    opts: &EmuOptions,
) -> Result<LaunchStats, EmuError> {
    let mut mem = GlobalMemory::new();
    let addrs: Vec<u64> = bufs
        .iter()
        .map(|b| mem.insert_atomic(b.words()).unwrap())
        .collect();
    let p = params(&addrs);
    launch(m, kernel, grid, block, shared, &p, &mem, opts)
}

/// A small deterministic generator.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// f32 values with every special class well represented.
    pub(crate) fn f32(&mut self) -> f32 {
        let r = self.next();
        match r % 10 {
            0 => [
                0.0,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                1.0,
                -1.0,
                f32::MAX,
                f32::MIN_POSITIVE,
                -f32::MAX,
            ][(r >> 8) as usize % 10],
            1 => f32::from_bits((r >> 16) as u32 & 0x807F_FFFF),
            2 => f32::from_bits(((r >> 16) as u32 & 0x80FF_FFFF) | 0x0080_0000),
            3 | 4 => ((r >> 12) as u32 as f32 / 65536.0 - 32768.0) / 17.0,
            _ => f32::from_bits((r >> 24) as u32),
        }
    }

    pub(crate) fn f64(&mut self) -> f64 {
        let r = self.next();
        match r % 10 {
            0 => [
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                1.0,
                -1.0,
                f64::MAX,
                f64::MIN_POSITIVE,
                -f64::MAX,
            ][(r >> 8) as usize % 10],
            1 => f64::from_bits(r & 0x800F_FFFF_FFFF_FFFF),
            2 => f64::from_bits((r & 0x801F_FFFF_FFFF_FFFF) | 0x0010_0000_0000_0000),
            3 | 4 => ((r >> 12) as f64 / 4_294_967_296.0 - 524_288.0) / 17.0,
            _ => f64::from_bits(self.next()),
        }
    }

    pub(crate) fn i32(&mut self) -> i32 {
        let r = self.next();
        match r % 6 {
            0 => [0, 1, -1, i32::MIN, i32::MAX, 7][(r >> 8) as usize % 6],
            1 => ((r >> 20) % 200) as i32 - 100,
            _ => (r >> 16) as i32,
        }
    }

    pub(crate) fn i64(&mut self) -> i64 {
        let r = self.next();
        match r % 6 {
            0 => [0, 1, -1, i64::MIN, i64::MAX, 7][(r >> 8) as usize % 6],
            1 => ((r >> 20) % 200) as i64 - 100,
            _ => self.next() as i64,
        }
    }
}

/// Bitwise equality with the contract's NaN rule (any NaN equals any NaN).
pub(crate) fn same_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

pub(crate) fn same_f64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}
