//! Records the MiniLM forward of the default sentences on the census kit (every launch
//! validated and recorded, none run) and writes its distinct launches as a replay file:
//! a whole-model workload for the emulator's speed benchmark (`tools/emu-rate/run.sh`).
//!
//! ```text
//! tools/model/fetch.sh
//! cargo run --release -p gpukit-example-minilm --example census_replay -- OUT [MODEL_DIR]
//! ```
//!
//! Nothing runs on the census kit, so every intermediate tensor the replayed launches
//! read is zeros: the launches, their shapes and their instruction counts are the
//! model's; the values are not.

use std::path::PathBuf;
use std::process::ExitCode;

use gpukit::Kit;
use gpukit::emu::EmuDevice;
use gpukit_example_minilm::{
    DEFAULT_SENTENCES, MiniLm, Tokenizer, default_model_dir, tokenizer_path, weights_path,
};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: census_replay OUT [MODEL_DIR]");
        return ExitCode::from(2);
    };
    let dir = args.get(1).map_or_else(default_model_dir, PathBuf::from);
    let dev = EmuDevice::census();
    let Some(census) = dev.census_records() else {
        eprintln!("census_replay: the census device keeps no records");
        return ExitCode::FAILURE;
    };
    let kit = Kit::from_device(Box::new(dev));
    let run = || -> gpukit::Result<()> {
        let tok = Tokenizer::from_file(&tokenizer_path(&dir))?;
        let batch = tok.encode(&DEFAULT_SENTENCES)?;
        let model = MiniLm::load(&kit, &weights_path(&dir))?;
        model.forward(&batch)?;
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!(
            "census_replay: {e} (model in {}: run tools/model/fetch.sh)",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    let written = std::fs::File::create(out)
        .and_then(|f| census.write_replay(&mut std::io::BufWriter::new(f)));
    match written {
        Ok((n, _)) => {
            eprintln!(
                "census_replay: {} launches ({n} distinct) of the MiniLM forward written to {out}",
                census.launches()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("census_replay: writing {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
