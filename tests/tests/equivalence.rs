//! The equivalence suite: every op × dtype, on every backend of
//! [`gpukit_tests::backends`], against the reference oracle, bit for bit (any NaN equals
//! any NaN). Shapes reach 0, 1, primes and every tile and chunk edge; values reach NaN,
//! ±inf, -0.0, subnormals and huge and tiny magnitudes.
//!
//! `GPUKIT_CASES=N` raises the case count (default 256 per op × dtype).

use gpukit::half::{bf16, f16};
use gpukit::numeric::{Arith, BinaryOp, FloatElement, UnaryOp};
use gpukit::{DType, Element, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, check_same_bits, dim, len_with_edges, values};
use gpukit_tests::{cfg, on_backends, on_kits};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn pair<T: TestElem>(max: usize) -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    len_with_edges(max).prop_flat_map(|n| (values::<T>(n), values::<T>(n)))
}

/// Bases over the whole value mix, exponents where powers stay mostly finite: small
/// integers (odd and even, for negative bases) half the time, fractions in [-8, 8] the
/// rest, and now and then a special.
fn pow_pair<T: TestElem>(max: usize) -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    let specials = T::specials();
    let exponent = prop_oneof![
        4 => (-8i32..=8).prop_map(|e| T::from_moderate(e as f64)),
        4 => (-8.0f64..8.0).prop_map(T::from_moderate),
        1 => (0..specials.len()).prop_map(move |i| specials[i]),
    ];
    len_with_edges(max).prop_flat_map(move |n| {
        (
            values::<T>(n),
            proptest::collection::vec(exponent.clone(), n),
        )
    })
}

fn check_binary<T: Arith>(
    op: BinaryOp,
    a: &[T],
    b: &[T],
) -> std::result::Result<(), TestCaseError> {
    let want = reference::binary(op, a, b);
    on_backends(op.name(), &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(T::DTYPE, a.len())?;
        ops::binary(kit, op, &out, &ba, &bb)?;
        out.download()
    })?;
    // In place (out = a) gives the same bits.
    on_backends(&format!("{} in place", op.name()), &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        ops::binary(kit, op, &ba, &ba, &bb)?;
        ba.download()
    })
}

/// A broadcast case: output dims, and per operand its data and strides.
type Bcast<T> = (Vec<usize>, Vec<T>, Vec<usize>, Vec<T>, Vec<usize>);

fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![0; shape.len()];
    let mut acc = 1;
    for d in (0..shape.len()).rev() {
        s[d] = if shape[d] == 1 { 0 } else { acc };
        acc *= shape[d];
    }
    s
}

fn broadcast_case<T: TestElem>() -> impl Strategy<Value = Bcast<T>> {
    proptest::collection::vec(
        (
            prop_oneof![3 => 1usize..7, 1 => 0usize..2, 1 => Just(33usize)],
            any::<bool>(),
            any::<bool>(),
        ),
        0..5,
    )
    .prop_flat_map(|spec| {
        let dims: Vec<usize> = spec.iter().map(|s| s.0).collect();
        let ashape: Vec<usize> = spec.iter().map(|s| if s.1 { 1 } else { s.0 }).collect();
        let bshape: Vec<usize> = spec.iter().map(|s| if s.2 { 1 } else { s.0 }).collect();
        let (na, nb) = (
            ashape.iter().product::<usize>(),
            bshape.iter().product::<usize>(),
        );
        (
            Just(dims),
            values::<T>(na),
            Just(contiguous_strides(&ashape)),
            values::<T>(nb),
            Just(contiguous_strides(&bshape)),
        )
    })
}

fn check_broadcast<T: Arith>(op: BinaryOp, c: &Bcast<T>) -> std::result::Result<(), TestCaseError> {
    let (dims, a, astr, b, bstr) = c;
    let want = reference::binary_broadcast(op, dims, a, astr, b, bstr);
    on_backends(&format!("{}_bc {dims:?}", op.name()), &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(T::DTYPE, dims.iter().product())?;
        ops::binary_broadcast(kit, op, &out, dims, &ba, astr, &bb, bstr)?;
        out.download()
    })
}

