#!/usr/bin/env bash
# A watch next to a running job, at scale: RANKS ranks write one step every
# INTERVAL seconds (a finished run replayed into an empty folder, step by
# step, file by file, by bench/watchreplay.py) while "nanhunt watch" follows
# the folder. It prints the watch's CPU time per step, its peak RSS, how long
# after a step is written its line comes, and the alarm's latency.
#
#   bench/watch.sh DIR                         # 1,024 ranks x 12 steps, a NaN born at step 9, a step every 10 s
#   RANKS=64 STEPS=0-5 FAULT_STEP=3 INTERVAL=3 bench/watch.sh DIR
#
# DIR keeps the generated run (DIR/src, reused when present); the replay goes
# to DIR/dst and the alarm's files to DIR/out, both made again each time.
set -euo pipefail
dir=${1:?usage: bench/watch.sh DIR}
RANKS=${RANKS:-1024}
STEPS=${STEPS:-0-11}
FAULT_STEP=${FAULT_STEP:-9}
INTERVAL=${INTERVAL:-10}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/nanhunt
go build -o "$bin" ./cmd/nanhunt
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -d "$dir/src" ]; then
  echo "== generating $RANKS ranks x steps $STEPS"
  "$bin" synth --world-size "$RANKS" --steps "$STEPS" --model tp --tp-size 8 --file-mb 0.05 \
    --fault log-negative --fault-step "$FAULT_STEP" -o "$dir/src" 2>&1 | tail -2
fi
echo "== $(du -sh --apparent-size "$dir/src" | cut -f1) in $(ls -d "$dir"/src/step* | wc -l) steps; a step every $INTERVAL s"
rm -rf "$dir/dst" "$dir/out"
python3 bench/watchreplay.py "$bin" "$dir/src" "$dir/dst" "$dir/out" --interval "$INTERVAL"
