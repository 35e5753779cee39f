//! Run-time compilation of user kernels (CUDA C → PTX) with NVRTC, loaded at run time
//! (`libnvrtc.so.12`, found through the normal loader search: `LD_LIBRARY_PATH` for
//! the PyPI wheel's `nvidia/cuda_nvrtc/lib`).

use std::ffi::{CString, c_char};

use cudarc::nvrtc::{result, sys};
use gpukit_core::{Error, Result};

/// The options every gpukit kernel is compiled with, built-in (kernels-cuda/build.py,
/// which a test compares with this list) and user kernels alike: PTX for compute
/// capability 8.0 (JIT-compiled by the driver for newer GPUs), no contraction of
/// `a * b + c` into an FMA, IEEE division and square root, subnormals kept.
pub const NVRTC_OPTIONS: &[&str] = &[
    "--gpu-architecture=compute_80",
    "--fmad=false",
    "--prec-div=true",
    "--prec-sqrt=true",
    "--ftz=false",
    "-default-device",
    "--std=c++17",
];

/// Environment variable naming a folder of CUDA headers (e.g. the PyPI wheel's
/// `nvidia/cuda_runtime/include`, which has `cuda_fp16.h`) to pass to NVRTC as `-I`.
pub const INCLUDE_ENV: &str = "GPUKIT_CUDA_INCLUDE";

/// The folders passed to NVRTC as `-I` for `#include <cuda_fp16.h>` and friends, in
/// order: `$GPUKIT_CUDA_INCLUDE`; `$CUDA_HOME/include`, `$CUDA_PATH/include`,
/// `/usr/local/cuda/include`; and, for each `LD_LIBRARY_PATH` entry that is a PyPI
/// wheel's `nvidia/cuda_nvrtc/lib`, the sibling `nvidia/cuda_runtime/include`. Only
/// folders that hold `cuda_fp16.h` are kept (the variable's folder is always kept).
pub fn include_dirs() -> Vec<std::path::PathBuf> {
    use std::path::PathBuf;
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os(INCLUDE_ENV) {
        out.push(PathBuf::from(d));
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            candidates.push(PathBuf::from(d).join("include"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        for p in std::env::split_paths(&paths) {
            if p.ends_with("nvidia/cuda_nvrtc/lib")
                && let Some(nvidia) = p.parent().and_then(|q| q.parent())
            {
                candidates.push(nvidia.join("cuda_runtime/include"));
            }
        }
    }
    for c in candidates {
        if c.join("cuda_fp16.h").is_file() && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Whether NVRTC can be loaded.
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the candidate file names.
    unsafe { sys::is_culib_present() }
}

fn c_text(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles CUDA C `source` (kernel `name`, for error messages and as the program
/// name) to PTX text with [`NVRTC_OPTIONS`] plus `-I` for each of [`include_dirs`].
///
/// Errors: [`Error::Compile`] with NVRTC's log when the source does not compile, or
/// saying that NVRTC was not found; never panics when the library is missing.
pub fn compile(name: &str, source: &str) -> Result<String> {
    compile_with(name, source, &[])
}

/// [`compile`] with extra NVRTC options after the standard ones (`-I<dir>` for the
/// folders a source includes from, `-D...`).
///
/// Errors: as [`compile`].
pub fn compile_with(name: &str, source: &str, extra: &[String]) -> Result<String> {
    let fail = |log: String| Error::Compile {
        name: name.to_string(),
        log,
    };
    if !available() {
        return Err(fail(
            "NVRTC (libnvrtc.so.12) not found on the library path: install the \
             nvidia-cuda-nvrtc-cu12 wheel or a CUDA toolkit and add its lib folder to \
             LD_LIBRARY_PATH"
                .into(),
        ));
    }
    let src = CString::new(source).map_err(|_| fail("the source contains a NUL byte".into()))?;
    let prog_name = CString::new(format!("{}.cu", name.replace('\0', "_")))
        .map_err(|_| fail("the kernel name contains a NUL byte".into()))?;
    let mut options: Vec<String> = NVRTC_OPTIONS.iter().map(|s| s.to_string()).collect();
    for dir in include_dirs() {
        options.push(format!("-I{}", dir.to_string_lossy()));
    }
    options.extend(extra.iter().cloned());
    let prog = result::create_program(&src, Some(prog_name.as_c_str()))
        .map_err(|e| fail(format!("nvrtcCreateProgram failed: {e:?}")))?;
    // SAFETY: `prog` is a live program from create_program; it is destroyed exactly
    // once below whatever the outcome; the options contain no NUL bytes (paths from
    // the environment cannot, and the fixed ones do not).
    unsafe {
        let compiled = result::compile_program(prog, &options);
        let log = result::get_program_log(prog)
            .map(|l| c_text(&l))
            .unwrap_or_default();
        let ptx = match compiled {
            Ok(()) => result::get_ptx(prog)
                .map(|p| c_text(&p))
                .map_err(|e| fail(format!("nvrtcGetPTX failed: {e:?}"))),
            Err(e) => Err(fail(if log.trim().is_empty() {
                format!("{e:?}")
            } else {
                log
            })),
        };
        let _ = result::destroy_program(prog);
        ptx
    }
}

/// NVRTC's version `(major, minor)`, if the library loads.
pub fn version() -> Option<(i32, i32)> {
    if !available() {
        return None;
    }
    let (mut a, mut b) = (0, 0);
    // SAFETY: the library is present; writes two ints through valid pointers.
    let r = unsafe { sys::nvrtcVersion(&mut a, &mut b) };
    (r == sys::nvrtcResult::NVRTC_SUCCESS).then_some((a, b))
}

/// A `CStr` view of PTX text for `cuModuleLoadData` (which needs a NUL terminator).
pub(crate) fn ptx_cstring(ptx: &str) -> Result<CString> {
    CString::new(ptx).map_err(|_| Error::Compile {
        name: "ptx".into(),
        log: "the PTX text contains a NUL byte".into(),
    })
}
