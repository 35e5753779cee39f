//! Self-checks of the neural-network family: the `attention` group. Each op at each
//! float dtype on one random case (values with NaN, ±inf, -0.0 and subnormals; masks
//! with kept, biased, -1e30, -inf and fully masked rows; key counts past two key tiles),
//! compared bit for bit with the reference oracle; the general attention also with
//! per-query and boolean masks, causal, grouped K/V heads and a narrower V.

use gpukit_core::numeric::FloatElement;
use gpukit_core::{Buf, DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops::{self, AttentionShape};
use crate::selftest_common::{Check, Rng, mismatch};

/// Values in [-2, 2) with a special about one time in sixteen.
fn rand_vec<T: Element>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::from_f64(rng.f32_with_specials() as f64 * 2.0).unwrap_or_default())
        .collect()
}

/// Mask rows: row r % 4 = 0 all kept, 1 random biases and drops, 2 trailing padding,
/// 3 fully masked.
fn rand_mask<T: Element>(rng: &mut Rng, rows: usize, nkv: usize) -> Vec<T> {
    let mut m = Vec::with_capacity(rows * nkv);
    for r in 0..rows {
        for j in 0..nkv {
            let x = match r % 4 {
                0 => 0.0,
                1 => match rng.next_u64() % 4 {
                    0 => -1e30,
                    1 => f64::NEG_INFINITY,
                    _ => (rng.next_u64() % 7) as f64 - 3.0,
                },
                2 if j >= nkv / 2 => -1e30,
                2 => 0.0,
                _ => f64::NEG_INFINITY,
            };
            m.push(T::from_f64(x).unwrap_or_default());
        }
    }
    m
}

const HEADS: usize = 4;
const N: usize = 37;
const NKV: usize = 131;
const HD: usize = 24;

fn inputs<T: Element>(rng: &mut Rng) -> (Vec<T>, Vec<T>, Vec<T>) {
    (
        rand_vec(rng, HEADS * N * HD),
        rand_vec(rng, HEADS * NKV * HD),
        rand_vec(rng, HEADS * NKV * HD),
    )
}

fn shape() -> AttentionShape {
    AttentionShape::new(HEADS, N, NKV, HD)
}

fn upload3<T: Element>(kit: &Kit, q: &[T], k: &[T], v: &[T]) -> Result<(Buf, Buf, Buf)> {
    Ok((kit.upload(q)?, kit.upload(k)?, kit.upload(v)?))
}

fn fused<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x41);
    let (q, k, v) = inputs::<T>(&mut rng);
    let (bq, bk, bv) = upload3(kit, &q, &k, &v)?;
    let out = kit.alloc(T::DTYPE, q.len())?;
    ops::attention(kit, &out, &bq, &bk, &bv, shape())?;
    let s = shape().scale;
    let want = reference::attention(&q, &k, &v, None, HEADS, N, NKV, HD, 1, s);
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn masked<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x42);
    let (q, k, v) = inputs::<T>(&mut rng);
    let hpb = 1;
    let mask = rand_mask::<T>(&mut rng, HEADS / hpb, NKV);
    let (bq, bk, bv) = upload3(kit, &q, &k, &v)?;
    let bm = kit.upload(&mask)?;
    let out = kit.alloc(T::DTYPE, q.len())?;
    ops::attention_masked(kit, &out, &bq, &bk, &bv, &bm, hpb, shape())?;
    let s = shape().scale;
    let want = reference::attention(&q, &k, &v, Some(&mask), HEADS, N, NKV, HD, hpb, s);
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn batch<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x43);
    let b = 4;
    let (heads, n, nkv, hd) = (3, 9, 70, 16);
    let w = heads * hd;
    let q = rand_vec::<T>(&mut rng, b * n * w);
    let k = rand_vec::<T>(&mut rng, b * nkv * w);
    let v = rand_vec::<T>(&mut rng, b * nkv * w);
    let mask = rand_mask::<T>(&mut rng, b, nkv);
    let (bq, bk, bv) = upload3(kit, &q, &k, &v)?;
    let bm = kit.upload(&mask)?;
    let out = kit.alloc(T::DTYPE, q.len())?;
    let sh = AttentionShape::new(heads, n, nkv, hd);
    ops::attention_batch(kit, &out, &bq, &bk, &bv, &bm, b, sh)?;
    let want = reference::attention_batch(&q, &k, &v, Some(&mask), b, heads, n, nkv, hd, sh.scale);
    Ok(mismatch(&out.download::<T>()?, &want))
}

