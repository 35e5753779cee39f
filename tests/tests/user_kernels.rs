//! User kernels through the one-call path and the device-resident path, compared bit
//! for bit with plain Rust loops.

use gpukit::demo;
use gpukit::prelude::*;
use proptest::prelude::*;

fn saxpy_ref(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&x, &y)| a.mul_add(x, y)).collect()
}

fn block_sum_ref(x: &[f32]) -> Vec<f32> {
    x.chunks(256)
        .map(|c| {
            let mut s = [0.0f32; 256];
            s[..c.len()].copy_from_slice(c);
            let mut stride = 128;
            while stride > 0 {
                for t in 0..stride {
                    s[t] += s[t + stride];
                }
                stride /= 2;
            }
            s[0]
        })
        .collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn special_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        4 => -1e3f32..1e3,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(-0.0f32),
        1 => Just(f32::from_bits(1)),
        1 => Just(f32::MAX),
    ]
}

fn vec_pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    (0usize..1100).prop_flat_map(|n| {
        (
            proptest::collection::vec(special_f32(), n),
            proptest::collection::vec(special_f32(), n),
        )
    })
}

fn nan_eq(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn saxpy_run_matches_loop(a in special_f32(), (x, y) in vec_pair()) {
        let kit = Kit::cpu().unwrap();
        let mut out = y.clone();
        let cfg = LaunchConfig::for_elements(x.len(), 128).unwrap();
        kit.run(&demo::saxpy(), cfg, &mut [
            Binding::F32(a), Binding::input(&x), Binding::inout(&mut out), Binding::I64(x.len() as i64),
        ]).unwrap();
        prop_assert!(nan_eq(&out, &saxpy_ref(a, &x, &y)));
    }

    #[test]
    fn saxpy_device_resident_matches_loop(a in special_f32(), (x, y) in vec_pair()) {
        let kit = Kit::cpu().unwrap();
        let bx = kit.upload(&x).unwrap();
        let by = kit.upload(&y).unwrap();
        let cfg = LaunchConfig::for_elements(x.len(), 64).unwrap();
        kit.launch(&demo::saxpy(), cfg, &[DevArg::F32(a), (&bx).into(), (&by).into(), DevArg::I64(x.len() as i64)]).unwrap();
        prop_assert!(nan_eq(&by.download::<f32>().unwrap(), &saxpy_ref(a, &x, &y)));
    }

    #[test]
    fn block_sum_matches_tree_loop((x, _) in vec_pair()) {
        let kit = Kit::cpu().unwrap();
        let nb = x.len().div_ceil(256);
        let mut out = vec![7.0f32; nb];
        kit.run(&demo::block_sum(), demo::block_sum_config(x.len()).unwrap(), &mut [
            Binding::input(&x), Binding::output(&mut out), Binding::I64(x.len() as i64),
        ]).unwrap();
        prop_assert!(nan_eq(&out, &block_sum_ref(&x)));
        // Device-resident twin: same bits.
        let bx = kit.upload(&x).unwrap();
        let bo = kit.zeros(DType::F32, nb).unwrap();
        kit.launch(&demo::block_sum(), demo::block_sum_config(x.len()).unwrap(),
            &[(&bx).into(), (&bo).into(), DevArg::I64(x.len() as i64)]).unwrap();
        prop_assert_eq!(bits(&bo.download::<f32>().unwrap()), bits(&out));
    }
}

#[test]
fn finite_values_match_exactly() {
    // A fixed case with known answers (no NaN involved): 2*x + y.
    let kit = Kit::cpu().unwrap();
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.25).collect();
    let mut y: Vec<f32> = (0..1000).map(|i| -(i as f32)).collect();
    let cfg = LaunchConfig::for_elements(x.len(), 256).unwrap();
    kit.run(
        &demo::saxpy(),
        cfg,
        &mut [
            Binding::F32(2.0),
            Binding::input(&x),
            Binding::inout(&mut y),
            Binding::I64(1000),
        ],
    )
    .unwrap();
    assert!(y.iter().enumerate().all(|(i, &v)| v == -(i as f32) / 2.0));
    // Sum of 0..1000 in blocks of 256 is exact in f32.
    let ones: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 4];
    kit.run(
        &demo::block_sum(),
        demo::block_sum_config(1000).unwrap(),
        &mut [
            Binding::input(&ones),
            Binding::output(&mut out),
            Binding::I64(1000),
        ],
    )
    .unwrap();
    let expect: Vec<f32> = (0..4)
        .map(|b| ((b * 256)..((b + 1) * 256).min(1000)).sum::<usize>() as f32)
        .collect();
    assert_eq!(out, expect);
}

