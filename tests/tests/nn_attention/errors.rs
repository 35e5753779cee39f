//! Bad input: each attention op's specific error for wrong lengths, head widths, scales,
//! dtypes, overlaps, overflowing shapes, absent and foreign buffers, mask rows and
//! score buffers (on the CPU kit).

use gpukit::half::f16;
use gpukit::ops::{self, AttentionShape};
use gpukit::{Buf, DType, Error, Kit};

use super::kit;

fn f32s(k: &Kit, n: usize) -> Buf {
    k.upload(&vec![1.0f32; n]).unwrap()
}

#[test]
fn fused_errors() {
    let kt = kit();
    // heads 2, n 3, nkv 4, hd 5.
    let sh = AttentionShape::new(2, 3, 4, 5);
    let (q, k, v, out) = (f32s(&kt, 30), f32s(&kt, 40), f32s(&kt, 40), f32s(&kt, 30));
    ops::attention(&kt, &out, &q, &k, &v, sh).unwrap();
    assert!(matches!(
        ops::attention(&kt, &out, &f32s(&kt, 29), &k, &v, sh),
        Err(Error::Length {
            expected: 30,
            got: 29,
            ..
        })
    ));
    assert!(matches!(
        ops::attention(&kt, &out, &q, &k, &f32s(&kt, 41), sh),
        Err(Error::Length { expected: 40, .. })
    ));
    assert!(matches!(
        ops::attention(&kt, &f32s(&kt, 31), &q, &k, &v, sh),
        Err(Error::Length { .. })
    ));
    // Head widths outside 1..=256.
    for hd in [0usize, 257] {
        let s = AttentionShape::new(1, 1, 1, hd).with_scale(1.0);
        assert!(matches!(
            ops::attention(
                &kt,
                &f32s(&kt, hd),
                &f32s(&kt, hd),
                &f32s(&kt, hd),
                &f32s(&kt, hd),
                s
            ),
            Err(Error::InvalidArgument { .. })
        ));
    }
    // Non-finite scale (also one that overflows f32).
    for s in [f64::NAN, f64::INFINITY, 1e300] {
        assert!(matches!(
            ops::attention(&kt, &out, &q, &k, &v, sh.with_scale(s)),
            Err(Error::InvalidArgument { .. })
        ));
    }
    // 1e300 is fine in f64.
    let d = |n: usize| kt.upload(&vec![1.0f64; n]).unwrap();
    ops::attention(&kt, &d(30), &d(30), &d(40), &d(40), sh.with_scale(1e300)).unwrap();
    // Dtypes.
    assert!(matches!(
        ops::attention(&kt, &out, &q, &d(40), &v, sh),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    let i = |n: usize| kt.upload(&vec![1i32; n]).unwrap();
    assert!(matches!(
        ops::attention(&kt, &i(30), &i(30), &i(40), &i(40), sh),
        Err(Error::DType { .. })
    ));
    // Overlaps: out = q exactly, and out inside k.
    assert!(matches!(
        ops::attention(&kt, &q, &q, &k, &v, sh),
        Err(Error::InvalidArgument { .. })
    ));
    let big = f32s(&kt, 40);
    assert!(matches!(
        ops::attention(&kt, &big.view(5, 30).unwrap(), &q, &big, &v, sh),
        Err(Error::InvalidArgument { .. })
    ));
    // Overflowing shape.
    assert!(matches!(
        ops::attention(
            &kt,
            &out,
            &q,
            &k,
            &v,
            AttentionShape::new(usize::MAX, 3, 4, 5)
        ),
        Err(Error::SizeOverflow { .. })
    ));
    // Absent and foreign buffers.
    assert!(matches!(
        ops::attention(&kt, &out, &Buf::absent(DType::F32), &k, &v, sh),
        Err(Error::Absent { .. })
    ));
    let other = kit();
    assert!(matches!(
        ops::attention(&kt, &out, &q, &f32s(&other, 40), &v, sh),
        Err(Error::DeviceMismatch { .. })
    ));
    // Empty outputs launch nothing and succeed.
    let e = f32s(&kt, 0);
    ops::attention(&kt, &e, &e, &k, &v, AttentionShape::new(2, 0, 4, 5)).unwrap();
}

#[test]
fn masked_and_batch_errors() {
    let kt = kit();
    // heads 4, n 1, nkv 3, hd 2.
    let sh = AttentionShape::new(4, 1, 3, 2);
    let (q, k, v, out) = (f32s(&kt, 8), f32s(&kt, 24), f32s(&kt, 24), f32s(&kt, 8));
    let m2 = kt.upload(&[0.0f32; 6]).unwrap(); // 2 rows: hpb = 2
    ops::attention_masked(&kt, &out, &q, &k, &v, &m2, 2, sh).unwrap();
    for hpb in [0usize, 3, 5] {
        assert!(matches!(
            ops::attention_masked(&kt, &out, &q, &k, &v, &m2, hpb, sh),
            Err(Error::InvalidArgument { .. })
        ));
    }
    assert!(matches!(
        ops::attention_masked(&kt, &out, &q, &k, &v, &m2, 1, sh),
        Err(Error::Length {
            expected: 12,
            got: 6,
            ..
        })
    ));
    assert!(matches!(
        ops::attention_masked(&kt, &out, &q, &k, &v, &Buf::absent(DType::F32), 1, sh),
        Err(Error::Absent { .. })
    ));
    let m16 = kt.upload(&[f16::ZERO; 6]).unwrap();
    assert!(matches!(
        ops::attention_masked(&kt, &out, &q, &k, &v, &m16, 2, sh),
        Err(Error::DType { .. })
    ));
    assert!(matches!(
        ops::attention_masked(&kt, &m2, &q, &k, &v, &m2, 2, sh.with_scale(1.0)),
        Err(Error::Length { .. })
    ));
    // Batch: batch 2, heads 2, n 1, nkv 3, hd 2 -> q [2, 4], k [6, 4], mask [2, 3].
    let bs = AttentionShape::new(2, 1, 3, 2);
    let (bq, bk, bv, bo) = (f32s(&kt, 8), f32s(&kt, 24), f32s(&kt, 24), f32s(&kt, 8));
    let bm = f32s(&kt, 6);
    ops::attention_batch(&kt, &bo, &bq, &bk, &bv, &bm, 2, bs).unwrap();
    ops::attention_batch(&kt, &bo, &bq, &bk, &bv, &Buf::absent(DType::F32), 2, bs).unwrap();
    assert!(matches!(
        ops::attention_batch(&kt, &bo, &bq, &bk, &bv, &f32s(&kt, 5), 2, bs),
        Err(Error::Length { expected: 6, .. })
    ));
    assert!(matches!(
        ops::attention_batch(&kt, &bo, &bq, &bk, &bv, &bm, 3, bs),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::attention_batch(&kt, &bo, &bq, &bk, &bo, &bm, 2, bs),
        Err(Error::Length { .. })
    ));
    assert!(matches!(
        ops::attention_batch(&kt, &bm, &bq, &bk, &bv, &bm, 2, bs),
        Err(Error::Length { .. })
    ));
}

#[test]
fn composed_errors() {
    let kt = kit();
    let sh = AttentionShape::new(2, 3, 4, 5);
    let (q, k, v, out, s) = (
        f32s(&kt, 30),
        f32s(&kt, 40),
        f32s(&kt, 40),
        f32s(&kt, 30),
        f32s(&kt, 24),
    );
    let none = Buf::absent(DType::F32);
    ops::attention_composed(&kt, &out, &s, &q, &k, &v, &none, 0, sh).unwrap();
    // The score buffer must hold heads*n*nkv.
    assert!(matches!(
        ops::attention_composed(&kt, &out, &f32s(&kt, 23), &q, &k, &v, &none, 1, sh),
        Err(Error::Length { expected: 24, .. })
    ));
    assert!(matches!(
        ops::attention_composed(
            &kt,
            &out,
            &Buf::absent(DType::F32),
            &q,
            &k,
            &v,
            &none,
            1,
            sh
        ),
        Err(Error::Absent { .. })
    ));
    // Scores may not alias an input or the output.
    let big = f32s(&kt, 64);
    assert!(matches!(
        ops::attention_composed(
            &kt,
            &out,
            &big.view(0, 24).unwrap(),
            &q,
            &big.view(20, 40).unwrap(),
            &v,
            &none,
            1,
            sh
        ),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::attention_composed(
            &kt,
            &big.view(0, 30).unwrap(),
            &big.view(30, 24).unwrap(),
            &q,
            &k,
            &v,
            &none,
            1,
            sh
        )
        .and_then(|_| {
            ops::attention_composed(
                &kt,
                &big.view(10, 30).unwrap(),
                &big.view(30, 24).unwrap(),
                &q,
                &k,
                &v,
                &none,
                1,
                sh,
            )
        }),
        Err(Error::InvalidArgument { .. })
    ));
    // Mask rows and hpb.
    let m = f32s(&kt, 8);
    ops::attention_composed(&kt, &out, &s, &q, &k, &v, &m, 1, sh).unwrap();
    assert!(matches!(
        ops::attention_composed(&kt, &out, &s, &q, &k, &v, &m, 2, sh),
        Err(Error::Length { expected: 4, .. })
    ));
    assert!(matches!(
        ops::attention_composed(&kt, &out, &s, &q, &k, &v, &m, 3, sh),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        ops::attention_composed(&kt, &out, &s, &q, &k, &v, &none, 1, sh.with_scale(f64::NAN)),
        Err(Error::InvalidArgument { .. })
    ));
    // Any head width works for the composed form, 300 included.
    let w = AttentionShape::new(1, 1, 2, 300);
    ops::attention_composed(
        &kt,
        &f32s(&kt, 300),
        &f32s(&kt, 2),
        &f32s(&kt, 300),
        &f32s(&kt, 600),
        &f32s(&kt, 600),
        &none,
        1,
        w,
    )
    .unwrap();
}
