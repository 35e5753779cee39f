//! Every CPU built-in kernel against a plain scalar loop written here, bit for bit
//! (`same_bits`: NaN equals any NaN), at every SIMD level this machine has, over
//! ragged sizes and special values; plus bad-argument launches.

use std::sync::Mutex;

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::{Arith, BinaryOp, FloatElement, Real, UnaryOp, max_nan, same_bits};
use gpukit_core::{DevArg, Element, Error, Kit, LaunchConfig, reduce};
use gpukit_cpu::CpuDevice;
use gpukit_cpu::builtins::{SimdLevel, detected_simd_level, set_simd_limit};

/// Serialises tests so each one's SIMD level is the one it set.
static LEVEL_LOCK: Mutex<()> = Mutex::new(());

fn kit() -> Kit {
    Kit::from_device(Box::new(CpuDevice::new()))
}

/// Runs `f` once per SIMD level this machine supports.
fn at_each_level(mut f: impl FnMut(SimdLevel)) {
    let _g = LEVEL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for l in [SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512] {
        if l <= detected_simd_level() {
            set_simd_limit(Some(l));
            f(l);
        }
    }
    set_simd_limit(None);
}

fn launch(kit: &Kit, name: &str, args: &[DevArg<'_>]) -> gpukit_core::Result<()> {
    kit.launch_builtin(name, LaunchConfig::for_elements(1, 1).unwrap(), args)
}

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random test values, with special values at rate `special` (in 1/1000).
trait Gen: Element {
    fn gen_val(r: &mut Rng, special: u64) -> Self;
}

fn gen_float(r: &mut Rng, special: u64, tiny: f64) -> f64 {
    if r.below(1000) < special {
        match r.below(8) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => 0.0,
            4 => -0.0,
            5 => tiny,
            6 => -tiny * 3.0,
            _ => 1e30,
        }
    } else {
        (r.unit() * 2.0 - 1.0) * 4.0
    }
}

impl Gen for f32 {
    fn gen_val(r: &mut Rng, s: u64) -> f32 {
        if r.below(1000) < s / 4 {
            return f32::from_bits(1 + r.below(1 << 20) as u32); // subnormal
        }
        gen_float(r, s, f32::from_bits(3) as f64) as f32
    }
}
impl Gen for f64 {
    fn gen_val(r: &mut Rng, s: u64) -> f64 {
        if r.below(1000) < s / 4 {
            return f64::from_bits(1 + r.below(1 << 40));
        }
        gen_float(r, s, f64::from_bits(5))
    }
}
impl Gen for f16 {
    fn gen_val(r: &mut Rng, s: u64) -> f16 {
        f16::from_f64(gen_float(r, s, 2f64.powi(-24)))
    }
}
impl Gen for bf16 {
    fn gen_val(r: &mut Rng, s: u64) -> bf16 {
        bf16::from_f64(gen_float(r, s, 2f64.powi(-130)))
    }
}
impl Gen for i64 {
    fn gen_val(r: &mut Rng, s: u64) -> i64 {
        match r.below(1000) {
            x if x < s => [0, -1, 1, i64::MIN, i64::MAX][r.below(5) as usize],
            x if x < 500 => r.next() as i64,
            _ => r.below(200) as i64 - 100,
        }
    }
}
impl Gen for i32 {
    fn gen_val(r: &mut Rng, s: u64) -> i32 {
        match r.below(1000) {
            x if x < s => [0, -1, 1, i32::MIN, i32::MAX][r.below(5) as usize],
            x if x < 500 => r.next() as i32,
            _ => r.below(200) as i32 - 100,
        }
    }
}

fn vals<T: Gen>(r: &mut Rng, n: usize, special: u64) -> Vec<T> {
    (0..n).map(|_| T::gen_val(r, special)).collect()
}

#[track_caller]
fn assert_same<T: Element>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same_bits(*g, *w),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

const SIZES: &[usize] = &[0, 1, 2, 7, 31, 32, 33, 257, 8193, 65_537, 140_001];

fn name<T: Element>(op: &str) -> String {
    gpukit_core::abi::kernel_name(op, T::DTYPE)
}

