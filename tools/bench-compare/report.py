#!/usr/bin/env python3
"""Turns the JSON lines of tools/bench-compare/run.sh into the comparison table.

Reads raw.jsonl (gpukit's `bench_compare` lines and anchors.py's lines), reads the
machine from /proc/cpuinfo, and writes table.md and report.json beside raw.jsonl; the
table is also printed. Standard library only.

Rates come from each side's best time: GFLOP/s = flops / seconds / 1e9, GB/s =
bytes / seconds / 1e9 (bytes read plus bytes written once). gpukit ÷ anchor is the
ratio of the rates (= anchor seconds / gpukit seconds): above 1 gpukit is faster.
"""

import json
import os
import re
import sys

# (workload, label, [(gpukit impl, anchor impl, anchor threads or None = same)]).
PAIRS = [
    ("sgemm_1024", "SGEMM 1024³", [
        ("matmul", "numpy.matmul", None),
        ("gemm", "numpy.matmul", None),
        ("matmul", "ort.MatMul", None),
    ]),
    ("dgemm_1024", "DGEMM 1024³", [
        ("matmul", "numpy.matmul", None),
        ("gemm", "numpy.matmul", None),
    ]),
    ("conv2d", "conv2d 64→64 3×3 pad 1, 1×64×56×56", [("conv2d", "ort.Conv", None)]),
    ("attention", "attention 12 h × 512 q × 512 k × 64", [
        ("attention (fused)", "ort.MatMul-Softmax-MatMul", None),
        ("attention_composed", "ort.MatMul-Softmax-MatMul", None),
        ("attention (fused)", "ort.com.microsoft.MultiHeadAttention", None),
        ("attention (fused)", "ort.Attention(opset 23)", None),
    ]),
    ("softmax", "softmax rows 4096×1024", [("softmax_rows", "ort.Softmax", None)]),
    ("layer_norm", "layer_norm 4096×768",
     [("layer_norm", "ort.LayerNormalization", None)]),
    ("gelu", "GELU (erf form), 16 Mi f32", [
        ("gelu (erf form)", "ort.com.microsoft.Gelu", None),
        ("gelu (erf form)", "ort.Gelu(opset 20)", None),
    ]),
    ("exp", "exp, 16 Mi f32", [("exp", "ort.Exp", None)]),
    ("erf", "erf, 16 Mi f32", [("erf", "ort.Erf", None)]),
    ("tanh", "tanh, 16 Mi f32", [("tanh", "ort.Tanh", None)]),
    ("sigmoid", "sigmoid, 16 Mi f32", [("sigmoid", "ort.Sigmoid", None)]),
    ("add", "add, 16 Mi f32", [("add", "ort.Add", None), ("add", "numpy.add", 1)]),
    ("sum", "sum, 16 Mi f32", [("sum", "ort.ReduceSum", None), ("sum", "numpy.sum", 1)]),
    ("encoder", "encoder layer (768, 12 h, FFN 3072, 8×128)",
     [("gemm/attention_batch/add/layer_norm/gelu",
       "ort.graph(MatMul/Add/Softmax/LayerNorm/Gelu)", None)]),
    ("minilm_onnx", "MiniLM-L3 ONNX file (8×35 tokens)",
     [("gpukit_onnx.Session", "ort.InferenceSession(file)", None)]),
]

F64_WORKLOADS = {"dgemm_1024"}

ISA_FLAGS = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw",
             "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni",
             "amx_tile", "amx_bf16", "amx_int8"]


def cpu_info():
    """Model, vendor, ISA flags, logical CPUs, cores and clock from /proc/cpuinfo."""
    txt = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    blocks = [b for b in txt.split("\n\n") if b.strip()]
    first = {}
    for line in (blocks[0].splitlines() if blocks else []):
        if ":" in line:
            k, v = line.split(":", 1)
            first[k.strip()] = v.strip()
    flags = set(first.get("flags", "").split())
    cores = {(b_get(b, "physical id"), b_get(b, "core id")) for b in blocks}
    model = first.get("model name", "unknown CPU")
    m = re.search(r"@\s*([0-9.]+)\s*GHz", model)
    if os.environ.get("BENCH_GHZ"):
        ghz, ghz_src = float(os.environ["BENCH_GHZ"]), "$BENCH_GHZ"
    elif m:
        ghz, ghz_src = float(m.group(1)), "the model name's nominal clock"
    elif first.get("cpu MHz"):
        ghz, ghz_src = float(first["cpu MHz"]) / 1000.0, "/proc/cpuinfo's `cpu MHz`"
    else:
        ghz, ghz_src = None, "unknown"
    vendor = first.get("vendor_id", "")
    if "avx512f" in flags and vendor == "AuthenticAMD":
        lanes, units, why = 16, 1, "AMD with AVX-512 (Zen 4 runs a 512-bit FMA as two " \
            "256-bit halves on its two FMA pipes: counted as one 512-bit unit)"
    elif "avx512f" in flags:
        lanes, units, why = 16, 2, "Intel with AVX-512: two 512-bit FMA units (server " \
            "Xeons; some models have one)"
    elif "avx2" in flags and "fma" in flags:
        lanes, units, why = 8, 2, "AVX2 + FMA: two 256-bit FMA units"
    else:
        lanes, units, why = 4, 1, "no FMA: one 128-bit mul+add pair per cycle"
    if os.environ.get("BENCH_FMA_UNITS"):
        units, why = int(os.environ["BENCH_FMA_UNITS"]), why + "; units from $BENCH_FMA_UNITS"
    return {
        "model": model,
        "vendor": vendor,
        "isa": [f for f in ISA_FLAGS if f in flags],
        "logical_cpus": len(blocks) or os.cpu_count(),
        "physical_cores": len(cores) if blocks else None,
        "ghz": ghz,
        "ghz_source": ghz_src,
        "f32_lanes": lanes,
        "fma_units": units,
        "fma_assumption": why,
    }


