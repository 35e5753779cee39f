//! gpukit's side of `tools/bench-compare/run.sh`: the comparison workloads through
//! gpukit's public API (`Kit`, `Buf`, `gpukit::ops`) on the CPU device, with
//! device-resident buffers, printed as one JSON line per measurement:
//!
//! ```text
//! {"side":"gpukit","workload":"sgemm_1024","impl":"matmul","threads":2,
//!  "seconds":0.0123,"median":0.0130,"reps":10,"flops":2147483648}
//! ```
//!
//! `seconds` is the best of the timed runs (after one warm-up call), `median` their
//! median; `flops` (compute-bound work) or `bytes` (memory-bound work: bytes read plus
//! bytes written once) gives the rate. The thread count is rayon's global pool
//! (`RAYON_NUM_THREADS`); run.sh runs this binary once per thread count.
//!
//! ```sh
//! RAYON_NUM_THREADS=2 cargo run --release -p gpukit-benches --bin bench_compare -- --quick
//! ```
//!
//! Flags: `--quick` (fewer repetitions), `--only w1,w2` (workload names).
//! Not a test: nothing here runs under `cargo test`.

use std::time::Instant;

use gpukit::ops::{self, AttentionShape, Conv2dParams, GemmParams, LayerNorm};
use gpukit::prelude::*;

/// 16 Mi elements: the length of the elementwise and reduction workloads.
const N_ELEM: usize = 16 << 20;

/// Command-line options.
struct Opts {
    quick: bool,
    only: Vec<String>,
}

impl Opts {
    fn parse() -> std::result::Result<Opts, String> {
        let mut o = Opts {
            quick: false,
            only: Vec::new(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--quick" => o.quick = true,
                "--only" => {
                    let v = args.next().ok_or("--only needs a value")?;
                    o.only = v
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect();
                }
                "-h" | "--help" => {
                    return Err("usage: bench_compare [--quick] [--only w1,w2,...]".into());
                }
                _ => return Err(format!("unknown argument `{a}` (try --help)")),
            }
        }
        Ok(o)
    }

    fn want(&self, workload: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|w| w == workload)
    }
}

/// What one call does: floating-point operations, or bytes moved.
#[derive(Clone, Copy)]
enum Work {
    Flops(u64),
    Bytes(u64),
}

/// Times calls of `f`: one warm-up call, then timed calls until the repetition count
/// and the time budget are both satisfied (or the maximum count is reached).
/// Returns (best, median, reps).
fn time_it(kit: &Kit, quick: bool, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64, usize)> {
    f()?;
    kit.sync()?;
    let (budget, min_reps, max_reps) = if quick { (1.0, 3, 10) } else { (3.0, 5, 30) };
    let mut times = Vec::with_capacity(max_reps);
    let start = Instant::now();
    while times.len() < max_reps {
        let t = Instant::now();
        f()?;
        kit.sync()?;
        times.push(t.elapsed().as_secs_f64());
        if times.len() >= min_reps && start.elapsed().as_secs_f64() > budget {
            break;
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((times[0], times[times.len() / 2], times.len()))
}

/// Runs one measurement and prints its JSON line.
struct Bench<'a> {
    kit: &'a Kit,
    opts: &'a Opts,
    threads: usize,
}

impl Bench<'_> {
    fn run(
        &self,
        workload: &str,
        imp: &str,
        work: Work,
        f: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        let (best, median, reps) = time_it(self.kit, self.opts.quick, f)?;
        let work = match work {
            Work::Flops(x) => format!("\"flops\":{x}"),
            Work::Bytes(x) => format!("\"bytes\":{x}"),
        };
        println!(
            "{{\"side\":\"gpukit\",\"workload\":\"{workload}\",\"impl\":\"{imp}\",\
             \"threads\":{},\"seconds\":{best:e},\"median\":{median:e},\"reps\":{reps},{work}}}",
            self.threads
        );
        Ok(())
    }
}