// ---------------------------------------------------------------- elementwise

fn check_binary<T: Gen + Arith>() {
    let kit = kit();
    let mut r = Rng(0x1234_5678 ^ T::DTYPE.size() as u64);
    at_each_level(|lvl| {
        for &n in SIZES {
            let a: Vec<T> = vals(&mut r, n, 100);
            let b: Vec<T> = vals(&mut r, n, 100);
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            for op in BinaryOp::ALL {
                let want: Vec<T> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| T::binary(op, x, y))
                    .collect();
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(op.name());
                let ni = DevArg::I64(n as i64);
                launch(&kit, &nm, &[(&out).into(), (&ab).into(), (&bb).into(), ni]).unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} n={n} {lvl:?}"),
                );
                // In place: out is a; out is b; out is both.
                let ia = kit.upload(&a).unwrap();
                launch(&kit, &nm, &[(&ia).into(), (&ia).into(), (&bb).into(), ni]).unwrap();
                assert_same(
                    &ia.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in-place a"),
                );
                let ib = kit.upload(&b).unwrap();
                launch(&kit, &nm, &[(&ib).into(), (&ab).into(), (&ib).into(), ni]).unwrap();
                assert_same(
                    &ib.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in-place b"),
                );
                let both = kit.upload(&a).unwrap();
                launch(
                    &kit,
                    &nm,
                    &[(&both).into(), (&both).into(), (&both).into(), ni],
                )
                .unwrap();
                let want2: Vec<T> = a.iter().map(|&x| T::binary(op, x, x)).collect();
                assert_same(
                    &both.download::<T>().unwrap(),
                    &want2,
                    &format!("{nm} a op a"),
                );
            }
        }
    });
}

#[test]
fn binary_all_dtypes() {
    check_binary::<f32>();
    check_binary::<f64>();
    check_binary::<f16>();
    check_binary::<bf16>();
    check_binary::<i64>();
    check_binary::<i32>();
}

/// Broadcast reference: out contiguous over dims, a/b at strides.
fn bc_ref<T: Arith>(
    op: BinaryOp,
    a: &[T],
    b: &[T],
    dims: &[usize],
    sa: &[i64],
    sb: &[i64],
) -> Vec<T> {
    let n: usize = dims.iter().product();
    (0..n)
        .map(|mut i| {
            let (mut ia, mut ib) = (0i64, 0i64);
            for d in (0..dims.len()).rev() {
                let c = (i % dims[d]) as i64;
                i /= dims[d];
                ia += c * sa[d];
                ib += c * sb[d];
            }
            T::binary(op, a[ia as usize], b[ib as usize])
        })
        .collect()
}

fn contiguous(dims: &[usize]) -> Vec<i64> {
    let mut s = vec![0i64; dims.len()];
    let mut acc = 1i64;
    for d in (0..dims.len()).rev() {
        s[d] = acc;
        acc *= dims[d] as i64;
    }
    s
}

/// Strides of a broadcast operand: 0 where `mask[d]`, contiguous over the rest.
fn bc_strides(dims: &[usize], mask: &[bool]) -> (Vec<i64>, usize) {
    let kept: Vec<usize> = dims
        .iter()
        .zip(mask)
        .map(|(&d, &m)| if m { 1 } else { d })
        .collect();
    let mut s = contiguous(&kept);
    for (d, &m) in mask.iter().enumerate() {
        if m {
            s[d] = 0;
        }
    }
    (s, kept.iter().product())
}

