//! Fuzz targets (issue 15): random — and lying — arguments to every `launch_builtin`
//! name, `Kit::load` of mutated PTX and of mutated CUDA C (NVRTC then the emulator;
//! skipped, said on stderr, where NVRTC is missing), and random `LaunchConfig`s, on
//! `cpu` and `ptx-emu` (every op of `gpukit-ops`: tests/tests/fuzz_ops.rs). Each
//! target runs as a batch in a child process under an address-space limit and a time
//! limit ([`gpukit_tests::child`]), so an abort, a hang or a panic fails the target
//! instead of the runner. Per case it asserts:
//!
//! * no panic (a panic fails the child), no abort (a signal), no hang (the time limit);
//! * no write outside the given buffers: every buffer is a view inside a larger block
//!   whose guard bands must keep their bytes (the emulator's memcheck checks the same
//!   from inside);
//! * the same verdict on both backends: both accept, or both refuse.
//!
//! Budget: `GPUKIT_FUZZ_CASES` cases per target (default 150, the CI budget), seeded
//! by `GPUKIT_FUZZ_SEED` (default fixed). The long run is
//! `GPUKIT_FUZZ_CASES=10000 cargo test --release -p gpukit-tests --test fuzz`
//! (docs/reliability.md).

use gpukit::prelude::*;
use gpukit_tests::fill::{FILL_NAME, FILL_PTX, cpu_and_emu as kits, fill_def};
use gpukit_tests::fuzzing::{Guarded, Rng, cases, run_batch, seed, verdict};

/// A launch scalar: mostly small and plausible, sometimes a lie.
fn scalar(rng: &mut Rng) -> i64 {
    match rng.below(10) {
        0 => *rng.pick(&[-1, i64::MIN, i64::MAX, 1 << 31, 1 << 40, (1 << 32) + 1]),
        1 => 0,
        2..=5 => rng.below(5) as i64,
        _ => rng.below(40) as i64,
    }
}

/// Applies `1 + below(max_edits)` random edits to `text`: a deletion of up to
/// `max_cut - 1` bytes, an insertion of one of `tokens`, or one byte replaced by one of
/// `alphabet`.
fn mutate(
    rng: &mut Rng,
    text: &mut Vec<u8>,
    max_edits: u64,
    max_cut: u64,
    tokens: &[&str],
    alphabet: &[u8],
) {
    for _ in 0..1 + rng.below(max_edits) {
        let at = rng.below(text.len() as u64 + 1) as usize;
        match rng.below(3) {
            0 if !text.is_empty() => {
                let end = (at + rng.below(max_cut) as usize).min(text.len());
                text.drain(at.min(end)..end);
            }
            1 => {
                let t = rng.pick(tokens).as_bytes().to_vec();
                text.splice(at..at, t);
            }
            _ if !text.is_empty() => {
                let i = at.min(text.len() - 1);
                text[i] = alphabet[rng.below(alphabet.len() as u64) as usize];
            }
            _ => {}
        }
    }
}

// ---- every launch_builtin name -----------------------------------------------------------

#[test]
fn fuzz_builtin_launches() {
    run_batch("batch_builtin_launches");
}

