#!/usr/bin/env bash
# Reciprocal throughput of single AVX-512 instructions on this machine (pipes.c), in
# time-stamp-counter ticks and, when the core clock is given, core cycles:
#
#   tools/cpu-pipes/run.sh [CORE_GHZ TSC_GHZ]
#
# Needs gcc and an AVX-512 CPU. The core clock under load is not the TSC rate: give
# both (e.g. `3.65 2.6` on the Zen 4 development VM, whose TSC runs at the nominal
# 2.6 GHz) to get core cycles.
set -euo pipefail
cd "$(dirname "$0")"
out=../../target/cpu-pipes
mkdir -p "$out"
gcc -O2 -o "$out/pipes" pipes.c
"$out/pipes" "$@"
