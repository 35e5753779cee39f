//! The oracle property tests: concat and copy into an axis slot, slice, permute and
//! transpose, expand, bilinear and nearest resize, the EOS gather and as_strided, every
//! dtype they take on every backend, against the reference oracle bit for bit; with
//! as_strided's fixed cases (the tiled transpose path, reads outside x refused) and
//! large cases through the parallel paths.

use gpukit::half::{bf16, f16};
use gpukit::numeric::FloatElement;
use gpukit::ops::{AxisSlice, AxisSlot, Resize2d};
use gpukit::{Buf, DType, Element, Error, Result, ops};
use gpukit_reference as reference;
use gpukit_tests::{TestElem, values};
use gpukit_tests::{cfg, on_backends};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

type TestResult = std::result::Result<(), TestCaseError>;

/// A small extent: 0, 1, odd sizes, sometimes a little past a tile edge.
fn ext(max: usize) -> impl Strategy<Value = usize> {
    prop_oneof![2 => 0..=max.min(5), 1 => Just(1usize), 1 => 0..=max]
}

// ---------------------------------------------------------------- concat / slot

type ConcatCase<T> = (usize, usize, Vec<usize>, Vec<Vec<T>>);

fn concat_case<T: TestElem>() -> impl Strategy<Value = ConcatCase<T>> {
    (ext(4), ext(9), proptest::collection::vec(ext(7), 1..7)).prop_flat_map(
        |(outer, inner, lens)| {
            let data: Vec<_> = lens
                .iter()
                .map(|&l| values::<T>(outer * l * inner))
                .collect();
            (Just(outer), Just(inner), Just(lens), data)
        },
    )
}

fn check_concat<T: Element>(c: &ConcatCase<T>) -> TestResult {
    let (outer, inner, lens, data) = c;
    let refs: Vec<&[T]> = data.iter().map(|v| v.as_slice()).collect();
    let want = reference::concat(&refs, *outer, lens, *inner);
    on_backends(&format!("concat {outer}x{lens:?}x{inner}"), &want, |kit| {
        let bufs = data
            .iter()
            .map(|v| kit.upload(v))
            .collect::<Result<Vec<Buf>>>()?;
        let brefs: Vec<&Buf> = bufs.iter().collect();
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::concat(kit, &out, &brefs, *outer, lens, *inner)?;
        out.download()
    })
}

type SlotCase<T> = (AxisSlot, Vec<T>, Vec<T>);

fn slot_case<T: TestElem>() -> impl Strategy<Value = SlotCase<T>> {
    (ext(4), ext(6), ext(9), 0usize..4, 0usize..4).prop_flat_map(
        |(outer, src_axis, inner, before, after)| {
            let slot = AxisSlot {
                outer,
                src_axis,
                inner,
                dst_axis: before + src_axis + after,
                offset: before,
            };
            (
                Just(slot),
                values::<T>(outer * slot.dst_axis * inner),
                values::<T>(outer * src_axis * inner),
            )
        },
    )
}

fn check_slot<T: Element>(c: &SlotCase<T>) -> TestResult {
    let (s, dst, src) = c;
    let want =
        reference::copy_into_axis(dst, src, s.outer, s.src_axis, s.inner, s.dst_axis, s.offset);
    on_backends(&format!("copy_into_axis {s:?}"), &want, |kit| {
        let (bd, bs) = (kit.upload(dst)?, kit.upload(src)?);
        ops::copy_into_axis(kit, &bd, &bs, *s)?;
        bd.download()
    })
}

// ---------------------------------------------------------------- slice

fn slice_case<T: TestElem>() -> impl Strategy<Value = (AxisSlice, Vec<T>)> {
    (ext(4), ext(13), ext(7), 1usize..5, any::<bool>())
        .prop_flat_map(|(outer, axis, inner, step, neg)| {
            let a = axis as i64;
            (Just((outer, axis, inner, step, neg)), 0..=a)
        })
        .prop_flat_map(|((outer, axis, inner, step, neg), s)| {
            let su = s as usize;
            let max_len = if su < axis {
                (axis - 1 - su) / step + 1
            } else {
                0
            };
            let start = if neg && s < axis as i64 {
                s - axis as i64
            } else {
                s
            };
            (0..=max_len).prop_flat_map(move |len| {
                let sl = AxisSlice {
                    outer,
                    axis_len: axis,
                    inner,
                    start,
                    len,
                    step,
                };
                (Just(sl), values::<T>(outer * axis * inner))
            })
        })
}

