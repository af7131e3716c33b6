package monitor

import (
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
)

// The real TrainerMon output of the mask-hidden-sqrt run records a boolean
// padding mask among its targets (min False, max True) and placeholder
// rows for non-tensor gradients: it reads without a warning, and its first
// anomaly is the run's truth, rank 2's local gradients at step 3.
func TestRealTrainerMonBoolRows(t *testing.T) {
	dir := filepath.Join(realruns.Dir(t, "mask-hidden-sqrt"), "monitor")
	r, f := readRun(t, dir, Options{})
	for _, w := range r.Warnings {
		t.Errorf("warning %v", w)
	}
	if !f.Found || f.Step != 3 || f.Origin == nil || len(f.Origin.Ranks) != 1 || f.Origin.Ranks[0] != 2 {
		t.Fatalf("found %v at step %d, origin %+v; want rank 2 at step 3", f.Found, f.Step, f.Origin)
	}
}
