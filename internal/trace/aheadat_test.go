package trace

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// aheadRun writes a generated scenario and returns its rank folders and
// the offline verdict.
func aheadRun(t *testing.T, scenario string) ([]dump.RankDir, *verdict.Verdict) {
	t.Helper()
	for _, sc := range synth.Scenarios() {
		if sc.Name != scenario {
			continue
		}
		dir := filepath.Join(t.TempDir(), "dump")
		if _, err := synth.Generate(sc.Spec, dir); err != nil {
			t.Fatal(err)
		}
		l, err := dump.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Run(context.Background(), Options{Path: dir})
		if err != nil {
			t.Fatal(err)
		}
		return l.Dirs, v
	}
	t.Fatalf("no scenario %s", scenario)
	return nil, nil
}

// AheadAt at the step a trace judges gives the trace's warnings; with some
// of them given, it gives every other warning exactly as without them. It
// leaves the given ones out, unless the tensor's other statistic is still
// in play: the gradients of sharp-gradient-fp16 and gain-runaway-fp16 climb
// in both Max and Min, and only the more urgent is shown, so every warning
// is judged again; exp-drift-fp16's climb in Max only, so none is.
func TestAheadAtGiven(t *testing.T) {
	for _, tt := range []struct {
		scenario string
		dropsAll bool // with every warning given, none is judged again
	}{{"sharp-gradient-fp16", false}, {"gain-runaway-fp16", false}, {"exp-drift-fp16", true}} {
		scenario := tt.scenario
		t.Run(scenario, func(t *testing.T) {
			dirs, v := aheadRun(t, scenario)
			judged := v.Origin.Step - 1
			full, warns := AheadAt(context.Background(), dirs, judged, policy.Default(), 2, nil)
			if len(warns) > 0 || len(full) == 0 || !reflect.DeepEqual(full, v.Ahead) {
				t.Fatalf("AheadAt at step %d: %d warnings %v, the trace's %d", judged, len(full), warns, len(v.Ahead))
			}
			for i := range full {
				for _, given := range [][]verdict.Ahead{full[i : i+1], full[:i+1]} {
					isGiven := func(op, tensor, stat string) bool {
						for _, g := range given {
							if g.Op == op && g.Tensor == tensor && g.Stat == stat {
								return true
							}
						}
						return false
					}
					got, _ := AheadAt(context.Background(), dirs, judged, policy.Default(), 2, isGiven)
					fresh := func(as []verdict.Ahead) []verdict.Ahead {
						out := []verdict.Ahead{}
						for _, a := range as {
							if !isGiven(a.Op, a.Tensor, a.Stat) {
								out = append(out, a)
							}
						}
						return out
					}
					if !reflect.DeepEqual(fresh(got), fresh(full)) {
						t.Errorf("%d given: the others differ:\n%+v\nwithout given:\n%+v", len(given), fresh(got), fresh(full))
					}
					if len(given) == len(full) && (len(got) == 0) != tt.dropsAll {
						t.Errorf("every warning given, %d of %d still judged", len(got), len(full))
					}
				}
			}
		})
	}
}
