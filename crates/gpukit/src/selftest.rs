//! The self-check behind `gpukit selftest`: every kernel and op that exists, run on a
//! kit over built-in random inputs and compared bit for bit (any NaN equals any NaN)
//! with a plain sequential reference.
//!
//! Each later op adds one [`Check`] to [`checks`].

use std::time::{Duration, Instant};

use gpukit_core::{Binding, DType, DevArg, Element, Error, Kit, Result};

use crate::demo;

/// One self-check: an op (or kernel) at one dtype.
#[derive(Clone, Copy)]
pub struct Check {
    /// Op or kernel name.
    pub op: &'static str,
    /// Element type checked.
    pub dtype: DType,
    /// Runs the check on `kit` with inputs drawn from `seed`; `Ok(None)` is a pass,
    /// `Ok(Some(msg))` a mismatch described by `msg`.
    pub run: fn(&Kit, u64) -> Result<Option<String>>,
}

/// The outcome of one [`Check`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// Op or kernel name.
    pub op: &'static str,
    /// Element type checked.
    pub dtype: DType,
    /// `None` on a pass; the mismatch or error otherwise.
    pub failure: Option<String>,
    /// Wall time of the check.
    pub time: Duration,
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
    if got.len() != want.len() {
        return Some(format!("length {} != {}", got.len(), want.len()));
    }
    got.iter()
        .zip(want)
        .position(|(g, w)| !gpukit_core::numeric::same_bits(*g, *w))
        .map(|i| format!("element {i}: got {:?}, want {:?}", got[i], want[i]))
}

/// Bitwise equality with any NaN equal to any NaN (the contract's rule 8).
pub fn same_bits_f32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

const N: usize = 100_003;

fn saxpy_run(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed);
    let x: Vec<f32> = (0..N).map(|_| rng.f32_with_specials()).collect();
    let y: Vec<f32> = (0..N).map(|_| rng.f32_with_specials()).collect();
    let a = 1.5f32;
    let want: Vec<f32> = x.iter().zip(&y).map(|(&x, &y)| a.mul_add(x, y)).collect();
    let mut got = y.clone();
    let cfg = gpukit_core::LaunchConfig::for_elements(N, 256)?;
    kit.run(
        &demo::saxpy(),
        cfg,
        &mut [
            Binding::F32(a),
            Binding::input(&x),
            Binding::inout(&mut got),
            Binding::I64(N as i64),
        ],
    )?;
    Ok(mismatch(&got, &want))
}

fn saxpy_resident(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 1);
    let x: Vec<f32> = (0..N).map(|_| rng.f32_with_specials()).collect();
    let y: Vec<f32> = (0..N).map(|_| rng.f32_with_specials()).collect();
    let a = -0.75f32;
    let want: Vec<f32> = x.iter().zip(&y).map(|(&x, &y)| a.mul_add(x, y)).collect();
    let (bx, by) = (kit.upload(&x)?, kit.upload(&y)?);
    let cfg = gpukit_core::LaunchConfig::for_elements(N, 128)?;
    kit.launch(
        &demo::saxpy(),
        cfg,
        &[
            DevArg::F32(a),
            DevArg::Buf(&bx),
            DevArg::Buf(&by),
            DevArg::I64(N as i64),
        ],
    )?;
    Ok(mismatch(&by.download::<f32>()?, &want))
}

