package evidence

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/trace"

	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// A generated run's dump, its Megatron-LM log and its monitor output,
// read together: the log's iterations map to the dump's steps by the
// Megatron default, and nothing contradicts the dump.
func TestEvidenceFromGeneratedRun(t *testing.T) {
	for _, name := range []string{"log-negative", "sqrt-zero-backward", "exp-overflow", "cast-overflow"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, ok := scenarioNamed(name)
			if !ok {
				t.Fatalf("no scenario %s", name)
			}
			root := t.TempDir()
			dir := filepath.Join(root, "dump")
			side := synth.Sidecars{LogDir: filepath.Join(root, "log"), MonitorDir: filepath.Join(root, "monitor"), MonitorOps: []string{"min", "max", "norm", "nans"}}
			truth, err := synth.GenerateWith(sc.Spec, dir, side)
			if err != nil {
				t.Fatal(err)
			}
			l, err := trainlog.Read(context.Background(), []string{filepath.Join(side.LogDir, "train.log")}, trainlog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			le := FromLog(l)
			if le.FirstNaNStep == nil || *le.FirstNaNStep < truth.Step || *le.FirstNaNIteration != *le.FirstNaNStep+1 {
				t.Fatalf("log evidence %+v: want a first non-finite step at or after %d, iteration = step + 1", le, truth.Step)
			}
			run, err := monitor.Read(context.Background(), side.MonitorDir, monitor.Options{})
			if err != nil {
				t.Fatal(err)
			}
			me := FromMonitor(run)
			if me.Step == nil || *me.Step != truth.Step {
				t.Fatalf("monitor evidence %+v: want step %d", me, truth.Step)
			}
			v, err := trace.Run(context.Background(), trace.Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			v = Combine(v, le, me, plan.Options{})
			e := v.Evidence
			if len(e.Contradictions) > 0 {
				t.Errorf("contradictions %q (agreements %q)", e.Contradictions, e.Agreements)
			}
			if !anyContains(e.Agreements, "The monitor first shows it at step") {
				t.Errorf("agreements %q: want the monitor's step to agree", e.Agreements)
			}
			if v.Plan == nil || v.Plan.Config.Task != "tensor" {
				t.Errorf("plan %+v: the dump holds the origin, so the next dump is its tensors", v.Plan)
			}
		})
	}
}

func scenarioNamed(name string) (synth.Scenario, bool) {
	for _, sc := range synth.Scenarios() {
		if sc.Name == name {
			return sc, true
		}
	}
	return synth.Scenario{}, false
}