fn check_unary<T: FloatElement>(op: UnaryOp, a: &[T]) -> std::result::Result<(), TestCaseError> {
    let want = reference::unary(op, a);
    on_backends(op.name(), &want, |kit| {
        let ba = kit.upload(a)?;
        let out = kit.alloc(T::DTYPE, a.len())?;
        ops::unary(kit, op, &out, &ba)?;
        out.download()
    })
}

fn square_plus() -> ops::MapFn {
    ops::MapFn {
        name: "square_plus".into(),
        cuda_expr: "x * x + x".into(),
        f32: |x| x * x + x,
        f64: |x| x * x + x,
    }
}

fn check_map<T: FloatElement>(a: &[T]) -> std::result::Result<(), TestCaseError> {
    let want = reference::map(|x| x * x + x, a);
    // A user map is CUDA C on CUDA and the emulator: it needs NVRTC there.
    on_kits(
        gpukit_tests::backends_compiling_cuda(),
        "map",
        &want,
        |kit| {
            let ba = kit.upload(a)?;
            ops::map(kit, &square_plus(), &ba, &ba)?;
            ba.download()
        },
    )
}

fn matmul_case<T: TestElem>() -> impl Strategy<Value = (usize, usize, usize, Vec<T>, Vec<T>)> {
    (dim(70), dim(70), dim(70)).prop_flat_map(|(m, k, n)| {
        (
            Just(m),
            Just(k),
            Just(n),
            values::<T>(m * k),
            values::<T>(k * n),
        )
    })
}

fn check_matmul<T: FloatElement>(
    c: &(usize, usize, usize, Vec<T>, Vec<T>),
) -> std::result::Result<(), TestCaseError> {
    let (m, k, n, a, b) = c;
    let want = reference::matmul(a, b, *m, *k, *n);
    on_backends(&format!("matmul {m}x{k}x{n}"), &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(T::DTYPE, m * n)?;
        ops::matmul(kit, &out, &ba, &bb, *m, *k, *n)?;
        out.download()
    })
}

type BmmCase<T> = (usize, usize, usize, usize, usize, usize, Vec<T>, Vec<T>);

fn bmm_case<T: TestElem>() -> impl Strategy<Value = BmmCase<T>> {
    (0usize..5, dim(20), dim(20), dim(20), 0usize..3, 0usize..3).prop_flat_map(
        |(batch, m, k, n, amode, bmode)| {
            // Stride modes: 0 = broadcast, 1 = packed, 2 = padded by 3 elements.
            let stride = |mode: usize, size: usize| match mode {
                0 => 0,
                1 => size,
                _ => size + 3,
            };
            let (sa, sb) = (stride(amode, m * k), stride(bmode, k * n));
            let span = |s: usize, size: usize| {
                if batch == 0 {
                    0
                } else {
                    (batch - 1) * s + size
                }
            };
            (
                Just(batch),
                Just(m),
                Just(k),
                Just(n),
                Just(sa),
                Just(sb),
                values::<T>(span(sa, m * k)),
                values::<T>(span(sb, k * n)),
            )
        },
    )
}

fn check_bmm<T: FloatElement>(c: &BmmCase<T>) -> std::result::Result<(), TestCaseError> {
    let (batch, m, k, n, sa, sb, a, b) = c;
    let want = reference::bmm(a, b, *batch, *m, *k, *n, *sa, *sb);
    on_backends(
        &format!("bmm {batch}x{m}x{k}x{n} strides {sa},{sb}"),
        &want,
        |kit| {
            let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
            let out = kit.alloc(T::DTYPE, batch * m * n)?;
            ops::bmm(kit, &out, &ba, &bb, *batch, *m, *k, *n, *sa, *sb)?;
            out.download()
        },
    )
}

type IndexCase<T> = (usize, usize, usize, Vec<T>, Vec<i64>, Vec<T>);