#[test]
#[ignore = "run in a child process by fuzz_builtin_launches"]
fn batch_builtin_launches() {
    let kits = kits();
    let names = gpukit::abi::all_kernel_names();
    let mut rng = Rng::new(seed());
    for case in 0..cases() {
        let name = rng.pick(&names).clone();
        let (op, d) = name.rsplit_once('_').unwrap();
        let dtype = DType::ALL.into_iter().find(|t| t.name() == d).unwrap();
        let sig = gpukit::abi::signature(op).unwrap();
        let params: Vec<&str> = sig.args.split(',').map(str::trim).collect();
        // Buffer sizes, scalars and contents, shared by both backends.
        let sizes: Vec<usize> = params.iter().map(|_| rng.below(48) as usize).collect();
        let scalars: Vec<i64> = params.iter().map(|_| scalar(&mut rng)).collect();
        let fill: Vec<u8> = (0..64).map(|_| rng.next_u64() as u8 & 0x3f).collect();
        let drop_arg = rng.below(20) == 0;
        let mut verdicts = Vec::new();
        for (kname, k) in &kits {
            let bufs: Vec<Option<Guarded>> = params
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    p.contains("buf").then(|| {
                        // `buf<i64>` (indices) and a cast's `buf<f16>` (its source)
                        // have their own dtype; a plain `buf` is the kernel's.
                        let fixed = p
                            .split_once("buf<")
                            .and_then(|(_, t)| DType::parse(t.trim_end_matches('>')));
                        let d = if op == "check_index" {
                            DType::I64
                        } else {
                            fixed.unwrap_or(dtype)
                        };
                        Guarded::new(k, d, sizes[i], &fill)
                    })
                })
                .collect();
            let mut args: Vec<DevArg<'_>> = params
                .iter()
                .enumerate()
                .map(|(i, p)| match &bufs[i] {
                    Some(g) => DevArg::Buf(&g.view),
                    None if p.ends_with("f64") => DevArg::F64(scalars[i] as f64 * 0.25),
                    None => DevArg::I64(scalars[i]),
                })
                .collect();
            if drop_arg {
                args.pop();
            }
            let r = k.launch_builtin(&name, LaunchConfig::for_elements(1, 1).unwrap(), &args);
            let what =
                format!("case {case}: {name} on {kname}, sizes {sizes:?}, scalars {scalars:?}");
            for g in bufs.iter().flatten() {
                g.check(&what);
            }
            verdicts.push((verdict(&r), format!("{r:?}")));
        }
        // Ops that index with the contents of device buffers (dims, strides,
        // indices) are held to the same verdict too: both backends apply the one
        // content check (gpukit_core::abi::check_contents).
        assert!(
            verdicts.windows(2).all(|w| w[0].0 == w[1].0),
            "case {case}: {name}, sizes {sizes:?}, scalars {scalars:?}: {verdicts:?}"
        );
    }
}

// ---- Kit::load of mutated PTX, and random launch configurations ---------------------------

#[test]
fn fuzz_load_mutated_ptx() {
    run_batch("batch_load_mutated_ptx");
}

#[test]
#[ignore = "run in a child process by fuzz_load_mutated_ptx"]
fn batch_load_mutated_ptx() {
    // Mutations of the fill kernel and of the shipped modules' text: loading must give
    // a kernel or an error, never a panic or an abort; a loaded mutant must launch or
    // fail cleanly, inside its buffer, within the step limit.
    let emu = gpukit::open("ptx-emu").unwrap();
    let mut rng = Rng::new(seed() ^ 0x1d);
    let tokens = [
        "",
        " ",
        "\n",
        "{",
        "}",
        ";",
        ",",
        "[",
        "]",
        "%rd1",
        "%r9",
        ".u64",
        ".b8",
        "bra DONE",
        "bra.uni $L",
        "9999999999999",
        "-1",
        ".global .b8 g[268435456];",
        "ret;",
        ".entry",
        "ld.global.f32 %f1, [%rd1+1048576];",
        "st.global.u64 [0], %rd1;",
        "bar.sync 0;",
        "DONE:",
        "@%p1",
        ".shared .b8 s[1000000];",
    ];
    for case in 0..cases() {
        let base = if rng.below(4) == 0 {
            gpukit_cuda_module(&mut rng)
        } else {
            FILL_PTX.to_string()
        };
        let mut text = base.into_bytes();
        mutate(
            &mut rng,
            &mut text,
            4,
            12,
            &tokens,
            b" .%;{}[]0123456789abcxyz\n",
        );
        let ptx = String::from_utf8_lossy(&text).into_owned();
        let def = fill_def(ptx);
        if let Ok(_k) = emu.load(&def) {
            launch_mutant(
                &emu,
                &def,
                &mut rng,
                &format!("case {case}: a mutant launch"),
            );
        }
    }
}

