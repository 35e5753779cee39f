//! The `conv` group (gemm, conv2d, conv_transpose2d, max_pool2d): every op × float
//! dtype on every backend of [`gpukit_tests::backends`] against the reference oracle,
//! bit for bit (any NaN equals any NaN); bad inputs give their specific errors; random
//! invalid calls never panic.
//!
//! Shapes reach: stride > kernel, kernel > input with padding, dilation > 1, depthwise
//! and in-between groups, odd sizes, single pixels, N = 1 and N > 1, output-channel and
//! pixel counts past the CPU register tiles, k (gemm) and C_in/groups·KH·KW (conv) of 0,
//! 1 and past the 256-long k-block, trans_a and trans_b on and off (all four
//! combinations), absent C and bias, C full or broadcast from a row, a column or a
//! scalar, and a full C given as the output itself.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{Conv2dParams, ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams};
use gpukit::{Buf, DType, Element, Error, Kit, Result, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, dim, values};
use gpukit_tests::{cfg, on_backends, pool_params, window_fit as fit};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn upload_opt<T: Element>(kit: &Kit, v: &Option<Vec<T>>) -> Result<Option<Buf>> {
    v.as_ref().map(|v| kit.upload(v)).transpose()
}

// ---------------------------------------------------------------------------------
// gemm
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct GemmCase<T> {
    p: GemmParams,
    a: Vec<T>,
    b: Vec<T>,
    c: Option<Vec<T>>,
    bias: Option<Vec<T>>,
    /// Pass C as the output buffer itself (in place).
    in_place: bool,
}

fn scale() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => Just(1.0),
        1 => Just(0.0),
        1 => Just(-1.0),
        2 => -4.0f64..4.0,
        1 => Just(1e-3),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(1e40),
    ]
}

/// C full, or broadcast from a row, a column or a scalar (ONNX Gemm).
fn c_layout() -> impl Strategy<Value = GemmC> {
    prop_oneof![
        3 => Just(GemmC::Full),
        1 => Just(GemmC::Row),
        1 => Just(GemmC::Column),
        1 => Just(GemmC::Scalar),
    ]
}

