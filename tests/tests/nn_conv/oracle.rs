//! The oracle property tests: gemm, conv2d, conv_transpose2d and max_pool2d, every
//! float dtype on every backend, against the reference oracle bit for bit.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{Conv2dParams, ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams};
use gpukit::{Buf, Element, Kit, Result, ops};
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
