#!/usr/bin/env bash
# compare.sh: how fast and how small is "nanhunt trace" next to the read
# floor (reading the same bytes with dd, one reader per CPU) and Python's
# json module, on the two run shapes that bound its speed?
#
# Run from the repository root:
#
#   bench/compare.sh                                   # 4 ranks x 4 steps x 53 MB, the four shapes
#   RANKS=8 STEPS=6 FILE_MB=128 bench/compare.sh
#   SHAPES=training PYTHON=0 bench/compare.sh          # one shape, no Python
#   SHAPES="bigrun2 bigrun" BIGRUN2_RUN=D1 BIGRUN_RUN=D2 bench/compare.sh
#                                                      # the independent shapes, on runs already written (read only)
#   REPEAT=1 bench/compare.sh                          # one timed round, not seven
#   BENCH_DIR=/data/nanhunt-bench bench/compare.sh     # write (and keep, and reuse) the runs there
#
# The shapes (both written by "nanhunt synth", fault FAULT (exp-overflow) in
# the last dumped step on one rank, so that every file up to it is read):
#   training  forward, backward, gradient all_reduce and optimizer, attention
#             masks holding -inf in every layer: the byte search clears most
#             files without parsing them (the masks lie before the last
#             backward call);
#   forward   msprobe data_mode ["forward"] (synth --data-mode forward): no
#             backward call, so no mask is cleared by its position (a file
#             with masks is cleared because the byte search met no backward
#             name in it), and the fault step's files are walked with every
#             entry in the tail, whose optimizer calls stack.json places.
#
# and two shapes written apart from the project, by the generators of
# SHARED/bench (SHARED defaults to ../shared; see its README), so that the
# speed is also measured on shapes the code was not written around:
#   bigrun2   python3 SHARED/bench/bigrun2.py: training-shaped, one-space
#             indentation, a masked_fill(-inf) mask into the softmax in
#             every layer (Min -Infinity, Mean -Infinity, Norm Infinity),
#             every forward call's backward entry in reverse order, then
#             the gradient all_reduce and the optimizer; a Torch.exp
#             overflow on rank 1 at the last step;
#   bigrun    python3 SHARED/bench/bigrun.py: forward only, masks in every
#             layer.
# Their files are about BIGRUN_MB MB (--mb, default 64, as the generators'
# README runs them); BIGRUN2_RUN and BIGRUN_RUN name runs already written
# by them (with the same RANKS, STEPS and fault step), which are read and
# never written or deleted.
#
# For each shape it
#   1. writes the run (RANKS ranks, steps 0..STEPS-1, dump.json files of
#      about FILE_MB MB, model MODEL), and warms the page cache (cat of every
#      file once), so that the numbers measure CPU, not the disk;
#   2. runs REPEAT rounds (default 7), the shapes interleaved (round 1 of
#      every shape, then round 2, ...), each timing, one right after the
#      other,
#        nanhunt trace DIR --format json -o /dev/null
#      (its peak RSS and CPU time measured by /usr/bin/time -v) and the read floor: one
#      "dd bs=1M of=/dev/null" reader per CPU, the files dealt out
#      round-robin, every byte copied into user space; then the same two on
#      one core (taskset -c 0: nanhunt, and one dd after the other). The
#      ratio is taken within each round, so that both sides of it see the
#      host in the same state (a virtual machine's copy speed moves by a
#      factor of two from one hour to the next); the median round's ratio is
#      what is checked, and the fastest and median times are printed;
#   4. times python3 json.load of each file, one after the other (one file in
#      memory at a time: the least any Python analyser of these dumps does);
#      PYTHON=0 leaves it out;
# then prints seconds, MB/s, CPU seconds, peak RSS and the ratios, and checks the
# targets: nanhunt within 3x of the floor (median round) on the training
# shape, 6x on the forward shape, 2x on bigrun2 and 3x on bigrun, at least
# 30x faster than the Python load, peak RSS at most 64 MB. Last, the training shape with the fault at step 1 is traced, to show
# that the time follows the bytes up to the first anomalous step.
#
# Needs: go (1.26), python3, dd, /usr/bin/time (Debian package "time"), awk,
# taskset (util-linux; without it the one-core rounds are left out);
# free disk space for one run at a time (about RANKS x STEPS x FILE_MB MB;
# each run is deleted after use unless BENCH_DIR is set); memory for Python
# to hold one parsed dump.json (about 10 times its size). With the defaults
# it takes about four minutes on two cores, most of it in Python.
set -euo pipefail

