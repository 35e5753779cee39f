//! The pieces every self-check module shares: the [`Check`] record, the input
//! generator [`Rng`], element bit patterns [`from_bits`] and the bitwise comparison
//! [`mismatch`]. A leaf: it imports no other self-check module, so `selftest` and the
//! `selftest_*` groups all depend on it and never on each other in a circle.

use gpukit_core::bytemuck;
use gpukit_core::{DType, Element, Kit, Result};

/// One self-check: an op (or kernel) at one dtype.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    /// Op or kernel name.
    pub op: &'static str,
    /// Element type checked.
    pub dtype: DType,
    /// Runs the check on `kit` with inputs drawn from `seed`; `Ok(None)` is a pass,
    /// `Ok(Some(msg))` a mismatch described by `msg`.
    pub run: fn(&Kit, u64) -> Result<Option<String>>,
}

/// A small deterministic generator (SplitMix64) for built-in inputs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A float in `[-1, 1)`, with a NaN, an infinity, a -0.0 or a subnormal about one
    /// time in sixteen.
    pub fn f32_with_specials(&mut self) -> f32 {
        let r = self.next_u64();
        match r % 64 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => -0.0,
            3 => f32::from_bits(1 + (r >> 40) as u32 % 0x007f_ffff),
            _ => ((r >> 40) as f32 / (1u64 << 23) as f32) - 1.0,
        }
    }
}

/// The first element where `got` and `want` differ under the contract's equality
/// (rule 8), described; `None` when they agree.
pub(crate) fn mismatch<T: Element>(got: &[T], want: &[T]) -> Option<String> {
    if CENSUS.get() {
        // On the census kit nothing was computed: only the launches count.
        return None;
    }
    if got.len() != want.len() {
        return Some(format!("length {} != {}", got.len(), want.len()));
    }
    got.iter()
        .zip(want)
        .position(|(g, w)| !gpukit_core::numeric::same_bits(*g, *w))
        .map(|i| format!("element {i}: got {:?}, want {:?}", got[i], want[i]))
}

/// The element with the low bytes of `bits` (floats: any pattern; integers: shifted by
/// a random amount so that every magnitude occurs).
pub(crate) fn from_bits<T: Element>(bits: u64, shift: u32) -> T {
    let b = if T::DTYPE.is_float() {
        bits
    } else {
        ((bits as i64) >> shift) as u64
    };
    let bytes = b.to_ne_bytes();
    let n = T::DTYPE.size();
    // The low-order bytes of b (little- or big-endian host alike).
    let lo = if cfg!(target_endian = "little") {
        &bytes[..n]
    } else {
        &bytes[8 - n..]
    };
    bytemuck::pod_read_unaligned(lo)
}

/// `n` values: floats from [`Rng::f32_with_specials`] times 8 (NaN, infinities, signed
/// zeros and subnormals among them), integers in `-100..=100`.
pub(crate) fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            if T::DTYPE.is_float() {
                T::from_f64(rng.f32_with_specials() as f64 * 8.0).unwrap_or_default()
            } else {
                T::from_f64((rng.next_u64() % 201) as f64 - 100.0).unwrap_or_default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_splitmix64() {
        // The published SplitMix64 sequence from state 0.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn floats_are_in_range_or_special() {
        let mut r = Rng::new(42);
        let v: Vec<f32> = (0..10_000).map(|_| r.f32_with_specials()).collect();
        for x in &v {
            let special = x.is_nan() || x.is_infinite() || *x == 0.0 || x.is_subnormal();
            assert!(special || (-1.0..1.0).contains(x), "{x}");
        }
        assert!(v.iter().any(|x| x.is_nan()));
        assert!(v.iter().any(|x| x.is_subnormal()));
        assert!(v.iter().any(|x| x.to_bits() == (-0.0f32).to_bits()));
    }
}

thread_local! {
    /// Whether the checks on this thread run on the census kit (set by
    /// `selftest::run_checks`): results are not computed there, so every comparison
    /// passes and each check goes on to launch all of its kernels.
    pub(crate) static CENSUS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
