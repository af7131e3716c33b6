package trainlog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeMegatronLog writes a Megatron-LM log of about size bytes: iteration
// lines with a little chatter between them, a NaN grad norm near the end.
func writeMegatronLog(tb testing.TB, size int) (string, int64) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "rank0.log")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	var n int64
	for it := 1; n < int64(size); it++ {
		grad := fmt.Sprintf("%.3f", 1+float64(it%97)/100)
		if int64(size)-n < 2000 {
			grad = "nan"
		}
		line := megLineText(it, fmt.Sprintf("%.6E", 7-float64(it%1000)/1000), grad, 0, 0)
		if it%50 == 0 {
			line += fmt.Sprintf("saving checkpoint at iteration %8d to /ckpt/iter_%07d\n", it, it)
		}
		k, _ := w.WriteString(line)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path, n
}

func BenchmarkReadMegatron(b *testing.B) {
	path, n := writeMegatronLog(b, 50<<20)
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l, err := Read(context.Background(), []string{path}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if l.Summary().FirstNonFinite == nil {
			b.Fatal("no NaN found")
		}
	}
}
