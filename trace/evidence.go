package trace

import (
	"fmt"
	"slices"
	"strings"
)

// Evidence is what a training log and msprobe's monitor say, next to the
// dump, and where the three agree or not.
type Evidence struct {
	Log            *LogEvidence     `json:"log,omitempty"`
	Monitor        *MonitorEvidence `json:"monitor,omitempty"`
	Agreements     []string         `json:"agreements"`
	Contradictions []string         `json:"contradictions"`
}

// LogEvidence is the first non-finite value a training log printed.
type LogEvidence struct {
	Files int `json:"files"`
	// FirstNaNIteration is the iteration as the log printed it;
	// FirstNaNStep the same in dump numbering (msprobe's stepN).
	FirstNaNIteration *int   `json:"first_nan_iteration"`
	FirstNaNStep      *int   `json:"first_nan_step"`
	FirstNaNMetric    string `json:"first_nan_metric"` // "loss" or "grad_norm"
	Kind              string `json:"kind"`             // nan, inf, -inf
	// Ranks printed it at that iteration (when the log tells ranks apart).
	Ranks []int `json:"ranks"`
	// LoggedRanks are all the ranks the log covers.
	LoggedRanks []int `json:"logged_ranks"`
	// StageHint: "forward" when the loss went non-finite first (or with
	// the grad norm), "backward" when the grad norm did while the loss was
	// still finite.
	StageHint string `json:"stage_hint"`
	// Mapping says how iterations become dump steps ("step = iteration - 1").
	Mapping string `json:"mapping"`
	// Skipped are iterations the loss scaler skipped: overflows that were
	// dropped, not origins.
	Skipped []SkippedIteration `json:"skipped"`
	// NonFiniteParams is the first record that lists parameters with
	// non-finite values, when the log has such a field.
	NonFiniteParams *ParamsAfterStep `json:"nonfinite_params,omitempty"`
	Where           string           `json:"where"` // file:line of the first non-finite value
}

// SkippedIteration is an iteration the loss scaler skipped.
type SkippedIteration struct {
	Iteration int    `json:"iteration"`
	Step      int    `json:"step"`
	Ranks     []int  `json:"ranks"`
	Reason    string `json:"reason"`
}

// ParamsAfterStep names parameters the log found non-finite after a step.
type ParamsAfterStep struct {
	Step   int      `json:"step"`
	Params []string `json:"params"`
}

// MonitorEvidence is the earliest non-finite value msprobe's monitor
// recorded.
type MonitorEvidence struct {
	Step  *int   `json:"step"`
	Stage string `json:"stage"` // forward, backward or optimizer
	// Ranks are where it shows first: the module's rank(s) with clean
	// inputs, or the ranks whose local gradients held it.
	Ranks []int `json:"ranks"`
	// SeenOn are all ranks showing it at that step; Recorded all the
	// ranks the monitor wrote.
	SeenOn   []int  `json:"seen_on"`
	Recorded []int  `json:"recorded_ranks"`
	Module   string `json:"module"` // module or parameter name, as the monitor wrote it
	// Tensor is what held it: activation input/output, activation
	// gradient, weight gradient, optimizer state, parameter.
	Tensor string `json:"tensor"`
	// Reduction, for weight gradients: "before" (already in local
	// gradients: those ranks are sources) or "after" (only after the
	// data-parallel reduction: an aggregation fault).
	Reduction string `json:"reduction,omitempty"`
	// Partners compares tensor-parallel partners of the module.
	Partners string `json:"partners,omitempty"`
	Summary  string `json:"summary"` // one line: what, where, when
	Reason   string `json:"reason"`  // how the monitor reader decided`
	// Findings is the monitor reader's full account.
	Findings any `json:"findings,omitempty"`
}

