//! Self-checks of the element-wise index group: `gather_elements` and
//! `scatter_elements` (every reduction), `pad` (every mode, crops and long pads) and
//! `cumsum` (inclusive / exclusive, forward / reverse) and `topk` (largest / smallest,
//! k from 1 to the whole axis, many ties) at each dtype, on random bit patterns (NaN
//! payloads, ±inf, -0.0, subnormals) with many duplicate indices, negative ones
//! included, compared bit for bit with the reference oracle. Each check is named after
//! its kernel, so emu-check reports it on the kernel.

use gpukit_core::elements::{ScatterElem, ScatterReduction};
use gpukit_core::half::{bf16, f16};
use gpukit_core::pad::PadMode;
use gpukit_core::{DType, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, from_bits, mismatch};

/// `(outer, axis_len, inner, nidx)`: nidx above the axis, so duplicates occur.
const GEO: (usize, usize, usize, usize) = (5, 7, 33, 11);

fn indices(rng: &mut Rng, n: usize, axis_len: usize) -> Vec<i64> {
    (0..n)
        .map(|_| (rng.next_u64() % (2 * axis_len as u64)) as i64 - axis_len as i64)
        .collect()
}

fn values<T: gpukit_core::Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            from_bits::<T>(rng.next_u64(), (r % 64) as u32)
        })
        .collect()
}

fn gather_check<T: ScatterElem>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let (o, a, i, g) = GEO;
    let mut rng = Rng::new(seed ^ 0x6e1e ^ T::DTYPE as u64);
    let data = values::<T>(&mut rng, o * a * i);
    let idx = indices(&mut rng, o * g * i, a);
    let (bd, bi) = (kit.upload(&data)?, kit.upload(&idx)?);
    let out = kit.alloc(T::DTYPE, o * g * i)?;
    ops::gather_elements(kit, &out, &bd, &bi, o, a, i, g)?;
    let want = reference::gather_elements(&data, &idx, o, a, i, g)?;
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn scatter_check<T: ScatterElem>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let (o, a, i, g) = GEO;
    let mut rng = Rng::new(seed ^ 0x5ca7 ^ T::DTYPE as u64);
    let data = values::<T>(&mut rng, o * a * i);
    let upd = values::<T>(&mut rng, o * g * i);
    let idx = indices(&mut rng, o * g * i, a);
    let (bd, bi, bu) = (kit.upload(&data)?, kit.upload(&idx)?, kit.upload(&upd)?);
    let y = kit.alloc(T::DTYPE, data.len())?;
    for red in ScatterReduction::ALL {
        ops::scatter_elements(kit, &y, &bd, &bi, &bu, o, a, i, g, red)?;
        let want = reference::scatter_elements(&data, &idx, &upd, o, a, i, g, red)?;
        if let Some(m) = mismatch(&y.download::<T>()?, &want) {
            return Ok(Some(format!("{}: {m}", red.name())));
        }
    }
    Ok(None)
}

fn pad_check<T: ScatterElem>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x9ad ^ T::DTYPE as u64);
    let dims = [5usize, 7, 3];
    let x = values::<T>(&mut rng, 105);
    let value = values::<T>(&mut rng, 1);
    let (bx, bv) = (kit.upload(&x)?, kit.upload(&value)?);
    // Crops, pads longer than the axis, and both at once.
    for pads in [[2i64, -3, 4, 9, 1, -1], [-4, 8, 0, 0, -6, 5]] {
        for mode in PadMode::ALL {
            let (od, want) = reference::pad(&x, &dims, &pads, mode, value[0]);
            let out = kit.alloc(T::DTYPE, od.iter().product())?;
            ops::pad(kit, &out, &bx, &bv, &dims, &pads, mode)?;
            if let Some(m) = mismatch(&out.download::<T>()?, &want) {
                return Ok(Some(format!("{} {pads:?}: {m}", mode.name())));
            }
        }
    }
    Ok(None)
}

