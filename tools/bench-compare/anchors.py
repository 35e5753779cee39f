#!/usr/bin/env python3
"""The anchors of tools/bench-compare/run.sh: numpy (OpenBLAS) and onnxruntime.

Runs the harness's workloads through numpy or onnxruntime at a given thread count and
prints one JSON line per measurement (the same schema as gpukit's `bench_compare`
binary):

    {"side": "numpy"|"onnxruntime", "workload": ..., "impl": ..., "threads": N,
     "seconds": best, "median": median, "reps": n, "flops": F | "bytes": B}

plus `{"side": ..., "info": {...}}` lines (library versions, OpenBLAS kernel) and
`{"side": ..., "workload": ..., "impl": ..., "skipped": reason}` for an anchor that
does not run here (for instance a contrib op this onnxruntime build lacks).

numpy and onnxruntime run in separate processes (`--side`), so that run.sh can unset
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for the numpy process alone.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

MI = 1 << 20
N_ELEM = 16 * MI  # elementwise / reduction length (16 Mi f32)
SEED = 12


def emit(rec):
    print(json.dumps(rec), flush=True)


def time_it(f, quick):
    """Warm-up, then timed runs until the rep count or time budget is reached.

    Returns (best, median, reps)."""
    f()
    budget = 1.0 if quick else 3.0
    min_reps, max_reps = (3, 10) if quick else (5, 30)
    times = []
    start = time.perf_counter()
    while len(times) < max_reps:
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
        if len(times) >= min_reps and time.perf_counter() - start > budget:
            break
    times.sort()
    return times[0], times[len(times) // 2], len(times)


def record(side, workload, impl, threads, f, quick, flops=None, nbytes=None,
           extra=None):
    best, med, reps = time_it(f, quick)
    rec = {
        "side": side,
        "workload": workload,
        "impl": impl,
        "threads": threads,
        "seconds": best,
        "median": med,
        "reps": reps,
    }
    if flops is not None:
        rec["flops"] = flops
    if nbytes is not None:
        rec["bytes"] = nbytes
    rec.update(extra or {})
    emit(rec)


def skipped(side, workload, impl, threads, reason):
    emit(
        {
            "side": side,
            "workload": workload,
            "impl": impl,
            "threads": threads,
            "skipped": reason,
        }
    )


def rand(rng, shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def ref_softmax(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def ref_layer_norm(x, g, b, eps):
    x = np.asarray(x, np.float64)
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def ref_attention(q, k, v):
    """softmax(q·kᵀ/√d)·v over the last two axes, in float64."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    return ref_softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v


def ref_gelu(x):
    import math

    x = np.asarray(x, np.float64)
    return x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


# ---------------------------------------------------------------- numpy ----------


def run_numpy(threads, quick, only):
    import threadpoolctl

    side = "numpy"
    rng = np.random.default_rng(SEED)
    with threadpoolctl.threadpool_limits(limits=threads):
        info = threadpoolctl.threadpool_info()
        emit(
            {
                "side": side,
                "info": {
                    "numpy": np.__version__,
                    "threadpoolctl": threadpoolctl.__version__,
                    "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
                    "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
                    "blas": [
                        {
                            k: lib.get(k)
                            for k in (
                                "internal_api",
                                "version",
                                "architecture",
                                "threading_layer",
                                "num_threads",
                                "filepath",
                            )
                        }
                        for lib in info
                    ],
                },
            }
        )
        for name, dt in (("sgemm_1024", np.float32), ("dgemm_1024", np.float64)):
            if not want(only, name):
                continue
            n = 1024
            a, b = rand(rng, (n, n), dt), rand(rng, (n, n), dt)
            c = np.empty((n, n), dt)
            record(
                side, name, "numpy.matmul", threads,
                lambda: np.matmul(a, b, out=c), quick, flops=2 * n**3,
            )
        # Elementwise numpy is single-threaded whatever the BLAS pool says; it is
        # the memory-speed reference, recorded at threads = 1 only.
        if threads == 1:
            x, y = rand(rng, N_ELEM), rand(rng, N_ELEM)
            z = np.empty_like(x)
            if want(only, "add"):
                record(side, "add", "numpy.add", 1, lambda: np.add(x, y, out=z),
                       quick, nbytes=3 * 4 * N_ELEM)
            if want(only, "sum"):
                record(side, "sum", "numpy.sum", 1, lambda: x.sum(), quick,
                       nbytes=4 * N_ELEM)
            if want(only, "copy"):
                big = rand(rng, 4 * N_ELEM)  # 256 MiB, well past any cache
                dst = np.empty_like(big)
                record(side, "copy", "numpy.copyto", 1, lambda: np.copyto(dst, big),
                       quick, nbytes=2 * big.nbytes)


