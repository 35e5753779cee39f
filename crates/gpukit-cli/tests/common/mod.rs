//! Running the built `gpukit` binary in the command's tests.

use std::process::Command;

/// Runs `gpukit args` (no `GPUKIT_DEVICE`, no log filter) and returns its status,
/// stdout and stderr.
pub(crate) fn gpukit(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gpukit"))
        .args(args)
        .env_remove("GPUKIT_DEVICE")
        .env_remove("GPUKIT_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("the gpukit binary runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8(o.stdout).expect("UTF-8 stdout"),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}
