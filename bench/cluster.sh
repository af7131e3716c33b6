#!/usr/bin/env bash
# A simulated cluster run: RANKS ranks x STEPS dumped steps, the rank folders
# spread over NODES node folders (rank r on node r / (RANKS / NODES)), the
# NaN born late (FAULT_STEP). Each node folder is summarised on its own, one
# after the other, then the summaries are joined; the single-place trace of
# the same run is measured first, and the two verdicts are compared.
#
#   bench/cluster.sh DIR                       # 1024 ranks x 100 steps on 128 nodes (18 GB)
#   RANKS=64 STEPS=0-9 NODES=8 bench/cluster.sh DIR
#
# It prints the time and peak RSS of each step (GNU time), and the bytes of
# the summaries against the bytes of the dump.
set -euo pipefail
dir=${1:?usage: bench/cluster.sh DIR}
RANKS=${RANKS:-1024}
STEPS=${STEPS:-0-99}
NODES=${NODES:-128}
FAULT_STEP=${FAULT_STEP:-97}
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/nanhunt
go build -o "$bin" ./cmd/nanhunt
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
t() { /usr/bin/time -f "%e %M %U %S" -o "$dir/.time" "$@"; }

if [ ! -d "$dir/dump" ] && [ ! -d "$dir/nodes" ]; then
  echo "== generating $RANKS ranks x steps $STEPS"
  t "$bin" synth --world-size "$RANKS" --steps "$STEPS" --model tp --tp-size 8 --file-mb 0.05 \
    --fault log-negative --fault-step "$FAULT_STEP" -o "$dir/dump" 2>/dev/null
  echo "generated in $(cut -d' ' -f1 "$dir/.time") s"
fi
if [ -d "$dir/dump" ]; then
  echo "== one place: nanhunt trace on all $RANKS rank folders"
  t "$bin" trace "$dir/dump" --format json -o "$dir/one.json" || true
  read -r secs rss usr sys < <(tail -1 "$dir/.time")
  echo "trace: $secs s ($usr s user, $sys s sys), peak RSS $((rss / 1024)) MB"
  echo "== spreading the rank folders over $NODES node folders"
  python3 - "$dir" "$RANKS" "$NODES" <<'PY'
import os, sys
d, ranks, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = ranks // nodes
src = os.path.join(d, "dump")
for st in sorted(os.listdir(src)):
    if not st.startswith("step"):
        continue
    for r in os.listdir(os.path.join(src, st)):
        if not r.startswith("rank"):
            continue
        dst = os.path.join(d, "nodes", "node%d" % (int(r[4:]) // per), "dump", st)
        os.makedirs(dst, exist_ok=True)
        os.rename(os.path.join(src, st, r), os.path.join(dst, r))
PY
  rm -rf "$dir/dump"
fi
dumpbytes=$(du -sb --apparent-size "$dir/nodes" | cut -f1)
rm -rf "$dir/sums"
mkdir -p "$dir/sums"
echo "== summarize, node by node"
: > "$dir/nodes.txt"
for n in $(seq 0 $((NODES - 1))); do
  t "$bin" summarize "$dir/nodes/node$n/dump" --run cluster --node-index "$n" --nodes "$NODES" -o "$dir/sums/" 2>/dev/null
  echo "$n $(tail -1 "$dir/.time")" >> "$dir/nodes.txt"
done
sort -k2 -n "$dir/nodes.txt" | awk -v n="$NODES" '
  { s[NR] = $2; tot += $2; cpu += $4 + $5; if ($3 > mx) mx = $3 }
  END { printf "per node: median %.2f s, max %.2f s, mean %.2f s wall, mean %.2f s CPU; peak RSS max %d MB\n", s[int((NR+1)/2)], s[NR], tot / NR, cpu / NR, mx / 1024 }'
sumbytes=$(cat "$dir"/sums/*.jsonl | wc -c)
awk -v s="$sumbytes" -v d="$dumpbytes" 'BEGIN { printf "summaries: %.1f MB for %.1f GB of dump (%.4f%%)\n", s / 1e6, d / 1e9, 100 * s / d }'
echo "== join: nanhunt trace on the $NODES summaries"
t "$bin" trace "$dir/sums" --format json -o "$dir/joined.json" || true
read -r secs rss usr sys < <(tail -1 "$dir/.time")
echo "join: $secs s ($usr s user, $sys s sys), peak RSS $((rss / 1024)) MB"
if [ -f "$dir/one.json" ]; then
  # a join reads no file, so it gives no warning before the NaN ("ahead")
  norm() { sed -E "s#$dir/(nodes/node[0-9]+/)?dump#ROOT#g" "$1" |
    python3 -c 'import json, sys; v = json.load(sys.stdin); v.pop("ahead", None); print(json.dumps(v, indent=1))'; }
  if diff <(norm "$dir/one.json") <(norm "$dir/joined.json") > /dev/null; then
    echo "the joined verdict is the single-place verdict"
  else
    echo "the joined verdict differs from the single-place verdict:"; diff <(norm "$dir/one.json") <(norm "$dir/joined.json") | head -20
    exit 1
  fi
fi