fn index_case<T: TestElem>() -> impl Strategy<Value = IndexCase<T>> {
    (0usize..4, 0usize..7, 0usize..6, 0usize..9).prop_flat_map(|(outer, axis, inner, nidx)| {
        // Valid indices only (negative ones included); an empty axis takes none.
        let nidx = if axis == 0 { 0 } else { nidx };
        let bound = axis.max(1) as i64;
        (
            Just(outer),
            Just(axis),
            Just(inner),
            values::<T>(outer * axis * inner),
            proptest::collection::vec(-bound..bound, nidx),
            values::<T>(outer * nidx * inner),
        )
    })
}

fn check_gather<T: Element>(c: &IndexCase<T>) -> std::result::Result<(), TestCaseError> {
    let (outer, axis, inner, data, idx, _) = c;
    let want = reference::gather(data, idx, *outer, *axis, *inner)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    on_backends(
        &format!("gather {outer}x{axis}x{inner} idx {idx:?}"),
        &want,
        |kit| {
            let (bd, bi) = (kit.upload(data)?, kit.upload(idx)?);
            let out = kit.alloc(T::DTYPE, outer * idx.len() * inner)?;
            ops::gather(kit, &out, &bd, &bi, *outer, *axis, *inner)?;
            out.download()
        },
    )
}

fn check_scatter<T: Element>(c: &IndexCase<T>) -> std::result::Result<(), TestCaseError> {
    let (outer, axis, inner, data, idx, upd) = c;
    let want = reference::scatter(data, idx, upd, *outer, *axis, *inner)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    on_backends(
        &format!("scatter {outer}x{axis}x{inner} idx {idx:?}"),
        &want,
        |kit| {
            let (bd, bi, bu) = (kit.upload(data)?, kit.upload(idx)?, kit.upload(upd)?);
            let y = kit.alloc(T::DTYPE, data.len())?;
            ops::scatter(kit, &y, &bd, &bi, &bu, *outer, *axis, *inner)?;
            // In place too.
            ops::scatter(kit, &bd, &bd, &bi, &bu, *outer, *axis, *inner)?;
            let (y, d) = (y.download::<T>()?, bd.download::<T>()?);
            if check_same_bits("in place", &d, &y).is_err() {
                return Err(gpukit::Error::InvalidArgument {
                    op: "scatter".into(),
                    reason: "in-place result differs".into(),
                });
            }
            Ok(y)
        },
    )
}

fn softmax_case<T: TestElem>() -> impl Strategy<Value = (usize, usize, Vec<T>)> {
    (0usize..4, len_with_edges(9000))
        .prop_flat_map(|(rows, cols)| (Just(rows), Just(cols), values::<T>(rows * cols)))
}

fn check_softmax<T: FloatElement>(
    c: &(usize, usize, Vec<T>),
) -> std::result::Result<(), TestCaseError> {
    let (rows, cols, a) = c;
    let want = reference::softmax_rows(a, *rows, *cols);
    on_backends(&format!("softmax {rows}x{cols}"), &want, |kit| {
        let ba = kit.upload(a)?;
        let out = kit.alloc(T::DTYPE, a.len())?;
        ops::softmax_rows(kit, &out, &ba, *rows, *cols)?;
        out.download()
    })
}

fn check_sum<T: Arith>(a: &[T]) -> std::result::Result<(), TestCaseError> {
    let want = [reference::sum(a)];
    on_backends(&format!("sum n={}", a.len()), &want, |kit| {
        let ba = kit.upload(a)?;
        let out = kit.alloc(T::DTYPE, 1)?;
        ops::sum(kit, &out, &ba)?;
        out.download()
    })
}

fn check_dot<T: FloatElement>(a: &[T], b: &[T]) -> std::result::Result<(), TestCaseError> {
    let want = [reference::dot(a, b)];
    on_backends(&format!("dot n={}", a.len()), &want, |kit| {
        let (ba, bb) = (kit.upload(a)?, kit.upload(b)?);
        let out = kit.alloc(T::DTYPE, 1)?;
        ops::dot(kit, &out, &ba, &bb)?;
        out.download()
    })
}

