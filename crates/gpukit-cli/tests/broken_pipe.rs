//! A closed pipe on stdout ends the tool quietly, never with a panic, for every command:
//! `gpukit … | head -n 1` exits 0 (the pipeline's status) with the command's first line,
//! and a reader that is gone before the first write makes the tool exit with status 141
//! (128 + SIGPIPE, as a Unix tool killed by SIGPIPE), or 0 where clap itself prints
//! (`--help`, `--version`).

use std::process::{Command, Stdio};

/// Every command line of the tool, with small options for the slow ones (the emulator
/// run on one op's checks, the bench at its smoke sizes) so the test stays quick.
fn command_lines(trace: &str) -> Vec<Vec<String>> {
    let lines: Vec<Vec<&str>> = vec![
        vec!["--device", "cpu"],
        vec!["--device", "cpu", "--json"],
        vec!["devices"],
        vec!["devices", "--json"],
        vec!["selftest", "--device", "cpu"],
        vec!["selftest", "--device", "cpu", "--json", "--filter", "sum"],
        vec![
            "selftest", "--device", "cpu", "--filter", "f16", "--seed", "3",
        ],
        vec!["bench", "--quick", "--device", "cpu"],
        vec!["bench", "--quick", "--device", "cpu", "--json"],
        vec!["profile", "--device", "cpu"],
        vec!["profile", "--device", "cpu", "--json", "--filter", "f64"],
        vec![
            "profile", "--device", "cpu", "--filter", "sum", "--trace", trace,
        ],
        vec!["emu-check", "--filter", "sum f32"],
        vec!["emu-check", "--filter", "sum f32", "--json"],
        vec!["completions", "bash"],
        vec!["completions", "zsh"],
        vec!["completions", "fish"],
        vec!["completions", "elvish"],
        vec!["completions", "powershell"],
        vec!["help"],
        vec!["help", "emu-check"],
        vec!["--help"],
        vec!["-h"],
        vec!["--version"],
        vec!["devices", "--help"],
        vec!["selftest", "--help"],
        vec!["bench", "--help"],
        vec!["profile", "--help"],
        vec!["emu-check", "--help"],
        vec!["completions", "--help"],
    ];
    lines
        .into_iter()
        .map(|l| l.into_iter().map(String::from).collect())
        .collect()
}

/// Whether clap prints this command line's output itself (help, version) rather than
/// the tool's `out!`.
fn printed_by_clap(args: &[String]) -> bool {
    args.iter()
        .any(|a| ["help", "--help", "-h", "--version"].contains(&a.as_str()))
}

fn gpukit() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpukit"));
    c.env_remove("GPUKIT_DEVICE").env_remove("GPUKIT_LOG");
    c
}

fn trace_path() -> String {
    std::env::temp_dir()
        .join(format!(
            "gpukit-broken-pipe-trace-{}.json",
            std::process::id()
        ))
        .to_string_lossy()
        .into_owned()
}

/// Runs `gpukit args` with stdout a pipe whose reading end is closed before the tool
/// starts, so its first write meets the closed pipe.
fn with_closed_stdout(args: &[String]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = gpukit()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("the gpukit binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn closed_pipe_exits_quietly() {
    let trace = trace_path();
    for args in command_lines(&trace) {
        let (code, stderr) = with_closed_stdout(&args);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "gpukit {args:?}: stderr {stderr:?}"
        );
        let want = if printed_by_clap(&args) { 0 } else { 141 };
        assert_eq!(code, Some(want), "gpukit {args:?}: stderr {stderr:?}");
    }
    let _ = std::fs::remove_file(trace);
}

#[test]
fn every_command_piped_into_head_exits_0() {
    let trace = trace_path() + ".head";
    for args in command_lines(&trace) {
        // The whole output, for the line `head` should pass on.
        let full = gpukit().args(&args).output().expect("gpukit runs");
        assert!(
            full.status.success(),
            "gpukit {args:?} on its own: {:?}\n{}",
            full.status,
            String::from_utf8_lossy(&full.stderr)
        );
        let full = String::from_utf8(full.stdout).expect("UTF-8 output");
        let first = full.lines().next().expect("some output");

        let piped = Command::new("sh")
            .arg("-c")
            .arg(r#"exe="$1"; shift; "$exe" "$@" | head -n 1"#)
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_gpukit"))
            .args(&args)
            .env_remove("GPUKIT_DEVICE")
            .env_remove("GPUKIT_LOG")
            .output()
            .expect("sh runs");
        let out = String::from_utf8_lossy(&piped.stdout);
        let err = String::from_utf8_lossy(&piped.stderr);
        assert_eq!(
            piped.status.code(),
            Some(0),
            "gpukit {args:?} | head -n 1: stderr {err:?}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "gpukit {args:?} | head -n 1: stderr {err:?}"
        );
        assert_eq!(
            out.lines().count(),
            1,
            "gpukit {args:?} | head -n 1: {out:?}"
        );
        let line = out.trim_end_matches('\n');
        if args.iter().any(|a| a == "--json") {
            // One JSON object on one line: `head` passes it whole, and it parses.
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("gpukit {args:?} | head -n 1: {e}: {line}"));
            assert!(v.is_object(), "{v}");
            assert_eq!(full.lines().count(), 1, "gpukit {args:?}: {full}");
        } else {
            assert_eq!(line, first, "gpukit {args:?} | head -n 1");
        }
    }
    let _ = std::fs::remove_file(trace);
}
