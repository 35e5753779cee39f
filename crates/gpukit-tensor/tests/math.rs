//! `Tensor` math against host computations (one IEEE operation per element, fma
//! chains for products) or against the raw op on host-prepared data, on the CPU and the
//! PTX emulator, with the two bit-identical.

mod common;

use common::*;
use gpukit::ops::{self, BinaryOp, UnaryOp};
use gpukit::{DType, Error, Kit, Tensor};

/// Host numpy broadcast of `f(a, b)` over `out` dims (right-aligned, 1 stretches).
fn host_bc(a: &[f32], ad: &[usize], b: &[f32], bd: &[usize], out: &[usize], f: HostFn) -> Vec<f32> {
    let idx = |dims: &[usize], c: &[usize]| -> usize {
        let lead = c.len() - dims.len();
        let st = strides(dims);
        (0..dims.len())
            .map(|d| if dims[d] == 1 { 0 } else { c[lead + d] * st[d] })
            .sum()
    };
    coords(out)
        .iter()
        .map(|c| f(a[idx(ad, c)], b[idx(bd, c)]))
        .collect()
}

/// A host binary function.
type HostFn = fn(f32, f32) -> f32;

const BINS: [(BinaryOp, HostFn); 4] = [
    (BinaryOp::Add, |x, y| x + y),
    (BinaryOp::Sub, |x, y| x - y),
    (BinaryOp::Mul, |x, y| x * y),
    (BinaryOp::Div, |x, y| x / y),
];

#[test]
fn binary_broadcasting_matches_the_host() {
    let cases: [(&[usize], &[usize], &[usize]); 6] = [
        (&[2, 3], &[2, 3], &[2, 3]),
        (&[2, 1, 3], &[4, 1], &[2, 4, 3]),
        (&[], &[3], &[3]),
        (&[1], &[0, 2], &[0, 2]),
        (&[3, 1], &[], &[3, 1]),
        (&[1, 1], &[1], &[1, 1]),
    ];
    let kits = kits();
    for (ad, bd, od) in cases {
        let a = values(ad.iter().product(), 11);
        let b = values(bd.iter().product(), 12);
        let mut per_kit = Vec::new();
        for kit in &kits {
            let ta = Tensor::from_slice(kit, &a, ad).unwrap();
            let tb = Tensor::from_slice(kit, &b, bd).unwrap();
            for (op, f) in BINS {
                let r = ta.binary(op, &tb).unwrap();
                check_f32(&r, od, &host_bc(&a, ad, &b, bd, od, f));
                per_kit.push(r.to_vec::<f32>().unwrap());
            }
            check_f32(
                &(&ta + &tb).unwrap(),
                od,
                &host_bc(&a, ad, &b, bd, od, |x, y| x + y),
            );
            check_f32(
                &(&ta - &tb).unwrap(),
                od,
                &host_bc(&a, ad, &b, bd, od, |x, y| x - y),
            );
            check_f32(
                &(&ta * &tb).unwrap(),
                od,
                &host_bc(&a, ad, &b, bd, od, |x, y| x * y),
            );
            check_f32(
                &(&ta / &tb).unwrap(),
                od,
                &host_bc(&a, ad, &b, bd, od, |x, y| x / y),
            );
        }
        let (cpu, emu) = per_kit.split_at(per_kit.len() / 2);
        for (x, y) in cpu.iter().zip(emu) {
            assert!(same_f32(x, y), "cpu and ptx-emu differ");
        }
    }
}

