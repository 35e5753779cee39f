//! The equivalence suite for `ops::compare`, `ops::where_`, `ops::logical` and
//! `ops::logical_not`: every (input dtype, output dtype) pair on every backend of
//! [`gpukit_tests::backends`] (cpu, its SIMD/thread variants, ptx-emu, cuda where
//! present) against the reference oracle, bit for bit, 256 proptest cases per pair
//! (`GPUKIT_CASES`), each case drawing its op.
//!
//! Operand pairs are drawn so that the deciding cases occur often: equal values, a value
//! and its negation (-0.0 against +0.0), NaN (any payload) against anything, ±inf,
//! subnormals, the integer extremes (i64 beyond 2^53), empty and ragged lengths; in place
//! (out = a) where the dtypes allow.

use gpukit::half::{bf16, f16};
use gpukit::{DType, Element, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, len_with_edges, on_backends, value};
use ops::{CmpOp, LogicOp};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// `x` negated (floats: the sign bit flipped, so ±0.0 and NaN payloads too; integers:
/// wrapping).
fn negated<T: Element>(x: T) -> T {
    match T::DTYPE {
        DType::I64 => gpukit::bytemuck::cast(gpukit::bytemuck::cast::<T, i64>(x).wrapping_neg()),
        DType::I32 => gpukit::bytemuck::cast(gpukit::bytemuck::cast::<T, i32>(x).wrapping_neg()),
        DType::F64 => gpukit::bytemuck::cast(gpukit::bytemuck::cast::<T, u64>(x) ^ (1 << 63)),
        DType::F32 => gpukit::bytemuck::cast(gpukit::bytemuck::cast::<T, u32>(x) ^ (1 << 31)),
        _ => gpukit::bytemuck::cast(gpukit::bytemuck::cast::<T, u16>(x) ^ (1 << 15)),
    }
}

/// An operand pair: independent, equal, or negated.
fn pair<T: TestElem>() -> impl Strategy<Value = (T, T)> {
    (value::<T>(), value::<T>(), 0u8..4).prop_map(|(x, y, k)| match k {
        0 | 1 => (x, y),
        2 => (x, x),
        _ => (x, negated(x)),
    })
}

fn pairs<T: TestElem>() -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    len_with_edges(3000)
        .prop_flat_map(|n| proptest::collection::vec(pair::<T>(), n))
        .prop_map(|v| v.into_iter().unzip())
}

fn cmp_op() -> impl Strategy<Value = CmpOp> {
    (0usize..6).prop_map(|i| CmpOp::ALL[i])
}

fn logic_op() -> impl Strategy<Value = LogicOp> {
    (0usize..4).prop_map(|i| LogicOp::ALL[i])
}

fn check_compare<S: TestElem, D: TestElem>(
    a: &[S],
    b: &[S],
    op: CmpOp,
) -> Result<(), TestCaseError> {
    let want = reference::compare::<S, D>(a, b, op);
    let what = format!(
        "compare {} {} -> {} n={}",
        op.name(),
        S::DTYPE,
        D::DTYPE,
        a.len()
    );
    on_backends(&what, &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(D::DTYPE, a.len())?;
        ops::compare(kit, &out, &ba, &bb, op)?;
        out.download()
    })?;
    if S::DTYPE == D::DTYPE {
        on_backends(&format!("{what} in place"), &want, |kit| {
            let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
            ops::compare(kit, &ba, &ba, &bb, op)?;
            ba.download()
        })?;
    }
    Ok(())
}

fn check_logical<S: TestElem, D: TestElem>(
    a: &[S],
    b: &[S],
    op: LogicOp,
) -> Result<(), TestCaseError> {
    let want = reference::logical::<S, D>(a, b, op);
    let what = format!(
        "logical {} {} -> {} n={}",
        op.name(),
        S::DTYPE,
        D::DTYPE,
        a.len()
    );
    on_backends(&what, &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(D::DTYPE, a.len())?;
        if op == LogicOp::Not {
            ops::logical_not(kit, &out, &ba)?;
        } else {
            ops::logical(kit, &out, &ba, &bb, op)?;
        }
        out.download()
    })?;
    if S::DTYPE == D::DTYPE {
        on_backends(&format!("{what} in place"), &want, |kit| {
            let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
            ops::logical(kit, &bb, &ba, &bb, op)?;
            bb.download()
        })?;
    }
    Ok(())
}

