"""onnxruntime's time for the forward of examples/minilm's default batch (the token ids
of examples/minilm/reference/reference.npz), on the shipped ONNX file.

    python tools/model/bench_ort.py [--threads N] [--repeat R]

Prints the first and the best time of R runs (session built and warmed outside the
timing, as the Rust example times its forward with the weights already loaded).
"""

import argparse
import os
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=50)
    a = ap.parse_args()
    model_dir = os.environ.get("GPUKIT_MODEL_DIR", os.path.join(ROOT, "target", "model"))
    ref = np.load(os.path.join(ROOT, "examples", "minilm", "reference", "reference.npz"))
    feeds = {"input_ids": ref["input_ids"], "attention_mask": ref["attention_mask"]}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(
        os.path.join(model_dir, "paraphrase-MiniLM-L3-v2.onnx"), opts, providers=["CPUExecutionProvider"]
    )
    t = time.perf_counter()
    sess.run(["461"], feeds)
    first = time.perf_counter() - t
    best = first
    for _ in range(a.repeat):
        t = time.perf_counter()
        sess.run(["461"], feeds)
        best = min(best, time.perf_counter() - t)
    b, s = ref["input_ids"].shape
    print(
        f"onnxruntime {ort.__version__} ({a.threads} threads), {b} sentences x {s} tokens: "
        f"forward {first * 1e3:.3f} ms (first), {best * 1e3:.3f} ms (best of {a.repeat + 1})"
    )


if __name__ == "__main__":
    main()