RANKS=${RANKS:-4}
STEPS=${STEPS:-4}
FILE_MB=${FILE_MB:-53}
FAULT=${FAULT:-exp-overflow}
MODEL=${MODEL:-dense}
SHAPES=${SHAPES:-training forward bigrun2 bigrun}
SHARED=${SHARED:-../shared}
BIGRUN_MB=${BIGRUN_MB:-64}
BIGRUN2_RUN=${BIGRUN2_RUN:-}
BIGRUN_RUN=${BIGRUN_RUN:-}
PYTHON=${PYTHON:-1}
REPEAT=${REPEAT:-7}
FAULT_STEP=$((STEPS - 1))
EARLY_STEP=1

die() { echo "compare.sh: $*" >&2; exit 2; }

[[ -f go.mod && -d cmd/nanhunt ]] || die "run me from the repository root (bench/compare.sh)"
command -v go >/dev/null || die "go is not on PATH"
command -v python3 >/dev/null || die "python3 is not on PATH"
command -v awk >/dev/null || die "awk is not on PATH"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing: install the Debian package 'time' (apt-get install time)"
for v in RANKS STEPS FILE_MB BIGRUN_MB; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((RANKS >= 1)) || die "RANKS must be at least 1"
((STEPS >= 2)) || die "STEPS must be at least 2"
for shape in $SHAPES; do
	case $shape in
	training | forward) ;;
	bigrun2 | bigrun) [[ -f $SHARED/bench/$shape.py ]] || die "$SHARED/bench/$shape.py is missing (SHARED names the shared fixtures)" ;;
	*) die "SHAPES holds '$shape': want training, forward, bigrun2 and/or bigrun" ;;
	esac
done

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

# generate SHAPE FAULT_STEP: writes (or reuses, under BENCH_DIR) a run and
# prints its folder.
generate() {
	local shape=$1 fstep=$2
	case $shape in bigrun2 | bigrun)
		independent "$shape" "$fstep"
		return
		;;
	esac
	local dir=$work/$shape-fault-step$fstep
	local mode=all
	[[ $shape == forward ]] && mode=forward
	local args=(synth --world-size "$RANKS" --steps "0-$((STEPS - 1))" --model "$MODEL" --file-mb "$FILE_MB"
		--data-mode "$mode" --fault "$FAULT" --fault-step "$fstep")
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

# independent SHAPE FAULT_STEP: as generate, with SHARED/bench/SHAPE.py;
# BIGRUN2_RUN or BIGRUN_RUN, when set, is used as it is.
independent() {
	local shape=$1 fstep=$2 given
	given=BIGRUN_RUN
	[[ $shape == bigrun2 ]] && given=BIGRUN2_RUN
	if [[ -n ${!given} ]]; then
		[[ -f ${!given}/truth.json ]] || die "$given=${!given} holds no truth.json: not a run of $shape.py"
		echo "== using $given=${!given} (read only)" >&2
		echo "${!given}"
		return
	fi
	local dir=$work/$shape-fault-step$fstep
	local args=(--ranks "$RANKS" --steps "$STEPS" --mb "$BIGRUN_MB" --fault-step "$fstep" --fault-rank $((RANKS > 1 ? 1 : 0)))
	if ((keep)) && [[ -f $dir.args && $(cat "$dir.args") == "$shape ${args[*]}" && -f $dir/truth.json ]]; then
		echo "== reusing $dir" >&2
	else
		rm -rf "$dir" "$dir.args"
		echo "== python3 $SHARED/bench/$shape.py $dir ${args[*]}" >&2
		python3 "$SHARED/bench/$shape.py" "$dir" "${args[@]}" >&2 || die "$shape.py failed"
		echo "$shape ${args[*]}" >"$dir.args"
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
# (time -v's maximum resident set size), CPU_S (user and system seconds)
# and CODE (CMD's exit status).
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
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
	RSS_MB=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$tf")
	CPU_S=$(awk -F': ' '/User time|System time/ {c += $2} END {printf "%.2f", c}' "$tf")
	[[ -n $RSS_MB ]] || die "could not read /usr/bin/time's report for $label"
}

