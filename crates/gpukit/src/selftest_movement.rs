//! Self-checks of the neural-network family: the `movement` group. Each op at each
//! dtype on one random case (NaN, ±inf, -0.0 and subnormals among the values),
//! compared bit for bit with the reference oracle.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops::{self, AxisSlice, AxisSlot, Resize2d};
use crate::selftest_common::{Check, Rng};

fn mismatch<T: Element>(what: &str, got: &[T], want: &[T]) -> Option<String> {
    crate::selftest_common::mismatch(got, want).map(|m| format!("{what}: {m}"))
}

fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            if T::DTYPE.is_float() {
                T::from_f64(rng.f32_with_specials() as f64 * 64.0).unwrap_or_default()
            } else {
                T::from_f64((rng.next_u64() % 20_001) as f64 - 10_000.0).unwrap_or_default()
            }
        })
        .collect()
}

fn concat<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x41);
    let (outer, inner, lens) = (5, 33, [3usize, 0, 7, 1]);
    let data: Vec<Vec<T>> = lens
        .iter()
        .map(|&l| rand_vec::<T>(&mut rng, outer * l * inner))
        .collect();
    let refs: Vec<&[T]> = data.iter().map(|v| v.as_slice()).collect();
    let want = reference::concat(&refs, outer, &lens, inner);
    let bufs = data
        .iter()
        .map(|v| kit.upload(v))
        .collect::<Result<Vec<_>>>()?;
    let brefs: Vec<_> = bufs.iter().collect();
    let out = kit.alloc(T::DTYPE, want.len())?;
    ops::concat(kit, &out, &brefs, outer, &lens, inner)?;
    if let Some(m) = mismatch("concat", &out.download::<T>()?, &want) {
        return Ok(Some(m));
    }
    let slot = AxisSlot {
        outer,
        src_axis: 7,
        inner,
        dst_axis: 11,
        offset: 3,
    };
    let dst = kit.upload(&want)?;
    ops::copy_into_axis(kit, &dst, &bufs[2], slot)?;
    let want = reference::copy_into_axis(&want, &data[2], outer, 7, inner, 11, 3);
    Ok(mismatch("copy_into_axis", &dst.download::<T>()?, &want))
}

fn slice<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x42);
    let s = AxisSlice {
        outer: 7,
        axis_len: 29,
        inner: 13,
        start: -20,
        len: 7,
        step: 3,
    };
    let x = rand_vec::<T>(&mut rng, 7 * 29 * 13);
    let want = reference::slice_axis(&x, 7, 29, 13, -20, 7, 3)?;
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, want.len())?);
    ops::slice(kit, &out, &bx, s)?;
    Ok(mismatch("slice", &out.download::<T>()?, &want))
}

fn permute<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x43);
    for (dims, perm) in [
        (vec![2usize, 3, 1, 5, 2, 3], vec![5usize, 0, 3, 1, 4, 2]),
        (vec![67, 129], vec![1, 0]),
    ] {
        let x = rand_vec::<T>(&mut rng, dims.iter().product());
        let want = reference::permute(&x, &dims, &perm);
        let out = kit.alloc(T::DTYPE, x.len())?;
        let b = kit.upload(&x)?;
        ops::permute(kit, &out, &b, &dims, &perm)?;
        if let Some(m) = mismatch("permute", &out.download::<T>()?, &want) {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

fn expand<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x44);
    let x = rand_vec::<T>(&mut rng, 5 * 7);
    let (ind, outd) = ([5usize, 1, 7], [3usize, 5, 4, 7]);
    let want = reference::expand(&x, &ind, &outd);
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, want.len())?);
    ops::expand(kit, &out, &bx, &ind, &outd)?;
    if let Some(m) = mismatch("expand", &out.download::<T>()?, &want) {
        return Ok(Some(m));
    }
    let want = reference::expand_last(&x, 35, 9);
    let out = kit.alloc(T::DTYPE, want.len())?;
    ops::expand_last(kit, &out, &bx, 35, 9)?;
    Ok(mismatch("expand_last", &out.download::<T>()?, &want))
}

const RESIZE: Resize2d = Resize2d {
    n: 2,
    c: 3,
    in_h: 13,
    in_w: 17,
    out_h: 29,
    out_w: 8,
};

fn resize_bilinear<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x45);
    let r = RESIZE;
    let x = rand_vec::<T>(&mut rng, 6 * r.in_h * r.in_w);
    let bx = kit.upload(&x)?;
    for align in [false, true] {
        let want = reference::resize_bilinear(&x, 6, (r.in_h, r.in_w), (r.out_h, r.out_w), align);
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::resize_bilinear(kit, &out, &bx, r, align)?;
        if let Some(m) = mismatch("resize_bilinear", &out.download::<T>()?, &want) {
            return Ok(Some(format!("align_corners {align}: {m}")));
        }
    }
    Ok(None)
}

fn resize_nearest<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x46);
    let r = RESIZE;
    let x = rand_vec::<T>(&mut rng, 6 * r.in_h * r.in_w);
    let want = reference::resize_nearest(&x, 6, (r.in_h, r.in_w), (r.out_h, r.out_w));
    let (bx, out) = (kit.upload(&x)?, kit.alloc(T::DTYPE, want.len())?);
    ops::resize_nearest(kit, &out, &bx, r)?;
    Ok(mismatch("resize_nearest", &out.download::<T>()?, &want))
}

fn eos_gather<T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x47);
    let (batch, seq, d) = (4, 77, 65);
    let ids: Vec<i64> = (0..batch * seq)
        .map(|_| (rng.next_u64() % 50) as i64 - 10)
        .collect();
    let x = rand_vec::<T>(&mut rng, batch * seq * d);
    let want = reference::eos_gather(&x, &ids, batch, seq, d);
    let (bx, bi) = (kit.upload(&x)?, kit.upload(&ids)?);
    let out = kit.alloc(T::DTYPE, want.len())?;
    ops::eos_gather(kit, &out, &bx, &bi, batch, seq, d)?;
    Ok(mismatch("eos_gather", &out.download::<T>()?, &want))
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

macro_rules! all_checks {
    ($v:ident, $op:literal, $f:ident) => {
        float_checks!($v, $op, $f);
        $v.push(Check {
            op: $op,
            dtype: DType::I64,
            run: $f::<i64>,
        });
        $v.push(Check {
            op: $op,
            dtype: DType::I32,
            run: $f::<i32>,
        });
    };
}

/// The group's checks, in a fixed order.
#[allow(clippy::vec_init_then_push)] // the pushes come from the macros above
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(40);
    all_checks!(v, "concat/copy_into_axis", concat);
    all_checks!(v, "slice", slice);
    all_checks!(v, "permute", permute);
    all_checks!(v, "expand", expand);
    float_checks!(v, "resize_bilinear", resize_bilinear);
    all_checks!(v, "resize_nearest", resize_nearest);
    all_checks!(v, "eos_gather", eos_gather);
    v
}
