package reference

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// An anomaly whose next dumped step shows nothing but could not be read
// whole did not recover: whether it lasted cannot be told (README 9), so
// it stands. The generator's truth says so, the reference too, and the
// fast path with its normal and tiny limits: loss-scale-recovered (an
// overflow on rank 1 at step 2, clean again at step 4) with rank 0's
// dump.json of step 4 damaged in each way the generator damages a file,
// and the randomized runs that found it (seed 1091: a forward-only run of
// 16 ranks whose rank 8 has no data member at the step after the fault;
// seed 1755: the next step's file of rank 1 cut).
func TestNextStepNotReadWholeIsNoRecovery(t *testing.T) {
	var recovered synth.Spec
	for _, sc := range synth.Scenarios() {
		if sc.Name == "loss-scale-recovered" {
			recovered = sc.Spec
		}
	}
	if recovered.Name == "" {
		t.Fatal("no scenario loss-scale-recovered")
	}
	specs := map[string]synth.Spec{"seed 1091": synth.Random(1091), "seed 1755": synth.Random(1755)}
	for _, d := range []synth.Damage{{Kind: "no-data"}, {Kind: "empty-data"}, {Kind: "cut-header"}, {Kind: "dup-data"}, {TruncateAt: 0.5}} {
		d.Step, d.Rank = 4, 0
		s := recovered
		s.Damage = []synth.Damage{d}
		specs[fmt.Sprintf("step 4 rank 0 %s%v", d.Kind, map[bool]string{true: " cut at half"}[d.TruncateAt > 0])] = s
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := synth.Generate(spec, filepath.Join(t.TempDir(), "run"))
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Anomaly || len(tr.Recovered) > 0 || tr.Step != spec.Fault.Step {
				t.Errorf("truth: anomaly %v at step %d, recovered %+v: want the anomaly of step %d, none recovered",
					tr.Anomaly, tr.Step, tr.Recovered, spec.Fault.Step)
			}
			for _, p := range checkGenerated(t.TempDir(), spec) {
				t.Error(p)
			}
		})
	}
}
