//! Bad input gets its own error variant, never a panic.

use gpukit::demo;
use gpukit::prelude::*;
use proptest::prelude::*;

fn kit() -> Kit {
    Kit::cpu().unwrap()
}

#[test]
fn wrong_lengths() {
    let k = kit();
    let b = k.alloc(DType::F32, 4).unwrap();
    assert!(matches!(
        b.write(&[1.0f32; 3]),
        Err(Error::Length {
            expected: 4,
            got: 3,
            ..
        })
    ));
    assert!(matches!(
        b.upload_raw(&[0u8; 15]),
        Err(Error::Length {
            expected: 16,
            got: 15,
            ..
        })
    ));
    assert!(matches!(
        b.read_into(&mut [0.0f32; 5]),
        Err(Error::Length { .. })
    ));
    assert!(matches!(b.write_f64(&[1.0; 2]), Err(Error::Length { .. })));
    assert!(matches!(
        b.download_raw(&mut [0u8; 3]),
        Err(Error::Length { .. })
    ));
    let c = k.alloc(DType::F32, 5).unwrap();
    assert!(matches!(b.copy_from(&c), Err(Error::Length { .. })));
}

#[test]
fn dtype_mismatches() {
    let k = kit();
    let b = k.alloc(DType::F32, 4).unwrap();
    assert!(matches!(
        b.download::<f64>(),
        Err(Error::DType {
            got: DType::F64,
            ..
        })
    ));
    assert!(matches!(b.write(&[1i32; 4]), Err(Error::DType { .. })));
    assert!(matches!(b.download_i64(), Err(Error::DType { .. })));
    assert!(matches!(b.write_i64(&[1; 4]), Err(Error::DType { .. })));
    assert!(matches!(
        k.upload_i64(DType::F64, &[1]),
        Err(Error::DType { .. })
    ));
    let d = k.alloc(DType::F64, 4).unwrap();
    assert!(matches!(b.copy_from(&d), Err(Error::DType { .. })));
    // A kernel reading an argument as the wrong dtype or kind.
    let x = k.upload(&[1.0f64; 4]).unwrap();
    let y = k.alloc(DType::F32, 4).unwrap();
    let cfg = LaunchConfig::for_elements(4, 32).unwrap();
    let r = k.launch(
        &demo::saxpy(),
        cfg,
        &[DevArg::F32(1.0), (&x).into(), (&y).into(), DevArg::I64(4)],
    );
    assert!(matches!(r, Err(Error::Argument { index: 1, .. })), "{r:?}");
    let r = k.launch(
        &demo::saxpy(),
        cfg,
        &[DevArg::F64(1.0), (&y).into(), (&y).into(), DevArg::I64(4)],
    );
    assert!(matches!(r, Err(Error::Argument { index: 0, .. })), "{r:?}");
    let r = k.launch(&demo::saxpy(), cfg, &[DevArg::F32(1.0), (&y).into()]);
    assert!(matches!(r, Err(Error::Argument { index: 2, .. })), "{r:?}");
}

#[test]
fn conversions_that_cannot_be_exact() {
    let k = kit();
    assert!(matches!(
        k.upload_f64(DType::I64, &[1.5]),
        Err(Error::Conversion {
            dtype: DType::I64,
            ..
        })
    ));
    assert!(matches!(
        k.upload_f64(DType::I32, &[f64::NAN]),
        Err(Error::Conversion { .. })
    ));
    assert!(matches!(
        k.upload_i64(DType::I32, &[1 << 40]),
        Err(Error::Conversion { .. })
    ));
}