macro_rules! all_dtypes {
    ($m:ident, $strategy:ident, $check:ident $(, $arg:expr)?) => {
        mod $m {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>()) { $check::<f32>($($arg,)? &c)?; }
                #[test] fn t_f64(c in $strategy::<f64>()) { $check::<f64>($($arg,)? &c)?; }
                #[test] fn t_f16(c in $strategy::<f16>()) { $check::<f16>($($arg,)? &c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>()) { $check::<bf16>($($arg,)? &c)?; }
                #[test] fn t_i64(c in $strategy::<i64>()) { $check::<i64>($($arg,)? &c)?; }
                #[test] fn t_i32(c in $strategy::<i32>()) { $check::<i32>($($arg,)? &c)?; }
            }
        }
    };
}

macro_rules! float_dtypes {
    ($m:ident, $strategy:ident, $check:ident $(, $arg:expr)?) => {
        mod $m {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>()) { $check::<f32>($($arg,)? &c)?; }
                #[test] fn t_f64(c in $strategy::<f64>()) { $check::<f64>($($arg,)? &c)?; }
                #[test] fn t_f16(c in $strategy::<f16>()) { $check::<f16>($($arg,)? &c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>()) { $check::<bf16>($($arg,)? &c)?; }
            }
        }
    };
}

fn pair20k<T: TestElem>() -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    pair::<T>(20_000)
}
fn pow20k<T: TestElem>() -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    pow_pair::<T>(20_000)
}
fn vec20k<T: TestElem>() -> impl Strategy<Value = Vec<T>> {
    len_with_edges(20_000).prop_flat_map(values::<T>)
}
fn vec70k<T: TestElem>() -> impl Strategy<Value = Vec<T>> {
    len_with_edges(70_000).prop_flat_map(values::<T>)
}
fn pair70k<T: TestElem>() -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    pair::<T>(70_000)
}

fn binary_pair<T: Arith>(
    op: BinaryOp,
    c: &(Vec<T>, Vec<T>),
) -> std::result::Result<(), TestCaseError> {
    check_binary(op, &c.0, &c.1)
}
fn unary_vec<T: FloatElement>(op: UnaryOp, c: &[T]) -> std::result::Result<(), TestCaseError> {
    check_unary(op, c)
}
fn dot_pair<T: FloatElement>(c: &(Vec<T>, Vec<T>)) -> std::result::Result<(), TestCaseError> {
    check_dot(&c.0, &c.1)
}
fn map_vec<T: FloatElement>(c: &[T]) -> std::result::Result<(), TestCaseError> {
    check_map(c)
}
fn sum_vec<T: Arith>(c: &[T]) -> std::result::Result<(), TestCaseError> {
    check_sum(c)
}

all_dtypes!(add, pair20k, binary_pair, BinaryOp::Add);
all_dtypes!(sub, pair20k, binary_pair, BinaryOp::Sub);
all_dtypes!(mul, pair20k, binary_pair, BinaryOp::Mul);
all_dtypes!(div, pair20k, binary_pair, BinaryOp::Div);
all_dtypes!(pow, pair20k, binary_pair, BinaryOp::Pow);
all_dtypes!(pow_moderate, pow20k, binary_pair, BinaryOp::Pow);
all_dtypes!(add_bc, broadcast_case, check_broadcast, BinaryOp::Add);
all_dtypes!(sub_bc, broadcast_case, check_broadcast, BinaryOp::Sub);
all_dtypes!(mul_bc, broadcast_case, check_broadcast, BinaryOp::Mul);
all_dtypes!(div_bc, broadcast_case, check_broadcast, BinaryOp::Div);
all_dtypes!(pow_bc, broadcast_case, check_broadcast, BinaryOp::Pow);
float_dtypes!(relu, vec20k, unary_vec, UnaryOp::Relu);
float_dtypes!(sigmoid, vec20k, unary_vec, UnaryOp::Sigmoid);
float_dtypes!(exp, vec20k, unary_vec, UnaryOp::Exp);
float_dtypes!(tanh, vec20k, unary_vec, UnaryOp::Tanh);
float_dtypes!(sqrt, vec20k, unary_vec, UnaryOp::Sqrt);
float_dtypes!(log, vec20k, unary_vec, UnaryOp::Log);
float_dtypes!(abs, vec20k, unary_vec, UnaryOp::Abs);
float_dtypes!(neg, vec20k, unary_vec, UnaryOp::Neg);
float_dtypes!(rsqrt, vec20k, unary_vec, UnaryOp::Rsqrt);
float_dtypes!(silu, vec20k, unary_vec, UnaryOp::Silu);
float_dtypes!(softplus, vec20k, unary_vec, UnaryOp::Softplus);
float_dtypes!(sin, vec20k, unary_vec, UnaryOp::Sin);
float_dtypes!(cos, vec20k, unary_vec, UnaryOp::Cos);
float_dtypes!(map, vec20k, map_vec);
float_dtypes!(matmul, matmul_case, check_matmul);
float_dtypes!(bmm, bmm_case, check_bmm);
all_dtypes!(gather, index_case, check_gather);
all_dtypes!(scatter, index_case, check_scatter);
float_dtypes!(softmax, softmax_case, check_softmax);
all_dtypes!(sum, vec70k, sum_vec);
float_dtypes!(dot, pair70k, dot_pair);

