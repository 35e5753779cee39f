#!/usr/bin/env python3
"""Writes ONNX's node test cases (the generators the `onnx` package ships in
onnx/backend/test/case/node) as test data for gpukit-onnx's backend runner, and with
--models DIR its model tests too.

    generate.py OUT_DIR [--models MODELS_DIR]

Model tests (in MODELS_DIR, same layout): the `simple`, `pytorch-converted` and
`pytorch-operator` folders the package ships (op: the folder's kind), and the `light`
real architectures (op: `light <name>`), whose input is the runner's dummy input (the
elements 0..n divided by n, as `Runner.generate_dummy_data(random=False)`) and whose
expected output is the shipped `light_<name>_output_0.pb`, at the tolerances of
onnx/backend/test/case/model.

One folder per case: model.onnx, test_data_set_0/input_<j>.pb and output_<j>.pb
(TensorProto), and case.json with the op under test, whether the case is a function
expansion (`_expanded`), whether every element type it touches is one gpukit runs
(`gpukit_types`), and the case's tolerances (ONNX's backend runner defaults:
rtol 1e-3, atol 1e-7). Cases whose inputs or outputs are not dense tensors (sequences,
maps, optionals) are written without data and marked `"skip"` with the reason.
"""
import json
import os
import re
import shutil
import sys

import numpy as np
import onnx
from onnx import defs, numpy_helper
import onnx.backend.test.case.node as node_test


def op_names():
    return sorted({s.name for s in defs.get_all_schemas_with_history() if s.domain in ("", "ai.onnx")})


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def op_of(case, ops):
    """The op a case tests: its single node's op, else the op whose name (lowercase or
    snake_case) is the longest prefix of the test name."""
    nodes = case.model.graph.node
    stem = case.name[len("test_"):]
    if len(nodes) == 1 and not case.name.endswith("_expanded") and "_expanded_" not in case.name:
        return nodes[0].op_type
    best = None
    for op in ops:
        for form in {op.lower(), snake(op)}:
            if (stem == form or stem.startswith(form + "_")) and (best is None or len(form) > best[0]):
                best = (len(form), op)
    if best:
        return best[1]
    return nodes[0].op_type if nodes else "?"


def is_tensor(vi):
    return vi.type.HasField("tensor_type")


# gpukit's own element types (no narrow type stored wider): float, int32, int64, bool,
# float16, double, bfloat16.
GPUKIT_TYPES = {1, 6, 7, 9, 10, 11, 16}


def gpukit_types(g):
    """Whether every element type the case touches (graph inputs and outputs,
    initializers, Cast targets, Constant values) is one gpukit runs."""
    types = set()
    for v in list(g.input) + list(g.output):
        if v.type.HasField("tensor_type"):
            types.add(v.type.tensor_type.elem_type)
    types.update(t.data_type for t in g.initializer)
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to":
                types.add(a.i)
            if a.type == onnx.AttributeProto.TENSOR:
                types.add(a.t.data_type)
    return types <= GPUKIT_TYPES


def write_models(out):
    from onnx.backend.test.case import model as model_cases

    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    n = 0
    for kind in ("simple", "pytorch-converted", "pytorch-operator"):
        for name in sorted(os.listdir(os.path.join(data, kind))):
            src = os.path.join(data, kind, name)
            if not os.path.exists(os.path.join(src, "model.onnx")):
                continue
            dst = os.path.join(out, name if name not in os.listdir(out) else f"{kind}_{name}")
            shutil.copytree(src, dst)
            m = onnx.load(os.path.join(src, "model.onnx"))
            g = m.graph
            info = {"op": kind, "expanded": False, "rtol": 1e-3, "atol": 1e-7,
                    "gpukit_types": gpukit_types(g)}
            if not all(is_tensor(v) for v in list(g.input) + list(g.output)):
                info["skip"] = "inputs or outputs that are not dense tensors"
            with open(os.path.join(dst, "case.json"), "w") as f:
                json.dump(info, f, sort_keys=True)
            n += 1
    tolerances = {c.model_name: (c.rtol, c.atol) for c in model_cases.collect_testcases()}
    light = os.path.join(data, "light")
    for file in sorted(os.listdir(light)):
        if not file.endswith(".onnx"):
            continue
        name = file[len("light_"):-len(".onnx")]
        dst = os.path.join(out, f"test_light_{name}")
        ds = os.path.join(dst, "test_data_set_0")
        os.makedirs(ds)
        shutil.copy(os.path.join(light, file), os.path.join(dst, "model.onnx"))
        m = onnx.load(os.path.join(light, file))
        inits = {t.name for t in m.graph.initializer}
        j = 0
        for x in m.graph.input:
            if x.name in inits:
                continue
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
            count = int(np.prod(shape))
            value = (np.arange(count).reshape(shape) / count).astype(np.float32)
            with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, x.name).SerializeToString())
            j += 1
        shutil.copy(os.path.join(light, f"light_{name}_output_0.pb"), os.path.join(ds, "output_0.pb"))
        rtol, atol = tolerances.get(name, (1e-3, 1e-7))
        info = {"op": f"light {name}", "expanded": False, "rtol": rtol, "atol": atol,
                "gpukit_types": gpukit_types(m.graph), "light": True}
        with open(os.path.join(dst, "case.json"), "w") as f:
            json.dump(info, f, sort_keys=True)
        n += 1
    print(f"{n} model test cases written to {out}")


def main():
    out = sys.argv[1]
    if len(sys.argv) == 4 and sys.argv[2] == "--models":
        models = sys.argv[3]
        if os.path.exists(models):
            shutil.rmtree(models)
        os.makedirs(models)
        write_models(models)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    ops = op_names()
    cases = node_test.collect_testcases()
    n = 0
    for case in cases:
        d = os.path.join(out, case.name)
        os.makedirs(d)
        g = case.model.graph
        info = {
            "op": op_of(case, ops),
            "expanded": case.name.endswith("_expanded") or "_expanded_" in case.name,
            "rtol": case.rtol if case.rtol is not None else 1e-3,
            "atol": case.atol if case.atol is not None else 1e-7,
            "gpukit_types": gpukit_types(g),
        }
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        if not all(is_tensor(v) for v in list(g.input) + list(g.output)):
            info["skip"] = "inputs or outputs that are not dense tensors (sequence, map, optional)"
        else:
            for i, (inputs, outputs) in enumerate(case.data_sets or []):
                ds = os.path.join(d, f"test_data_set_{i}")
                os.makedirs(ds)
                for j, x in enumerate(inputs):
                    t = x if isinstance(x, onnx.TensorProto) else numpy_helper.from_array(np.asarray(x), g.input[j].name)
                    with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                        f.write(t.SerializeToString())
                for j, y in enumerate(outputs):
                    t = y if isinstance(y, onnx.TensorProto) else numpy_helper.from_array(np.asarray(y), g.output[j].name)
                    with open(os.path.join(ds, f"output_{j}.pb"), "wb") as f:
                        f.write(t.SerializeToString())
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(info, f, sort_keys=True)
        n += 1
    print(f"{n} node test cases written to {out} (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