/// Launches a loaded mutant of the fill kernel over an 8-element guarded buffer with a
/// random `n`: it may run or fail, but must stay inside its buffer (within the step
/// limit).
fn launch_mutant(emu: &Kit, def: &KernelDef, rng: &mut Rng, what: &str) {
    let g = Guarded::new(emu, DType::F32, 8, &[0]);
    let n = rng.below(12) as i64;
    let cfg = LaunchConfig::for_elements(16, 8).unwrap();
    let _ = emu.launch(
        def,
        cfg,
        &[DevArg::Buf(&g.view), DevArg::F32(1.0), DevArg::I64(n)],
    );
    g.check(what);
}

/// The text of one shipped PTX module (through a built-in of each family's name).
fn gpukit_cuda_module(rng: &mut Rng) -> String {
    let modules = gpukit_tests_modules();
    rng.pick(&modules).to_string()
}

fn gpukit_tests_modules() -> Vec<&'static str> {
    gpukit_cuda::ptx::MODULES.iter().map(|(_, t)| *t).collect()
}

#[test]
fn fuzz_launch_configs() {
    run_batch("batch_launch_configs");
}

#[test]
#[ignore = "run in a child process by fuzz_launch_configs"]
fn batch_launch_configs() {
    let kits = kits();
    let mut rng = Rng::new(seed() ^ 0xc0f);
    let extents = [
        0u32,
        1,
        2,
        3,
        32,
        64,
        65,
        1024,
        1025,
        65_535,
        65_536,
        u32::MAX,
    ];
    for case in 0..cases() {
        let mut e = || -> u32 {
            if rng.below(3) == 0 {
                *rng.pick(&extents)
            } else {
                1 + rng.below(8) as u32
            }
        };
        let grid = Dim3::new(e(), e(), e());
        let block = Dim3::new(e(), e(), e());
        let shared = *rng.pick(&[0usize, 1, 4096, 48 * 1024, 48 * 1024 + 1, usize::MAX]);
        let cfg = LaunchConfig {
            grid,
            block,
            shared_bytes: shared,
        };
        // Keep the accepted launches small: a valid huge grid is a long run, not a bug.
        if cfg.validate("k").is_ok() && grid.volume() * block.volume() > 1 << 16 {
            continue;
        }
        let n = rng.below(40) as i64;
        let mut verdicts = Vec::new();
        for (kname, k) in &kits {
            let g = Guarded::new(k, DType::F32, 32, &[0]);
            let def = fill_def(FILL_PTX);
            let r = k.launch(
                &def,
                cfg,
                &[DevArg::Buf(&g.view), DevArg::F32(2.0), DevArg::I64(n)],
            );
            g.check(&format!("case {case}: {cfg:?} on {kname}"));
            verdicts.push((verdict(&r), format!("{r:?}")));
        }
        assert!(
            verdicts.windows(2).all(|w| w[0].0 == w[1].0),
            "case {case}: {cfg:?}, n {n}: {verdicts:?}"
        );
    }
}

// ---- Kit::load of mutated CUDA C ------------------------------------------------------------

/// The fill kernel as CUDA C (the same entry, arguments and effect as [`FILL_PTX`]).
const FILL_CUDA: &str = r#"extern "C" __global__ void gk_fill(float* out, float v, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = v;
    }
}
"#;

#[test]
fn fuzz_load_mutated_cuda_c() {
    if !gpukit::cuda_compiler_available() {
        // Said past the capture, like every skip: a missing compiler is never a silent pass.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "fuzz: skipped: Kit::load of mutated CUDA C: NVRTC (libnvrtc.so.12) or the CUDA \
             headers not found (kernels-cuda/toolchain.sh installs them)"
        );
        return;
    }
    run_batch("batch_load_mutated_cuda_c");
}

