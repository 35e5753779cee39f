//! Every committed PTX module (kernels-cuda/ptx/*.ptx and this crate's fixtures) parses
//! and decodes: an instruction the emulator does not implement fails here, naming it.

use std::path::{Path, PathBuf};

use gpukit_ptx::Module;

fn ptx_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("../../kernels-cuda/ptx"),
        root.join("tests/fixtures"),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_committed_module_parses() {
    let files = ptx_files();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    let mut kernels = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        match Module::parse(&text) {
            Ok(m) => kernels += m.entries().count(),
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "modules that do not load:\n{}",
        failures.join("\n")
    );
    eprintln!("{} modules, {kernels} kernels", files.len());
}

#[test]
fn kernel_info_describes_the_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/fixtures/matmul.ptx")).unwrap();
    let m = Module::parse(&text).unwrap();
    let k = m.kernel("matmul_f32").unwrap();
    let shape: Vec<(&str, u32, u32)> = k
        .params
        .iter()
        .map(|p| (p.ptx_type.as_str(), p.size, p.offset))
        .collect();
    assert_eq!(
        shape,
        vec![
            (".u64", 8, 0),
            (".u64", 8, 8),
            (".u64", 8, 16),
            (".u32", 4, 24),
            (".u32", 4, 28),
            (".u32", 4, 32)
        ]
    );
    assert_eq!(k.static_shared_bytes, 0);
    assert_eq!(m.entries().count(), 1);
    assert!(m.kernel("nope").is_none());
    assert_eq!(m.ptx_version(), Some("8.8"));
}
