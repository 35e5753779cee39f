#!/usr/bin/env bash
# The GPU check: everything gpukit can verify only on a real GPU, in one device call.
#
#   tools/gpu-check/gpu-check.sh pack      # here (Rust, no GPU): build and pack
#   tools/gpu-check/gpu-check.sh run       # there (GPU, CUDA, Python; no Rust, no net)
#
# pack builds, in release and with the CUDA backend, every test binary of the
# workspace and the `gpukit` tool, strips them, and puts them with this script and the
# PyTorch baseline in target/gpu-pack (64 MiB at most: what the device tool carries).
# run, on the GPU machine, from the repository root with target/gpu-pack carried:
#   1. `gpukit devices` (GPU name, driver),
#   2. every test binary (the equivalence suite runs CPU, CUDA and the emulator against
#      the oracle, bit for bit, op by op and dtype by dtype),
#   3. `gpukit selftest --device cuda:0` (every kernel and op against the reference),
#   4. `gpukit bench --device cuda:0` and the PyTorch / cuBLAS baseline, in one call,
#   5. calibration of the roofline model: the selftest workload's measured kernel times
#      (`gpukit profile --device cuda:0 --json`) beside its census prediction for this
#      GPU (`gpukit profile --census --gpu KEY --json`, no GPU needed), per kernel,
#   6. ONNX's backend node tests of the supported ops (in gpukit's element types) and
#      the light architectures through gpukit-onnx on cpu and cuda:0, compared with the
#      expected outputs and with each other bit for bit (docs/onnx.md),
# and prints one summary table last. With the device tool:
#   run(command="bash tools/gpu-check/gpu-check.sh run", carry=["target/gpu-pack"],
#       timeout_s=480)
set -uo pipefail
cd "$(dirname "$0")/../.."
pack=target/gpu-pack

case "${1:-}" in
pack)
  set -e
  rm -rf "$pack" && mkdir -p "$pack/bin" "$pack/tests"
  cargo build --release -p gpukit-cli --features cuda
  cp "${CARGO_TARGET_DIR:-target}/release/gpukit" "$pack/bin/"
  # Test executables, from cargo's JSON messages.
  cargo test --workspace --release --features cuda --no-run --message-format=json 2>/dev/null \
    | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    # gpukit-cuda and gpukit-cli tests check the build host (sources, NVRTC, g++,
    # the fake driver): CI runs them; the device gets the backend-level tests.
    host_only = ("/gpukit-cuda#", "/gpukit-cli#")
    if (m.get("reason") == "compiler-artifact" and m.get("executable")
            and m["profile"]["test"] and not any(h in m["package_id"] for h in host_only)):
        print(m["executable"])
' | while read -r exe; do cp "$exe" "$pack/tests/"; done
  # ONNX's backend tests (docs/onnx.md): the runner, and the cases of supported ops in
  # gpukit's element types plus the light architectures (a few MiB).
  cargo build --release -p gpukit-onnx --example backend_test
  cp "${CARGO_TARGET_DIR:-target}/release/examples/backend_test" "$pack/bin/"
  [[ -f target/onnx-node/.stamp ]] || tools/onnx-backend/run.sh --models --devices cpu > /dev/null
  python3 - "$pack/onnx" <<'PY'
import json, os, shutil, sys
out = sys.argv[1]
ops = set(os.popen("target/release/examples/backend_test --list-ops").read().split())
for kind, src in (("node", "target/onnx-node"), ("models", "target/onnx-models")):
    for d in sorted(os.listdir(src)):
        p = os.path.join(src, d, "case.json")
        if not os.path.exists(p):
            continue
        j = json.load(open(p))
        keep = j.get("light") or (not j["expanded"] and j["op"] in ops)
        if keep and "skip" not in j:
            shutil.copytree(os.path.join(src, d), os.path.join(out, kind, d))
