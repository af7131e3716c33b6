package evidence

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/trainlog"
)

func intp(i int) *int { return &i }

// dumpVerdict is a verdict with an origin at step 5 on rank 2, steps 3-6
// dumped on ranks 0-3.
func dumpVerdict(stage string, captured, collective bool) *verdict.Verdict {
	v := &verdict.Verdict{
		Schema: verdict.Schema, Anomaly: true,
		Origin: &verdict.Origin{Step: 5, Ranks: []int{2}, Op: "Torch.sqrt.0.backward", Stage: stage, Kind: "inf", Captured: captured, Collective: collective,
			Chain: []string{"Module.encoder.FeatureEncoder.forward.0"}},
		Scanned: verdict.Scanned{Ranks: []int{0, 1, 2, 3}},
	}
	for s := 3; s <= 6; s++ {
		status := "clean"
		if s == 5 {
			status = "anomaly"
		}
		v.Steps = append(v.Steps, verdict.StepState{Step: s, Status: status, Ranks: "0-3"})
	}
	return v
}

func TestCombine(t *testing.T) {
	logAt := func(step int, metric, hint string, ranks ...int) *verdict.LogEvidence {
		return &verdict.LogEvidence{FirstNaNIteration: intp(step + 1), FirstNaNStep: intp(step), FirstNaNMetric: metric, StageHint: hint,
			Ranks: ranks, LoggedRanks: []int{0, 1, 2, 3}, Mapping: "step = iteration - 1"}
	}
	monAt := func(step int, stage, reduction string, ranks ...int) *verdict.MonitorEvidence {
		return &verdict.MonitorEvidence{Step: intp(step), Stage: stage, Reduction: reduction, Ranks: ranks, SeenOn: []int{0, 1, 2, 3}, Recorded: []int{0, 1, 2, 3}, Module: "encoder_0.output", Summary: "test"}
	}
	for _, tc := range []struct {
		name       string
		v          *verdict.Verdict
		log        *verdict.LogEvidence
		mon        *verdict.MonitorEvidence
		agree      []string // substrings, each in one agreement
		contradict []string
		note       []string
		planSteps  []int // nil: no check
	}{
		{name: "loss one step after a backward origin", v: dumpVerdict("backward", true, false), log: logAt(6, "loss", "forward"),
			agree: []string{"the backward of step 5 wrote non-finite weights"}},
		{name: "grad norm at the origin step", v: dumpVerdict("backward", true, false), log: logAt(5, "grad_norm", "backward"),
			agree: []string{"the dump's origin step", "as a backward origin makes it"}},
		{name: "loss already bad at a backward origin step", v: dumpVerdict("backward", true, false), log: logAt(5, "loss", "forward"),
			contradict: []string{"runs after the loss is computed"}},
		{name: "log before the first dumped step", v: dumpVerdict("forward", false, false), log: logAt(1, "loss", "forward"),
			note: []string{"the dump began too late"}, planSteps: []int{0, 1}},
		{name: "log earlier than the dump's origin", v: dumpVerdict("forward", true, false), log: logAt(4, "loss", "forward"),
			contradict: []string{"check the iteration-to-step mapping"}},
		{name: "one rank printed it first, the source", v: dumpVerdict("forward", true, false), log: logAt(5, "loss", "forward", 2),
			agree: []string{"Only rank 2 printed it first"}},
		{name: "another rank printed it first", v: dumpVerdict("forward", true, false), log: logAt(5, "loss", "forward", 1),
			note: []string{"rank 1 printing it first, not the dump's source rank 2"}},
		{name: "monitor: after reduction only vs a compute origin", v: dumpVerdict("backward", true, false), mon: monAt(5, "backward", "after"),
			note: []string{"The monitor first sees it in the gradient reduction, after the dump's origin in the backward"}, contradict: []string{"aggregation fault"}},
		{name: "monitor: after reduction with a collective origin", v: dumpVerdict("backward", true, true), mon: monAt(5, "backward", "after"),
			agree: []string{"the collective made it from clean inputs"}},
		{name: "monitor: local gradients of the source", v: dumpVerdict("backward", true, false), mon: monAt(5, "backward", "before", 2),
			agree: []string{"local gradients before the reduction", "Both name rank 2"}},
		{name: "monitor: module in the chain", v: dumpVerdict("forward", true, false), mon: &verdict.MonitorEvidence{Step: intp(5), Module: "encoder_0.output", Summary: "x"},
			agree: []string{"is in the origin's module chain"}},
		{name: "monitor later than the dump", v: dumpVerdict("forward", true, false), mon: monAt(6, "forward", ""),
			note: []string{"after the dump's origin at step 5 in the forward: its targets do not include where it was born: add encoder to targets"}},
		{name: "log and monitor, no dump", log: logAt(7, "loss", "forward"), mon: monAt(6, "backward", "before", 3),
			agree: []string{"before the log's metrics do"}, planSteps: []int{5, 6}},
		{name: "previous update: the log at the step before", v: dumpVerdict("optimizer", false, false), log: logAt(4, "grad_norm", "backward"),
			agree: []string{"the update at the end of that step wrote the weights"}},
		{name: "previous update: the loss of the step that reads the weights", v: dumpVerdict("optimizer", false, false), log: logAt(5, "loss", "forward"),
			agree: []string{"the dump's origin step"}},
		{name: "previous update: the monitor at the step before", v: dumpVerdict("optimizer", false, false), mon: monAt(4, "optimizer", ""),
			agree: []string{"whose update the dump says wrote the weights", "Both place it in the optimizer"}},
		{name: "previous update: parameters listed after the step before", v: dumpVerdict("optimizer", false, false),
			log: func() *verdict.LogEvidence {
				l := logAt(5, "loss", "forward")
				l.NonFiniteParams = &verdict.ParamsAfterStep{Step: 4, Params: []string{"embed.weight"}}
				return l
			}(), agree: []string{"the update the dump names wrote them"}},
		{name: "monitor: after reduction only, the origin in the reduction", v: func() *verdict.Verdict {
			v := dumpVerdict("backward", true, false)
			v.Origin.Phase, v.Origin.Ranks, v.Origin.Op, v.Origin.Tie = "gradient reduction", []int{0, 1, 2, 3}, "Tensor.__truediv__.2.forward", true
			return v
		}(), mon: monAt(5, "backward", "after"), agree: []string{"the dump's origin is in the reduction itself"}},
		{name: "a skip at the origin step that never ends", v: dumpVerdict("backward", true, false), log: func() *verdict.LogEvidence {
			l := logAt(5, "grad_norm", "backward")
			l.Skipped = []verdict.SkippedIteration{{Iteration: 6, Step: 5}, {Iteration: 7, Step: 6}}
			l.PersistentSkipStep = intp(5)
			return l
		}(), agree: []string{"kept skipping"}},
		{name: "clean dump of the log's step", v: &verdict.Verdict{Schema: verdict.Schema, Steps: []verdict.StepState{{Step: 6, Status: "clean", Ranks: "0-3"}}, Scanned: verdict.Scanned{Ranks: []int{0, 1, 2, 3}}},
			log: logAt(6, "loss", "forward"), contradict: []string{"the dump of that step is clean"}, planSteps: []int{5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Combine(tc.v, tc.log, tc.mon, plan.Options{})
			e := v.Evidence
			if e == nil {
				t.Fatal("no evidence")
			}
			for _, want := range tc.agree {
				if !anyContains(e.Agreements, want) {
					t.Errorf("no agreement with %q in %q", want, e.Agreements)
				}
			}
			for _, want := range tc.contradict {
				if !anyContains(e.Contradictions, want) {
					t.Errorf("no contradiction with %q in %q", want, e.Contradictions)
				}
			}
			for _, want := range tc.note {
				if !anyContains(e.Notes, want) {
					t.Errorf("no note with %q in %q", want, e.Notes)
				}
			}
			if len(tc.contradict) == 0 && len(e.Contradictions) > 0 {
				t.Errorf("unexpected contradictions %q", e.Contradictions)
			}
			if tc.planSteps != nil {
				if v.Plan == nil || !slices.Equal(v.Plan.Config.Step, tc.planSteps) {
					t.Errorf("plan %+v, want steps %v", v.Plan, tc.planSteps)
				}
			}
		})
	}
}