fn gemm_case<T: TestElem>() -> impl Strategy<Value = GemmCase<T>> {
    (
        dim(40),
        prop_oneof![6 => dim(40), 1 => 250usize..300],
        dim(40),
        scale(),
        scale(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        (any::<bool>(), c_layout()),
    )
        .prop_flat_map(
            |(m, k, n, alpha, beta, trans_b, has_c, has_bias, in_place, (trans_a, c_layout))| {
                // Keep the big-k cases small in m and n.
                let (m, n) = if k > 64 {
                    (m.min(13), n.min(37))
                } else {
                    (m, n)
                };
                let p = GemmParams {
                    m,
                    k,
                    n,
                    alpha,
                    beta,
                    trans_a,
                    trans_b,
                    c_layout,
                };
                let c_len = c_layout.len(m, n).unwrap_or(0);
                (
                    Just(p),
                    values::<T>(m * k),
                    values::<T>(k * n),
                    proptest::option::of(values::<T>(c_len)).prop_map(move |c| c.filter(|_| has_c)),
                    values::<T>(n).prop_map(move |b| has_bias.then_some(b)),
                    Just(in_place),
                )
            },
        )
        .prop_map(|(p, a, b, c, bias, in_place)| GemmCase {
            // In place only over a full C (a broadcast C is rejected: tested apart).
            in_place: in_place && c.is_some() && p.c_layout == GemmC::Full,
            p,
            a,
            b,
            c,
            bias,
        })
}

fn check_gemm<T: FloatElement>(c: &GemmCase<T>) -> std::result::Result<(), TestCaseError> {
    let p = &c.p;
    let want = reference::gemm(&c.a, &c.b, c.c.as_deref(), c.bias.as_deref(), p);
    let what = format!(
        "gemm {}x{}x{} alpha {} beta {} trans_a {} trans_b {} c {} ({:?}) bias {} in place {}",
        p.m,
        p.k,
        p.n,
        p.alpha,
        p.beta,
        p.trans_a,
        p.trans_b,
        c.c.is_some(),
        p.c_layout,
        c.bias.is_some(),
        c.in_place
    );
    on_backends(&what, &want, |kit| {
        let (a, b) = (kit.upload(&c.a)?, kit.upload(&c.b)?);
        let cb = upload_opt(kit, &c.c)?;
        let bias = upload_opt(kit, &c.bias)?;
        let y = match (&cb, c.in_place) {
            (Some(cb), true) => cb.clone(),
            _ => kit.alloc(T::DTYPE, p.m * p.n)?,
        };
        ops::gemm(kit, &y, &a, &b, cb.as_ref(), bias.as_ref(), p)?;
        y.download()
    })
}

// ---------------------------------------------------------------------------------
// conv2d
// ---------------------------------------------------------------------------------

type ConvCase<T> = (Conv2dParams, Vec<T>, Vec<T>, Option<Vec<T>>);

fn conv_params() -> impl Strategy<Value = Conv2dParams> {
    let general = (
        (1usize..=2, 1usize..=3, 1usize..=3, 1usize..=3),
        (1usize..=9, 1usize..=9, 1usize..=4, 1usize..=4),
        (1usize..=4, 1usize..=4, 1usize..=2, 1usize..=2),
        [0usize..=2, 0usize..=2, 0usize..=2, 0usize..=2],
    )
        .prop_map(
            |((n, g, cg, og), (h, w, kh, kw), (sh, sw, dh, dw), pads)| Conv2dParams {
                n,
                c_in: g * cg,
                h,
                w,
                c_out: g * og,
                kh,
                kw,
                pads,
                strides: [sh, sw],
                dilations: [dh, dw],
                groups: g,
            },
        );
    // Depthwise: groups = c_in = c_out.
    let depthwise = (
        1usize..=2,
        1usize..=5,
        1usize..=8,
        1usize..=8,
        1usize..=3,
        0usize..=1,
    )
        .prop_map(|(n, c, h, w, k, pad)| Conv2dParams {
            pads: [pad; 4],
            groups: c,
            ..Conv2dParams::new(n, c, h, w, c, k, k)
        });
    // Past the register tiles: many output channels and pixels.
    let wide = (
        1usize..=2,
        9usize..=20,
        5usize..=14,
        5usize..=14,
        1usize..=3,
        1usize..=2,
    )
        .prop_map(|(cg, og, h, w, k, s)| Conv2dParams {
            pads: [1; 4],
            strides: [s, s],
            ..Conv2dParams::new(1, cg, h, w, og, k, k)
        });
    // Past the k-block: C_in/groups * KH * KW > 256.
    let deep = (26usize..=30, 1usize..=9, 1usize..=4, 1usize..=4).prop_map(|(cg, og, h, w)| {
        Conv2dParams {
            pads: [1; 4],
            ..Conv2dParams::new(1, cg, h, w, og, 3, 3)
        }
    });
    // Single pixels and 1x1 kernels.
    let tiny =
        (1usize..=3, 1usize..=3, 1usize..=3, 0usize..=1).prop_map(|(n, c, o, pad)| Conv2dParams {
            pads: [pad; 4],
            ..Conv2dParams::new(n, c, 1, 1, o, 1 + 2 * pad, 1)
        });
    prop_oneof![6 => general, 2 => depthwise, 1 => wide, 1 => deep, 1 => tiny].prop_map(|mut p| {
        p.h = fit(p.h, p.kh, p.dilations[0], p.pads[0], p.pads[2]);
        p.w = fit(p.w, p.kw, p.dilations[1], p.pads[1], p.pads[3]);
        p
    })
}

fn conv_case<T: TestElem>() -> impl Strategy<Value = ConvCase<T>> {
    (conv_params(), any::<bool>()).prop_flat_map(|(p, has_bias)| {
        let x = p.n * p.c_in * p.h * p.w;
        let w = p.c_out * (p.c_in / p.groups) * p.kh * p.kw;
        (
            Just(p),
            values::<T>(x),
            values::<T>(w),
            values::<T>(p.c_out).prop_map(move |b| has_bias.then_some(b)),
        )
    })
}

fn check_conv<T: FloatElement>(c: &ConvCase<T>) -> std::result::Result<(), TestCaseError> {
    let (p, x, w, bias) = c;
    let want = reference::conv2d(x, w, bias.as_deref(), p);
    on_backends(
        &format!("conv2d {p:?} bias {}", bias.is_some()),
        &want,
        |kit| {
            let (bx, bw) = (kit.upload(x)?, kit.upload(w)?);
            let bb = upload_opt(kit, bias)?;
            let shape = ops::conv2d_out_shape(p)?;
            let y = kit.alloc(T::DTYPE, shape.iter().product())?;
            ops::conv2d(kit, &y, &bx, &bw, bb.as_ref(), p)?;
            y.download()
        },
    )
}

// ---------------------------------------------------------------------------------
// conv_transpose2d
// ---------------------------------------------------------------------------------

type ConvTCase<T> = (ConvTranspose2dParams, Vec<T>, Vec<T>, Option<Vec<T>>);

fn convt_params() -> impl Strategy<Value = ConvTranspose2dParams> {
    let general = (
        (1usize..=2, 1usize..=2, 1usize..=3, 1usize..=3),
        (1usize..=6, 1usize..=6, 1usize..=4, 1usize..=4),
        (1usize..=3, 1usize..=3, 1usize..=2, 1usize..=2),
        [0usize..=2, 0usize..=2, 0usize..=2, 0usize..=2],
        (0usize..3, 0usize..3),
    )
        .prop_map(
            |((n, g, cg, og), (h, w, kh, kw), (sh, sw, dh, dw), pads, (oph, opw))| {
                ConvTranspose2dParams {
                    n,
                    c_in: g * cg,
                    h,
                    w,
                    c_out: g * og,
                    kh,
                    kw,
                    pads,
                    strides: [sh, sw],
                    output_padding: [oph % sh, opw % sw],
                    dilations: [dh, dw],
                    groups: g,
                }
            },
        );
    // Many output channels (the vector over channels) and a wide input.
    let wide = (
        1usize..=3,
        9usize..=40,
        1usize..=9,
        1usize..=9,
        1usize..=3,
        1usize..=3,
    )
        .prop_map(|(c_in, c_out, h, w, k, s)| ConvTranspose2dParams {
            strides: [s, s],
            pads: [k / 2; 4],
            ..ConvTranspose2dParams::new(1, c_in, h, w, c_out, k, k)
        });
    prop_oneof![4 => general, 1 => wide].prop_map(|mut p| {
        // Remove padding until the output size is not negative.
        while p.out_hw().is_none() {
            let i = p.pads.iter().position(|&v| v > 0).unwrap_or(0);
            p.pads[i] = p.pads[i].saturating_sub(1);
        }
        p
    })
}

fn convt_case<T: TestElem>() -> impl Strategy<Value = ConvTCase<T>> {
    (convt_params(), any::<bool>()).prop_flat_map(|(p, has_bias)| {
        let x = p.n * p.c_in * p.h * p.w;
        let w = p.c_in * (p.c_out / p.groups) * p.kh * p.kw;
        (
            Just(p),
            values::<T>(x),
            values::<T>(w),
            values::<T>(p.c_out).prop_map(move |b| has_bias.then_some(b)),
        )
    })
}

fn check_convt<T: FloatElement>(c: &ConvTCase<T>) -> std::result::Result<(), TestCaseError> {
    let (p, x, w, bias) = c;
    let want = reference::conv_transpose2d(x, w, bias.as_deref(), p);
    on_backends(
        &format!("conv_transpose2d {p:?} bias {}", bias.is_some()),
        &want,
        |kit| {
            let (bx, bw) = (kit.upload(x)?, kit.upload(w)?);
            let bb = upload_opt(kit, bias)?;
            let shape = ops::conv_transpose2d_out_shape(p)?;
            let y = kit.alloc(T::DTYPE, shape.iter().product())?;
            ops::conv_transpose2d(kit, &y, &bx, &bw, bb.as_ref(), p)?;
            y.download()
        },
    )
}

// ---------------------------------------------------------------------------------
// max_pool2d
// ---------------------------------------------------------------------------------

type PoolCase<T> = (MaxPool2dParams, Vec<T>);

fn pool_case<T: TestElem>() -> impl Strategy<Value = PoolCase<T>> {
    pool_params().prop_flat_map(|p| (Just(p), values::<T>(p.n * p.c * p.h * p.w)))
}

fn check_pool<T: FloatElement>(c: &PoolCase<T>) -> std::result::Result<(), TestCaseError> {
    let (p, x) = c;
    let want = reference::max_pool2d(x, p);
    on_backends(&format!("max_pool2d {p:?}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let shape = ops::max_pool2d_out_shape(p)?;
        let y = kit.alloc(T::DTYPE, shape.iter().product())?;
        ops::max_pool2d(kit, &y, &bx, p)?;
        y.download()
    })
}

macro_rules! float_suite {
    ($name:ident, $strategy:ident, $check:ident) => {
        mod $name {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>()) { $check::<f32>(&c)?; }
                #[test] fn t_f64(c in $strategy::<f64>()) { $check::<f64>(&c)?; }
                #[test] fn t_f16(c in $strategy::<f16>()) { $check::<f16>(&c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>()) { $check::<bf16>(&c)?; }
            }
        }
    };
}