# ---------------------------------------------------------------- onnxruntime ----


def run_ort(threads, quick, only):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    side = "onnxruntime"
    emit(
        {
            "side": side,
            "info": {
                "onnxruntime": ort.__version__,
                "onnx": onnx.__version__,
                "numpy": np.__version__,
                "providers": ort.get_available_providers(),
            },
        }
    )
    rng = np.random.default_rng(SEED)
    F = TensorProto.FLOAT

    def vi(name, shape, elem=F):
        return helper.make_tensor_value_info(name, elem, shape)

    def session(nodes, inputs, outputs, inits=(), opset=20, ms=False, profile_dir=None):
        imports = [helper.make_opsetid("", opset)]
        if ms:
            imports.append(helper.make_opsetid("com.microsoft", 1))
        g = helper.make_graph(list(nodes), "bench", inputs, outputs,
                              initializer=list(inits))
        m = helper.make_model(g, opset_imports=imports)
        m.ir_version = min(m.ir_version, 10)
        if not ms:
            onnx.checker.check_model(m)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if profile_dir:
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(profile_dir, "ort_profile")
        return ort.InferenceSession(m.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])

    def bench(workload, impl, build, feeds, flops=None, nbytes=None, expect=None):
        """Builds the session (skips the anchor if it fails) and times its run.

        Inputs are bound once with io_binding and outputs stay on the CPU device, so
        the timed call does not convert its inputs or copy its result back to numpy.
        `expect`, when given, computes the result in plain numpy (float64): the first
        output is checked against it once, before timing, so a mistake in a graph
        cannot pass for a fast anchor; the record says `"check": "ok ..."` or
        `"MISMATCH ..."`."""
        if not want(only, workload):
            return
        try:
            sess = build()
            binding = sess.io_binding()
            for k, v in feeds.items():
                binding.bind_cpu_input(k, v)
            for o in sess.get_outputs():
                binding.bind_output(o.name, "cpu")
            sess.run_with_iobinding(binding)
        except Exception as e:  # noqa: BLE001 (an anchor that does not run is skipped)
            skipped(side, workload, impl, threads, f"{type(e).__name__}: {e}"[:300])
            return
        extra = {}
        if expect is not None:
            got = binding.copy_outputs_to_cpu()[0].astype(np.float64)
            want_ = np.asarray(expect(), np.float64).reshape(got.shape)
            err = float(np.max(np.abs(got - want_)) / max(1.0, float(np.max(np.abs(want_)))))
            extra["check"] = ("ok" if err < 1e-3 else "MISMATCH") + f", rel err {err:.1e}"
        record(side, workload, impl, threads,
               lambda: sess.run_with_iobinding(binding), quick,
               flops=flops, nbytes=nbytes, extra=extra)

    # SGEMM through onnxruntime's MatMul (a second anchor beside numpy).
    n = 1024
    a, b = rand(rng, (n, n)), rand(rng, (n, n))
    bench("sgemm_1024", "ort.MatMul",
          lambda: session([helper.make_node("MatMul", ["A", "B"], ["C"])],
                          [vi("A", [n, n]), vi("B", [n, n])], [vi("C", [n, n])]),
          {"A": a, "B": b}, flops=2 * n**3)

    # conv2d 64 -> 64, 3x3, pad 1, on 1x64x56x56 (weights and bias as initializers).
    c, hw = 64, 56
    x = rand(rng, (1, c, hw, hw))
    w = rand(rng, (c, c, 3, 3), scale=0.05)
    bias = rand(rng, (c,), scale=0.1)
    bench("conv2d", "ort.Conv",
          lambda: session(
              [helper.make_node("Conv", ["X", "W", "Bc"], ["Y"], pads=[1, 1, 1, 1],
                                kernel_shape=[3, 3])],
              [vi("X", [1, c, hw, hw])], [vi("Y", [1, c, hw, hw])],
              [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "Bc")]),
          {"X": x}, flops=2 * c * hw * hw * c * 9,
          expect=lambda: ref_conv3x3(x, w, bias))

    # attention: 12 heads x 512 queries x 512 keys x 64, head-major [1, H, S, d].
    H, S, D = 12, 512, 64
    q, k, v = (rand(rng, (1, H, S, D)) for _ in range(3))
    att_flops = 4 * H * S * S * D
    scale = np.array(1.0 / np.sqrt(D), np.float32)

    def mmsm():
        nodes = [
            helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", ["Q", "Kt"], ["S0"]),
            helper.make_node("Mul", ["S0", "scale"], ["S1"]),
            helper.make_node("Softmax", ["S1"], ["P"], axis=-1),
            helper.make_node("MatMul", ["P", "V"], ["O"]),
        ]
        shp = [1, H, S, D]
        return session(nodes, [vi("Q", shp), vi("K", shp), vi("V", shp)], [vi("O", shp)],
                       [numpy_helper.from_array(scale, "scale")])

    bench("attention", "ort.MatMul-Softmax-MatMul", mmsm, {"Q": q, "K": k, "V": v},
          flops=att_flops, expect=lambda: ref_attention(q, k, v))

    # onnxruntime's fused contrib op, on [1, S, H*d] (its layout).
    q3, k3, v3 = (t.transpose(0, 2, 1, 3).reshape(1, S, H * D).copy() for t in (q, k, v))
    bench("attention", "ort.com.microsoft.MultiHeadAttention",
          lambda: session(
              [helper.make_node("MultiHeadAttention", ["Q", "K", "V"], ["O"],
                                domain="com.microsoft", num_heads=H)],
              [vi("Q", [1, S, H * D]), vi("K", [1, S, H * D]), vi("V", [1, S, H * D])],
              [vi("O", [1, S, H * D])], ms=True),
          {"Q": q3, "K": k3, "V": v3}, flops=att_flops,
          expect=lambda: ref_attention(q, k, v).transpose(0, 2, 1, 3).reshape(1, S, H * D))

    # The standard Attention op (opset 23), where this onnxruntime has a CPU kernel.
    shp = [1, H, S, D]
    bench("attention", "ort.Attention(opset 23)",
          lambda: session([helper.make_node("Attention", ["Q", "K", "V"], ["O"])],
                          [vi("Q", shp), vi("K", shp), vi("V", shp)], [vi("O", shp)],
                          opset=23),
          {"Q": q, "K": k, "V": v}, flops=att_flops, expect=lambda: ref_attention(q, k, v))

    # softmax rows 4096 x 1024; layer_norm 4096 x 768.
    r, cc = 4096, 1024
    xs = rand(rng, (r, cc))
    bench("softmax", "ort.Softmax",
          lambda: session([helper.make_node("Softmax", ["X"], ["Y"], axis=-1)],
                          [vi("X", [r, cc])], [vi("Y", [r, cc])]),
          {"X": xs}, nbytes=2 * 4 * r * cc, expect=lambda: ref_softmax(xs))
    r, cc = 4096, 768
    xl = rand(rng, (r, cc))
    g_, b_ = rand(rng, (cc,)), rand(rng, (cc,))
    bench("layer_norm", "ort.LayerNormalization",
          lambda: session(
              [helper.make_node("LayerNormalization", ["X", "G", "Bl"], ["Y"], axis=-1,
                                epsilon=1e-5)],
              [vi("X", [r, cc])], [vi("Y", [r, cc])],
              [numpy_helper.from_array(g_, "G"), numpy_helper.from_array(b_, "Bl")]),
          {"X": xl}, nbytes=2 * 4 * r * cc,
          expect=lambda: ref_layer_norm(xl, g_, b_, 1e-5))

    # unary maps on 16 Mi f32.
    xu = rand(rng, N_ELEM, scale=2.0)
    nb = 2 * 4 * N_ELEM

    def unary(op, domain="", opset=20, **attrs):
        return lambda: session(
            [helper.make_node(op, ["X"], ["Y"], domain=domain, **attrs)],
            [vi("X", [N_ELEM])], [vi("Y", [N_ELEM])], opset=opset, ms=bool(domain))

    bench("gelu", "ort.com.microsoft.Gelu", unary("Gelu", "com.microsoft"), {"X": xu},
          nbytes=nb)
    bench("gelu", "ort.Gelu(opset 20)", unary("Gelu"), {"X": xu}, nbytes=nb)
    for op in ("Exp", "Erf", "Tanh", "Sigmoid"):
        bench(op.lower(), f"ort.{op}", unary(op), {"X": xu}, nbytes=nb)
    yu = rand(rng, N_ELEM)
    bench("add", "ort.Add",
          lambda: session([helper.make_node("Add", ["X", "Y"], ["Z"])],
                          [vi("X", [N_ELEM]), vi("Y", [N_ELEM])], [vi("Z", [N_ELEM])]),
          {"X": xu, "Y": yu}, nbytes=3 * 4 * N_ELEM)
    bench("sum", "ort.ReduceSum",
          lambda: session([helper.make_node("ReduceSum", ["X"], ["Y"], keepdims=0)],
                          [vi("X", [N_ELEM])], [vi("Y", [])]),
          {"X": xu}, nbytes=4 * N_ELEM)

    # The synthetic encoder layer (post-LN, BERT style).
    if want(only, "encoder"):
        bench_encoder(bench, session, vi, helper, numpy_helper, rng, threads)
    # The MiniLM ONNX file itself, as gpukit-onnx runs it.
    if want(only, "minilm_onnx"):
        bench_minilm_onnx(bench, ort, threads)


