//! paraphrase-MiniLM-L3-v2 on the tensor API against onnxruntime's outputs
//! (`reference/reference.npz`, made by `tools/model/make_reference.py`), and cpu against
//! ptx-emu bit for bit, for both forwards (the fused one and the graph's). Needs the model that `tools/model/fetch.sh` puts in
//! target/model (or `$GPUKIT_MODEL_DIR`); without it each test prints a SKIP line and
//! passes (CI fetches the model first, so it runs there).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{bits, model_dir};

use gpukit::{Kit, Tensor};
use gpukit_example_minilm::{
    Batch, DEFAULT_SENTENCES, HIDDEN, MiniLm, Output, Tokenizer, cosine_matrix, tokenizer_path,
    weights_path,
};

fn reference(kit: &Kit) -> BTreeMap<String, Tensor> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("reference/reference.npz");
    gpukit::io::read_npz(kit, p).unwrap()
}

fn f32s(m: &BTreeMap<String, Tensor>, k: &str) -> Vec<f32> {
    m[k].to_vec::<f32>().unwrap()
}

fn max_abs(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
        .fold(0.0, f64::max)
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The two forwards: the fused one a model author writes, and the graph's node by node.
const FORWARDS: [&str; 2] = ["forward", "forward_graph"];

fn run(dir: &Path, device: &str, batch: &Batch, forward: &str) -> Output {
    let kit = gpukit::open(device).unwrap();
    let model = MiniLm::load(&kit, &weights_path(dir)).unwrap();
    match forward {
        "forward" => model.forward(batch).unwrap(),
        _ => model.forward_graph(batch).unwrap(),
    }
}

#[test]
fn tokenizer_matches_the_reference_wordpiece() {
    let Some(dir) = model_dir("tokenizer_matches_the_reference_wordpiece") else {
        return;
    };
    let kit = gpukit::cpu().unwrap();
    let r = reference(&kit);
    let b = Tokenizer::from_file(&tokenizer_path(&dir))
        .unwrap()
        .encode(&DEFAULT_SENTENCES)
        .unwrap();
    assert_eq!(r["input_ids"].dims(), &[b.batch, b.seq]);
    assert_eq!(b.ids, r["input_ids"].to_vec::<i64>().unwrap());
    assert_eq!(b.mask, r["attention_mask"].to_vec::<i64>().unwrap());
    // The batch is padded: the attention mask matters.
    assert!(b.mask.contains(&0));
}

#[test]
fn cpu_matches_onnxruntime() {
    let Some(dir) = model_dir("cpu_matches_onnxruntime") else {
        return;
    };
    let kit = gpukit::cpu().unwrap();
    let r = reference(&kit);
    let b = Tokenizer::from_file(&tokenizer_path(&dir))
        .unwrap()
        .encode(&DEFAULT_SENTENCES)
        .unwrap();
    for f in FORWARDS {
        check_against_reference(&run(&dir, "cpu", &b, f), &r, &b, f);
    }
}

fn check_against_reference(out: &Output, r: &BTreeMap<String, Tensor>, b: &Batch, f: &str) {
    assert_eq!(out.last_hidden.dims(), &[b.batch, b.seq, HIDDEN]);
    let hidden = out.last_hidden.to_vec::<f32>().unwrap();
    let d_hidden = max_abs(&hidden, &f32s(r, "last_hidden"));
    let d_pooled = max_abs(
        &out.mean_pooled.to_vec::<f32>().unwrap(),
        &f32s(r, "mean_pooled"),
    );
    println!(
        "{f}: cpu vs onnxruntime: hidden max abs {d_hidden:.3e}, pooled max abs {d_pooled:.3e}"
    );
    assert!(
        d_hidden <= 1e-4,
        "{f}: last hidden states: max abs {d_hidden}"
    );
    assert!(d_pooled <= 1e-4, "{f}: mean pooled: max abs {d_pooled}");
    let emb = out.embeddings.to_vec2::<f32>().unwrap();
    let want = r["embeddings"].to_vec2::<f32>().unwrap();
    for (i, (e, w)) in emb.iter().zip(&want).enumerate() {
        let c = cosine(e, w);
        println!("{f}: sentence {i}: cosine {c:.9}");
        assert!(c >= 0.999999, "{f}: sentence {i}: cosine {c}");
    }
    let sim = cosine_matrix(&out.embeddings)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let d_sim = max_abs(&sim, &f32s(r, "similarity"));
    assert!(d_sim <= 1e-5, "{f}: similarity matrix: max abs {d_sim}");
    // The two guitar sentences are the closest pair (a property of the model).
    let n = b.batch;
    let best = (0..n * n)
        .filter(|k| k / n != k % n)
        .max_by(|&x, &y| sim[x].total_cmp(&sim[y]))
        .unwrap();
    // The matrix is symmetric: compare the pair unordered.
    let (i, j) = (best / n, best % n);
    assert_eq!((i.min(j), i.max(j)), (0, 1));
}

#[test]
fn ptx_emu_gives_the_cpu_bits() {
    let Some(dir) = model_dir("ptx_emu_gives_the_cpu_bits") else {
        return;
    };
    let tok = Tokenizer::from_file(&tokenizer_path(&dir)).unwrap();
    // Two sentences of different lengths (9 and 10 tokens): padded, so the mask is
    // exercised; short, so the emulator is quick.
    let b = tok
        .encode(&[DEFAULT_SENTENCES[0], DEFAULT_SENTENCES[3]])
        .unwrap();
    assert!(b.mask.contains(&0));
    for f in FORWARDS {
        let cpu = run(&dir, "cpu", &b, f);
        let t = std::time::Instant::now();
        let emu = run(&dir, "ptx-emu", &b, f);
        println!(
            "{f}: ptx-emu forward of {} x {} tokens: {:.1} s",
            b.batch,
            b.seq,
            t.elapsed().as_secs_f64()
        );
        assert_eq!(bits(&cpu.last_hidden), bits(&emu.last_hidden), "{f}");
        assert_eq!(bits(&cpu.mean_pooled), bits(&emu.mean_pooled), "{f}");
        assert_eq!(bits(&cpu.embeddings), bits(&emu.embeddings), "{f}");
    }
}
