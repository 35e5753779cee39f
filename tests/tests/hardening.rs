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
risky!(
    every_builtin_refuses_huge_scalars_over_small_buffers,
    case_every_builtin_huge_scalars,
    CHILD_MEMORY_BYTES,
    120,
    {
        // Every built-in of the table, each i64 scalar in turn set to 2^31 (the others
        // 2) over 16-element buffers: an Argument error or a clean result on both
        // backends, the same verdict on both, never an abort or a huge allocation.
        let kits = kits();
        for name in gpukit::abi::all_kernel_names() {
            let (op, dn) = name.rsplit_once('_').unwrap();
            let sig = gpukit::abi::signature(op).unwrap();
            let args: Vec<&str> = sig.args.split(',').map(str::trim).collect();
            for lie in 0..args.len() {
                if args[lie].contains(':') {
                    continue;
                }
                let mut verdicts = Vec::new();
                for (kname, k) in &kits {
                    // The dtype after the last '_' ("bf16" also ends with "f16").
                    let dtype = gpukit::DType::parse(dn).unwrap();
                    let bufs: Vec<Buf> = args
                        .iter()
                        .map(|a| {
                            // `buf<i64>` and a cast's `buf<f16>` have their own dtype.
                            let fixed = a
                                .split_once("buf<")
                                .and_then(|(_, t)| gpukit::DType::parse(t.trim_end_matches('>')));
                            let d = if op == "check_index" {
                                gpukit::DType::I64
                            } else {
                                fixed.unwrap_or(dtype)
                            };
                            k.alloc(d, 16).unwrap()
                        })
                        .collect();
                    let dev: Vec<DevArg<'_>> = args
                        .iter()
                        .enumerate()
                        .map(|(i, a)| {
                            if a.contains("buf") {
                                DevArg::Buf(&bufs[i])
                            } else if a.ends_with("f64") {
                                DevArg::F64(1.0)
                            } else if i == lie {
                                DevArg::I64(1 << 31)
                            } else {
                                DevArg::I64(2)
                            }
                        })
                        .collect();
                    let r = prompt(&name, 5.0, || {
                        k.launch_builtin(&name, LaunchConfig::for_elements(1, 1).unwrap(), &dev)
                    });
                    assert!(
                        !matches!(r, Err(Error::OutOfMemory { .. })),
                        "{name} on {kname}, argument {lie} = 2^31: {r:?}"
                    );
                    verdicts.push(match r {
                        Ok(()) => "ok",
                        Err(Error::Argument { .. }) => "Argument",
                        Err(Error::InvalidArgument { .. }) => "InvalidArgument",
                        Err(Error::KernelFault { .. }) => "KernelFault",
                        Err(_) => "other",
                    });
                }
                assert!(
                    verdicts.windows(2).all(|w| w[0] == w[1]),
                    "{name}, argument {lie} ({}) = 2^31: {verdicts:?}",
                    args[lie]
                );
            }
        }
    }
);

// ---- 15.3: work proportional to the data, not to a window ----------------------------

