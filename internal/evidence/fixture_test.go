package evidence

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/trace"

	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// The real runs' per-rank JSON logs, read through the generic mode, agree
// with the dump: the loss turns NaN at the origin step (a forward origin
// that a collective in the forward spreads) or the step after it (a
// backward origin), and the parameters the origin step's update wrote are
// listed after it.
func TestEvidenceFromRealTrainLogs(t *testing.T) {
	for _, tc := range []struct {
		scenario       string
		lossStep       int
		paramsAtOrigin bool
	}{
		{"bwd-sqrt-zero-rank2-step5", 6, true},
		{"fwd-log-neg-rank2-step5", 5, true},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			root := filepath.Join(fixturedir.Dir(t), "msprobe-generated", tc.scenario)
			logs, _ := filepath.Glob(filepath.Join(root, "train-log", "rank*.json"))
			if len(logs) != 4 {
				t.Fatalf("%d logs", len(logs))
			}
			l, err := trainlog.Read(context.Background(), logs, trainlog.Options{Format: trainlog.FormatGeneric})
			if err != nil {
				t.Fatal(err)
			}
			le := FromLog(l)
			if le.FirstNaNStep == nil || *le.FirstNaNStep != tc.lossStep || le.FirstNaNMetric != "loss" || !slices.Equal(le.LoggedRanks, []int{0, 1, 2, 3}) {
				t.Fatalf("log evidence %+v: want a NaN loss first at step %d on ranks 0-3", le, tc.lossStep)
			}
			v, err := trace.Run(context.Background(), trace.Options{Path: filepath.Join(root, "L1")})
			if err != nil {
				t.Fatal(err)
			}
			v = Combine(v, le, nil, plan.Options{})
			e := v.Evidence
			if len(e.Contradictions) > 0 || len(e.Agreements) < 2 {
				t.Errorf("agreements %q, contradictions %q: want the log to agree with the dump", e.Agreements, e.Contradictions)
			}
			if tc.paramsAtOrigin && (le.NonFiniteParams == nil || le.NonFiniteParams.Step != v.Origin.Step) {
				t.Errorf("non-finite parameters %+v, want them listed after the origin step %d", le.NonFiniteParams, v.Origin.Step)
			}
			if v.Plan == nil || v.Plan.Config.Task != "tensor" {
				t.Errorf("plan %+v: the dump covers the origin, so the plan is the tensor dump", v.Plan)
			}
		})
	}
}