/// Deterministic pseudo-random values in `[-scale, scale)` (an LCG; the values do not
/// matter, only that they are finite, varied and not denormal).
fn data(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn upload(kit: &Kit, d: DType, n: usize, seed: u64, scale: f64) -> Result<Buf> {
    kit.upload_f64(d, &data(n, seed, scale))
}

fn gemm_workloads(b: &Bench<'_>) -> Result<()> {
    let kit = b.kit;
    let n = 1024;
    let flops = Work::Flops(2 * (n * n * n) as u64);
    for (name, d) in [("sgemm_1024", DType::F32), ("dgemm_1024", DType::F64)] {
        if !b.opts.want(name) {
            continue;
        }
        let (x, y) = (
            upload(kit, d, n * n, 1, 1.0)?,
            upload(kit, d, n * n, 2, 1.0)?,
        );
        let c = kit.alloc(d, n * n)?;
        b.run(name, "matmul", flops, || {
            ops::matmul(kit, &c, &x, &y, n, n, n)
        })?;
        let p = GemmParams::new(n, n, n);
        b.run(name, "gemm", flops, || {
            ops::gemm(kit, &c, &x, &y, None, None, &p)
        })?;
    }
    Ok(())
}

fn conv_workload(b: &Bench<'_>) -> Result<()> {
    if !b.opts.want("conv2d") {
        return Ok(());
    }
    let kit = b.kit;
    let (c, hw) = (64, 56);
    let mut p = Conv2dParams::new(1, c, hw, hw, c, 3, 3);
    p.pads = [1, 1, 1, 1];
    let x = upload(kit, DType::F32, c * hw * hw, 3, 1.0)?;
    let w = upload(kit, DType::F32, c * c * 9, 4, 0.05)?;
    let bias = upload(kit, DType::F32, c, 5, 0.1)?;
    let y = kit.alloc(DType::F32, c * hw * hw)?;
    let flops = Work::Flops(2 * (c * hw * hw * c * 9) as u64);
    b.run("conv2d", "conv2d", flops, || {
        ops::conv2d(kit, &y, &x, &w, Some(&bias), &p)
    })
}

fn attention_workload(b: &Bench<'_>) -> Result<()> {
    if !b.opts.want("attention") {
        return Ok(());
    }
    let kit = b.kit;
    let (h, s, d) = (12, 512, 64);
    let shape = AttentionShape::new(h, s, s, d);
    let [q, k, v] = [6, 7, 8].map(|seed| upload(kit, DType::F32, h * s * d, seed, 1.0));
    let (q, k, v) = (q?, k?, v?);
    let out = kit.alloc(DType::F32, h * s * d)?;
    let scores = kit.alloc(DType::F32, h * s * s)?;
    let flops = Work::Flops(4 * (h * s * s * d) as u64);
    b.run("attention", "attention (fused)", flops, || {
        ops::attention(kit, &out, &q, &k, &v, shape)
    })?;
    let no_mask = Buf::absent(DType::F32);
    b.run("attention", "attention_composed", flops, || {
        ops::attention_composed(kit, &out, &scores, &q, &k, &v, &no_mask, 1, shape)
    })
}

fn rowwise_workloads(b: &Bench<'_>) -> Result<()> {
    let kit = b.kit;
    if b.opts.want("softmax") {
        let (r, c) = (4096, 1024);
        let x = upload(kit, DType::F32, r * c, 9, 4.0)?;
        let y = kit.alloc(DType::F32, r * c)?;
        b.run(
            "softmax",
            "softmax_rows",
            Work::Bytes(8 * (r * c) as u64),
            || ops::softmax_rows(kit, &y, &x, r, c),
        )?;
    }
    if b.opts.want("layer_norm") {
        let (r, c) = (4096, 768);
        let x = upload(kit, DType::F32, r * c, 10, 1.0)?;
        let g = upload(kit, DType::F32, c, 11, 1.0)?;
        let be = upload(kit, DType::F32, c, 12, 1.0)?;
        let y = kit.alloc(DType::F32, r * c)?;
        let p = LayerNorm {
            rows: r,
            n: c,
            eps: 1e-5,
        };
        b.run(
            "layer_norm",
            "layer_norm",
            Work::Bytes(8 * (r * c) as u64),
            || ops::layer_norm(kit, &y, &x, &g, &be, p),
        )?;
    }
    Ok(())
}

type UnaryFn = fn(&Kit, &Buf, &Buf) -> Result<()>;

fn elementwise_workloads(b: &Bench<'_>) -> Result<()> {
    let kit = b.kit;
    let unaries: [(&str, &str, UnaryFn); 5] = [
        ("gelu", "gelu (erf form)", ops::gelu),
        ("exp", "exp", ops::exp),
        ("erf", "erf", ops::erf),
        ("tanh", "tanh", ops::tanh),
        ("sigmoid", "sigmoid", ops::sigmoid),
    ];
    let wanted = |w: &str| b.opts.want(w);
    if !unaries.iter().any(|u| wanted(u.0)) && !wanted("add") && !wanted("sum") {
        return Ok(());
    }
    let x = upload(kit, DType::F32, N_ELEM, 13, 2.0)?;
    let y = kit.alloc(DType::F32, N_ELEM)?;
    let n = N_ELEM as u64;
    for (name, imp, f) in unaries {
        if wanted(name) {
            b.run(name, imp, Work::Bytes(8 * n), || f(kit, &y, &x))?;
        }
    }
    if wanted("add") {
        let z = upload(kit, DType::F32, N_ELEM, 14, 1.0)?;
        b.run("add", "add", Work::Bytes(12 * n), || {
            ops::add(kit, &y, &x, &z)
        })?;
    }
    if wanted("sum") {
        let s = kit.alloc(DType::F32, 1)?;
        b.run("sum", "sum", Work::Bytes(4 * n), || ops::sum(kit, &s, &x))?;
    }
    Ok(())
}

/// The memory-bandwidth reference: a plain copy split over `threads` OS threads
/// (`copy_from_slice`, i.e. memcpy), at the elementwise workloads' size and at 4×.
fn copy_workload(b: &Bench<'_>) -> Result<()> {
    if !b.opts.want("copy") {
        return Ok(());
    }
    for (name, n) in [("copy", N_ELEM), ("copy_4x", 4 * N_ELEM)] {
        let src: Vec<f32> = data(n, 15, 1.0).into_iter().map(|v| v as f32).collect();
        let mut dst = vec![0.0f32; n];
        let chunk = n.div_ceil(b.threads.max(1));
        b.run(
            name,
            "memcpy (std threads)",
            Work::Bytes(8 * n as u64),
            || {
                std::thread::scope(|sc| {
                    for (d, s) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                        sc.spawn(move || d.copy_from_slice(s));
                    }
                });
                Ok(())
            },
        )?;
    }
    Ok(())
}

