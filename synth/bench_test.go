package synth

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// BenchmarkDemo generates the demo run and reports the bytes written.
func BenchmarkDemo(b *testing.B) {
	var size int64
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		if _, err := Generate(Demo(), dir); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		size = 0
		filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
		b.StartTimer()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size)/1e6, "MB/run")
}
