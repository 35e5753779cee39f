//! Self-checks of the comparison, select and logical groups: one check per kernel
//! (`compare_{src}_to_{dst}` with every comparison, `where_{cond}_cond_{T}`,
//! `logical_{src}_to_{dst}` with every logical op), on random bit patterns (NaN
//! payloads, ±inf, -0.0, subnormals, every magnitude) paired with copies and negations
//! of themselves, compared bit for bit with the reference oracle. Each check is named
//! after its kernel family at the kernel's dtype, so emu-check reports it on the kernel.

use gpukit_core::abi::compare::{compare_from, logical_from, where_by};
use gpukit_core::bytemuck;
use gpukit_core::compare::{CmpOp, LogicOp};
use gpukit_core::half::{bf16, f16};
use gpukit_core::{DType, Element, Kit, Result};
use gpukit_reference as reference;

use crate::ops;
use crate::selftest_common::{Check, Rng, from_bits, mismatch};

/// `x` with the sign bit flipped (floats) or negated (integers, wrapping).
fn negated<T: Element>(x: T) -> T {
    match T::DTYPE {
        DType::I64 => bytemuck::cast(bytemuck::cast::<T, i64>(x).wrapping_neg()),
        DType::I32 => bytemuck::cast(bytemuck::cast::<T, i32>(x).wrapping_neg()),
        DType::F64 => bytemuck::cast(bytemuck::cast::<T, u64>(x) ^ (1 << 63)),
        DType::F32 => bytemuck::cast(bytemuck::cast::<T, u32>(x) ^ (1 << 31)),
        _ => bytemuck::cast(bytemuck::cast::<T, u16>(x) ^ (1 << 15)),
    }
}

const N: usize = 4099;

/// Two operands of `S`: a value and an independent one, a copy, its negation or a zero.
fn operands<S: Element>(rng: &mut Rng) -> (Vec<S>, Vec<S>) {
    let mut a = Vec::with_capacity(N);
    let mut b = Vec::with_capacity(N);
    for _ in 0..N {
        let r = rng.next_u64();
        let x = from_bits::<S>(rng.next_u64(), (r % 64) as u32);
        let y = match r >> 60 {
            0..=5 => from_bits::<S>(rng.next_u64(), ((r >> 8) % 64) as u32),
            6..=9 => x,
            10..=13 => negated(x),
            _ => S::default(),
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

fn compare_check<S: Element, D: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0xc0fe ^ ((S::DTYPE as u64) << 8) ^ D::DTYPE as u64);
    let (a, b) = operands::<S>(&mut rng);
    let (ba, bb, out) = (kit.upload(&a)?, kit.upload(&b)?, kit.alloc(D::DTYPE, N)?);
    for op in CmpOp::ALL {
        ops::compare(kit, &out, &ba, &bb, op)?;
        let want = reference::compare::<S, D>(&a, &b, op);
        if let Some(m) = mismatch(&out.download::<D>()?, &want) {
            return Ok(Some(format!("{}: {m}", op.name())));
        }
    }
    Ok(None)
}

fn logical_check<S: Element, D: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x1091 ^ ((S::DTYPE as u64) << 8) ^ D::DTYPE as u64);
    let (a, b) = operands::<S>(&mut rng);
    let (ba, bb, out) = (kit.upload(&a)?, kit.upload(&b)?, kit.alloc(D::DTYPE, N)?);
    for op in LogicOp::ALL {
        ops::logical(kit, &out, &ba, &bb, op)?;
        let want = reference::logical::<S, D>(&a, &b, op);
        if let Some(m) = mismatch(&out.download::<D>()?, &want) {
            return Ok(Some(format!("{}: {m}", op.name())));
        }
    }
    Ok(None)
}

fn where_check<C: Element, T: Element>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x5e1e ^ ((C::DTYPE as u64) << 8) ^ T::DTYPE as u64);
    let (c, _) = operands::<C>(&mut rng);
    let (a, b) = operands::<T>(&mut rng);
    let (bc, ba, bb) = (kit.upload(&c)?, kit.upload(&a)?, kit.upload(&b)?);
    let out = kit.alloc(T::DTYPE, N)?;
    ops::where_(kit, &out, &bc, &ba, &bb)?;
    Ok(mismatch(
        &out.download::<T>()?,
        &reference::where_::<C, T>(&c, &a, &b),
    ))
}

type Run = fn(&Kit, u64) -> Result<Option<String>>;

macro_rules! row {
    ($v:ident, $f:ident, $op:expr, $s:ty) => {
        for (d, run) in [
            (DType::F32, $f::<$s, f32> as Run),
            (DType::F64, $f::<$s, f64>),
            (DType::F16, $f::<$s, f16>),
            (DType::BF16, $f::<$s, bf16>),
            (DType::I64, $f::<$s, i64>),
            (DType::I32, $f::<$s, i32>),
        ] {
            $v.push(Check {
                op: $op,
                dtype: d,
                run,
            });
        }
    };
}

macro_rules! family {
    ($v:ident, $f:ident, $name:ident) => {
        row!($v, $f, $name(DType::F32), f32);
        row!($v, $f, $name(DType::F64), f64);
        row!($v, $f, $name(DType::F16), f16);
        row!($v, $f, $name(DType::BF16), bf16);
        row!($v, $f, $name(DType::I64), i64);
        row!($v, $f, $name(DType::I32), i32);
    };
}

/// The comparison, select and logical checks: 108, one per kernel.
pub(crate) fn checks() -> Vec<Check> {
    let mut v = Vec::with_capacity(108);
    family!(v, compare_check, compare_from);
    family!(v, where_check, where_by);
    family!(v, logical_check, logical_from);
    v
}
