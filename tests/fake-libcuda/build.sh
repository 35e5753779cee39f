#!/usr/bin/env bash
# Builds the fake driver into $1/libcuda.so.1 (soname libcuda.so.1), so that a process
# started with LD_LIBRARY_PATH=$1 finds a CUDA driver that reports no device.
set -euo pipefail
out="${1:?usage: build.sh OUTDIR}"
mkdir -p "$out"
gcc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$out/libcuda.so.1" "$(dirname "$0")/fake_libcuda.c"