fn check_bc<T: Gen + Arith>() {
    let kit = kit();
    let mut r = Rng(99);
    let cases: &[(&[usize], &[bool], &[bool])] = &[
        (&[5], &[false], &[true]),
        (&[1], &[false], &[false]),
        (&[0, 3], &[false, false], &[true, false]),
        (&[3, 4, 5], &[false, false, false], &[true, false, true]),
        (&[2, 1, 7], &[false, true, false], &[true, false, false]),
        (&[7, 33], &[true, false], &[false, true]),
        (
            &[4, 3, 2, 5],
            &[false, true, false, true],
            &[true, false, true, false],
        ),
        (&[3, 70_001], &[false, false], &[true, false]),
        (&[70_001, 2], &[false, true], &[false, false]),
    ];
    at_each_level(|lvl| {
        for &(dims, ma, mb) in cases {
            let (sa, na) = bc_strides(dims, ma);
            let (sb, nb) = bc_strides(dims, mb);
            let a: Vec<T> = vals(&mut r, na, 50);
            let b: Vec<T> = vals(&mut r, nb, 50);
            let n: usize = dims.iter().product();
            let dd: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let (db, sab, sbb) = (
                kit.upload(&dd).unwrap(),
                kit.upload(&sa).unwrap(),
                kit.upload(&sb).unwrap(),
            );
            for op in BinaryOp::ALL {
                let want = bc_ref(op, &a, &b, dims, &sa, &sb);
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(&format!("{}_bc", op.name()));
                launch(
                    &kit,
                    &nm,
                    &[
                        (&out).into(),
                        (&ab).into(),
                        (&bb).into(),
                        (&db).into(),
                        (&sab).into(),
                        (&sbb).into(),
                        DevArg::I64(dims.len() as i64),
                        DevArg::I64(n as i64),
                    ],
                )
                .unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} {dims:?} {lvl:?}"),
                );
            }
        }
        // Transposed (non-unit, non-zero) strides and in-place bias add.
        let dims = [6usize, 9];
        let a: Vec<T> = vals(&mut r, 54, 50);
        let b: Vec<T> = vals(&mut r, 9, 50);
        let (sa, sb) = ([1i64, 6], [0i64, 1]);
        let want = bc_ref(BinaryOp::Sub, &a, &b, &dims, &sa, &sb);
        let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        let db = kit.upload(&[6i64, 9]).unwrap();
        let (sab, sbb) = (kit.upload(&sa).unwrap(), kit.upload(&sb).unwrap());
        let out = kit.zeros(T::DTYPE, 54).unwrap();
        let args = |o| {
            [
                DevArg::Buf(o),
                (&ab).into(),
                (&bb).into(),
                (&db).into(),
                (&sab).into(),
                (&sbb).into(),
                DevArg::I64(2),
                DevArg::I64(54),
            ]
        };
        launch(&kit, &name::<T>("sub_bc"), &args(&out)).unwrap();
        assert_same(&out.download::<T>().unwrap(), &want, "sub_bc transposed");
        let ca = kit.upload(&contiguous(&dims)).unwrap();
        let want = bc_ref(BinaryOp::Add, &a, &b, &dims, &[9, 1], &sb);
        let inplace = kit.upload(&a).unwrap();
        launch(
            &kit,
            &name::<T>("add_bc"),
            &[
                (&inplace).into(),
                (&inplace).into(),
                (&bb).into(),
                (&db).into(),
                (&ca).into(),
                (&sbb).into(),
                DevArg::I64(2),
                DevArg::I64(54),
            ],
        )
        .unwrap();
        assert_same(&inplace.download::<T>().unwrap(), &want, "add_bc in place");
    });
}

#[test]
fn broadcast_all_dtypes() {
    check_bc::<f32>();
    check_bc::<f64>();
    check_bc::<f16>();
    check_bc::<bf16>();
    check_bc::<i64>();
    check_bc::<i32>();
}

fn check_unary<T: Gen + FloatElement>() {
    let kit = kit();
    let mut r = Rng(7);
    at_each_level(|lvl| {
        for &n in SIZES {
            let a: Vec<T> = (0..n)
                .map(|_| {
                    let v = T::gen_val(&mut r, 100);
                    if r.below(4) == 0 {
                        T::from_f64(v.to_f64() * 30.0).unwrap()
                    } else {
                        v
                    }
                })
                .collect();
            let ab = kit.upload(&a).unwrap();
            for op in UnaryOp::ALL {
                let want: Vec<T> = a.iter().map(|&x| op.float(x)).collect();
                let out = kit.zeros(T::DTYPE, n).unwrap();
                let nm = name::<T>(op.name());
                launch(
                    &kit,
                    &nm,
                    &[(&out).into(), (&ab).into(), DevArg::I64(n as i64)],
                )
                .unwrap();
                assert_same(
                    &out.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} n={n} {lvl:?}"),
                );
                let ip = kit.upload(&a).unwrap();
                launch(
                    &kit,
                    &nm,
                    &[(&ip).into(), (&ip).into(), DevArg::I64(n as i64)],
                )
                .unwrap();
                assert_same(
                    &ip.download::<T>().unwrap(),
                    &want,
                    &format!("{nm} in place"),
                );
            }
        }
    });
}