# trace_once DIR [PREFIX...]: times nanhunt trace on DIR once (exit status
# 1 = anomaly found), run under PREFIX (taskset -c 0); sets SECS and RSS_MB.
trace_once() {
	local dir=$1
	shift
	measure trace "$@" "$nanhunt" trace "$dir" --format json -o /dev/null
	case $CODE in
	1) ;;
	0) echo "compare.sh: warning: nanhunt found no anomaly in $dir" >&2 ;;
	*) die "nanhunt trace failed on $dir (exit status $CODE)" ;;
	esac
}

# trace_run DIR: times nanhunt trace on DIR REPEAT times; sets SECS to the
# fastest run and RSS_MB to the largest.
trace_run() {
	local i best="" rss=0
	for ((i = 0; i < REPEAT; i++)); do
		trace_once "$1"
		best=$(awk -v a="$SECS" -v b="$best" 'BEGIN {print (b == "" || a < b) ? a : b}')
		rss=$(awk -v a="$RSS_MB" -v b="$rss" 'BEGIN {print (a > b) ? a : b}')
	done
	SECS=$best RSS_MB=$rss
}

# stats V...: "fastest median" of the values.
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {printf "%s %s", v[1], v[int((NR + 1) / 2)]}'; }

# round SHAPE: one round of nanhunt and the read floor on SHAPE's run, one
# right after the other, on every CPU and then on one; appends the times,
# the ratio, the CPU seconds and the peak RSS to the shape's lists (TS, FS,
# RS, CS, T1S, F1S, R1S, RSSS).
round() {
	local shape=$1 t f dir=${RUN[$1]} files=()
	mapfile -t files <"$tmp/files.$shape"
	trace_once "$dir"
	t=$SECS
	CS[$shape]+=" $CPU_S" RSSS[$shape]+=" $RSS_MB"
	floor "${files[@]}"
	f=$SECS
	TS[$shape]+=" $t" FS[$shape]+=" $f" RS[$shape]+=" $(awk -v a="$t" -v b="$f" 'BEGIN {printf "%.2f", a / b}')"
	FCS[$shape]+=" $FLOOR_CPU" CRS[$shape]+=" $(awk -v a="$CPU_S" -v b="$FLOOR_CPU" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "inf"}')"
	if ((${#one[@]})); then
		trace_once "$dir" "${one[@]}"
		t=$SECS
		f=$(one_floor "${files[@]}")
		T1S[$shape]+=" $t" F1S[$shape]+=" $f" R1S[$shape]+=" $(awk -v a="$t" -v b="$f" 'BEGIN {printf "%.2f", a / b}')"
	fi
}

# settle SHAPE: from the shape's lists, sets T (nanhunt fastest and
# median), F (floor), R (the ratios' smallest and median, and their largest
# in R_MAX), C (nanhunt's CPU seconds, fastest and median), FC (the
# floor's), CR (their ratio within each round, smallest and median), T1, F1, R1 (the same on
# one core) and RSS_MB (the largest).
settle() {
	local shape=$1
	# shellcheck disable=SC2086 # the lists are words
	{
		T=$(stats ${TS[$shape]}) F=$(stats ${FS[$shape]}) R=$(stats ${RS[$shape]}) C=$(stats ${CS[$shape]})
		FC=$(stats ${FCS[$shape]}) CR=$(stats ${CRS[$shape]})
		R_MAX=$(printf '%s\n' ${RS[$shape]} | sort -g | tail -1)
		RSS_MB=$(printf '%s\n' ${RSSS[$shape]} | sort -g | tail -1)
		T1="" F1="" R1=""
		if ((${#one[@]})); then T1=$(stats ${T1S[$shape]}) F1=$(stats ${F1S[$shape]}) R1=$(stats ${R1S[$shape]}); fi
	}
}

# one_floor FILES...: prints the seconds one dd reader on CPU 0 takes over
# every file, one after the other.
one_floor() {
	local t0 t1 f
	t0=$EPOCHREALTIME
	for f in "$@"; do taskset -c 0 dd if="$f" of=/dev/null bs=1M status=none; done
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

mb() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1e6}'; }
rate() { awk -v b="$1" -v s="$2" 'BEGIN {if (s > 0) printf "%.0f", b / 1e6 / s; else print "inf"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1f", a / b; else print "inf"}'; }
verdict() { awk -v x="$1" -v op="$2" -v t="$3" 'BEGIN {ok = (op == ">=") ? x >= t : x <= t; print ok ? "met" : "MISSED"}'; }

# ddlist K N FILES...: dd of every N-th file from the K-th (from 0).
ddlist() {
	local k=$1 n=$2 j
	shift 2
	for ((j = k; j < $#; j += n)); do
		dd if="${@:j+1:1}" of=/dev/null bs=1M status=none
	done
}
export -f ddlist

# floor FILES...: times one dd reader per CPU, the files dealt out
# round-robin; sets SECS, and FLOOR_CPU (the readers' user and system
# seconds).
floor() {
	local n t0 t1
	n=$(nproc)
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%U %S' -o "$tmp/time.floor" bash -c 'n=$1
shift
for ((i = 0; i < n; i++)); do ddlist "$i" "$n" "$@" & done
wait' floor "$n" "$@"
	t1=$EPOCHREALTIME
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}')
	FLOOR_CPU=$(awk '{printf "%.2f", $1 + $2}' "$tmp/time.floor")
}

# python_load FILES...: times json.load of each file; sets SECS and RSS_MB.
python_load() {
	measure python python3 -c 'import json, sys
for f in sys.argv[1:]:
    with open(f) as fh:
        json.load(fh)' "$@"
	((CODE == 0)) || die "the Python load failed"
}

report=()
row() { report+=("$(printf "  %-10s %-22s %9s %9s %12s" "$@")"); }
check() { report+=("$(printf "  %-10s %-38s %8s   target %-7s %s" "$1" "$2" "$3" "$4 $5" "$(verdict "$3" "$4" "$5")")"); }

declare -A RUN BYTES NFILES GIVEN TS FS RS CS FCS CRS T1S F1S R1S RSSS
one=()
command -v taskset >/dev/null && one=(taskset -c 0)
for shape in $SHAPES; do
	run=$(generate "$shape" "$FAULT_STEP")
	RUN[$shape]=$run
	GIVEN[$shape]=0
	[[ $shape == bigrun2 && -n $BIGRUN2_RUN || $shape == bigrun && -n $BIGRUN_RUN ]] && GIVEN[$shape]=1
	files "$run" "$FAULT_STEP" >"$tmp/files.$shape"
	mapfile -t read_files <"$tmp/files.$shape"
	((${#read_files[@]} > 0)) || die "no dump.json files under $run"
	BYTES[$shape]=$(du -cb "${read_files[@]}" | tail -1 | cut -f1)
	NFILES[$shape]=${#read_files[@]}
	TS[$shape]="" FS[$shape]="" RS[$shape]="" CS[$shape]="" FCS[$shape]="" CRS[$shape]="" T1S[$shape]="" F1S[$shape]="" R1S[$shape]="" RSSS[$shape]=""
done
for shape in $SHAPES; do warm "${RUN[$shape]}"; done
echo "== $REPEAT rounds, the shapes interleaved ($SHAPES): nanhunt trace RUN --format json -o /dev/null and the read floor ($(nproc) dd readers), on every CPU and on one" >&2
for ((i = 0; i < REPEAT; i++)); do
	for shape in $SHAPES; do round "$shape"; done
done

for shape in $SHAPES; do
	settle "$shape"
	run=${RUN[$shape]} bytes=${BYTES[$shape]}
	mapfile -t read_files <"$tmp/files.$shape"
	read -r t_secs t_med <<<"$T"
	read -r f_secs f_med <<<"$F"
	read -r r_min r_med <<<"$R"
	read -r c_min c_med <<<"$C"
	read -r fc_min fc_med <<<"$FC"
	read -r cr_min cr_med <<<"$CR"
	t_rss=$RSS_MB
	row "$shape" "$(mb "$bytes") MB, ${NFILES[$shape]} files" "seconds" "MB/s" "peak RSS MB"
	row "" "nanhunt trace" "$t_secs" "$(rate "$bytes" "$t_secs")" "$t_rss"
	row "" "read floor (dd x $(nproc))" "$f_secs" "$(rate "$bytes" "$f_secs")" ""
	report+=("$(printf "  %-10s fastest of %d rounds above; medians: nanhunt %s s, floor %s s" "" "$REPEAT" "$t_med" "$f_med")")
	report+=("$(printf "  %-10s CPU seconds (user + system): nanhunt %s (median %s), the dd readers %s (median %s): %sx, median round %sx" "" "$c_min" "$c_med" "$fc_min" "$fc_med" "$cr_min" "$cr_med")")
	if [[ -n $T1 ]]; then
		read -r t1_secs t1_med <<<"$T1"
		read -r f1_secs f1_med <<<"$F1"
		read -r r1_min r1_med <<<"$R1"
		report+=("$(printf "  %-10s one core (taskset -c 0): nanhunt %s s (median %s), dd one file after another %s s (median %s): %sx the copy, median round %sx" \
			"" "$t1_secs" "$t1_med" "$f1_secs" "$f1_med" "$r1_min" "$r1_med")")
	fi
	if ((PYTHON)); then
		echo "== $shape: python3 json.load of the same files" >&2
		python_load "${read_files[@]}"
		row "" "python3 json.load" "$SECS" "$(rate "$bytes" "$SECS")" "$RSS_MB"
		check "" "python / nanhunt (times faster)" "$(ratio "$SECS" "$t_secs")" ">=" 30
	fi
	case $shape in
	training | bigrun) target=3 ;;
	forward) target=6 ;;
	bigrun2) target=2 ;;
	esac
	report+=("$(printf "  %-10s nanhunt / read floor within each round: %s to %s, median %s" "" "$r_min" "$R_MAX" "$r_med")")
	check "" "nanhunt / read floor (median round)" "$r_med" "<=" "$target"
	check "" "nanhunt peak RSS (MB)" "$t_rss" "<=" 64
	if [[ $shape == training ]]; then train_secs=$t_secs train_bytes=$bytes; fi
	if ((!keep && !GIVEN[$shape])); then rm -rf "$run"; fi
done

# --- the training shape with the fault at step 1 -------------------------
early_line=""
if [[ " $SHAPES " == *" training "* ]] && ((FAULT_STEP > EARLY_STEP)); then
	early=$(generate training "$EARLY_STEP")
	warm "$early"
	early_last=$((EARLY_STEP + 1))
	mapfile -t early_files < <(files "$early" "$early_last")
	early_bytes=$(du -cb "${early_files[@]}" | tail -1 | cut -f1)
	echo "== training, fault at step $EARLY_STEP: nanhunt trace $early" >&2
	trace_run "$early"
	early_line=$(printf "  training, fault at step %d: %s s (%s MB in steps 0-%d, peak RSS %s MB) against %s s with the fault at step %d (%s MB)" \
		"$EARLY_STEP" "$SECS" "$(mb "$early_bytes")" "$early_last" "$RSS_MB" "$train_secs" "$FAULT_STEP" "$(mb "$train_bytes")")
	if ((!keep)); then rm -rf "$early"; fi
fi

# --- report ---------------------------------------------------------------
echo
echo "nanhunt trace against the read floor and Python, on generated runs"
echo "  runs: $RANKS ranks x $STEPS steps; training and forward: nanhunt synth, $MODEL model, dump.json about $FILE_MB MB, fault $FAULT"
echo "  bigrun2 and bigrun: $SHARED/bench, --mb $BIGRUN_MB, a Torch.exp overflow on rank 1; every fault at step $FAULT_STEP"
echo "  page cache warmed first (every file read once): the times measure CPU, not the disk"
echo "  $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)); nanhunt reads one file per CPU at a time, Python uses one"
echo
printf '%s\n' "${report[@]}"
if [[ -n $early_line ]]; then
	echo
	echo "$early_line"
	echo "  the trace time follows the bytes up to the step after the first anomaly, not the size of the run"
fi
if ((keep)); then echo "  runs kept under $work"; fi