float_suite!(gemm, gemm_case, check_gemm);
float_suite!(conv2d, conv_case, check_conv);
float_suite!(conv_transpose2d, convt_case, check_convt);
float_suite!(max_pool2d, pool_case, check_pool);

#[test]
fn skipped_backends_are_reported() {
    for (name, why) in gpukit_tests::skipped_backends() {
        eprintln!("nn_conv: backend {name} skipped: {why}");
    }
}

// ---------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------

fn kit() -> Kit {
    gpukit::cpu().unwrap()
}

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn gemm_errors() {
    let k = kit();
    let p = GemmParams::new(2, 3, 4);
    let (a, b, y) = (f32s(&k, 6), f32s(&k, 12), f32s(&k, 8));
    let (c, bias) = (f32s(&k, 8), f32s(&k, 4));
    ops::gemm(&k, &y, &a, &b, Some(&c), Some(&bias), &p).unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![5.0; 8]);
    // Lengths.
    let short = f32s(&k, 5);
    assert!(matches!(
        ops::gemm(&k, &y, &short, &b, None, None, &p),
        Err(Error::Length {
            expected: 6,
            got: 5,
            ..
        })
    ));
    assert!(matches!(
        ops::gemm(&k, &y, &a, &b, Some(&short), None, &p),
        Err(Error::Length { expected: 8, .. })
    ));
    assert!(matches!(
        ops::gemm(&k, &y, &a, &b, None, Some(&short), &p),
        Err(Error::Length { expected: 4, .. })
    ));
    assert!(matches!(
        ops::gemm(&k, &short, &a, &b, None, None, &p),
        Err(Error::Length { expected: 8, .. })
    ));
    // Dtypes: a non-float, a mixed operand, a mixed optional operand.
    let i = k.upload(&[1i64; 8]).unwrap();
    assert!(matches!(
        ops::gemm(&k, &i, &i, &i, None, None, &GemmParams::new(2, 4, 4)),
        Err(Error::DType {
            got: DType::I64,
            ..
        })
    ));
    let d = k.upload(&[1.0f64; 12]).unwrap();
    assert!(matches!(
        ops::gemm(&k, &y, &a, &d, None, None, &p),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    let d4 = k.upload(&[1.0f64; 4]).unwrap();
    assert!(matches!(
        ops::gemm(&k, &y, &a, &b, None, Some(&d4), &p),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    // Absent and foreign operands.
    let absent = Buf::absent(DType::F32);
    assert!(matches!(
        ops::gemm(&k, &y, &absent, &b, None, None, &p),
        Err(Error::Absent { .. })
    ));
    assert!(matches!(
        ops::gemm(&k, &y, &a, &b, Some(&absent), None, &p),
        Err(Error::Absent { .. })
    ));
    let far = f32s(&kit(), 6);
    assert!(matches!(
        ops::gemm(&k, &y, &far, &b, None, None, &p),
        Err(Error::DeviceMismatch { .. })
    ));
    // Overlaps: y with an input (C exactly is fine; C partially is not).
    let big = f32s(&k, 16);
    let (lo, mid) = (big.view(0, 8).unwrap(), big.view(4, 8).unwrap());
    assert!(matches!(
        ops::gemm(&k, &lo, &a, &b, Some(&mid), None, &p),
        Err(Error::InvalidArgument { .. })
    ));
    let ab = big.view(0, 6).unwrap();
    assert!(matches!(
        ops::gemm(&k, &lo, &ab, &b, None, None, &p),
        Err(Error::InvalidArgument { .. })
    ));
    ops::gemm(&k, &c, &a, &b, Some(&c), None, &p).unwrap();
    assert_eq!(c.download::<f32>().unwrap(), vec![4.0; 8]);
    // Overflowing sizes.
    assert!(matches!(
        ops::gemm(
            &k,
            &y,
            &a,
            &b,
            None,
            None,
            &GemmParams::new(usize::MAX, 2, 2)
        ),
        Err(Error::SizeOverflow { .. })
    ));
}

#[test]
fn conv2d_errors() {
    let k = kit();
    let mut p = Conv2dParams::new(1, 4, 5, 5, 6, 3, 3);
    p.groups = 2;
    let (x, w, y, bias) = (
        f32s(&k, 100),
        f32s(&k, 6 * 2 * 9),
        f32s(&k, 54),
        f32s(&k, 6),
    );
    ops::conv2d(&k, &y, &x, &w, Some(&bias), &p).unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![19.0; 54]);
    let bad = |q: Conv2dParams| ops::conv2d(&k, &y, &x, &w, None, &q);
    // Parameters.
    assert!(matches!(
        bad(Conv2dParams { groups: 3, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams { groups: 0, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams {
            strides: [0, 1],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams {
            dilations: [1, 0],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams { kh: 0, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    // Kernel larger than the (unpadded) input: the size formula is negative.
    assert!(matches!(
        bad(Conv2dParams { h: 2, ..p }),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams {
            dilations: [3, 1],
            ..p
        }),
        Err(Error::Shape { .. })
    ));
    // With padding it fits: 2x5 padded by 1 -> 2x5 output; lengths are then wrong.
    assert!(matches!(
        bad(Conv2dParams {
            h: 2,
            pads: [1; 4],
            ..p
        }),
        Err(Error::Length { .. })
    ));
    // Lengths of each operand.
    let short = f32s(&k, 7);
    assert!(matches!(
        ops::conv2d(&k, &y, &short, &w, None, &p),
        Err(Error::Length { expected: 100, .. })
    ));
    assert!(matches!(
        ops::conv2d(&k, &y, &x, &short, None, &p),
        Err(Error::Length { expected: 108, .. })
    ));
    assert!(matches!(
        ops::conv2d(&k, &y, &x, &w, Some(&short), &p),
        Err(Error::Length { expected: 6, .. })
    ));
    assert!(matches!(
        ops::conv2d(&k, &short, &x, &w, None, &p),
        Err(Error::Length { expected: 54, .. })
    ));
    // Dtypes, absent, foreign, overlap, overflow.
    let xi = k.upload(&[0i32; 100]).unwrap();
    assert!(matches!(
        ops::conv2d(&k, &y, &xi, &w, None, &p),
        Err(Error::DType {
            got: DType::I32,
            ..
        })
    ));
    assert!(matches!(
        ops::conv2d(&k, &y, &x, &Buf::absent(DType::F32), None, &p),
        Err(Error::Absent { .. })
    ));
    assert!(matches!(
        ops::conv2d(&k, &y, &f32s(&kit(), 100), &w, None, &p),
        Err(Error::DeviceMismatch { .. })
    ));
    let big = f32s(&k, 200);
    assert!(matches!(
        ops::conv2d(
            &k,
            &big.view(50, 54).unwrap(),
            &big.view(0, 100).unwrap(),
            &w,
            None,
            &p
        ),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(Conv2dParams { n: usize::MAX, ..p }),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ops::conv2d_out_shape(&Conv2dParams {
            h: usize::MAX,
            pads: [1; 4],
            ..p
        }),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn conv_transpose2d_errors() {
    let k = kit();
    let mut p = ConvTranspose2dParams::new(1, 2, 3, 3, 4, 3, 3);
    p.strides = [2, 2];
    p.pads = [1; 4];
    p.output_padding = [1, 1];
    assert_eq!(ops::conv_transpose2d_out_shape(&p).unwrap(), [1, 4, 6, 6]);
    let (x, w, y) = (f32s(&k, 18), f32s(&k, 2 * 4 * 9), f32s(&k, 144));
    ops::conv_transpose2d(&k, &y, &x, &w, None, &p).unwrap();
    let bad = |q: ConvTranspose2dParams| ops::conv_transpose2d(&k, &y, &x, &w, None, &q);
    assert!(matches!(
        bad(ConvTranspose2dParams {
            output_padding: [2, 0],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(ConvTranspose2dParams {
            strides: [1, 0],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(ConvTranspose2dParams { groups: 4, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(ConvTranspose2dParams { kw: 0, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    // Padding larger than the full output: negative size.
    assert!(matches!(
        bad(ConvTranspose2dParams {
            pads: [5, 0, 5, 0],
            ..p
        }),
        Err(Error::Shape { .. })
    ));
    let short = f32s(&k, 17);
    assert!(matches!(
        ops::conv_transpose2d(&k, &y, &short, &w, None, &p),
        Err(Error::Length { expected: 18, .. })
    ));
    assert!(matches!(
        ops::conv_transpose2d(&k, &y, &x, &short, None, &p),
        Err(Error::Length { expected: 72, .. })
    ));
    assert!(matches!(
        ops::conv_transpose2d(&k, &y, &x, &w, Some(&short), &p),
        Err(Error::Length { expected: 4, .. })
    ));
    let wd = k.upload(&[0.0f64; 72]).unwrap();
    assert!(matches!(
        ops::conv_transpose2d(&k, &y, &x, &wd, None, &p),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    assert!(matches!(
        ops::conv_transpose2d(&k, &y, &x, &y, None, &p),
        Err(Error::Length { .. } | Error::InvalidArgument { .. })
    ));
    let big = f32s(&k, 200);
    assert!(matches!(
        ops::conv_transpose2d(
            &k,
            &big.view(0, 144).unwrap(),
            &big.view(100, 18).unwrap(),
            &w,
            None,
            &p
        ),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(ConvTranspose2dParams {
            c_in: usize::MAX / 2,
            c_out: 4,
            groups: 1,
            ..p
        }),
        Err(Error::SizeOverflow { .. } | Error::Length { .. })
    ));
}

#[test]
fn max_pool2d_errors() {
    let k = kit();
    let p = MaxPool2dParams {
        strides: [2, 2],
        ..MaxPool2dParams::new(2, 3, 5, 5, 2, 2)
    };
    assert_eq!(ops::max_pool2d_out_shape(&p).unwrap(), [2, 3, 2, 2]);
    let (x, y) = (f32s(&k, 150), f32s(&k, 24));
    ops::max_pool2d(&k, &y, &x, &p).unwrap();
    let bad = |q: MaxPool2dParams| ops::max_pool2d(&k, &y, &x, &q);
    assert!(matches!(
        bad(MaxPool2dParams { kh: 0, ..p }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(MaxPool2dParams {
            strides: [0, 2],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(MaxPool2dParams {
            dilations: [0, 2],
            ..p
        }),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(MaxPool2dParams { kw: 6, ..p }),
        Err(Error::Shape { .. })
    ));
    // A window entirely in the padding (pad 2 >= a 2-wide window).
    let q = MaxPool2dParams {
        pads: [2, 0, 0, 0],
        ..p
    };
    assert!(matches!(
        ops::max_pool2d_out_shape(&q),
        Err(Error::InvalidArgument { .. })
    ));
    // Dilation that jumps over a one-pixel input: taps at -1 and +1.
    let q = MaxPool2dParams {
        h: 1,
        pads: [1, 0, 1, 0],
        dilations: [2, 1],
        ..MaxPool2dParams::new(1, 1, 1, 2, 2, 1)
    };
    assert!(matches!(
        ops::max_pool2d_out_shape(&q),
        Err(Error::InvalidArgument { .. })
    ));
    let short = f32s(&k, 149);
    assert!(matches!(
        ops::max_pool2d(&k, &y, &short, &p),
        Err(Error::Length { expected: 150, .. })
    ));
    assert!(matches!(
        ops::max_pool2d(&k, &short, &x, &p),
        Err(Error::Length { expected: 24, .. })
    ));
    let xi = k.upload(&[0i64; 150]).unwrap();
    assert!(matches!(
        ops::max_pool2d(&k, &xi, &xi, &p),
        Err(Error::DType {
            got: DType::I64,
            ..
        })
    ));
    assert!(matches!(
        ops::max_pool2d(&k, &y, &Buf::absent(DType::F32), &p),
        Err(Error::Absent { .. })
    ));
    let big = f32s(&k, 200);
    assert!(matches!(
        ops::max_pool2d(
            &k,
            &big.view(140, 24).unwrap(),
            &big.view(0, 150).unwrap(),
            &p
        ),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        bad(MaxPool2dParams { n: usize::MAX, ..p }),
        Err(Error::SizeOverflow { .. })
    ));
}

#[derive(Debug, Clone)]
enum Call {
    Gemm([usize; 5], bool, bool, u8),
    Conv([usize; 7], [usize; 4], [usize; 4], usize, bool, u8),
    ConvT([usize; 7], [usize; 4], [usize; 6], usize, u8),
    Pool([usize; 6], [usize; 4], [usize; 4], u8),
}

fn small() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..7, 1 => Just(usize::MAX), 1 => Just(1usize << 62)]
}

fn smalls<const N: usize>() -> impl Strategy<Value = [usize; N]> {
    proptest::collection::vec(small(), N).prop_map(|v| {
        let mut a = [0; N];
        a.copy_from_slice(&v);
        a
    })
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (smalls::<5>(), any::<bool>(), any::<bool>(), any::<u8>())
            .prop_map(|(s, t, c, d)| Call::Gemm(s, t, c, d)),
        (
            smalls::<7>(),
            smalls::<4>(),
            smalls::<4>(),
            small(),
            any::<bool>(),
            any::<u8>()
        )
            .prop_map(|(s, p, sd, g, b, d)| Call::Conv(s, p, sd, g, b, d)),
        (
            smalls::<7>(),
            smalls::<4>(),
            smalls::<6>(),
            small(),
            any::<u8>()
        )
            .prop_map(|(s, p, sd, g, d)| Call::ConvT(s, p, sd, g, d)),
        (smalls::<6>(), smalls::<4>(), smalls::<4>(), any::<u8>())
            .prop_map(|(s, p, sd, d)| Call::Pool(s, p, sd, d)),
    ]
}

fn buf(k: &Kit, d: u8, n: usize) -> Buf {
    // Mostly f32; sometimes another dtype.
    let dt = if d < 200 {
        DType::F32
    } else {
        DType::ALL[d as usize % 6]
    };
    k.zeros(dt, n.min(4096)).unwrap()
}

/// The element count a shape implies, capped (so a buffer of "the right" size exists).
fn cap(dims: &[usize]) -> usize {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX)
        .min(4096)
}

fn run_call(k: &Kit, c: &Call) {
    let _ = match c {
        Call::Gemm([m, kk, n, la, lb], t, has_c, d) => {
            let p = GemmParams {
                trans_b: *t,
                trans_a: *d % 2 == 1,
                c_layout: [GemmC::Full, GemmC::Row, GemmC::Column, GemmC::Scalar][*d as usize % 4],
                alpha: 2.0,
                ..GemmParams::new(*m, *kk, *n)
            };
            let y = buf(k, *d, cap(&[*m, *n]));
            let cb = buf(k, *d, cap(&[*m, *n]));
            ops::gemm(
                k,
                &y,
                &buf(k, *d, *la),
                &buf(k, 0, *lb),
                has_c.then_some(&cb),
                Some(&buf(k, *d, *n)),
                &p,
            )
        }
        Call::Conv([n, ci, h, w, co, kh, kw], pads, [sh, sw, dh, dw], g, b, d) => {
            let p = Conv2dParams {
                n: *n,
                c_in: *ci,
                h: *h,
                w: *w,
                c_out: *co,
                kh: *kh,
                kw: *kw,
                pads: *pads,
                strides: [*sh, *sw],
                dilations: [*dh, *dw],
                groups: *g,
            };
            let [oh, ow] = p.out_hw().unwrap_or([1, 1]);
            let cg = if *g == 0 { 0 } else { ci / g };
            let y = buf(k, *d, cap(&[*n, *co, oh, ow]));
            let x = buf(k, *d, cap(&[*n, *ci, *h, *w]));
            let wt = buf(k, 0, cap(&[*co, cg, *kh, *kw]));
            let bias = buf(k, *d, *co);
            ops::conv2d(k, &y, &x, &wt, b.then_some(&bias), &p)
        }
        Call::ConvT([n, ci, h, w, co, kh, kw], pads, [sh, sw, oph, opw, dh, dw], g, d) => {
            let p = ConvTranspose2dParams {
                n: *n,
                c_in: *ci,
                h: *h,
                w: *w,
                c_out: *co,
                kh: *kh,
                kw: *kw,
                pads: *pads,
                strides: [*sh, *sw],
                output_padding: [*oph, *opw],
                dilations: [*dh, *dw],
                groups: *g,
            };
            let [oh, ow] = p.out_hw().unwrap_or([1, 1]);
            let og = if *g == 0 { 0 } else { co / g };
            let y = buf(k, *d, cap(&[*n, *co, oh, ow]));
            let x = buf(k, *d, cap(&[*n, *ci, *h, *w]));
            let wt = buf(k, *d, cap(&[*ci, og, *kh, *kw]));
            ops::conv_transpose2d(k, &y, &x, &wt, Some(&buf(k, *d, *co)), &p)
        }
        Call::Pool([n, c, h, w, kh, kw], pads, [sh, sw, dh, dw], d) => {
            let p = MaxPool2dParams {
                n: *n,
                c: *c,
                h: *h,
                w: *w,
                kh: *kh,
                kw: *kw,
                pads: *pads,
                strides: [*sh, *sw],
                dilations: [*dh, *dw],
            };
            let [oh, ow] = p.out_hw().unwrap_or([1, 1]);
            let y = buf(k, *d, cap(&[*n, *c, oh, ow]));
            ops::max_pool2d(k, &y, &buf(k, *d, cap(&[*n, *c, *h, *w])), &p)
        }
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random (mostly invalid) calls: each returns, none panics.
    #[test]
    fn random_conv_calls_never_panic(calls in proptest::collection::vec(call(), 1..6)) {
        let k = kit();
        for c in calls {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_call(&k, &c)));
            prop_assert!(r.is_ok(), "panicked on {c:?}");
        }
    }
}