// Combine joins a dump's verdict (nil when there is no dump) with what a
// training log and the monitor say (either may be nil), lists where they
// agree and where they contradict each other, and replaces the plan. With
// no dump, the verdict holds only the evidence and the plan of what to
// dump.
func Combine(v *Verdict, log *LogEvidence, mon *MonitorEvidence, opt PlanOptions) *Verdict {
	if v == nil {
		v = &Verdict{
			Schema: Schema, Spread: []Hop{}, Candidates: []Candidate{}, Recovered: []Recovered{}, Suppressed: []Suppressed{},
			Warnings: []Warning{}, NextSteps: []string{}, Steps: []StepState{},
			Scanned: Scanned{Steps: []int{}, Ranks: []int{}, NotScanned: []int{}},
		}
		v.Anomaly = (log != nil && log.FirstNaNStep != nil) || (mon != nil && mon.Step != nil)
	}
	if log == nil && mon == nil {
		return v
	}
	e := &Evidence{Log: log, Monitor: mon, Agreements: []string{}, Contradictions: []string{}}
	v.Evidence = e
	dumped := dumpedSteps(v)
	if log != nil {
		e.compareLog(v, log, dumped)
	}
	if mon != nil {
		e.compareMonitor(v, mon, dumped)
	}
	if log != nil && mon != nil && log.FirstNaNStep != nil && mon.Step != nil {
		l, m := *log.FirstNaNStep, *mon.Step
		switch {
		case l == m:
			e.agree("The log and the monitor both first show it at step %d.", l)
		case m < l:
			e.agree("The monitor shows it at step %d, before the log's metrics do (step %d).", m, l)
		default:
			e.contradict("The log prints a non-finite %s at step %d, but the monitor shows nothing until step %d: the monitor's targets or ops (add \"nans\") miss where it is.", metricName(log.FirstNaNMetric), l, m)
		}
	}
	v.Plan = MakePlan(v, opt)
	if early, ok := e.earliestStep(); ok && (len(dumped) == 0 || early < dumped[0] || v.Origin == nil) {
		v.Plan = evidencePlan(v, opt)
	}
	if v.Origin == nil && v.Plan != nil {
		v.NextSteps = append(v.NextSteps, v.Plan.Why, "Collect: "+v.Plan.Collect+" (the config below).")
	}
	return v
}

func (e *Evidence) agree(format string, args ...any) {
	e.Agreements = append(e.Agreements, fmt.Sprintf(format, args...))
}

func (e *Evidence) contradict(format string, args ...any) {
	e.Contradictions = append(e.Contradictions, fmt.Sprintf(format, args...))
}

// earliestStep is the first step the log or the monitor shows it at.
func (e *Evidence) earliestStep() (int, bool) {
	best, ok := 0, false
	if e.Log != nil && e.Log.FirstNaNStep != nil {
		best, ok = *e.Log.FirstNaNStep, true
	}
	if e.Monitor != nil && e.Monitor.Step != nil && (!ok || *e.Monitor.Step < best) {
		best, ok = *e.Monitor.Step, true
	}
	// parameters listed non-finite after step s were written by its update
	if e.Log != nil && e.Log.NonFiniteParams != nil && (!ok || e.Log.NonFiniteParams.Step < best) {
		best, ok = e.Log.NonFiniteParams.Step, true
	}
	return best, ok
}

func metricName(m string) string {
	if m == "grad_norm" {
		return "grad norm"
	}
	return "loss"
}

func dumpedSteps(v *Verdict) []int {
	var out []int
	for _, st := range v.Steps {
		out = append(out, st.Step)
	}
	return out
}

// stepStatus is the dump's status of a step, "" when it was not dumped.
func stepStatus(v *Verdict, step int) string {
	for _, st := range v.Steps {
		if st.Step == step {
			return st.Status
		}
	}
	return ""
}

