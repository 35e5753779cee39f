//! The CUDA fallback paths, on machines without a GPU: with a fake driver that reports
//! no device, and with no driver library at all, `gpukit devices` says "no CUDA
//! device", the default device is the CPU, the selftest runs there, and nothing panics.
//! Each case runs the real binary in a child process, because the library search path
//! is read when a process starts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gpukit(ld_path: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpukit"))
        .args(args)
        .env("LD_LIBRARY_PATH", ld_path)
        .env_remove("GPUKIT_DEVICE")
        .env("GPUKIT_LOG", "debug")
        .output()
        .expect("the gpukit binary starts")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Builds tests/fake-libcuda into a fresh folder; `None` (reported) without gcc.
fn fake_driver() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("gpukit-fake-libcuda-{}", std::process::id()));
    let st = Command::new("bash")
        .arg(root.join("tests/fake-libcuda/build.sh"))
        .arg(&out)
        .status();
    match st {
        Ok(s) if s.success() => Some(out),
        other => {
            eprintln!("skipped: the fake libcuda could not be built (gcc missing?): {other:?}");
            None
        }
    }
}

/// Whether the system loader finds a real libcuda without any LD_LIBRARY_PATH (a GPU
/// machine): then "no driver library" cannot be staged.
fn system_has_libcuda() -> bool {
    Command::new("sh")
        .args(["-c", "ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '"])
        .status()
        .is_ok_and(|s| s.success())
}

fn assert_cpu_fallback(ld_path: &str, why: &str) {
    let o = gpukit(ld_path, &["devices"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "gpukit devices failed:\n{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.contains("no CUDA device"), "{out}");
    assert!(out.contains(why), "expected `{why}` in:\n{out}");
    assert!(out.contains("default device: cpu"), "{out}");
    assert!(!out.contains("cuda:0"), "{out}");

    let o = gpukit(ld_path, &["devices", "--json"]);
    let (out, _) = text(&o);
    let v: serde_json::Value = serde_json::from_str(&out).expect("devices --json is JSON");
    assert!(v["cuda_unavailable"].as_str().unwrap().contains(why), "{v}");
    let devs = v["devices"].as_array().unwrap();
    assert!(devs.iter().all(|d| d["backend"] != "cuda"), "{v}");
    assert!(devs.iter().any(|d| d["backend"] == "cpu"), "{v}");

    // open_best falls back and says why in the debug log; explicit cuda is an error.
    let o = gpukit(ld_path, &["selftest", "--json"]);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "selftest on the fallback failed:\n{err}"
    );
    assert!(err.contains("falling back to the CPU"), "{err}");
    assert!(out.contains("\"cpu\""), "{}", &out[..out.len().min(400)]);
    let o = gpukit(ld_path, &["selftest", "--device", "cuda:0"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cuda:0 unavailable") && err.contains(why),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn fake_driver_without_a_device_falls_back_to_the_cpu() {
    let Some(dir) = fake_driver() else { return };
    assert_cpu_fallback(dir.to_str().unwrap(), "the driver reports no device");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn no_driver_library_falls_back_to_the_cpu() {
    if system_has_libcuda() {
        eprintln!("skipped: this machine has a real libcuda.so.1");
        return;
    }
    assert_cpu_fallback("", "no CUDA driver library");
}
