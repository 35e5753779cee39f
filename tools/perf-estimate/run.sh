#!/usr/bin/env bash
# The per-kernel GPU estimate of docs/perf-gpu-estimates.md: every
# op family at realistic sizes on the PTX emulator with its counters (a sample of each
# launch's blocks), estimated on A100, H100 and H200, as markdown. About 7 minutes on 2
# cores. Estimated, not measured.
#
#   tools/perf-estimate/run.sh [--before OLD.json]
#
# Writes target/perf-estimate/large.json and prints the tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p target/perf-estimate
cargo build --release -q -p gpukit-cli
./target/release/gpukit --device ptx-emu --json profile --counters --large --gpu a100,h100,h200 \
  > target/perf-estimate/large.json
python3 tools/perf-estimate/table.py target/perf-estimate/large.json "$@"
