package trace

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/realruns"
)

// PhasesOf gives the calls of a real run the phases the verdict gives
// them: the custom grad kernel that a backward calls is in the backward,
// the first call of the step in the forward, a receiver's gradient
// all_reduce in the reduction.
func TestPhasesOf(t *testing.T) {
	dir := filepath.Join(realruns.Dir(t, "custom-bwd-kernel"), "L1")
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	layout, err := dump.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	rankDir := func(rank int) dump.RankDir {
		for _, d := range layout.Dirs {
			if d.Step == v.Origin.Step && d.Rank == rank {
				return d
			}
		}
		t.Fatalf("no folder of rank %d", rank)
		return dump.RankDir{}
	}
	for _, st := range v.Steps {
		if st.Step != v.Origin.Step {
			continue
		}
		for _, a := range st.Anomalous {
			got, err := PhasesOf(context.Background(), rankDir(a.Rank), []int{0, a.Index})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != policy.Forward {
				t.Errorf("rank %d: the step's first call is %v", a.Rank, got[0])
			}
			if got[a.Index].String() != a.Phase {
				t.Errorf("rank %d %s: PhasesOf says %v, the verdict %s", a.Rank, a.Op, got[a.Index], a.Phase)
			}
		}
	}
	if v.Origin.Phase != "backward" {
		t.Errorf("origin phase %s", v.Origin.Phase)
	}
}
