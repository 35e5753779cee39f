//! The emulator's speed: replays the launches of a replay file (`gpukit profile --census
//! --replay FILE`) on the PTX emulator with memcheck and racecheck on, and prints the
//! thread instructions it ran per second of wall time (`--no-racecheck`: memcheck only).
//!
//! ```text
//! cargo run --release -p gpukit-ptx --example emu_rate -- REPLAY PTX_DIR [--repeat N] [--top K] [--no-racecheck] [--only SUBSTRING]
//! ```
//!
//! It uses only the parts of `gpukit-ptx`'s API that have not changed since the
//! emulator's first version (`Module::parse`, `GlobalMemory::insert`, `launch`,
//! `EmuOptions::default`, `LaunchStats::thread_instructions`), so `tools/emu-rate/run.sh`
//! builds this same file against an older commit and compares the two side by side.
//! Output: one line per kernel (the `--top` slowest, all rounds: thread instructions,
//! seconds, rate, active lanes per warp instruction and time per warp instruction) and a final
//! `rate <thread instructions> <seconds> <instructions per second>` line for the
//! fastest of the `--repeat` rounds (the least disturbed on a shared machine).
//! `--only SUBSTRING` replays only the launches whose entry name contains it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use gpukit_ptx::{EmuOptions, GlobalMemory, Module, ParamValue, launch};

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("replay file truncated at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|e| e.to_string())
    }
}

enum Param {
    Null,
    Ptr(usize, u64),
    U32(u32),
    U64(u64),
}

struct Launch {
    family: String,
    entry: String,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    shared: u32,
    ranges: Vec<(u32, Vec<u8>)>,
    params: Vec<Param>,
}

fn read(bytes: &[u8]) -> Result<Vec<Launch>, String> {
    let mut c = Cursor { b: bytes, at: 0 };
    if c.take(8)? != b"GKRPLAY1" {
        return Err("not a replay file (magic GKRPLAY1)".into());
    }
    let n = c.u32()?;
    let mut out = Vec::new();
    for _ in 0..n {
        let family = c.str()?;
        let entry = c.str()?;
        let mut g = [0u32; 7];
        for v in &mut g {
            *v = c.u32()?;
        }
        let _calls = c.u64()?;
        let nr = c.u32()?;
        let mut ranges = Vec::new();
        for _ in 0..nr {
            let align = c.u32()?;
            let len = usize::try_from(c.u64()?).map_err(|e| e.to_string())?;
            ranges.push((align, c.take(len)?.to_vec()));
        }
        let np = c.u32()?;
        let mut params = Vec::new();
        for _ in 0..np {
            params.push(match c.u8()? {
                0 => Param::Null,
                1 => Param::Ptr(c.u32()? as usize, c.u64()?),
                2 => Param::U32(c.u32()?),
                3 => Param::U64(c.u64()?),
                t => return Err(format!("unknown parameter tag {t}")),
            });
        }
        out.push(Launch {
            family,
            entry,
            grid: (g[0], g[1], g[2]),
            block: (g[3], g[4], g[5]),
            shared: g[6],
            ranges,
            params,
        });
    }
    Ok(out)
}

/// A 64-byte-aligned copy of a range's bytes, placed at its recorded alignment.
struct Range {
    _words: Vec<u64>,
    base: u64,
}

impl Range {
    fn new(align: u32, bytes: &[u8]) -> Range {
        let mut words = vec![0u64; (bytes.len() + 128).div_ceil(8)];
        let start = words.as_mut_ptr() as usize;
        let base = start.next_multiple_of(64) + align as usize % 64;
        // SAFETY: `base - start` is at most 127, and the vector has `bytes.len() + 128`
        // bytes, so the copy stays inside it; u8 has no alignment.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base as *mut u8, bytes.len());
        }
        Range {
            _words: words,
            base: base as u64,
        }
    }
}

