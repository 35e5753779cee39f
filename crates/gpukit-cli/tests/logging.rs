//! The log: env_logger on stderr, filtered by `GPUKIT_LOG`, else `RUST_LOG`.
//! `GPUKIT_LOG=debug` says why `open_best` did not use a GPU. Staged, as in
//! `cuda_fallback.rs`, on an empty library path so there is no CUDA driver (skipped on
//! a machine whose loader finds a real libcuda anyway).

use std::process::Command;

fn system_has_libcuda() -> bool {
    Command::new("sh")
        .args(["-c", "ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '"])
        .status()
        .is_ok_and(|s| s.success())
}

/// The stderr of `gpukit selftest --filter "transfer f32"` on the default device, with
/// the two log variables as given (`None`: unset).
fn stderr_with(gpukit_log: Option<&str>, rust_log: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpukit"));
    c.args(["selftest", "--filter", "transfer f32"])
        .env("LD_LIBRARY_PATH", "")
        .env_remove("GPUKIT_DEVICE")
        .env_remove("GPUKIT_LOG")
        .env_remove("RUST_LOG");
    if let Some(v) = gpukit_log {
        c.env("GPUKIT_LOG", v);
    }
    if let Some(v) = rust_log {
        c.env("RUST_LOG", v);
    }
    let o = c.output().expect("the gpukit binary runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("selftest on cpu"),
        "the log stays off stdout"
    );
    err
}

#[test]
fn gpukit_log_then_rust_log() {
    if system_has_libcuda() {
        eprintln!("skipped: this machine has a real libcuda.so.1");
        return;
    }
    // Why the CPU: "no CUDA device (...); falling back to the CPU", or "built without
    // the `cuda` feature; using the CPU".
    let said = |e: &str| e.contains("the CPU") && e.contains("DEBUG");
    assert!(!said(&stderr_with(None, None)));
    assert!(stderr_with(None, None).is_empty());
    assert!(said(&stderr_with(Some("debug"), None)));
    assert!(said(&stderr_with(Some("DEBUG"), Some("off"))));
    assert!(said(&stderr_with(None, Some("debug"))));
    assert!(said(&stderr_with(Some("gpukit=debug"), None)));
    // GPUKIT_LOG wins over RUST_LOG, either way.
    assert!(!said(&stderr_with(Some("warn"), Some("debug"))));
    assert!(!said(&stderr_with(Some("off"), Some("debug"))));
    // A blank GPUKIT_LOG counts as unset.
    assert!(said(&stderr_with(Some(" "), Some("debug"))));
}