// With no dump and clean evidence there is nothing to chase.
func TestCombineCleanEvidence(t *testing.T) {
	v := Combine(nil, &verdict.LogEvidence{Files: 2, LoggedRanks: []int{0, 1}}, nil, plan.Options{})
	if v.Anomaly || v.Plan != nil || v.Evidence == nil {
		t.Errorf("anomaly %v, plan %+v, evidence %+v", v.Anomaly, v.Plan, v.Evidence)
	}
}

// A dump that holds no anomaly beside a log or a monitor that shows one is
// no clean run: the verdict is an anomaly without an origin, with the plan
// that dumps where the evidence points.
func TestCombineEvidenceBeyondTheDump(t *testing.T) {
	clean := func() *verdict.Verdict {
		return &verdict.Verdict{Schema: verdict.Schema, Complete: true, Steps: []verdict.StepState{{Step: 0, Status: "clean"}, {Step: 1, Status: "clean"}},
			Scanned: verdict.Scanned{Steps: []int{0, 1}, Files: 8}}
	}
	for name, c := range map[string]struct {
		log *verdict.LogEvidence
		mon *verdict.MonitorEvidence
	}{
		"log after the dump":     {log: &verdict.LogEvidence{Files: 1, FirstNaNStep: intp(2), FirstNaNMetric: "loss", Kind: "nan"}},
		"log at a clean step":    {log: &verdict.LogEvidence{Files: 1, FirstNaNStep: intp(1), FirstNaNMetric: "loss", Kind: "nan"}},
		"monitor after the dump": {mon: &verdict.MonitorEvidence{Step: intp(3), Stage: "forward"}},
	} {
		v := Combine(clean(), c.log, c.mon, plan.Options{DumpPath: "/d"})
		if !v.Anomaly || v.Origin != nil || v.Plan == nil {
			t.Errorf("%s: anomaly %v, origin %+v, plan %v: want an anomaly without origin, and a plan", name, v.Anomaly, v.Origin, v.Plan != nil)
		}
	}
	v := Combine(clean(), &verdict.LogEvidence{Files: 1}, nil, plan.Options{})
	if v.Anomaly {
		t.Errorf("a log without a non-finite value made an anomaly")
	}
}

