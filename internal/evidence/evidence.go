package evidence

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// Combine joins a dump's verdict (nil when there is no dump) with what a
// training log and the monitor say (either may be nil), lists where they
// agree and where they contradict each other, and replaces the plan. With
// no dump, the verdict holds only the evidence and the plan of what to
// dump.
func Combine(v *verdict.Verdict, log *verdict.LogEvidence, mon *verdict.MonitorEvidence, opt plan.Options) *verdict.Verdict {
	if v == nil {
		v = &verdict.Verdict{
			Schema: verdict.Schema, Complete: true, Spread: []verdict.Hop{}, Candidates: []verdict.Candidate{}, Recovered: []verdict.Recovered{}, Suppressed: []verdict.Suppressed{},
			Warnings: []verdict.Warning{}, NextSteps: []string{}, Steps: []verdict.StepState{},
			Scanned: verdict.Scanned{Steps: []int{}, Ranks: []int{}, NotScanned: []int{}},
		}
		v.Anomaly = seenByLog(log) || seenByMonitor(mon)
	}
	if log == nil && mon == nil {
		return v
	}
	e := sheet{&verdict.Evidence{Log: log, Monitor: mon, Agreements: []string{}, Contradictions: []string{}}}
	v.Evidence = e.Evidence
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
	if v.Origin == nil && (seenByLog(log) || seenByMonitor(mon)) {
		// the dump holds none, yet the log or the monitor saw one: a NaN
		// the dump does not cover is no clean run
		v.Anomaly = true
	}
	v.Plan = plan.Make(v, opt)
	if early, ok := plan.EarliestStep(e.Evidence); ok && (len(dumped) == 0 || early < dumped[0] || v.Origin == nil) {
		v.Plan = plan.FromEvidence(v, opt)
	}
	if v.Origin == nil && v.Plan != nil {
		v.NextSteps = append(v.NextSteps, v.Plan.Why, "Collect: "+v.Plan.Collect+" (the config below).")
	}
	return v
}

// seenByLog and seenByMonitor report whether the log or the monitor shows
// a non-finite value (a skipped iteration the loss scaler recovered from
// is none).
func seenByLog(log *verdict.LogEvidence) bool { return log != nil && log.FirstNaNStep != nil }

func seenByMonitor(mon *verdict.MonitorEvidence) bool { return mon != nil && mon.Step != nil }

// sheet is the evidence being written: what agrees, what contradicts.
type sheet struct{ *verdict.Evidence }

func (e sheet) agree(format string, args ...any) {
	e.Agreements = append(e.Agreements, fmt.Sprintf(format, args...))
}

func (e sheet) contradict(format string, args ...any) {
	e.Contradictions = append(e.Contradictions, fmt.Sprintf(format, args...))
}

func metricName(m string) string {
	if m == "grad_norm" {
		return "grad norm"
	}
	return "loss"
}

func dumpedSteps(v *verdict.Verdict) []int {
	var out []int
	for _, st := range v.Steps {
		out = append(out, st.Step)
	}
	return out
}

// stepStatus is the dump's status of a step, "" when it was not dumped.
func stepStatus(v *verdict.Verdict, step int) string {
	for _, st := range v.Steps {
		if st.Step == step {
			return st.Status
		}
	}
	return ""
}