#[test]
fn binary_on_views_and_scalars() {
    for kit in kits() {
        let a = values(12, 21);
        let t = Tensor::from_slice(&kit, &a, &[3, 4]).unwrap();
        // A transposed operand, a negative-step operand, a broadcast column.
        let tt = t.t().unwrap(); // [4, 3]
        let rev = t.slice(&[0], &[-1], &[i64::MIN], &[-1]).unwrap(); // rows reversed
        let col = t.narrow(1, 1, 1).unwrap(); // [3, 1], strided
        let want: Vec<f32> = (0..12)
            .map(|i| {
                let (r, c) = (i / 4, i % 4);
                a[(2 - r) * 4 + c] * a[r * 4 + 1]
            })
            .collect();
        check_f32(&rev.mul(&col).unwrap(), &[3, 4], &want);
        let want: Vec<f32> = (0..12).map(|i| a[(i % 3) * 4 + i / 3] - a[i]).collect();
        let flat = Tensor::from_slice(&kit, &a, &[4, 3]).unwrap();
        check_f32(&tt.sub(&flat).unwrap(), &[4, 3], &want);
        // Scalars are converted once to the dtype, then one IEEE operation.
        let s = 0.1f64;
        check_f32(
            &t.add_scalar(s).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x + 0.1f32).collect::<Vec<_>>(),
        );
        check_f32(
            &t.sub_scalar(s).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x - 0.1f32).collect::<Vec<_>>(),
        );
        check_f32(
            &(&t * 2.0).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x * 2.0).collect::<Vec<_>>(),
        );
        check_f32(
            &t.mul_scalar(-0.0).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x * -0.0).collect::<Vec<_>>(),
        );
        check_f32(
            &(&t / 3.0).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x / 3.0).collect::<Vec<_>>(),
        );
        check_f32(
            &t.div_scalar(0.0).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x / 0.0).collect::<Vec<_>>(),
        );
        check_f32(
            &(&t + 1.0).unwrap(),
            &[3, 4],
            &a.iter().map(|&x| x + 1.0).collect::<Vec<_>>(),
        );
        // Integers: wrapping add, the contract's division by zero.
        let i = Tensor::from_slice(&kit, &[i64::MAX, 7, -7, 0], &[2, 2]).unwrap();
        assert_eq!(
            (&i + 1.0).unwrap().to_vec::<i64>().unwrap(),
            [i64::MIN, 8, -6, 1]
        );
        assert_eq!(
            i.div_scalar(0.0).unwrap().to_vec::<i64>().unwrap(),
            [0, 0, 0, 0]
        );
        assert_eq!(
            i.div_scalar(2.0).unwrap().to_vec::<i64>().unwrap(),
            [i64::MAX / 2, 3, -3, 0]
        );
        assert!(matches!(i.add_scalar(0.5), Err(Error::Conversion { .. })));
        // Errors name the op and both shapes.
        let msg = err_text(t.add(&Tensor::zeros(&kit, &[3], DType::F32).unwrap()));
        assert!(
            msg.contains("add")
                && msg.contains("[3, 4]")
                && msg.contains("[3]")
                && msg.contains("axis 1"),
            "{msg}"
        );
        assert!(matches!(t.add(&i), Err(Error::DType { .. })));
        let other = gpukit::cpu().unwrap();
        let foreign = Tensor::zeros(&other, &[3, 4], DType::F32).unwrap();
        assert!(matches!(t.mul(&foreign), Err(Error::DeviceMismatch { .. })));
    }
}

/// The raw op on the same data, as the oracle for functions with a portable
/// implementation (exp, tanh, gelu, ...).
fn raw(
    kit: &Kit,
    data: &[f32],
    f: impl Fn(&Kit, &gpukit::Buf, &gpukit::Buf) -> gpukit::Result<()>,
) -> Vec<f32> {
    let x = kit.upload(data).unwrap();
    let out = kit.alloc(DType::F32, data.len()).unwrap();
    f(kit, &out, &x).unwrap();
    out.download::<f32>().unwrap()
}

