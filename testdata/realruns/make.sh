#!/bin/sh
# Regenerate testdata/realruns from scratch: msprobe source, stubs, the training
# runs, the scan (truth files) and the archives.
#
#   sh testdata/realruns/make.sh [scenario ...]      (default: all nineteen)
#
# Needs Debian's /usr/bin/python3 with python3-torch (1.13), numpy, yaml, pandas,
# openpyxl, tqdm, and a bare git copy of Ascend/msprobe (MSPROBE_GIT).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
MSPROBE_GIT=${MSPROBE_GIT:-/work/.mirror/Ascend+msprobe/repo}
MSPROBE_COMMIT=8ff00da37660ef42e2ba945a2ec349b6f85314e1
SRC=${SRC:-/tmp/realruns-msprobe-src}
STUBS=${STUBS:-/tmp/realruns-stubs}
JOB=/home/user/job            # neutral path: it is what stack.json shows
PY=/usr/bin/python3

ALL="custom-bwd-kernel pp-p2p-microbatch zero1-reduce-broadcast reducer-zero-count forward-only sparse-steps-loss-scale
     fp16-allreduce-two-groups inf-absorbed-next-step pp-weight-from-update
     mask-hidden-sqrt activation-checkpointing activation-checkpointing-nonreentrant l0-module-only pp-1f1b
     sparse-steps-undumped-origin
     warn-exp-lr warn-fp16-activations warn-fp16-grad-sum warn-clean-warmup"
SCENARIOS=${*:-$ALL}

# 1. msprobe from source, plus the einops stub msprobe imports at start-up
rm -rf "$SRC" "$STUBS"
mkdir -p "$SRC"
git --git-dir="$MSPROBE_GIT" archive "$MSPROBE_COMMIT" | tar -x -C "$SRC"
mkdir -p "$STUBS/einops"
printf 'def rearrange(*a, **k):\n    raise NotImplementedError\n' > "$STUBS/einops/__init__.py"
export PYTHONPATH="$SRC/python:$STUBS"
$PY -c "from msprobe.pytorch import PrecisionDebugger"

# 2. the job folder: the script and the msprobe configs
mkdir -p "$JOB/configs" "$JOB/logs"
cp "$HERE/train.py" "$JOB/train.py"
cp "$HERE"/configs/*.json "$JOB/configs/"

steps_of() {
    case $1 in
        sparse-steps-loss-scale) echo 9 ;;
        warn-*) echo 10 ;;
        *) echo 5 ;;
    esac
}
levels_of() {
    case $1 in
        custom-bwd-kernel|reducer-zero-count|fp16-allreduce-two-groups) echo "L1 mix" ;;
        mask-hidden-sqrt|activation-checkpointing) echo "L1 mix" ;;
        l0-module-only) echo "L0" ;;
        *) echo "L1" ;;
    esac
}

port=29650
for s in $SCENARIOS; do
    rm -rf "$JOB/dumps/$s" "$JOB/logs/$s"
    for level in $(levels_of "$s"); do
        port=$((port + 1))
        (cd "$JOB" && $PY train.py --scenario "$s" --dump-config "configs/$s.$level.json" \
            --steps "$(steps_of "$s")" --port "$port" --log-dir "logs/$s/$level" \
            > "$JOB/logs/$s.$level.out" 2>&1) || { tail -40 "$JOB/logs/$s.$level.out"; exit 1; }
    done
    # TrainerMon, in a run of its own (its statistic calls must stay out of the dumps)
    first=$(levels_of "$s" | cut -d' ' -f1)
    runs=$(levels_of "$s")
    if [ -f "$JOB/configs/$s.monitor.json" ]; then
        port=$((port + 1))
        (cd "$JOB" && $PY train.py --scenario "$s" --monitor-config "configs/$s.monitor.json" \
            --monitor-dir "$JOB/dumps/$s/monitor" --steps "$(steps_of "$s")" --port "$port" \
            --log-dir "logs/$s/monitor" > "$JOB/logs/$s.monitor.out" 2>&1) || { tail -40 "$JOB/logs/$s.monitor.out"; exit 1; }
        runs="$runs monitor"
    fi
    # the training log: every run must have trained exactly the same
    mkdir -p "$JOB/dumps/$s/train-log"
    for run in $runs; do
        for r in 0 1 2 3; do
            cmp "$JOB/logs/$s/$first/rank$r.json" "$JOB/logs/$s/$run/rank$r.json"
        done
    done
    cp "$JOB/logs/$s/$first/"rank?.json "$JOB/dumps/$s/train-log/"

    # 3. scan: checks the ground truth against the dumps, writes <s>.truth.json
    $PY "$HERE/scan.py" "$JOB/dumps" "$s" --out "$HERE"

    # 4. pack, reproducibly
    (cd "$JOB/dumps" && tar --sort=name --mtime='2026-01-01 00:00:00Z' --owner=0 --group=0 \
        --numeric-owner --mode='u=rwX,go=rX' -cf - "$s") | gzip -9n > "$HERE/$s.tar.gz"
    ls -l "$HERE/$s.tar.gz"
done
