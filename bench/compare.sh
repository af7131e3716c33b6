#!/usr/bin/env bash
# compare.sh: how fast and how small is "nanhunt trace" next to reading the
# same bytes with cat and parsing them with Python's json module?
#
# Run from the repository root:
#
#   bench/compare.sh                                   # 8 ranks x 6 steps x 128 MB, fault at step 5
#   RANKS=4 STEPS=6 FILE_MB=16 FAULT_STEP=5 bench/compare.sh
#   BENCH_DIR=/data/nanhunt-bench bench/compare.sh     # write (and keep, and reuse) the runs there
#
# What it does:
#   1. builds nanhunt (go build -o "$tmp/nanhunt" ./cmd/nanhunt);
#   2. writes a generated msprobe run with "nanhunt synth": RANKS ranks (8),
#      steps 0..STEPS-1 (6), dump.json files of about FILE_MB MB (128), a
#      fault of kind FAULT (exp-overflow) at step FAULT_STEP (5) on one rank,
#      model MODEL (dense);
#   3. warms the page cache (cat of every file once), so that the numbers
#      measure CPU, not the disk;
#   4. times and measures the peak RSS (/usr/bin/time -v) of
#        nanhunt trace DIR --format json -o /dev/null
#        cat FILES > /dev/null
#        python3: json.load of each of FILES, one after the other
#      where FILES are the dump.json files nanhunt has to read to reach its
#      answer: every rank of steps 0..FAULT_STEP+1 (the trace reads the step
#      after the first anomaly to see whether it lasts);
#   5. prints seconds, MB/s and peak RSS of each, the ratios python/nanhunt
#      and nanhunt/cat, and checks the targets: at least 30x faster than the
#      Python load, within 3x of cat, peak RSS at most 64 MB;
#   6. writes the same run shape with the fault at step 1 and traces it, to
#      show that the trace time follows the bytes up to the first anomalous
#      step, not the size of the run.
#
# The Python line keeps one file in memory at a time (a list of json.load
# results would hold every file at once and run out of memory on large
# runs); it is the least any Python analyser of these dumps does.
#
# Needs: go (1.26), python3, /usr/bin/time (Debian package "time":
# apt-get install time), awk; free disk space for one run, about
# RANKS x STEPS x FILE_MB MB (6 GB with the defaults; each run is deleted
# after use unless BENCH_DIR is set, then twice that); memory for Python to
# hold one parsed dump.json (about 10 times its size). With the defaults it
# takes about five minutes on two cores, most of it in Python.
set -euo pipefail

RANKS=${RANKS:-8}
STEPS=${STEPS:-6}
FILE_MB=${FILE_MB:-128}
FAULT_STEP=${FAULT_STEP:-5}
FAULT=${FAULT:-exp-overflow}
MODEL=${MODEL:-dense}
EARLY_STEP=1

die() { echo "compare.sh: $*" >&2; exit 2; }

[[ -f go.mod && -d cmd/nanhunt ]] || die "run me from the repository root (bench/compare.sh)"
command -v go >/dev/null || die "go is not on PATH"
command -v python3 >/dev/null || die "python3 is not on PATH"
command -v awk >/dev/null || die "awk is not on PATH"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing: install the Debian package 'time' (apt-get install time)"
for v in RANKS STEPS FILE_MB FAULT_STEP; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((RANKS >= 1)) || die "RANKS must be at least 1"
((STEPS >= 2)) || die "STEPS must be at least 2"
((FAULT_STEP >= EARLY_STEP && FAULT_STEP < STEPS)) || die "FAULT_STEP must be in $EARLY_STEP..$((STEPS - 1))"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nanhunt-bench.XXXXXX")
keep=0
if [[ -n ${BENCH_DIR:-} ]]; then
	mkdir -p "$BENCH_DIR"
	work=$(cd "$BENCH_DIR" && pwd)
	keep=1
else
	work=$tmp
fi
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building nanhunt"
go build -o "$tmp/nanhunt" ./cmd/nanhunt
nanhunt=$tmp/nanhunt

# generate NAME FAULT_STEP: writes (or reuses, under BENCH_DIR) a run and
# prints its folder.
generate() {
	local name=$1 fstep=$2
	local dir=$work/$name
	local args=(synth --ranks "$RANKS" --steps "0-$((STEPS - 1))" --model "$MODEL" --file-mb "$FILE_MB"
		--fault "$FAULT" --fault-step "$fstep")
	if ((keep)) && [[ -f $dir.args && $(cat "$dir.args") == "${args[*]}" && -f $dir/synth_truth.json ]]; then
		echo "== reusing $dir" >&2
	else
		rm -rf "$dir" "$dir.args"
		echo "== nanhunt ${args[*]} -o $dir" >&2
		"$nanhunt" "${args[@]}" -o "$dir" >&2 || die "nanhunt synth failed"
		echo "${args[*]}" >"$dir.args"
	fi
	echo "$dir"
}

# files DIR LAST: the dump.json files of steps 0..LAST, in step and rank order.
files() {
	local dir=$1 last=$2 s
	for ((s = 0; s <= last; s++)); do
		[[ -d $dir/step$s ]] || continue
		printf '%s\n' "$dir/step$s"/rank*/dump.json | sort -V | while IFS= read -r f; do
			if [[ -f $f ]]; then echo "$f"; fi
		done
	done
}

warm() { # cat every file of a run once
	echo "== warming the page cache: cat of every file of $1" >&2
	find "$1" -type f -exec cat {} + >/dev/null
}

