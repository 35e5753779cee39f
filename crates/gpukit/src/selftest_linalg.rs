//! Self-checks of the GEMM family's model-author forms, run inside the `gemm` and
//! `bmm` checks (so emu-check reports them on those kernels): gemm with `trans_a` and a
//! broadcast C, `linear` (gemm with `trans_b`) and `matmul_broadcast` (bmm with numpy
//! batch broadcasting), each compared bit for bit with the reference oracle.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops::{self, GemmC, GemmParams};
use crate::selftest_common::{Rng, mismatch};

fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f64(rng.f32_with_specials() as f64 * 8.0).unwrap_or_default())
        .collect()
}

/// gemm with A stored `[k, m]` under each C broadcast, then `linear` on `[2, 3, k]`
/// inputs; `None` when every result matches.
pub(crate) fn gemm_extra<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x4c);
    let (m, k, n) = (21, 67, 35);
    let a = rand_vec::<T>(&mut rng, m * k);
    let b = rand_vec::<T>(&mut rng, k * n);
    let (ba, bb) = (kit.upload(&a)?, kit.upload(&b)?);
    let y = kit.alloc(T::DTYPE, m * n)?;
    for (i, c_layout) in [GemmC::Row, GemmC::Column, GemmC::Scalar]
        .into_iter()
        .enumerate()
    {
        let p = GemmParams {
            alpha: -0.5,
            beta: 2.0,
            trans_a: true,
            trans_b: i == 1,
            c_layout,
            ..GemmParams::new(m, k, n)
        };
        let c = rand_vec::<T>(&mut rng, c_layout.len(m, n).unwrap_or(0));
        let bc = kit.upload(&c)?;
        ops::gemm(kit, &y, &ba, &bb, Some(&bc), None, &p)?;
        let want = reference::gemm(&a, &b, Some(&c), None, &p);
        if let Some(e) = mismatch(&y.download::<T>()?, &want) {
            return Ok(Some(format!("trans_a, c {c_layout:?}: {e}")));
        }
    }
    // linear: x [2, 3, k] against a [n, k] weight (b read as [n, k]).
    let x = rand_vec::<T>(&mut rng, 6 * k);
    let bias = rand_vec::<T>(&mut rng, n);
    let (bx, bbias) = (kit.upload(&x)?, kit.upload(&bias)?);
    let yl = kit.alloc(T::DTYPE, 6 * n)?;
    ops::linear(kit, &yl, &bx, &[2, 3, k], &bb, [n, k], Some(&bbias))?;
    let want = reference::linear(&x, &b, Some(&bias), 6, k, n);
    Ok(mismatch(&yl.download::<T>()?, &want).map(|e| format!("linear: {e}")))
}

/// `matmul_broadcast` of `[3, 1, m, k] @ [1, 2, k, n]` and `[m, k] @ [2, 3, k, n]`;
/// `None` when every result matches.
pub(crate) fn bmm_broadcast<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x4d);
    let (m, k, n) = (9, 19, 13);
    for (ad, bd) in [
        (vec![3, 1, m, k], vec![1, 2, k, n]),
        (vec![m, k], vec![2, 3, k, n]),
    ] {
        let a = rand_vec::<T>(&mut rng, ad.iter().product());
        let b = rand_vec::<T>(&mut rng, bd.iter().product());
        let (dims, want) = reference::matmul_broadcast(&a, &ad, &b, &bd);
        let c = kit.alloc(T::DTYPE, dims.iter().product())?;
        ops::matmul_broadcast(kit, &c, &kit.upload(&a)?, &ad, &kit.upload(&b)?, &bd)?;
        if let Some(e) = mismatch(&c.download::<T>()?, &want) {
            return Ok(Some(format!("matmul_broadcast {ad:?} @ {bd:?}: {e}")));
        }
    }
    Ok(None)
}
