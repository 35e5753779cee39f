//! Parser fuzzing: mutated real PTX (byte mutations, truncations, line shuffles,
//! deletions and duplications) must give `Ok` or `Err`, never a panic or a hang. When a
//! mutant still parses, its first kernel is launched (with a step limit): execution
//! must end in `Ok` or an error too.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use gpukit_ptx::{EmuOptions, GlobalMemory, Module, ParamValue, launch};
use proptest::prelude::*;

fn sources() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for f in [
        "tests/fixtures/matmul.ptx",
        "tests/fixtures/faults.ptx",
        "tests/fixtures/features.ptx",
    ] {
        if let Ok(t) = std::fs::read_to_string(root.join(f)) {
            out.push(t);
        }
    }
    // The first kernels of the shipped elementwise module (a few hundred lines).
    if let Ok(t) = std::fs::read_to_string(root.join("../../kernels-cuda/ptx/elementwise.ptx")) {
        let lines: Vec<&str> = t.lines().collect();
        let cut = lines
            .iter()
            .enumerate()
            .skip(300)
            .find(|(_, l)| l.trim() == "}")
            .map_or(lines.len(), |(i, _)| i + 1);
        out.push(lines[..cut].join("\n"));
    }
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the byte at (position fraction) with a byte.
    Byte(f64, u8),
    /// Insert a PTX-significant snippet.
    Insert(f64, &'static str),
    /// Truncate at a fraction of the text.
    Truncate(f64),
    /// Swap two lines.
    Swap(f64, f64),
    /// Delete a line.
    Delete(f64),
    /// Duplicate a line.
    Duplicate(f64),
}

const SNIPPETS: &[&str] = &[
    "{",
    "}",
    ";",
    ",",
    "[",
    "]",
    "%r1",
    "%p1",
    "@%p1 ",
    "@!",
    ".reg .b32 %r<",
    ".f32",
    ".u64",
    "bra $L__BB0_1;",
    "0f7FC00000",
    "-",
    "+",
    "0x",
    "99999999999999999999",
    "%tid.w",
    "{%f1, %f2}",
    "|",
    "!",
    ".shared",
    "ret;",
    "exit;",
    "bar.sync 0;",
    ":",
    "$L__BB0_1:",
    ".param .u64 x",
    "(",
    ")",
    "\"",
    "/*",
    "//",
    ".entry k()",
    "shfl.sync.bfly.b32 %r1, %r1, 1, 31, -1;",
    "call f, (p);",
    "ld.param.u32 %r1, [x+4];",
];

fn apply(src: &str, muts: &[Mutation]) -> String {
    let mut s: Vec<u8> = src.as_bytes().to_vec();
    for m in muts {
        let at = |f: f64, len: usize| ((f * len as f64) as usize).min(len.saturating_sub(1));
        match m {
            Mutation::Byte(f, b) => {
                if !s.is_empty() {
                    let i = at(*f, s.len());
                    s[i] = *b;
                }
            }
            Mutation::Insert(f, t) => {
                let i = at(*f, s.len() + 1);
                s.splice(i..i, t.bytes());
            }
            Mutation::Truncate(f) => {
                let i = at(*f, s.len() + 1);
                s.truncate(i);
            }
            Mutation::Swap(a, _) | Mutation::Delete(a) | Mutation::Duplicate(a) => {
                let text = String::from_utf8_lossy(&s).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.is_empty() {
                    continue;
                }
                let i = at(*a, lines.len());
                match m {
                    Mutation::Swap(_, b) => {
                        let j = at(*b, lines.len());
                        lines.swap(i, j);
                    }
                    Mutation::Delete(_) => {
                        lines.remove(i);
                    }
                    _ => {
                        let l = lines[i];
                        lines.insert(i, l);
                    }
                }
                s = lines.join("\n").into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let f = 0.0f64..1.0;
    prop_oneof![
        (f.clone(), any::<u8>()).prop_map(|(f, b)| Mutation::Byte(f, b)),
        (f.clone(), prop::sample::select(SNIPPETS)).prop_map(|(f, t)| Mutation::Insert(f, t)),
        f.clone().prop_map(Mutation::Truncate),
        (f.clone(), f.clone()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        f.clone().prop_map(Mutation::Delete),
        f.prop_map(Mutation::Duplicate),
    ]
}

/// Parses (and, if that works, runs) `text` on another thread; fails on a panic or
/// after 20 s.
fn parse_and_run_bounded(text: String) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(move || {
            if let Ok(m) = Module::parse(&text) {
                exercise(&m);
            }
        });
        let _ = tx.send(r.is_ok());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(true) => Ok(()),
        Ok(false) => Err("panicked".into()),
        Err(_) => Err("hung".into()),
    }
}

/// Launches the module's first kernel on small buffers with a step limit.
fn exercise(m: &Module) {
    let Some(k) = m.entries().next() else { return };
    let bufs: Vec<Buf> = (0..k.params.len()).map(|_| Buf::zeroed(4096)).collect();
    let mut mem = GlobalMemory::new();
    let addrs: Vec<u64> = bufs
        .iter()
        .map(|b| mem.insert_atomic(b.words()).unwrap())
        .collect();
    let params: Vec<ParamValue> = k
        .params
        .iter()
        .zip(&addrs)
        .map(|(p, a)| match p.size {
            8 => ParamValue::ptr(*a),
            4 => ParamValue::U32(16),
            n => ParamValue::Bytes(vec![0; n as usize]),
        })
        .collect();
    let opts = EmuOptions {
        max_steps_per_block: Some(20_000),
        ..EmuOptions::default()
    };
    let _ = launch(m, &k.name, (2, 1, 1), (64, 1, 1), 64, &params, &mem, &opts);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn mutated_ptx_never_panics_or_hangs(
        which in 0usize..16,
        muts in prop::collection::vec(mutation(), 1..6),
    ) {
        let srcs = sources();
        prop_assume!(!srcs.is_empty());
        let text = apply(&srcs[which % srcs.len()], &muts);
        parse_and_run_bounded(text).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn unmutated_sources_parse() {
    for s in sources() {
        Module::parse(&s).unwrap();
    }
}