#[test]
fn unary_all_dtypes() {
    check_unary::<f32>();
    check_unary::<f64>();
    check_unary::<f16>();
    check_unary::<bf16>();
}

// ---------------------------------------------------------------- matmul

fn bmm_ref<T: FloatElement>(
    a: &[T],
    b: &[T],
    (batch, m, k, n): (usize, usize, usize, usize),
    (abs, bbs): (usize, usize),
) -> Vec<T> {
    let mut c = Vec::with_capacity(batch * m * n);
    for i in 0..batch {
        for r in 0..m {
            for j in 0..n {
                let mut acc = T::Real::ZERO;
                for t in 0..k {
                    acc = a[i * abs + r * k + t]
                        .load()
                        .fma(b[i * bbs + t * n + j].load(), acc);
                }
                c.push(T::store(acc));
            }
        }
    }
    c
}

fn check_bmm<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(4242);
    // (batch, m, k, n, a broadcast, b broadcast)
    let shapes: &[(usize, usize, usize, usize, bool, bool)] = &[
        (1, 0, 5, 3, false, false),
        (1, 3, 0, 4, false, false),
        (1, 4, 5, 0, false, false),
        (0, 4, 5, 6, false, false),
        (1, 1, 1, 1, false, false),
        (1, 1, 37, 1, false, false),
        (1, 1, 300, 70, false, false),
        (1, 13, 17, 33, false, false),
        (2, 7, 3, 17, false, true),
        (3, 5, 9, 11, true, false),
        (1, 25, 300, 47, false, false),
        (1, 97, 5, 513, false, false),
        (1, 130, 513, 35, false, false),
        (2, 49, 260, 18, false, false),
    ];
    at_each_level(|lvl| {
        for &(batch, m, k, n, abc, bbc) in shapes {
            let abs = if abc { 0 } else { m * k };
            let bbs = if bbc { 0 } else { k * n };
            let na = if abc { m * k } else { batch * m * k };
            let nb = if bbc { k * n } else { batch * k * n };
            let a: Vec<T> = vals(&mut r, na, special);
            let b: Vec<T> = vals(&mut r, nb, special);
            let want = bmm_ref(&a, &b, (batch, m, k, n), (abs, bbs));
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let c = kit
                .upload(&vec![T::from_f64(7.0).unwrap(); batch * m * n])
                .unwrap();
            let nm = name::<T>("bmm");
            let i = |v: usize| DevArg::I64(v as i64);
            launch(
                &kit,
                &nm,
                &[
                    (&c).into(),
                    (&ab).into(),
                    (&bb).into(),
                    i(batch),
                    i(m),
                    i(k),
                    i(n),
                    i(abs),
                    i(bbs),
                ],
            )
            .unwrap();
            assert_same(
                &c.download::<T>().unwrap(),
                &want,
                &format!("{nm} {batch}x{m}x{k}x{n} {lvl:?}"),
            );
        }
    });
}

#[test]
fn bmm_f32() {
    check_bmm::<f32>(0);
    check_bmm::<f32>(2);
}
#[test]
fn bmm_f64() {
    check_bmm::<f64>(0);
    check_bmm::<f64>(2);
}
#[test]
fn bmm_f16() {
    check_bmm::<f16>(0);
    check_bmm::<f16>(2);
}
#[test]
fn bmm_bf16() {
    check_bmm::<bf16>(0);
    check_bmm::<bf16>(2);
}

