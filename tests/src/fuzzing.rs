//! The fuzz targets' shared machinery (tests/tests/fuzz_ops.rs): the case budget and
//! seed from the environment, the child-process batch runner, a replayable generator
//! with hostile values (lying sizes, special floats, out-of-range indices),
//! guard-banded buffers that catch a write outside a view, and the two argument
//! generators ([`op_cases`]: every op of `gpukit-ops`; [`launch_cases`]: raw launches
//! of the kernels whose buffers' contents index others).

use std::time::Duration;

use gpukit::half::{bf16, f16};
use gpukit::prelude::*;

use crate::child::{CHILD_MEMORY_BYTES, assert_case_passes_with};

pub mod launch_cases;
pub mod op_cases;

/// Largest element count a fitting buffer gets; a product past it gets a random small
/// length instead (a lying size is refused before anything that big is needed).
pub const MAX_FIT: usize = 1 << 12;

/// Cases per target unless `GPUKIT_FUZZ_CASES` says otherwise (the CI budget).
pub const DEFAULT_CASES: u64 = 150;

/// The case budget: `$GPUKIT_FUZZ_CASES`, else [`DEFAULT_CASES`].
pub fn cases() -> u64 {
    std::env::var("GPUKIT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

/// The seed: `$GPUKIT_FUZZ_SEED`, else a fixed default.
pub fn seed() -> u64 {
    std::env::var("GPUKIT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15)
}

/// The parent's time limit for a batch: generous per case, so only a hang trips it.
pub fn batch_limit() -> Duration {
    Duration::from_secs(120 + cases() / 4)
}

/// Runs the ignored child test `case` of the current binary under the memory and time
/// limits, with the budget, the seed and a small emulator step limit (a runaway loop
/// must fault quickly). Panics, with the child's output, unless it passed.
pub fn run_batch(case: &str) {
    assert_case_passes_with(
        case,
        CHILD_MEMORY_BYTES,
        batch_limit(),
        &[
            ("GPUKIT_FUZZ_CASES", cases().to_string()),
            ("GPUKIT_FUZZ_SEED", seed().to_string()),
            ("GPUKIT_EMU_MAX_STEPS", "2000000".to_string()),
        ],
    );
}

/// "accepted" or "refused": the verdict compared across backends.
pub fn verdict<T>(r: &Result<T>) -> &'static str {
    if r.is_ok() { "accepted" } else { "refused" }
}

/// xorshift64*: a small deterministic generator (the cases must replay from a seed).
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; distinct seeds give distinct streams: the
    /// seed goes through splitmix64, a bijection, and only a zero state is replaced).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(if z == 0 { 0x9e37_79b9_7f4a_7c15 } else { z })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }

    /// A dimension: mostly small, sometimes a lie (0, 2^31, 2^40, usize::MAX/2).
    pub fn dim(&mut self) -> usize {
        match self.below(12) {
            0 => *self.pick(&[0usize, 1 << 31, 1 << 40, usize::MAX / 2, usize::MAX]),
            1 => 0,
            2 => 1,
            _ => self.below(6) as usize,
        }
    }

    /// A float parameter: mostly plausible, sometimes special (NaN, ±inf, huge, tiny).
    pub fn param(&mut self) -> f64 {
        match self.below(8) {
            0 => *self.pick(&[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e300,
                -1e300,
                1e-310,
                -0.0,
                0.0,
                65504.0,
                3.5e38,
            ]),
            _ => (self.below(2001) as f64 - 1000.0) / 256.0,
        }
    }

    /// The dtype: f32 most often, any of the six otherwise (an op refuses the ones it
    /// does not take, on both backends).
    pub fn dtype(&mut self) -> DType {
        if self.one_in(3) {
            DType::F32
        } else {
            *self.pick(&DType::ALL)
        }
    }

    /// The bytes of `n` elements of `dtype`: plausible values mixed with special ones
    /// (NaN, ±inf, −0.0, subnormals, extremes; for integers, extremes and negatives).
    pub fn contents(&mut self, dtype: DType, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n * dtype.size());
        for _ in 0..n {
            let special = self.one_in(6);
            let x: f64 = if special {
                *self.pick(&[
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -0.0,
                    1e-310,
                    -4.9e-324,
                    1.0e-40,
                    6.0e-8,
                    1e300,
                    -1e300,
                    65504.0,
                    3.4e38,
                ])
            } else {
                (self.below(4001) as f64 - 2000.0) / 512.0
            };
            match dtype {
                DType::F32 => out.extend_from_slice(&(x as f32).to_ne_bytes()),
                DType::F64 => out.extend_from_slice(&x.to_ne_bytes()),
                DType::F16 => out.extend_from_slice(&f16::from_f64(x).to_bits().to_ne_bytes()),
                DType::BF16 => out.extend_from_slice(&bf16::from_f64(x).to_bits().to_ne_bytes()),
                DType::I64 => {
                    let v = if special {
                        *self.pick(&[i64::MIN, i64::MAX, -1, 1 << 40])
                    } else {
                        self.below(41) as i64 - 20
                    };
                    out.extend_from_slice(&v.to_ne_bytes());
                }
                DType::I32 => {
                    let v = if special {
                        *self.pick(&[i32::MIN, i32::MAX, -1, 1 << 30])
                    } else {
                        self.below(41) as i32 - 20
                    };
                    out.extend_from_slice(&v.to_ne_bytes());
                }
            }
        }
        out
    }

    /// `n` i64 indices for an axis of `axis_len`: mostly in `[-axis_len, axis_len)`,
    /// sometimes just outside it, sometimes extreme.
    pub fn indices(&mut self, n: usize, axis_len: usize) -> Vec<u8> {
        let len = i64::try_from(axis_len.min(1 << 20)).unwrap_or(0);
        let mut out = Vec::with_capacity(n * 8);
        for _ in 0..n {
            let v = match self.below(24) {
                0 => *self.pick(&[i64::MIN, i64::MAX, -1 - len, len, 1 << 40]),
                1 => len,
                2 => -len - 1,
                _ if len == 0 => self.below(3) as i64 - 1,
                _ => self.below(2 * len as u64) as i64 - len,
            };
            out.extend_from_slice(&v.to_ne_bytes());
        }
        out
    }
}