def b_get(block, key):
    for line in block.splitlines():
        if line.split(":", 1)[0].strip() == key:
            return line.split(":", 1)[1].strip()
    return None


def peak(cpu, threads, f64=False):
    """Nominal FMA peak in GFLOP/s: threads × GHz × FMA units × lanes × 2."""
    if not cpu["ghz"]:
        return None
    lanes = cpu["f32_lanes"] // (2 if f64 else 1)
    return threads * cpu["ghz"] * cpu["fma_units"] * lanes * 2


def rate(rec):
    if "flops" in rec:
        return rec["flops"] / rec["seconds"] / 1e9, "GFLOP/s"
    return rec["bytes"] / rec["seconds"] / 1e9, "GB/s"


def fmt(x):
    if x is None:
        return "—"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def sig(x):
    """Two decimals, or two significant digits below 0.1."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def pct(x):
    """Whole percent, or two significant digits below 10%."""
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


def main():
    out_dir = sys.argv[1]
    recs, infos, skips, errors, profiles = [], {}, [], [], []
    rounds = 1
    with open(os.path.join(out_dir, "raw.jsonl")) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "rounds" in r:
                rounds = r["rounds"]
            elif "info" in r:
                infos.setdefault(r["side"], r["info"])
            elif "profile" in r:
                profiles.append(r)
            elif "skipped" in r:
                skips.append(r)
            elif "error" in r:
                errors.append(r)
            else:
                recs.append(r)
    # With several rounds (run.sh --rounds), each (workload, impl, threads) keeps its
    # best record: the fastest time seen, the same rule as within a round.
    by = {}
    for r in recs:
        key = (r["workload"], r["impl"], r["threads"])
        if key not in by or r["seconds"] < by[key]["seconds"]:
            by[key] = r
    cpu = cpu_info()
    bw_names = ("copy", "copy_4x")
    thread_counts = sorted({r["threads"] for r in recs
                            if r["side"] == "gpukit" and r["workload"] not in bw_names},
                           reverse=True)
    # The bandwidth reference at each thread count: the faster of the two memcpy
    # sizes (glibc's memcpy switches to non-temporal stores only for large copies).
    copy_bw = {}
    for r in recs:
        if r["side"] == "gpukit" and r["workload"] in bw_names:
            t = r["threads"]
            copy_bw[t] = max(copy_bw.get(t, 0.0), rate(r)[0])

    rows = []
    for t in thread_counts:
        for wl, label, pairs in PAIRS:
            for g_impl, a_impl, a_threads in pairs:
                g = by.get((wl, g_impl, t))
                a = by.get((wl, a_impl, a_threads or t))
                if g is None and a is None:
                    continue
                g_rate, unit = rate(g) if g else (None, None)
                a_rate, a_unit = rate(a) if a else (None, None)
                unit = unit or a_unit
                roof = None
                if g_rate is not None and unit == "GFLOP/s":
                    p = peak(cpu, t, wl in F64_WORKLOADS)
                    roof = g_rate / p if p else None
                elif g_rate is not None and copy_bw.get(t):
                    roof = g_rate / copy_bw[t]
                a_name = a_impl + (f" ({a_threads} thread)" if a_threads else "")
                rows.append({
                    "workload": wl, "label": label, "threads": t, "unit": unit,
                    "gpukit_impl": g_impl, "gpukit": g_rate, "gpukit_median_s":
                    g and g["median"], "anchor_impl": a_name, "anchor": a_rate,
                    "anchor_median_s": a and a["median"],
                    "ratio": g_rate / a_rate if g_rate and a_rate else None,
                    "of_roofline": roof,
                })

    lines = []
    lines.append(f"Machine: {cpu['model']} ({cpu['vendor']}), {cpu['logical_cpus']} "
                 f"logical CPUs / {cpu['physical_cores']} cores; ISA: "
                 f"{' '.join(cpu['isa'])}.")
    g_info = infos.get("gpukit", {})
    if g_info:
        simd = os.environ.get("GPUKIT_CPU_SIMD")
        lines.append(f"gpukit {g_info.get('version')}: CPU backend, SIMD level "
                     f"{g_info.get('simd')}" + (f" (GPUKIT_CPU_SIMD={simd})" if simd else "")
                     + ", device-resident buffers.")
    np_info = infos.get("numpy", {})
    for lib in np_info.get("blas", []):
        lines.append(f"numpy {np_info.get('numpy')}: {lib.get('internal_api')} "
                     f"{lib.get('version')}, kernel (corestype) "
                     f"`{lib.get('architecture')}`, {lib.get('threading_layer')}.")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if os.environ.get(var):
            lines.append(f"{var}={os.environ[var]} is set on this machine; unset for the "
                         "numpy run only.")
    ort_info = infos.get("onnxruntime", {})
    if ort_info:
        lines.append(f"onnxruntime {ort_info.get('onnxruntime')} (CPUExecutionProvider, "
                     f"intra_op_num_threads = threads), onnx {ort_info.get('onnx')}.")
    lines.append("")
    lines.append("| work | threads | gpukit op | gpukit | anchor | anchor rate | "
                 "gpukit ÷ anchor | gpukit of roofline |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        unit = r["unit"] or ""
        ratio = f"{sig(r['ratio'])}×" if r["ratio"] else "—"
        roof = f"{pct(100 * r['of_roofline'])}%" if r["of_roofline"] else "—"
        lines.append(f"| {r['label']} | {r['threads']} | {r['gpukit_impl']} | "
                     f"{fmt(r['gpukit'])} {unit} | {r['anchor_impl']} | "
                     f"{fmt(r['anchor'])} {unit} | {ratio} | {roof} |")
    lines.append("")
    lines.append("Roofline references:")
    for t in sorted(copy_bw):
        sizes = []
        for name, size in (("copy", "64 MiB"), ("copy_4x", "256 MiB")):
            c = by.get((name, "memcpy (std threads)", t))
            if c:
                sizes.append(f"{fmt(rate(c)[0])} at {size}")
        lines.append(f"- memory bandwidth, {t} thread(s): {fmt(copy_bw[t])} GB/s "
                     f"(memcpy, bytes read + written; {', '.join(sizes)})")
    npc = by.get(("copy", "numpy.copyto", 1))
    if npc:
        lines.append(f"- numpy copy (256 MiB, 1 thread): {fmt(rate(npc)[0])} GB/s")
    if cpu["ghz"]:
        for t in thread_counts:
            lines.append(
                f"- FMA peak, {t} thread(s): {fmt(peak(cpu, t))} GFLOP/s f32, "
                f"{fmt(peak(cpu, t, True))} f64 = {t} × {cpu['ghz']:.2f} GHz × "
                f"{cpu['fma_units']} FMA units × {cpu['f32_lanes']} f32 lanes × 2")
        lines.append(f"  (clock from {cpu['ghz_source']}; {cpu['fma_assumption']})")
    lines.append("")
    if rounds > 1:
        lines.append(f"{rounds} rounds, interleaved (gpukit, numpy, onnxruntime, then "
                     "again): each side's best time over all rounds, so that a slow "
                     "minute on a shared host does not fall on one side only.")
    lines.append("Rates from each side's best time; ratio = gpukit rate ÷ anchor rate "
                 "(> 1: gpukit faster). Roofline: compute-bound rows against the FMA "
                 "peak, memory-bound rows against the memcpy bandwidth at that thread "
                 "count.")
    # One profile per (side, threads): the last round's.
    profiles = list({(p["side"], p.get("threads", 0)): p for p in profiles}.values())
    if profiles:
        lines.append("")
        lines.append("Encoder layer, where the time goes (one profiled run after the "
                     "timed ones; kernel: seconds, share):")
        for p in sorted(profiles, key=lambda p: (-p.get("threads", 0), p["side"])):
            if "error" in p:
                lines.append(f"- {p['side']}, {p.get('threads')} threads: no profile "
                             f"({p['error']})")
                continue
            parts = [f"{e['kernel']} ×{e['calls']}: {e['seconds'] * 1e3:.1f} ms, "
                     f"{100 * e['share']:.0f}%" for e in p["entries"]]
            total = sum(e["seconds"] for e in p["entries"])
            lines.append(f"- {p['side']}, {p.get('threads')} threads "
                         f"({total * 1e3:.0f} ms in kernels): {'; '.join(parts)}")
    lines.append("")
    checked = [r for r in recs if "check" in r]
    bad = [r for r in checked if not r["check"].startswith("ok")]
    if checked:
        lines.append(f"Anchor graphs checked once against float64 numpy before timing: "
                     f"{len(checked) - len(bad)} of {len(checked)} agree (rel err < 1e-3).")
    for r in bad:
        lines.append(f"- **{r['impl']} ({r['workload']}, {r['threads']} threads) does "
                     f"not compute the workload: {r['check']}**")
    for s in skips:
        lines.append(f"- not run: {s['side']} {s['impl']} ({s['workload']}, "
                     f"{s['threads']} threads): {s['skipped']}")
    for e in errors:
        lines.append(f"- gpukit error in group {e['group']} ({e['threads']} threads): "
                     f"{e['error']}")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump({"machine": cpu, "libraries": infos, "memcpy_gbs": copy_bw,
                   "rows": rows, "encoder_profiles": profiles, "skipped": skips,
                   "errors": errors}, f, indent=1)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
