package plan

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/msprobe"
)

// Options shape the plan.
type Options struct {
	// DumpPath is the dump_path written into the config (default
	// "./nanhunt_followup").
	DumpPath string
	// ConfigPath is where the user will save the config, for the Python
	// lines that load it (default "./config.json").
	ConfigPath string
	// Mode is "any-step", "same-step" or "" (any-step when its estimate
	// fits Budget, or cannot be made; same-step otherwise).
	Mode string
	// Budget bounds the size of an any-step dump of the whole run (0: 50 GB).
	Budget int64
	// Measure, when set, sizes the tensors the listed APIs save on one rank
	// at one step (FromDump reads the dump the verdict was made from).
	Measure func(step, rank int, apis []string) (Sizes, error)
}

// DefaultBudget is the size an any-step dump may take by default.
const DefaultBudget = 50 << 30

// Plan modes.
const (
	SameStep = "same-step"
	AnyStep  = "any-step"
)

// Prefixes msprobe hooks on its own; any other API prefix was registered
// by the user with register_custom_api.
var builtinPrefixes = map[string]bool{
	"Torch": true, "Tensor": true, "Functional": true, "NPU": true, "Aten": true, "VF": true,
	"Distributed": true, "Module": true, "Cell": true, "Jit": true, "Mint": true, "MintFunctional": true,
	"Primitive": true, "Functional.mint": true, "MindSpore": true, "Mindspore": true,
}

// Make says what to collect after this verdict: the real tensors of a
// captured origin (for nanhunt repro), the code an uncaptured origin ran
// in, the step before when the weights came in bad, or — with only a
// training log or monitor — the steps and ranks to dump. It is nil when
// there is nothing to chase.
func Make(v *verdict.Verdict, opt Options) *verdict.Plan {
	if opt.DumpPath == "" {
		opt.DumpPath = "./nanhunt_followup"
	}
	if opt.ConfigPath == "" {
		opt.ConfigPath = "./config.json"
	}
	o := v.Origin
	switch {
	case o == nil:
		return FromEvidence(v, opt)
	case o.Unread:
		p := statisticsPlan(opt, []int{o.Step}, o.Ranks, "L1", v)
		p.Why = fmt.Sprintf("The value reached the other ranks from %s at step %d, whose dumps are missing or damaged.", ranklist.Name(o.Ranks), o.Step)
		p.Collect = "statistics of every call of the sending ranks at that step"
		p.Then = []string{fmt.Sprintf("nanhunt trace %s", opt.DumpPath)}
		return p
	case o.Captured:
		return tensorPlan(v, opt)
	case o.Stage == "optimizer" && o.Step > 0 && dumped(v, o.Step-1):
		// the step before is in the dump, and its update did not show: it
		// ran outside the calls msprobe hooks by default
		p := statisticsPlan(opt, []int{o.Step - 1}, o.Ranks, "mix", v)
		p.Config.RiskLevel = "ALL"
		p.Why = fmt.Sprintf("The weights were already non-finite when step %d began, and step %d, whose update wrote them, is in the dump without showing it: the update ran outside the hooked calls (a fused or foreach optimizer).", o.Step, o.Step-1)
		p.Collect = fmt.Sprintf("every call of step %d, the ones msprobe skips by default included; register the optimizer's step function with register_custom_api to see a fused update", o.Step-1)
		p.Then = []string{fmt.Sprintf("nanhunt trace %s", opt.DumpPath)}
		return p
	case o.Stage == "optimizer" && o.Step > 0:
		// step o.Step is in the dump already: only the step before is missing
		p := statisticsPlan(opt, []int{o.Step - 1}, o.Ranks, "mix", v)
		p.Why = fmt.Sprintf("The weights were already non-finite when step %d began: the update at the end of step %d wrote them.", o.Step, o.Step-1)
		p.Collect = fmt.Sprintf("statistics of every module and API call of step %d, its update included", o.Step-1)
		p.Then = []string{fmt.Sprintf("nanhunt trace %s", opt.DumpPath)}
		return p
	}
	p := statisticsPlan(opt, []int{o.Step}, o.Ranks, "mix", v)
	p.Config.RiskLevel = "ALL"
	p.Why = fmt.Sprintf("The first call that shows the anomaly (%s) already had it in its inputs: it was made by code the dump does not record.", o.Op)
	p.Collect = "every module call and every API msprobe knows, the ones it skips by default included, plus the user functions registered below"
	if iv := o.Interval; iv != nil {
		var fns []msprobe.Function
		for _, f := range iv.Uncovered {
			fns = append(fns, msprobe.Function{File: f.File, Name: f.Func, Line: f.Line})
		}
		if len(fns) > 0 {
			p.Register = msprobe.RegisterSnippet(fns, opt.ConfigPath)
		}
	}
	p.Then = []string{fmt.Sprintf("nanhunt trace %s", opt.DumpPath)}
	return p
}