# measure LABEL CMD...: runs CMD under /usr/bin/time -v, its standard
# output to /dev/null; sets SECS (wall
# clock, from bash's microsecond clock: time -v rounds to 10 ms), RSS_MB
# (time -v's maximum resident set size) and CODE (CMD's exit status).
measure() {
	local label=$1
	shift
	local tf=$tmp/time.$label t0 t1
	t0=$EPOCHREALTIME
	set +e
	/usr/bin/time -v -o "$tf" "$@" >/dev/null
	CODE=$?
	set -e
	t1=$EPOCHREALTIME
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
	RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$tf")
	[[ -n $RSS_MB ]] || die "could not read /usr/bin/time's report for $label"
}

# trace_run DIR: times nanhunt trace on DIR (exit status 1 = anomaly found).
trace_run() {
	measure trace "$nanhunt" trace "$1" --format json -o /dev/null
	case $CODE in
	1) ;;
	0) echo "compare.sh: warning: nanhunt found no anomaly in $1" >&2 ;;
	*) die "nanhunt trace failed on $1 (exit status $CODE)" ;;
	esac
}

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN {if (s > 0) printf "%.0f", b / 1e6 / s; else print "inf"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1f", a / b; else print "inf"}'; }
verdict() { awk -v x="$1" -v op="$2" -v t="$3" 'BEGIN {ok = (op == ">=") ? x >= t : x <= t; print ok ? "met" : "MISSED"}'; }

# --- the run with the fault at FAULT_STEP ---------------------------------
run=$(generate "run-fault-step$FAULT_STEP" "$FAULT_STEP")
warm "$run"
last=$((FAULT_STEP + 1 < STEPS ? FAULT_STEP + 1 : STEPS - 1)) # the last step nanhunt reads
mapfile -t read_files < <(files "$run" "$last")
((${#read_files[@]} > 0)) || die "no dump.json files under $run"
bytes=$(du -cb "${read_files[@]}" | tail -1 | cut -f1)
total=$(find "$run" -type f -name dump.json -print0 | du -cb --files0-from=- | tail -1 | cut -f1)

echo "== nanhunt trace $run --format json -o /dev/null" >&2
trace_run "$run"
t_secs=$SECS t_rss=$RSS_MB
echo "== cat of the ${#read_files[@]} dump.json files nanhunt reads (steps 0-$last)" >&2
measure cat cat "${read_files[@]}"
((CODE == 0)) || die "cat failed"
c_secs=$SECS c_rss=$RSS_MB
echo "== python3 json.load of the same files" >&2
measure python python3 -c 'import json, sys
for f in sys.argv[1:]:
    with open(f) as fh:
        json.load(fh)' "${read_files[@]}"
((CODE == 0)) || die "the Python load failed"
p_secs=$SECS p_rss=$RSS_MB
if ((!keep)); then rm -rf "$run"; fi

# --- the same shape with the fault at step 1 ------------------------------
early=$(generate "run-fault-step$EARLY_STEP" "$EARLY_STEP")
warm "$early"
early_last=$((EARLY_STEP + 1 < STEPS ? EARLY_STEP + 1 : STEPS - 1))
mapfile -t early_files < <(files "$early" "$early_last")
early_bytes=$(du -cb "${early_files[@]}" | tail -1 | cut -f1)
echo "== nanhunt trace $early --format json -o /dev/null" >&2
trace_run "$early"
e_secs=$SECS e_rss=$RSS_MB
if ((!keep)); then rm -rf "$early"; fi

# --- report ---------------------------------------------------------------
py_ratio=$(ratio "$p_secs" "$t_secs")
cat_ratio=$(ratio "$t_secs" "$c_secs")
echo
echo "nanhunt trace against cat and Python on a generated run"
echo "  run: $RANKS ranks x $STEPS steps, $MODEL model, dump.json about $FILE_MB MB, $(mb "$total") MB of dump.json in all"
echo "  fault: $FAULT at step $FAULT_STEP; read: steps 0-$last, ${#read_files[@]} files, $(mb "$bytes") MB"
echo "  page cache warmed first (every file read once): the times measure CPU, not the disk"
echo "  $(nproc) CPUs (nanhunt reads one file per CPU at a time; cat and Python use one)"
echo
printf "  %-28s %10s %10s %14s\n" "" "seconds" "MB/s" "peak RSS MB"
printf "  %-28s %10s %10s %14s\n" "nanhunt trace" "$t_secs" "$(rate "$bytes" "$t_secs")" "$t_rss"
printf "  %-28s %10s %10s %14s\n" "cat" "$c_secs" "$(rate "$bytes" "$c_secs")" "$c_rss"
printf "  %-28s %10s %10s %14s\n" "python3 json.load" "$p_secs" "$(rate "$bytes" "$p_secs")" "$p_rss"
echo
printf "  %-40s %8s   target %-8s %s\n" "python / nanhunt (times faster)" "${py_ratio}x" ">= 30x" "$(verdict "$py_ratio" ">=" 30)"
printf "  %-40s %8s   target %-8s %s\n" "nanhunt / cat (times slower)" "${cat_ratio}x" "<= 3x" "$(verdict "$cat_ratio" "<=" 3)"
printf "  %-40s %8s   target %-8s %s\n" "nanhunt peak RSS (MB)" "$t_rss" "<= 64" "$(verdict "$t_rss" "<=" 64)"
echo
echo "  same run shape, fault at step $EARLY_STEP instead of $FAULT_STEP:"
printf "  %-28s %10s s  (%s MB in steps 0-%d)\n" "trace, fault at step $FAULT_STEP" "$t_secs" "$(mb "$bytes")" "$last"
printf "  %-28s %10s s  (%s MB in steps 0-%d), peak RSS %s MB\n" "trace, fault at step $EARLY_STEP" "$e_secs" "$(mb "$early_bytes")" "$early_last" "$e_rss"
echo "  the trace time follows the bytes up to the step after the first anomaly, not the size of the run"
if ((keep)); then echo "  runs kept under $work"; fi