#[test]
fn unary_and_activations_have_the_ops_bits() {
    let kits = kits();
    let a = values(40, 31);
    let mut results: Vec<Vec<Vec<f32>>> = Vec::new();
    for kit in &kits {
        // A transposed view: the method copies it, then runs the op.
        let t = Tensor::from_slice(kit, &a, &[5, 8]).unwrap().t().unwrap();
        let ta: Vec<f32> = (0..40).map(|i| a[(i % 5) * 8 + i / 5]).collect();
        let mut got = Vec::new();
        for op in UnaryOp::ALL {
            let r = t.unary(op).unwrap();
            check_f32(
                &r,
                &[8, 5],
                &raw(kit, &ta, |k, o, x| ops::unary(k, op, o, x)),
            );
            got.push(r.to_vec::<f32>().unwrap());
        }
        check_f32(
            &t.relu().unwrap(),
            &[8, 5],
            &ta.iter()
                .map(|&x| if x > 0.0 || x.is_nan() { x } else { 0.0 })
                .collect::<Vec<_>>(),
        );
        check_f32(
            &t.sqrt().unwrap(),
            &[8, 5],
            &ta.iter().map(|x| x.sqrt()).collect::<Vec<_>>(),
        );
        for (r, want) in [
            (t.exp(), raw(kit, &ta, ops::exp)),
            (t.log(), raw(kit, &ta, ops::log)),
            (t.tanh(), raw(kit, &ta, ops::tanh)),
            (t.sigmoid(), raw(kit, &ta, ops::sigmoid)),
            (t.gelu(), raw(kit, &ta, ops::gelu)),
            (t.gelu_tanh(), raw(kit, &ta, ops::gelu_tanh)),
            (t.erf(), raw(kit, &ta, ops::erf)),
            (
                t.leaky_relu(0.1),
                raw(kit, &ta, |k, o, x| ops::leaky_relu(k, o, x, 0.1)),
            ),
            (
                t.clip(-1.0, 2.0),
                raw(kit, &ta, |k, o, x| ops::clip(k, o, x, -1.0, 2.0)),
            ),
        ] {
            let r = r.unwrap();
            check_f32(&r, &[8, 5], &want);
            got.push(r.to_vec::<f32>().unwrap());
        }
        results.push(got);
        let i = Tensor::zeros(kit, &[2], DType::I32).unwrap();
        assert!(matches!(i.exp(), Err(Error::DType { .. })));
        assert!(matches!(i.gelu(), Err(Error::DType { .. })));
        assert!(matches!(
            t.clip(f64::NAN, 1.0),
            Err(Error::InvalidArgument { .. })
        ));
        // ONNX's lo > hi rule: every element becomes hi.
        let flipped = t.clip(2.0, 1.0).unwrap().to_vec::<f32>().unwrap();
        let src = t.to_vec::<f32>().unwrap();
        assert!(
            flipped
                .iter()
                .zip(&src)
                .all(|(&v, &x)| if x.is_nan() { v.is_nan() } else { v == 1.0 }),
            "{flipped:?}"
        );
        assert!(matches!(
            t.leaky_relu(f64::NAN),
            Err(Error::InvalidArgument { .. })
        ));
        // Empty and rank-0 tensors.
        assert_eq!(
            Tensor::zeros(kit, &[0, 3], DType::F32)
                .unwrap()
                .exp()
                .unwrap()
                .dims(),
            &[0, 3]
        );
        check_f32(
            &Tensor::scalar(kit, -0.0f32).unwrap().relu().unwrap(),
            &[],
            &[0.0],
        );
    }
    for (x, y) in results[0].iter().zip(&results[1]) {
        assert!(same_f32(x, y), "cpu and ptx-emu differ");
    }
}

