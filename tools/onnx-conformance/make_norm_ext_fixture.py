#!/usr/bin/env python3
"""Writes tests/fixtures/onnx_norm_ext.txt: f32 single-op cases of LayerNormalization
(with and without B, with Mean and InvStdDev), GroupNormalization (opset 21) and
RMSNormalization (opset 23), evaluated by onnx.reference.ReferenceEvaluator and
cross-checked with onnxruntime where it implements the op. Read by
crates/gpukit-tensor/tests/norm_ext_onnx.rs, which compares gpukit's results within a
few ulp (the differences are explained in docs/ops/norm.md).

Format, one case per block (values as f32 bit patterns in hex):
  case <name> <op> axis=<a> eps=<e> groups=<g> bias=<0|1>
  shape <dims...>
  <tensor name> <hex ...>      (x, scale, bias, y, mean, inv_std as present)
  end
Run: target/bench-venv/bin/python tools/onnx-conformance/make_norm_ext_fixture.py
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "onnx_norm_ext.txt")


def hexs(a):
    return " ".join("%08x" % v for v in np.asarray(a, np.float32).ravel().view(np.uint32))


def model(op, opset, inputs, outputs, attrs):
    node = helper.make_node(op, [i[0] for i in inputs], [o[0] for o in outputs], **attrs)
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n, _ in outputs],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def run(m, feeds):
    ref = ReferenceEvaluator(m).run(None, feeds)
    try:
        import onnxruntime as ort

        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        got = s.run(None, feeds)
        for a, b in zip(ref, got):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    except Exception as e:  # an op onnxruntime lacks at this opset: reference only
        if "NOT_IMPLEMENTED" not in str(e) and "not implemented" not in str(e).lower() \
                and "opset" not in str(e).lower():
            raise
        sys.stderr.write(f"onnxruntime skipped: {str(e)[:120]}\n")
    return ref


def main():
    rng = np.random.default_rng(14)
    lines = []

    def emit(name, op, axis, eps, groups, bias, shape, tensors):
        lines.append(f"case {name} {op} axis={axis} eps={eps!r} groups={groups} bias={int(bias)}")
        lines.append("shape " + " ".join(map(str, shape)))
        for k, v in tensors:
            lines.append(f"{k} {hexs(v)}")
        lines.append("end")

    # LayerNormalization, opset 17.
    for i, (shape, axis, bias) in enumerate(
        [((2, 3, 8), -1, True), ((2, 3, 8), 1, False), ((4, 40), -1, True),
         ((3, 5, 2, 2), 2, False), ((1, 300), 1, True), ((6, 1), -1, True)]):
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        ns = shape[axis:] if axis >= 0 else shape[len(shape) + axis:]
        sc = rng.standard_normal(ns).astype(np.float32)
        b = rng.standard_normal(ns).astype(np.float32)
        ins = [("X", list(shape)), ("S", list(ns))] + ([("B", list(ns))] if bias else [])
        m = model("LayerNormalization", 17, ins, [("Y", 0), ("M", 0), ("I", 0)],
                  {"axis": axis, "epsilon": 1e-5})
        feeds = {"X": x, "S": sc}
        if bias:
            feeds["B"] = b
        y, mean, inv = run(m, feeds)
        t = [("x", x), ("scale", sc)] + ([("bias", b)] if bias else [])
        emit(f"ln{i}", "layer_norm", axis, 1e-5, 0, bias, shape,
             t + [("y", y), ("mean", mean), ("inv_std", inv)])

    # GroupNormalization, opset 21 (per-channel scale and bias).
    for i, (shape, groups) in enumerate([((2, 6, 5), 3), ((1, 4, 3, 3), 2), ((3, 8), 8),
                                         ((2, 4, 17), 1)]):
        x = (rng.standard_normal(shape) * 2 - 0.5).astype(np.float32)
        c = shape[1]
        sc = rng.standard_normal(c).astype(np.float32)
        b = rng.standard_normal(c).astype(np.float32)
        m = model("GroupNormalization", 21,
                  [("X", list(shape)), ("S", [c]), ("B", [c])], [("Y", 0)],
                  {"epsilon": 1e-5, "num_groups": groups})
        (y,) = run(m, {"X": x, "S": sc, "B": b})
        emit(f"gn{i}", "group_norm", 1, 1e-5, groups, True, shape,
             [("x", x), ("scale", sc), ("bias", b), ("y", y)])

    # RMSNormalization, opset 23.
    for i, (shape, axis) in enumerate([((2, 3, 8), -1), ((4, 64), -1), ((2, 3, 4), 1),
                                       ((5, 1), -1)]):
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        ns = shape[axis:] if axis >= 0 else shape[len(shape) + axis:]
        sc = rng.standard_normal(ns).astype(np.float32)
        m = model("RMSNormalization", 23, [("X", list(shape)), ("S", list(ns))],
                  [("Y", 0)], {"axis": axis, "epsilon": 1e-6})
        (y,) = run(m, {"X": x, "S": sc})
        emit(f"rms{i}", "rms_norm", axis, 1e-6, 0, False, shape,
             [("x", x), ("scale", sc), ("y", y)])

    with open(OUT, "w") as f:
        f.write(f"# Generated by tools/onnx-conformance/make_norm_ext_fixture.py (onnx {onnx.__version__})\n")
        f.write("\n".join(lines) + "\n")
    print(f"wrote {OUT}: {sum(l.startswith('case') for l in lines)} cases")


if __name__ == "__main__":
    main()
