package export

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// parquetFiles lists the .parquet files under dir, relative and sorted.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) != ".json" {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// A generated multi-rank run: one file per (step, rank), Hive layout, every
// tensor once; --steps and --ranks select the files.
func TestGeneratedRunLayoutAndFilters(t *testing.T) {
	src := generate(t, "tie-log-negative")
	layout, err := dump.Discover(src)
	if err != nil {
		t.Fatal(err)
	}
	tensors := map[[2]int]int{}
	for _, d := range layout.Dirs {
		wants, damage := readDump(t, d.Dump)
		if damage != nil {
			t.Fatal(damage)
		}
		tensors[[2]int{d.Step, d.Rank}] = len(wants)
	}
	set := func(v ...int) map[int]bool {
		if v == nil {
			return nil
		}
		m := map[int]bool{}
		for _, x := range v {
			m[x] = true
		}
		return m
	}
	tests := []struct {
		name         string
		steps, ranks map[int]bool
	}{
		{"all", nil, nil},
		{"steps 2", set(2), nil},
		{"ranks 0,3", nil, set(0, 3)},
		{"steps 1-2 rank 1", set(1, 2), set(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, Options{Path: src, Steps: tt.steps, Ranks: tt.ranks, Jobs: 2})
			var wantFiles []string
			var wantRows int64
			for _, d := range layout.Dirs {
				if (tt.steps == nil || tt.steps[d.Step]) && (tt.ranks == nil || tt.ranks[d.Rank]) {
					wantFiles = append(wantFiles, fmt.Sprintf("step=%d/rank=%d/part-0.parquet", d.Step, d.Rank))
					wantRows += int64(tensors[[2]int{d.Step, d.Rank}])
				}
			}
			sort.Strings(wantFiles)
			got := parquetFiles(t, s.Out)
			if !slices.Equal(got, wantFiles) {
				t.Fatalf("files %v, want %v", got, wantFiles)
			}
			var rows int64
			for _, f := range got {
				var step, rank int
				fmt.Sscanf(f, "step=%d/rank=%d/", &step, &rank)
				rs := readRows(t, filepath.Join(s.Out, f))
				for _, r := range rs {
					if int(r.Step) != step || int(r.Rank) != rank {
						t.Fatalf("%s: row of step %d rank %d", f, r.Step, r.Rank)
					}
				}
				if len(rs) != tensors[[2]int{step, rank}] {
					t.Errorf("%s: %d rows, want %d", f, len(rs), tensors[[2]int{step, rank}])
				}
				rows += int64(len(rs))
			}
			if rows != wantRows || s.Rows != wantRows || s.Written != len(wantFiles) || !s.Complete() {
				t.Errorf("rows %d (summary %d), want %d; written %d; damaged %d", rows, s.Rows, wantRows, s.Written, s.Damaged)
			}
		})
	}
}

// The injected NaN is where the rows say it is.
func TestGeneratedRunFindsTheNaN(t *testing.T) {
	src := generate(t, "tie-log-negative")
	s := run(t, Options{Path: src, Steps: map[int]bool{2: true}})
	for _, rank := range []int{1, 2} {
		rows := readRows(t, filepath.Join(s.Out, "step=2", fmt.Sprintf("rank=%d", rank), "part-0.parquet"))
		found := false
		for _, r := range rows {
			if r.EntryName == "Torch.log.0.forward" && r.Field == "output" {
				found = r.Nonfinite == "nan" && r.API == "Torch.log" && r.Direction == "forward"
			}
		}
		if !found {
			t.Errorf("rank %d: no Torch.log.0.forward output row with nonfinite nan", rank)
		}
	}
}

// MindSpore's graph/ and pynative/ levels become a mode= partition.
func TestModeLevels(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dump")
	var spec synth.Spec
	for _, s := range synth.Scenarios() {
		if s.Name == "level-l1" {
			spec = s.Spec
		}
	}
	spec.Steps = []int{1, 2}
	for _, mode := range []string{"graph", "pynative"} {
		if _, err := synth.Generate(spec, filepath.Join(root, mode)); err != nil {
			t.Fatal(err)
		}
	}
	s := run(t, Options{Path: root})
	got := parquetFiles(t, s.Out)
	var want []string
	for _, mode := range []string{"graph", "pynative"} {
		for _, step := range spec.Steps {
			for rank := range spec.Ranks {
				want = append(want, fmt.Sprintf("mode=%s/step=%d/rank=%d/part-0.parquet", mode, step, rank))
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if m := s.manifest(); !slices.Equal(m.Partitioning, []string{"mode", "step", "rank"}) {
		t.Errorf("partitioning %v", m.Partitioning)
	}
}