/// The synthetic post-LN (BERT-style) encoder layer: hidden 768, 12 heads, FFN 3072,
/// batch 8 × sequence 128, random weights; the same graph as run.sh's onnxruntime one.
mod encoder {
    use super::{Bench, Work, upload};
    use gpukit::ops::{self, AttentionShape, GemmParams, LayerNorm};
    use gpukit::prelude::*;

    const BATCH: usize = 8;
    const SEQ: usize = 128;
    const HIDDEN: usize = 768;
    const HEADS: usize = 12;
    const FFN: usize = 3072;

    /// A linear layer `[in, out]` with bias, uploaded once.
    struct Linear {
        w: Buf,
        b: Buf,
        p: GemmParams,
    }

    impl Linear {
        fn new(kit: &Kit, rows: usize, inp: usize, out: usize, seed: u64) -> Result<Linear> {
            Ok(Linear {
                w: upload(kit, DType::F32, inp * out, seed, 1.0 / (inp as f64).sqrt())?,
                b: upload(kit, DType::F32, out, seed + 100, 0.02)?,
                p: GemmParams::new(rows, inp, out),
            })
        }

        /// `y = x · W + b`.
        fn apply(&self, kit: &Kit, y: &Buf, x: &Buf) -> Result<()> {
            ops::gemm(kit, y, x, &self.w, None, Some(&self.b), &self.p)
        }
    }

    /// Nominal FLOPs of one layer: the six matmuls and the attention's two products.
    fn flops() -> u64 {
        let t = (BATCH * SEQ) as u64;
        let (h, f) = (HIDDEN as u64, FFN as u64);
        let d = h / HEADS as u64;
        2 * t * (4 * h * h + 2 * h * f) + 4 * (BATCH * HEADS * SEQ * SEQ) as u64 * d
    }

