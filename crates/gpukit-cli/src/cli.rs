//! The command line, declared with clap: the subcommands, their options and the help
//! and completion texts generated from them.

use clap::{Args, Parser, Subcommand};

/// What `gpukit --help` says after the options.
const ENVIRONMENT: &str = "\
Environment:
  GPUKIT_DEVICE  the default device (as --device)
  GPUKIT_LOG     what to log on stderr, as an env_logger filter (`debug` says why a CUDA
                 device was not used); RUST_LOG is read when GPUKIT_LOG is unset
";

/// Run numeric kernels on a GPU or the CPU with the same bits: list the devices, check
/// every kernel against the reference, measure and profile them.
///
/// With no command, `gpukit` lists the devices, then runs the selftest.
#[derive(Debug, Parser)]
#[command(name = "gpukit", version, after_help = ENVIRONMENT)]
pub(crate) struct Cli {
    /// The options every command takes.
    #[command(flatten)]
    pub(crate) global: Global,
    /// The command; `None` runs `devices`, then `selftest`.
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// The options every command takes, before or after the command's name.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// The device: cpu, cuda, cuda:N or ptx-emu [default: $GPUKIT_DEVICE, else the best
    /// device]
    #[arg(long, global = true, value_name = "SPEC")]
    pub(crate) device: Option<String>,
    /// Machine-readable output on stdout: one JSON object
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Seed of the built-in random inputs
    #[arg(long, global = true, value_name = "N", default_value_t = 42)]
    pub(crate) seed: u64,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the devices this build can open, and the default device
    ///
    /// One row per device: spec, backend, name, compute capability, memory and threads;
    /// then why there is no CUDA device, if there is none, and the device a command
    /// without --device opens.
    Devices,
    /// Check every kernel and op against the reference, bit for bit
    ///
    /// Each op at each dtype on built-in random inputs (with NaN, infinities, -0.0 and
    /// subnormals) compared with the sequential reference oracle; any NaN equals any
    /// NaN. Exit code 1 on any mismatch.
    Selftest(CheckArgs),
    /// Throughput of the built-in kernels (GB/s, GFLOP/s)
    ///
    /// The user-kernel demos, the elementwise ops, sum, softmax, matmul, fused attention
    /// and the transfers; each the median of a few timed calls after a warm-up.
    Bench(BenchArgs),
    /// Run the selftest workload with the profiler on and print the report
    ///
    /// Calls, total and mean time and share per kernel; --trace also writes a Chrome
    /// trace-event file for Perfetto.
    Profile(ProfileArgs),
    /// Every shipped CUDA kernel under the PTX emulator, memcheck and racecheck on
    ///
    /// The selftest's checks on `ptx-emu` (whatever --device says), then one row per
    /// kernel of the ABI table with its launches and result. Exit code 1 on a fault, a
    /// mismatch or a kernel never launched.
    EmuCheck(CheckArgs),
    /// Run an ONNX model file and print (or save) its outputs
    ///
    /// Loads and checks MODEL (an unsupported op is an error naming the node), plans it
    /// on --device, reads each graph input from a .npy file, runs it and prints each
    /// output's name, type, dims and a summary. Exit code 1 with a one-line reason on
    /// any error.
    Onnx(OnnxArgs),
    /// Print a shell completion script on stdout
    ///
    /// For example `gpukit completions bash >
    /// ~/.local/share/bash-completion/completions/gpukit`, `gpukit completions zsh >
    /// ~/.zfunc/_gpukit` or `gpukit completions fish >
    /// ~/.config/fish/completions/gpukit.fish`.
    Completions {
        /// The shell the script is for
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Which self-checks to run.
#[derive(Debug, Args, Default)]
pub(crate) struct CheckArgs {
    /// Run only the checks whose label `OP DTYPE` contains TEXT (e.g. `softmax`, `f16`,
    /// `sum f32`); an error when none does
    #[arg(long, value_name = "TEXT")]
    pub(crate) filter: Option<String>,
}

/// Options of `onnx`.
#[derive(Debug, Args)]
pub(crate) struct OnnxArgs {
    /// The .onnx model file (external tensor data is read from beside it)
    #[arg(value_name = "MODEL.onnx")]
    pub(crate) model: std::path::PathBuf,
    /// A graph input: NAME=FILE.npy (the array's dtype must be the input's type; a
    /// bool input also takes integer 0/1 arrays); repeat for each input
    #[arg(long = "input", value_name = "NAME=FILE.npy")]
    pub(crate) inputs: Vec<String>,
    /// Write every graph output to DIR/<output name>.npy (numpy's format, the output's
    /// own dtype; characters other than letters, digits, `.`, `-` and `_` become `_`)
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<std::path::PathBuf>,
    /// Time each op type (the device synchronised after each node) and each kernel,
    /// and print both tables
    #[arg(long)]
    pub(crate) profile: bool,
}

/// Options of `bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Small sizes and one repetition: a smoke run in well under a second, not a
    /// measurement
    #[arg(long)]
    pub(crate) quick: bool,
}

/// Options of `profile`.
#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    /// Which self-checks make the workload.
    #[command(flatten)]
    pub(crate) checks: CheckArgs,
    /// Also write a Chrome trace-event file to FILE (open it at https://ui.perfetto.dev);
    /// with --counters, the estimated GPU timeline (on the first GPU of --gpu) with each
    /// launch's counters
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<String>,
    /// Run on the PTX emulator with its performance counters and print the per-kernel
    /// table: instructions, flops, DRAM bytes against the ideal, coalescing, bank
    /// conflicts, occupancy and the estimated time on `--gpu`
    #[arg(long, conflicts_with = "census")]
    pub(crate) counters: bool,
    /// Run the workload on the census kit (every call validated and planned, every
    /// launch recorded, no kernel run), list the kernels it needs, and predict its time
    /// on `--gpu` from one emulated launch per distinct launch
    #[arg(long, conflicts_with = "trace")]
    pub(crate) census: bool,
    /// With --census: also write every distinct built-in launch (PTX entry, geometry,
    /// parameters, argument bytes) to FILE as a replay file, which `tools/emu-rate`
    /// runs on the emulator to measure its speed
    #[arg(long, value_name = "FILE", requires = "census")]
    pub(crate) replay: Option<String>,
    /// The GPU of the estimate with --counters or --census: a100, h100, h200, l4,
    /// rtx4090; with --counters a comma-separated list gives one table per GPU
    #[arg(long, value_name = "GPU", default_value = "h200")]
    pub(crate) gpu: String,
    /// With --counters: instead of the selftest, every op family at realistic sizes
    /// (matmul 4096³, attention 16 heads × 1024 × 64, softmax 8192 × 4096, 64 Mi
    /// elementwise, ...) in every float dtype, each launch counted on a sample of its
    /// blocks (--sample) and extrapolated; --filter picks steps by their label
    #[arg(long, requires = "counters")]
    pub(crate) large: bool,
    /// With --large: blocks emulated per launch, spread evenly over the grid
    #[arg(long, value_name = "BLOCKS", default_value_t = 64, requires = "large",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) sample: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("gpukit").chain(args.iter().copied()))
    }

    #[test]
    fn the_declaration_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn global_options_go_before_or_after_the_command() {
        for args in [
            &["--json", "--device", "cpu", "--seed", "7", "selftest"][..],
            &["selftest", "--json", "--device", "cpu", "--seed", "7"],
            &["--device", "cpu", "selftest", "--seed=7", "--json"],
        ] {
            let c = parse(args).unwrap();
            assert!(c.global.json, "{args:?}");
            assert_eq!(c.global.device.as_deref(), Some("cpu"), "{args:?}");
            assert_eq!(c.global.seed, 7, "{args:?}");
            assert!(matches!(c.command, Some(Command::Selftest(_))), "{args:?}");
        }
    }

    #[test]
    fn defaults() {
        let c = parse(&[]).unwrap();
        assert!(c.command.is_none());
        assert_eq!(
            (c.global.device, c.global.json, c.global.seed),
            (None, false, 42)
        );
        let c = parse(&["profile", "--trace", "t.json", "--filter", "sum"]).unwrap();
        let Some(Command::Profile(p)) = c.command else {
            panic!("not profile")
        };
        assert_eq!(p.trace.as_deref(), Some("t.json"));
        assert_eq!(p.checks.filter.as_deref(), Some("sum"));
        let c = parse(&["bench", "--quick"]).unwrap();
        assert!(matches!(
            c.command,
            Some(Command::Bench(BenchArgs { quick: true }))
        ));
        let c = parse(&["emu-check"]).unwrap();
        assert!(matches!(
            c.command,
            Some(Command::EmuCheck(CheckArgs { filter: None }))
        ));
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        use clap::error::ErrorKind;
        let kind = |args: &[&str]| parse(args).unwrap_err().kind();
        assert_eq!(kind(&["--seed", "x"]), ErrorKind::ValueValidation);
        assert_eq!(kind(&["--seed"]), ErrorKind::InvalidValue);
        assert_eq!(kind(&["frobnicate"]), ErrorKind::InvalidSubcommand);
        assert_eq!(kind(&["devices", "--bogus"]), ErrorKind::UnknownArgument);
        assert_eq!(
            kind(&["devices", "--trace", "f"]),
            ErrorKind::UnknownArgument
        );
        assert_eq!(kind(&["completions", "tcsh"]), ErrorKind::InvalidValue);
        // --large is a form of --counters; --sample needs --large and one block.
        assert_eq!(
            kind(&["profile", "--large"]),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            kind(&["profile", "--counters", "--sample", "8"]),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            kind(&["profile", "--counters", "--large", "--sample", "0"]),
            ErrorKind::ValueValidation
        );
        let c = parse(&["profile", "--counters", "--large", "--sample", "8"]).unwrap();
        let Some(Command::Profile(p)) = c.command else {
            panic!("not profile")
        };
        assert!(p.counters && p.large && p.sample == 8);
        assert_eq!(
            parse(&["--help"]).unwrap_err().kind(),
            ErrorKind::DisplayHelp
        );
        assert_eq!(parse(&["--help"]).unwrap_err().exit_code(), 0);
        assert_eq!(parse(&["--seed", "x"]).unwrap_err().exit_code(), 2);
    }
}
