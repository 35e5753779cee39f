//! Random (mostly invalid) calls of every op: each returns, none panics.

use gpukit::ops::{self, Conv2dParams, ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams};
use gpukit::{Buf, DType, Kit};
use proptest::prelude::*;

use super::kit;

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