PY
  tar -C "$pack" -cJf "$pack/onnx.tar.xz" onnx && rm -rf "$pack/onnx"
  strip "$pack"/bin/* "$pack"/tests/*
  # Binaries embed the PTX (text): xz shrinks them several-fold under the carry limit.
  tar -C "$pack" -cJf "$pack/bins.tar.xz" bin tests
  rm -rf "$pack/bin" "$pack/tests"
  cp tools/gpu-check/torch_baseline.py "$pack/"
  du -sh "$pack"
  size=$(du -sm "$pack" | cut -f1)
  if (( size > 64 )); then echo "pack is ${size} MiB: over the 64 MiB the device tool carries" >&2; exit 1; fi
  ;;
run)
  [[ -f "$pack/bins.tar.xz" ]] || { echo "no $pack: run '$0 pack' on the build machine and carry it" >&2; exit 2; }
  tar -C "$pack" -xJf "$pack/bins.tar.xz"
  out=$(mktemp -d)
  # NVRTC for the user-kernel tests: a CUDA toolkit's, or the one PyTorch ships.
  for d in /usr/local/cuda/lib64 $(python3 -c 'import nvidia.cuda_nvrtc, os; print(os.path.join(nvidia.cuda_nvrtc.__path__[0], "lib"))' 2>/dev/null); do
    [[ -d "$d" ]] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  done
  export GPUKIT_CASES="${GPUKIT_CASES:-64}"
  echo "== devices"; "$pack/bin/gpukit" devices | tee "$out/devices.txt"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$out/smi.txt"
  echo "== tests (GPUKIT_CASES=$GPUKIT_CASES)"
  : > "$out/tests.tsv"
  for t in "$pack"/tests/*; do
    name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
    start=$(date +%s)
    "$t" --test-threads 4 > "$out/$name.log" 2>&1
    rc=$?
    summary=$(grep -E "^test result:" "$out/$name.log" | tail -1)
    echo -e "$name\t$rc\t$(( $(date +%s) - start ))s\t$summary" | tee -a "$out/tests.tsv"
    if [[ $rc -ne 0 ]]; then grep -E "^(---- |thread .* panicked)|FAILED|mismatch" "$out/$name.log" | head -20; fi
  done
  echo "== selftest on cuda:0"
  "$pack/bin/gpukit" selftest --device cuda:0 > "$out/selftest.txt" 2>&1; st=$?
  tail -5 "$out/selftest.txt"
  echo "== bench on cuda:0"
  "$pack/bin/gpukit" bench --device cuda:0 | tee "$out/bench.txt"
  echo "== PyTorch / cuBLAS baseline (same machine, same call)"
  python3 "$pack/torch_baseline.py" | tee "$out/torch.txt"
  echo "== calibration: measured (cuda:0) vs estimated (census + roofline) per kernel"
  gpu_name=$(cat "$out/smi.txt" 2>/dev/null)
  case "$gpu_name" in
    *H200*) key=h200 ;; *H100*) key=h100 ;; *A100*) key=a100 ;; *L4*) key=l4 ;; *4090*) key=rtx4090 ;;
    *) key=h100 ;;
  esac
  "$pack/bin/gpukit" profile --device cuda:0 --json > "$out/measured.json" 2> "$out/measured.err"
  "$pack/bin/gpukit" profile --census --gpu "$key" --json > "$out/estimated.json" 2> "$out/estimated.err"
  python3 - "$out/measured.json" "$out/estimated.json" "$key" <<'PY' | tee "$out/calibration.txt"
import json, sys
try:
    m = json.load(open(sys.argv[1]))
    e = json.load(open(sys.argv[2]))
except ValueError as err:
    sys.exit(f"calibration: no JSON ({err})")
meas = {r["kernel"]: r for r in m.get("kernels", [])}
est = {r["kernel"]: r for r in e.get("kernels", [])}
print(f"GPU model: {sys.argv[3]}; {len(meas)} kernels measured, {len(est)} estimated")
print(f"{'kernel':<32} {'calls':>6} {'measured us':>12} {'estimated us':>13} {'meas/est':>9}")
rows = []
for k in sorted(set(meas) & set(est)):
    mt, et = meas[k]["total_s"], est[k]["predicted_s"]
    rows.append((mt / et if et > 0 else float("inf"), k, meas[k]["calls"], mt, et))
for ratio, k, calls, mt, et in sorted(rows, reverse=True):
    print(f"{k:<32} {calls:>6} {mt * 1e6:>12.2f} {et * 1e6:>13.2f} {ratio:>9.2f}")
only = sorted(set(est) - set(meas))
if only:
    print("estimated only (auxiliary entries of a plan): " + " ".join(only))
if rows:
    r = sorted(x[0] for x in rows)
    print(f"meas/est: median {r[len(r) // 2]:.2f}, min {r[0]:.2f}, max {r[-1]:.2f} over {len(r)} kernels")
PY
  echo "== ONNX backend tests through gpukit-onnx: cpu and cuda:0, bit for bit"
  tar -C "$pack" -xJf "$pack/onnx.tar.xz"
  "$pack/bin/backend_test" "$pack/onnx/node" --devices cpu,cuda:0 --min-pass-rate 0.9 --failures > "$out/onnx_node.txt" 2>&1; onx=$?
  "$pack/bin/backend_test" "$pack/onnx/models" --devices cpu,cuda:0 --failures > "$out/onnx_models.txt" 2>&1; onm=$?
  grep -E "^(MISMATCH|FAIL)" "$out/onnx_node.txt" "$out/onnx_models.txt" | head -20
  echo
  echo "================ GPU check summary ================"
  echo "GPU / driver:  $(cat "$out/smi.txt" 2>/dev/null)"
  echo "tests:         $(awk -F'\t' '$2==0' "$out/tests.tsv" | wc -l) of $(wc -l < "$out/tests.tsv") test binaries passed"
  awk -F'\t' '$2!=0 {print "  FAILED:      " $1 "  " $4}' "$out/tests.tsv"
  echo "selftest:      $(grep -E "checks|passed|failed" "$out/selftest.txt" | tail -1) (exit $st)"
  echo "bench (gpukit vs baseline):"
  grep -E "matmul|attention|add f32|sum f32|softmax" "$out/bench.txt" | sed 's/^/  gpukit  /'
  grep -E "matmul|attention" "$out/torch.txt" | sed 's/^/  torch   /'
  echo "calibration:   $(tail -1 "$out/calibration.txt" 2>/dev/null)"
  echo "onnx node:     $(tail -1 "$out/onnx_node.txt") (exit $onx)"
  echo "onnx models:   $(tail -1 "$out/onnx_models.txt") (exit $onm)"
  ;;
*)
  echo "usage: $0 pack|run" >&2; exit 2 ;;
esac
