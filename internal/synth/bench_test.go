package synth

import (
	"io/fs"
	"os"
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
		size = dirBytes(dir)
		b.StartTimer()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size)/1e6, "MB/run")
}

// BenchmarkGenerateLarge writes an 8-rank dense run of two dumped steps
// with dump.json files of about 32 MB (512 MB in all) and reports the
// output rate.
func BenchmarkGenerateLarge(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 512 MB")
	}
	spec, err := Fit(Spec{Name: "large", Ranks: 8, Steps: []int{0, 1}, Model: Dense, Hidden: 4096, Batch: 1, Seq: 4096,
		Vocab: 32000, LossLog: true, Seed: 1, TargetFileBytes: 32 << 20,
		Fault: &Fault{Kind: ExpOverflow, Step: 1, Ranks: []int{3}}})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "run")
		b.StartTimer()
		if _, err := Generate(spec, dir); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		size = dirBytes(dir)
		os.RemoveAll(dir)
		b.StartTimer()
	}
	b.SetBytes(size)
	b.ReportMetric(float64(size)/1e6, "MB/run")
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var size int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	return size
}
