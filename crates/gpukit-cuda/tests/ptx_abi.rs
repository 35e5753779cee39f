//! The committed PTX against the kernel ABI, without a GPU: every built-in kernel of
//! the ABI table is an entry of exactly one module, with the ABI's parameter list
//! (count and type class); auxiliary entries exist; the PTX ISA and target are what
//! docs/cuda.md promises; the NVRTC options of user kernels are those of the build.

use std::collections::HashMap;

use gpukit_core::abi::{all_kernel_names, all_kernels, kernel_name};
use gpukit_cuda::{nvrtc, plan, ptx};

/// Every entry of every module: name → (module, parameter types).
fn entries() -> HashMap<String, (&'static str, Vec<String>)> {
    let mut out = HashMap::new();
    for (family, text) in ptx::MODULES {
        for e in ptx::entries(text) {
            let prev = out.insert(e.name.clone(), (*family, e.params));
            assert!(prev.is_none(), "entry {} is in two modules", e.name);
        }
    }
    out
}

/// The PTX parameter type class each ABI argument must have.
fn abi_params(args: &str) -> Vec<&'static str> {
    args.split(',')
        .map(|a| a.trim())
        .filter(|a| !a.is_empty() && *a != "\\")
        .map(|a| match a.split_once(':').map(|(_, t)| t.trim()) {
            Some("f64") => "f64",
            Some("f32") => "f32",
            Some("i32") => "u32",
            // buffers (pointers) and i64 scalars
            _ => "u64",
        })
        .collect()
}

#[test]
fn every_abi_kernel_is_a_ptx_entry_with_the_abi_parameters() {
    let have = entries();
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for sig in all_kernels() {
        let want = abi_params(&sig.args.replace('\\', ","));
        for &d in sig.dtypes {
            let name = kernel_name(sig.op, d);
            match have.get(&name) {
                None => missing.push(name),
                Some((_, params)) => {
                    let got: Vec<&str> = params
                        .iter()
                        .map(|p| match p.as_str() {
                            "b64" | "s64" => "u64",
                            "b32" | "s32" => "u32",
                            other => other,
                        })
                        .collect();
                    if got != want {
                        wrong.push(format!("{name}: PTX {got:?}, ABI {want:?}"));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ABI kernels missing from the PTX: {missing:?}"
    );
    assert!(
        wrong.is_empty(),
        "parameter lists differ:\n{}",
        wrong.join("\n")
    );
    assert!(all_kernel_names().len() > 150);
}

#[test]
fn auxiliary_entries_exist_for_every_dtype() {
    let have = entries();
    for (aux, op) in plan::aux_entries() {
        let sig = gpukit_core::abi::signature(op).unwrap();
        for &d in sig.dtypes {
            let name = kernel_name(aux, d);
            assert!(have.contains_key(&name), "auxiliary entry {name} missing");
        }
    }
}

#[test]
fn modules_target_compute_80_with_isa_8_8() {
    for (family, text) in ptx::MODULES {
        assert_eq!(ptx::isa_version(text), Some((8, 8)), "{family}");
        assert!(text.contains("\n.target sm_80\n"), "{family}");
        assert!(text.contains("\n.address_size 64\n"), "{family}");
        assert!(!ptx::entries(text).is_empty(), "{family} has no entry");
    }
    assert_eq!(ptx::min_driver_for((8, 8)), 12_090);
}

#[test]
fn user_kernels_compile_with_the_build_options() {
    let build = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../kernels-cuda/build.py"
    ))
    .unwrap();
    let line = build
        .lines()
        .find(|l| l.starts_with("OPTIONS = ["))
        .expect("build.py has an OPTIONS line");
    let quoted: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert_eq!(quoted, nvrtc::NVRTC_OPTIONS);
}