fn check_slice<T: Element>(c: &(AxisSlice, Vec<T>)) -> TestResult {
    let (s, x) = c;
    let want = reference::slice_axis(x, s.outer, s.axis_len, s.inner, s.start, s.len, s.step)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    on_backends(&format!("slice {s:?}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::slice(kit, &out, &bx, *s)?;
        out.download()
    })
}

// ---------------------------------------------------------------- permute

type PermCase<T> = (Vec<usize>, Vec<usize>, Vec<T>);

fn perm_of(rank: usize) -> impl Strategy<Value = Vec<usize>> {
    let ident: Vec<usize> = (0..rank).collect();
    let rev: Vec<usize> = (0..rank).rev().collect();
    prop_oneof![
        1 => Just(ident.clone()),
        1 => Just(rev),
        4 => Just(ident).prop_shuffle(),
    ]
}

fn permute_case<T: TestElem>() -> impl Strategy<Value = PermCase<T>> {
    prop_oneof![
        4 => proptest::collection::vec(prop_oneof![3 => 1usize..4, 1 => 0usize..2, 1 => 4usize..6], 0..7),
        1 => proptest::collection::vec(1usize..3, 7..=8),
    ]
    .prop_flat_map(|dims| {
        let n = dims.iter().product::<usize>();
        (Just(dims.clone()), perm_of(dims.len()), values::<T>(n))
    })
}

/// Larger 2-D and 3-D transposes: reach the tiled path (both axes past 16) and ragged
/// tile edges.
fn transpose_case<T: TestElem>() -> impl Strategy<Value = PermCase<T>> {
    (1usize..4, 1usize..70, 1usize..70, 0usize..3).prop_flat_map(|(b, m, n, mode)| {
        let (dims, perm) = match mode {
            0 => (vec![m, n], vec![1, 0]),
            1 => (vec![b, m, n], vec![0, 2, 1]),
            _ => (vec![m, b, n], vec![2, 1, 0]),
        };
        let len = dims.iter().product::<usize>();
        (Just(dims), Just(perm), values::<T>(len))
    })
}

fn check_permute<T: Element>(c: &PermCase<T>) -> TestResult {
    let (dims, perm, x) = c;
    let want = reference::permute(x, dims, perm);
    on_backends(&format!("permute {dims:?} by {perm:?}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(T::DTYPE, x.len())?;
        ops::permute(kit, &out, &bx, dims, perm)?;
        out.download()
    })
}

// ---------------------------------------------------------------- expand

fn expand_case<T: TestElem>() -> impl Strategy<Value = PermCase<T>> {
    proptest::collection::vec((ext(5), any::<bool>()), 0..6)
        .prop_flat_map(|spec| {
            let rank = spec.len();
            (Just(spec), 0..=rank)
        })
        .prop_flat_map(|(spec, drop)| {
            let out_dims: Vec<usize> = spec.iter().map(|s| s.0).collect();
            let in_dims: Vec<usize> = spec[drop..]
                .iter()
                .map(|&(d, one)| if one { 1 } else { d })
                .collect();
            let n = in_dims.iter().product::<usize>();
            (Just(in_dims), Just(out_dims), values::<T>(n))
        })
}

fn check_expand<T: Element>(c: &PermCase<T>) -> TestResult {
    let (in_dims, out_dims, x) = c;
    let want = reference::expand(x, in_dims, out_dims);
    on_backends(
        &format!("expand {in_dims:?} -> {out_dims:?}"),
        &want,
        |kit| {
            let bx = kit.upload(x)?;
            let out = kit.alloc(T::DTYPE, want.len())?;
            ops::expand(kit, &out, &bx, in_dims, out_dims)?;
            out.download()
        },
    )
}

