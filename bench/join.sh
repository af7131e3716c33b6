#!/usr/bin/env bash
# The join of summaries by two nanhunt binaries, run in turn, round by
# round (the machine is shared: a binary's rounds and the other's meet the
# same load), with and without nanhunt's soft memory limit. For each binary
# it prints the median and range of wall time, CPU time (user + sys) and
# peak RSS (GNU time -v), and checks that both give the same verdict.
#
#   bench/join.sh OLD NEW DIR/sums [ROUNDS]     # DIR from bench/cluster.sh DIR
set -euo pipefail
old=${1:?usage: bench/join.sh OLD NEW SUMS [ROUNDS]}
new=${2:?usage: bench/join.sh OLD NEW SUMS [ROUNDS]}
sums=${3:?usage: bench/join.sh OLD NEW SUMS [ROUNDS]}
rounds=${4:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # name env binary
  env $2 /usr/bin/time -v -o "$tmp/time" "$3" trace "$sums" --format json -o "$tmp/$1.json" 2>/dev/null || true
  awk -v n="$1" -F': ' '
    /Elapsed \(wall clock\)/ { m = split($2, t, ":"); w = t[m] + 60 * t[m-1] }
    /User time/ { u = $2 } /System time/ { s = $2 }
    /Maximum resident set size/ { r = $2 }
    END { printf "%s %.2f %.2f %d\n", n, w, u + s, r / 1024 }' "$tmp/time" >> "$tmp/rounds"
}
for i in $(seq "$rounds"); do
  for lim in limit off; do
    envs=GOMEMLIMIT=; [ "$lim" = off ] && envs=GOMEMLIMIT=off
    run "old-$lim" "$envs" "$old"
    run "new-$lim" "$envs" "$new"
  done
  cmp -s "$tmp/old-limit.json" "$tmp/new-limit.json" || { echo "round $i: the verdicts differ"; exit 1; }
done
echo "$rounds rounds, in turn; median (min-max): wall s, CPU s (user+sys), peak RSS MB"
stat() { # name column: median (min-max)
  grep "^$1 " "$tmp/rounds" | cut -d' ' -f"$2" | sort -n |
    awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%g (%g-%g)", m, v[1], v[NR] }'
}
for n in old-limit new-limit old-off new-off; do
  echo "$n: wall $(stat "$n" 2) s, CPU $(stat "$n" 3) s, peak RSS $(stat "$n" 4) MB"
done
echo "(limit: nanhunt's own 48 MiB soft memory limit; off: GOMEMLIMIT=off)"
