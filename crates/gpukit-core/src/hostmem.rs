//! What the host can give: physical memory, memory available now, and the cgroup
//! limit of this process (Linux). The CPU backend and the PTX emulator, whose device
//! memory is host memory, check allocations against it and report it in
//! [`crate::Error::OutOfMemory`].

/// A snapshot of the host's memory, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostMemory {
    /// Physical memory (`MemTotal`), or 1 TiB where it cannot be read.
    pub total: u64,
    /// Memory available for new allocations without swapping (`MemAvailable`), capped
    /// by what the cgroup limit leaves; equal to `total` where unknown.
    pub available: u64,
    /// The cgroup memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`), if any.
    pub cgroup_limit: Option<u64>,
}

fn meminfo(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_once(':'))
        .and_then(|(_, v)| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb.saturating_mul(1024))
}

/// A cgroup limit file's value: a byte count, or `None` for `max` / an unlimited
/// v1 value (v1 reports "no limit" as a number near `i64::MAX`).
fn limit_value(text: &str) -> Option<u64> {
    let v = text.trim().parse::<u64>().ok()?;
    (v < (1u64 << 62)).then_some(v)
}

/// The cgroup limit and usage of this process, v2 then v1.
fn cgroup() -> Option<(u64, u64)> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut candidates: Vec<(String, String)> = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next(), parts.next(), parts.next());
        let (Some(ctrl), Some(path)) = (ctrl, path) else {
            continue;
        };
        if ctrl.is_empty() {
            for base in [
                format!("/sys/fs/cgroup{path}"),
                "/sys/fs/cgroup".to_string(),
            ] {
                candidates.push((
                    format!("{base}/memory.max"),
                    format!("{base}/memory.current"),
                ));
            }
        } else if ctrl.split(',').any(|c| c == "memory") {
            for base in [
                format!("/sys/fs/cgroup/memory{path}"),
                "/sys/fs/cgroup/memory".to_string(),
            ] {
                candidates.push((
                    format!("{base}/memory.limit_in_bytes"),
                    format!("{base}/memory.usage_in_bytes"),
                ));
            }
        }
    }
    candidates.into_iter().find_map(|(lim, used)| {
        let limit = limit_value(&std::fs::read_to_string(lim).ok()?)?;
        let usage = std::fs::read_to_string(used)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        Some((limit, usage))
    })
}

/// Reads the host's memory now (Linux: `/proc/meminfo` and the cgroup files; elsewhere
/// 1 TiB total and available, no cgroup).
pub fn host_memory() -> HostMemory {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let total = meminfo(&text, "MemTotal").unwrap_or(1 << 40);
    let mut available = meminfo(&text, "MemAvailable").unwrap_or(total);
    let cg = cgroup();
    if let Some((limit, usage)) = cg {
        available = available.min(limit.saturating_sub(usage));
    }
    HostMemory {
        total: cg.map_or(total, |(limit, _)| total.min(limit)),
        available,
        cgroup_limit: cg.map(|(limit, _)| limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_limits_parse() {
        let t = "MemTotal:       16303856 kB\nMemFree: 1 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(meminfo(t, "MemTotal"), Some(16303856 * 1024));
        assert_eq!(meminfo(t, "MemAvailable"), Some(8000000 * 1024));
        assert_eq!(meminfo(t, "Mem"), None);
        assert_eq!(limit_value("max\n"), None);
        assert_eq!(limit_value("9223372036854771712\n"), None);
        assert_eq!(limit_value("536870912\n"), Some(1 << 29));
        let m = host_memory();
        assert!(m.available <= m.total.max(m.available) && m.total > 0);
    }
}
