package monitor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/climb"
)

// writeBigActv writes a TrainerMon actv file of about mb megabytes in a
// rank folder under dir and returns the number of data rows.
func writeBigActv(b testing.TB, dir string, mb int) int {
	fd := filepath.Join(dir, "Dec03_21-34-40-rank0-1a2b3c4d")
	if err := os.MkdirAll(fd, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(fd, "actv_0-99.csv"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "vpp_stage,name,step,micro_step,min,max,norm,nans,mean,shape,dtype")
	rows, size := 0, 0
	mods := []string{"input_layernorm", "self_attention.linear_qkv", "self_attention.core_attention", "self_attention.dense", "pre_mlp_layernorm", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"}
	for step := 0; size < mb<<20; step++ {
		for layer := 0; layer < 32; layer++ {
			for _, m := range mods {
				for micro := 0; micro < 4; micro++ {
					for _, t := range []string{"input", "output_0", "output_1"} {
						v := float64(rows%997) / 991
						n, _ := fmt.Fprintf(w, "0,%d.%s.%s,%d,%d,%s,%s,%s,0.0,%s,\"[4096, 1024]\",torch.bfloat16\n", layer, m, t, step, micro, pyFloat(-v-0.123456), pyFloat(v+1.654321), pyFloat(v*1234.5678+1), pyFloat(v/7+1e-6))
						size += n
						rows++
					}
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return rows
}

// BenchmarkReadActv reads a ~50 MB actv CSV (one rank, no anomaly, so
// every row is parsed and judged).
func BenchmarkReadActv(b *testing.B) { benchReadActv(b, Options{Jobs: 1}) }

// BenchmarkReadActvAhead reads the same file following every row's max
// and min for a warning before the NaN, as nanhunt trace does.
func BenchmarkReadActvAhead(b *testing.B) {
	benchReadActv(b, Options{Jobs: 1, Ahead: func(string, string, []climb.Point) bool { return false }})
}

func benchReadActv(b *testing.B, opt Options) {
	dir := b.TempDir()
	rows := writeBigActv(b, dir, 50)
	st, err := os.Stat(filepath.Join(dir, "Dec03_21-34-40-rank0-1a2b3c4d", "actv_0-99.csv"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := Read(context.Background(), dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		if r.RowsRead != int64(rows) || r.Findings().Found {
			b.Fatalf("rows %d of %d, found %v", r.RowsRead, rows, r.Findings().Found)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
