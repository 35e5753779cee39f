#!/usr/bin/env bash
# Fetches the pinned CUDA compiler pieces from PyPI into $GPUKIT_CUDA_TOOLS (default:
# <repo>/target/cuda-tools) and prints nothing but errors. Idempotent: a folder that
# already holds the pinned versions is kept.
#
#   nvidia-cuda-nvrtc-cu12==12.9.86    libnvrtc (the compiler, called from build.py)
#   nvidia-cuda-runtime-cu12==12.9.79  cuda_fp16.h / cuda_bf16.h (NVRTC 12.9 ships none)
#   nvidia-cuda-nvcc-cu12==12.9.86     ptxas (the offline assembler for the spill gate)
#
# Nothing is installed: the wheels are downloaded without dependencies and unzipped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="${GPUKIT_CUDA_TOOLS:-$here/../target/cuda-tools}"
pins=(nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-nvcc-cu12==12.9.86)
stamp="$tools/.pins"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${pins[*]}" ]]; then
  exit 0
fi
rm -rf "$tools"
mkdir -p "$tools/wheels" "$tools/root"
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$tools/wheels" "${pins[@]}"
for w in "$tools"/wheels/*.whl; do
  python3 - "$w" "$tools/root" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
done
chmod +x "$tools"/root/nvidia/cuda_nvcc/bin/* 2>/dev/null || true
echo "${pins[*]}" > "$stamp"
