#!/usr/bin/env bash
# examples/minilm's forward beside onnxruntime's on the same file and tokens, in one
# sitting, both on every core (RAYON_NUM_THREADS / intra_op_num_threads = nproc).
#
#   tools/model/bench.sh [--repeat R] [--device cpu|cuda]
#
# Needs tools/model/fetch.sh done, and a python with numpy + onnxruntime:
# $GPUKIT_MODEL_PYTHON, else target/bench-venv/bin/python (tools/bench-compare/run.sh
# makes it), else target/model/venv/bin/python with onnxruntime added to it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
repeat=50
device=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="${2:?--repeat needs a number}"; shift ;;
    --device) device="${2:?--device needs a value}"; shift ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
threads=$(nproc)
py="${GPUKIT_MODEL_PYTHON:-}"
if [[ -z "$py" ]]; then
  if [[ -x "$root/target/bench-venv/bin/python" ]]; then
    py="$root/target/bench-venv/bin/python"
  else
    "$here/fetch.sh" >/dev/null
    py="$root/target/model/venv/bin/python"
    "$py" -c "import onnxruntime" 2>/dev/null ||
      "$py" -m pip install --quiet --disable-pip-version-check onnxruntime==1.32.0 flatbuffers==25.12.19 packaging==26.4
  fi
fi
"$here/fetch.sh" >/dev/null
cd "$root"
cargo build --quiet --release -p gpukit-example-minilm
echo "== gpukit tensor API ($device, $threads threads)"
RAYON_NUM_THREADS=$threads target/release/minilm --device "$device" --repeat "$repeat" | tail -1
echo "== onnxruntime (same ONNX file, same tokens)"
"$py" "$here/bench_ort.py" --threads "$threads" --repeat "$repeat"