/// The maps added for models: `abs`/`neg` (and `-&t`) against the host's sign-bit
/// operations, `rsqrt` against the host's `1 / sqrt`, `silu`/`softplus` against the
/// raw op and the contract's scalar chain; integer `neg` is wrapping `0 - x`.
#[test]
fn abs_neg_rsqrt_silu_softplus() {
    use gpukit::numeric::{silu, softplus};
    let kits = kits();
    let a = values(40, 37);
    let mut results: Vec<Vec<Vec<f32>>> = Vec::new();
    for kit in &kits {
        // A transposed view: each method copies it first.
        let t = Tensor::from_slice(kit, &a, &[5, 8]).unwrap().t().unwrap();
        let ta: Vec<f32> = (0..40).map(|i| a[(i % 5) * 8 + i / 5]).collect();
        let host = |f: fn(f32) -> f32| ta.iter().map(|&x| f(x)).collect::<Vec<f32>>();
        let cases = [
            (
                t.abs().unwrap(),
                host(|x| f32::from_bits(x.to_bits() & 0x7fff_ffff)),
            ),
            (
                t.neg().unwrap(),
                host(|x| f32::from_bits(x.to_bits() ^ 0x8000_0000)),
            ),
            (
                (-&t).unwrap(),
                host(|x| f32::from_bits(x.to_bits() ^ 0x8000_0000)),
            ),
            (t.rsqrt().unwrap(), host(|x| 1.0 / x.sqrt())),
            (t.silu().unwrap(), host(silu::<f32>)),
            (t.softplus().unwrap(), host(softplus::<f32>)),
        ];
        let mut got = Vec::new();
        for (r, want) in &cases {
            check_f32(r, &[8, 5], want);
            got.push(r.to_vec::<f32>().unwrap());
        }
        type RawOp = fn(&Kit, &gpukit::Buf, &gpukit::Buf) -> gpukit::Result<()>;
        for (r, f) in [
            (t.silu().unwrap(), ops::silu as RawOp),
            (t.softplus().unwrap(), ops::softplus),
            (t.rsqrt().unwrap(), ops::rsqrt),
        ] {
            check_f32(&r, &[8, 5], &raw(kit, &ta, f));
        }
        results.push(got);
        // -0.0 and +0.0: the sign bit, not 0 - x.
        let z = Tensor::from_slice(kit, &[0.0f32, -0.0], &[2]).unwrap();
        let n = z.neg().unwrap().to_vec::<f32>().unwrap();
        assert_eq!((n[0].to_bits(), n[1].to_bits()), (0x8000_0000, 0));
        // f64, f16 and bf16 run the same maps (compute in f64 / f32).
        let d = Tensor::from_slice(kit, &[-2.0f64, 0.25], &[2]).unwrap();
        assert_eq!(d.abs().unwrap().to_vec::<f64>().unwrap(), [2.0, 0.25]);
        assert_eq!(d.rsqrt().unwrap().to_vec::<f64>().unwrap()[1], 2.0);
        let h = Tensor::from_slice(kit, &[gpukit::half::f16::from_f32(-3.0)], &[1]).unwrap();
        let hn = h.neg().unwrap().to_vec::<gpukit::half::f16>().unwrap();
        assert_eq!(hn[0].to_f32(), 3.0);
        // Integers: neg is wrapping 0 - x, abs x < 0 ? -x : x; the float-only maps are
        // DType errors.
        let i = Tensor::from_slice(kit, &[3i64, -7, i64::MIN, 0], &[2, 2]).unwrap();
        assert_eq!(
            (-&i).unwrap().to_vec::<i64>().unwrap(),
            [-3, 7, i64::MIN, 0]
        );
        let i32t = Tensor::from_slice(kit, &[5i32, i32::MIN], &[2]).unwrap();
        assert_eq!(i32t.neg().unwrap().to_vec::<i32>().unwrap(), [-5, i32::MIN]);
        assert_eq!(
            i.abs().unwrap().to_vec::<i64>().unwrap(),
            [3, 7, i64::MIN, 0]
        );
        assert_eq!(i32t.abs().unwrap().to_vec::<i32>().unwrap(), [5, i32::MIN]);
        for r in [i.rsqrt(), i.silu(), i.softplus()] {
            assert!(matches!(r, Err(Error::DType { .. })), "{r:?}");
        }
        // Empty and rank 0.
        let e = Tensor::zeros(kit, &[0, 3], DType::F32).unwrap();
        assert_eq!(e.softplus().unwrap().dims(), &[0, 3]);
        check_f32(
            &Tensor::scalar(kit, -0.0f32).unwrap().abs().unwrap(),
            &[],
            &[0.0],
        );
    }
    for (x, y) in results[0].iter().zip(&results[1]) {
        assert!(same_f32(x, y), "cpu and ptx-emu differ");
    }
}

/// The contract's matmul: per output, an fma chain over `t` ascending from +0.0.
fn host_mm(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for t in 0..k {
                acc = a[r * k + t].mul_add(b[t * n + j], acc);
            }
            c[r * n + j] = acc;
        }
    }
    c
}