fn check_where<C: TestElem, T: TestElem>(
    cond: &[C],
    a: &[T],
    b: &[T],
) -> Result<(), TestCaseError> {
    let want = reference::where_::<C, T>(cond, a, b);
    let what = format!("where cond {} data {} n={}", C::DTYPE, T::DTYPE, a.len());
    on_backends(&what, &want, |kit| {
        let (bc, ba, bb) = (kit.upload(cond)?, kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(T::DTYPE, a.len())?;
        ops::where_(kit, &out, &bc, &ba, &bb)?;
        out.download()
    })?;
    on_backends(&format!("{what} in place (out = b)"), &want, |kit| {
        let (bc, ba, bb) = (kit.upload(cond)?, kit.upload(a)?, kit.upload(b)?);
        ops::where_(kit, &bb, &bc, &ba, &bb)?;
        bb.download()
    })?;
    Ok(())
}

/// A condition of `C` and two data operands of `T`, one length.
fn where_case<C: TestElem, T: TestElem>() -> impl Strategy<Value = (Vec<C>, Vec<T>, Vec<T>)> {
    len_with_edges(3000).prop_flat_map(|n| {
        (
            proptest::collection::vec(
                prop_oneof![2 => value::<C>(), 1 => Just(C::default()), 1 => Just(negated(C::default()))],
                n,
            ),
            proptest::collection::vec(value::<T>(), n),
            proptest::collection::vec(value::<T>(), n),
        )
    })
}

macro_rules! pair_tests {
    ($m:ident, $s:ty, $d:ty) => {
        mod $m {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test]
                fn compare((a, b) in pairs::<$s>(), op in cmp_op()) {
                    check_compare::<$s, $d>(&a, &b, op)?;
                }
                #[test]
                fn logical((a, b) in pairs::<$s>(), op in logic_op()) {
                    check_logical::<$s, $d>(&a, &b, op)?;
                }
                #[test]
                fn where_((c, a, b) in where_case::<$s, $d>()) {
                    check_where::<$s, $d>(&c, &a, &b)?;
                }
            }
        }
    };
}

// Every (family dtype, output dtype) pair: compare and logical read `$s` and write `$d`;
// where reads a condition of `$s` and data of `$d`.
pair_tests!(f32_to_f32, f32, f32);
pair_tests!(f32_to_f64, f32, f64);
pair_tests!(f32_to_f16, f32, f16);
pair_tests!(f32_to_bf16, f32, bf16);
pair_tests!(f32_to_i64, f32, i64);
pair_tests!(f32_to_i32, f32, i32);
pair_tests!(f64_to_f32, f64, f32);
pair_tests!(f64_to_f64, f64, f64);
pair_tests!(f64_to_f16, f64, f16);
pair_tests!(f64_to_bf16, f64, bf16);
pair_tests!(f64_to_i64, f64, i64);
pair_tests!(f64_to_i32, f64, i32);
pair_tests!(f16_to_f32, f16, f32);
pair_tests!(f16_to_f64, f16, f64);
pair_tests!(f16_to_f16, f16, f16);
pair_tests!(f16_to_bf16, f16, bf16);
pair_tests!(f16_to_i64, f16, i64);
pair_tests!(f16_to_i32, f16, i32);
pair_tests!(bf16_to_f32, bf16, f32);
pair_tests!(bf16_to_f64, bf16, f64);
pair_tests!(bf16_to_f16, bf16, f16);
pair_tests!(bf16_to_bf16, bf16, bf16);
pair_tests!(bf16_to_i64, bf16, i64);
pair_tests!(bf16_to_i32, bf16, i32);
pair_tests!(i64_to_f32, i64, f32);
pair_tests!(i64_to_f64, i64, f64);
pair_tests!(i64_to_f16, i64, f16);
pair_tests!(i64_to_bf16, i64, bf16);
pair_tests!(i64_to_i64, i64, i64);
pair_tests!(i64_to_i32, i64, i32);
pair_tests!(i32_to_f32, i32, f32);
pair_tests!(i32_to_f64, i32, f64);
pair_tests!(i32_to_f16, i32, f16);
pair_tests!(i32_to_bf16, i32, bf16);
pair_tests!(i32_to_i64, i32, i64);
pair_tests!(i32_to_i32, i32, i32);