/// Guard elements on each side of a [`Guarded`] view.
pub const GUARD: usize = 16;
/// The byte the guard bands hold.
pub const POISON: u8 = 0x5a;

/// A buffer of `n` elements of `dtype` inside a block with [`GUARD`] poisoned elements
/// on each side: `view` is what an op gets, [`Guarded::check`] says whether anything
/// wrote outside it.
pub struct Guarded {
    block: Buf,
    /// The `n`-element view passed to the op.
    pub view: Buf,
    dtype: DType,
    n: usize,
}

impl Guarded {
    /// `n` elements of `dtype` holding `bytes` (repeated or cut to `n` elements; zeros
    /// if `bytes` is empty), guarded on both sides.
    ///
    /// Panics if the kit refuses the upload (a broken test environment).
    pub fn new(k: &Kit, dtype: DType, n: usize, bytes: &[u8]) -> Guarded {
        let size = dtype.size();
        let mut all = vec![POISON; (n + 2 * GUARD) * size];
        for (i, b) in all[GUARD * size..(GUARD + n) * size].iter_mut().enumerate() {
            *b = if bytes.is_empty() {
                0
            } else {
                bytes[i % bytes.len()]
            };
        }
        let block = upload_bytes(k, dtype, &all);
        let view = block.view(GUARD, n).expect("a view inside its block");
        Guarded {
            block,
            view,
            dtype,
            n,
        }
    }

    /// Panics, naming `what`, if a guard band changed (a write outside the view).
    pub fn check(&self, what: &str) {
        let size = self.dtype.size();
        let bytes = download_bytes(&self.block);
        let (lo, hi) = (GUARD * size, (GUARD + self.n) * size);
        assert!(
            bytes[..lo].iter().chain(&bytes[hi..]).all(|&b| b == POISON),
            "{what}: a write outside a {}-element {} buffer",
            self.n,
            self.dtype
        );
    }
}

/// Uploads raw bytes as a buffer of `dtype` (whole elements).
///
/// Panics if the kit refuses the upload.
pub fn upload_bytes(k: &Kit, dtype: DType, bytes: &[u8]) -> Buf {
    macro_rules! up {
        ($t:ty) => {{
            let v: Vec<$t> = bytes
                .chunks_exact(std::mem::size_of::<$t>())
                .map(gpukit::bytemuck::pod_read_unaligned)
                .collect();
            k.upload(&v).expect("upload")
        }};
    }
    match dtype {
        DType::F32 => up!(f32),
        DType::F64 => up!(f64),
        DType::F16 => up!(f16),
        DType::BF16 => up!(bf16),
        DType::I64 => up!(i64),
        DType::I32 => up!(i32),
    }
}

/// Downloads a buffer's raw bytes.
///
/// Panics if the kit refuses the download.
pub fn download_bytes(b: &Buf) -> Vec<u8> {
    macro_rules! down {
        ($t:ty) => {
            gpukit::bytemuck::cast_slice(&b.download::<$t>().expect("download")).to_vec()
        };
    }
    match b.dtype() {
        DType::F32 => down!(f32),
        DType::F64 => down!(f64),
        DType::F16 => down!(f16),
        DType::BF16 => down!(bf16),
        DType::I64 => down!(i64),
        DType::I32 => down!(i32),
    }
}