func (e *Evidence) compareLog(v *Verdict, log *LogEvidence, dumped []int) {
	for _, s := range log.Skipped {
		for _, r := range v.Recovered {
			if r.Step == s.Step {
				e.agree("Iteration %d was skipped by the loss scaler (log), and the dump shows its anomaly at step %d did not last.", s.Iteration, s.Step)
			}
		}
		if v.Origin != nil && v.Origin.Step == s.Step {
			e.contradict("The log says iteration %d (step %d) was skipped by the loss scaler, yet the dump's anomaly at that step lasted into the next step.", s.Iteration, s.Step)
		}
	}
	if log.FirstNaNStep == nil {
		if v.Origin != nil {
			e.contradict("The log prints no non-finite loss or grad norm, but the dump has an anomaly at step %d: it did not reach the printed metrics (or the log ends before it).", v.Origin.Step)
		}
		return
	}
	l, metric := *log.FirstNaNStep, metricName(log.FirstNaNMetric)
	printed := fmt.Sprintf("iteration %d", derefOr(log.FirstNaNIteration, l))
	o := v.Origin
	if o == nil {
		switch status := stepStatus(v, l); {
		case len(dumped) == 0:
		case status == "":
			e.contradict("The log prints a non-finite %s at step %d (%s), which the dump does not cover (dumped steps %s): dump steps %d-%d.", metric, l, printed, rangesOf(dumped), max(l-1, 0), l)
		default:
			e.contradict("The log prints a non-finite %s at step %d (%s), but the dump of that step is clean: check the iteration-to-step mapping (%s) and that the dumped ranks are the ones training.", metric, l, printed, log.Mapping)
		}
		return
	}
	d := o.Step
	switch {
	case l == d && log.FirstNaNMetric == "loss" && o.Stage != "forward" && log.StageHint == "forward":
		e.contradict("The log's loss is already non-finite at step %d, but the dump's origin is in that step's %s, which runs after the loss is computed: an earlier cause is missing from the dump.", l, o.Stage)
	case l == d:
		e.agree("The log first prints a non-finite %s at step %d (%s), the dump's origin step.", metric, l, printed)
	case l == d+1 && o.Stage != "forward":
		e.agree("The log first prints a non-finite %s at step %d (%s): the %s of step %d wrote non-finite weights, which the next forward reads.", metric, l, printed, o.Stage, d)
	case l > d:
		e.agree("The log first prints a non-finite %s at step %d (%s), %d step(s) after the dump's origin at step %d: it took that long to reach the printed metrics.", metric, l, printed, l-d, d)
	case len(dumped) > 0 && l < dumped[0]:
		e.contradict("The log prints a non-finite %s at step %d (%s), before the first dumped step %d: the dump was taken too late, and its origin at step %d is only where it was first seen.", metric, l, printed, dumped[0], d)
	default:
		e.contradict("The log prints a non-finite %s at step %d (%s), but the dump's first anomaly is at step %d: check the iteration-to-step mapping (%s), or which ranks were dumped.", metric, l, printed, d, log.Mapping)
	}
	if log.StageHint == "backward" && l == d && o.Stage == "backward" {
		e.agree("The grad norm went non-finite while the loss was finite, as a %s origin makes it.", o.Stage)
	}
	if len(log.Ranks) > 0 && len(log.Ranks) < len(log.LoggedRanks) {
		switch {
		case sameSet(log.Ranks, o.Ranks):
			e.agree("Only %s printed it first, the dump's source %s.", rankList(log.Ranks), rankList(o.Ranks))
		case !overlaps(log.Ranks, o.Ranks):
			e.contradict("The log shows %s printing it first, but the dump's source is %s.", rankList(log.Ranks), rankList(o.Ranks))
		}
	}
	if p := log.NonFiniteParams; p != nil {
		switch {
		case p.Step == d:
			e.agree("The log lists non-finite parameters after step %d (%s): the update of the origin step wrote them.", p.Step, strings.Join(first(p.Params, 5), ", "))
		case p.Step < d:
			e.contradict("The log lists non-finite parameters already after step %d (%s), before the dump's origin at step %d.", p.Step, strings.Join(first(p.Params, 5), ", "), d)
		}
	}
}

func (e *Evidence) compareMonitor(v *Verdict, mon *MonitorEvidence, dumped []int) {
	if mon.Step == nil {
		if v.Origin != nil {
			e.contradict("The monitor records no non-finite value, but the dump has one at step %d: the monitor's targets or ops (\"nans\") do not cover it.", v.Origin.Step)
		}
		return
	}
	m := *mon.Step
	o := v.Origin
	if o == nil {
		switch status := stepStatus(v, m); {
		case len(dumped) == 0:
		case status == "":
			e.contradict("The monitor shows it at step %d, which the dump does not cover (dumped steps %s).", m, rangesOf(dumped))
		default:
			e.contradict("The monitor shows it at step %d (%s), but the dump of that step is clean.", m, mon.Summary)
		}
		return
	}
	d := o.Step
	switch {
	case m == d:
		e.agree("The monitor first shows it at step %d too (%s).", m, mon.Summary)
	case len(dumped) > 0 && m < dumped[0]:
		e.contradict("The monitor shows it at step %d, before the first dumped step %d: the dump was taken too late.", m, dumped[0])
	case m < d:
		e.contradict("The monitor shows it at step %d, before the dump's origin at step %d.", m, d)
	default:
		e.contradict("The monitor first shows it at step %d, after the dump's origin at step %d: its targets do not include the module where it was born.", m, d)
	}
	if m != d {
		return
	}
	if mon.Stage != "" {
		if mon.Stage == o.Stage {
			e.agree("Both place it in the %s.", o.Stage)
		} else {
			e.contradict("The monitor places it in the %s, the dump in the %s.", mon.Stage, o.Stage)
		}
	}
	if len(mon.Ranks) > 0 {
		switch {
		case sameSet(mon.Ranks, o.Ranks):
			e.agree("Both name %s as the source.", rankList(o.Ranks))
		case !overlaps(mon.Ranks, o.Ranks):
			e.contradict("The monitor's source is %s, the dump's %s.", rankList(mon.Ranks), rankList(o.Ranks))
		default:
			e.agree("The dump's source %s is among the ranks the monitor sees it on first (%s); the dump tells them apart.", rankList(o.Ranks), rankList(mon.Ranks))
		}
	}
	switch mon.Reduction {
	case "after":
		if o.Collective {
			e.agree("The monitor sees it only after the gradient reduction, and the dump shows the collective made it from clean inputs.")
		} else if o.Captured {
			e.contradict("The monitor sees it only after the gradient reduction (an aggregation fault), but the dump shows a compute origin, %s on %s.", o.Op, rankList(o.Ranks))
		}
	case "before":
		if !o.Collective && overlaps(mon.Ranks, o.Ranks) {
			e.agree("The monitor finds it in %s's local gradients before the reduction: computed there, then spread.", rankList(mon.Ranks))
		}
	}
	if mod := moduleStem(mon.Module); mod != "" {
		for _, c := range o.Chain {
			if strings.Contains(c, "."+mod+".") {
				e.agree("The monitor's first module %s is in the origin's module chain (%s).", mon.Module, c)
				break
			}
		}
	}
}