/// Cancellation-heavy data shows any change of order: big and small magnitudes mixed.
#[test]
fn bmm_order_sensitive() {
    let kit = kit();
    let (m, k, n) = (19, 600, 37);
    let mut r = Rng(5);
    let a: Vec<f32> = (0..m * k)
        .map(|_| ((r.unit() - 0.5) * 2f64.powi(r.below(40) as i32 - 20)) as f32)
        .collect();
    let b: Vec<f32> = (0..k * n).map(|_| (r.unit() - 0.5) as f32).collect();
    let want = bmm_ref(&a, &b, (1, m, k, n), (0, 0));
    at_each_level(|lvl| {
        let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
        let c = kit.zeros(gpukit_core::DType::F32, m * n).unwrap();
        let i = |v: usize| DevArg::I64(v as i64);
        launch(
            &kit,
            "bmm_f32",
            &[
                (&c).into(),
                (&ab).into(),
                (&bb).into(),
                i(1),
                i(m),
                i(k),
                i(n),
                i(0),
                i(0),
            ],
        )
        .unwrap();
        assert_same(
            &c.download::<f32>().unwrap(),
            &want,
            &format!("order {lvl:?}"),
        );
    });
}

// ---------------------------------------------------------------- reductions

const RSIZES: &[usize] = &[
    0,
    1,
    2,
    31,
    32,
    33,
    100,
    8191,
    8192,
    8193,
    3 * 8192 + 5,
    300_001,
];

fn check_sum<T: Gen + Arith>(special: u64) {
    let kit = kit();
    let mut r = Rng(31337);
    at_each_level(|lvl| {
        for &n in RSIZES {
            let a: Vec<T> = vals(&mut r, n, special);
            let want = T::acc_store(reduce::fold(
                n,
                T::acc_zero(),
                |acc, i| T::acc_step(acc, a[i]),
                T::acc_combine,
            ));
            let ab = kit.upload(&a).unwrap();
            let out = kit.zeros(T::DTYPE, 1).unwrap();
            let nm = name::<T>("sum");
            launch(
                &kit,
                &nm,
                &[(&out).into(), (&ab).into(), DevArg::I64(n as i64)],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &[want],
                &format!("{nm} n={n} {lvl:?}"),
            );
            // Summing a prefix of a longer buffer, and out aliasing a.
            if n > 1 {
                let want = T::acc_store(reduce::fold(
                    n - 1,
                    T::acc_zero(),
                    |acc, i| T::acc_step(acc, a[i + 1]),
                    T::acc_combine,
                ));
                let ip = kit.upload(&a[1..]).unwrap();
                let nm1 = DevArg::I64(n as i64 - 1);
                launch(&kit, &nm, &[(&ip).into(), (&ip).into(), nm1]).unwrap();
                assert!(
                    same_bits(ip.download::<T>().unwrap()[0], want),
                    "{nm} aliased"
                );
            }
        }
    });
}

#[test]
fn sum_all_dtypes() {
    check_sum::<f32>(0);
    check_sum::<f32>(1);
    check_sum::<f64>(0);
    check_sum::<f64>(1);
    check_sum::<f16>(0);
    check_sum::<bf16>(0);
    check_sum::<bf16>(1);
    check_sum::<i64>(10);
    check_sum::<i32>(10);
}

fn check_dot<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(777);
    at_each_level(|lvl| {
        for &n in RSIZES {
            let a: Vec<T> = vals(&mut r, n, special);
            let b: Vec<T> = vals(&mut r, n, special);
            let want = T::store(reduce::fold(
                n,
                T::Real::ZERO,
                |acc, i| a[i].load().fma(b[i].load(), acc),
                |x, y| x + y,
            ));
            let (ab, bb) = (kit.upload(&a).unwrap(), kit.upload(&b).unwrap());
            let out = kit.zeros(T::DTYPE, 1).unwrap();
            let nm = name::<T>("dot");
            launch(
                &kit,
                &nm,
                &[
                    (&out).into(),
                    (&ab).into(),
                    (&bb).into(),
                    DevArg::I64(n as i64),
                ],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &[want],
                &format!("{nm} n={n} {lvl:?}"),
            );
        }
    });
}

#[test]
fn dot_all_dtypes() {
    for s in [0, 1] {
        check_dot::<f32>(s);
        check_dot::<f64>(s);
        check_dot::<f16>(s);
        check_dot::<bf16>(s);
    }
}

