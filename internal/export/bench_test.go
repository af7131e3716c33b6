package export

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// BenchmarkExport exports the 32-rank demo run (160 dump.json files, every
// step and rank) to a fresh folder each time; MB/s counts the dump.json
// bytes read, rows/s the rows written.
func BenchmarkExport(b *testing.B) {
	src := filepath.Join(b.TempDir(), "dump")
	if _, err := synth.Generate(synth.Demo(), src); err != nil {
		b.Fatal(err)
	}
	outs := b.TempDir()
	var rows int64
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		s, err := Run(context.Background(), Options{Path: src, Out: filepath.Join(outs, strconv.Itoa(n))})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(s.BytesRead)
		rows = s.Rows
	}
	b.ReportMetric(float64(rows)*float64(n)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows), "rows/op")
}
