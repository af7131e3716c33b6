package trace

import (
	"os"
	"testing"
)

// BenchmarkTraceDir traces the run in $NANHUNT_BENCH_DIR (a dump_path, for
// profiling a trace of any shape: bench/compare.sh BENCH_DIR=... keeps its
// runs); MB/s counts the bytes read.
func BenchmarkTraceDir(b *testing.B) {
	dir := os.Getenv("NANHUNT_BENCH_DIR")
	if dir == "" {
		b.Skip("NANHUNT_BENCH_DIR names no run")
	}
	benchTrace(b, dir)
}
