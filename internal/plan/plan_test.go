package plan

import (
	"context"

	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/msprobe"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// checkPlan: every plan's config is valid for msprobe and asks for what
// the verdict needs.
func checkPlan(t *testing.T, v *verdict.Verdict) {
	t.Helper()
	if !v.Anomaly {
		if v.Plan != nil {
			t.Errorf("plan %+v for a verdict without anomaly", v.Plan)
		}
		return
	}
	p := v.Plan
	if p == nil {
		t.Fatal("no plan for an anomaly")
	}
	data, err := p.Config.Indented()
	if err != nil {
		t.Fatal(err)
	}
	if err := msprobe.Validate(data); err != nil {
		t.Fatalf("plan config rejected: %v\n%s", err, data)
	}
	o := v.Origin
	c := p.Config
	switch {
	case o.Captured && !o.Unread && p.Mode == AnyStep:
		// every step and every rank: the next occurrence, wherever it falls
		if c.Task != "tensor" || len(c.Step) != 0 || len(c.Rank) != 0 || !slices.Contains(c.Section.List, dump.ParseName(o.Op).Op()) || p.Watch == "" {
			t.Errorf("captured origin %s at step %d, any-step: plan config %s, watch %q", o.Op, o.Step, data, p.Watch)
		}
	case o.Captured && !o.Unread:
		if p.Mode != SameStep || c.Task != "tensor" || !slices.Equal(c.Step, []int{o.Step}) || !slices.Contains(c.Section.List, dump.ParseName(o.Op).Op()) {
			t.Errorf("captured origin %s at step %d: plan config %s", o.Op, o.Step, data)
		}
		for _, r := range o.Ranks {
			if !slices.Contains(c.Rank, r) {
				t.Errorf("plan ranks %v miss origin rank %d", c.Rank, r)
			}
		}
		if len(p.Then) == 0 || !strings.Contains(p.Then[0], "nanhunt repro") {
			t.Errorf("plan then = %v, want a nanhunt repro command", p.Then)
		}
	default:
		if c.Task != "statistics" || !slices.Contains(c.Step, o.Step) && !slices.Contains(c.Step, o.Step-1) {
			t.Errorf("uncaptured origin at step %d: plan config %s", o.Step, data)
		}
	}
}

// The same-step plan for the real backward fixture asks for what the real
// tensor run of the same scenario collected (its msprobe-config/tensor.json).
func TestPlanMatchesRealTensorConfig(t *testing.T) {
	root := filepath.Join(fixturedir.Dir(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5")
	v, err := trace.Run(context.Background(), trace.Options{Path: filepath.Join(root, "L1")})
	if err != nil {
		t.Fatal(err)
	}
	v.Plan = Make(v, Options{Mode: SameStep})
	checkPlan(t, v)
	data, err := os.ReadFile(filepath.Join(root, "msprobe-config", "tensor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var real msprobe.Config
	if err := json.Unmarshal(data, &real); err != nil {
		t.Fatal(err)
	}
	got := v.Plan.Config
	if got.Task != real.Task || got.Level != real.Level || !slices.Equal(got.Step, real.Step) {
		t.Errorf("plan %+v, real run %+v", got, real)
	}
	if !ranklist.Same(got.Rank, real.Rank) {
		t.Errorf("plan ranks %v, the real tensor run took %v (bad rank and a clean one)", got.Rank, real.Rank)
	}
	for _, api := range got.Section.List {
		if !slices.Contains(real.Section.List, api) {
			t.Errorf("plan lists %s, which the real run did not need (%v)", api, real.Section.List)
		}
	}
}

// A dump that starts too late: the weights came in bad, so the plan dumps
// the step before with the update.
func TestPlanDumpTakenTooLate(t *testing.T) {
	dir := filepath.Join(fixturedir.Dir(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "L1")
	v, err := trace.Run(context.Background(), trace.Options{Path: dir, Steps: map[int]bool{6: true, 7: true}})
	if err != nil {
		t.Fatal(err)
	}
	v.Plan = Make(v, Options{})
	checkPlan(t, v)
	c := v.Plan.Config
	if c.Task != "statistics" || !slices.Equal(c.Step, []int{5}) || c.Level != "mix" {
		t.Errorf("plan config %+v, want statistics of step 5 at level mix (step 6 is in the dump)", c)
	}
}

func TestPlanGenerated(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		check    func(t *testing.T, p *verdict.Plan)
	}{
		{"uncaptured-fused-softmax", func(t *testing.T, p *verdict.Plan) {
			if p.Config.RiskLevel != "ALL" || p.Config.Level != "mix" {
				t.Errorf("config %+v, want level mix and risk_level ALL", p.Config)
			}
			// the only uncovered frame is a module's forward: named, not registered
			if !strings.Contains(p.Register, "forward (/home/user/job/model.py:98)") || strings.Contains(p.Register, "register_custom_api(") {
				t.Errorf("the uncovered forward is not named, or registered as a function:\n%s", p.Register)
			}
		}},
		{"custom-attention-backward", func(t *testing.T, p *verdict.Plan) {
			if !strings.Contains(p.Register, `importlib.import_module("moe_ext.kernels")`) ||
				!strings.Contains(p.Register, `"fused_attention", api_prefix="moe_ext.kernels"`) {
				t.Errorf("the custom API is not registered again for the tensor run:\n%s", p.Register)
			}
		}},
		{"optimizer-nan-fused", func(t *testing.T, p *verdict.Plan) {
			// step 2, whose fused update wrote the weights, is in the dump
			// and clean: dump it again with everything, not step 3 again
			if p.Config.Task != "statistics" || !slices.Equal(p.Config.Step, []int{2}) || p.Config.RiskLevel != "ALL" {
				t.Errorf("config %+v, want step 2 again with risk_level ALL", p.Config)
			}
		}},
		{"legit-masks", nil},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			sc, ok := scenarioNamed(tc.scenario)
			if !ok {
				t.Fatalf("no scenario %s", tc.scenario)
			}
			dir := filepath.Join(t.TempDir(), "dump")
			if _, err := synth.Generate(sc.Spec, dir); err != nil {
				t.Fatal(err)
			}
			v, err := trace.Run(context.Background(), trace.Options{Path: dir})
			if err != nil {
				t.Fatal(err)
			}
			v.Plan = Make(v, Options{})
			checkPlan(t, v)
			if tc.check == nil {
				if v.Plan != nil {
					t.Errorf("plan for a clean run: %+v", v.Plan)
				}
				return
			}
			if v.Plan == nil {
				t.Fatal("no plan")
			}
			tc.check(t, v.Plan)
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