    pub(super) fn workload(b: &Bench<'_>) -> Result<()> {
        if !b.opts.want("encoder") {
            return Ok(());
        }
        let kit = b.kit;
        let t = BATCH * SEQ;
        let [wq, wk, wv, wo] = [20, 21, 22, 23].map(|s| Linear::new(kit, t, HIDDEN, HIDDEN, s));
        let (wq, wk, wv, wo) = (wq?, wk?, wv?, wo?);
        let w1 = Linear::new(kit, t, HIDDEN, FFN, 24)?;
        let w2 = Linear::new(kit, t, FFN, HIDDEN, 25)?;
        let ln = |seed| -> Result<(Buf, Buf)> {
            let g: Vec<f64> = super::data(HIDDEN, seed, 0.02)
                .iter()
                .map(|v| 1.0 + v)
                .collect();
            Ok((
                kit.upload_f64(DType::F32, &g)?,
                upload(kit, DType::F32, HIDDEN, seed + 1, 0.02)?,
            ))
        };
        let ((g1, be1), (g2, be2)) = (ln(30)?, ln(32)?);
        let lnp = LayerNorm {
            rows: t,
            n: HIDDEN,
            eps: 1e-12,
        };
        let x = upload(kit, DType::F32, t * HIDDEN, 34, 1.0)?;
        let th = || kit.alloc(DType::F32, t * HIDDEN);
        let (q, k, v, ctx, tmp, h1, tmp2, y) =
            (th()?, th()?, th()?, th()?, th()?, th()?, th()?, th()?);
        let (f1, f2) = (
            kit.alloc(DType::F32, t * FFN)?,
            kit.alloc(DType::F32, t * FFN)?,
        );
        let shape = AttentionShape::new(HEADS, SEQ, SEQ, HIDDEN / HEADS);
        let no_mask = Buf::absent(DType::F32);
        let mut layer = || -> Result<()> {
            wq.apply(kit, &q, &x)?;
            wk.apply(kit, &k, &x)?;
            wv.apply(kit, &v, &x)?;
            ops::attention_batch(kit, &ctx, &q, &k, &v, &no_mask, BATCH, shape)?;
            wo.apply(kit, &tmp, &ctx)?;
            ops::add(kit, &tmp, &tmp, &x)?;
            ops::layer_norm(kit, &h1, &tmp, &g1, &be1, lnp)?;
            w1.apply(kit, &f1, &h1)?;
            ops::gelu(kit, &f2, &f1)?;
            w2.apply(kit, &tmp2, &f2)?;
            ops::add(kit, &tmp2, &tmp2, &h1)?;
            ops::layer_norm(kit, &y, &tmp2, &g2, &be2, lnp)
        };
        b.run(
            "encoder",
            "gemm/attention_batch/add/layer_norm/gelu",
            Work::Flops(flops()),
            &mut layer,
        )?;
        profile(b, &mut layer)
    }

    /// One more layer under gpukit's profiler: where its time goes, per kernel, as a
    /// `{"profile":"encoder",...}` line (not part of the timed runs).
    fn profile(b: &Bench<'_>, layer: &mut impl FnMut() -> Result<()>) -> Result<()> {
        let kit = b.kit;
        kit.reset_profile();
        kit.set_profiling(true);
        let ran = layer();
        kit.set_profiling(false);
        ran?;
        let entries: Vec<String> = kit
            .profile_report()
            .entries
            .iter()
            .map(|e| {
                format!(
                    "{{\"kernel\":\"{}\",\"calls\":{},\"seconds\":{:e},\"share\":{:.4}}}",
                    e.name.replace(['"', '\\'], "'"),
                    e.calls,
                    e.total.as_secs_f64(),
                    e.share
                )
            })
            .collect();
        kit.reset_profile();
        println!(
            "{{\"side\":\"gpukit\",\"profile\":\"encoder\",\"threads\":{},\"entries\":[{}]}}",
            b.threads,
            entries.join(",")
        );
        Ok(())
    }
}

/// The MiniLM ONNX file (`tools/model/fetch.sh`) through gpukit-onnx, on the batch both
/// sides build the same way (8 sentences of 35 to 26 tokens, padded to 35).
mod minilm_onnx {
    use super::*;

