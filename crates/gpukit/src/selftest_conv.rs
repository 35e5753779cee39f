//! Self-checks of the neural-network family: the `conv` group. Each op at each float
//! dtype on one random case (NaN, ±inf, -0.0 and subnormals among the values, shapes
//! past the CPU tiles with padding, strides, dilation and groups), compared bit for bit
//! with the reference oracle.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops::{self, Conv2dParams, ConvTranspose2dParams, GemmParams, MaxPool2dParams};
use crate::selftest_common::{Check, Rng, mismatch};

fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f64(rng.f32_with_specials() as f64 * 8.0).unwrap_or_default())
        .collect()
}

fn gemm<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x41);
    let p = GemmParams {
        alpha: 0.75,
        beta: -1.5,
        trans_b: true,
        ..GemmParams::new(37, 261, 45)
    };
    let a = rand_vec::<T>(&mut rng, p.m * p.k);
    let b = rand_vec::<T>(&mut rng, p.k * p.n);
    let c = rand_vec::<T>(&mut rng, p.m * p.n);
    let bias = rand_vec::<T>(&mut rng, p.n);
    let (ba, bb, bc, bbias) = (
        kit.upload(&a)?,
        kit.upload(&b)?,
        kit.upload(&c)?,
        kit.upload(&bias)?,
    );
    let y = kit.alloc(T::DTYPE, p.m * p.n)?;
    ops::gemm(kit, &y, &ba, &bb, Some(&bc), Some(&bbias), &p)?;
    let want = reference::gemm(&a, &b, Some(&c), Some(&bias), &p);
    if let Some(m) = mismatch(&y.download::<T>()?, &want) {
        return Ok(Some(format!("trans_b: {m}")));
    }
    let p = GemmParams {
        trans_b: false,
        ..p
    };
    ops::gemm(kit, &y, &ba, &bb, None, None, &p)?;
    let want = reference::gemm(&a, &b, None, None, &p);
    if let Some(m) = mismatch(&y.download::<T>()?, &want) {
        return Ok(Some(format!("plain: {m}")));
    }
    // trans_a, broadcast C and linear (crates/gpukit/src/selftest_linalg.rs).
    crate::selftest_linalg::gemm_extra::<T>(kit, seed)
}

fn conv2d<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x42);
    for p in [
        Conv2dParams {
            pads: [1, 2, 0, 1],
            strides: [2, 1],
            dilations: [1, 2],
            groups: 2,
            ..Conv2dParams::new(2, 6, 13, 11, 22, 3, 3)
        },
        Conv2dParams {
            pads: [1; 4],
            groups: 5,
            ..Conv2dParams::new(1, 5, 9, 9, 5, 3, 3)
        },
    ] {
        let x = rand_vec::<T>(&mut rng, p.n * p.c_in * p.h * p.w);
        let w = rand_vec::<T>(&mut rng, p.c_out * (p.c_in / p.groups) * p.kh * p.kw);
        let bias = rand_vec::<T>(&mut rng, p.c_out);
        let (bx, bw, bb) = (kit.upload(&x)?, kit.upload(&w)?, kit.upload(&bias)?);
        let y = kit.alloc(T::DTYPE, ops::conv2d_out_shape(&p)?.iter().product())?;
        ops::conv2d(kit, &y, &bx, &bw, Some(&bb), &p)?;
        let want = reference::conv2d(&x, &w, Some(&bias), &p);
        if let Some(m) = mismatch(&y.download::<T>()?, &want) {
            return Ok(Some(format!("groups {}: {m}", p.groups)));
        }
    }
    Ok(None)
}

fn conv_transpose2d<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x43);
    let p = ConvTranspose2dParams {
        pads: [1, 0, 1, 2],
        strides: [2, 3],
        output_padding: [1, 2],
        dilations: [1, 2],
        groups: 2,
        ..ConvTranspose2dParams::new(2, 4, 7, 6, 18, 3, 3)
    };
    let x = rand_vec::<T>(&mut rng, p.n * p.c_in * p.h * p.w);
    let w = rand_vec::<T>(&mut rng, p.c_in * (p.c_out / p.groups) * p.kh * p.kw);
    let bias = rand_vec::<T>(&mut rng, p.c_out);
    let (bx, bw, bb) = (kit.upload(&x)?, kit.upload(&w)?, kit.upload(&bias)?);
    let y = kit.alloc(
        T::DTYPE,
        ops::conv_transpose2d_out_shape(&p)?.iter().product(),
    )?;
    ops::conv_transpose2d(kit, &y, &bx, &bw, Some(&bb), &p)?;
    let want = reference::conv_transpose2d(&x, &w, Some(&bias), &p);
    Ok(mismatch(&y.download::<T>()?, &want))
}

fn max_pool2d<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x44);
    let p = MaxPool2dParams {
        pads: [1, 1, 2, 0],
        strides: [2, 3],
        dilations: [2, 1],
        ..MaxPool2dParams::new(2, 3, 17, 19, 3, 3)
    };
    let x = rand_vec::<T>(&mut rng, p.n * p.c * p.h * p.w);
    let bx = kit.upload(&x)?;
    let y = kit.alloc(T::DTYPE, ops::max_pool2d_out_shape(&p)?.iter().product())?;
    ops::max_pool2d(kit, &y, &bx, &p)?;
    Ok(mismatch(
        &y.download::<T>()?,
        &reference::max_pool2d(&x, &p),
    ))
}

/// Both storage orders on max_pool2d's geometry; every fourth value repeats an earlier
/// one, so windows hold equal maxima (the first tap wins).
fn max_pool2d_index<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x45);
    let p = MaxPool2dParams {
        pads: [1, 1, 2, 0],
        strides: [2, 1],
        dilations: [2, 1],
        ..MaxPool2dParams::new(2, 3, 17, 19, 3, 3)
    };
    let mut x = rand_vec::<T>(&mut rng, p.n * p.c * p.h * p.w);
    for e in (4..x.len()).step_by(4) {
        x[e] = x[e - 1 - (e % 3)];
    }
    let bx = kit.upload(&x)?;
    let idx = kit.alloc(DType::I64, ops::max_pool2d_out_shape(&p)?.iter().product())?;
    for column_major in [false, true] {
        ops::max_pool2d_index(kit, &idx, &bx, &p, column_major)?;
        let want = reference::max_pool2d_index(&x, &p, column_major);
        if let Some(m) = mismatch(&idx.download::<i64>()?, &want) {
            return Ok(Some(format!("column_major {column_major}: {m}")));
        }
    }
    Ok(None)
}

macro_rules! float_checks {
    ($op:literal, $f:ident) => {
        [
            Check {
                op: $op,
                dtype: DType::F32,
                run: $f::<f32>,
            },
            Check {
                op: $op,
                dtype: DType::F64,
                run: $f::<f64>,
            },
            Check {
                op: $op,
                dtype: DType::F16,
                run: $f::<gpukit_core::half::f16>,
            },
            Check {
                op: $op,
                dtype: DType::BF16,
                run: $f::<gpukit_core::half::bf16>,
            },
        ]
    };
}

/// The group's checks, in a fixed order.
pub(crate) fn checks() -> Vec<Check> {
    [
        float_checks!("gemm", gemm),
        float_checks!("conv2d", conv2d),
        float_checks!("conv_transpose2d", conv_transpose2d),
        float_checks!("max_pool2d", max_pool2d),
        float_checks!("max_pool2d_index", max_pool2d_index),
    ]
    .into_iter()
    .flatten()
    .collect()
}
