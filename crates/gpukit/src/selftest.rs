//! The self-check behind `gpukit selftest`: every kernel and op that exists, run on a
//! kit over built-in random inputs and compared bit for bit (any NaN equals any NaN)
//! with a plain sequential reference.
//!
//! Each later op adds one [`Check`] to [`checks`]. Needs the `selftest` feature (on in
//! the `gpukit` command, off by default: it compiles the reference oracle).

use std::time::{Duration, Instant};

use gpukit_core::{Binding, DType, DevArg, Error, Kit, Result};

use crate::demo;
use crate::selftest_common::mismatch;
pub use crate::selftest_common::{Check, Rng};

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
    .chain(crate::selftest_norm_ext::checks())
    .chain(crate::selftest_attention::checks())
    .chain(crate::selftest_movement::checks())
    .chain(crate::selftest_cast::checks())
    .chain(crate::selftest_reduce_axes::checks())
    .chain(crate::selftest_compare::checks())
    .chain(crate::selftest_resize::checks())
    .chain(crate::selftest_elements::checks())
    .collect()
}

/// Runs every check on `kit`, calling `progress(i, total, check)` before each.
/// Errors are reported as failures of their check, not returned.
pub fn run_all(
    kit: &Kit,
    seed: u64,
    progress: impl FnMut(usize, usize, &Check),
) -> Vec<CheckResult> {
    run_checks(kit, seed, &checks(), progress)
}

/// Runs `checks` (a selection of [`checks`], in the order given) on `kit`, calling
/// `progress(i, total, check)` before each. Errors are reported as failures of their
/// check, not returned. On the census kit ([`gpukit_core::CENSUS_DEVICE_NAME`]) no
/// result is computed, so the comparisons pass and every check launches all its kernels.
pub fn run_checks(
    kit: &Kit,
    seed: u64,
    checks: &[Check],
    mut progress: impl FnMut(usize, usize, &Check),
) -> Vec<CheckResult> {
    let total = checks.len();
    let census = kit.info().name == gpukit_core::CENSUS_DEVICE_NAME;
    let previous = crate::selftest_common::CENSUS.replace(census);
    let results = checks
        .iter()
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
        .collect();
    crate::selftest_common::CENSUS.set(previous);
    results
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
    fn a_selection_runs_only_its_checks_in_order() {
        let kit = crate::cpu().unwrap();
        let pick: Vec<Check> = checks()
            .into_iter()
            .filter(|c| c.op == "transfer" || c.op == "block_sum")
            .collect();
        let mut seen = Vec::new();
        let results = run_checks(&kit, 7, &pick, |i, n, c| seen.push((i, n, c.op)));
        let ops: Vec<&str> = results.iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            ["transfer"; 6]
                .into_iter()
                .chain(["block_sum"])
                .collect::<Vec<_>>()
        );
        assert_eq!(seen.len(), 7);
        assert!(
            seen.iter()
                .enumerate()
                .all(|(k, &(i, n, _))| i == k && n == 7)
        );
        assert!(results.iter().all(|r| r.failure.is_none()), "{results:?}");
    }

    #[test]
    fn mismatches_and_errors_become_failures() {
        let kit = crate::cpu().unwrap();
        let bad = [
            Check {
                op: "wrong",
                dtype: DType::F32,
                run: |_, _| Ok(Some("element 3".into())),
            },
            Check {
                op: "broken",
                dtype: DType::F64,
                run: |_, _| {
                    Err(Error::InvalidArgument {
                        op: "x".into(),
                        reason: "y".into(),
                    })
                },
            },
        ];
        let r = run_checks(&kit, 0, &bad, |_, _, _| {});
        assert_eq!(r[0].failure.as_deref(), Some("mismatch: element 3"));
        assert!(
            r[1].failure.as_deref().unwrap().starts_with("error: "),
            "{r:?}"
        );
        let all = failed(&r).unwrap().to_string();
        assert!(all.contains("wrong f32: mismatch: element 3"), "{all}");
        assert!(all.contains("broken f64: error: "), "{all}");
    }

    #[test]
    fn a_wrong_answer_is_reported() {
        assert!(mismatch(&[1.0, 2.0], &[1.0, 2.0]).is_none());
        assert!(mismatch(&[f32::NAN], &[-f32::NAN]).is_none());
        assert!(mismatch(&[0.0], &[-0.0]).unwrap().contains("element 0"));
        assert!(mismatch(&[1.0], &[1.0, 2.0]).is_some());
    }
}
