package trace

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// Every generated scenario (one per trap and format variant) must give the
// verdict its simulation recorded.
func TestVerdictMatchesGeneratedTruth(t *testing.T) {
	scenarios := synth.Scenarios()
	if len(scenarios) < 20 {
		t.Fatalf("only %d scenarios", len(scenarios))
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "dump")
			truth, err := synth.Generate(sc.Spec, dir)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Run(context.Background(), Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			checkTruth(t, v, truth)
			checkCode(t, v, sc.Spec)
		})
	}
}

func TestDemoVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo run is 55 MB")
	}
	dir := filepath.Join(t.TempDir(), "dump")
	truth, err := synth.Generate(synth.Demo(), dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	checkTruth(t, v, truth)
	if truth.Step != 6 || !equalInts(truth.Ranks, []int{3, 7}) || !truth.Tie {
		t.Errorf("the demo's truth changed: %+v", truth)
	}
}

// checkCode: a captured origin has its code line, unless the scenario
// removed the stack.json of the rank it is read from.
func checkCode(t *testing.T, v *verdict.Verdict, spec synth.Spec) {
	t.Helper()
	o := v.Origin
	if o == nil || !o.Captured {
		return
	}
	for _, d := range spec.Damage {
		if d.DropStack && d.Step == o.Step && d.Rank == o.Ranks[0] {
			if o.Code != nil {
				t.Errorf("code %+v found without a stack.json", o.Code)
			}
			return
		}
	}
	if o.Code == nil || o.Code.File == "" || o.Code.Line == 0 {
		t.Errorf("no code line for %s (stack v%d)", o.Op, spec.Format.StackVersion)
	}
}

func checkTruth(t *testing.T, v *verdict.Verdict, truth *synth.Truth) {
	t.Helper()
	if v.Anomaly != truth.Anomaly {
		t.Fatalf("anomaly = %v, want %v (origin %+v)", v.Anomaly, truth.Anomaly, v.Origin)
	}
	if !truth.Anomaly {
		return
	}
	o := v.Origin
	ranks := append([]int(nil), truth.Ranks...)
	sort.Ints(ranks)
	if o.Step != truth.Step || !equalInts(o.Ranks, ranks) || o.Op != truth.Op || o.Stage != truth.Stage ||
		o.Kind != truth.Kind || o.Captured != truth.Captured {
		t.Errorf("origin: step %d ranks %v op %s stage %s kind %s captured %v\n  want: step %d ranks %v op %s stage %s kind %s captured %v\n  reasons %v",
			o.Step, o.Ranks, o.Op, o.Stage, o.Kind, o.Captured,
			truth.Step, ranks, truth.Op, truth.Stage, truth.Kind, truth.Captured, o.Reasons)
	}
	if o.Tie != truth.Tie {
		t.Errorf("tie = %v, want %v", o.Tie, truth.Tie)
	}
	switch {
	case truth.FirstNaN == nil && v.FirstNaN != nil:
		t.Errorf("first_nan = %+v, want null", v.FirstNaN)
	case truth.FirstNaN != nil && (v.FirstNaN == nil || v.FirstNaN.Op != truth.FirstNaN.Op):
		t.Errorf("first_nan = %+v, want %+v", v.FirstNaN, truth.FirstNaN)
	}
	switch c := v.Carrier; {
	case truth.Carrier == nil && c != nil:
		t.Errorf("carrier = %+v, want none", c)
	case truth.Carrier != nil && c == nil:
		t.Errorf("no carrier, want %+v", truth.Carrier)
	case truth.Carrier != nil:
		want := truth.Carrier
		to := append([]int(nil), want.ToRanks...)
		sort.Ints(to)
		from := append([]int(nil), want.FromRanks...)
		sort.Ints(from)
		if c.Op != want.Op || c.Step != want.Step || !equalInts(c.ToRanks, to) || !equalInts(c.FromRanks, from) {
			t.Errorf("carrier = %+v, want %+v", c, want)
		}
	}
}