/// Every flag combination on `[5, 37, 33]` along the middle axis and `[4, 300]` along
/// the last (long lines, wide and single columns).
fn cumsum_check<T: ScatterElem + gpukit_core::numeric::Arith>(
    kit: &Kit,
    seed: u64,
) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0xc5 ^ T::DTYPE as u64);
    for (o, l, i) in [(5usize, 37usize, 33usize), (4, 300, 1)] {
        let x = values::<T>(&mut rng, o * l * i);
        let bx = kit.upload(&x)?;
        let y = kit.alloc(T::DTYPE, x.len())?;
        for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
            ops::cumsum(kit, &y, &bx, o, l, i, exclusive, reverse)?;
            let want = reference::cumsum(&x, o, l, i, exclusive, reverse);
            if let Some(m) = mismatch(&y.download::<T>()?, &want) {
                return Ok(Some(format!(
                    "[{o}, {l}, {i}] exclusive {exclusive} reverse {reverse}: {m}"
                )));
            }
        }
    }
    Ok(None)
}

/// `[5, 37, 33]` along the middle axis and `[4, 300]` along the last, `k` of 1, 7 and
/// the whole axis, largest and smallest; every third value repeats an earlier one of
/// the buffer (exact ties, so the lower-index rule is exercised).
fn topk_check<T: ScatterElem + gpukit_core::topk::TopkElem>(
    kit: &Kit,
    seed: u64,
) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x7a4b ^ T::DTYPE as u64);
    for (o, l, i) in [(5usize, 37usize, 33usize), (4, 300, 1)] {
        let mut x = values::<T>(&mut rng, o * l * i);
        for e in (3..x.len()).step_by(3) {
            x[e] = x[(rng.next_u64() % e as u64) as usize];
        }
        let bx = kit.upload(&x)?;
        for k in [1, 7, l] {
            let v = kit.alloc(T::DTYPE, o * k * i)?;
            let ix = kit.alloc(DType::I64, o * k * i)?;
            for largest in [true, false] {
                ops::topk(kit, &v, &ix, &bx, o, l, i, k, largest)?;
                let (wv, wi) = reference::topk(&x, o, l, i, k, largest);
                let (gv, gi) = (v.download::<T>()?, ix.download::<i64>()?);
                let m = mismatch(&gv, &wv).or_else(|| mismatch(&gi, &wi));
                if let Some(m) = m {
                    return Ok(Some(format!(
                        "[{o}, {l}, {i}] k {k} largest {largest}: {m}"
                    )));
                }
            }
        }
    }
    Ok(None)
}

type Run = fn(&Kit, u64) -> Result<Option<String>>;

/// The element-wise index, pad, cumsum and topk checks: 30, one per kernel.
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(30);
    let rows: [(&'static str, [Run; 6]); 5] = [
        (
            "gather_elements",
            [
                gather_check::<f32>,
                gather_check::<f64>,
                gather_check::<f16>,
                gather_check::<bf16>,
                gather_check::<i64>,
                gather_check::<i32>,
            ],
        ),
        (
            "scatter_elements",
            [
                scatter_check::<f32>,
                scatter_check::<f64>,
                scatter_check::<f16>,
                scatter_check::<bf16>,
                scatter_check::<i64>,
                scatter_check::<i32>,
            ],
        ),
        (
            "pad",
            [
                pad_check::<f32>,
                pad_check::<f64>,
                pad_check::<f16>,
                pad_check::<bf16>,
                pad_check::<i64>,
                pad_check::<i32>,
            ],
        ),
        (
            "cumsum",
            [
                cumsum_check::<f32>,
                cumsum_check::<f64>,
                cumsum_check::<f16>,
                cumsum_check::<bf16>,
                cumsum_check::<i64>,
                cumsum_check::<i32>,
            ],
        ),
        (
            "topk",
            [
                topk_check::<f32>,
                topk_check::<f64>,
                topk_check::<f16>,
                topk_check::<bf16>,
                topk_check::<i64>,
                topk_check::<i32>,
            ],
        ),
    ];
    for (op, runs) in rows {
        for (dtype, run) in DType::ALL.into_iter().zip(runs) {
            v.push(Check { op, dtype, run });
        }
    }
    v
}