// moduleStem drops the monitor's call index and tensor suffix:
// "0.self_attention.dense_5.output" → "0.self_attention.dense".
func moduleStem(name string) string {
	for _, suf := range []string{".input", ".output", ".input_grad", ".output_grad", ".grad_input", ".grad_output"} {
		if i := strings.LastIndex(name, suf); i > 0 {
			name = name[:i]
			break
		}
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		name = name[:i]
	}
	return name
}

// evidencePlan: with only a log or monitor (or a dump that starts too
// late), dump the first step they show and the one before it.
func evidencePlan(v *Verdict, opt PlanOptions) *Plan {
	e := v.Evidence
	if e == nil {
		return nil
	}
	step, ok := e.earliestStep()
	if !ok {
		return nil
	}
	if opt.DumpPath == "" {
		opt.DumpPath = "./nanhunt_followup"
	}
	var ranks []int
	var from []string
	if e.Monitor != nil && e.Monitor.Step != nil && *e.Monitor.Step == step && len(e.Monitor.Ranks) > 0 {
		ranks = append(ranks, e.Monitor.Ranks...)
		from = append(from, "the monitor")
	}
	if l := e.Log; len(ranks) == 0 && l != nil && l.FirstNaNStep != nil && *l.FirstNaNStep == step && len(l.Ranks) > 0 && len(l.Ranks) < len(l.LoggedRanks) {
		ranks = append(ranks, l.Ranks...)
		from = append(from, "the log")
	}
	if len(ranks) > 0 {
		// one rank that did not show it first, to compare with
		pool := []int{}
		if e.Log != nil {
			pool = append(pool, e.Log.LoggedRanks...)
		}
		if e.Monitor != nil {
			pool = append(pool, e.Monitor.Recorded...)
		}
		added := false
		for _, r := range uniqueSorted(pool) {
			if !slices.Contains(ranks, r) {
				ranks = append(ranks, r)
				added = true
				break
			}
		}
		if !added {
			ranks, from = nil, nil // they name every rank there is
		}
	}
	steps := []int{step}
	if step > 0 {
		steps = []int{step - 1, step}
	}
	p := statisticsPlan(opt, steps, ranks, "mix", v)
	who := "every rank"
	if len(ranks) > 0 {
		who = rankList(uniqueSorted(ranks)) + " (named by " + strings.Join(from, " and ") + ", with one rank for comparison)"
	}
	p.Why = fmt.Sprintf("The first sign of a non-finite value is at step %d; without a dump of it the op and the rank that made it are unknown.", step)
	p.Collect = fmt.Sprintf("statistics of every module and API call at steps %s on %s; the step before is included because its backward or update may have made the weights that step %d reads",
		rangesOf(steps), who, step)
	p.Then = []string{fmt.Sprintf("nanhunt trace %s, with the same --log and --monitor", opt.DumpPath)}
	return p
}

func derefOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func rangesOf(v []int) string {
	s := make([]string, 0, len(v))
	for _, x := range uniqueSorted(v) {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

func sameSet(a, b []int) bool {
	a, b = uniqueSorted(a), uniqueSorted(b)
	return slices.Equal(a, b)
}

func overlaps(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func first(v []string, n int) []string {
	if len(v) > n {
		return append(append([]string{}, v[:n]...), "…")
	}
	return v
}