// tensorPlan: the origin is captured; save its real tensors on the origin
// rank(s) and on one clean rank for comparison.
func tensorPlan(v *verdict.Verdict, opt Options) *verdict.Plan {
	o := v.Origin
	ranks := append([]int{}, o.Ranks...)
	if clean, ok := cleanRank(v); ok {
		ranks = append(ranks, clean)
	}
	list := collectedAPIs(v)
	n := dump.ParseName(o.Op)
	level := "L1"
	if n.Module {
		level = "L0"
	}
	p := &verdict.Plan{
		Why: fmt.Sprintf("%s made the value from clean inputs on %s at step %d; its real inputs prove it and let it be re-run alone.", o.Op, ranklist.Name(o.Ranks), o.Step),
		Collect: fmt.Sprintf("the input and output tensors (dump_tensor_data/*.pt) of every %s call at step %d on %s",
			joinOr(list), o.Step, ranklist.Name(ranks)),
		Config: msprobe.Config{
			Task: "tensor", DumpPath: opt.DumpPath, Rank: ranks, Step: []int{o.Step}, Level: level, ExtraInfo: true,
			Section: msprobe.Section{List: list, DataMode: []string{"all"}, SummaryMode: "statistics"},
		},
		Mode: SameStep,
	}
	p.Moves = moves(v)
	chooseMode(p, v, opt, list, ranks)
	if !builtinPrefixes[n.Prefix] && !n.Module {
		p.Register = msprobe.RegisterSnippet([]msprobe.Function{{File: n.Prefix + ".py", Name: n.API, Prefix: n.Prefix}}, opt.ConfigPath)
	}
	if p.Mode == AnyStep {
		p.Then = []string{fmt.Sprintf("nanhunt repro %s -o ./repro_case  (the root cause of the new run, wherever it fell)", opt.DumpPath)}
		return p
	}
	p.Then = []string{fmt.Sprintf("nanhunt repro %s --step %d --rank %d --op %s -o ./repro_case", opt.DumpPath, o.Step, o.Ranks[0], o.Op)}
	if len(ranks) > len(o.Ranks) {
		p.Then = append(p.Then, fmt.Sprintf("nanhunt repro %s --step %d --rank %d --op %s -o ./repro_clean  (the same call on a clean rank: it should stay finite)",
			opt.DumpPath, o.Step, ranks[len(ranks)-1], o.Op))
	}
	return p
}

// collectedAPIs are the APIs whose tensors a tensor plan collects: the
// origin's, and the first NaN's when it is at the origin's step.
func collectedAPIs(v *verdict.Verdict) []string {
	var list []string
	add := func(op string) {
		n := dump.ParseName(op)
		if api := n.Op(); api != "" && !slices.Contains(list, api) {
			list = append(list, api)
		}
	}
	add(v.Origin.Op)
	if v.FirstNaN != nil && v.FirstNaN.Step == v.Origin.Step {
		add(v.FirstNaN.Op)
	}
	return list
}

// Measured says what Make would give Options.Measure for v: the step,
// the rank and the APIs it sizes; false when it measures nothing (the
// origin is not captured). A caller may start the measure early with
// them.
func Measured(v *verdict.Verdict) (step, rank int, apis []string, ok bool) {
	o := v.Origin
	if o == nil || o.Unread || !o.Captured || len(o.Ranks) == 0 {
		return 0, 0, nil, false
	}
	return o.Step, o.Ranks[0], collectedAPIs(v), true
}

// cleanRank is a rank that ran the origin step without making the value:
// one that received it, or one that never showed it.
func cleanRank(v *verdict.Verdict) (int, bool) {
	o := v.Origin
	for _, st := range v.Steps {
		if st.Step != o.Step {
			continue
		}
		set, err := notation.ParseRanges(st.Ranks)
		if err != nil {
			break
		}
		for _, r := range ranklist.Keys(set) {
			if !slices.Contains(o.Ranks, r) {
				return r, true
			}
		}
	}
	for _, r := range v.Scanned.Ranks {
		if !slices.Contains(o.Ranks, r) {
			return r, true
		}
	}
	return 0, false
}

// dumped reports whether the verdict read the step (it is in the dump).
func dumped(v *verdict.Verdict, step int) bool {
	for _, st := range v.Steps {
		if st.Step == step && st.Status != "not_scanned" {
			return true
		}
	}
	return false
}

// statisticsPlan dumps statistics of the steps on the ranks (every rank
// when they are all the ranks the verdict read).
func statisticsPlan(opt Options, steps, ranks []int, level string, v *verdict.Verdict) *verdict.Plan {
	steps = ranklist.Unique(steps)
	if len(v.Scanned.Ranks) > 1 && ranklist.Same(ranks, v.Scanned.Ranks) {
		ranks = nil
	}
	return &verdict.Plan{Config: msprobe.Config{
		Task: "statistics", DumpPath: opt.DumpPath, Rank: ranklist.Unique(ranks), Step: steps, Level: level, ExtraInfo: true,
		Section: msprobe.Section{DataMode: []string{"all"}, SummaryMode: "statistics"},
	}}
}

func joinOr(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	s := list[0]
	for _, x := range list[1 : len(list)-1] {
		s += ", " + x
	}
	return s + " or " + list[len(list)-1]
}