#[test]
#[ignore = "run in a child process by fuzz_load_mutated_cuda_c"]
fn batch_load_mutated_cuda_c() {
    // Mutations of a CUDA C kernel, compiled by NVRTC and loaded on the emulator:
    // loading gives a kernel or an error (a compile error with NVRTC's log, a missing
    // entry), never a panic or an abort; a loaded mutant launches or fails cleanly,
    // inside its buffer, within the step limit.
    let emu = gpukit::open("ptx-emu").unwrap();
    let mut rng = Rng::new(seed() ^ 0xc0da);
    let tokens = [
        "",
        " ",
        "\n",
        "{",
        "}",
        ";",
        "(",
        ")",
        "*",
        "out",
        "n",
        "i",
        "+ 1048576",
        "- 1",
        "for (;;) {}",
        "while (i < n) { out[i] = v; }",
        "out[i + 64] = v;",
        "__shared__ float s[1 << 20];",
        "__syncthreads();",
        "return;",
        "#include <nope.h>\n",
        "#define out n\n",
        "__device__ float g[1 << 26];",
        "asm(\"trap;\");",
        "printf(\"x\");",
        "double",
        "__half",
        "extern \"C\"",
        "__global__",
        "18446744073709551615ull",
    ];
    let budget = cases();
    let (mut loaded, mut refused) = (0u64, 0u64);
    for case in 0..budget {
        let src = if rng.below(2) == 0 {
            // Whole statements that compile, spliced in at the start of a body line: the
            // mutants that load, so the launch path meets hostile kernels too.
            let statements = [
                "for (;;) {}",
                "while (i < n) { out[i] = v; }",
                "out[i + 64] = v;",
                "out[i - 1000000] = v;",
                "if (i == 0) { out[n] = v; }",
                "__syncthreads();",
                "if (threadIdx.x == 3) { __syncthreads(); }",
                "return;",
                "asm(\"trap;\");",
                "n = n * 2;",
                "i = i * 3;",
                "v = v / 0.0f;",
                "out += 1000000;",
                "out = (float*)0;",
                "__shared__ float s[64]; s[threadIdx.x] = v; out[i] = s[threadIdx.x ^ 1];",
                "__shared__ float t[16]; t[threadIdx.x + 16] = v;",
                "atomicAdd(out, v);",
            ];
            let mut lines: Vec<String> = FILL_CUDA.lines().map(str::to_string).collect();
            for _ in 0..1 + rng.below(2) {
                let at = 1 + rng.below(lines.len() as u64 - 2) as usize;
                lines.insert(at, format!("    {}", rng.pick(&statements)));
            }
            lines.join("\n")
        } else {
            let mut text = FILL_CUDA.as_bytes().to_vec();
            mutate(
                &mut rng,
                &mut text,
                3,
                10,
                &tokens,
                b" ;{}()[]*+-<>=0123456789invoutx\n\"\\",
            );
            String::from_utf8_lossy(&text).into_owned()
        };
        let def = KernelDef::new(FILL_NAME).cuda(src.clone());
        match emu.load(&def) {
            Ok(_k) => {
                let what = format!("case {case}: a CUDA C mutant's launch:\n{src}");
                launch_mutant(&emu, &def, &mut rng, &what);
                loaded += 1;
            }
            Err(e) => {
                refused += 1;
                // A refusal names what was wrong.
                let msg = e.to_string();
                assert!(!msg.is_empty(), "case {case}: an empty error");
            }
        }
    }
    eprintln!("mutated CUDA C: {loaded} loaded, {refused} refused");
    // The mutations must leave some kernels that compile, or the launch path is untested.
    assert!(
        budget < 20 || loaded > 0,
        "no mutant compiled in {budget} cases"
    );
}