fn block_sum(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 2);
    let x: Vec<f32> = (0..N).map(|_| rng.f32_with_specials()).collect();
    let t = demo::BLOCK_SUM_THREADS as usize;
    let want: Vec<f32> = x
        .chunks(t)
        .map(|c| {
            let mut s = vec![0.0f32; t];
            s[..c.len()].copy_from_slice(c);
            let mut stride = t / 2;
            while stride > 0 {
                for i in 0..stride {
                    s[i] += s[i + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect();
    let mut got = vec![0.0f32; want.len()];
    kit.run(
        &demo::block_sum(),
        demo::block_sum_config(N)?,
        &mut [
            Binding::input(&x),
            Binding::output(&mut got),
            Binding::I64(N as i64),
        ],
    )?;
    Ok(mismatch(&got, &want))
}

fn transfer(kit: &Kit, dtype: DType, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 3);
    let vals: Vec<f64> = (0..4099)
        .map(|_| {
            let r = rng.next_u64();
            if dtype.is_float() {
                (r >> 11) as f64 / (1u64 << 40) as f64 - 4096.0
            } else {
                (r % 2_000_001) as f64 - 1_000_000.0
            }
        })
        .collect();
    let b = kit.upload_f64(dtype, &vals)?;
    let back = b.download_f64()?;
    // Reference: the same rounding done on the host through the element type.
    let want: Vec<f64> = crate::with_dtype!(dtype, T => vals.iter().map(|&v| <T as gpukit_core::Element>::from_f64(v).map(<T as gpukit_core::Element>::to_f64)).collect::<Result<Vec<f64>>>()?);
    Ok(back
        .iter()
        .zip(&want)
        .position(|(g, w)| g.to_bits() != w.to_bits())
        .map(|i| format!("element {i}: got {} want {}", back[i], want[i])))
}

macro_rules! transfer_check {
    ($d:ident) => {
        Check {
            op: "transfer",
            dtype: DType::$d,
            run: |k, s| transfer(k, DType::$d, s),
        }
    };
}

/// Every self-check, in a fixed order.
pub fn checks() -> Vec<Check> {
    vec![
        transfer_check!(F32),
        transfer_check!(F64),
        transfer_check!(F16),
        transfer_check!(BF16),
        transfer_check!(I64),
        transfer_check!(I32),
        Check {
            op: "saxpy (run)",
            dtype: DType::F32,
            run: saxpy_run,
        },
        Check {
            op: "saxpy (resident)",
            dtype: DType::F32,
            run: saxpy_resident,
        },
        Check {
            op: "block_sum",
            dtype: DType::F32,
            run: block_sum,
        },
    ]
    .into_iter()
    .chain(crate::selftest_ops::checks())
    .chain(crate::selftest_conv::checks())
    .chain(crate::selftest_norm::checks())
    .chain(crate::selftest_attention::checks())
    .chain(crate::selftest_movement::checks())
    .collect()
}

/// Runs every check on `kit`, calling `progress(i, total, check)` before each.
/// Errors are reported as failures of their check, not returned.
pub fn run_all(
    kit: &Kit,
    seed: u64,
    mut progress: impl FnMut(usize, usize, &Check),
) -> Vec<CheckResult> {
    let all = checks();
    let total = all.len();
    all.iter()
        .enumerate()
        .map(|(i, c)| {
            progress(i, total, c);
            let t = Instant::now();
            let failure = match (c.run)(kit, seed) {
                Ok(None) => None,
                Ok(Some(m)) => Some(format!("mismatch: {m}")),
                Err(e) => Some(format!("error: {e}")),
            };
            CheckResult {
                op: c.op,
                dtype: c.dtype,
                failure,
                time: t.elapsed(),
            }
        })
        .collect()
}

/// An `Error` for a failed self-check run (for callers that want `?`).
pub fn failed(results: &[CheckResult]) -> Option<Error> {
    let bad: Vec<String> = results
        .iter()
        .filter_map(|r| {
            r.failure
                .as_ref()
                .map(|f| format!("{} {}: {f}", r.op, r.dtype))
        })
        .collect();
    (!bad.is_empty()).then(|| Error::InvalidArgument {
        op: "selftest".into(),
        reason: bad.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes_on_the_cpu() {
        let kit = crate::cpu().unwrap();
        let results = run_all(&kit, 42, |_, _, _| {});
        assert_eq!(results.len(), checks().len());
        assert!(failed(&results).is_none(), "{:?}", failed(&results));
    }

    #[test]
    fn a_wrong_answer_is_reported() {
        assert!(mismatch(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(mismatch(&[f32::NAN], &[-f32::NAN]).is_none());
        assert!(mismatch(&[0.0], &[-0.0]).unwrap().contains("element 0"));
        assert!(mismatch(&[1.0], &[1.0, 2.0]).is_some());
    }
}