#[test]
fn out_of_range_and_misaligned_views() {
    let k = kit();
    let b = k.alloc(DType::F32, 10).unwrap();
    assert!(matches!(
        b.view(8, 3),
        Err(Error::OutOfBounds {
            offset: 8,
            len: 3,
            capacity: 10,
            ..
        })
    ));
    assert!(matches!(
        b.view(usize::MAX, 2),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(b.view(10, 0).is_ok());
    assert!(matches!(
        b.view_as(38, 2, DType::F16),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        b.view_as(2, 1, DType::F32),
        Err(Error::Misaligned {
            byte_offset: 2,
            align: 4,
            ..
        })
    ));
    assert!(matches!(
        b.view_as(4, 1, DType::F64),
        Err(Error::Misaligned { align: 8, .. })
    ));
    assert!(matches!(
        b.view_as(0, usize::MAX, DType::F64),
        Err(Error::SizeOverflow { .. })
    ));
    let v = b.view_as(8, 4, DType::F64).unwrap();
    assert_eq!(v.len(), 4);
    assert!(matches!(
        v.view_as(0, 5, DType::F64),
        Err(Error::OutOfBounds { .. })
    ));
}

#[test]
fn oversize_allocations() {
    let k = kit();
    assert!(matches!(
        k.alloc(DType::F64, usize::MAX / 4),
        Err(Error::SizeOverflow { .. })
    ));
    let total = k.info().total_memory as usize;
    assert!(matches!(
        k.alloc(DType::F32, total / 4 + 1024),
        Err(Error::OutOfMemory { .. })
    ));
    // The failed requests left nothing behind.
    assert_eq!(k.pool_stats().blocks, 0);
}

#[test]
fn unknown_kernels() {
    let k = kit();
    let cuda_only = KernelDef::new("cuda_only").cuda("extern \"C\" __global__ void cuda_only() {}");
    let cfg = LaunchConfig::for_elements(1, 1).unwrap();
    assert!(matches!(
        k.launch(&cuda_only, cfg, &[]),
        Err(Error::KernelNotFound { .. })
    ));
    assert!(matches!(
        k.run(&cuda_only, cfg, &mut []),
        Err(Error::KernelNotFound { .. })
    ));
    assert!(matches!(
        k.launch_builtin("no_such_op_f32", cfg, &[]),
        Err(Error::KernelNotFound { .. })
    ));
}

#[test]
fn bad_launch_configs() {
    let k = kit();
    let mut cfg = LaunchConfig::for_elements(10, 32).unwrap();
    cfg.block = Dim3::new(2048, 1, 1);
    assert!(matches!(
        k.run(&demo::saxpy(), cfg, &mut []),
        Err(Error::Launch { .. })
    ));
    assert!(matches!(
        LaunchConfig::for_elements(10, 0),
        Err(Error::Launch { .. })
    ));
    let cfg = LaunchConfig::for_elements(10, 32)
        .unwrap()
        .with_shared(1 << 20);
    assert!(matches!(
        k.launch(&demo::saxpy(), cfg, &[]),
        Err(Error::Launch { .. })
    ));
}

#[test]
fn kernel_faults_are_errors() {
    let k = kit();
    // Reads one past the end: the CPU backend's bounds check turns it into a fault.
    let oob = KernelDef::new("oob").cpu(|blk| {
        let x = blk.buf::<f32>(0)?;
        x.set(x.len(), 1.0);
        Ok(())
    });
    let b = k.alloc(DType::F32, 3).unwrap();
    let r = k.launch(
        &oob,
        LaunchConfig::for_elements(1, 1).unwrap(),
        &[(&b).into()],
    );
    match r {
        Err(Error::KernelFault { kernel, message }) => {
            assert_eq!(kernel, "oob");
            assert!(message.contains("index 3 out of bounds of 3"), "{message}");
        }
        other => panic!("expected a fault, got {other:?}"),
    }
    // A body's own error comes back as it is.
    let refuse = KernelDef::new("refuse").cpu(|_| {
        Err(Error::InvalidArgument {
            op: "refuse".into(),
            reason: "no".into(),
        })
    });
    assert!(matches!(
        k.launch(&refuse, LaunchConfig::for_elements(1, 1).unwrap(), &[]),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn foreign_and_absent_buffers() {
    let (a, b) = (kit(), kit());
    let x = b.upload(&[1.0f32]).unwrap();
    let cfg = LaunchConfig::for_elements(1, 1).unwrap();
    let r = a.launch(
        &demo::saxpy(),
        cfg,
        &[DevArg::F32(1.0), (&x).into(), (&x).into(), DevArg::I64(1)],
    );
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
    let y = a.alloc(DType::F32, 1).unwrap();
    assert!(matches!(y.copy_from(&x), Err(Error::DeviceMismatch { .. })));
    let none = Buf::absent(DType::F32);
    assert!(matches!(none.download::<f32>(), Err(Error::Absent { .. })));
    assert!(matches!(none.view(0, 0), Err(Error::Absent { .. })));
    assert!(matches!(none.write::<f32>(&[]), Err(Error::Absent { .. })));
    // An absent operand launches as an empty buffer.
    let probe = KernelDef::new("probe").cpu(|blk| {
        let m = blk.buf::<f32>(0)?;
        let out = blk.buf::<f32>(1)?;
        out.set(0, if m.is_empty() { 1.0 } else { 0.0 });
        Ok(())
    });
    a.launch(&probe, cfg, &[(&none).into(), (&y).into()])
        .unwrap();
    assert_eq!(y.download::<f32>().unwrap(), vec![1.0]);
}

#[test]
fn bad_device_specs() {
    assert!(matches!(
        gpukit::open("tpu:0"),
        Err(Error::DeviceUnavailable { .. })
    ));
    assert!(matches!(
        gpukit::open("cuda:zero"),
        Err(Error::DeviceUnavailable { .. })
    ));
}

#[derive(Debug, Clone)]
enum Call {
    Alloc(u8, usize),
    View(usize, usize),
    ViewAs(usize, usize, u8),
    Write(u8, usize),
    Download(u8),
    Launch(u8, usize, u32),
    Spec(String),
}

fn huge_or_small() -> impl Strategy<Value = usize> {
    prop_oneof![
        0usize..64,
        Just(usize::MAX),
        Just(usize::MAX / 2),
        (1usize << 40)..(1usize << 50)
    ]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (any::<u8>(), huge_or_small()).prop_map(|(d, n)| Call::Alloc(d, n)),
        (huge_or_small(), huge_or_small()).prop_map(|(o, n)| Call::View(o, n)),
        (huge_or_small(), huge_or_small(), any::<u8>()).prop_map(|(o, n, d)| Call::ViewAs(o, n, d)),
        (any::<u8>(), 0usize..64).prop_map(|(d, n)| Call::Write(d, n)),
        any::<u8>().prop_map(Call::Download),
        (any::<u8>(), 0usize..5, 0u32..2000).prop_map(|(p, n, b)| Call::Launch(p, n, b)),
        "[a-z:0-9]{0,8}".prop_map(Call::Spec),
    ]
}

fn dt(d: u8) -> DType {
    DType::ALL[d as usize % DType::ALL.len()]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random invalid (and valid) calls: every one returns, none panics.
    #[test]
    fn random_calls_never_panic(calls in proptest::collection::vec(call(), 1..24)) {
        let k = kit();
        let mut cur = k.alloc(DType::F32, 16).unwrap();
        for c in calls {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<()> {
                match c {
                    Call::Alloc(d, n) => { cur = k.alloc(dt(d), n)?; }
                    Call::View(o, n) => { cur = cur.view(o, n)?; }
                    Call::ViewAs(o, n, d) => { cur = cur.view_as(o, n, dt(d))?; }
                    Call::Write(d, n) => gpukit::with_dtype!(dt(d), T => cur.write(&vec![T::default(); n])?),
                    Call::Download(d) => gpukit::with_dtype!(dt(d), T => { cur.download::<T>()?; }),
                    Call::Launch(pick, nargs, block) => {
                        let args: Vec<DevArg<'_>> = (0..nargs).map(|i| match (pick as usize + i) % 4 {
                            0 => DevArg::F32(2.0),
                            1 => DevArg::Buf(&cur),
                            2 => DevArg::I64(cur.len() as i64 + pick as i64 % 3),
                            _ => DevArg::I32(-1),
                        }).collect();
                        let cfg = LaunchConfig { grid: Dim3::x(block % 7), block: Dim3::x(block), shared_bytes: 0 };
                        k.launch(&demo::saxpy(), cfg, &args)?;
                    }
                    Call::Spec(s) => { let _ = gpukit::open(&s); }
                }
                Ok(())
            }));
            prop_assert!(r.is_ok(), "a call panicked");
        }
    }
}

