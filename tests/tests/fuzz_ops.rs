//! Fuzz target for every public function of `gpukit-ops` (issue 15): random — and
//! lying — arguments on `cpu` and `ptx-emu`. Case `i` calls op `i mod OPS.len()` (73
//! functions), so every batch calls every op (the CI budget of 150 cases calls each two or three times; the
//! long run, `GPUKIT_FUZZ_CASES=10000`, about 200 times). The batch runs in a child
//! process under an address-space limit and a time limit ([`gpukit_tests::child`]),
//! so an abort, a hang or a panic fails the target instead of the runner.
//!
//! The arguments: dims that are mostly small but sometimes lie (0, 2^31, 2^40,
//! `usize::MAX / 2`); buffer lengths that mostly fit the dims and sometimes do not; any
//! of the six dtypes (an op refuses the ones it does not take), sometimes mixed; an
//! input sometimes the output itself (aliasing); float contents with NaN, ±inf, −0.0,
//! subnormals and extremes; index buffers (gather/scatter `idx`, eos_gather `ids`)
//! with values just outside their axis, negative, or extreme; float parameters (eps,
//! alpha, bounds, scales) that are sometimes NaN, infinite or out of the compute
//! type's range. Valid sizes stay small, so an accepted case runs quickly on the
//! emulator.
//!
//! Per case it asserts: no panic, abort or hang (the child); no write outside the
//! given buffers (every buffer is a guard-banded view, [`Guarded`]) and no kernel
//! fault (the emulator's memcheck sees every access from inside; an op validates
//! before it launches); the same verdict on both backends (both accept or both
//! refuse). The pure functions (output shapes, `numel`, `attention_supported`,
//! `attention_default_scale`) are called with the same lying arguments: they must
//! return without a panic, within the batch's time limit.
//!
//! A second target, `fuzz_content_launches`, makes raw `launch_builtin` calls of the
//! kernels whose buffers' contents index others (the broadcasts, the strided copy,
//! gather, scatter, check_index, eos_gather) with plausible or lying contents, and
//! asserts the same result class (error variant and argument) on both backends, no
//! kernel fault, no write outside the buffers, and the same bytes when both accept.
//!
//! `map` compiles CUDA C on the emulator: where NVRTC is missing the emulator refuses
//! it while the CPU runs it, so its verdict is compared only where NVRTC is present
//! (said on stderr otherwise).

use std::time::{Duration, Instant};

use gpukit::prelude::*;
use gpukit_tests::fill::cpu_and_emu;
use gpukit_tests::fuzzing::launch_cases::{Arg, CONTENT_OPS, class, content_case, same_bytes};
use gpukit_tests::fuzzing::op_cases::{Case, OPS, call};
use gpukit_tests::fuzzing::{Guarded, Rng, cases, download_bytes, run_batch, seed, verdict};

#[test]
fn fuzz_every_op() {
    run_batch("batch_every_op");
}

#[test]
#[ignore = "run in a child process by fuzz_every_op"]
fn batch_every_op() {
    let kits = cpu_and_emu();
    let nvrtc = gpukit::cuda_compiler_available();
    if !nvrtc {
        eprintln!(
            "fuzz_ops: `map` verdicts not compared: NVRTC is missing, so the emulator \
             cannot compile its CUDA C (the CPU runs it)"
        );
    }
    let mut rng = Rng::new(seed() ^ 0x0b5);
    let mut called = [0u64; OPS.len()];
    let mut accepted = [0u64; OPS.len()];
    let mut slowest = (Duration::ZERO, String::new());
    for case in 0..cases() {
        let which = (case % OPS.len() as u64) as usize;
        let op = OPS[which];
        let case_seed = rng.next_u64();
        let mut verdicts = Vec::new();
        for (kname, k) in &kits {
            let mut c = Case::new(k, case_seed);
            let t = Instant::now();
            let r = call(op, &mut c);
            let took = t.elapsed();
            if took > slowest.0 {
                slowest = (took, format!("case {case}: {op} on {kname}"));
            }
            let what = format!("case {case}: {op} on {kname}: {}", c.desc);
            for g in &c.bufs {
                g.check(&what);
            }
            // An op validates before it launches: a kernel fault (the emulator's
            // memcheck, a caught CPU kernel panic) is a bug, not a refusal.
            assert!(
                !matches!(r, Err(Error::KernelFault { .. })),
                "{what}: a kernel fault: {r:?}"
            );
            verdicts.push((verdict(&r), format!("{r:?}"), c.desc));
        }
        called[which] += 1;
        if verdicts.iter().all(|v| v.0 == "accepted") {
            accepted[which] += 1;
        }
        if op == "map" && !nvrtc {
            continue;
        }
        assert!(
            verdicts.windows(2).all(|w| w[0].0 == w[1].0),
            "case {case}: {op}: the backends disagree: {verdicts:#?}"
        );
    }
    // Which ops ever got past validation: a fuzz that only meets refusals tests half.
    let report: Vec<String> = OPS
        .iter()
        .zip(called.iter().zip(&accepted))
        .map(|(op, (c, a))| format!("{op} {a}/{c}"))
        .collect();
    eprintln!("fuzz_ops: accepted/called per op: {}", report.join(", "));
    eprintln!("fuzz_ops: slowest call {:?} ({})", slowest.0, slowest.1);
    assert!(called.iter().all(|&c| c > 0) || cases() < OPS.len() as u64);
}

