//! A closed pipe on stdout (`gpukit devices | head -n 1`, `gpukit selftest | true`)
//! ends the tool quietly with status 141 (128 + SIGPIPE, as a Unix tool killed by
//! SIGPIPE), never with a panic.

use std::process::{Command, Stdio};

/// Runs `gpukit args` with stdout a pipe whose reading end is closed at once.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpukit"))
        .args(args)
        .env_remove("GPUKIT_DEVICE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gpukit binary starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("gpukit ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn closed_pipe_exits_quietly() {
    for args in [&["devices"][..], &["selftest", "--device", "cpu"]] {
        let (code, stderr) = with_closed_stdout(args);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "gpukit {args:?}: stderr {stderr:?}"
        );
        assert_eq!(code, Some(141), "gpukit {args:?}: stderr {stderr:?}");
    }
}
