#!/usr/bin/env bash
# gpukit side by side with numpy (OpenBLAS) and onnxruntime, in one sitting.
#
#   tools/bench-compare/run.sh [--quick] [--threads N] [--rounds R] [--only W1,W2,...]
#
# 1. Creates (once) a venv under target/bench-venv with the pinned anchors of
#    tools/bench-compare/requirements.txt (recreated when that file changes).
# 2. Builds gpukit's side, the `bench_compare` binary of the gpukit-benches crate
#    (benches/src/bin/bench_compare.rs: public API only, CPU device, device-resident
#    buffers), and runs it once per thread count (RAYON_NUM_THREADS).
# 3. Runs the anchors (tools/bench-compare/anchors.py) at the same thread counts right
#    after: numpy in its own process with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset
#    (for that command only; the kernel OpenBLAS then picks is printed), onnxruntime
#    with intra_op_num_threads = the thread count.
# 4. Prints the table (tools/bench-compare/report.py) and writes it to
#    target/bench-compare/table.md, the raw JSON lines to target/bench-compare/raw.jsonl
#    and everything as target/bench-compare/report.json.
#
# --threads N: the "all cores" thread count (default: nproc). Every workload also runs
# at 1 thread unless --quick (fewer repetitions, N threads only; the memcpy bandwidth
# is still measured at 1 thread too). --only: just these workloads (sgemm_1024
# dgemm_1024 conv2d attention softmax layer_norm gelu exp erf tanh sigmoid add sum
# encoder minilm_onnx copy). --rounds R (default 1): run the three sides R times, interleaved, and
# keep each side's best time (a shared host's slow minutes then hit both sides alike).
set -euo pipefail

quick=0
rounds=1
threads=$(nproc)
only=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --threads)
            threads="${2:?--threads needs a number}"
            shift
            ;;
        --threads=*) threads="${1#--threads=}" ;;
        --rounds)
            rounds="${2:?--rounds needs a number}"
            shift
            ;;
        --rounds=*) rounds="${1#--rounds=}" ;;
        --only)
            only=(--only "${2:?--only needs a comma-separated list}")
            shift
            ;;
        -h | --help)
            sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "run.sh: unknown argument '$1' (try --help)" >&2
            exit 2
            ;;
    esac
    shift
done
case "$threads" in
    '' | *[!0-9]* | 0)
        echo "run.sh: --threads needs a positive integer, got '$threads'" >&2
        exit 2
        ;;
esac
case "$rounds" in
    '' | *[!0-9]* | 0)
        echo "run.sh: --rounds needs a positive integer, got '$rounds'" >&2
        exit 2
        ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
venv="$root/target/bench-venv"
out="$root/target/bench-compare"
req="$here/requirements.txt"
mkdir -p "$out"

# ---- 1. the anchors' venv (installed once, reused) -------------------------------
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/.bench-requirements.txt"; then
    echo "== creating $venv (pinned: $(grep -v '^#' "$req" | tr '\n' ' '))" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$venv/.bench-requirements.txt"
fi
py="$venv/bin/python"

# ---- 2. gpukit's side --------------------------------------------------------------
echo "== building bench_compare (release)" >&2
bin="$(cargo build --release -p gpukit-benches --bin bench_compare \
    --message-format=json-render-diagnostics |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "bench_compare" and m.get("executable"):
        print(m["executable"])')"
if [ ! -x "$bin" ]; then
    echo "run.sh: could not find the built bench_compare binary" >&2
    exit 1
fi

flags=()
[ "$quick" = 1 ] && flags=(--quick)
flags+=("${only[@]}")
counts=("$threads")
[ "$quick" = 0 ] && [ "$threads" != 1 ] && counts+=(1)

raw="$out/raw.jsonl"
: >"$raw"
for var in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
    if [ -n "${!var:-}" ]; then
        echo "== $var=${!var} is set here: unset for the numpy command only" >&2
    fi
done
run_numpy() {
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
        "$py" "$here/anchors.py" --side numpy "$@" >>"$raw"
}

echo "{\"side\":\"harness\",\"rounds\":$rounds}" >>"$raw"
for round in $(seq 1 "$rounds"); do
    for t in "${counts[@]}"; do
        echo "== round $round/$rounds, $t thread(s): gpukit" >&2
        RAYON_NUM_THREADS="$t" "$bin" "${flags[@]}" | tee -a "$raw" | cut -c1-160 >&2
        echo "== round $round/$rounds, $t thread(s): numpy" >&2
        run_numpy --threads "$t" "${flags[@]}"
        echo "== round $round/$rounds, $t thread(s): onnxruntime" >&2
        "$py" "$here/anchors.py" --side onnxruntime --threads "$t" "${flags[@]}" >>"$raw"
    done
done
if [ "$quick" = 1 ] && [ "$threads" != 1 ]; then
    # The 1-thread references: memory bandwidth, numpy's (single-threaded) add/sum.
    echo "== 1 thread: memcpy bandwidth, numpy add/sum/copy" >&2
    RAYON_NUM_THREADS=1 "$bin" --quick --only copy >>"$raw"
    ones=add,sum,copy
    if [ ${#only[@]} -gt 0 ]; then
        ones=$(echo "${only[1]}" | tr ',' '\n' | grep -xE 'add|sum|copy' | paste -sd, || true)
    fi
    if [ -n "$ones" ]; then run_numpy --threads 1 --quick --only "$ones"; fi
fi

# ---- 4. the table ------------------------------------------------------------------
python3 "$here/report.py" "$out"
echo "== wrote $out/table.md, $out/raw.jsonl, $out/report.json" >&2