#[test]
fn chained_launches_with_autosync_off() {
    let kit = Kit::cpu().unwrap();
    kit.set_autosync(false);
    let x = kit.upload(&[1.0f32; 300]).unwrap();
    let y = kit.zeros(DType::F32, 300).unwrap();
    let cfg = LaunchConfig::for_elements(300, 128).unwrap();
    for _ in 0..10 {
        kit.launch(
            &demo::saxpy(),
            cfg,
            &[DevArg::F32(0.5), (&x).into(), (&y).into(), DevArg::I64(300)],
        )
        .unwrap();
    }
    kit.sync().unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![5.0f32; 300]);
    assert_eq!(kit.cached_kernels(), vec!["gk_demo_saxpy".to_string()]);
}

#[test]
fn raw_and_multi_dtype_bindings() {
    // A kernel reading raw bytes as i32 and writing f64: raw bindings carry no dtype.
    let k = KernelDef::new("widen").cpu(|blk| {
        let (src, dst) = (blk.buf::<i32>(0)?, blk.buf::<f64>(1)?);
        for i in blk.thread_range(src.len()) {
            dst.set(i, src.get(i) as f64 * 0.5);
        }
        Ok(())
    });
    let kit = Kit::cpu().unwrap();
    let src: Vec<i32> = vec![-3, 0, 7, i32::MAX];
    let bytes: Vec<u8> = src.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let mut out = vec![0.0f64; 4];
    kit.run(
        &k,
        LaunchConfig::for_elements(4, 32).unwrap(),
        &mut [Binding::raw_in(&bytes), Binding::output(&mut out)],
    )
    .unwrap();
    assert_eq!(out, vec![-1.5, 0.0, 3.5, i32::MAX as f64 * 0.5]);
}

#[test]
fn kit_dropped_before_its_buffers() {
    let kit = Kit::cpu().unwrap();
    let a = kit.upload(&[1.0f64, 2.0, 3.0]).unwrap();
    let v = a.view(1, 2).unwrap();
    let r = a.view_as(8, 1, DType::I64).unwrap();
    let before = kit.pool_stats();
    assert_eq!(before.blocks, 1);
    kit.close();
    drop(a);
    // The kit lives on in the views: they still read and write, and can launch.
    assert_eq!(v.download::<f64>().unwrap(), vec![2.0, 3.0]);
    v.write(&[5.0, 6.0]).unwrap();
    assert_eq!(r.download_i64().unwrap(), vec![5.0f64.to_bits() as i64]);
    let kit2 = v.kit().unwrap().clone();
    let k = KernelDef::new("neg").cpu(|blk| {
        let x = blk.buf::<f64>(0)?;
        for i in blk.thread_range(x.len()) {
            x.set(i, -x.get(i));
        }
        Ok(())
    });
    kit2.launch(
        &k,
        LaunchConfig::for_elements(2, 32).unwrap(),
        &[(&v).into()],
    )
    .unwrap();
    assert_eq!(v.download::<f64>().unwrap(), vec![-5.0, -6.0]);
    assert_eq!(kit2.pool_stats().blocks, 1);
    drop((v, r));
    // Only kit2 holds the kit now, and the block went back to the pool idle.
    assert_eq!(kit2.pool_stats().in_use, 0);
    assert_eq!(kit2.pool_stats().idle_blocks, 1);
}

