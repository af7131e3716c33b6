package evidence

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// The phases of a training step, in the order they run.
const (
	phaseForward   = "forward"
	phaseBackward  = "backward"
	phaseReduction = "gradient reduction"
	phaseOptimizer = "optimizer"
)

// phaseOrder places a phase in its step; an unknown phase is -1.
func phaseOrder(p string) int {
	switch p {
	case phaseForward:
		return 0
	case phaseBackward:
		return 1
	case phaseReduction:
		return 2
	case phaseOptimizer:
		return 3
	}
	return -1
}

// dumpPhase is the phase of the dump's origin (its stage when the phase is
// not known).
func dumpPhase(o *verdict.Origin) string {
	if o.Phase != "" {
		return o.Phase
	}
	return o.Stage
}

// monitorPhase is the phase of the monitor's first sighting: a weight
// gradient seen only after the data-parallel reduction belongs to the
// reduction, not to the backward that made the local gradients.
func monitorPhase(m *verdict.MonitorEvidence) string {
	if m.Stage == phaseBackward && m.Reduction == "after" {
		return phaseReduction
	}
	return m.Stage
}

// recordWhat says what the monitor must record to see a phase.
func recordWhat(phase string) string {
	switch phase {
	case phaseForward:
		return "the module's activations (xy_distribution, with the module in targets)"
	case phaseBackward:
		return "activation gradients (xy_distribution with backward) or local weight gradients (wg_distribution: grad_unreduced)"
	case phaseReduction:
		return "the reduced weight gradients (wg_distribution: grad_reduced)"
	case phaseOptimizer:
		return "optimizer state and updated weights (mv_distribution, param_distribution)"
	}
	return "it"
}

// phaseKinds are the monitor's output kinds that record a phase.
var phaseKinds = map[string][]string{
	phaseForward:   {monitor.KindActv},
	phaseBackward:  {monitor.KindActvGrad, monitor.KindGradUnreduced},
	phaseReduction: {monitor.KindGradReduced},
	phaseOptimizer: {monitor.KindExpAvg, monitor.KindExpAvgSq, monitor.KindParamUpdated},
}

// recordsPhase reports whether the monitor wrote any output kind that
// records the phase.
func recordsPhase(mon *verdict.MonitorEvidence, phase string) bool {
	f, ok := mon.Findings.(monitor.Findings)
	if !ok {
		return false
	}
	for _, k := range f.Recorded {
		if slices.Contains(phaseKinds[phase], k.Kind) {
			return true
		}
	}
	return false
}

// seeingPhase says what would let the monitor see the phase where the
// dump's origin is.
func seeingPhase(mon *verdict.MonitorEvidence, phase string) string {
	if recordsPhase(mon, phase) {
		return "it records " + recordWhat(phase) + ", and they show none there: the value did not reach a tensor it records in that phase (made inside a module and hidden before its output, or only an infinite norm, which is weak evidence)"
	}
	return "to see the " + phase + " it must record " + recordWhat(phase)
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

// uncovered says why the dump cannot speak of a step that is not clean
// in it: not dumped, or not read whole.
func uncovered(v *verdict.Verdict, step int, dumped []int) string {
	switch status := stepStatus(v, step); status {
	case "":
		return fmt.Sprintf("which the dump does not cover (dumped steps %s)", notation.FormatRanges(ranklist.Unique(dumped)))
	case "unread", "incomplete":
		return fmt.Sprintf("which the dump could not read whole (%s)", status)
	}
	return fmt.Sprintf("whose dump is %s", stepStatus(v, step))
}

// recoveredAt reports whether the dump shows an anomaly at step that the
// next dumped step no longer showed.
func recoveredAt(v *verdict.Verdict, step int) bool {
	for _, r := range v.Recovered {
		if r.Step == step {
			return true
		}
	}
	return false
}

// skippedAt reports whether the log says the loss scaler skipped the
// iteration of step and training went on (the skips did not last).
func skippedAt(log *verdict.LogEvidence, step int) bool {
	if log == nil {
		return false
	}
	if p := log.PersistentSkipStep; p != nil && *p <= step {
		return false
	}
	for _, s := range log.Skipped {
		if s.Step == step {
			return true
		}
	}
	return false
}

// monitorAlarm reports whether the monitor's sighting is an anomaly the
// dump holds none of. With a dump, a weak sighting (a legitimate -inf
// looks the same) that a later step read clean does not last, and an
// overflow the loss scaler skipped or the dump saw recover is none;
// without a dump, the monitor's word stands.
func monitorAlarm(v *verdict.Verdict, mon *verdict.MonitorEvidence, log *verdict.LogEvidence) bool {
	if !seenByMonitor(mon) {
		return false
	}
	if len(v.Steps) == 0 {
		return true
	}
	m := *mon.Step
	if mon.Weak {
		return !readCleanFrom(v, m)
	}
	return !skippedAt(log, m) && !recoveredAt(v, m)
}

// readCleanFrom reports whether the dump read a step at or after step
// whole and found it clean (or saw an anomaly there recover): a weak
// sighting that was real would have lasted into it.
func readCleanFrom(v *verdict.Verdict, step int) bool {
	for _, st := range v.Steps {
		if st.Step >= step && (st.Status == "clean" || st.Status == "recovered") {
			return true
		}
	}
	return false
}