fn expand_last_case<T: TestElem>() -> impl Strategy<Value = (usize, usize, Vec<T>)> {
    (ext(40), ext(70)).prop_flat_map(|(rows, n)| (Just(rows), Just(n), values::<T>(rows)))
}

fn check_expand_last<T: Element>(c: &(usize, usize, Vec<T>)) -> TestResult {
    let (rows, n, x) = c;
    let want = reference::expand_last(x, *rows, *n);
    on_backends(&format!("expand_last {rows}x{n}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::expand_last(kit, &out, &bx, *rows, *n)?;
        out.download()
    })
}

// ---------------------------------------------------------------- resize

/// One axis of a resize: (in, out) with sizes 0 and 1, factors 1/2/3 up and down and
/// arbitrary (non-integer) ratios.
fn resize_axis() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        3 => (1usize..10, 0usize..14),
        2 => (1usize..8, 1usize..4).prop_map(|(i, f)| (i, i * f)),
        2 => (1usize..6, 1usize..4).prop_map(|(o, f)| (o * f, o)),
        1 => Just((1usize, 1usize)),
        1 => Just((0usize, 0usize)),
    ]
}

fn resize_case<T: TestElem>() -> impl Strategy<Value = (Resize2d, bool, Vec<T>)> {
    (ext(2), ext(3), resize_axis(), resize_axis(), any::<bool>()).prop_flat_map(
        |(n, c, (in_h, out_h), (in_w, out_w), align)| {
            // An empty input needs an empty output.
            let (out_h, out_w) = if in_h == 0 || in_w == 0 {
                (0, out_w)
            } else {
                (out_h, out_w)
            };
            let r = Resize2d {
                n,
                c,
                in_h,
                in_w,
                out_h,
                out_w,
            };
            (Just(r), Just(align), values::<T>(n * c * in_h * in_w))
        },
    )
}

fn check_bilinear<T: FloatElement>(c: &(Resize2d, bool, Vec<T>)) -> TestResult {
    let (r, align, x) = c;
    let want =
        reference::resize_bilinear(x, r.n * r.c, (r.in_h, r.in_w), (r.out_h, r.out_w), *align);
    on_backends(
        &format!("resize_bilinear {r:?} align {align}"),
        &want,
        |kit| {
            let bx = kit.upload(x)?;
            let out = kit.alloc(T::DTYPE, want.len())?;
            ops::resize_bilinear(kit, &out, &bx, *r, *align)?;
            out.download()
        },
    )
}

fn check_nearest<T: Element>(c: &(Resize2d, bool, Vec<T>)) -> TestResult {
    let (r, _, x) = c;
    let want = reference::resize_nearest(x, r.n * r.c, (r.in_h, r.in_w), (r.out_h, r.out_w));
    on_backends(&format!("resize_nearest {r:?}"), &want, |kit| {
        let bx = kit.upload(x)?;
        let out = kit.alloc(T::DTYPE, want.len())?;
        ops::resize_nearest(kit, &out, &bx, *r)?;
        out.download()
    })
}

// ---------------------------------------------------------------- eos gather

type EosCase<T> = (usize, usize, usize, Vec<i64>, Vec<T>);

fn eos_case<T: TestElem>() -> impl Strategy<Value = EosCase<T>> {
    (ext(5), 1usize..10, ext(9)).prop_flat_map(|(batch, seq, d)| {
        let id = prop_oneof![3 => -3i64..4, 1 => any::<i64>()];
        (
            Just(batch),
            Just(seq),
            Just(d),
            proptest::collection::vec(id, batch * seq),
            values::<T>(batch * seq * d),
        )
    })
}

fn check_eos<T: Element>(c: &EosCase<T>) -> TestResult {
    let (batch, seq, d, ids, x) = c;
    let want = reference::eos_gather(x, ids, *batch, *seq, *d);
    on_backends(
        &format!("eos_gather {batch}x{seq}x{d} ids {ids:?}"),
        &want,
        |kit| {
            let (bx, bi) = (kit.upload(x)?, kit.upload(ids)?);
            let out = kit.alloc(T::DTYPE, want.len())?;
            ops::eos_gather(kit, &out, &bx, &bi, *batch, *seq, *d)?;
            out.download()
        },
    )
}

