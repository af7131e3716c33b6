package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// On a generated run the plan is any-step by default: every step and every
// rank, the root API listed, its size estimated and the watch that ends
// the re-run; a small budget, or --mode same-step, gives today's config.
func TestPlanModes(t *testing.T) {
	sc, ok := scenarioNamed("sqrt-zero-backward")
	if !ok {
		t.Fatal("no scenario")
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(sc.Spec, dir); err != nil {
		t.Fatal(err)
	}
	v, err := trace.Run(context.Background(), trace.Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	o := v.Origin
	api := dump.ParseName(o.Op).Op()

	p := Make(v, Options{Measure: FromDump(dir)})
	c := p.Config
	if p.Mode != AnyStep || len(c.Step) != 0 || len(c.Rank) != 0 || !slices.Contains(c.Section.List, api) {
		t.Fatalf("default plan %s %+v, want any-step on every step and rank listing %s", p.Mode, c, api)
	}
	if e := p.Estimate; e == nil || e.PerRankStep <= 0 || e.Ranks != len(v.Scanned.Ranks) || e.Steps != o.Step+2 || e.Total != e.PerRankStep*int64(e.Ranks*e.Steps) {
		t.Errorf("estimate %+v", p.Estimate)
	}
	if !strings.Contains(p.Watch, "nanhunt watch ./nanhunt_followup --exit-on-anomaly") || !strings.Contains(p.Other, "same-step") {
		t.Errorf("watch %q, other %q", p.Watch, p.Other)
	}

	small := Make(v, Options{Measure: FromDump(dir), Budget: 1000})
	if small.Mode != SameStep || !slices.Equal(small.Config.Step, []int{o.Step}) || !strings.Contains(small.Other, "above the budget") {
		t.Errorf("over the budget: mode %s, steps %v, other %q", small.Mode, small.Config.Step, small.Other)
	}
	same := Make(v, Options{Measure: FromDump(dir), Mode: SameStep})
	if same.Mode != SameStep || same.Watch != "" || same.Estimate == nil || same.Estimate.Steps != 1 {
		t.Errorf("same-step: %+v", same)
	}
}

// The estimate, made from the statistics dump, against the bytes the real
// tensor dumps of the same scenarios wrote: within a factor of 1.5.
func TestEstimateAgainstRealTensorDumps(t *testing.T) {
	gen := filepath.Join(fixturedir.Dir(t), "msprobe-generated")
	for _, scenario := range []string{"bwd-sqrt-zero-rank2-step5", "fwd-log-neg-rank2-step5"} {
		ranks, _ := filepath.Glob(filepath.Join(gen, scenario, "tensor", "step*", "rank*"))
		if len(ranks) == 0 {
			t.Fatalf("%s: no tensor dump", scenario)
		}
		for _, rd := range ranks {
			rel, _ := filepath.Rel(filepath.Join(gen, scenario, "tensor"), rd)
			apis, actual := tensorDump(t, rd)
			s, err := Measure(filepath.Join(gen, scenario, "L1", rel, "dump.json"), apis)
			if err != nil {
				t.Fatal(err)
			}
			ratio := float64(s.Bytes) / float64(actual)
			t.Logf("%s %s: estimate %d bytes, actual %d (%.2f); %d calls, %d tensors", scenario, rel, s.Bytes, actual, ratio, s.Calls, s.Tensors)
			if ratio < 1/1.5 || ratio > 1.5 {
				t.Errorf("%s %s: estimate %d bytes, actual %d", scenario, rel, s.Bytes, actual)
			}
		}
	}
}

// tensorDump lists the APIs a tensor dump's rank folder holds, and the
// bytes of its dump.json and tensor files.
func tensorDump(t *testing.T, rd string) ([]string, int64) {
	f, err := os.Open(filepath.Join(rd, "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := dump.NewReader(f, dump.ReaderOptions{Select: func(string, int64) bool { return false }})
	var apis []string
	for r.Next() {
		if api := dump.ParseName(r.Entry().Name).Op(); !slices.Contains(apis, api) {
			apis = append(apis, api)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	total := info.Size()
	files, _ := filepath.Glob(filepath.Join(rd, "dump_tensor_data", "*"))
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			total += info.Size()
		}
	}
	return apis, total
}

// The plan says the NaN moves when the dump shows an earlier anomaly that
// did not last, or the log shows skipped iterations.
func TestPlanMoves(t *testing.T) {
	base := func() *verdict.Verdict {
		return &verdict.Verdict{Anomaly: true, Origin: &verdict.Origin{Step: 6, Ranks: []int{3, 7}, Op: "Torch.exp.0.forward", Captured: true}}
	}
	v := base()
	if m := moves(v); m != "" {
		t.Errorf("moves %q for a single anomaly", m)
	}
	v.Recovered = []verdict.Recovered{{Step: 2, Ranks: []int{1}, Op: "Torch.exp.0.forward"}}
	if m := moves(v); !strings.Contains(m, "step 2 on rank 1") || !strings.Contains(m, "moves") {
		t.Errorf("same op elsewhere: %q", m)
	}
	v = base()
	v.Evidence = &verdict.Evidence{Log: &verdict.LogEvidence{Skipped: []verdict.SkippedIteration{{Iteration: 4, Step: 3}}}}
	if m := moves(v); !strings.Contains(m, "skipped iteration 4") {
		t.Errorf("log skips: %q", m)
	}
}

// Measured names what Make asks Options.Measure for, and nothing when Make
// asks for nothing: a caller that starts the measure early starts the one
// the plan uses.
func TestMeasuredIsWhatMakeMeasures(t *testing.T) {
	captured := &verdict.Origin{Step: 6, Ranks: []int{3, 7}, Op: "Torch.exp.0.forward", Captured: true}
	for _, tt := range []struct {
		name string
		v    *verdict.Verdict
	}{
		{"captured", &verdict.Verdict{Anomaly: true, Origin: captured}},
		{"captured, the first NaN at its step", &verdict.Verdict{Anomaly: true, Origin: captured,
			FirstNaN: &verdict.OpRef{Step: 6, Op: "Tensor.__mul__.4.forward"}}},
		{"captured, the first NaN later", &verdict.Verdict{Anomaly: true, Origin: captured,
			FirstNaN: &verdict.OpRef{Step: 7, Op: "Tensor.__mul__.4.forward"}}},
		{"not captured", &verdict.Verdict{Anomaly: true, Origin: &verdict.Origin{Step: 6, Ranks: []int{3}, Op: "Torch.exp.0.forward", Stage: "forward"}}},
		{"unread", &verdict.Verdict{Anomaly: true, Origin: &verdict.Origin{Step: 6, Ranks: []int{3}, Unread: true}}},
		{"clean", &verdict.Verdict{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			Make(tt.v, Options{Measure: func(step, rank int, apis []string) (Sizes, error) {
				asked = append(asked, fmt.Sprint(step, rank, apis))
				return Sizes{}, nil
			}})
			step, rank, apis, ok := Measured(tt.v)
			var want []string
			if ok {
				want = []string{fmt.Sprint(step, rank, apis)}
			}
			if !slices.Equal(asked, want) {
				t.Errorf("Make measured %q, Measured says %q", asked, want)
			}
		})
	}
}
