package trainlog

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenSummaries renders the Summary of each input in testdata as JSON
// and compares it with testdata/<name>.golden; -update rewrites them.
func TestGoldenSummaries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		opt   Options
	}{
		{"megatron-fp16", []string{"megatron-fp16.log"}, Options{}},
		{"per-rank", []string{"per-rank/rank0.log", "per-rank/rank1.log"}, Options{}},
		{"deepspeed", []string{"deepspeed.log"}, Options{}},
		{"generic", []string{"generic-rank2.txt"}, Options{Patterns: Patterns{Step: `it (\d+)`, Loss: `loss=(\S+)`, GradNorm: `gn:`}}},
		{"jsonl", []string{"metrics.jsonl"}, Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := filepath.Abs("testdata")
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range tc.files {
				paths = append(paths, filepath.Join(dir, f))
			}
			l := mustRead(t, paths, tc.opt)
			got := jsonOf(t, struct {
				Files    []File    `json:"files"`
				Warnings []Warning `json:"warnings"`
				Summary  Summary   `json:"summary"`
			}{l.Files, l.Warnings, l.Summary()}, dir)
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("summary differs from %s (run go test -update to accept):\n%s", golden, got)
			}
		})
	}
}
