package trace

import (
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// SummarySizes finds what the join decodes, for every record that sized
// calls, on the summaries of the real msprobe run; a rank-step no summary
// holds is an error.
func TestSummarySizesLikeTheJoin(t *testing.T) {
	realRun := filepath.Join(t.TempDir(), "dump")
	if err := copyDir(filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1"), realRun); err != nil {
		t.Fatal(err)
	}
	files := summariseNodes(t, []string{realRun}, false)
	rs, err := loadSummaries(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	sizes := SummarySizes(files)
	sized := 0
	for k, place := range rs.recs.all() {
		r, err := rs.read(place)
		if err != nil {
			t.Fatal(err)
		}
		if r.Details == nil || r.Details.SizesErr != "" || len(r.Details.Sizes) == 0 {
			continue
		}
		sized++
		ops := slices.Sorted(maps.Keys(r.Details.Sizes))
		got, dumpPath, err := sizes(k.step, k.rank, ops)
		if err != nil {
			t.Fatalf("step %d rank %d: %v", k.step, k.rank, err)
		}
		if dumpPath != string(r.Dump) || !reflect.DeepEqual(got, r.Details.Sizes) {
			t.Errorf("step %d rank %d: %v in %s, want %v in %s", k.step, k.rank, got, dumpPath, r.Details.Sizes, r.Dump)
		}
	}
	if sized == 0 {
		t.Fatal("no record sized its calls")
	}
	if _, _, err := sizes(99, 0, []string{"Torch.sqrt"}); err == nil {
		t.Error("step 99: no error")
	}
}