#[test]
fn matmul_with_batches_and_broadcasting() {
    let kits = kits();
    let a = finite(2 * 3 * 4, 41);
    let b = finite(3 * 4 * 5, 42);
    let mut outs = Vec::new();
    for kit in &kits {
        let t2a = Tensor::from_slice(kit, &a[..12], &[3, 4]).unwrap();
        let t2b = Tensor::from_slice(kit, &b[..20], &[4, 5]).unwrap();
        let r = t2a.matmul(&t2b).unwrap();
        check_f32(&r, &[3, 5], &host_mm(&a[..12], &b[..20], 3, 4, 5));
        outs.push(r.to_vec::<f32>().unwrap());
        // Batch [2] @ a rank-2 right side (run as one [6, 4] @ [4, 5] GEMM).
        let ta = Tensor::from_slice(kit, &a, &[2, 3, 4]).unwrap();
        let r = ta.matmul(&t2b).unwrap();
        let want = [
            host_mm(&a[..12], &b[..20], 3, 4, 5),
            host_mm(&a[12..], &b[..20], 3, 4, 5),
        ]
        .concat();
        check_f32(&r, &[2, 3, 5], &want);
        // Batch dims [2, 1] and [3] broadcast to [2, 3] (the left side expanded).
        let ta = Tensor::from_slice(kit, &a, &[2, 1, 3, 4]).unwrap();
        let tb = Tensor::from_slice(kit, &b, &[3, 4, 5]).unwrap();
        let r = ta.matmul(&tb).unwrap();
        let mut want = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                want.extend(host_mm(
                    &a[i * 12..i * 12 + 12],
                    &b[j * 20..j * 20 + 20],
                    3,
                    4,
                    5,
                ));
            }
        }
        check_f32(&r, &[2, 3, 3, 5], &want);
        outs.push(r.to_vec::<f32>().unwrap());
        // Rank-1 operands, a transposed operand, empty dims.
        let v = Tensor::from_slice(kit, &b[..4], &[4]).unwrap();
        check_f32(
            &t2a.matmul(&v).unwrap(),
            &[3],
            &host_mm(&a[..12], &b[..4], 3, 4, 1),
        );
        check_f32(
            &v.matmul(&t2b).unwrap(),
            &[5],
            &host_mm(&b[..4], &b[..20], 1, 4, 5),
        );
        check_f32(
            &v.matmul(&v).unwrap(),
            &[],
            &host_mm(&b[..4], &b[..4], 1, 4, 1),
        );
        let at = Tensor::from_slice(kit, &a[..12], &[4, 3])
            .unwrap()
            .t()
            .unwrap();
        let at_host: Vec<f32> = (0..12).map(|i| a[(i % 4) * 3 + i / 4]).collect();
        check_f32(
            &at.matmul(&t2b).unwrap(),
            &[3, 5],
            &host_mm(&at_host, &b[..20], 3, 4, 5),
        );
        let e = Tensor::zeros(kit, &[3, 0], DType::F32).unwrap();
        let e2 = Tensor::zeros(kit, &[0, 2], DType::F32).unwrap();
        check_f32(&e.matmul(&e2).unwrap(), &[3, 2], &[0.0; 6]);
        // Errors.
        let msg = err_text(t2a.matmul(&t2a));
        assert!(
            msg.contains("matmul") && msg.contains("[3, 4] @ [3, 4]") && msg.contains("axis -1"),
            "{msg}"
        );
        let bad = Tensor::zeros(kit, &[3, 4, 5], DType::F32).unwrap();
        let msg = err_text(
            Tensor::zeros(kit, &[2, 3, 4], DType::F32)
                .unwrap()
                .matmul(&bad),
        );
        assert!(msg.contains("batch dims"), "{msg}");
        let s = Tensor::scalar(kit, 1.0f32).unwrap();
        assert!(matches!(s.matmul(&t2a), Err(Error::Shape { .. })));
        let i = Tensor::zeros(kit, &[4, 5], DType::I64).unwrap();
        assert!(matches!(t2a.matmul(&i), Err(Error::DType { .. })));
        let i2 = Tensor::zeros(kit, &[4, 4], DType::I64).unwrap();
        assert!(matches!(i2.matmul(&i2), Err(Error::DType { .. })));
    }
    let (cpu, emu) = outs.split_at(outs.len() / 2);
    for (x, y) in cpu.iter().zip(emu) {
        assert!(same_f32(x, y));
    }
}