risky!(
    a_huge_padded_pool_window_returns_promptly,
    case_huge_pool_window,
    CHILD_MEMORY_BYTES,
    60,
    {
        // A 1x1 image, a window of 2^40 taps padded on both sides (one real tap per
        // output): the answer is the one element, returned at once on both backends.
        let p = gpukit::abi::conv::MaxPool2dParams {
            n: 1,
            c: 1,
            h: 1,
            w: 1,
            kh: 1 << 40,
            kw: 1,
            pads: [1 << 39, 0, 1 << 39, 0],
            strides: [1, 1],
            dilations: [1, 1],
        };
        let shape = prompt("max_pool2d_out_shape", 0.5, || {
            gpukit::ops::max_pool2d_out_shape(&p).unwrap()
        });
        assert_eq!(shape, [1, 1, 2, 1]);
        for (name, k) in kits() {
            let x = k.upload(&[-3.5f32]).unwrap();
            let y = k.upload(&[0.0f32; 2]).unwrap();
            prompt("a padded max_pool2d", 2.0, || {
                gpukit::ops::max_pool2d(&k, &y, &x, &p)
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(y.download::<f32>().unwrap(), vec![-3.5, -3.5], "{name}");
        }
        // The shape of a 2^31-row input is O(1) too.
        let big = gpukit::abi::conv::MaxPool2dParams {
            h: 1 << 31,
            kh: 3,
            pads: [1, 0, 1, 0],
            ..p
        };
        let shape = prompt("max_pool2d_out_shape, h = 2^31", 0.5, || {
            gpukit::ops::max_pool2d_out_shape(&big).unwrap()
        });
        assert_eq!(shape, [1, 1, 1 << 31, 1]);
    }
);

// ---- 15.4: scratch bounded by the data -------------------------------------------------

risky!(
    a_long_thin_matmul_needs_no_scratch_proportional_to_k,
    case_long_thin_matmul,
    CHILD_MEMORY_BYTES,
    120,
    {
        // m = n = 1, k = 2^24 on the CPU: the GEMM engine used to pack B for all of k in
        // 32-column panels (2 GiB for 64 MiB of B, an abort under the limit). A single
        // row block now packs B one k-block at a time. The chain of 2^24 fmas of 1·1
        // from +0.0 is exact: 2^24.
        let k = gpukit::cpu().unwrap();
        let len = 1usize << 24;
        let a = k.upload(&vec![1.0f32; len]).unwrap();
        let b = k.upload(&vec![1.0f32; len]).unwrap();
        let c = k.upload(&[0.0f32]).unwrap();
        gpukit::ops::matmul(&k, &c, &a, &b, 1, len, 1).unwrap();
        assert_eq!(c.download::<f32>().unwrap(), vec![16_777_216.0]);
        // Three columns: each is its own chain of the same sum.
        let b3 = k.upload(&vec![1.0f32; 3 * (len / 4)]).unwrap();
        let c3 = k.upload(&[0.0f32; 12]).unwrap();
        gpukit::ops::matmul(&k, &c3, &a, &b3, 4, len / 4, 3).unwrap();
        assert_eq!(c3.download::<f32>().unwrap(), vec![4_194_304.0; 3 * 4]);
    }
);

// ---- 15.7: the emulator neither aborts nor hangs ---------------------------------------

/// PTX declaring `count` global arrays of 256 MiB each, and a trivial entry.
fn ptx_with_globals(count: usize) -> String {
    let mut s = String::from(".version 7.0\n.target sm_70\n.address_size 64\n");
    for i in 0..count {
        s.push_str(&format!(".global .align 8 .b8 big{i}[268435456];\n"));
    }
    s.push_str(".visible .entry gk_t_globals()\n{\n    ret;\n}\n");
    s
}

risky!(
    module_globals_are_capped_in_total,
    case_module_globals_total,
    CHILD_MEMORY_BYTES,
    60,
    {
        // 24 variables of 256 MiB (each under the per-variable cap) used to load until
        // the process aborted; now the module is refused before anything is allocated.
        let k = gpukit::open("ptx-emu").unwrap();
        for count in [2, 6, 24] {
            let def = KernelDef::new("gk_t_globals").ptx(ptx_with_globals(count));
            let r = prompt("loading the module", 2.0, || k.load(&def).map(|_| ()));
            match r {
                Err(Error::Compile { log, .. }) => {
                    assert!(log.contains("module variables total"), "{log}")
                }
                other => panic!("{count} variables: {other:?}"),
            }
        }
        // One variable under the cap still loads.
        let def = KernelDef::new("gk_t_globals").ptx(ptx_with_globals(1));
        k.load(&def).unwrap();
    }
);

/// An entry that loops forever.
const SPIN_PTX: &str = "
.version 7.0
.target sm_70
.address_size 64
.visible .entry gk_t_spin()
{
LOOP:
    bra.uni LOOP;
}
";

#[test]
fn the_step_limit_is_on_by_default() {
    let d = gpukit_ptx_default_steps();
    assert_eq!(d, Some(1 << 30));
}

fn gpukit_ptx_default_steps() -> Option<u64> {
    gpukit_ptx::EmuOptions::default().max_steps_per_block
}

#[test]
fn an_endless_ptx_loop_is_a_fault_naming_kernel_block_and_instruction() {
    gpukit_tests::child::assert_case_passes_with(
        "case_endless_loop",
        CHILD_MEMORY_BYTES,
        Duration::from_secs(60),
        &[("GPUKIT_EMU_MAX_STEPS", "200000".to_string())],
    );
}

#[test]
#[ignore = "run in a child process by its parent test"]
fn case_endless_loop() {
    let k = gpukit::open("ptx-emu").unwrap();
    let def = KernelDef::new("gk_t_spin").ptx(SPIN_PTX);
    let mut cfg = LaunchConfig::for_elements(64, 32).unwrap();
    cfg.grid = Dim3::new(2, 1, 1);
    let r = prompt("an endless loop", 20.0, || k.launch(&def, cfg, &[]));
    match r {
        Err(Error::KernelFault { kernel, message }) => {
            assert_eq!(kernel, "gk_t_spin");
            assert!(message.contains("step limit of 200000"), "{message}");
            assert!(message.contains("block ("), "{message}");
            assert!(message.contains("bra"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn emulator_memory_is_the_hosts() {
    let k = gpukit::open("ptx-emu").unwrap();
    let host = gpukit::host_memory();
    assert_eq!(k.info().total_memory, host.total);
    assert!(host.total < 1 << 40, "{host:?}");
    match k.alloc(DType::F32, 1 << 60) {
        Err(Error::OutOfMemory {
            requested,
            available,
        }) => {
            assert_eq!(requested, 4 << 60);
            assert!(
                available > 0 && available as u64 <= host.total,
                "{available}"
            );
        }
        other => panic!("{other:?}"),
    }
}

// ---- 15.9: memory pressure ---------------------------------------------------------------

risky!(
    cpu_allocations_are_checked_against_available_memory,
    case_cpu_available_memory,
    // No address-space limit that would fail the allocation for another reason: the
    // check under test must refuse it first.
    gpukit_tests::child::NO_MEMORY_LIMIT,
    60,
    {
        let k = gpukit::cpu().unwrap();
        let host = gpukit::host_memory();
        assert_eq!(k.info().total_memory, host.total);
        // Between what is available and the total: refused with the available figure
        // (it used to be committed, towards the OOM killer).
        let ask = host.available + (host.total.saturating_sub(host.available)) / 2 + (64 << 20);
        let r = prompt("an allocation above available memory", 1.0, || {
            k.alloc(DType::I32, ask as usize / 4 + 1)
        });
        match r {
            Err(Error::OutOfMemory {
                requested,
                available,
            }) => {
                assert!(requested as u64 >= ask, "{requested}");
                assert!(available > 0 && (available as u64) < ask, "{available}");
            }
            other => panic!("{ask} bytes: {other:?}"),
        }
        // A small one still works, and the pool keeps working.
        let b = k.upload(&[1i32; 1000]).unwrap();
        assert_eq!(b.download::<i32>().unwrap(), vec![1i32; 1000]);
    }
);
