//! The model's own ONNX file (the one `tools/model/fetch.sh` extracts) run through
//! gpukit-onnx gives exactly the bits of [`MiniLm::forward_graph`], the same graph
//! written by hand with the tensor API, on the CPU and under the PTX emulator. Needs
//! the fetched model (a SKIP line without it; CI fetches it).

mod common;

use common::bits;
use gpukit::Tensor;
use gpukit_example_minilm::{
    Batch, DEFAULT_SENTENCES, MiniLm, Tokenizer, default_model_dir, tokenizer_path, weights_path,
};
use gpukit_onnx::{Model, Session};

/// Runs the ONNX file and the hand-written graph on `device`; asserts equal bits for
/// the last hidden states and the pooled output.
fn same_bits(device: &str, b: &Batch) {
    let dir = default_model_dir();
    let kit = gpukit::open(device).unwrap();
    let model = Model::load(dir.join("paraphrase-MiniLM-L3-v2.onnx")).unwrap();
    let mut session = Session::new(&model, &kit).unwrap();
    let ids = Tensor::from_slice(&kit, &b.ids, &[b.batch, b.seq]).unwrap();
    let mask = Tensor::from_slice(&kit, &b.mask, &[b.batch, b.seq]).unwrap();
    let outs = session
        .run(&[("input_ids", &ids), ("attention_mask", &mask)])
        .unwrap();
    let names: Vec<&str> = model.outputs().map(|o| o.name.as_str()).collect();
    let get = |n: &str| {
        outs[names.iter().position(|&x| x == n).unwrap()]
            .tensor()
            .clone()
    };
    let hand = MiniLm::load(&kit, &weights_path(&dir))
        .unwrap()
        .forward_graph(b)
        .unwrap();
    assert_eq!(get("onnx::Shape_422").dims(), hand.last_hidden.dims());
    assert_eq!(
        bits(&get("onnx::Shape_422")),
        bits(&hand.last_hidden),
        "{device}: last hidden"
    );
    assert_eq!(
        bits(&get("461")),
        bits(&hand.mean_pooled),
        "{device}: mean pooled"
    );
}

#[test]
fn the_onnx_file_gives_the_bits_of_the_hand_written_graph() {
    let Some(_) = common::model_dir("the_onnx_file_gives_the_bits_of_the_hand_written_graph")
    else {
        return;
    };
    let tok = Tokenizer::from_file(&tokenizer_path(&default_model_dir())).unwrap();
    let all = tok.encode(&DEFAULT_SENTENCES).unwrap();
    same_bits("cpu", &all);
    // Two sentences of different lengths (padding exercised), short for the emulator.
    let two = tok
        .encode(&[DEFAULT_SENTENCES[0], DEFAULT_SENTENCES[3]])
        .unwrap();
    same_bits("ptx-emu", &two);
}
