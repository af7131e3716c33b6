package nanhunt_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/verdict"
)

func TestMain(m *testing.M) {
	code := m.Run()
	realruns.Cleanup()
	os.Exit(code)
}

// A real run dumped every other step, whose value was born in a step the
// dump skipped: the dump alone can only name the update that wrote the
// weights its first dumped step reads; with the run's training log the
// verdict says where it was born (the step, its forward, the ranks whose
// loss went NaN first) and the first thing to do is to dump that step and
// read those ranks' forward. The dump, the log and the explanation never
// contradict each other.
func TestRealRunsBornEarlier(t *testing.T) {
	checked := 0
	for _, name := range realruns.Scenarios() {
		truth := realruns.Truth(t, name)
		b := truth.Extras.UndumpedBirth
		if b == nil {
			continue
		}
		checked++
		dir := realruns.Dir(t, name)
		for _, level := range truth.Levels {
			t.Run(name+"/"+level, func(t *testing.T) {
				in := nanhunt.Inputs{
					Dump: filepath.Join(dir, level),
					Log:  nanhunt.LogInputs{Paths: []string{filepath.Join(dir, "train-log", "rank*.json")}},
				}
				v, err := nanhunt.Run(context.Background(), in)
				if err != nil {
					t.Fatal(err)
				}
				checkBornEarlier(t, v, truth)
			})
		}
	}
	if checked == 0 {
		t.Fatal("no real run with a birth in a step it did not dump")
	}
}

func checkBornEarlier(t *testing.T, v *verdict.Verdict, truth realruns.TruthFile) {
	t.Helper()
	b := truth.Extras.UndumpedBirth
	if o := v.Origin; o == nil || o.Step != truth.Truth.Step || o.Op != truth.Truth.Op || o.Captured {
		t.Fatalf("origin %+v, want %s at step %d, not captured", o, truth.Truth.Op, truth.Truth.Step)
	}
	var got *verdict.Explanation
	for i, e := range v.Explanations {
		if e.Kind == verdict.ExplainBornEarlier {
			got = &v.Explanations[i]
		}
	}
	ranks := ranklist.Name(b.LogLossNaNRanks)
	switch {
	case got == nil:
		t.Fatalf("no %s explanation in %+v", verdict.ExplainBornEarlier, v.Explanations)
	case got.Step != b.Step || !strings.Contains(got.Text, "step "+strconv.Itoa(b.Step)+"'s "+b.Phase) || !strings.Contains(got.Text, ranks):
		t.Errorf("explanation %+v does not place the birth in step %d's %s on %s", got, b.Step, b.Phase, ranks)
	}
	if len(v.NextSteps) == 0 || !strings.Contains(v.NextSteps[0], "Dump step "+strconv.Itoa(b.Step)) || !strings.Contains(v.NextSteps[0], ranks+"'s "+b.Phase) {
		t.Errorf("next steps %q do not start with dumping step %d and reading %s's %s", v.NextSteps, b.Step, ranks, b.Phase)
	}
	if e := v.Evidence; e == nil || len(e.Contradictions) > 0 {
		t.Errorf("evidence %+v: want the log read and no contradiction", e)
	}
	if p := v.Plan; p == nil || !slices.Contains(p.Config.Step, b.Step) {
		t.Errorf("plan %+v does not dump step %d", p, b.Step)
	}
}