// ---------------------------------------------------------------- as_strided

type StridedCase<T> = (Vec<usize>, Vec<usize>, usize, Vec<T>);

/// Dims, strides (0 = broadcast, overlapping, gaps), an offset, and an input just long
/// enough (sometimes a few elements longer) for the last element read.
fn strided_case<T: TestElem>() -> impl Strategy<Value = StridedCase<T>> {
    proptest::collection::vec((ext(5), 0usize..9), 0..6)
        .prop_flat_map(|axes| (Just(axes), 0usize..6, 0usize..3))
        .prop_flat_map(|(axes, offset, slack)| {
            let dims: Vec<usize> = axes.iter().map(|a| a.0).collect();
            let strides: Vec<usize> = axes.iter().map(|a| a.1).collect();
            let n: usize = dims.iter().product();
            let last = offset
                + dims
                    .iter()
                    .zip(&strides)
                    .map(|(&d, &s)| d.saturating_sub(1) * s)
                    .sum::<usize>();
            let len = if n == 0 {
                offset + slack
            } else {
                last + 1 + slack
            };
            (Just(dims), Just(strides), Just(offset), values::<T>(len))
        })
}

fn check_strided<T: Element>(c: &StridedCase<T>) -> TestResult {
    let (dims, strides, offset, x) = c;
    // The oracle: every coordinate in row-major order, read through the strides.
    let n: usize = dims.iter().product();
    let mut want = Vec::with_capacity(n);
    let mut coord = vec![0usize; dims.len()];
    for _ in 0..n {
        let at = offset + coord.iter().zip(strides).map(|(c, s)| c * s).sum::<usize>();
        want.push(x[at]);
        for d in (0..dims.len()).rev() {
            coord[d] += 1;
            if coord[d] < dims[d] {
                break;
            }
            coord[d] = 0;
        }
    }
    let kits = vec![
        ("cpu", gpukit::cpu().unwrap()),
        ("ptx-emu", gpukit::open("ptx-emu").unwrap()),
    ];
    gpukit_tests::on_kits(
        kits,
        &format!("as_strided {dims:?} strides {strides:?} offset {offset}"),
        &want,
        |kit| {
            let bx = kit.upload(x)?;
            let out = kit.alloc(T::DTYPE, n)?;
            ops::as_strided(kit, &out, &bx, dims, strides, *offset)?;
            out.download()
        },
    )
}

/// Transposing reads through as_strided with an offset, gaps between rows and an outer
/// axis: the CUDA kernel's shared-memory tile path (both tiled extents at least 16, the
/// output's fastest axis strided in the source, another axis of stride 1), ragged
/// tiles included, on every dtype.
#[test]
fn as_strided_transposes_with_offsets_and_gaps() {
    fn run<T: TestElem>() {
        for (dims, strides, offset) in [
            (vec![3usize, 20, 40], vec![1000usize, 1, 41], 7usize),
            (vec![33, 17], vec![1, 50], 3),
            (vec![2, 5, 16, 70], vec![3000, 1, 1, 17], 1),
        ] {
            let last = offset
                + dims
                    .iter()
                    .zip(&strides)
                    .map(|(&d, &s)| (d - 1) * s)
                    .sum::<usize>();
            let x: Vec<T> = (0..=last)
                .map(|i| T::from_moderate(i as f64 - 500.0))
                .collect();
            check_strided::<T>(&(dims, strides, offset, x)).unwrap();
        }
    }
    gpukit_tests::each_dtype!(run);
}

