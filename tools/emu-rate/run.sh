#!/usr/bin/env bash
# The PTX emulator's speed, side by side with an older commit's emulator, on the same
# launches: every distinct built-in launch of the selftest workload, recorded by the
# census kit (`gpukit profile --census --replay`) and replayed by
# crates/gpukit-ptx/examples/emu_rate.rs with memcheck and racecheck on.
#
#   tools/emu-rate/run.sh [OLD_REV] [ROUNDS] [WORKLOAD]
#
# WORKLOAD: selftest (default) or minilm, the MiniLM encoder forward of the default
# sentences recorded on the census kit by examples/minilm/examples/census_replay.rs
# (needs tools/model/fetch.sh first).
#
# OLD_REV (default 5fd9037, the emulator before issue 13) is checked out as a git
# worktree under target/emu-rate/old, with this tree's emu_rate.rs copied in (it uses
# only gpukit-ptx API that OLD_REV has too). Both run the PTX of this tree. Each of
# ROUNDS (default 3) runs old then new, one host thread each (RAYON_NUM_THREADS=1),
# each taking the fastest of 3 passes; the script prints every rate and the ratio of
# the best rates. Thread-instruction counts must agree (same PTX, same semantics).
#
# EMU_RATE_FLAGS (default empty) is passed to both emulators' runs: `--no-racecheck`
# measures memcheck alone (the old commit has the same switch).
set -euo pipefail
cd "$(dirname "$0")/../.."
OLD_REV=${1:-5fd9037}
ROUNDS=${2:-3}
WORKLOAD=${3:-selftest}
OUT=target/emu-rate
mkdir -p "$OUT"
# The selftest's user-kernel demos compile through NVRTC: use the pinned wheels when
# kernels-cuda/toolchain.sh has installed them (without them those few launches are
# left out of the recording, with a message).
NVRTC_LIB=$PWD/target/cuda-tools/root/nvidia/cuda_nvrtc/lib
if [ -d "$NVRTC_LIB" ]; then
    export LD_LIBRARY_PATH="$NVRTC_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

cargo build --release -q -p gpukit-ptx --example emu_rate
case "$WORKLOAD" in
    selftest)
        cargo build --release -q -p gpukit-cli
        target/release/gpukit profile --census --replay "$OUT/selftest.replay" > /dev/null
        ;;
    minilm)
        cargo build --release -q -p gpukit-example-minilm --example census_replay
        target/release/examples/census_replay "$OUT/minilm.replay"
        ;;
    *)
        echo "unknown workload $WORKLOAD (selftest or minilm)" >&2
        exit 2
        ;;
esac
REPLAY=$OUT/$WORKLOAD.replay

if [ ! -d "$OUT/old" ]; then
    git worktree add --detach "$OUT/old" "$OLD_REV" > /dev/null
else
    git -C "$OUT/old" checkout -q --detach "$OLD_REV"
fi
mkdir -p "$OUT/old/crates/gpukit-ptx/examples"
cp crates/gpukit-ptx/examples/emu_rate.rs "$OUT/old/crates/gpukit-ptx/examples/"
(cd "$OUT/old" && cargo build --release -q -p gpukit-ptx --example emu_rate --target-dir ../old-target)

old_bin=$OUT/old-target/release/examples/emu_rate
new_bin=target/release/examples/emu_rate
best_old=0
best_new=0
for r in $(seq "$ROUNDS"); do
    for which in old new; do
        bin=$old_bin
        [ "$which" = new ] && bin=$new_bin
        line=$(RAYON_NUM_THREADS=1 "$bin" "$REPLAY" kernels-cuda/ptx --top 0 --repeat 3 ${EMU_RATE_FLAGS:-} | grep '^rate ')
        read -r _ insts secs rate <<< "$line"
        echo "round $r $which: $insts thread instructions in $secs s: $rate /s"
        if [ "$which" = old ]; then
            [ "$rate" -gt "$best_old" ] && best_old=$rate
            old_insts=$insts
        else
            [ "$rate" -gt "$best_new" ] && best_new=$rate
            new_insts=$insts
        fi
    done
done
if [ "$old_insts" != "$new_insts" ]; then
    echo "thread-instruction counts differ: $old_insts (old) vs $new_insts (new)" >&2
    exit 1
fi
python3 -c "print(f'best rate: old {$best_old/1e6:.0f} M/s, new {$best_new/1e6:.0f} M/s: {$best_new/$best_old:.2f}x')"