fn softmax_ref<T: FloatElement>(a: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len());
    for r in 0..rows {
        let x: Vec<T::Real> = a[r * cols..(r + 1) * cols]
            .iter()
            .map(|v| v.load())
            .collect();
        let m = x.iter().fold(T::Real::NEG_INFINITY, |m, &v| max_nan(m, v));
        let e: Vec<T::Real> = x.iter().map(|&v| (v - m).exp()).collect();
        let s = reduce::fold(cols, T::Real::ZERO, |acc, j| acc + e[j], |p, q| p + q);
        out.extend(e.iter().map(|&v| T::store(v / s)));
    }
    out
}

fn check_softmax<T: Gen + FloatElement>(special: u64) {
    let kit = kit();
    let mut r = Rng(2024);
    let shapes = [
        (0, 5),
        (3, 0),
        (1, 1),
        (4, 7),
        (5, 33),
        (3, 8193),
        (1, 20_000),
        (300, 257),
    ];
    at_each_level(|lvl| {
        for &(rows, cols) in &shapes {
            let a: Vec<T> = vals(&mut r, rows * cols, special);
            let want = softmax_ref(&a, rows, cols);
            let ab = kit.upload(&a).unwrap();
            let out = kit.zeros(T::DTYPE, rows * cols).unwrap();
            let nm = name::<T>("softmax");
            let (ri, ci) = (DevArg::I64(rows as i64), DevArg::I64(cols as i64));
            launch(&kit, &nm, &[(&out).into(), (&ab).into(), ri, ci]).unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &want,
                &format!("{nm} {rows}x{cols} {lvl:?}"),
            );
            launch(&kit, &nm, &[(&ab).into(), (&ab).into(), ri, ci]).unwrap();
            assert_same(
                &ab.download::<T>().unwrap(),
                &want,
                &format!("{nm} in place"),
            );
        }
    });
}

#[test]
fn softmax_all_dtypes() {
    for s in [0, 5] {
        check_softmax::<f32>(s);
        check_softmax::<f64>(s);
        check_softmax::<f16>(s);
        check_softmax::<bf16>(s);
    }
}

// ---------------------------------------------------------------- indexing

fn check_gather_scatter<T: Gen>() {
    let kit = kit();
    let mut r = Rng(555);
    let shapes = [
        (1, 5, 1, 3),
        (2, 4, 3, 6),
        (3, 1, 70, 4),
        (0, 3, 2, 2),
        (2, 3, 0, 2),
        (2, 3, 2, 0),
        (1, 7, 30_000, 5),
        (40, 9, 11, 13),
    ];
    at_each_level(|lvl| {
        for &(outer, axis, inner, nidx) in &shapes {
            let data: Vec<T> = vals(&mut r, outer * axis * inner, 10);
            let idx: Vec<i64> = (0..nidx)
                .map(|_| r.below(2 * axis as u64) as i64 - axis as i64)
                .collect();
            let res = |i: i64| {
                if i < 0 {
                    (i + axis as i64) as usize
                } else {
                    i as usize
                }
            };
            // gather
            let mut want = Vec::new();
            for o in 0..outer {
                for &g in &idx {
                    let s = (o * axis + res(g)) * inner;
                    want.extend_from_slice(&data[s..s + inner]);
                }
            }
            let (db, ib) = (kit.upload(&data).unwrap(), kit.upload(&idx).unwrap());
            let out = kit.zeros(T::DTYPE, outer * nidx * inner).unwrap();
            let i = |v: usize| DevArg::I64(v as i64);
            launch(
                &kit,
                &name::<T>("gather"),
                &[
                    (&out).into(),
                    (&db).into(),
                    (&ib).into(),
                    i(outer),
                    i(axis),
                    i(inner),
                    i(nidx),
                ],
            )
            .unwrap();
            assert_same(
                &out.download::<T>().unwrap(),
                &want,
                &format!("gather {lvl:?}"),
            );
            // scatter (duplicates: the largest g wins)
            let upd: Vec<T> = vals(&mut r, outer * nidx * inner, 10);
            let mut want = data.clone();
            for o in 0..outer {
                for (g, &gi) in idx.iter().enumerate() {
                    for c in 0..inner {
                        want[(o * axis + res(gi)) * inner + c] = upd[(o * nidx + g) * inner + c];
                    }
                }
            }
            let y = kit.upload(&data).unwrap();
            let ub = kit.upload(&upd).unwrap();
            launch(
                &kit,
                &name::<T>("scatter"),
                &[
                    (&y).into(),
                    (&ib).into(),
                    (&ub).into(),
                    i(outer),
                    i(axis),
                    i(inner),
                    i(nidx),
                ],
            )
            .unwrap();
            assert_same(
                &y.download::<T>().unwrap(),
                &want,
                &format!("scatter {lvl:?}"),
            );
        }
    });
}

