//! docs/onnx.md names every op the runner supports, and no more.

use std::path::PathBuf;

#[test]
fn docs_onnx_md_lists_exactly_the_supported_ops() {
    let doc = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/onnx.md"),
    )
    .expect("docs/onnx.md");
    let start = doc
        .find("### The ops it runs")
        .expect("the op list section");
    let list = doc[start..].lines().nth(2).expect("the op list line");
    let mut documented: Vec<&str> = list
        .split(", ")
        .map(|s| s.trim_end_matches('.').trim_matches('`'))
        .collect();
    documented.sort_unstable();
    assert_eq!(documented, gpukit_onnx::supported_ops());
}