def minilm_batch():
    """The batch bench_compare.rs builds: 8 rows of 35 to 26 tokens, padded to 35."""
    b, s = 8, 35
    ids = np.zeros((b, s), np.int64)
    mask = np.zeros((b, s), np.int64)
    for r in range(b):
        n = s - 3 * (r % 4)
        for t in range(n):
            ids[r, t] = 101 if t == 0 else 102 if t == n - 1 else 1000 + (r * 131 + t * 37) % 20000
            mask[r, t] = 1
    return ids, mask


def bench_minilm_onnx(bench, ort, threads):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(os.environ.get("GPUKIT_MODEL_DIR", os.path.join(root, "target", "model")),
                        "paraphrase-MiniLM-L3-v2.onnx")
    ids, mask = minilm_batch()

    def build():
        if not os.path.exists(path):
            raise RuntimeError("no model (run tools/model/fetch.sh)")
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    flops = 2 * 8 * 35 * 3 * (4 * 384 * 384 + 2 * 384 * 1536)
    bench("minilm_onnx", "ort.InferenceSession(file)", build,
          {"input_ids": ids, "attention_mask": mask}, flops=flops)


ENC = {"batch": 8, "seq": 128, "hidden": 768, "heads": 12, "ffn": 3072}


def encoder_flops():
    b, s, h, nh, f = (ENC[k] for k in ("batch", "seq", "hidden", "heads", "ffn"))
    t = b * s
    return 2 * t * (4 * h * h + 2 * h * f) + 4 * b * nh * s * s * (h // nh)


def encoder_weights(rng):
    """Random weights, scaled so activations stay O(1) (the values do not matter)."""
    h, f = ENC["hidden"], ENC["ffn"]
    sw = 1.0 / np.sqrt(h)
    wts = {}
    for nm in ("q", "k", "v", "o"):
        wts["W" + nm] = rand(rng, (h, h), scale=sw)
        wts["b" + nm] = rand(rng, (h,), scale=0.02)
    wts["W1"], wts["b1"] = rand(rng, (h, f), scale=sw), rand(rng, (f,), scale=0.02)
    wts["W2"] = rand(rng, (f, h), scale=1.0 / np.sqrt(f))
    wts["b2"] = rand(rng, (h,), scale=0.02)
    for ln in ("1", "2"):
        wts["g" + ln] = (1.0 + rand(rng, (h,), scale=0.02)).astype(np.float32)
        wts["be" + ln] = rand(rng, (h,), scale=0.02)
    return wts


def ref_conv3x3(x, w, bias):
    """Conv, 3×3, pad 1, stride 1, batch 1, in float64."""
    from numpy.lib.stride_tricks import sliding_window_view

    xp = np.pad(np.asarray(x[0], np.float64), ((0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(1, 2))  # [c, h, w, 3, 3]
    y = np.tensordot(np.asarray(w, np.float64), win, axes=([1, 2, 3], [0, 3, 4]))
    return (y + bias[:, None, None])[None]


def ref_encoder(x, wts):
    """The encoder layer in float64 numpy (the formula both sides implement)."""
    b, s, h, nh = (ENC[k] for k in ("batch", "seq", "hidden", "heads"))
    d = h // nh
    w = {k: np.asarray(v, np.float64) for k, v in wts.items()}
    x2 = np.asarray(x, np.float64).reshape(b * s, h)

    def heads(t):
        return t.reshape(b, s, nh, d).transpose(0, 2, 1, 3)

    q, k, v = (heads(x2 @ w["W" + n] + w["b" + n]) for n in ("q", "k", "v"))
    ctx = ref_attention(q, k, v).transpose(0, 2, 1, 3).reshape(b * s, h)
    h1 = ref_layer_norm(ctx @ w["Wo"] + w["bo"] + x2, w["g1"], w["be1"], 1e-12)
    f = ref_gelu(h1 @ w["W1"] + w["b1"])
    y = ref_layer_norm(f @ w["W2"] + w["b2"] + h1, w["g2"], w["be2"], 1e-12)
    return y.reshape(b, s, h)


def bench_encoder(bench, session, vi, helper, numpy_helper, rng, threads):
    b, s, h, nh = (ENC[k] for k in ("batch", "seq", "hidden", "heads"))
    d = h // nh
    wts = encoder_weights(rng)
    x = rand(rng, (b, s, h))
    consts = {
        "scale": np.array(1.0 / np.sqrt(d), np.float32),
        "shape_bshd": np.array([b, s, nh, d], np.int64),
        "shape_bsh": np.array([b, s, h], np.int64),
    }
    mk = helper.make_node
    nodes = []
    for nm in ("q", "k", "v"):
        nodes += [
            mk("MatMul", ["X", "W" + nm], [nm + "0"]),
            mk("Add", [nm + "0", "b" + nm], [nm + "1"]),
            mk("Reshape", [nm + "1", "shape_bshd"], [nm + "2"]),
            mk("Transpose", [nm + "2"], [nm + "h"],
               perm=[0, 2, 3, 1] if nm == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        mk("MatMul", ["qh", "kh"], ["s0"]),
        mk("Mul", ["s0", "scale"], ["s1"]),
        mk("Softmax", ["s1"], ["p"], axis=-1),
        mk("MatMul", ["p", "vh"], ["ctx0"]),
        mk("Transpose", ["ctx0"], ["ctx1"], perm=[0, 2, 1, 3]),
        mk("Reshape", ["ctx1", "shape_bsh"], ["ctx"]),
        mk("MatMul", ["ctx", "Wo"], ["o0"]),
        mk("Add", ["o0", "bo"], ["o1"]),
        mk("Add", ["o1", "X"], ["r1"]),
        mk("LayerNormalization", ["r1", "g1", "be1"], ["h1"], axis=-1, epsilon=1e-12),
        mk("MatMul", ["h1", "W1"], ["f0"]),
        mk("Add", ["f0", "b1"], ["f1"]),
        mk("Gelu", ["f1"], ["f2"]),
        mk("MatMul", ["f2", "W2"], ["f3"]),
        mk("Add", ["f3", "b2"], ["f4"]),
        mk("Add", ["f4", "h1"], ["r2"]),
        mk("LayerNormalization", ["r2", "g2", "be2"], ["Y"], axis=-1, epsilon=1e-12),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in {**wts, **consts}.items()]
    bench("encoder", "ort.graph(MatMul/Add/Softmax/LayerNorm/Gelu)",
          lambda: session(nodes, [vi("X", [b, s, h])], [vi("Y", [b, s, h])], inits),
          {"X": x}, flops=encoder_flops(), expect=lambda: ref_encoder(x, wts))
    profile_encoder(lambda d: session(nodes, [vi("X", [b, s, h])], [vi("Y", [b, s, h])],
                                      inits, profile_dir=d), x, threads)


def profile_encoder(build, x, threads):
    """One more run of the encoder graph under onnxruntime's profiler (after a warm-up
    run): time per op type of the optimised graph, as a `{"profile": "encoder"}` line."""
    import tempfile

    try:
        with tempfile.TemporaryDirectory() as d:
            sess = build(d)
            sess.run(None, {"X": x})
            sess.run(None, {"X": x})
            with open(sess.end_profiling()) as f:
                events = json.load(f)
    except Exception as e:  # noqa: BLE001 (the profile is extra information)
        emit({"side": "onnxruntime", "profile": "encoder", "threads": threads,
              "error": str(e)[:300]})
        return
    runs = [ev for ev in events if ev.get("name") == "model_run"]
    last_start = runs[-1]["ts"] if runs else 0
    per_op = {}
    for ev in events:
        if ev.get("cat") != "Node" or not ev.get("name", "").endswith("_kernel_time"):
            continue
        if ev.get("ts", 0) < last_start:
            continue
        op = ev.get("args", {}).get("op_name", "?")
        calls, us = per_op.get(op, (0, 0))
        per_op[op] = (calls + 1, us + ev.get("dur", 0))
    total = sum(us for _, us in per_op.values()) or 1
    entries = [{"kernel": op, "calls": c, "seconds": us / 1e6, "share": us / total}
               for op, (c, us) in sorted(per_op.items(), key=lambda kv: -kv[1][1])]
    emit({"side": "onnxruntime", "profile": "encoder", "threads": threads,
          "entries": entries})


def want(only, name):
    return not only or name in only


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=["numpy", "onnxruntime"], required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated workload names")
    args = ap.parse_args()
    only = {w for w in args.only.split(",") if w}
    if args.side == "numpy":
        run_numpy(args.threads, args.quick, only)
    else:
        run_ort(args.threads, args.quick, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
