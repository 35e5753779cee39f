//! Random shapes, axes and parameters: every method returns `Ok` or an `Err`, never
//! panics, and what it returns agrees with a host computation.

mod common;

use common::*;
use gpukit::{DType, Tensor};
use proptest::prelude::*;

fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..5)
}

/// Host broadcast add over numpy's rule; `None` when the shapes do not broadcast.
fn host_add(a: &[f32], ad: &[usize], b: &[f32], bd: &[usize]) -> Option<(Vec<usize>, Vec<f32>)> {
    let r = ad.len().max(bd.len());
    let pad = |d: &[usize]| -> Vec<usize> {
        std::iter::repeat_n(1, r - d.len())
            .chain(d.iter().copied())
            .collect()
    };
    let (pa, pb) = (pad(ad), pad(bd));
    let mut out = Vec::with_capacity(r);
    for i in 0..r {
        out.push(match (pa[i], pb[i]) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        });
    }
    let (sa, sb) = (strides(&pa), strides(&pb));
    let vals = coords(&out)
        .iter()
        .map(|c| {
            let ia: usize = (0..r)
                .map(|d| if pa[d] == 1 { 0 } else { c[d] * sa[d] })
                .sum();
            let ib: usize = (0..r)
                .map(|d| if pb[d] == 1 { 0 } else { c[d] * sb[d] })
                .sum();
            a[ia] + b[ib]
        })
        .collect();
    Some((out, vals))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn binary_broadcast_agrees_or_errors(ad in dims(), bd in dims(), seed in 0u32..1000) {
        let kit = gpukit::cpu().unwrap();
        let a = values(ad.iter().product(), seed);
        let b = values(bd.iter().product(), seed + 1);
        let ta = Tensor::from_slice(&kit, &a, &ad).unwrap();
        let tb = Tensor::from_slice(&kit, &b, &bd).unwrap();
        match (ta.add(&tb), host_add(&a, &ad, &b, &bd)) {
            (Ok(t), Some((od, want))) => {
                prop_assert_eq!(t.dims(), &od[..]);
                prop_assert!(same_f32(&t.to_vec::<f32>().unwrap(), &want));
            }
            (Err(gpukit::Error::Shape { .. }), None) => {}
            (r, h) => prop_assert!(false, "tensor {:?} vs host {:?}", r.map(|t| t.dims().to_vec()), h.map(|h| h.0)),
        }
    }

    #[test]
    fn topk_and_pow_never_panic(
        d in dims(),
        axis in -6i64..6,
        k in prop::sample::select(vec![0usize, 1, 2, 3, 5, usize::MAX]),
        largest in any::<bool>(),
        e in dims(),
    ) {
        let kit = gpukit::cpu().unwrap();
        let x = Tensor::from_slice(&kit, &values(d.iter().product(), 7), &d).unwrap();
        match x.topk(k, axis, largest) {
            Ok((v, i)) => {
                let ax = axis.rem_euclid(d.len().max(1) as i64) as usize;
                prop_assert!(axis >= -(d.len() as i64) && axis < d.len() as i64 && k <= d[ax]);
                let mut od = d.clone();
                od[ax] = k;
                prop_assert_eq!(v.dims(), &od[..]);
                prop_assert_eq!(i.dims(), &od[..]);
                let idx = i.to_vec::<i64>().unwrap();
                prop_assert!(idx.iter().all(|&p| p >= 0 && (p as usize) < d[ax]));
            }
            Err(err) => prop_assert!(
                matches!(err, gpukit::Error::InvalidArgument { .. }),
                "{err}"
            ),
        }
        let y = Tensor::from_slice(&kit, &values(e.iter().product(), 8), &e).unwrap();
        if let Ok(p) = x.pow(&y) {
            prop_assert_eq!(p.numel(), p.to_vec::<f32>().unwrap().len());
        }
    }

    #[test]
    fn views_never_panic(
        d in dims(),
        axis in -6i64..6,
        axis2 in -6i64..6,
        start in prop::sample::select(vec![i64::MIN, -5, -1, 0, 1, 2, 5, i64::MAX]),
        end in prop::sample::select(vec![i64::MIN, -4, -1, 0, 1, 3, 9, i64::MAX]),
        step in prop::sample::select(vec![i64::MIN, -2, -1, 0, 1, 3, i64::MAX]),
        shape in prop::collection::vec(-2i64..5, 0..4),
        n in 0usize..4,
    ) {
        let kit = gpukit::cpu().unwrap();
        let data = values(d.iter().product(), 5);
        let t = Tensor::from_slice(&kit, &data, &d).unwrap();
        let check = |r: gpukit::Result<Tensor>| -> Result<(), TestCaseError> {
            if let Ok(v) = r {
                // A view's contiguous copy has its numel and dims.
                let c = v.contiguous().unwrap();
                prop_assert_eq!(c.dims(), v.dims());
                prop_assert_eq!(c.to_buf().unwrap().len(), v.numel());
            }
            Ok(())
        };
        check(t.slice(&[axis], &[start], &[end], &[step]))?;
        check(t.narrow(axis, n, n))?;
        check(t.reshape(&shape))?;
        check(t.transpose(axis, axis2))?;
        check(t.squeeze(axis))?;
        check(t.unsqueeze(axis))?;
        check(t.softmax(axis))?;
        check(t.argmax(axis, n % 2 == 0))?;
        check(t.norm_l2(axis, false))?;
        check(t.sum_axes(&[axis], n % 2 == 0))?;
        check(t.l2_axes(&[axis, axis2], n % 2 == 1))?;
        check(t.logsumexp_axes(&[], n % 2 == 0))?;
        check(t.broadcast_to(&shape.iter().map(|&s| s.max(0) as usize).collect::<Vec<_>>()))?;
        check(t.matmul(&t))?;
        check(t.linear(&t, None))?;
        check(Tensor::concat(&[&t, &t], axis))?;
        check(Tensor::stack(&[&t, &t], axis))?;
        // Casts of views, to every dtype (the dtype picked from n and the axis).
        let to = DType::ALL[(n + axis.unsigned_abs() as usize) % 6];
        check(t.to_dtype(to))?;
        if let Ok(v) = t.slice(&[axis], &[start], &[end], &[step]) {
            match v.cast(to) {
                Ok(c) => prop_assert_eq!(c.dims(), v.dims()),
                Err(e) => prop_assert!(false, "a cast of a valid view cannot fail: {e}"),
            }
        }
        if let Ok(parts) = t.chunk(n, axis) {
            let total: usize = parts.iter().map(|p| p.numel()).sum();
            prop_assert_eq!(total, t.numel());
        }
        let w = Tensor::ones(&kit, &[d.last().copied().unwrap_or(1)], DType::F32).unwrap();
        check(t.layer_norm(&w, &w, 1e-5))?;
    }

    #[test]
    fn conv_and_pool_never_panic(
        xd in prop::collection::vec(0usize..5, 1..6),
        wd in prop::collection::vec(0usize..4, 1..6),
        strides in prop::collection::vec(0usize..3, 0..3),
        dilations in prop::collection::vec(0usize..3, 0..3),
        pads in prop::collection::vec(0usize..3, 0..5),
        mode in 0usize..5,
        groups in 0usize..3,
        ceil_mode: bool,
        out_shape in prop::option::of(prop::collection::vec(0usize..9, 1..3)),
    ) {
        use gpukit_tensor::{ConvOptions, ConvTransposeOptions, Padding, PoolOptions};
        let kit = gpukit::cpu().unwrap();
        let x = Tensor::from_slice(&kit, &values(xd.iter().product(), 3), &xd).unwrap();
        let w = Tensor::from_slice(&kit, &values(wd.iter().product(), 4), &wd).unwrap();
        let padding = match mode {
            0 => Padding::Explicit(pads.clone()),
            1 => Padding::Valid,
            2 => Padding::SameUpper,
            3 => Padding::SameLower,
            _ => Padding::Explicit(Vec::new()),
        };
        let conv = ConvOptions {
            strides: strides.clone(),
            dilations: dilations.clone(),
            padding: padding.clone(),
            groups,
        };
        if let Ok(y) = x.conv(&w, None, &conv) {
            prop_assert_eq!(y.rank(), x.rank());
            prop_assert_eq!(y.to_vec::<f32>().unwrap().len(), y.numel());
        }
        let ct = ConvTransposeOptions {
            strides: strides.clone(),
            dilations: dilations.clone(),
            padding: padding.clone(),
            output_padding: Vec::new(),
            output_shape: out_shape,
            groups,
        };
        if let Ok(y) = x.conv_transpose(&w, None, &ct) {
            prop_assert_eq!(y.rank(), x.rank());
        }
        let pool = PoolOptions {
            kernel: wd.clone(),
            strides,
            dilations,
            padding,
            ceil_mode,
        };
        if let Ok(y) = x.max_pool(&pool) {
            prop_assert_eq!(y.rank(), x.rank());
            prop_assert_eq!(&y.dims()[..2], &x.dims()[..2]);
        }
        match x.max_pool_with_indices(&pool, ceil_mode) {
            Ok((y, i)) => {
                prop_assert_eq!(y.dims(), i.dims());
                let n = x.numel() as i64;
                prop_assert!(i.to_vec::<i64>().unwrap().iter().all(|&v| (0..n).contains(&v)));
            }
            Err(_) => prop_assert!(x.max_pool(&pool).is_err()),
        }
        let _ = x.global_avg_pool();
        let _ = x.global_max_pool();
    }
}
