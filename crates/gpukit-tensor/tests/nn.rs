//! Tensor conv / pool / batch-norm methods: shapes derived from `auto_pad`,
//! `ceil_mode` and `output_shape`, 1-D as 2-D, bit-identity with the buffer ops, and
//! the errors for bad input. Values against ONNX's reference are in
//! `onnx_conformance/`.

mod common;

use common::{kits, same_f32};
use gpukit_core::{DType, Error};
use gpukit_ops::{self as ops, Conv2dParams};
use gpukit_tensor::{ConvOptions, ConvTransposeOptions, Padding, PoolOptions, Tensor};

fn ramp(kit: &gpukit_core::Kit, dims: &[usize], scale: f32) -> Tensor {
    let n: usize = dims.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7 % 11) as f32 - 5.0) * scale)
        .collect();
    Tensor::from_slice(kit, &v, dims).unwrap()
}

#[test]
fn conv_is_the_conv2d_op_and_conv1d_is_its_height_one_case() {
    for kit in kits() {
        let x = ramp(&kit, &[2, 4, 5, 6], 0.25);
        let w = ramp(&kit, &[6, 2, 3, 2], 0.5);
        let b = ramp(&kit, &[6], 1.0);
        let o = ConvOptions {
            strides: vec![2, 1],
            dilations: vec![1, 2],
            padding: Padding::Explicit(vec![1, 0, 2, 1]),
            groups: 2,
        };
        let y = x.conv(&w, Some(&b), &o).unwrap();
        let p = Conv2dParams {
            n: 2,
            c_in: 4,
            h: 5,
            w: 6,
            c_out: 6,
            kh: 3,
            kw: 2,
            pads: [1, 0, 2, 1],
            strides: [2, 1],
            dilations: [1, 2],
            groups: 2,
        };
        let shape = ops::conv2d_out_shape(&p).unwrap();
        assert_eq!(y.dims(), shape);
        let raw = kit.alloc(DType::F32, shape.iter().product()).unwrap();
        ops::conv2d(
            &kit,
            &raw,
            &x.to_buf().unwrap(),
            &w.to_buf().unwrap(),
            Some(&b.to_buf().unwrap()),
            &p,
        )
        .unwrap();
        assert!(same_f32(
            &y.to_vec::<f32>().unwrap(),
            &raw.download::<f32>().unwrap()
        ));

        // 1-D: the same numbers as the 2-D op on a height-1 image.
        let x1 = ramp(&kit, &[1, 3, 9], 0.5);
        let w1 = ramp(&kit, &[2, 3, 3], 0.25);
        let o1 = ConvOptions {
            padding: Padding::SameLower,
            strides: vec![2],
            ..Default::default()
        };
        let y1 = x1.conv(&w1, None, &o1).unwrap();
        assert_eq!(y1.dims(), &[1, 2, 5]); // ceil(9 / 2)
        let y2 = x1
            .unsqueeze(2)
            .unwrap()
            .conv(
                &w1.unsqueeze(2).unwrap(),
                None,
                &ConvOptions {
                    strides: vec![1, 2],
                    // SAME_LOWER: total pad 2·(5-1)+3-9 = 2, one at each end.
                    padding: Padding::Explicit(vec![0, 1, 0, 1]),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(y2.dims(), &[1, 2, 1, 5]);
        assert!(same_f32(
            &y1.to_vec::<f32>().unwrap(),
            &y2.to_vec::<f32>().unwrap()
        ));
    }
}

#[test]
fn auto_pad_ceil_mode_and_output_shape_give_onnx_sizes() {
    let kit = gpukit::cpu().unwrap();
    let x = ramp(&kit, &[1, 1, 5, 6], 1.0);
    let w = ramp(&kit, &[1, 1, 2, 3], 1.0);
    let same = |padding| ConvOptions {
        strides: vec![2, 2],
        padding,
        ..Default::default()
    };
    for pad in [Padding::SameUpper, Padding::SameLower] {
        assert_eq!(x.conv(&w, None, &same(pad)).unwrap().dims(), &[1, 1, 3, 3]);
    }
    assert_eq!(
        x.conv(&w, None, &same(Padding::Valid)).unwrap().dims(),
        &[1, 1, 2, 2]
    );
    // ceil_mode: (5 + 2 - 2) / 2 rounds up to 3, +1 = 4 windows, but the 4th would
    // start in the end padding, so 3.
    let pool = |ceil_mode, pads: Vec<usize>| PoolOptions {
        kernel: vec![2, 2],
        strides: vec![2, 2],
        padding: Padding::Explicit(pads),
        ceil_mode,
        ..Default::default()
    };
    let x5 = ramp(&kit, &[1, 1, 5, 5], 1.0);
    assert_eq!(
        x5.max_pool(&pool(false, vec![])).unwrap().dims(),
        &[1, 1, 2, 2]
    );
    assert_eq!(
        x5.max_pool(&pool(true, vec![])).unwrap().dims(),
        &[1, 1, 3, 3]
    );
    assert_eq!(
        x5.max_pool(&pool(true, vec![1, 1, 1, 1])).unwrap().dims(),
        &[1, 1, 3, 3]
    );
    // The kept partial window is the max of its taps inside the input.
    let v = x5
        .max_pool(&pool(true, vec![]))
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let src = x5.to_vec::<f32>().unwrap();
    assert_eq!(v[8], src[24]);
    // conv_transpose: output_shape decides the pads; SAME_* gives in · stride.
    let xt = ramp(&kit, &[1, 2, 3, 3], 1.0);
    let wt = ramp(&kit, &[2, 1, 3, 3], 1.0);
    let ct = |output_shape, padding| ConvTransposeOptions {
        strides: vec![2, 2],
        output_shape,
        padding,
        ..Default::default()
    };
    assert_eq!(
        xt.conv_transpose(&wt, None, &ct(Some(vec![5, 6]), Padding::Valid))
            .unwrap()
            .dims(),
        &[1, 1, 5, 6]
    );
    assert_eq!(
        xt.conv_transpose(&wt, None, &ct(None, Padding::SameUpper))
            .unwrap()
            .dims(),
        &[1, 1, 6, 6]
    );
    assert_eq!(
        xt.conv_transpose(&wt, None, &ct(None, Padding::Valid))
            .unwrap()
            .dims(),
        &[1, 1, 7, 7]
    );
    // Global pools keep the spatial axes as 1.
    assert_eq!(x.global_avg_pool().unwrap().dims(), &[1, 1, 1, 1]);
    assert_eq!(
        ramp(&kit, &[2, 3, 4], 1.0)
            .global_max_pool()
            .unwrap()
            .dims(),
        &[2, 3, 1]
    );
}

#[test]
fn bad_input_is_an_error_naming_the_op() {
    let kit = gpukit::cpu().unwrap();
    let x = ramp(&kit, &[1, 2, 4, 4], 1.0);
    let w = ramp(&kit, &[3, 2, 3, 3], 1.0);
    let d = ConvOptions::default();
    let is_shape = |r: gpukit_core::Result<Tensor>, op: &str| match r {
        Err(Error::Shape { op: o, .. }) => assert_eq!(o, op),
        other => panic!("want a Shape error from {op}, got {other:?}"),
    };
    let is_invalid = |r: gpukit_core::Result<Tensor>, op: &str| match r {
        Err(Error::InvalidArgument { op: o, .. }) => assert!(o.starts_with(op), "{o}"),
        other => panic!("want InvalidArgument from {op}, got {other:?}"),
    };
    is_shape(ramp(&kit, &[2, 4], 1.0).conv(&w, None, &d), "conv");
    is_shape(x.conv(&ramp(&kit, &[3, 1, 3, 3], 1.0), None, &d), "conv");
    is_shape(x.conv(&ramp(&kit, &[3, 2, 3], 1.0), None, &d), "conv");
    is_shape(x.conv(&w, Some(&ramp(&kit, &[2], 1.0)), &d), "conv");
    is_shape(x.conv(&ramp(&kit, &[3, 2, 5, 5], 1.0), None, &d), "conv2d");
    let bad_pads = ConvOptions {
        padding: Padding::Explicit(vec![1, 1]),
        ..Default::default()
    };
    is_invalid(x.conv(&w, None, &bad_pads), "conv");
    let bad_strides = ConvOptions {
        strides: vec![1, 1, 1],
        ..Default::default()
    };
    is_invalid(x.conv(&w, None, &bad_strides), "conv");
    let zero_stride = ConvOptions {
        strides: vec![0, 1],
        padding: Padding::SameUpper,
        ..Default::default()
    };
    is_invalid(x.conv(&w, None, &zero_stride), "conv");
    let groups = ConvOptions {
        groups: 4,
        ..Default::default()
    };
    assert!(x.conv(&w, None, &groups).is_err());
    is_invalid(x.max_pool(&PoolOptions::default()), "max_pool");
    let whole_pad = PoolOptions {
        kernel: vec![1, 1],
        padding: Padding::Explicit(vec![2, 0, 0, 0]),
        ..Default::default()
    };
    is_invalid(x.max_pool(&whole_pad), "max_pool2d");
    let too_big = ConvTransposeOptions {
        output_shape: Some(vec![40, 40]),
        ..Default::default()
    };
    is_invalid(
        x.conv_transpose(&ramp(&kit, &[2, 1, 3, 3], 1.0), None, &too_big),
        "conv_transpose",
    );
    is_shape(
        x.conv_transpose(&w, None, &ConvTransposeOptions::default()),
        "conv_transpose",
    );
    is_shape(
        ramp(&kit, &[3, 4], 1.0).global_avg_pool(),
        "global_avg_pool",
    );
    let c2 = ramp(&kit, &[2], 1.0);
    let c3 = ramp(&kit, &[3], 1.0);
    is_shape(x.batch_norm(&c2, &c2, &c2, &c3, 1e-5), "batch_norm");
    is_shape(
        ramp(&kit, &[4], 1.0).batch_norm(&c2, &c2, &c2, &c2, 1e-5),
        "batch_norm",
    );
    assert!(matches!(
        x.batch_norm(&c2, &c2, &c2, &c2, -1.0),
        Err(Error::InvalidArgument { .. })
    ));
    let xi = Tensor::zeros(&kit, &[1, 2, 4, 4], DType::I32).unwrap();
    let wi = Tensor::zeros(&kit, &[3, 2, 3, 3], DType::I32).unwrap();
    assert!(matches!(xi.conv(&wi, None, &d), Err(Error::DType { .. })));
    assert!(matches!(x.conv(&wi, None, &d), Err(Error::DType { .. })));
}
