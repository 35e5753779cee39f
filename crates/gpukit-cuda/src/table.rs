//! `kernels-cuda/table.cuh`, generated from the ABI table ([`gpukit_core::abi`]), so
//! the CUDA sources instantiate exactly the kernels the Rust side launches.
//!
//! For every op the header defines `GK_FOR_<op>(X)`, which expands `X(op, dtype, T)`
//! once per dtype of the op, `T` being the CUDA storage type; the same for each
//! auxiliary entry of [`crate::plan::aux_entries`] with the dtypes of the op it serves.
//! A `.cu` file instantiates with `GK_FOR_add(MY_MACRO)`, so a kernel name or a dtype
//! can only come from the table. The test `table_header_is_current` compares the
//! committed header with [`header`] (set `GPUKIT_BLESS=1` to rewrite it).

use gpukit_core::DType;
use gpukit_core::abi::all_kernels;

use crate::plan::aux_entries;

/// The CUDA storage type of `d` (the typedefs of `kernels-cuda/gpukit.cuh`).
pub fn cuda_type(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F16 => "gk_f16",
        DType::BF16 => "gk_bf16",
        DType::I64 => "i64",
        DType::I32 => "int",
    }
}

fn line(out: &mut String, op: &str, dtypes: &[DType]) {
    out.push_str(&format!("#define GK_FOR_{op}(X)"));
    for &d in dtypes {
        out.push_str(&format!(" X({op}, {}, {})", d.name(), cuda_type(d)));
    }
    out.push('\n');
}

/// The text of `kernels-cuda/table.cuh`.
pub fn header() -> String {
    let mut out = String::from(
        "// Generated from gpukit_core::abi by crates/gpukit-cuda/src/table.rs: do not edit.\n\
         // Rewrite with: GPUKIT_BLESS=1 cargo test -p gpukit-cuda table_header_is_current\n\
         #pragma once\n\n",
    );
    for sig in all_kernels() {
        line(&mut out, sig.op, sig.dtypes);
    }
    out.push_str("\n// Auxiliary entries of the launch plans.\n");
    for (aux, op) in aux_entries() {
        let sig = gpukit_core::abi::signature(op).expect("aux_entries names an ABI op");
        line(&mut out, aux, sig.dtypes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_header_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels-cuda/table.cuh");
        let want = header();
        if std::env::var_os("GPUKIT_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "kernels-cuda/table.cuh is stale: run GPUKIT_BLESS=1 cargo test -p gpukit-cuda \
             table_header_is_current, then python3 kernels-cuda/build.py"
        );
    }
}
