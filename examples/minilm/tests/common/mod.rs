//! Shared by the model's tests: the fetched model's folder (or a SKIP line), and an
//! f32 tensor's bits.

use std::path::PathBuf;

use gpukit::Tensor;
use gpukit_example_minilm::{default_model_dir, tokenizer_path, weights_path};

/// The folder `tools/model/fetch.sh` filled (weights, tokenizer and the ONNX file), or
/// `None` after printing a SKIP line for `test`.
pub(crate) fn model_dir(test: &str) -> Option<PathBuf> {
    let dir = default_model_dir();
    if weights_path(&dir).exists() && tokenizer_path(&dir).exists() {
        Some(dir)
    } else {
        eprintln!(
            "SKIP {test}: no model in {} (run tools/model/fetch.sh)",
            dir.display()
        );
        println!("SKIP {test}: model not fetched");
        None
    }
}

/// An f32 tensor's elements as bits.
pub(crate) fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}