// The monitor's source ranks narrow the plan to them plus one rank to
// compare with.
func TestEvidencePlanRanks(t *testing.T) {
	mon := &verdict.MonitorEvidence{Step: intp(3), Stage: "backward", Reduction: "before", Ranks: []int{5}, SeenOn: []int{5}, Recorded: []int{4, 5, 6, 7}}
	v := Combine(nil, nil, mon, plan.Options{DumpPath: "/d"})
	if v.Plan == nil {
		t.Fatal("no plan")
	}
	c := v.Plan.Config
	if !slices.Equal(c.Rank, []int{4, 5}) || !slices.Equal(c.Step, []int{2, 3}) || c.DumpPath != "/d" || c.Level != "mix" {
		t.Errorf("config %+v, want ranks 4,5 steps 2,3 at level mix", c)
	}
	if !strings.Contains(v.Plan.Collect, "named by the monitor") {
		t.Errorf("collect %q does not say where the ranks come from", v.Plan.Collect)
	}
}

func anyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// When the monitor names every rank it recorded, the plan dumps every rank.
func TestEvidencePlanAllRanks(t *testing.T) {
	mon := &verdict.MonitorEvidence{Step: intp(3), Stage: "forward", Ranks: []int{0, 1}, SeenOn: []int{0, 1}, Recorded: []int{0, 1}}
	v := Combine(nil, nil, mon, plan.Options{})
	if v.Plan == nil || len(v.Plan.Config.Rank) != 0 || strings.Contains(v.Plan.Collect, "named by") {
		t.Errorf("plan %+v, want every rank", v.Plan)
	}
}

