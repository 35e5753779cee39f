//! Self-checks of the normalisations added to the `norm` group (`layer_norm_ex`,
//! `group_norm`, `rms_norm`): each at each dtype on one random case (NaN, ±inf, -0.0 and
//! subnormals among the values; rows past one reduction chunk), compared bit for bit with
//! the reference oracle.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, mismatch, rand_vec};

/// Both flavours in one check: no bias with statistics, then a bias without.
fn layer_norm_ex<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>>
where
    T::Real: Element,
{
    let mut rng = Rng::new(seed ^ 0x61);
    let (rows, n) = (3, 8219);
    let x = rand_vec::<T>(&mut rng, rows * n);
    let (sc, bi) = (rand_vec::<T>(&mut rng, n), rand_vec::<T>(&mut rng, n));
    let (bx, bs, bb) = (kit.upload(&x)?, kit.upload(&sc)?, kit.upload(&bi)?);
    let out = kit.alloc(T::DTYPE, x.len())?;
    let r = ops::compute_dtype(T::DTYPE);
    let (m, s) = (kit.alloc(r, rows)?, kit.alloc(r, rows)?);
    let p = ops::LayerNorm { rows, n, eps: 1e-5 };
    ops::layer_norm_ex(kit, &out, &bx, &bs, None, Some((&m, &s)), p)?;
    let want = reference::layer_norm_ex(&x, &sc, None, rows, n, 1e-5);
    if let Some(e) = mismatch(&out.download::<T>()?, &want.y)
        .or_else(|| mismatch(&m.download::<T::Real>().ok()?, &want.mean))
        .or_else(|| mismatch(&s.download::<T::Real>().ok()?, &want.inv_std))
    {
        return Ok(Some(e));
    }
    ops::layer_norm_ex(kit, &out, &bx, &bs, Some(&bb), None, p)?;
    let want = reference::layer_norm_ex(&x, &sc, Some(&bi), rows, n, 1e-5);
    Ok(mismatch(&out.download::<T>()?, &want.y))
}

fn group_norm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x62);
    let (n, c, s, groups) = (2, 6, 1373, 3);
    let x = rand_vec::<T>(&mut rng, n * c * s);
    let (sc, bi) = (rand_vec::<T>(&mut rng, c), rand_vec::<T>(&mut rng, c));
    let (bx, bs, bb) = (kit.upload(&x)?, kit.upload(&sc)?, kit.upload(&bi)?);
    let out = kit.alloc(T::DTYPE, x.len())?;
    let p = ops::GroupNorm {
        shape: &[n, c, s],
        groups,
        eps: 1e-5,
    };
    ops::group_norm(kit, &out, &bx, &bs, &bb, p)?;
    let want = reference::group_norm(&x, &sc, &bi, n, c, s, groups, 1e-5);
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn rms_norm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x63);
    let (rows, n) = (3, 8219);
    let x = rand_vec::<T>(&mut rng, rows * n);
    let sc = rand_vec::<T>(&mut rng, n);
    let (bx, bs) = (kit.upload(&x)?, kit.upload(&sc)?);
    let out = kit.alloc(T::DTYPE, x.len())?;
    ops::rms_norm(kit, &out, &bx, &bs, ops::RmsNorm { rows, n, eps: 1e-6 })?;
    let want = reference::rms_norm(&x, &sc, rows, n, 1e-6);
    Ok(mismatch(&out.download::<T>()?, &want))
}

macro_rules! float_checks {
    ($v:ident, $op:literal, $f:ident) => {
        $v.push(Check {
            op: $op,
            dtype: DType::F32,
            run: $f::<f32>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::F64,
            run: $f::<f64>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::F16,
            run: $f::<gpukit_core::half::f16>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::BF16,
            run: $f::<gpukit_core::half::bf16>,
        });
    };
}

/// This block's checks, in a fixed order.
#[allow(clippy::vec_init_then_push)]
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(12);
    float_checks!(v, "layer_norm_ex", layer_norm_ex);
    float_checks!(v, "group_norm", group_norm);
    float_checks!(v, "rms_norm", rms_norm);
    v
}
