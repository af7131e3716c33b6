package callsize

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
)

// benchFile is a real msprobe dump.json with NaN and Infinity in it.
func benchFile(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(fixturedir.Dir(b), "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkMeasure sizes one op's calls (what a plan asks) in a real
// dump.json: through the search for the op's names (MeasureFile, on every
// core) and through the reader (Measure).
func BenchmarkMeasure(b *testing.B) {
	data := benchFile(b)
	ops := []string{"Torch.sqrt"}
	b.Run("how=search", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if s, err := MeasureFile(bytes.NewReader(data), int64(len(data)), ops); err != nil || s["Torch.sqrt"].Calls == 0 {
				b.Fatal(s, err)
			}
		}
	})
	b.Run("how=reader", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if s, err := Measure(bytes.NewReader(data), ops); err != nil || s["Torch.sqrt"].Calls == 0 {
				b.Fatal(s, err)
			}
		}
	})
}
