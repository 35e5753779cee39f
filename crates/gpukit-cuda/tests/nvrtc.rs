//! NVRTC from Rust (no GPU needed, only libnvrtc.so.12 on the library path, as
//! `.ci/run` arranges from the pinned wheel): user kernels compile with the build's
//! options, a compile error returns NVRTC's log, and compiling the kernels-cuda sources
//! from Rust gives exactly the committed PTX (Python's ctypes and Rust agree).
//! Without NVRTC each test says "skipped" and returns.

use gpukit_cuda::{nvrtc, ptx};

fn nvrtc_or_skip() -> bool {
    if nvrtc::available() {
        true
    } else {
        eprintln!("skipped: NVRTC (libnvrtc.so.12) is not on the library path");
        false
    }
}

#[test]
fn a_user_kernel_compiles_to_ptx_with_its_entry() {
    if !nvrtc_or_skip() {
        return;
    }
    let src = r#"extern "C" __global__ void saxpy(float a, const float* x, float* y, long long n) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }"#;
    let text = nvrtc::compile("saxpy", src).unwrap();
    let e = ptx::entries(&text);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].name, "saxpy");
    assert_eq!(e[0].params, ["f32", "u64", "u64", "u64"]);
    // --fmad=false: the product and the sum stay two roundings.
    assert!(
        text.contains("mul.rn.f32") && text.contains("add.rn.f32"),
        "{text}"
    );
    assert!(!text.contains("fma.rn.f32"), "{text}");
    assert_eq!(ptx::isa_version(&text), Some((8, 8)));
    let (a, b) = nvrtc::version().unwrap();
    assert_eq!((a, b), (12, 9));
}

#[test]
fn a_compile_error_returns_the_log() {
    if !nvrtc_or_skip() {
        return;
    }
    let err = nvrtc::compile(
        "broken",
        "extern \"C\" __global__ void broken() { undefined_thing(); }",
    )
    .unwrap_err();
    match err {
        gpukit_core::Error::Compile { name, log } => {
            assert_eq!(name, "broken");
            assert!(log.contains("undefined_thing"), "{log}");
            assert!(log.contains("error"), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn rust_nvrtc_reproduces_the_committed_ptx() {
    if !nvrtc_or_skip() {
        return;
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels-cuda");
    let Some(include) = std::env::var_os(nvrtc::INCLUDE_ENV) else {
        eprintln!(
            "skipped: {} (the fp16/bf16 headers) is not set",
            nvrtc::INCLUDE_ENV
        );
        return;
    };
    let _ = include;
    for (family, committed) in ptx::MODULES {
        let Ok(src) = std::fs::read_to_string(format!("{dir}/{family}.cu")) else {
            panic!("kernels-cuda/{family}.cu is missing");
        };
        let built = nvrtc::compile_with(family, &src, &[format!("-I{dir}")])
            .unwrap_or_else(|e| panic!("{family}: {e}"));
        assert!(
            built == *committed,
            "{family}: Rust's NVRTC gives different PTX than kernels-cuda/ptx/{family}.ptx"
        );
    }
}