/// A built-in launch whose scalars lie about the buffers is an error before anything
/// is allocated: batch_norm with n = 0 and c = 2^31 used to allocate a c-sized table
/// (32 GiB) before checking the parameter buffers, and abort the process.
#[test]
fn lying_launch_scalars_are_checked_before_any_allocation() {
    let k = kit();
    let x = k.upload(&[1.0f32; 4]).unwrap();
    let out = k.upload(&[0.0f32; 4]).unwrap();
    let p: Vec<Buf> = (0..4).map(|_| k.upload(&[1.0f32; 2]).unwrap()).collect();
    let cfg = LaunchConfig::for_elements(1, 1).unwrap();
    let res = k.launch_builtin(
        "batch_norm_f32",
        cfg,
        &[
            (&out).into(),
            (&x).into(),
            (&p[0]).into(),
            (&p[1]).into(),
            (&p[2]).into(),
            (&p[3]).into(),
            DevArg::I64(0),
            DevArg::I64(1 << 31),
            DevArg::I64(1),
            DevArg::F64(1e-5),
        ],
    );
    assert!(
        res.is_err(),
        "a c of 2^31 over 2-element buffers was accepted"
    );
    assert!(!matches!(res, Err(Error::OutOfMemory { .. })), "{res:?}");
}

