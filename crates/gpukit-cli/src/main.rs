//! The `gpukit` command: `devices`, `selftest`, `bench`, `profile`, `emu-check`, `onnx`
//! and `completions`. With no command it runs `devices` then `selftest` on built-in random
//! inputs. `gpukit --help` and `gpukit <command> --help` say the rest.

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use gpukit::prelude::*;

/// Writes to stdout like `print!`; when the reader has gone (a closed pipe: `gpukit
/// devices | head -n 1`), exits quietly with status 141 (128 + SIGPIPE), as a Unix tool
/// killed by SIGPIPE does, instead of panicking. Any other write error is reported on
/// stderr with status 1.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::emit(format_args!($($arg)*), false)
    };
}

/// [`out!`] with a newline, like `println!`.
macro_rules! outln {
    () => {
        $crate::emit(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::emit(format_args!($($arg)*), true)
    };
}

mod bench;
mod checks;
mod cli;
#[cfg(feature = "ptx-emu")]
mod counters;
mod devices;
#[cfg(feature = "ptx-emu")]
mod large;
mod onnx;
mod progress;

use cli::{Cli, Command, Global};

/// The body of [`out!`] and [`outln!`].
fn emit(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut stdout = std::io::stdout().lock();
    let res = stdout
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                stdout.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| stdout.flush());
    if let Err(e) = res {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        let _ = writeln!(std::io::stderr(), "gpukit: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// Opens `--device`, else what [`gpukit::open_best`] chooses.
fn open(g: &Global) -> gpukit::Result<Kit> {
    match &g.device {
        Some(spec) => gpukit::open(spec),
        None => gpukit::open_best(),
    }
}

/// The log filter: `$GPUKIT_LOG` when set and not blank, else `$RUST_LOG` likewise.
fn log_filter(gpukit_log: Option<String>, rust_log: Option<String>) -> Option<String> {
    let set = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    set(gpukit_log).or_else(|| set(rust_log))
}

/// Installs env_logger on stderr: warnings and errors by default, or what
/// [`log_filter`] says (`GPUKIT_LOG=debug`: why `open_best` did not use a GPU).
fn init_logging() {
    let mut b = env_logger::Builder::new();
    b.filter_level(log::LevelFilter::Warn)
        .format_timestamp(None)
        .target(env_logger::Target::Stderr);
    if let Some(f) = log_filter(
        std::env::var("GPUKIT_LOG").ok(),
        std::env::var("RUST_LOG").ok(),
    ) {
        b.parse_filters(&f);
    }
    // Fails only when a logger is already installed, and none is before main.
    let _ = b.try_init();
}

/// `gpukit completions SHELL`: the script, built in memory so that a closed pipe goes
/// through [`out!`] (clap_complete's writer would panic on it).
fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "gpukit", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    ExitCode::SUCCESS
}

/// Opens the device and runs `f` on it; a device that does not open is status 2, an
/// error from `f` status 1, each said on stderr.
fn with_kit(g: &Global, f: impl FnOnce(&Kit) -> gpukit::Result<ExitCode>) -> ExitCode {
    let kit = match open(g) {
        Ok(kit) => kit,
        Err(e) => {
            eprintln!("gpukit: {e}");
            return ExitCode::from(2);
        }
    };
    f(&kit).unwrap_or_else(|e| {
        eprintln!("gpukit: {e}");
        ExitCode::FAILURE
    })
}

/// Runs the command line `cli`.
fn run(cli: Cli) -> ExitCode {
    let g = &cli.global;
    match &cli.command {
        Some(Command::Devices) => devices::devices(g),
        Some(Command::EmuCheck(c)) => checks::emu_check(g, c),
        Some(Command::Completions { shell }) => completions(*shell),
        Some(Command::Onnx(a)) => onnx::onnx(g, a),
        Some(Command::Selftest(c)) => with_kit(g, |kit| Ok(checks::selftest(g, c, kit))),
        Some(Command::Bench(b)) => with_kit(g, |kit| bench::bench(g, b, kit)),
        #[cfg(feature = "ptx-emu")]
        Some(Command::Profile(p)) if p.counters => counters::profile_counters(g, p),
        #[cfg(feature = "ptx-emu")]
        Some(Command::Profile(p)) if p.census => counters::profile_census(g, p),
        #[cfg(not(feature = "ptx-emu"))]
        Some(Command::Profile(p)) if p.counters || p.census => {
            eprintln!("gpukit: --counters and --census need the PTX emulator (feature `ptx-emu`)");
            ExitCode::from(2)
        }
        Some(Command::Profile(p)) => with_kit(g, |kit| checks::profile(g, p, kit)),
        None => with_kit(g, |kit| {
            if !g.json {
                devices::devices(g);
                outln!();
            }
            Ok(checks::selftest(g, &cli::CheckArgs::default(), kit))
        }),
    }
}

fn main() -> ExitCode {
    init_logging();
    // Usage errors exit with status 2, `--help` and `--version` with 0; clap prints
    // them (stdout for help, stderr for errors) and swallows a closed pipe.
    run(Cli::parse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpukit_log_comes_before_rust_log() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(log_filter(s("debug"), s("warn")), s("debug"));
        assert_eq!(log_filter(None, s("info")), s("info"));
        assert_eq!(log_filter(s("  "), s("info")), s("info"));
        assert_eq!(log_filter(None, s("")), None);
        assert_eq!(log_filter(None, None), None);
    }
}