#[test]
fn wrapped_memory_is_used_not_owned() {
    let kit = Kit::cpu().unwrap();
    let mut host = vec![1.0f32, 2.0, 3.0, 4.0];
    // SAFETY: `host` is CPU-device memory (host memory), aligned for f32, and outlives
    // `w`; nothing else touches it while `w` is used.
    let w = unsafe {
        kit.wrap(
            gpukit::DevicePtr(host.as_mut_ptr() as u64),
            host.len(),
            DType::F32,
        )
    }
    .unwrap();
    assert!(!w.is_owned());
    kit.launch(
        &demo::saxpy(),
        LaunchConfig::for_elements(4, 32).unwrap(),
        &[DevArg::F32(1.0), (&w).into(), (&w).into(), DevArg::I64(4)],
    )
    .unwrap();
    assert_eq!(kit.pool_stats().blocks, 0);
    drop(w);
    assert_eq!(host, vec![2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn converting_transfers() {
    let kit = Kit::cpu().unwrap();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let b = kit.upload_f64(dtype, &[1.5, -0.0, 1e-3, 65504.0]).unwrap();
        let back = b.download_f64().unwrap();
        assert_eq!(back[0], 1.5);
        assert!(back[1] == 0.0 && back[1].is_sign_negative());
        let rounded = match dtype {
            DType::F32 => 1e-3f32 as f64,
            DType::F16 => gpukit::half::f16::from_f64(1e-3).to_f64(),
            DType::BF16 => gpukit::half::bf16::from_f64(1e-3).to_f64(),
            _ => 1e-3,
        };
        assert_eq!(back[2], rounded);
        // 65504 (f16's largest finite) is exact everywhere but bf16 (8-bit mantissa),
        // where it rounds to nearest even: 65536.
        assert_eq!(
            back[3],
            if dtype == DType::BF16 {
                65536.0
            } else {
                65504.0
            }
        );
    }
    // bf16 rounds 1e-3 to nearest even in its 8-bit mantissa.
    let b = kit.upload_f64(DType::BF16, &[1e-3]).unwrap();
    assert_eq!(
        b.download_f64().unwrap()[0],
        gpukit::half::bf16::from_f64(1e-3).to_f64()
    );
    let i = kit
        .upload_i64(DType::I64, &[i64::MIN, -1, i64::MAX])
        .unwrap();
    assert_eq!(i.download_i64().unwrap(), vec![i64::MIN, -1, i64::MAX]);
    let i = kit.upload_i64(DType::I32, &[i32::MIN as i64, 5]).unwrap();
    assert_eq!(i.download_i64().unwrap(), vec![i32::MIN as i64, 5]);
    assert_eq!(i.download_f64().unwrap(), vec![i32::MIN as f64, 5.0]);
    // upload_raw: bytes already in the element type, one copy.
    let f = kit.alloc(DType::F32, 2).unwrap();
    f.upload_raw(&[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).unwrap();
    assert_eq!(f.download::<f32>().unwrap(), vec![1.0, -2.0]);
}

/// A user kernel that writes `v` to element 0 of its output, whatever it is called.
fn writes(name: &str, v: f32) -> KernelDef {
    KernelDef::new(name).cpu(move |blk| {
        let out = blk.buf::<f32>(0)?;
        if blk.block_idx().x == 0 {
            out.set(0, v);
        }
        Ok(())
    })
}

fn run_writes(kit: &Kit, def: &KernelDef) -> f32 {
    let mut out = vec![0.0f32; 1];
    kit.run(
        def,
        LaunchConfig::for_elements(1, 32).unwrap(),
        &mut [Binding::inout(&mut out)],
    )
    .unwrap();
    out[0]
}

/// User kernels and built-ins live in separate namespaces: a user kernel named like a
/// built-in neither hijacks the op (in either order of first use) nor is hijacked.
#[test]
fn a_user_kernel_named_like_a_builtin_hijacks_nothing() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let sum = |kit: &Kit| {
        let a = kit.upload(&x).unwrap();
        let out = kit.upload(&[0.0f32]).unwrap();
        gpukit::ops::sum(kit, &out, &a).unwrap();
        out.download::<f32>().unwrap()[0]
    };
    let fake = writes("sum_f32", -7.0);
    // User kernel first, then the op.
    let kit = Kit::cpu().unwrap();
    assert_eq!(run_writes(&kit, &fake), -7.0);
    assert_eq!(sum(&kit), 10.0);
    // The op first, then the user kernel: the user's own body runs.
    let kit = Kit::cpu().unwrap();
    assert_eq!(sum(&kit), 10.0);
    assert_eq!(run_writes(&kit, &fake), -7.0);
    assert_eq!(sum(&kit), 10.0);
}

/// Two different definitions under one name never share a cache entry: each call runs
/// the definition it was given; the same definition (or a clone) is loaded once.
#[test]
fn two_definitions_with_one_name_each_run_their_own() {
    let kit = Kit::cpu().unwrap();
    let (a, b) = (writes("same_name", 1.0), writes("same_name", 2.0));
    assert_eq!(run_writes(&kit, &a), 1.0);
    assert_eq!(run_writes(&kit, &b), 2.0);
    assert_eq!(run_writes(&kit, &a), 1.0);
    let first = kit.load(&a).unwrap();
    let again = kit.load(&a.clone()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    assert_eq!(
        kit.cached_kernels()
            .iter()
            .filter(|n| *n == "same_name")
            .count(),
        1
    );
}
