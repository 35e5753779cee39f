"""Reference outputs of paraphrase-MiniLM-L3-v2 for examples/minilm, made once with
the model's own framework (onnxruntime on the shipped ONNX file).

    target/model/venv/bin/python tools/model/make_reference.py   (after tools/model/fetch.sh;
    needs numpy and onnxruntime: tools/bench-compare/requirements.txt pins them)

Tokenises SENTENCES with a small WordPiece written here from the BERT rules (lowercase,
split on whitespace and punctuation, greedy longest match with `##` continuations,
[CLS] ... [SEP], right padding with [PAD] = 0) over tokenizer.json's vocabulary, so the
Rust example's `tokenizers` crate is checked against an independent tokeniser. Runs the
padded batch (the attention mask matters) and writes
examples/minilm/reference/reference.npz with
  input_ids, attention_mask   [B, S] int64
  last_hidden                 [B, S, 384] float32  (graph output `onnx::Shape_422`)
  mean_pooled                 [B, 384] float32     (graph output `461`: masked mean)
  embeddings                  [B, 384] float32     (mean_pooled / its L2 norm, numpy f64)
  similarity                  [B, B] float32       (cosine matrix of embeddings)
"""

import json
import os
import unicodedata

import numpy as np
import onnxruntime as ort

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "target", "model")
OUT = os.path.join(ROOT, "examples", "minilm", "reference", "reference.npz")

# Keep in sync with examples/minilm/src/main.rs (DEFAULT_SENTENCES).
SENTENCES = [
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The weather today is cold, grey and rainy, so we stayed inside and read books.",
    "GPUs run matrix multiplications quickly!",
]


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def words(text):
    text = text.lower()
    out = []
    for w in text.split():
        cur = ""
        for ch in w:
            if is_punct(ch):
                if cur:
                    out.append(cur)
                    cur = ""
                out.append(ch)
            else:
                cur += ch
        if cur:
            out.append(cur)
    return out


def wordpiece(word, vocab):
    pieces = []
    start = 0
    while start < len(word):
        end = len(word)
        piece = None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                piece = sub
                break
            end -= 1
        if piece is None:
            return [vocab["[UNK]"]]
        pieces.append(vocab[piece])
        start = end
    return pieces


def tokenize(sentences, vocab):
    rows = []
    for s in sentences:
        ids = [vocab["[CLS]"]]
        for w in words(s):
            ids += wordpiece(w, vocab)
        rows.append(ids + [vocab["[SEP]"]])
    n = max(len(r) for r in rows)
    input_ids = np.zeros((len(rows), n), np.int64)
    mask = np.zeros((len(rows), n), np.int64)
    for i, r in enumerate(rows):
        input_ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return input_ids, mask


def main():
    with open(os.path.join(MODEL, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    input_ids, mask = tokenize(SENTENCES, vocab)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(
        os.path.join(MODEL, "paraphrase-MiniLM-L3-v2.onnx"), opts, providers=["CPUExecutionProvider"]
    )
    hidden, pooled = sess.run(["onnx::Shape_422", "461"], {"input_ids": input_ids, "attention_mask": mask})
    p64 = pooled.astype(np.float64)
    emb = p64 / np.linalg.norm(p64, axis=1, keepdims=True)
    sim = emb @ emb.T
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez_compressed(
        OUT,
        input_ids=input_ids,
        attention_mask=mask,
        last_hidden=hidden.astype(np.float32),
        mean_pooled=pooled.astype(np.float32),
        embeddings=emb.astype(np.float32),
        similarity=sim.astype(np.float32),
    )
    print(f"wrote {OUT}: ids {input_ids.shape}, lengths {mask.sum(1).tolist()}")
    print(np.array2string(sim, precision=4))


if __name__ == "__main__":
    main()
