//! `gpukit devices`: what this build can open, and the default device.

use std::process::ExitCode;

use gpukit::DeviceInfo;
use serde_json::json;

use crate::cli::Global;

/// `bytes` in GiB with one decimal.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// One device as the `--json` output lists it.
fn device_json(d: &DeviceInfo) -> serde_json::Value {
    json!({
        "spec": d.spec(),
        "backend": d.backend.to_string(),
        "name": d.name,
        "compute_capability": d.compute_capability.map(|(a, b)| format!("{a}.{b}")),
        "memory_bytes": d.total_memory,
        "parallelism": d.parallelism,
    })
}

/// Lists the devices (a table, or one JSON object with `--json`), why there is no
/// CUDA device if there is none, and the device a command without `--device` opens.
pub(crate) fn devices(g: &Global) -> ExitCode {
    let devs = gpukit::devices();
    if g.json {
        outln!(
            "{}",
            json!({
                "devices": devs.iter().map(device_json).collect::<Vec<_>>(),
                "cuda_unavailable": gpukit::cuda_status(),
            })
        );
        return ExitCode::SUCCESS;
    }
    outln!(
        "{:<8} {:<8} {:<44} {:>6} {:>10} {:>8}",
        "device",
        "backend",
        "name",
        "cc",
        "memory",
        "threads"
    );
    for d in &devs {
        let cc = d
            .compute_capability
            .map(|(a, b)| format!("{a}.{b}"))
            .unwrap_or_else(|| "-".into());
        outln!(
            "{:<8} {:<8} {:<44} {:>6} {:>10} {:>8}",
            d.spec(),
            d.backend.to_string(),
            d.name.chars().take(44).collect::<String>(),
            cc,
            gib(d.total_memory),
            d.parallelism
        );
    }
    if let Some(why) = gpukit::cuda_status() {
        outln!("no CUDA device: {why}");
    }
    match crate::open(g) {
        Ok(kit) => outln!("default device: {}", kit.info().spec()),
        Err(e) => outln!("default device: none ({e})"),
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_gib() {
        assert_eq!(gib(0), "0.0 GiB");
        assert_eq!(gib(3 << 29), "1.5 GiB");
        assert_eq!(gib(141 << 30), "141.0 GiB");
    }
}
