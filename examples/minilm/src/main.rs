//! `minilm`: sentence embeddings and their cosine similarity matrix with
//! paraphrase-MiniLM-L3-v2 on gpukit's tensor API.
//!
//! ```text
//! tools/model/fetch.sh      # once: the model into target/model
//! cargo run --release -p gpukit-example-minilm -- [--device cpu|cuda|ptx-emu]
//!     [--model-dir DIR] [--repeat N] [--profile] [SENTENCE ...]
//! ```
//!
//! Without sentences it embeds the four of the reference arrays. `--repeat N` runs the
//! forward N more times and prints the best time (the tokenizer and the upload of the
//! weights are not timed; reading the embeddings back is). `--profile` then prints the
//! kernels of those N forwards ranked by device time.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use gpukit_example_minilm::{
    DEFAULT_SENTENCES, MiniLm, Tokenizer, cosine_matrix, default_model_dir, tokenizer_path,
    weights_path,
};

struct Args {
    device: String,
    dir: PathBuf,
    repeat: usize,
    profile: bool,
    sentences: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        device: "cpu".into(),
        dir: default_model_dir(),
        repeat: 0,
        profile: false,
        sentences: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(s) = it.next() {
        let mut value = |flag: &str| it.next().ok_or(format!("{flag} needs a value"));
        match s.as_str() {
            "--device" => a.device = value("--device")?,
            "--model-dir" => a.dir = PathBuf::from(value("--model-dir")?),
            "--repeat" => {
                a.repeat = value("--repeat")?
                    .parse()
                    .map_err(|_| "--repeat needs a whole number".to_string())?
            }
            "--profile" => a.profile = true,
            "-h" | "--help" => {
                return Err(
                    "usage: minilm [--device cpu|cuda|ptx-emu] [--model-dir DIR] \
                            [--repeat N] [--profile] [SENTENCE ...]"
                        .into(),
                );
            }
            f if f.starts_with("--") => return Err(format!("unknown flag {f}")),
            _ => a.sentences.push(s.clone()),
        }
    }
    Ok(a)
}

fn run(a: &Args) -> gpukit::Result<()> {
    let weights = weights_path(&a.dir);
    if !weights.exists() {
        return Err(gpukit::Error::Io(format!(
            "{} is missing: run tools/model/fetch.sh first",
            weights.display()
        )));
    }
    let kit = gpukit::open(&a.device)?;
    let tok = Tokenizer::from_file(&tokenizer_path(&a.dir))?;
    let sentences: Vec<&str> = if a.sentences.is_empty() {
        DEFAULT_SENTENCES.to_vec()
    } else {
        a.sentences.iter().map(String::as_str).collect()
    };
    let batch = tok.encode(&sentences)?;
    let model = MiniLm::load(&kit, &weights)?;
    let t0 = Instant::now();
    let out = model.forward(&batch)?;
    let emb = out.embeddings.to_vec2::<f32>()?;
    let first = t0.elapsed();
    println!(
        "device {}; {} sentences x {} tokens",
        a.device, batch.batch, batch.seq
    );
    for (s, e) in sentences.iter().zip(&emb) {
        let head: Vec<String> = e.iter().take(6).map(|v| format!("{v:+.5}")).collect();
        println!("  [{} ...]  {s}", head.join(", "));
    }
    println!("cosine similarity:");
    for row in cosine_matrix(&out.embeddings)?.to_vec2::<f32>()? {
        let r: Vec<String> = row.iter().map(|v| format!("{v:7.4}")).collect();
        println!("  {}", r.join(" "));
    }
    let mut best = first;
    kit.set_profiling(a.profile);
    for _ in 0..a.repeat {
        let t = Instant::now();
        let o = model.forward(&batch)?;
        o.embeddings.to_vec::<f32>()?;
        best = best.min(t.elapsed());
    }
    println!(
        "forward: {:.3} ms (first), {:.3} ms (best of {})",
        first.as_secs_f64() * 1e3,
        best.as_secs_f64() * 1e3,
        a.repeat + 1
    );
    if a.profile {
        let r = kit.profile_report();
        println!("kernels over the {} repeats (device time):", a.repeat);
        for e in r.entries.iter().take(20) {
            println!(
                "  {:<28} {:>6} calls {:>10.3} ms {:>5.1}%",
                e.name,
                e.calls,
                e.total.as_secs_f64() * 1e3,
                e.share * 100.0
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("minilm: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("minilm: {e}");
            ExitCode::FAILURE
        }
    }
}
