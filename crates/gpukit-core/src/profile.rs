//! Per-kernel profiling: launch counts and device time per kernel, a ranked report,
//! and a Chrome trace-event file that Perfetto opens.

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::time::{Duration, Instant};

/// Launch records kept for the trace; older ones are dropped past this (the per-kernel
/// totals keep counting).
pub const MAX_TRACE_EVENTS: usize = 1 << 20;

#[derive(Debug, Clone)]
struct TraceEvent {
    name: String,
    start: Duration,
    dur: Duration,
}

pub(crate) struct Profiler {
    pub(crate) on: bool,
    epoch: Instant,
    stats: HashMap<String, (u64, Duration)>,
    events: Vec<TraceEvent>,
    dropped_events: u64,
}

impl Profiler {
    pub(crate) fn new() -> Profiler {
        Profiler {
            on: false,
            epoch: Instant::now(),
            stats: HashMap::new(),
            events: Vec::new(),
            dropped_events: 0,
        }
    }

    pub(crate) fn record(&mut self, name: &str, started: Instant, dur: Duration) {
        let e = self.stats.entry(name.to_string()).or_default();
        e.0 += 1;
        e.1 += dur;
        if self.events.len() < MAX_TRACE_EVENTS {
            self.events.push(TraceEvent {
                name: name.to_string(),
                start: started.saturating_duration_since(self.epoch),
                dur,
            });
        } else {
            self.dropped_events += 1;
        }
    }

    pub(crate) fn reset(&mut self) {
        self.stats.clear();
        self.events.clear();
        self.dropped_events = 0;
        self.epoch = Instant::now();
    }

    pub(crate) fn report(&self, kit_id: u64) -> ProfileReport {
        let total: Duration = self.stats.values().map(|s| s.1).sum();
        let mut entries: Vec<ProfileEntry> = self
            .stats
            .iter()
            .map(|(name, &(calls, t))| ProfileEntry {
                name: name.clone(),
                calls,
                total: t,
                mean: if calls > 0 {
                    t / calls as u32
                } else {
                    Duration::ZERO
                },
                share: if total.is_zero() {
                    0.0
                } else {
                    t.as_secs_f64() / total.as_secs_f64()
                },
            })
            .collect();
        entries.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
        ProfileReport {
            kit_id,
            entries,
            events: self
                .events
                .iter()
                .map(|e| (e.name.clone(), e.start, e.dur))
                .collect(),
            dropped_events: self.dropped_events,
        }
    }
}

/// One kernel's line in a [`ProfileReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileEntry {
    /// Kernel name.
    pub name: String,
    /// Launches while profiling was on.
    pub calls: u64,
    /// Device time over those launches.
    pub total: Duration,
    /// `total / calls`.
    pub mean: Duration,
    /// Fraction of all profiled time, in `0.0..=1.0`.
    pub share: f64,
}

/// Where the time went: kernels ranked by total time (largest first), plus every
/// launch as a trace event.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileReport {
    /// The kit the report came from (the trace's thread id).
    pub kit_id: u64,
    /// One entry per kernel, by total time descending (ties by name).
    pub entries: Vec<ProfileEntry>,
    /// `(kernel, start since profiling began, duration)` per launch, in launch order.
    pub events: Vec<(String, Duration, Duration)>,
    /// Launches beyond [`MAX_TRACE_EVENTS`] that were counted but not traced.
    pub dropped_events: u64,
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl ProfileReport {
    /// The report as Chrome trace-event JSON (complete events, microseconds), which
    /// `ui.perfetto.dev` and `chrome://tracing` open.
    pub fn to_chrome_trace(&self) -> String {
        let mut s = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
        for (i, (name, start, dur)) in self.events.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str("{\"name\":");
            json_string(&mut s, name);
            let _ = write!(
                s,
                ",\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
                self.kit_id,
                start.as_secs_f64() * 1e6,
                dur.as_secs_f64() * 1e6
            );
        }
        s.push_str("]}");
        s
    }

    /// Writes [`ProfileReport::to_chrome_trace`] to `path`.
    ///
    /// Errors: [`crate::Error::Io`] if the file cannot be written.
    pub fn write_chrome_trace(&self, path: impl AsRef<std::path::Path>) -> crate::Result<()> {
        std::fs::write(path, self.to_chrome_trace())?;
        Ok(())
    }
}

impl fmt::Display for ProfileReport {
    /// A text table: kernel, calls, total ms, mean µs, share.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self
            .entries
            .iter()
            .map(|e| e.name.len())
            .max()
            .unwrap_or(0)
            .max(6);
        writeln!(
            f,
            "{:<w$}  {:>8}  {:>12}  {:>12}  {:>6}",
            "kernel", "calls", "total ms", "mean us", "share"
        )?;
        for e in &self.entries {
            writeln!(
                f,
                "{:<w$}  {:>8}  {:>12.3}  {:>12.3}  {:>5.1}%",
                e.name,
                e.calls,
                e.total.as_secs_f64() * 1e3,
                e.mean.as_secs_f64() * 1e6,
                e.share * 100.0
            )?;
        }
        Ok(())
    }
}