#[test]
fn linear_is_gemm_with_a_pytorch_weight() {
    for kit in kits() {
        let x = finite(2 * 3 * 4, 51);
        let w = finite(5 * 4, 52);
        let bias = finite(5, 53);
        let tx = Tensor::from_slice(&kit, &x, &[2, 3, 4]).unwrap();
        let tw = Tensor::from_slice(&kit, &w, &[5, 4]).unwrap();
        let tb = Tensor::from_slice(&kit, &bias, &[5]).unwrap();
        // Host: acc = fma chain of x·w[j], then + bias[j] (alpha = 1).
        let mut want = Vec::new();
        for r in 0..6 {
            for j in 0..5 {
                let mut acc = 0.0f32;
                for t in 0..4 {
                    acc = x[r * 4 + t].mul_add(w[j * 4 + t], acc);
                }
                want.push(acc + bias[j]);
            }
        }
        check_f32(&tx.linear(&tw, Some(&tb)).unwrap(), &[2, 3, 5], &want);
        let nob: Vec<f32> = want
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let (r, j) = (i / 5, i % 5);
                let mut acc = 0.0f32;
                for t in 0..4 {
                    acc = x[r * 4 + t].mul_add(w[j * 4 + t], acc);
                }
                let _ = v;
                acc
            })
            .collect();
        check_f32(&tx.linear(&tw, None).unwrap(), &[2, 3, 5], &nob);
        // Same bits as matmul with the transposed weight (both are fma chains).
        let mm = tx.matmul(&tw.t().unwrap()).unwrap();
        assert!(same_f32(&mm.to_vec::<f32>().unwrap(), &nob));
        let v = Tensor::from_slice(&kit, &x[..4], &[4]).unwrap();
        check_f32(&v.linear(&tw, Some(&tb)).unwrap(), &[5], &want[..5]);
        let msg = err_text(tx.linear(&tw.t().unwrap(), None));
        assert!(msg.contains("linear") && msg.contains("[4, 5]"), "{msg}");
        assert!(matches!(
            tx.linear(&tw, Some(&tw)),
            Err(Error::Shape { .. })
        ));
        let s = Tensor::scalar(&kit, 1.0f32).unwrap();
        assert!(matches!(s.linear(&tw, None), Err(Error::Shape { .. })));
    }
}

#[test]
fn softmax_layer_norm_sum_argmax_norm() {
    let kits = kits();
    let a = values(24, 61);
    let f = finite(24, 62);
    let mut outs = Vec::new();
    for kit in &kits {
        let t = Tensor::from_slice(kit, &f, &[2, 3, 4]).unwrap();
        // Softmax along axis 1 = softmax_rows of the host-transposed data, transposed back.
        let moved: Vec<f32> = coords(&[2, 4, 3])
            .iter()
            .map(|c| f[c[0] * 12 + c[2] * 4 + c[1]])
            .collect();
        let rows = {
            let x = kit.upload(&moved).unwrap();
            let o = kit.alloc(DType::F32, 24).unwrap();
            ops::softmax_rows(kit, &o, &x, 8, 3).unwrap();
            o.download::<f32>().unwrap()
        };
        let want: Vec<f32> = coords(&[2, 3, 4])
            .iter()
            .map(|c| rows[c[0] * 12 + c[2] * 3 + c[1]])
            .collect();
        let sm = t.softmax(-2).unwrap();
        check_f32(&sm, &[2, 3, 4], &want);
        outs.push(sm.to_vec::<f32>().unwrap());
        let msg = err_text(t.softmax(3));
        assert!(
            msg.contains("softmax") && msg.contains("axis 3") && msg.contains("[2, 3, 4]"),
            "{msg}"
        );
        // Layer norm over the last axis = the raw op on [6, 4].
        let w = finite(4, 63);
        let b = finite(4, 64);
        let (tw, tb) = (
            Tensor::from_slice(kit, &w, &[4]).unwrap(),
            Tensor::from_slice(kit, &b, &[4]).unwrap(),
        );
        let ln = t.layer_norm(&tw, &tb, 1e-5).unwrap();
        let want = {
            let (x, wb, bb) = (
                kit.upload(&f).unwrap(),
                kit.upload(&w).unwrap(),
                kit.upload(&b).unwrap(),
            );
            let o = kit.alloc(DType::F32, 24).unwrap();
            ops::layer_norm(
                kit,
                &o,
                &x,
                &wb,
                &bb,
                ops::LayerNorm {
                    rows: 6,
                    n: 4,
                    eps: 1e-5,
                },
            )
            .unwrap();
            o.download::<f32>().unwrap()
        };
        check_f32(&ln, &[2, 3, 4], &want);
        outs.push(ln.to_vec::<f32>().unwrap());
        let msg = err_text(t.layer_norm(&tw.narrow(0, 0, 3).unwrap(), &tb, 1e-5));
        assert!(msg.contains("layer_norm") && msg.contains("[3]"), "{msg}");
        assert!(matches!(
            t.layer_norm(&tw, &tb, -1.0),
            Err(Error::InvalidArgument { .. })
        ));
        let s = Tensor::scalar(kit, 1.0f32).unwrap();
        assert!(matches!(
            s.layer_norm(&tw, &tb, 1e-5),
            Err(Error::Shape { .. })
        ));
        // Sum of everything = the raw op; integers exact; empty gives 0.
        let ta = Tensor::from_slice(kit, &a, &[4, 6]).unwrap();
        let want = raw_sum(kit, &a);
        let got = ta.sum().unwrap();
        assert_eq!(got.rank(), 0);
        assert!(same_f32(&got.to_vec::<f32>().unwrap(), &[want]));
        let ti = Tensor::from_slice(kit, &(1..=10).collect::<Vec<i64>>(), &[2, 5]).unwrap();
        assert_eq!(
            ti.t().unwrap().sum().unwrap().to_scalar::<i64>().unwrap(),
            55
        );
        assert_eq!(
            Tensor::zeros(kit, &[0], DType::F32)
                .unwrap()
                .sum()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
                .to_bits(),
            0
        );
        // Argmax along any axis: first maximum, NaN largest.
        let g = [
            1.0f32,
            5.0,
            5.0,
            f32::NAN,
            -0.0,
            0.0,
            2.0,
            -1.0,
            3.0,
            3.0,
            f32::NEG_INFINITY,
            9.0,
        ];
        let tg = Tensor::from_slice(kit, &g, &[3, 4]).unwrap();
        assert_eq!(
            tg.argmax(-1, false).unwrap().to_vec::<i64>().unwrap(),
            [3, 2, 3]
        );
        let am = tg.argmax(0, true).unwrap();
        assert_eq!(am.dims(), &[1, 4]);
        assert_eq!(am.to_vec::<i64>().unwrap(), [2, 0, 0, 0]);
        assert!(matches!(
            Tensor::zeros(kit, &[2, 0], DType::F32)
                .unwrap()
                .argmax(1, false),
            Err(Error::Shape { .. })
        ));
        assert!(matches!(
            tg.argmax(2, false),
            Err(Error::InvalidArgument { .. })
        ));
        // L2 norm along axis 0 = reduce_l2 of the host transpose.
        let tr: Vec<f32> = (0..12).map(|i| g[(i % 3) * 4 + i / 3]).collect();
        let want = {
            let (x, o) = (kit.upload(&tr).unwrap(), kit.alloc(DType::F32, 4).unwrap());
            ops::reduce_l2(kit, &o, &x, 4, 3).unwrap();
            o.download::<f32>().unwrap()
        };
        check_f32(&tg.norm_l2(0, false).unwrap(), &[4], &want);
    }
    let (cpu, emu) = outs.split_at(outs.len() / 2);
    for (x, y) in cpu.iter().zip(emu) {
        assert!(same_f32(x, y));
    }
}