/// The rules by hand on every backend: NaN, -0.0, ±inf, i64 beyond 2^53, truth of NaN
/// and -0.0, 1 / 0 in a float and an integer mask.
#[test]
fn fixed_cases() {
    let nan = f32::NAN;
    let a = [1.0f32, nan, -0.0, f32::INFINITY, -f32::INFINITY, 3.0, nan];
    let b = [2.0f32, 1.0, 0.0, f32::INFINITY, 0.0, 3.0, nan];
    let want: [(CmpOp, [i32; 7]); 6] = [
        (CmpOp::Eq, [0, 0, 1, 1, 0, 1, 0]),
        (CmpOp::Ne, [1, 1, 0, 0, 1, 0, 1]),
        (CmpOp::Lt, [1, 0, 0, 0, 1, 0, 0]),
        (CmpOp::Le, [1, 0, 1, 1, 1, 1, 0]),
        (CmpOp::Gt, [0, 0, 0, 0, 0, 0, 0]),
        (CmpOp::Ge, [0, 0, 1, 1, 0, 1, 0]),
    ];
    let big = [(1i64 << 60) + 1, i64::MIN, 5];
    let big_b = [1i64 << 60, i64::MIN + 1, 5];
    for (name, kit) in backends() {
        let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        for (op, w) in want {
            let out = kit.alloc(DType::I32, 7).unwrap();
            ops::compare(&kit, &out, &ba, &bb, op).unwrap();
            assert_eq!(out.download::<i32>().unwrap(), w, "{name} {op:?}");
            assert_eq!(
                reference::compare::<f32, i32>(&a, &b, op),
                w,
                "oracle {op:?}"
            );
        }
        let out = kit.alloc(DType::F16, 3).unwrap();
        let (x, y) = (kit.upload(&big).unwrap(), kit.upload(&big_b).unwrap());
        ops::compare(&kit, &out, &x, &y, CmpOp::Gt).unwrap();
        let got: Vec<u16> = out
            .download::<f16>()
            .unwrap()
            .iter()
            .map(|h| h.to_bits())
            .collect();
        assert_eq!(got, [0x3c00, 0, 0], "{name} i64 gt into f16");
        // Truth: NaN true, -0.0 false.
        let m = kit.upload(&[nan, -0.0, 0.0, 1e-45]).unwrap();
        let out = kit.alloc(DType::F64, 4).unwrap();
        ops::logical_not(&kit, &out, &m).unwrap();
        assert_eq!(
            out.download::<f64>().unwrap(),
            [0.0, 1.0, 1.0, 0.0],
            "{name} not"
        );
        let d = kit.upload(&[10i64, 20, 30, 40]).unwrap();
        let e = kit.upload(&[-1i64, -2, -3, -4]).unwrap();
        let out = kit.alloc(DType::I64, 4).unwrap();
        ops::where_(&kit, &out, &m, &d, &e).unwrap();
        assert_eq!(
            out.download::<i64>().unwrap(),
            [10, -2, -3, 40],
            "{name} where"
        );
        let bf = kit
            .upload(&[bf16::ONE, bf16::ZERO, bf16::NAN, bf16::from_bits(0x8000)])
            .unwrap();
        let bg = kit
            .upload(&[bf16::ONE, bf16::ONE, bf16::ZERO, bf16::ONE])
            .unwrap();
        let out = kit.alloc(DType::BF16, 4).unwrap();
        ops::logical(&kit, &out, &bf, &bg, LogicOp::Xor).unwrap();
        let got: Vec<f32> = out
            .download::<bf16>()
            .unwrap()
            .iter()
            .map(|h| h.to_f32())
            .collect();
        assert_eq!(got, [0.0, 1.0, 1.0, 1.0], "{name} xor");
    }
}

/// Large inputs (several rayon chunks on the CPU, a capped grid-stride grid on the
/// emulator).
#[test]
fn large_inputs_split_and_agree() {
    let n = 150_001;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let a: Vec<f32> = (0..n)
        .map(|_| f32::from_bits(next() as u32 & 0x8fff_ffff))
        .collect();
    let b: Vec<f32> = a
        .iter()
        .map(|&x| if next() % 3 == 0 { x } else { -x })
        .collect();
    check_compare::<f32, i32>(&a, &b, CmpOp::Le).unwrap();
    check_logical::<f32, f16>(&a, &b, LogicOp::Xor).unwrap();
    let c: Vec<i64> = (0..n).map(|_| (next() % 3) as i64 - 1).collect();
    check_where::<i64, f32>(&c, &a, &b).unwrap();
}
