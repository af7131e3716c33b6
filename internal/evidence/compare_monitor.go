package evidence

import (
	"strings"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// compareMonitor sets what msprobe's monitor recorded beside the dump's
// verdict.
func (e sheet) compareMonitor(v *verdict.Verdict, mon *verdict.MonitorEvidence, log *verdict.LogEvidence, dumped []int) {
	o := v.Origin
	if mon.Step == nil {
		if o != nil {
			e.note("The monitor records no non-finite value, but the dump has one at step %d: its targets or ops do not cover it (add the modules of %s to targets, and \"nans\" to ops).", o.Step, o.Op)
		}
		return
	}
	if o == nil {
		e.monitorWithoutOrigin(v, mon, log, dumped)
		return
	}
	m, d, made := *mon.Step, o.Step, madeAt(o)
	switch {
	case m == d:
		e.agree("The monitor first shows it at step %d too (%s).", m, mon.Summary)
	case m == made && made < d:
		e.agree("The monitor first shows it at step %d (%s), whose update the dump says wrote the weights it first sees non-finite at step %d.", m, mon.Summary, d)
	case m < d:
		e.monitorBeforeOrigin(v, mon, dumped)
		return
	default:
		e.note("The monitor first shows it at step %d, after the dump's origin at step %d in the %s: %s.", m, d, dumpPhase(o), toSee(o, mon))
		return
	}
	e.monitorPhase(o, mon)
	e.monitorRanks(o, mon)
	e.monitorReduction(o, mon)
	if mod := moduleStem(mon.Module); mod != "" {
		for _, c := range o.Chain {
			if strings.Contains(c, "."+mod+".") {
				e.agree("The monitor's first module %s is in the origin's module chain (%s).", mon.Module, c)
				break
			}
		}
	}
}

// monitorWithoutOrigin: the monitor shows a non-finite value, the dump
// holds no origin.
func (e sheet) monitorWithoutOrigin(v *verdict.Verdict, mon *verdict.MonitorEvidence, log *verdict.LogEvidence, dumped []int) {
	m := *mon.Step
	switch status := stepStatus(v, m); {
	case len(dumped) == 0:
	case skippedAt(log, m):
		e.agree("The monitor's first sighting at step %d (%s) is in the iteration the loss scaler skipped (log): an overflow dropped, not an origin.", m, mon.Summary)
	case recoveredAt(v, m):
		e.agree("The monitor's first sighting at step %d (%s) is where the dump shows an anomaly that did not last.", m, mon.Summary)
	case mon.Weak && readCleanFrom(v, m):
		e.note("The monitor's first sighting at step %d is only an infinite norm (%s): a tensor holding a legitimate -inf, such as an attention mask, records the same, and the dump, read clean through step %d, shows nothing lasting; \"min\" and \"max\" in the monitor's ops tell them apart.", m, mon.Summary, lastClean(v, m))
	case status == "clean":
		e.contradict("The monitor shows it at step %d (%s), but the dump of that step is clean.", m, mon.Summary)
	default:
		e.note("The monitor shows it at step %d, %s: dump step %d.", m, uncovered(v, m, dumped), m)
	}
}

// monitorBeforeOrigin: the monitor shows it at a step before the dump's
// origin.
func (e sheet) monitorBeforeOrigin(v *verdict.Verdict, mon *verdict.MonitorEvidence, dumped []int) {
	m, d := *mon.Step, v.Origin.Step
	switch {
	case mon.Weak:
		e.note("The monitor shows an infinite norm at step %d, before the dump's origin at step %d (%s): a legitimate -inf, such as an attention mask, records the same.", m, d, mon.Summary)
	case stepStatus(v, m) == "clean":
		e.contradict("The monitor shows it at step %d (%s), before the dump's origin at step %d, but the dump of step %d is clean.", m, mon.Summary, d, m)
	case len(dumped) > 0 && m < dumped[0]:
		e.note("The monitor shows it at step %d, before the first dumped step %d: the dump began too late, and its origin at step %d is only where it was first seen: dump step %d.", m, dumped[0], d, m)
	default:
		e.note("The monitor shows it at step %d, %s: the dump's origin at step %d is only where it was first seen: dump step %d.", m, uncovered(v, m, dumped), d, m)
	}
}

// monitorPhase compares the phases in which the monitor and the dump
// first see it, at the same step.
func (e sheet) monitorPhase(o *verdict.Origin, mon *verdict.MonitorEvidence) {
	pm, pd := monitorPhase(mon), dumpPhase(o)
	switch {
	case pm == "" || phaseOrder(pm) < 0 || phaseOrder(pd) < 0:
	case pm == pd:
		e.agree("Both place it in the %s.", pd)
	case phaseOrder(pm) > phaseOrder(pd):
		e.note("The monitor first sees it in the %s, after the dump's origin in the %s: %s.", pm, pd, seeingPhase(mon, pd))
	case mon.Weak:
		e.note("The monitor's sighting in the %s, before the dump's origin in the %s, is only an infinite norm: a legitimate -inf records the same.", pm, pd)
	case !o.Captured:
		e.note("The monitor places it in the %s, before the dump first sees it in the %s (%s, whose inputs were already non-finite): it was born there, in calls the dump does not show.", pm, pd, o.Op)
	default:
		e.contradict("The monitor places it in the %s, the dump in the %s.", pm, pd)
	}
}

// monitorRanks compares the ranks where the monitor first sees it with
// the dump's source.
func (e sheet) monitorRanks(o *verdict.Origin, mon *verdict.MonitorEvidence) {
	if len(mon.Ranks) == 0 {
		return
	}
	switch {
	case ranklist.Same(mon.Ranks, o.Ranks):
		e.agree("Both name %s as the source.", ranklist.Name(o.Ranks))
	case ranklist.Overlap(mon.Ranks, o.Ranks) && len(mon.Ranks) > len(o.Ranks):
		e.agree("The dump's source %s is among the ranks the monitor sees it on first (%s); the dump tells them apart.", ranklist.Name(o.Ranks), ranklist.Name(mon.Ranks))
	case ranklist.Overlap(mon.Ranks, o.Ranks):
		e.agree("The monitor sees it first on %s, among the dump's source %s.", ranklist.Name(mon.Ranks), ranklist.Name(o.Ranks))
	case ranklist.Overlap(mon.SeenOn, o.Ranks):
		e.note("The monitor sees it on the dump's source %s too, but with clean inputs first on %s: its targets miss the call where it was born, so a rank it reached looks like the source; the dump tells them apart.", ranklist.Name(o.Ranks), ranklist.Name(mon.Ranks))
	case monitorCoversOrigin(o, mon):
		e.contradict("The monitor's source is %s, the dump's %s, and the monitor records the origin's module %s without seeing it on %s.", ranklist.Name(mon.Ranks), ranklist.Name(o.Ranks), mon.Module, ranklist.Name(o.Ranks))
	default:
		e.note("The monitor sees it first on %s, not on the dump's source %s: its targets there miss the calls between the birth and the collective that carried it (add %s to targets).", ranklist.Name(mon.Ranks), ranklist.Name(o.Ranks), moduleOf(o))
	}
}

// monitorCoversOrigin reports whether the monitor's first module is one
// of the origin's modules: then the monitor records where it was born.
func monitorCoversOrigin(o *verdict.Origin, mon *verdict.MonitorEvidence) bool {
	mod := moduleStem(mon.Module)
	if mod == "" {
		return false
	}
	for _, c := range o.Chain {
		if strings.Contains(c, "."+mod+".") {
			return true
		}
	}
	return false
}

// monitorReduction compares where the monitor finds weight gradients
// non-finite (before or after the reduction) with the dump's origin.
func (e sheet) monitorReduction(o *verdict.Origin, mon *verdict.MonitorEvidence) {
	switch mon.Reduction {
	case "after":
		switch {
		case o.Collective:
			e.agree("The monitor sees it only after the gradient reduction, and the dump shows the collective made it from clean inputs.")
		case o.Phase == phaseReduction:
			e.agree("The monitor sees it only after the gradient reduction, and the dump's origin is in the reduction itself (%s on %s).", o.Op, ranklist.Name(o.Ranks))
		case o.Captured && !mon.Weak:
			e.contradict("The monitor sees it only after the gradient reduction (an aggregation fault), but the dump shows a compute origin, %s on %s.", o.Op, ranklist.Name(o.Ranks))
		}
	case "before":
		if !o.Collective && ranklist.Overlap(mon.Ranks, o.Ranks) {
			e.agree("The monitor finds it in %s's local gradients before the reduction: computed there, then spread.", ranklist.Name(mon.Ranks))
		}
	}
}

// toSee says what would let the monitor see where the dump's origin is:
// its module in targets for a computation, the output kind of its phase
// otherwise.
func toSee(o *verdict.Origin, mon *verdict.MonitorEvidence) string {
	if p := dumpPhase(o); p == phaseReduction || p == phaseOptimizer || len(o.Chain) == 0 {
		return seeingPhase(mon, p)
	}
	return "its targets do not include where it was born: add " + moduleOf(o) + " to targets"
}

// moduleOf names the origin's innermost module as the monitor's targets
// name it ("Module.layers.0.attn.Attention.forward.0" is layers.0.attn),
// or its call when construct.json gave no module.
func moduleOf(o *verdict.Origin) string {
	if len(o.Chain) == 0 {
		return "the module around " + o.Op
	}
	name := strings.TrimPrefix(o.Chain[len(o.Chain)-1], "Module.")
	parts := strings.Split(name, ".")
	if len(parts) > 3 {
		name = strings.Join(parts[:len(parts)-3], ".")
	}
	return name
}

// lastClean is the last dumped step at or after step that the dump read
// clean.
func lastClean(v *verdict.Verdict, step int) int {
	last := step
	for _, st := range v.Steps {
		if st.Step >= step && (st.Status == "clean" || st.Status == "recovered") {
			last = st.Step
		}
	}
	return last
}