#[test]
fn as_strided_refuses_reads_outside_x() {
    let k = gpukit::cpu().unwrap();
    let x = k.upload(&[1.0f32; 6]).unwrap();
    let out = k.alloc(DType::F32, 6).unwrap();
    // The last element read is 1·4 + 2·1 = 6: one past the end.
    let r = ops::as_strided(&k, &out, &x, &[2, 3], &[4, 1], 0);
    assert!(
        matches!(r, Err(Error::OutOfBounds { capacity: 6, .. })),
        "{r:?}"
    );
    let r = ops::as_strided(&k, &out, &x, &[2, 3], &[usize::MAX, 1], 0);
    assert!(matches!(r, Err(Error::OutOfBounds { .. })), "{r:?}");
    let r = ops::as_strided(&k, &out, &x, &[2, 3], &[1], 0);
    assert!(matches!(r, Err(Error::Shape { .. })), "{r:?}");
    let r = ops::as_strided(&k, &out, &x, &[6], &[1], 0);
    assert!(r.is_ok());
    assert!(matches!(
        ops::as_strided(&k, &out, &x, &[1; 9], &[0; 9], 0),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::as_strided(&k, &out, &out, &[6], &[1], 0),
        Err(Error::InvalidArgument { .. })
    ));
}

// ---------------------------------------------------------------- the proptests

macro_rules! all_dtypes {
    ($m:ident, $strategy:ident, $check:ident) => {
        mod $m {
            use super::*;
            proptest! {
                #![proptest_config(cfg())]
                #[test] fn t_f32(c in $strategy::<f32>()) { $check::<f32>(&c)?; }
                #[test] fn t_f64(c in $strategy::<f64>()) { $check::<f64>(&c)?; }
                #[test] fn t_f16(c in $strategy::<f16>()) { $check::<f16>(&c)?; }
                #[test] fn t_bf16(c in $strategy::<bf16>()) { $check::<bf16>(&c)?; }
                #[test] fn t_i64(c in $strategy::<i64>()) { $check::<i64>(&c)?; }
                #[test] fn t_i32(c in $strategy::<i32>()) { $check::<i32>(&c)?; }
            }
        }
    };
}

macro_rules! float_dtypes {
    ($m:ident, $strategy:ident, $check:ident) => {
        mod $m {
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

all_dtypes!(concat, concat_case, check_concat);
all_dtypes!(copy_into_axis, slot_case, check_slot);
all_dtypes!(slice, slice_case, check_slice);
all_dtypes!(permute, permute_case, check_permute);
all_dtypes!(transpose, transpose_case, check_permute);
all_dtypes!(expand, expand_case, check_expand);
all_dtypes!(expand_last, expand_last_case, check_expand_last);
float_dtypes!(resize_bilinear, resize_case, check_bilinear);
all_dtypes!(resize_nearest, resize_case, check_nearest);
all_dtypes!(eos_gather, eos_case, check_eos);
all_dtypes!(as_strided, strided_case, check_strided);

/// A large transpose and a large contiguous slice run through the parallel paths.
#[test]
fn large_cases_match_the_reference() {
    let (m, n) = (300usize, 517usize);
    let x: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let want = reference::permute(&x, &[m, n], &[1, 0]);
    on_backends("large transpose", &want, |kit| {
        let bx = kit.upload(&x)?;
        let out = kit.alloc(DType::F32, x.len())?;
        ops::permute(kit, &out, &bx, &[m, n], &[1, 0])?;
        out.download()
    })
    .unwrap();
    let want = reference::resize_bilinear(&x, 3, (100, 517), (211, 300), true);
    on_backends("large bilinear", &want, |kit| {
        let bx = kit.upload(&x)?;
        let out = kit.alloc(DType::F32, want.len())?;
        let r = Resize2d {
            n: 1,
            c: 3,
            in_h: 100,
            in_w: 517,
            out_h: 211,
            out_w: 300,
        };
        ops::resize_bilinear(kit, &out, &bx, r, true)?;
        out.download()
    })
    .unwrap();
    let want = reference::concat(&[&x, &x], 300, &[517, 517], 1);
    on_backends("large concat", &want, |kit| {
        let bx = kit.upload(&x)?;
        let out = kit.alloc(DType::F32, want.len())?;
        ops::concat(kit, &out, &[&bx, &bx], 300, &[517, 517], 1)?;
        out.download()
    })
    .unwrap();
}
