//! The committed PTX (`kernels-cuda/ptx/*.ptx`), embedded at compile time, and a small
//! reader for what the backend needs from it: entry names, parameter types, the ISA
//! version. `build.rs`-free: nothing is compiled when the crate builds.

/// Every PTX module: `(family, text)`. All are loaded when a device opens.
pub const MODULES: &[(&str, &str)] = &[
    (
        "attention",
        include_str!("../../../kernels-cuda/ptx/attention.ptx"),
    ),
    ("cast", include_str!("../../../kernels-cuda/ptx/cast.ptx")),
    (
        "compare",
        include_str!("../../../kernels-cuda/ptx/compare.ptx"),
    ),
    ("conv", include_str!("../../../kernels-cuda/ptx/conv.ptx")),
    (
        "elements",
        include_str!("../../../kernels-cuda/ptx/elements.ptx"),
    ),
    (
        "elementwise",
        include_str!("../../../kernels-cuda/ptx/elementwise.ptx"),
    ),
    ("index", include_str!("../../../kernels-cuda/ptx/index.ptx")),
    (
        "linalg",
        include_str!("../../../kernels-cuda/ptx/linalg.ptx"),
    ),
    (
        "movement",
        include_str!("../../../kernels-cuda/ptx/movement.ptx"),
    ),
    ("norm", include_str!("../../../kernels-cuda/ptx/norm.ptx")),
    (
        "norm_ext",
        include_str!("../../../kernels-cuda/ptx/norm_ext.ptx"),
    ),
    (
        "reduce",
        include_str!("../../../kernels-cuda/ptx/reduce.ptx"),
    ),
    (
        "reduce_axes",
        include_str!("../../../kernels-cuda/ptx/reduce_axes.ptx"),
    ),
    (
        "resize",
        include_str!("../../../kernels-cuda/ptx/resize.ptx"),
    ),
];

/// One `.entry` of a PTX module: its name and its parameters' PTX types
/// (`.u64`, `.f64`, `.u32`, ...), in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry name.
    pub name: String,
    /// Parameter types, without the leading dot (`u64`, `f64`, `u32`, `f32`, ...).
    pub params: Vec<String>,
}

/// The `.entry` declarations of `ptx`, in file order.
pub fn entries(ptx: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut rest = ptx;
    while let Some(pos) = rest.find(".entry ") {
        rest = &rest[pos + ".entry ".len()..];
        let Some(open) = rest.find('(') else { break };
        let name = rest[..open].trim().to_string();
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let params = rest[open + 1..open + close]
            .split(',')
            .filter_map(|p| {
                p.split_whitespace()
                    .filter(|t| t.starts_with('.'))
                    .map(|t| &t[1..])
                    .find(|t| {
                        matches!(
                            *t,
                            "u64" | "s64" | "b64" | "f64" | "u32" | "s32" | "b32" | "f32"
                        )
                    })
                    .map(str::to_string)
            })
            .collect();
        out.push(Entry { name, params });
        rest = &rest[open + close..];
    }
    out
}

/// The `.version` line's ISA version `(major, minor)`.
pub fn isa_version(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .find(|l| l.trim_start().starts_with(".version"))?;
    let v = line.split_whitespace().nth(1)?;
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The oldest CUDA driver version (as `cuDriverGetVersion` reports it, 1000 × major +
/// 10 × minor) that accepts PTX ISA `isa`, from the PTX ISA release notes: ISA 8.0–8.5
/// came with CUDA 12.0–12.5, 8.6 with 12.7, 8.7 with 12.8, 8.8 with 12.9, 9.0 with
/// 13.0; ISA 7.x with CUDA 11.x. Unknown versions give 0 (no claim).
pub fn min_driver_for(isa: (u32, u32)) -> u32 {
    match isa {
        (8, m @ 0..=5) => 12_000 + 10 * m,
        (8, 6) => 12_070,
        (8, 7) => 12_080,
        (8, 8) => 12_090,
        (9, m) => 13_000 + 10 * m,
        (7, m) => 11_000 + 10 * m,
        _ => 0,
    }
}

/// What `ptxas -v` reports for each shipped kernel on sm_80 and sm_90
/// (`kernels-cuda/ptx/resources.tsv`, written by `kernels-cuda/build.py --resources` and
/// checked against ptxas by `build.py --check`).
pub const RESOURCES_TSV: &str = include_str!("../../../kernels-cuda/ptx/resources.tsv");

/// One kernel's resources on one architecture, from [`RESOURCES_TSV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub static_shared: u32,
    /// Stack frame per thread, bytes.
    pub stack: u32,
    /// Spill stores per thread, bytes.
    pub spill_stores: u32,
    /// Spill loads per thread, bytes.
    pub spill_loads: u32,
}

/// The resources of `kernel` compiled for `arch` (`"sm_80"`, `"sm_90"`); `None` when
/// the table has no such row (a user kernel, or another architecture).
pub fn resources(kernel: &str, arch: &str) -> Option<KernelResources> {
    RESOURCES_TSV
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            if f.len() != 7 || f[0] != arch || f[1] != kernel {
                return None;
            }
            let n = |i: usize| f[i].parse::<u32>().ok();
            Some(KernelResources {
                registers: n(2)?,
                static_shared: n(3)?,
                stack: n(4)?,
                spill_stores: n(5)?,
                spill_loads: n(6)?,
            })
        })
}

#[cfg(test)]
mod resource_tests {
    use super::*;

    #[test]
    fn every_entry_has_resources_on_both_architectures() {
        for (family, text) in MODULES {
            for e in entries(text) {
                for arch in ["sm_80", "sm_90"] {
                    let r = resources(&e.name, arch)
                        .unwrap_or_else(|| panic!("{family}: {} has no {arch} row", e.name));
                    assert!(r.registers > 0 && r.registers <= 255, "{}: {r:?}", e.name);
                    assert_eq!((r.spill_stores, r.spill_loads), (0, 0), "{} spills", e.name);
                }
            }
        }
        assert_eq!(resources("no_such_kernel", "sm_80"), None);
    }
}
