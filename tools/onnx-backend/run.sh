#!/usr/bin/env bash
# ONNX's backend tests through gpukit-onnx: the node tests (and with --models the model
# tests, the light architectures included) on cpu and ptx-emu, compared with the
# expected outputs at the cases' tolerances and with each other bit for bit.
#
#   tools/onnx-backend/run.sh [--models] [backend_test options...]
#
# 1. Python: $GPUKIT_ONNX_PYTHON when set; else target/model/venv (tools/model/fetch.sh
#    makes it) when it has the pinned onnx; else a venv under target/onnx-venv with
#    numpy and onnx pinned as in tools/bench-compare/requirements.txt.
# 2. tools/onnx-backend/generate.py writes the cases into target/onnx-node (and
#    target/onnx-models), skipped when a stamp says they are from the same onnx.
# 3. crates/gpukit-onnx/examples/backend_test.rs runs them; the node tests must pass at
#    --min-pass-rate 0.9 (cases of supported ops in gpukit's element types) with no
#    cross-device mismatch; the report goes to target/onnx-node/report.md (and
#    target/onnx-models/report.md). Extra options go to backend_test (e.g. --failures,
#    --devices cpu, --filter attention, --first-device-only test_light as CI does).
set -euo pipefail
cd "$(dirname "$0")/../.."
models=0
if [[ "${1:-}" == "--models" ]]; then
  models=1
  shift
fi
onnx_pin="onnx==1.23.2"
py="${GPUKIT_ONNX_PYTHON:-}"
if [[ -z "$py" ]]; then
  if [[ -x target/model/venv/bin/python ]] &&
    target/model/venv/bin/python -c 'import onnx, sys; sys.exit(onnx.__version__ != "1.23.2")' 2>/dev/null; then
    py=target/model/venv/bin/python
  else
    if [[ ! -x target/onnx-venv/bin/python ]]; then
      python3 -m venv target/onnx-venv
      target/onnx-venv/bin/python -m pip install --quiet --disable-pip-version-check \
        numpy==2.4.6 "$onnx_pin" protobuf==7.36.2 ml_dtypes==0.7.0 typing_extensions==4.16.0
    fi
    py=target/onnx-venv/bin/python
  fi
fi
stamp="$onnx_pin generate-v2 models=$models"
if [[ ! -f target/onnx-node/.stamp || "$(cat target/onnx-node/.stamp)" != "$stamp" ]]; then
  if [[ $models == 1 ]]; then
    "$py" -W ignore tools/onnx-backend/generate.py target/onnx-node --models target/onnx-models
  else
    "$py" -W ignore tools/onnx-backend/generate.py target/onnx-node
  fi
  echo "$stamp" > target/onnx-node/.stamp
fi
cargo build --release -q -p gpukit-onnx --example backend_test
echo "== node tests"
target/release/examples/backend_test target/onnx-node --min-pass-rate 0.9 \
  --markdown target/onnx-node/report.md "$@"
if [[ $models == 1 ]]; then
  echo "== model tests"
  target/release/examples/backend_test target/onnx-models \
    --markdown target/onnx-models/report.md "$@"
fi
