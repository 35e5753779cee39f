//! `Tensor::attention`: numpy broadcasting of the mask, grouped-query heads and the V
//! width give exactly the bits of `ops::attention_general` with explicit strides; bad shapes are errors naming the op.

use gpukit::ops::{AttentionMaskKind, AttentionSpec};
use gpukit_tensor::{AttentionOptions, Tensor};

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 250.0 - 2.0
        })
        .collect()
}

fn direct(
    kit: &gpukit::Kit,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    mask: &[f32],
    spec: &AttentionSpec,
) -> Vec<f32> {
    let out = kit
        .alloc(gpukit::DType::F32, spec.lens().unwrap().3)
        .unwrap();
    let up = |x: &[f32]| kit.upload(x).unwrap();
    gpukit::ops::attention_general(kit, &out, &up(q), &up(k), &up(v), &up(mask), spec).unwrap();
    out.download().unwrap()
}

#[test]
fn mask_broadcast_gqa_and_v_width() {
    let kit = gpukit::cpu().unwrap();
    let (b, h, kvh, n, nkv, d, dv) = (2, 4, 2, 5, 7, 3, 6);
    let (q, k, v) = (
        data(b * h * n * d, 1),
        data(b * kvh * nkv * d, 2),
        data(b * kvh * nkv * dv, 3),
    );
    // A [n, nkv] boolean mask (rank 2: broadcast over batch and heads).
    let mask: Vec<f32> = (0..n * nkv).map(|x| f32::from(x % 3 != 0)).collect();
    let t = |x: &[f32], s: &[usize]| Tensor::from_slice(&kit, x, s).unwrap();
    let opts = AttentionOptions {
        mask: Some(t(&mask, &[n, nkv])),
        boolean_mask: true,
        causal: true,
        scale: None,
    };
    let got = Tensor::attention(
        &t(&q, &[b, h, n, d]),
        &t(&k, &[b, kvh, nkv, d]),
        &t(&v, &[b, kvh, nkv, dv]),
        &opts,
    )
    .unwrap();
    assert_eq!(got.dims(), &[b, h, n, dv]);
    let spec = AttentionSpec::new(b, h, n, nkv, d)
        .with_kv_heads(kvh)
        .with_v_head_dim(dv)
        .with_causal(true)
        .with_mask(AttentionMaskKind::Boolean, [0, 0, nkv]);
    let want = direct(&kit, &q, &k, &v, &mask, &spec);
    let got = got.to_vec::<f32>().unwrap();
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    // A [b, 1, 1, nkv] additive padding mask.
    let pad: Vec<f32> = (0..b * nkv)
        .map(|x| if x % nkv >= 5 { f32::NEG_INFINITY } else { 0.0 })
        .collect();
    let opts = AttentionOptions {
        mask: Some(t(&pad, &[b, 1, 1, nkv])),
        ..Default::default()
    };
    let got = Tensor::attention(
        &t(&q, &[b, h, n, d]),
        &t(&k, &[b, kvh, nkv, d]),
        &t(&v, &[b, kvh, nkv, dv]),
        &opts,
    )
    .unwrap()
    .to_vec::<f32>()
    .unwrap();
    let spec = AttentionSpec::new(b, h, n, nkv, d)
        .with_kv_heads(kvh)
        .with_v_head_dim(dv)
        .with_mask(AttentionMaskKind::Additive, [nkv, 0, 0]);
    let want = direct(&kit, &q, &k, &v, &pad, &spec);
    assert_eq!(
        got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn bad_shapes() {
    let kit = gpukit::cpu().unwrap();
    let z = |s: &[usize]| Tensor::zeros(&kit, s, gpukit::DType::F32).unwrap();
    let o = AttentionOptions::default();
    let err = |r: gpukit::Result<Tensor>| format!("{:?}", r.unwrap_err());
    assert!(
        err(Tensor::attention(
            &z(&[1, 4, 2, 3]),
            &z(&[1, 3, 5, 3]),
            &z(&[1, 3, 5, 3]),
            &o
        ))
        .contains("kv_heads")
    );
    assert!(
        err(Tensor::attention(
            &z(&[4, 2, 3]),
            &z(&[1, 4, 5, 3]),
            &z(&[1, 4, 5, 3]),
            &o
        ))
        .contains("attention")
    );
    assert!(
        err(Tensor::attention(
            &z(&[1, 4, 2, 3]),
            &z(&[1, 4, 5, 2]),
            &z(&[1, 4, 5, 3]),
            &o
        ))
        .contains("do not agree")
    );
    let bad = AttentionOptions {
        mask: Some(z(&[3, 5])),
        ..Default::default()
    };
    assert!(
        err(Tensor::attention(
            &z(&[1, 4, 2, 3]),
            &z(&[1, 4, 5, 3]),
            &z(&[1, 4, 5, 3]),
            &bad
        ))
        .contains("broadcast")
    );
}

#[test]
fn the_emulator_gives_the_cpu_bits() {
    // The general attention's CUDA kernel under the PTX emulator: per-query additive
    // mask, causal, grouped K/V heads, a narrower V.
    let cpu = gpukit::cpu().unwrap();
    let emu = gpukit::open("ptx-emu").unwrap();
    let run = |kit: &gpukit::Kit| {
        let t = |n: usize, dims: &[usize]| Tensor::from_slice(kit, &data(n, 5), dims).unwrap();
        let (q, k, v) = (
            t(2 * 4 * 9 * 8, &[2, 4, 9, 8]),
            t(2 * 2 * 70 * 8, &[2, 2, 70, 8]),
            t(2 * 2 * 70 * 6, &[2, 2, 70, 6]),
        );
        let mask = t(9 * 70, &[9, 70]);
        let o = AttentionOptions {
            mask: Some(mask),
            causal: true,
            ..AttentionOptions::default()
        };
        Tensor::attention(&q, &k, &v, &o)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    };
    let (a, b) = (run(&cpu), run(&emu));
    assert_eq!(a.len(), 2 * 4 * 9 * 6);
    let bits = |x: &[f32]| {
        x.iter()
            .map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() })
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn heads_split_by_reshape_and_permute_are_read_in_place_with_the_same_bits() {
    // [b, s, heads·d] activations -> [b, heads, s, d] views: the kernel's interleaved
    // layout, no copy; the result is a view whose permute back is contiguous.
    let (b, s, h, kvh, d, dv) = (2, 11, 4, 2, 8, 6);
    for device in ["cpu", "ptx-emu"] {
        let kit = gpukit::open(device).unwrap();
        let split = |n: usize, heads: usize, w: usize, seed: u32| {
            Tensor::from_slice(&kit, &data(b * n * heads * w, seed), &[b, n, heads * w])
                .unwrap()
                .reshape(&[b as i64, n as i64, heads as i64, w as i64])
                .unwrap()
                .permute(&[0, 2, 1, 3])
                .unwrap()
        };
        let (q, k, v) = (split(s, h, d, 1), split(s, kvh, d, 2), split(s, kvh, dv, 3));
        assert!(!q.is_contiguous());
        let mask = Tensor::from_slice(&kit, &data(b * s, 4), &[b, 1, 1, s]).unwrap();
        let o = AttentionOptions {
            mask: Some(mask),
            causal: true,
            ..AttentionOptions::default()
        };
        let viewed = Tensor::attention(&q, &k, &v, &o).unwrap();
        let copied = Tensor::attention(
            &q.contiguous().unwrap(),
            &k.contiguous().unwrap(),
            &v.contiguous().unwrap(),
            &o,
        )
        .unwrap();
        assert_eq!(viewed.dims(), &[b, h, s, dv]);
        assert!(!viewed.is_contiguous(), "{device}: the result is a view");
        assert!(viewed.permute(&[0, 2, 1, 3]).unwrap().is_contiguous());
        let bits = |t: &Tensor| {
            t.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() })
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&viewed), bits(&copied), "{device}");
    }
}