func (e sheet) compareLog(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	for _, s := range log.Skipped {
		for _, r := range v.Recovered {
			if r.Step == s.Step {
				e.agree("Iteration %d was skipped by the loss scaler (log), and the dump shows its anomaly at step %d did not last.", s.Iteration, s.Step)
			}
		}
		if v.Origin != nil && v.Origin.Step == s.Step {
			if p := log.PersistentSkipStep; p != nil && *p <= s.Step {
				e.agree("The loss scaler skipped iteration %d (step %d) and kept skipping: the value stays non-finite, as the dump's lasting anomaly at that step says.", s.Iteration, s.Step)
			} else {
				e.contradict("The log says iteration %d (step %d) was skipped by the loss scaler and training went on, yet the dump's anomaly at that step lasted into the next dumped step.", s.Iteration, s.Step)
			}
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
			e.contradict("The log prints a non-finite %s at step %d (%s), which the dump does not cover (dumped steps %s): dump steps %d-%d.", metric, l, printed, intranges.Format(ranklist.Unique(dumped)), max(l-1, 0), l)
		default:
			e.contradict("The log prints a non-finite %s at step %d (%s), but the dump of that step is clean: check the iteration-to-step mapping (%s) and that the dumped ranks are the ones training.", metric, l, printed, log.Mapping)
		}
		return
	}
	d, made := o.Step, madeAt(o)
	switch {
	case l == d && made == d && log.FirstNaNMetric == "loss" && o.Stage != "forward" && log.StageHint == "forward":
		e.contradict("The log's loss is already non-finite at step %d, but the dump's origin is in that step's %s, which runs after the loss is computed: an earlier cause is missing from the dump.", l, o.Stage)
	case l == made && made < d:
		e.agree("The log first prints a non-finite %s at step %d (%s): the update at the end of that step wrote the weights that the dump first shows non-finite at step %d.", metric, l, printed, d)
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
		case ranklist.Same(log.Ranks, o.Ranks):
			e.agree("Only %s printed it first, the dump's source %s.", ranklist.Name(log.Ranks), ranklist.Name(o.Ranks))
		case !ranklist.Overlap(log.Ranks, o.Ranks):
			e.contradict("The log shows %s printing it first, but the dump's source is %s.", ranklist.Name(log.Ranks), ranklist.Name(o.Ranks))
		}
	}
	if p := log.NonFiniteParams; p != nil {
		switch {
		case p.Step == d:
			e.agree("The log lists non-finite parameters after step %d (%s): the update of the origin step wrote them.", p.Step, strings.Join(first(p.Params, 5), ", "))
		case p.Step == made:
			e.agree("The log lists non-finite parameters after step %d (%s): the update the dump names wrote them.", p.Step, strings.Join(first(p.Params, 5), ", "))
		case p.Step < d:
			e.contradict("The log lists non-finite parameters already after step %d (%s), before the dump's origin at step %d.", p.Step, strings.Join(first(p.Params, 5), ", "), d)
		}
	}
}

func (e sheet) compareMonitor(v *verdict.Verdict, mon *verdict.MonitorEvidence, dumped []int) {
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
			e.contradict("The monitor shows it at step %d, which the dump does not cover (dumped steps %s).", m, intranges.Format(ranklist.Unique(dumped)))
		default:
			e.contradict("The monitor shows it at step %d (%s), but the dump of that step is clean.", m, mon.Summary)
		}
		return
	}
	d, made := o.Step, madeAt(o)
	switch {
	case m == d:
		e.agree("The monitor first shows it at step %d too (%s).", m, mon.Summary)
	case m == made && made < d:
		e.agree("The monitor first shows it at step %d (%s), whose update the dump says wrote the weights it first sees non-finite at step %d.", m, mon.Summary, d)
	case len(dumped) > 0 && m < dumped[0]:
		e.contradict("The monitor shows it at step %d, before the first dumped step %d: the dump was taken too late.", m, dumped[0])
	case m < d:
		e.contradict("The monitor shows it at step %d, before the dump's origin at step %d.", m, d)
	default:
		e.contradict("The monitor first shows it at step %d, after the dump's origin at step %d: its targets do not include the module where it was born.", m, d)
	}
	if m != d && m != made {
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
		case ranklist.Same(mon.Ranks, o.Ranks):
			e.agree("Both name %s as the source.", ranklist.Name(o.Ranks))
		case !ranklist.Overlap(mon.Ranks, o.Ranks):
			e.contradict("The monitor's source is %s, the dump's %s.", ranklist.Name(mon.Ranks), ranklist.Name(o.Ranks))
		default:
			e.agree("The dump's source %s is among the ranks the monitor sees it on first (%s); the dump tells them apart.", ranklist.Name(o.Ranks), ranklist.Name(mon.Ranks))
		}
	}
	switch mon.Reduction {
	case "after":
		switch {
		case o.Collective:
			e.agree("The monitor sees it only after the gradient reduction, and the dump shows the collective made it from clean inputs.")
		case o.Phase == "gradient reduction":
			e.agree("The monitor sees it only after the gradient reduction, and the dump's origin is in the reduction itself (%s on %s).", o.Op, ranklist.Name(o.Ranks))
		case o.Captured:
			e.contradict("The monitor sees it only after the gradient reduction (an aggregation fault), but the dump shows a compute origin, %s on %s.", o.Op, ranklist.Name(o.Ranks))
		}
	case "before":
		if !o.Collective && ranklist.Overlap(mon.Ranks, o.Ranks) {
			e.agree("The monitor finds it in %s's local gradients before the reduction: computed there, then spread.", ranklist.Name(mon.Ranks))
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

// madeAt is the step whose computation made the value: the step before the
// origin's when the weights came in non-finite (the previous update wrote
// them, origin not captured), else the origin's.
func madeAt(o *verdict.Origin) int {
	if o.Stage == "optimizer" && !o.Captured && o.Step > 0 {
		return o.Step - 1
	}
	return o.Step
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

func derefOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func first(v []string, n int) []string {
	if len(v) > n {
		return append(append([]string{}, v[:n]...), "…")
	}
	return v
}
