package trace

import (
	"context"
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
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(v.Scanned.Bytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), Options{Path: dir}); err != nil {
			b.Fatal(err)
		}
	}
}
