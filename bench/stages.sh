#!/usr/bin/env bash
# stages.sh: the Go benchmarks of every stage of a trace, six runs each,
# summarised with benchstat.
#
#   bench/stages.sh [OUT]          # OUT defaults to bench/results/stages-<cpu>.txt
#
# Stages: the byte search (vector and scalar, on a clean and a NaN-holding
# real dump.json; and each vector kernel the CPU has: AVX2, AVX-512
# compares, AVX-512 VBMI table look-ups), the backward search for the last
# backward entry, the tokenizer (every token; skipping entries token by
# token, through the structural index, and by their closing lines, each
# with and without its vector search), the structural pass alone (vector and plain Go), the dump.json reader (summary
# and details, the tensors read directly and token by token), the sizing of a plan's ops (the search for their names
# against the reader), and the whole trace of the demo run on one and two
# cores. Each reports MB/s and allocations. The raw
# output goes to OUT, benchstat's summary to OUT with .benchstat; the
# vector-against-scalar comparison of the byte search is printed last.
#
# Needs: go, and benchstat (go install golang.org/x/perf/cmd/benchstat@latest).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v benchstat >/dev/null || { echo "stages.sh: benchstat is not on PATH (go install golang.org/x/perf/cmd/benchstat@latest)" >&2; exit 2; }
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo | tr -s ' ' | tr ' /' '__')
out=${1:-bench/results/stages-$cpu.txt}
mkdir -p "$(dirname "$out")"
{
	go test ./dump -run '^$' -bench 'Prefilter|Reader|LastEntry|BackwardNeedle|NeedleKernel|Measure' -count 6 -cpu 1
	go test ./internal/jsonlex -run '^$' -bench 'Next|SkipValue|Classify' -count 6 -cpu 1
	go test ./internal/trace -run '^$' -bench TraceDemo -count 6 -cpu 1,2
} | tee "$out"
benchstat "$out" > "${out%.txt}.benchstat"
cat "${out%.txt}.benchstat"
echo
echo "== the byte search, vector against scalar"
benchstat -filter '.name:Prefilter' -col /search "$out"
echo
echo "== sizing a plan's ops: the search for their names against the reader"
benchstat -filter '.name:Measure' -col /how "$out"
echo
echo "== the reader: tensors read straight from the window against token by token"
benchstat -filter '.name:Reader' -col /read "$out"
echo
echo "== the vector kernels, AVX2 against AVX-512 and AVX-512 VBMI (where the CPU has them)"
benchstat -filter '.name:(PrefilterKernel OR NeedleKernel)' -col /kernel "$out"
