package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
	"github.com/nanhunt/nanhunt/verdict"
)

// The real runs whose truth says more than the origin (realruns.Extras)
// get the explanations it calls for, at every level, with the normal
// limits and with tiny ones: a NaN a where hid (the call that hid it and
// where it came back, and advice to select the input before the call), a
// recompute (the backward of a forward call activation checkpointing ran
// again), a level that records no collective (the ranks the next step
// shows it on), and receives of gradients that take their send's stage.
func TestRealRunsExplanations(t *testing.T) {
	checked := 0
	for _, name := range realruns.Scenarios() {
		truth := realruns.Truth(t, name)
		x := truth.Extras
		if x.Hidden == nil && x.Checkpoint == nil && x.CollectivesRecorded == nil && x.P2P == nil {
			continue
		}
		checked++
		dir := realruns.Dir(t, name)
		for _, level := range truth.Levels {
			for _, tiny := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/tiny=%v", name, level, tiny), func(t *testing.T) {
					ctx := context.Background()
					if tiny {
						ctx = tinylimits.With(ctx)
					}
					v, err := Run(ctx, Options{Path: filepath.Join(dir, level), Timeline: true})
					if err != nil {
						t.Fatal(err)
					}
					if v.Origin == nil || v.Origin.Stage != truth.Truth.Stage {
						t.Fatalf("origin %+v, want stage %s", v.Origin, truth.Truth.Stage)
					}
					checkExplained(t, v, truth, level)
				})
			}
		}
	}
	if checked < 4 {
		t.Fatalf("%d real runs with extras, want at least 4", checked)
	}
}

// checkExplained holds a verdict to what its run's extras call for.
func checkExplained(t *testing.T, v *verdict.Verdict, truth realruns.TruthFile, level string) {
	t.Helper()
	x := truth.Extras
	if h := x.Hidden; h != nil {
		e := explanationOf(t, v, verdict.ExplainHidden, truth.Truth.Op)
		if e != nil && (!strings.Contains(e.Text, h.By) || !strings.Contains(e.Text, h.Reappears)) {
			t.Errorf("hidden: %q does not name %s and %s", e.Text, h.By, h.Reappears)
		}
		if len(v.NextSteps) == 0 || !strings.Contains(v.NextSteps[0], "torch.where(x > 0, x, 1)") {
			t.Errorf("hidden: next steps %q do not select the input first", v.NextSteps)
		}
	}
	if c := x.Checkpoint; c != nil && c.OriginForwardIsRecompute {
		e := explanationOf(t, v, verdict.ExplainRecompute, c.OriginForward)
		if e != nil && !strings.Contains(e.Text, c.RecomputeFrame) {
			t.Errorf("recompute: %q does not name the frame %s", e.Text, c.RecomputeFrame)
		}
	}
	if r := x.CollectivesRecorded; r != nil && !*r {
		e := explanationOf(t, v, verdict.ExplainNoCollectives, "")
		hc := x.HiddenCarrier
		if e != nil && hc != nil && (!strings.Contains(e.Text, fmt.Sprintf("from step %d", hc.Seen.Step)) ||
			!strings.Contains(e.Text, notation.FormatRanges(hc.ToRanks)) || !strings.Contains(e.Text, hc.Seen.Op)) {
			t.Errorf("no collectives: %q does not say ranks %v show it from step %d at %s", e.Text, hc.ToRanks, hc.Seen.Step, hc.Seen.Op)
		}
	}
	if p := x.P2P; p != nil {
		for _, c := range p.Calls {
			if !c.Nonfinite || !strings.HasPrefix(c.Op, "Distributed.recv.") {
				continue
			}
			explanationOf(t, v, verdict.ExplainP2PStage, c.Op)
			if got := stateOf(v, p.Step, c.Rank); got == nil || got.Op != c.Op || got.Stage != c.Stage {
				t.Errorf("p2p: step %d rank %d reads %+v, want %s at stage %s", p.Step, c.Rank, got, c.Op, c.Stage)
			}
		}
	}
}

// explanationOf is the verdict's explanation of a kind about op; the
// test fails when there is none.
func explanationOf(t *testing.T, v *verdict.Verdict, kind, op string) *verdict.Explanation {
	t.Helper()
	for i, e := range v.Explanations {
		if e.Kind == kind && e.Op == op {
			return &v.Explanations[i]
		}
	}
	t.Errorf("no %s explanation about %q in %+v", kind, op, v.Explanations)
	return nil
}

// stateOf is how a rank first met the anomaly in a step, nil if it did not.
func stateOf(v *verdict.Verdict, step, rank int) *verdict.RankState {
	for _, st := range v.Steps {
		if st.Step != step {
			continue
		}
		for i, a := range st.Anomalous {
			if a.Rank == rank {
				return &st.Anomalous[i]
			}
		}
	}
	return nil
}

// A send the scan did not place (one read again past the collectives it
// keeps) is placed by reading its rank's file once more: in the phase the
// scan's finish gives the sends it keeps, on every rank and step of a real
// pipeline run.
func TestPhaseAgainPlacesAsTheScan(t *testing.T) {
	layout, err := dump.Discover(filepath.Join(realruns.Dir(t, "pp-1f1b"), "L1"))
	if err != nil {
		t.Fatal(err)
	}
	placed := 0
	for _, rd := range layout.Dirs {
		s := newScanner(policy.Default(), nil).scanFile(context.Background(), rd, scanAll)
		for i := range s.colls {
			c := &s.colls[i]
			if c.p2p != 1 || c.send == 0 {
				continue
			}
			placed++
			if got := phaseAgain(s, c); got != c.phase || got == policy.PhaseUnknown {
				t.Errorf("step %d rank %d %s: read again %v, the scan placed it %v", rd.Step, rd.Rank, c.name, got, c.phase)
			}
		}
	}
	if placed == 0 {
		t.Fatal("no send of a severe value was placed")
	}
}
