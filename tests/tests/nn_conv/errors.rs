//! Bad input: each op's specific error for wrong lengths, dtypes, absent and foreign
//! operands, overlaps, overflowing sizes and invalid parameters (on the CPU kit).

use gpukit::ops::{self, Conv2dParams, ConvTranspose2dParams, GemmParams, MaxPool2dParams};
use gpukit::{Buf, DType, Error, Kit};

use super::kit;

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