#[test]
fn gather_scatter_all_dtypes() {
    check_gather_scatter::<f32>();
    check_gather_scatter::<f64>();
    check_gather_scatter::<f16>();
    check_gather_scatter::<bf16>();
    check_gather_scatter::<i64>();
    check_gather_scatter::<i32>();
}

#[test]
fn check_index_finds_first_bad() {
    let kit = kit();
    let res = kit.upload(&[7i64]).unwrap();
    let run = |idx: &[i64], axis: i64| {
        let ib = kit.upload(idx).unwrap();
        launch(
            &kit,
            "check_index_i64",
            &[
                (&ib).into(),
                DevArg::I64(idx.len() as i64),
                DevArg::I64(axis),
                (&res).into(),
            ],
        )
        .unwrap();
        res.download::<i64>().unwrap()[0]
    };
    assert_eq!(run(&[], 3), -1);
    assert_eq!(run(&[0, 1, 2, -1, -3], 3), -1);
    assert_eq!(run(&[0, 3, -4], 3), 1);
    assert_eq!(run(&[-4, 3], 3), 0);
    assert_eq!(run(&[0], 0), 0);
    assert_eq!(run(&[i64::MIN, 0], 5), 0);
    let mut big = vec![1i64; 200_000];
    big[150_001] = 10;
    big[190_000] = -11;
    assert_eq!(run(&big, 10), 150_001);
    big[150_001] = 9;
    assert_eq!(run(&big, 10), 190_000);
}

// ---------------------------------------------------------------- bad arguments

#[track_caller]
fn is_arg_err(r: gpukit_core::Result<()>) {
    match r {
        Err(Error::Argument { .. }) => {}
        other => panic!("expected Error::Argument, got {other:?}"),
    }
}

