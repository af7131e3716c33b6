package evidence

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// Combine joins a dump's verdict (nil when there is no dump) with what a
// training log and the monitor say (either may be nil), lists where they
// agree, where they contradict each other (claims about the same step,
// phase or rank that cannot both hold) and where one cannot see what
// another does (notes, each with what would close the gap), and replaces
// the plan. With
// no dump, the verdict holds only the evidence and the plan of what to
// dump.
func Combine(v *verdict.Verdict, log *verdict.LogEvidence, mon *verdict.MonitorEvidence, opt plan.Options) *verdict.Verdict {
	if v == nil {
		v = &verdict.Verdict{
			Schema: verdict.Schema, SchemaRevision: verdict.Revision, Complete: true, Spread: []verdict.Hop{}, Candidates: []verdict.Candidate{}, Recovered: []verdict.Recovered{}, Suppressed: []verdict.Suppressed{},
			Warnings: []verdict.Warning{}, NextSteps: []string{}, Steps: []verdict.StepState{},
			Scanned: verdict.Scanned{Steps: []int{}, Ranks: []int{}, NotScanned: []int{}},
		}
		v.Anomaly = seenByLog(log) || seenByMonitor(mon)
	}
	if log == nil && mon == nil {
		return v
	}
	e := sheet{&verdict.Evidence{Log: log, Monitor: mon, Agreements: []string{}, Contradictions: []string{}, Notes: []string{}}}
	v.Evidence = e.Evidence
	dumped := dumpedSteps(v)
	if log != nil {
		e.compareLog(v, log, dumped)
	}
	if mon != nil {
		e.compareMonitor(v, mon, log, dumped)
	}
	if log != nil && mon != nil && log.FirstNaNStep != nil && mon.Step != nil {
		l, m := *log.FirstNaNStep, *mon.Step
		switch {
		case l == m:
			e.agree("The log and the monitor both first show it at step %d.", l)
		case m < l:
			e.agree("The monitor shows it at step %d, before the log's metrics do (step %d).", m, l)
		default:
			e.note("The log prints a non-finite %s at step %d, but the monitor shows nothing until step %d: its targets or ops miss where it was born (add \"nans\" to ops, and the modules of the first layers to targets).", metricName(log.FirstNaNMetric), l, m)
		}
	}
	explainBornEarlier(v, log, mon)
	if v.Origin == nil && (seenByLog(log) || monitorAlarm(v, mon, log)) {
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

// note records a gap in what a source covers, with what would close it.
func (e sheet) note(format string, args ...any) {
	e.Notes = append(e.Notes, fmt.Sprintf(format, args...))
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