/// Raw launches of `topk` and `max_pool2d_index` whose buffers alias (run under
/// valgrind by `.ci/valgrind`): an input overlapping an output is read from a copy,
/// outputs overlapping each other are refused, and long lines take the parallel path.
#[test]
fn topk_and_pool_index_raw_aliasing() {
    use gpukit::{DevArg, LaunchConfig, ops};
    let k = kit();
    let cfg = LaunchConfig::for_elements(64, 256).unwrap();
    // x = the first 8 elements of a buffer whose head is also `values`.
    let data: Vec<f32> = (0..16).map(|i| ((i * 5) % 7) as f32).collect();
    let buf = k.upload(&data).unwrap();
    let idx = k.alloc(DType::I64, 4).unwrap();
    let topk = |v: &Buf, i: &Buf| {
        let mut a: Vec<DevArg<'_>> = vec![v.into(), i.into(), (&buf).into()];
        a.extend([2i64, 8, 1, 2, 1].map(DevArg::I64));
        k.launch_builtin("topk_f32", cfg, &a)
    };
    topk(&buf, &idx).unwrap();
    // Lines [0,5,3,1,6,4,2,0] and [5,3,1,6,4,2,0,5]: top 2 of each, read before writing.
    assert_eq!(buf.download::<f32>().unwrap()[..4], [6.0, 5.0, 6.0, 5.0]);
    assert_eq!(idx.download::<i64>().unwrap(), [4, 1, 3, 0]);
    let as_i64 = k.alloc(DType::I64, 8).unwrap();
    // values inside the indices' bytes: refused, nothing written.
    let head = as_i64.view(0, 2).unwrap();
    let mut a: Vec<DevArg<'_>> = vec![(&head).into(), (&as_i64).into(), (&buf).into()];
    a.extend([2i64, 8, 1, 2, 1].map(DevArg::I64));
    assert!(k.launch_builtin("topk_f32", cfg, &a).is_err());
    // A long line (parallel path) and a pooled plane.
    let n = 1 << 17;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 10007) as f32).collect();
    let bx = k.upload(&x).unwrap();
    let (tv, ti) = (
        k.alloc(DType::F32, 3).unwrap(),
        k.alloc(DType::I64, 3).unwrap(),
    );
    ops::topk(&k, &tv, &ti, &bx, 1, n, 1, 3, true).unwrap();
    assert_eq!(tv.download::<f32>().unwrap(), [10006.0; 3]);
    let p = ops::MaxPool2dParams::new(2, 2, 128, 128, 3, 3);
    let pi = k.alloc(DType::I64, 2 * 2 * 126 * 126).unwrap();
    ops::max_pool2d_index(&k, &pi, &bx.view(0, 4 * 128 * 128).unwrap(), &p, true).unwrap();
    assert!(
        pi.download::<i64>()
            .unwrap()
            .iter()
            .all(|&i| (0..4 * 128 * 128).contains(&i))
    );
}