fn run_one(l: &Launch, m: &Module, racecheck: bool) -> Result<(u64, u64, f64), String> {
    let ranges: Vec<Range> = l.ranges.iter().map(|(a, b)| Range::new(*a, b)).collect();
    let mut mem = GlobalMemory::new();
    for (r, (_, b)) in ranges.iter().zip(&l.ranges) {
        if b.is_empty() {
            continue;
        }
        // SAFETY: `r.base .. r.base + len` lies inside `r.words`, which outlives `mem`
        // (dropped at the end of this function, after the launch); nothing else
        // accesses it during the launch.
        unsafe { mem.insert(r.base, b.len()) }.map_err(|e| format!("{e:?}"))?;
    }
    let params: Vec<ParamValue> = l
        .params
        .iter()
        .map(|p| match *p {
            Param::Null => ParamValue::ptr(0),
            Param::Ptr(i, off) => ParamValue::ptr(ranges[i].base + off),
            Param::U32(v) => ParamValue::U32(v),
            Param::U64(v) => ParamValue::U64(v),
        })
        .collect();
    let opts = EmuOptions {
        racecheck,
        ..EmuOptions::default()
    };
    let t = Instant::now();
    let stats = launch(
        m,
        &l.entry,
        l.grid,
        l.block,
        l.shared as usize,
        &params,
        &mem,
        &opts,
    )
    .map_err(|e| format!("{}: {e}", l.entry))?;
    let secs = t.elapsed().as_secs_f64();
    drop(mem);
    drop(ranges);
    Ok((stats.thread_instructions, stats.warp_instructions, secs))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut repeat, mut top, mut racecheck) = (1usize, 10usize, true);
    let mut only: Option<String> = None;
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--repeat" => repeat = it.next().and_then(|v| v.parse().ok()).unwrap_or(1),
            "--top" => top = it.next().and_then(|v| v.parse().ok()).unwrap_or(10),
            "--no-racecheck" => racecheck = false,
            "--only" => only = it.next().cloned(),
            _ => pos.push(a.clone()),
        }
    }
    let [replay, ptx_dir] = pos.as_slice() else {
        eprintln!(
            "usage: emu_rate REPLAY PTX_DIR [--repeat N] [--top K] [--no-racecheck] [--only SUBSTRING]"
        );
        return ExitCode::from(2);
    };
    let launches = match std::fs::read(replay)
        .map_err(|e| format!("{replay}: {e}"))
        .and_then(|b| read(&b))
    {
        Ok(l) => l,
        Err(e) => {
            eprintln!("emu_rate: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut modules: BTreeMap<String, Module> = BTreeMap::new();
    for l in &launches {
        if modules.contains_key(&l.family) {
            continue;
        }
        let path = format!("{ptx_dir}/{}.ptx", l.family);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("emu_rate: {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        match Module::parse(&text) {
            Ok(m) => modules.insert(l.family.clone(), m),
            Err(e) => {
                eprintln!("emu_rate: {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
    }
    let mut per: BTreeMap<&str, (u64, u64, f64)> = BTreeMap::new();
    let mut rounds: Vec<(u64, f64)> = Vec::new();
    for _ in 0..repeat {
        let (mut insts, mut secs) = (0u64, 0f64);
        for l in launches
            .iter()
            .filter(|l| only.as_ref().is_none_or(|o| l.entry.contains(o.as_str())))
        {
            match run_one(l, &modules[&l.family], racecheck) {
                Ok((n, wn, s)) => {
                    insts += n;
                    secs += s;
                    let e = per.entry(&l.entry).or_default();
                    e.0 += n;
                    e.1 += wn;
                    e.2 += s;
                }
                Err(e) => {
                    eprintln!("emu_rate: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        rounds.push((insts, secs));
    }
    let mut ranked: Vec<_> = per.into_iter().collect();
    ranked.sort_by(|a, b| b.1.2.total_cmp(&a.1.2));
    for (k, (n, wn, s)) in ranked.iter().take(top) {
        println!(
            "{k:<40} {n:>14} {s:>10.4} s {:>12.0} /s {:>5.1} lanes {:>6.1} ns/warp-inst",
            *n as f64 / s,
            *n as f64 / (*wn).max(1) as f64,
            s * 1e9 / (*wn).max(1) as f64
        );
    }
    // The fastest round: the least disturbed by other work on a shared machine.
    let &(insts, secs) = rounds
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("at least one round");
    println!("rate {insts} {secs:.6} {:.0}", insts as f64 / secs);
    ExitCode::SUCCESS
}
