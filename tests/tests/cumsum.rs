//! The equivalence suite for `ops::cumsum` (ONNX CumSum): every dtype on every backend
//! of [`gpukit_tests::backends`] (cpu and its SIMD/thread variants, ptx-emu, cuda where
//! present) against the reference oracle, bit for bit, 256 proptest cases per dtype
//! (`GPUKIT_CASES`), inclusive and exclusive, forward and reverse.
//!
//! Shapes draw empty extents (outer, the axis or inner 0), single-element lines, long
//! lines (the chain's order shows in every rounding) and wide inner extents (the CPU's
//! column blocks of 256, the GPU's one thread per line); values include NaN payloads,
//! ±inf, -0.0, subnormals and integer extremes (integers wrap).

use gpukit::half::{bf16, f16};
use gpukit::numeric::Arith;
use gpukit::{DType, DevArg, Error, LaunchConfig, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, backends, cfg, dim, on_backends, value};
use proptest::prelude::*;

/// `(outer, len, inner)`.
type Geo = (usize, usize, usize);

fn case<T: TestElem>() -> impl Strategy<Value = (Geo, Vec<T>, bool, bool)> {
    (dim(9), dim(65), prop_oneof![dim(17), Just(300usize)])
        .prop_filter("at most 20000 elements", |(o, l, i)| o * l * i <= 20_000)
        .prop_flat_map(|(o, l, i)| {
            (
                Just((o, l, i)),
                proptest::collection::vec(value::<T>(), o * l * i),
                any::<bool>(),
                any::<bool>(),
            )
        })
}

fn check<T: TestElem + Arith>(
    geo: Geo,
    x: &[T],
    exclusive: bool,
    reverse: bool,
) -> Result<(), TestCaseError> {
    let (o, l, i) = geo;
    let want = reference::cumsum(x, o, l, i, exclusive, reverse);
    let what = format!(
        "cumsum {} [{o}, {l}, {i}] exclusive {exclusive} reverse {reverse}",
        T::DTYPE
    );
    on_backends(&what, &want, |kit| {
        let bx = kit.upload(x)?;
        let y = kit.alloc(T::DTYPE, x.len())?;
        ops::cumsum(kit, &y, &bx, o, l, i, exclusive, reverse)?;
        y.download()
    })
}

macro_rules! suite {
    ($t:ty, $name:ident) => {
        proptest! {
            #![proptest_config(cfg())]
            #[test]
            fn $name((geo, x, exclusive, reverse) in case::<$t>()) {
                check::<$t>(geo, &x, exclusive, reverse)?;
            }
        }
    };
}

suite!(f32, cumsum_f32);
suite!(f64, cumsum_f64);
suite!(f16, cumsum_f16);
suite!(bf16, cumsum_bf16);
suite!(i64, cumsum_i64);
suite!(i32, cumsum_i32);

/// Contiguous lines (`inner = 1`) in numbers the proptest does not reach: several
/// groups of 32 lines with a partial last one, and lengths across the CUDA kernel's
/// shared-memory tiles (16 and 32 positions: one, several, a partial last tile), each
/// direction and form, every dtype, on every backend.
#[test]
fn many_contiguous_lines_across_tiles() {
    fn run<T: TestElem + Arith>() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for (o, l) in [
            (33, 1),
            (64, 15),
            (65, 16),
            (97, 17),
            (40, 33),
            (70, 64),
            (33, 70),
        ] {
            let x: Vec<T> = (0..o * l)
                .map(|k| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    match k % 53 {
                        7 => T::from_moderate(-0.0),
                        _ => T::from_moderate(((seed >> 33) % 2001) as f64 / 7.0 - 140.0),
                    }
                })
                .collect();
            for exclusive in [false, true] {
                for reverse in [false, true] {
                    check::<T>((o, l, 1), &x, exclusive, reverse).unwrap();
                }
            }
        }
    }
    gpukit_tests::each_dtype!(run);
}

