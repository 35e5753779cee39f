//! Risky tests in a child process: a case that could abort, exhaust memory or hang
//! (a regression of issue 15) runs as an `#[ignore]`d test of the same binary, re-run
//! by [`run_case`] in a child under an address-space limit (`ulimit -v`) and a wall
//! clock limit, so a regression fails one test instead of taking the runner down.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Default address-space limit of a child: 2 GiB (the tests' data are a few MiB; the
/// rest is the binary, thread stacks and allocator arenas).
pub const CHILD_MEMORY_BYTES: u64 = 2 << 30;

/// A memory limit at or above this sets no address-space limit (the time limit stays).
pub const NO_MEMORY_LIMIT: u64 = 1 << 60;

/// How a child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildEnd {
    /// Exited with this status (0: the case passed).
    Exited(i32),
    /// Killed by this signal (SIGABRT = 6 for an abort, SIGKILL = 9).
    Signal(i32),
    /// Still running at the time limit; killed.
    TimedOut,
}

/// Runs the ignored test `case` of the current test binary in a child process with
/// `mem_bytes` of address space and `limit` of wall time; returns how it ended and its
/// combined output. `envs` are set in the child.
///
/// Panics if the child cannot be started (a broken test environment, not a verdict).
pub fn run_case(
    case: &str,
    mem_bytes: u64,
    limit: Duration,
    envs: &[(&str, String)],
) -> (ChildEnd, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    // `ulimit -v` then exec: the limit applies to the test binary itself. A limit of
    // `NO_MEMORY_LIMIT` or more sets none (a case whose subject is the memory check).
    let limit_cmd = if mem_bytes >= NO_MEMORY_LIMIT {
        String::new()
    } else {
        format!("ulimit -v {} && ", mem_bytes / 1024)
    };
    let script =
        format!("{limit_cmd}exec \"$0\" --ignored --exact {case} --nocapture --test-threads=1");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(&exe)
        // Few malloc arenas: their reservations count against the address-space limit.
        .env("MALLOC_ARENA_MAX", "2")
        .env("RAYON_NUM_THREADS", "2")
        // A caught kernel panic (a CPU kernel fault) must not spend the time limit
        // printing backtraces.
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn the child test process");
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let mut e = String::new();
        let _ = err.read_to_string(&mut e);
        s + &e
    });
    let start = Instant::now();
    let end = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                use std::os::unix::process::ExitStatusExt;
                break match (status.code(), status.signal()) {
                    (Some(c), _) => ChildEnd::Exited(c),
                    (None, Some(s)) => ChildEnd::Signal(s),
                    _ => ChildEnd::Exited(-1),
                };
            }
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break ChildEnd::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for the child: {e}"),
        }
    };
    let text = reader.join().unwrap_or_default();
    (end, text)
}

/// Runs `case` as [`run_case`] does and panics, with the child's output, unless it
/// passed (exit status 0) and ran exactly one test.
pub fn assert_case_passes(case: &str, mem_bytes: u64, limit: Duration) {
    assert_case_passes_with(case, mem_bytes, limit, &[]);
}

/// [`assert_case_passes`] with environment variables set in the child.
pub fn assert_case_passes_with(
    case: &str,
    mem_bytes: u64,
    limit: Duration,
    envs: &[(&str, String)],
) {
    let (end, text) = run_case(case, mem_bytes, limit, envs);
    assert_eq!(
        end,
        ChildEnd::Exited(0),
        "child case `{case}` did not pass (limits: {mem_bytes} bytes, {limit:?}):\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "child case `{case}` ran no test:\n{text}"
    );
}