    /// Token ids and mask, `[8, 35]` row-major: `[CLS]`, varied word ids, `[SEP]`, then
    /// padding (anchors.py builds the same).
    pub(super) fn batch() -> (Vec<i64>, Vec<i64>) {
        let (b, s) = (8usize, 35usize);
        let (mut ids, mut mask) = (vec![0i64; b * s], vec![0i64; b * s]);
        for r in 0..b {
            let len = s - 3 * (r % 4);
            for t in 0..len {
                ids[r * s + t] = if t == 0 {
                    101
                } else if t == len - 1 {
                    102
                } else {
                    1000 + ((r * 131 + t * 37) % 20000) as i64
                };
                mask[r * s + t] = 1;
            }
        }
        (ids, mask)
    }

    pub(super) fn workload(b: &Bench<'_>) -> Result<()> {
        if !b.opts.want("minilm_onnx") {
            return Ok(());
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let path = match std::env::var_os("GPUKIT_MODEL_DIR") {
            Some(d) => std::path::PathBuf::from(d),
            None => root.join("target/model"),
        }
        .join("paraphrase-MiniLM-L3-v2.onnx");
        let onnx_err = |e: gpukit_onnx::OnnxError| gpukit::Error::InvalidArgument {
            op: "gpukit-onnx".into(),
            reason: e.to_string(),
        };
        if !path.exists() {
            println!(
                "{{\"side\":\"gpukit\",\"workload\":\"minilm_onnx\",\"impl\":\"gpukit_onnx.Session\",\
                 \"threads\":{},\"skipped\":\"no model (run tools/model/fetch.sh)\"}}",
                b.threads
            );
            return Ok(());
        }
        let model = gpukit_onnx::Model::load(&path).map_err(onnx_err)?;
        let mut session = gpukit_onnx::Session::new(&model, b.kit).map_err(onnx_err)?;
        let (ids, mask) = batch();
        let ids = gpukit::Tensor::from_slice(b.kit, &ids, &[8, 35])?;
        let mask = gpukit::Tensor::from_slice(b.kit, &mask, &[8, 35])?;
        // The linear layers' multiply-adds (3 layers of 4·384² + 2·384·1536 per token).
        let flops = 2 * 8 * 35 * 3 * (4 * 384 * 384 + 2 * 384 * 1536) as u64;
        b.run(
            "minilm_onnx",
            "gpukit_onnx.Session",
            Work::Flops(flops),
            || {
                session
                    .run(&[("input_ids", &ids), ("attention_mask", &mask)])
                    .map_err(onnx_err)?;
                Ok(())
            },
        )
    }
}

fn main() -> std::process::ExitCode {
    let opts = match Opts::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_compare: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(opts: &Opts) -> Result<()> {
    let kit = gpukit::open("cpu")?;
    let threads = kit.info().parallelism;
    println!(
        "{{\"side\":\"gpukit\",\"info\":{{\"device\":\"{}\",\"threads\":{threads},\
         \"simd\":\"{:?}\",\"version\":\"{}\"}}}}",
        kit.info().name.replace('"', "'"),
        gpukit::cpu_simd::simd_level(),
        env!("CARGO_PKG_VERSION")
    );
    let b = Bench {
        kit: &kit,
        opts,
        threads,
    };
    type Group = fn(&Bench<'_>) -> Result<()>;
    let groups: [(&str, Group); 8] = [
        ("copy", copy_workload),
        ("gemm", gemm_workloads),
        ("conv2d", conv_workload),
        ("attention", attention_workload),
        ("rowwise", rowwise_workloads),
        ("elementwise", elementwise_workloads),
        ("encoder", encoder::workload),
        ("minilm_onnx", minilm_onnx::workload),
    ];
    // A group that fails (an op on main that errors) is reported and skipped, so the
    // rest of the table still comes out.
    for (group, f) in groups {
        if let Err(e) = f(&b) {
            let msg = e.to_string().replace(['"', '\\', '\n'], "'");
            println!(
                "{{\"side\":\"gpukit\",\"group\":\"{group}\",\"threads\":{threads},\
                 \"error\":\"{msg}\"}}"
            );
        }
    }
    Ok(())
}