fn raw_sum(kit: &Kit, a: &[f32]) -> f32 {
    let (x, o) = (kit.upload(a).unwrap(), kit.alloc(DType::F32, 1).unwrap());
    ops::sum(kit, &o, &x).unwrap();
    o.download::<f32>().unwrap()[0]
}

/// A small 2-layer MLP and one attention-style block written with `Tensor` give the
/// same bits on the CPU and the emulator.
#[test]
fn a_small_model_is_bit_identical_across_backends() {
    let mut outs = Vec::new();
    for kit in kits() {
        let x = Tensor::from_slice(&kit, &finite(2 * 4 * 8, 71), &[2, 4, 8]).unwrap();
        let w1 = Tensor::from_slice(&kit, &finite(16 * 8, 72), &[16, 8]).unwrap();
        let b1 = Tensor::from_slice(&kit, &finite(16, 73), &[16]).unwrap();
        let w2 = Tensor::from_slice(&kit, &finite(8 * 16, 74), &[8, 16]).unwrap();
        let g = Tensor::ones(&kit, &[8], DType::F32).unwrap();
        let z = Tensor::zeros(&kit, &[8], DType::F32).unwrap();
        let h = x
            .linear(&w1, Some(&b1))
            .unwrap()
            .gelu()
            .unwrap()
            .linear(&w2, None)
            .unwrap();
        let h = (&h + &x).unwrap().layer_norm(&g, &z, 1e-5).unwrap();
        let scores = h
            .matmul(&h.transpose(-1, -2).unwrap())
            .unwrap()
            .mul_scalar(0.125)
            .unwrap();
        let y = scores.softmax(-1).unwrap().matmul(&h).unwrap();
        assert_eq!(y.dims(), &[2, 4, 8]);
        outs.push(y.to_vec::<f32>().unwrap());
    }
    assert!(same_f32(&outs[0], &outs[1]));
    assert!(outs[0].iter().all(|v| v.is_finite()));
}
