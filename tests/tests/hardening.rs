//! Regression tests of issue 15's reproductions that could abort, exhaust memory or
//! hang the process if they regressed. Each runs as an ignored test of this binary in a
//! child process under an address-space limit and a time limit
//! ([`gpukit_tests::child`]); the visible test is the parent that checks the child
//! passed.

use std::time::{Duration, Instant};

use gpukit::prelude::*;
use gpukit_tests::child::{CHILD_MEMORY_BYTES, assert_case_passes};

/// A visible parent test `$parent` that runs the ignored child case `$case` with
/// `$mem` bytes of address space and `$secs` seconds.
macro_rules! risky {
    ($parent:ident, $case:ident, $mem:expr, $secs:expr, $body:block) => {
        #[test]
        #[ignore = "run in a child process by its parent test"]
        fn $case() $body

        #[test]
        fn $parent() {
            assert_case_passes(stringify!($case), $mem, Duration::from_secs($secs));
        }
    };
}

fn kits() -> Vec<(&'static str, Kit)> {
    vec![
        ("cpu", gpukit::cpu().unwrap()),
        ("ptx-emu", gpukit::open("ptx-emu").unwrap()),
    ]
}

/// Fails unless `f` returns within `secs` seconds.
fn prompt<T>(what: &str, secs: f64, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    let took = t.elapsed().as_secs_f64();
    assert!(took < secs, "{what} took {took:.2} s (limit {secs} s)");
    r
}

// ---- 15.2: arguments validated before any allocation --------------------------------

risky!(
    lying_sum_length_is_refused_before_the_plan_scratch,
    case_lying_sum_length,
    CHILD_MEMORY_BYTES,
    60,
    {
        // A `sum` whose length says 2^31 over 4 elements: the emulator's plan used to
        // allocate ~512 MiB of scratch before memcheck faulted.
        for (name, k) in kits() {
            let a = k.upload(&[1.0f32; 4]).unwrap();
            let out = k.upload(&[0.0f32]).unwrap();
            for n in [5i64, 1 << 31, i64::MAX] {
                let r = prompt("a lying sum", 1.0, || {
                    k.launch_builtin(
                        "sum_f32",
                        LaunchConfig::for_elements(1, 1).unwrap(),
                        &[(&out).into(), (&a).into(), DevArg::I64(n)],
                    )
                });
                assert!(
                    matches!(&r, Err(Error::Argument { index: 1, .. })),
                    "{name}, n = {n}: {r:?}"
                );
            }
            assert_eq!(out.download::<f32>().unwrap(), vec![0.0], "{name}");
        }
    }
);

risky!(
    lying_batch_norm_is_refused_on_every_backend,
    case_lying_batch_norm,
    CHILD_MEMORY_BYTES,
    60,
    {
        for (name, k) in kits() {
            let x = k.upload(&[1.0f32; 4]).unwrap();
            let out = k.upload(&[0.0f32; 4]).unwrap();
            let p: Vec<Buf> = (0..4).map(|_| k.upload(&[1.0f32; 2]).unwrap()).collect();
            let r = prompt("a lying batch_norm", 1.0, || {
                k.launch_builtin(
                    "batch_norm_f32",
                    LaunchConfig::for_elements(1, 1).unwrap(),
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
                )
            });
            assert!(
                matches!(&r, Err(Error::Argument { index: 2, .. })),
                "{name}: {r:?}"
            );
        }
    }
);