#[test]
fn bad_arguments_are_errors() {
    let kit = kit();
    let f = |n: usize| kit.zeros(gpukit_core::DType::F32, n).unwrap();
    let (a, b, short) = (f(10), f(10), f(9));
    let i = |v: i64| DevArg::I64(v);
    // Too-short buffers.
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&short).into(), (&a).into(), (&b).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&short).into(), (&b).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "exp_f32",
        &[(&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "sum_f32",
        &[(&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "dot_f32",
        &[(&a).into(), (&a).into(), (&short).into(), i(10)],
    ));
    is_arg_err(launch(
        &kit,
        "softmax_f32",
        &[(&short).into(), (&a).into(), i(2), i(5)],
    ));
    // Negative, missing and wrongly typed arguments.
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into(), i(-1)],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into()],
    ));
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&a).into(), (&b).into(), DevArg::F64(1.0)],
    ));
    let d64 = kit.zeros(gpukit_core::DType::F64, 10).unwrap();
    is_arg_err(launch(
        &kit,
        "add_f32",
        &[(&a).into(), (&d64).into(), (&b).into(), i(10)],
    ));
    // Matmul: short, overflowing, bad batch strides.
    let bmm = |c: &gpukit_core::Buf, s: [i64; 6]| {
        launch(
            &kit,
            "bmm_f32",
            &[
                c.into(),
                (&a).into(),
                (&b).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
                i(s[4]),
                i(s[5]),
            ],
        )
    };
    bmm(&a, [1, 2, 5, 2, 10, 10]).unwrap();
    is_arg_err(bmm(&short, [1, 2, 5, 5, 0, 0]));
    is_arg_err(bmm(&a, [1, 2, 6, 2, 0, 0]));
    is_arg_err(bmm(&a, [2, 1, 5, 2, 6, 0]));
    is_arg_err(bmm(&a, [1, 1 << 40, 1, 1 << 40, 0, 0]));
    is_arg_err(bmm(&a, [1 << 62, 1, 1, 1, 1 << 62, 0]));
    is_arg_err(bmm(&a, [3, 1, 1, 1, i64::MAX, 0]));
    // Broadcast: strides reading outside, dims product mismatch, negative dims, ndim 0.
    let dims = kit.upload(&[2i64, 5]).unwrap();
    let good = kit.upload(&[5i64, 1]).unwrap();
    let far = kit.upload(&[5i64, 2]).unwrap();
    let neg = kit.upload(&[-5i64, 1]).unwrap();
    let bc = |d: &gpukit_core::Buf, sa: &gpukit_core::Buf, nd: i64, n: i64| {
        launch(
            &kit,
            "add_bc_f32",
            &[
                (&a).into(),
                (&a).into(),
                (&b).into(),
                d.into(),
                sa.into(),
                (&good).into(),
                i(nd),
                i(n),
            ],
        )
    };
    bc(&dims, &good, 2, 10).unwrap();
    is_arg_err(bc(&dims, &far, 2, 10));
    is_arg_err(bc(&dims, &neg, 2, 10));
    is_arg_err(bc(&dims, &good, 2, 11));
    is_arg_err(bc(&dims, &good, 0, 10));
    is_arg_err(bc(&dims, &good, 3, 10));
    let hugedims = kit.upload(&[i64::MAX, i64::MAX]).unwrap();
    is_arg_err(bc(&hugedims, &good, 2, 10));
    // Gather/scatter: short buffers, overflow, out-of-range index.
    let idx = kit.upload(&[0i64, 5]).unwrap();
    let g = |o: &gpukit_core::Buf, s: [i64; 4]| {
        launch(
            &kit,
            "gather_f32",
            &[
                o.into(),
                (&a).into(),
                (&idx).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
            ],
        )
    };
    is_arg_err(g(&a, [1, 11, 1, 2]));
    is_arg_err(g(&a, [1 << 40, 1 << 40, 1, 2]));
    is_arg_err(g(&a, [1, 10, 1, 3]));
    match g(&a, [1, 5, 1, 2]) {
        Err(Error::IndexOutOfRange {
            index: 5,
            axis_len: 5,
            ..
        }) => {}
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
    let s = |s: [i64; 4]| {
        launch(
            &kit,
            "scatter_f32",
            &[
                (&a).into(),
                (&idx).into(),
                (&b).into(),
                i(s[0]),
                i(s[1]),
                i(s[2]),
                i(s[3]),
            ],
        )
    };
    is_arg_err(s([1, 11, 1, 2]));
    match s([1, 5, 1, 2]) {
        Err(Error::IndexOutOfRange { index: 5, .. }) => {}
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
    let res = kit.zeros(gpukit_core::DType::I64, 0).unwrap();
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(2), i(3), (&res).into()],
    ));
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(3), i(3), (&idx).into()],
    ));
    is_arg_err(launch(
        &kit,
        "check_index_i64",
        &[(&idx).into(), i(2), i(-3), (&idx).into()],
    ));
}

#[test]
fn every_abi_name_is_registered_and_nothing_else() {
    // The arithmetic core (abi::KERNELS) first, so a gap there is named on its own.
    let have = gpukit_cpu::builtins::names();
    for sig in gpukit_core::abi::KERNELS {
        for &d in sig.dtypes {
            let n = gpukit_core::abi::kernel_name(sig.op, d);
            assert!(have.contains(&n), "{n} is not registered");
        }
    }
    // Then the whole table: every abi name (all groups) and nothing else.
    let mut want = gpukit_core::abi::all_kernel_names();
    want.sort();
    assert_eq!(gpukit_cpu::builtins::names(), want);
    let kit = kit();
    for n in &want {
        kit.builtin(n).unwrap();
    }
    assert!(kit.builtin("add_u8").is_err());
}