fn composed<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x44);
    let (q, k, v) = inputs::<T>(&mut rng);
    let hpb = 2;
    let mask = rand_mask::<T>(&mut rng, HEADS / hpb, NKV);
    let (bq, bk, bv) = upload3(kit, &q, &k, &v)?;
    let bm = kit.upload(&mask)?;
    let out = kit.alloc(T::DTYPE, q.len())?;
    let scores = kit.alloc(T::DTYPE, HEADS * N * NKV)?;
    ops::attention_composed(kit, &out, &scores, &bq, &bk, &bv, &bm, hpb, shape())?;
    let s = shape().scale;
    let (want, p) =
        reference::attention_composed(&q, &k, &v, Some(&mask), HEADS, N, NKV, HD, hpb, s);
    if let Some(m) = mismatch(&scores.download::<T>()?, &p) {
        return Ok(Some(format!("probabilities: {m}")));
    }
    Ok(mismatch(&out.download::<T>()?, &want))
}

/// The general fused attention, head-major: two sequences, 4 query heads over 2 K/V
/// heads, V rows narrower than Q/K rows, an additive per-query mask `[2, 1, N, NKV]`
/// whose query rows cycle through `rand_mask`'s kinds (kept, biased and dropped, padded,
/// fully masked).
fn general<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x45);
    let (b, vd) = (2, 20);
    let spec = ops::AttentionSpec::new(b, HEADS, N, NKV, HD)
        .with_kv_heads(2)
        .with_v_head_dim(vd)
        .with_mask_shape(ops::AttentionMaskKind::Additive, [b, 1, N]);
    let q = rand_vec::<T>(&mut rng, b * HEADS * N * HD);
    let k = rand_vec::<T>(&mut rng, b * 2 * NKV * HD);
    let v = rand_vec::<T>(&mut rng, b * 2 * NKV * vd);
    let mask = rand_mask::<T>(&mut rng, b * N, NKV);
    run_general(kit, &q, &k, &v, &mask, &spec)
}

/// The general fused attention, interleaved and causal (top-left), with a boolean
/// per-sequence key mask `[3, 1, 1, NKV]` (1 keeps, 0 drops, NaN keeps), more queries
/// than keys so that late rows see every key and early ones few, multi-query (one K/V
/// head).
fn general_causal<T: FloatElement>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x46);
    let (b, heads, n, nkv, hd) = (3, 2, 70, 67, 40);
    let spec = ops::AttentionSpec::new(b, heads, n, nkv, hd)
        .with_kv_heads(1)
        .with_interleaved(true)
        .with_causal(true)
        .with_mask_shape(ops::AttentionMaskKind::Boolean, [b, 1, 1]);
    let q = rand_vec::<T>(&mut rng, b * n * heads * hd);
    let k = rand_vec::<T>(&mut rng, b * nkv * hd);
    let v = rand_vec::<T>(&mut rng, b * nkv * hd);
    let mask: Vec<T> = (0..b * nkv)
        .map(|i| {
            let x = match (i / nkv, rng.next_u64() % 8) {
                (2, _) => 0.0, // a fully masked sequence
                (_, 0) => 0.0,
                (_, 1) => f64::NAN,
                _ => 1.0,
            };
            T::from_f64(x).unwrap_or_default()
        })
        .collect();
    run_general(kit, &q, &k, &v, &mask, &spec)
}

fn run_general<T: FloatElement>(
    kit: &Kit,
    q: &[T],
    k: &[T],
    v: &[T],
    mask: &[T],
    spec: &ops::AttentionSpec,
) -> Result<Option<String>> {
    let (bq, bk, bv) = upload3(kit, q, k, v)?;
    let bm = kit.upload(mask)?;
    let (_, _, _, ol) = spec.lens().unwrap_or_default();
    let out = kit.alloc(T::DTYPE, ol)?;
    ops::attention_general(kit, &out, &bq, &bk, &bv, &bm, spec)?;
    let want = reference::attention_general(q, k, v, Some(mask), spec);
    Ok(mismatch(&out.download::<T>()?, &want))
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
        float_checks!("attention", fused),
        float_checks!("attention_masked", masked),
        float_checks!("attention_batch", batch),
        float_checks!("attention_composed", composed),
        float_checks!("attention_general", general),
        float_checks!("attention_general_causal", general_causal),
    ]
    .concat()
}