/// Hand-computed values (numpy's `cumsum` and ONNX's exclusive / reverse rules) on
/// every backend, with the order visible in the rounding and -0.0 kept at the start.
#[test]
fn matches_numpy_by_hand() {
    // [2, 3] along the last axis.
    let x = [1.0f32, 2.0, 3.0, -0.0, 4.0, 5.0];
    let cases: [(bool, bool, [f32; 6]); 4] = [
        (false, false, [1.0, 3.0, 6.0, -0.0, 4.0, 9.0]),
        (true, false, [0.0, 1.0, 3.0, 0.0, -0.0, 4.0]),
        (false, true, [6.0, 5.0, 3.0, 9.0, 9.0, 5.0]),
        (true, true, [5.0, 3.0, 0.0, 9.0, 5.0, 0.0]),
    ];
    for (exclusive, reverse, want) in cases {
        let what = format!("cumsum by hand, exclusive {exclusive} reverse {reverse}");
        on_backends(&what, &want, |kit| {
            let bx = kit.upload(&x)?;
            let y = kit.alloc(DType::F32, 6)?;
            ops::cumsum(kit, &y, &bx, 2, 3, 1, exclusive, reverse)?;
            y.download()
        })
        .unwrap();
    }
    // The chain's order shows: 2^24 + 1 + 1 is 2^24 in f32 from the left, 2^24 + 2
    // from the right; i32 wraps.
    let big = 16_777_216.0f32;
    let x = [big, 1.0, 1.0];
    on_backends("cumsum order", &[big, big, big], |kit| {
        let bx = kit.upload(&x)?;
        let y = kit.alloc(DType::F32, 3)?;
        ops::cumsum(kit, &y, &bx, 1, 3, 1, false, false)?;
        y.download()
    })
    .unwrap();
    on_backends("cumsum order reversed", &[big + 2.0, 2.0, 1.0], |kit| {
        let bx = kit.upload(&x)?;
        let y = kit.alloc(DType::F32, 3)?;
        ops::cumsum(kit, &y, &bx, 1, 3, 1, false, true)?;
        y.download()
    })
    .unwrap();
    let xi = [i32::MAX, 1, 1];
    on_backends("cumsum wraps", &[i32::MAX, i32::MIN, i32::MIN + 1], |kit| {
        let bx = kit.upload(&xi)?;
        let y = kit.alloc(DType::I32, 3)?;
        ops::cumsum(kit, &y, &bx, 1, 3, 1, false, false)?;
        y.download()
    })
    .unwrap();
}

/// Bad input is an `Err` naming what is wrong, on every backend, and nothing is
/// written; the raw kernel refuses flags other than 0 / 1 and short buffers.
#[test]
fn bad_input_is_an_error() {
    for (name, kit) in backends() {
        let x = kit.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let y = kit.upload(&[9.0f32; 4]).unwrap();
        let yd = kit.alloc(DType::F64, 4).unwrap();
        let r = ops::cumsum(&kit, &yd, &x, 1, 4, 1, false, false);
        assert!(matches!(r, Err(Error::DType { .. })), "{name}: {r:?}");
        let r = ops::cumsum(&kit, &y, &x, 1, 5, 1, false, false);
        assert!(matches!(r, Err(Error::Length { .. })), "{name}: {r:?}");
        let r = ops::cumsum(&kit, &y, &x, 2, usize::MAX, 2, false, false);
        assert!(
            matches!(r, Err(Error::SizeOverflow { .. })),
            "{name}: {r:?}"
        );
        let r = ops::cumsum(&kit, &x, &x, 1, 4, 1, false, false);
        assert!(
            matches!(r, Err(Error::InvalidArgument { .. })),
            "{name}: {r:?}"
        );
        assert_eq!(y.download::<f32>().unwrap(), [9.0; 4], "{name}");
        let raw = |flag: i64, len: i64| {
            kit.launch_builtin(
                "cumsum_f32",
                LaunchConfig::for_elements(4, 256).unwrap(),
                &[
                    (&y).into(),
                    (&x).into(),
                    DevArg::I64(1),
                    DevArg::I64(len),
                    DevArg::I64(1),
                    DevArg::I64(flag),
                    DevArg::I64(0),
                ],
            )
        };
        assert!(raw(2, 4).is_err(), "{name}: flag 2 accepted");
        assert!(
            raw(0, 8).is_err(),
            "{name}: 8 elements from 4-element buffers"
        );
        assert_eq!(y.download::<f32>().unwrap(), [9.0; 4], "{name}");
        // Lengths must match the shape exactly; empty shapes are no-ops.
        let r = ops::cumsum(&kit, &y, &x, 1, 3, 1, false, false);
        assert!(matches!(r, Err(Error::Length { .. })), "{name}: {r:?}");
        let (e0, e1) = (
            kit.alloc(DType::F32, 0).unwrap(),
            kit.alloc(DType::F32, 0).unwrap(),
        );
        ops::cumsum(&kit, &e1, &e0, 0, 4, 1, true, true).unwrap();
        ops::cumsum(&kit, &e1, &e0, 3, 0, 7, false, false).unwrap();
    }
}