// ---- raw launches of the kernels whose buffers' CONTENTS index others -------------------

#[test]
fn fuzz_content_launches() {
    run_batch("batch_content_launches");
}

#[test]
#[ignore = "run in a child process by fuzz_content_launches"]
fn batch_content_launches() {
    // Raw launches (`Kit::launch_builtin`) of every kernel with index-bearing buffers,
    // their contents small and plausible or lying (negative, extreme, past the axis):
    // the CPU and the emulator must give the same result class (the same error variant
    // and argument, via the one content check), never a kernel fault, stay inside the
    // buffers, and — when both accept — leave the same bytes in every buffer.
    let kits = cpu_and_emu();
    let mut rng = Rng::new(seed() ^ 0xc0_47e4);
    let names: Vec<String> = gpukit::abi::all_kernel_names()
        .into_iter()
        .filter(|n| {
            let op = n.rsplit_once('_').map_or("", |p| p.0);
            op.ends_with("_bc") || CONTENT_OPS.contains(&op)
        })
        .collect();
    let mut accepted = 0u64;
    for case in 0..cases() {
        let name = rng.pick(&names).clone();
        let (op, dn) = name.rsplit_once('_').unwrap();
        let d = DType::ALL.into_iter().find(|t| t.name() == dn).unwrap();
        let spec = content_case(op, d, &mut rng);
        let mut results = Vec::new();
        for (kname, k) in &kits {
            let bufs: Vec<Option<Guarded>> = spec
                .iter()
                .map(|a| match a {
                    Arg::Buf(bd, bytes) => {
                        Some(Guarded::new(k, *bd, bytes.len() / bd.size(), bytes))
                    }
                    Arg::I64(_) => None,
                })
                .collect();
            let args: Vec<DevArg<'_>> = spec
                .iter()
                .zip(&bufs)
                .map(|(a, g)| match (a, g) {
                    (_, Some(g)) => DevArg::Buf(&g.view),
                    (Arg::I64(v), None) => DevArg::I64(*v),
                    (Arg::Buf(..), None) => unreachable!("every buffer is materialised"),
                })
                .collect();
            let r = k.launch_builtin(&name, LaunchConfig::for_elements(1, 1).unwrap(), &args);
            let what = format!("case {case}: {name} on {kname}");
            for g in bufs.iter().flatten() {
                g.check(&what);
            }
            assert!(
                !matches!(r, Err(Error::KernelFault { .. })),
                "{what}: a kernel fault: {r:?}"
            );
            let contents: Vec<Vec<u8>> = bufs
                .iter()
                .flatten()
                .map(|g| download_bytes(&g.view))
                .collect();
            results.push((class(&r), format!("{r:?}"), contents));
        }
        let scalars: Vec<i64> = spec
            .iter()
            .filter_map(|a| match a {
                Arg::I64(v) => Some(*v),
                Arg::Buf(..) => None,
            })
            .collect();
        assert!(
            results.windows(2).all(|w| w[0].0 == w[1].0),
            "case {case}: {name}, scalars {scalars:?}: the backends disagree: {:?}",
            results.iter().map(|x| &x.1).collect::<Vec<_>>()
        );
        if results[0].0 == "ok" {
            accepted += 1;
            // Data movement copies bits; the broadcast arithmetic is exact IEEE with one
            // rounding (docs/numerics.md): the same bytes on both backends, NaN payloads
            // aside.
            let same = results
                .windows(2)
                .all(|w| w[0].2.iter().zip(&w[1].2).all(|(a, b)| same_bytes(d, a, b)));
            assert!(
                same,
                "case {case}: {name}, scalars {scalars:?}: different results"
            );
        }
    }
    eprintln!(
        "fuzz_content_launches: {accepted} of {} cases accepted",
        cases()
    );
    assert!(
        cases() < 50 || accepted > 0,
        "no launch got past the checks"
    );
}
