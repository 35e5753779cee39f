//! Self-checks of the neural-network family: the `norm` group. Each op at each dtype on
//! one random case (NaN, ±inf, -0.0 and subnormals among the values; rows past one
//! reduction chunk), compared bit for bit with the reference oracle.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, mismatch, rand_vec};

fn batch_norm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x41);
    let (n, c, s) = (2, 5, 97);
    let x = rand_vec::<T>(&mut rng, n * c * s);
    let st: Vec<Vec<T>> = (0..4).map(|_| rand_vec::<T>(&mut rng, c)).collect();
    let b: Vec<_> = st.iter().map(|v| kit.upload(v)).collect::<Result<_>>()?;
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, x.len())?);
    let p = ops::BatchNorm {
        shape: &[n, c, s],
        eps: 1e-5,
    };
    ops::batch_norm(kit, &out, &bx, &b[0], &b[1], &b[2], &b[3], p)?;
    let want = reference::batch_norm(&x, &st[0], &st[1], &st[2], &st[3], n, c, s, 1e-5);
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn layer_norm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x42);
    let (rows, n) = (3, 8219);
    let x = rand_vec::<T>(&mut rng, rows * n);
    let (sc, bi) = (rand_vec::<T>(&mut rng, n), rand_vec::<T>(&mut rng, n));
    let (bx, bs, bb) = (kit.upload(&x)?, kit.upload(&sc)?, kit.upload(&bi)?);
    let out = kit.alloc(T::DTYPE, x.len())?;
    let p = ops::LayerNorm { rows, n, eps: 1e-5 };
    ops::layer_norm(kit, &out, &bx, &bs, &bb, p)?;
    let want = reference::layer_norm(&x, &sc, &bi, rows, n, 1e-5);
    Ok(mismatch(&out.download::<T>()?, &want))
}

/// Activation `k` (0 leaky_relu, 1 clip, 2 erf, 3 gelu, 4 gelu_tanh) on one case.
fn activation<T: FloatElement>(kit: &Kit, seed: u64, k: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x43 ^ (k << 8));
    let x = rand_vec::<T>(&mut rng, 20_011);
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, x.len())?);
    let want = match k {
        0 => {
            ops::leaky_relu(kit, &out, &bx, 0.01)?;
            reference::leaky_relu(&x, 0.01)
        }
        1 => {
            ops::clip(kit, &out, &bx, -1.5, 6.0)?;
            reference::clip(&x, -1.5, 6.0)
        }
        2 => {
            ops::erf(kit, &out, &bx)?;
            reference::erf(&x)
        }
        3 => {
            ops::gelu(kit, &out, &bx)?;
            reference::gelu(&x)
        }
        _ => {
            ops::gelu_tanh(kit, &out, &bx)?;
            reference::gelu_tanh(&x)
        }
    };
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn leaky_relu<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    activation::<T>(kit, seed, 0)
}

fn clip<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    activation::<T>(kit, seed, 1)
}

fn erf<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    activation::<T>(kit, seed, 2)
}

fn gelu<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    activation::<T>(kit, seed, 3)
}

fn gelu_tanh<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    activation::<T>(kit, seed, 4)
}

fn softmax_axis<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x44);
    let shape = [3usize, 37, 45];
    let x = rand_vec::<T>(&mut rng, shape.iter().product());
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, x.len())?);
    for axis in 0..3 {
        ops::softmax_axis(kit, &out, &bx, &shape, axis as i64)?;
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let want = reference::softmax_axis(&x, outer, shape[axis], inner);
        if let Some(m) = mismatch(&out.download::<T>()?, &want) {
            return Ok(Some(format!("axis {axis}: {m}")));
        }
    }
    Ok(None)
}

fn argmax<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x45);
    let (rows, n) = (7, 1031);
    let x = rand_vec::<T>(&mut rng, rows * n);
    let (bx, out) = (kit.upload(&x)?, kit.alloc(DType::I64, rows)?);
    ops::argmax(kit, &out, &bx, rows, n)?;
    Ok(mismatch(
        &out.download::<i64>()?,
        &reference::argmax(&x, rows, n),
    ))
}

fn reduce_l2<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x46);
    let (rows, n) = (4, 8219);
    let x = rand_vec::<T>(&mut rng, rows * n);
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, rows)?);
    ops::reduce_l2(kit, &out, &bx, rows, n)?;
    Ok(mismatch(
        &out.download::<T>()?,
        &reference::reduce_l2(&x, rows, n),
    ))
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

/// The group's checks, in a fixed order.
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(64);
    float_checks!(v, "batch_norm", batch_norm);
    float_checks!(v, "layer_norm", layer_norm);
    float_checks!(v, "leaky_relu", leaky_relu);
    float_checks!(v, "clip", clip);
    float_checks!(v, "erf", erf);
    float_checks!(v, "gelu", gelu);
    float_checks!(v, "gelu_tanh", gelu_tanh);
    float_checks!(v, "softmax_axis", softmax_axis);
    float_checks!(v, "argmax", argmax);
    v.push(Check {
        op: "argmax",
        dtype: DType::I64,
        run: argmax::<i64>,
    });
    v.push(Check {
        op: "argmax",
        dtype: DType::I32,
        run: argmax::<i32>,
    });
    float_checks!(v, "reduce_l2", reduce_l2);
    v
}