// Megatron-LM leaves a NaN loss out of its line: a loss gone at the
// iteration the grad norm turned NaN is the first NaN loss, a forward sign.
func TestLogEvidenceLossLeftOut(t *testing.T) {
	line := func(it int, loss, grad string) string {
		s := fmt.Sprintf(" [2026-01-01 00:00:0%d] iteration %8d/     100 | consumed samples: %12d | ", it, it, 8*it)
		if loss != "" {
			s += "lm loss: " + loss + " | "
		}
		return s + "loss scale: 1.0 | grad norm: " + grad + " | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
	}
	path := filepath.Join(t.TempDir(), "train.log")
	text := line(1, "7.100000E+00", "3.210") + line(2, "7.000000E+00", "3.100") + line(3, "", "nan") + line(4, "", "nan")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := trainlog.Read(context.Background(), []string{path}, trainlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := FromLog(l)
	if e.FirstNaNStep == nil || *e.FirstNaNStep != 2 || *e.FirstNaNIteration != 3 || e.FirstNaNMetric != "loss" || e.StageHint != "forward" ||
		!strings.Contains(e.Where, "missing from the line") {
		t.Errorf("evidence %+v: want a NaN loss (left out) at iteration 3 = step 2, forward", e)
	}
}

// The log or the monitor place the birth before the dump's first sight of
// an origin it did not see born, at a place the dump did not read clean:
// an explanation says so; an origin seen born, a weak sighting or a step
// the dump read clean give none.
func TestBornEarlier(t *testing.T) {
	sparse := func(captured bool) *verdict.Verdict {
		v := dumpVerdict("optimizer", captured, false)
		v.Steps = slices.DeleteFunc(v.Steps, func(s verdict.StepState) bool { return s.Step == 4 })
		return v
	}
	lossAt := func(step int) *verdict.LogEvidence {
		return &verdict.LogEvidence{FirstNaNIteration: intp(step + 1), FirstNaNStep: intp(step), FirstNaNMetric: "loss", StageHint: "forward", LoggedRanks: []int{0, 1, 2, 3}}
	}
	weak := &verdict.MonitorEvidence{Step: intp(4), Stage: "forward", Ranks: []int{1}, Weak: true, Summary: "x"}
	strong := &verdict.MonitorEvidence{Step: intp(4), Stage: "forward", Ranks: []int{1}, Summary: "x"}
	for _, tc := range []struct {
		name string
		v    *verdict.Verdict
		log  *verdict.LogEvidence
		mon  *verdict.MonitorEvidence
		want string // "" for no explanation
	}{
		{"log loss at a step not dumped", sparse(false), lossAt(4), nil, "The training log's loss shows it already in step 4's forward, before the dump first sees it (Torch.sqrt.0.backward, step 5): it was born there, in calls the dump does not show; step 4 was not dumped: dump it."},
		{"log and monitor together", sparse(false), lossAt(4), strong, "The training log's loss and the monitor (on rank 1) show it already in step 4's forward"},
		{"the log tells the ranks apart", sparse(false), func() *verdict.LogEvidence { l := lossAt(4); l.Ranks = []int{2}; return l }(), nil, "The training log's loss (on rank 2) shows it already in step 4's forward"},
		{"a weak monitor sighting", sparse(false), nil, weak, ""},
		{"an origin seen born", sparse(true), lossAt(4), nil, ""},
		{"a step the dump read clean", dumpVerdict("optimizer", false, false), lossAt(4), nil, ""},
		{"the loss of the origin step, the origin later in it", dumpVerdict("backward", false, false), lossAt(5), nil, "shows it already in step 5's forward"},
		{"the loss of the step whose forward reads weights an update wrote", func() *verdict.Verdict {
			v := sparse(false)
			for i := range v.Steps {
				if v.Steps[i].Step == 5 {
					v.Steps[i].Anomalous = []verdict.RankState{{Rank: 2, Role: "source", Op: v.Origin.Op, Stage: "forward", Phase: "forward"}}
				}
			}
			return v
		}(), lossAt(5), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Combine(tc.v, tc.log, tc.mon, plan.Options{})
			var got []string
			for _, e := range v.Explanations {
				if e.Kind == verdict.ExplainBornEarlier {
					got = append(got, e.Text)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("explanations %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("explanations %q, want one holding %q", got, tc.want)
			case tc.want != "" && (len(v.NextSteps) == 0 || !strings.Contains(v.NextSteps[0], "Dump step ")):
				t.Errorf("next steps %q do not start with dumping the step it was born in", v.NextSteps)
			}
		})
	}
}
