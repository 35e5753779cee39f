//! One launch validation on every backend (issue 15.6): the same bad launch is the same
//! error variant on `cpu` and `ptx-emu` — [`Error::Launch`] for geometry the device
//! cannot run, [`Error::Argument`] for arguments that do not match the kernel's PTX
//! `.entry` — and [`Error::KernelFault`] only for what a kernel does while running.

use gpukit::prelude::*;
use gpukit_tests::fill::{FILL_NAME, FILL_PTX, cpu_and_emu as kits, fill_def};

/// The fill kernel (see [`gpukit_tests::fill`]).
fn fill() -> KernelDef {
    fill_def(FILL_PTX)
}

/// The error variant's name, for comparing verdicts across backends.
fn verdict(r: &Result<()>) -> &'static str {
    match r {
        Ok(()) => "ok",
        Err(Error::Launch { .. }) => "Launch",
        Err(Error::Argument { .. }) => "Argument",
        Err(Error::KernelFault { .. }) => "KernelFault",
        Err(_) => "other",
    }
}

#[test]
fn a_good_launch_runs_alike() {
    for (name, k) in kits() {
        let out = k.alloc(DType::F32, 100).unwrap();
        let cfg = LaunchConfig::for_elements(90, 32).unwrap();
        k.launch(
            &fill(),
            cfg,
            &[(&out).into(), DevArg::F32(2.5), DevArg::I64(90)],
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<f32> = out.download().unwrap();
        let want: Vec<f32> = (0..100).map(|i| if i < 90 { 2.5 } else { 0.0 }).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_same_bad_launch_is_the_same_error_on_every_backend() {
    let one = LaunchConfig::for_elements(4, 4).unwrap();
    let with_block = |x, y, z| {
        let mut c = one;
        c.block = Dim3::new(x, y, z);
        c
    };
    let with_grid = |x, y, z| {
        let mut c = one;
        c.grid = Dim3::new(x, y, z);
        c
    };
    type Case = (&'static str, LaunchConfig, u8, &'static str);
    // (what, config, argument set, expected verdict); argument sets: 0 good, 1 one
    // missing, 2 one extra, 3 an i32 where the entry has a u64, 4 an f64 for an f32,
    // 5 n past the buffer's end (a run-time out-of-bounds write).
    let cases: [Case; 13] = [
        (
            "block z of 128 (CUDA allows 64)",
            with_block(1, 1, 128),
            0,
            "Launch",
        ),
        ("block of 2048 threads", with_block(2048, 1, 1), 0, "Launch"),
        (
            "block of 32x32x2 threads",
            with_block(32, 32, 2),
            0,
            "Launch",
        ),
        ("block y of 0", with_block(4, 0, 1), 0, "Launch"),
        ("grid y of 65536", with_grid(1, 65_536, 1), 0, "Launch"),
        ("grid x above 2^31-1", with_grid(1 << 31, 1, 1), 0, "Launch"),
        (
            "49 KiB of shared memory",
            one.with_shared(49 * 1024),
            0,
            "Launch",
        ),
        ("block (1, 1, 64)", with_block(1, 1, 64), 0, "ok"),
        ("a missing argument", one, 1, "Argument"),
        ("an extra argument", one, 2, "Argument"),
        ("an i32 for a u64", one, 3, "Argument"),
        ("an f64 for an f32", one, 4, "Argument"),
        ("n past the buffer", one, 5, "KernelFault"),
    ];
    let backends = kits();
    for (what, cfg, set, want) in cases {
        let mut seen = Vec::new();
        for (name, k) in &backends {
            let out = k.upload(&[0.0f32; 4]).unwrap();
            let o = DevArg::Buf(&out);
            let args: Vec<DevArg<'_>> = match set {
                0 => vec![o, DevArg::F32(1.0), DevArg::I64(4)],
                1 => vec![o, DevArg::F32(1.0)],
                2 => vec![o, DevArg::F32(1.0), DevArg::I64(4), DevArg::I64(4)],
                3 => vec![o, DevArg::F32(1.0), DevArg::I32(4)],
                4 => vec![o, DevArg::F64(1.0), DevArg::I64(4)],
                _ => vec![o, DevArg::F32(1.0), DevArg::I64(1000)],
            };
            let cfg = if set == 5 {
                LaunchConfig::for_elements(1000, 128).unwrap()
            } else {
                cfg
            };
            let r = k.launch(&fill(), cfg, &args);
            assert_eq!(verdict(&r), want, "{what} on {name}: {r:?}");
            if let Err(Error::Launch { kernel, .. } | Error::Argument { kernel, .. }) = &r {
                assert_eq!(kernel, FILL_NAME, "{what} on {name}");
            }
            // A refused launch leaves the buffer untouched (errors before side effects).
            if want != "ok" && want != "KernelFault" {
                assert_eq!(
                    out.download::<f32>().unwrap(),
                    vec![0.0; 4],
                    "{what} on {name}"
                );
            }
            seen.push(verdict(&r));
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{what}: {seen:?}");
    }
}

#[test]
fn bad_geometry_is_refused_by_the_one_path_every_launch_takes() {
    // The one-call path and the built-in path refuse it too, before anything runs.
    for (name, k) in kits() {
        let mut cfg = LaunchConfig::for_elements(4, 4).unwrap();
        cfg.block = Dim3::new(1, 1, 128);
        let mut out = [0.0f32; 4];
        let r = k.run(
            &fill(),
            cfg,
            &mut [
                Binding::output(&mut out),
                Binding::F32(1.0),
                Binding::I64(4),
            ],
        );
        assert!(matches!(r, Err(Error::Launch { .. })), "{name}: {r:?}");
        let a = k.upload(&[1.0f32; 4]).unwrap();
        let r = k.launch_builtin(
            "add_f32",
            cfg,
            &[(&a).into(), (&a).into(), (&a).into(), DevArg::I64(4)],
        );
        assert!(matches!(r, Err(Error::Launch { .. })), "{name}: {r:?}");
        assert_eq!(a.download::<f32>().unwrap(), vec![1.0; 4], "{name}");
    }
}