#[test]
fn skipped_backends_are_reported() {
    for (name, why) in gpukit_tests::skipped_backends() {
        eprintln!("equivalence suite: backend `{name}` SKIPPED: {why}");
    }
    assert!(!backends().is_empty());
}

/// A deliberately wrong matmul kernel (multiply then add: two roundings instead of one
/// fused multiply-add) must be caught by the suite's comparison.
#[test]
fn an_unfused_matmul_is_caught() {
    let wrong = gpukit::KernelDef::new("matmul_unfused").cpu(|blk| {
        let (c, a, b, n) = (
            blk.buf::<f32>(0)?,
            blk.buf::<f32>(1)?,
            blk.buf::<f32>(2)?,
            blk.i64(3)? as usize,
        );
        let i = blk.block_idx().x as usize;
        for j in 0..n {
            let mut acc = 0.0f32;
            for t in 0..n {
                acc += a.get(i * n + t) * b.get(t * n + j);
            }
            c.set(i * n + j, acc);
        }
        Ok(())
    });
    let n = 24;
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 7.0)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 104729 % 1000) as f32 - 500.0) / 3.0)
        .collect();
    let want = reference::matmul(&a, &b, n, n, n);
    let kit = gpukit::cpu().unwrap();
    let mut got = vec![0.0f32; n * n];
    kit.run(
        &wrong,
        gpukit::LaunchConfig {
            grid: gpukit::Dim3::x(n as u32),
            block: gpukit::Dim3::x(1),
            shared_bytes: 0,
        },
        &mut [
            gpukit::Binding::output(&mut got),
            gpukit::Binding::input(&a),
            gpukit::Binding::input(&b),
            gpukit::Binding::I64(n as i64),
        ],
    )
    .unwrap();
    assert!(check_same_bits("unfused matmul", &got, &want).is_err());
    // The real op passes the same comparison.
    let (ba, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
    let c = kit.alloc(DType::F32, n * n).unwrap();
    ops::matmul(&kit, &c, &ba, &bb, n, n, n).unwrap();
    assert!(check_same_bits("matmul", &c.download::<f32>().unwrap(), &want).is_ok());
}

/// A sum in plain sequential order (not the reduction shape) must be caught.
#[test]
fn a_sequential_sum_is_caught() {
    let a: Vec<f32> = (0..10_000).map(|i| 1.0 + (i % 97) as f32 * 1e-3).collect();
    let sequential = [a.iter().fold(0.0f32, |s, &x| s + x)];
    let want = [reference::sum(&a)];
    assert!(check_same_bits("sequential sum", &sequential, &want).is_err());
    let kit = gpukit::cpu().unwrap();
    let (ba, out) = (kit.upload(&a).unwrap(), kit.alloc(DType::F32, 1).unwrap());
    ops::sum(&kit, &out, &ba).unwrap();
    assert!(check_same_bits("sum", &out.download::<f32>().unwrap(), &want).is_ok());
}
