package evidence

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// compareLog sets what the training log says beside the dump's verdict.
func (e sheet) compareLog(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	e.compareSkips(v, log)
	if log.FirstNaNStep == nil {
		e.logSawNothing(v, log)
		return
	}
	if v.Origin == nil {
		e.logWithoutOrigin(v, log, dumped)
		return
	}
	e.logStep(v, log, dumped)
	o, l := v.Origin, *log.FirstNaNStep
	if log.StageHint == "backward" && l == o.Step && o.Stage == "backward" {
		e.agree("The grad norm went non-finite while the loss was finite, as a %s origin makes it.", o.Stage)
	}
	e.logRanks(o, log)
	e.logParams(v, log, dumped)
}

// compareSkips sets the loss scaler's skipped iterations beside the
// dump's recovered anomalies and its origin.
func (e sheet) compareSkips(v *verdict.Verdict, log *verdict.LogEvidence) {
	for _, s := range log.Skipped {
		if recoveredAt(v, s.Step) {
			e.agree("Iteration %d was skipped by the loss scaler (log), and the dump shows its anomaly at step %d did not last.", s.Iteration, s.Step)
		}
		if v.Origin == nil || v.Origin.Step != s.Step {
			continue
		}
		if p := log.PersistentSkipStep; p != nil && *p <= s.Step {
			e.agree("The loss scaler skipped iteration %d (step %d) and kept skipping: the value stays non-finite, as the dump's lasting anomaly at that step says.", s.Iteration, s.Step)
		} else {
			e.contradict("The log says iteration %d (step %d) was skipped by the loss scaler and training went on, yet the dump's anomaly at that step lasted into the next dumped step.", s.Iteration, s.Step)
		}
	}
}

// logSawNothing: the log prints no non-finite metric.
func (e sheet) logSawNothing(v *verdict.Verdict, log *verdict.LogEvidence) {
	o := v.Origin
	switch {
	case o == nil:
	case log.LastStep != nil && *log.LastStep < o.Step:
		e.note("The log ends at step %d, before the dump's origin at step %d: it cannot show it.", *log.LastStep, o.Step)
	default:
		e.note("The log prints no non-finite loss or grad norm, though the dump's anomaly starts at step %d: it has not reached the printed metrics yet (a NaN confined to some gradients or ranks, or a loss the log leaves out of its line).", o.Step)
	}
}

// logWithoutOrigin: the log prints a non-finite metric, the dump holds no
// origin.
func (e sheet) logWithoutOrigin(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	l, metric := *log.FirstNaNStep, metricName(log.FirstNaNMetric)
	printed := fmt.Sprintf("iteration %d", derefOr(log.FirstNaNIteration, l))
	switch status := stepStatus(v, l); {
	case len(dumped) == 0:
	case status == "clean":
		e.contradict("The log prints a non-finite %s at step %d (%s), but the dump of that step is clean: check the iteration-to-step mapping (%s) and that the dumped ranks are the ones training.", metric, l, printed, log.Mapping)
	case status == "recovered":
		e.agree("The log prints a non-finite %s at step %d (%s), where the dump shows an anomaly that did not last.", metric, l, printed)
	default:
		e.note("The log prints a non-finite %s at step %d (%s), %s: dump steps %d-%d.", metric, l, printed, uncovered(v, l, dumped), max(l-1, 0), l)
	}
}

// logStep compares the log's first non-finite step with the dump's
// origin.
func (e sheet) logStep(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	o, l, metric := v.Origin, *log.FirstNaNStep, metricName(log.FirstNaNMetric)
	printed := fmt.Sprintf("iteration %d", derefOr(log.FirstNaNIteration, l))
	d, made := o.Step, madeAt(o)
	switch {
	case l == d && made == d && log.FirstNaNMetric == "loss" && phaseOrder(dumpPhase(o)) > 0 && log.StageHint == "forward":
		e.lossBeforeOrigin(o, l)
	case l == made && made < d:
		e.logAtUpdate(v, log, dumped)
	case l == d:
		e.agree("The log first prints a non-finite %s at step %d (%s), the dump's origin step.", metric, l, printed)
	case l == d+1 && o.Stage != "forward":
		e.agree("The log first prints a non-finite %s at step %d (%s): the %s of step %d wrote non-finite weights, which the next forward reads.", metric, l, printed, o.Stage, d)
	case l > d:
		e.agree("The log first prints a non-finite %s at step %d (%s), %d step(s) after the dump's origin at step %d: it took that long to reach the printed metrics.", metric, l, printed, l-d, d)
	case stepStatus(v, l) == "clean":
		e.contradict("The log prints a non-finite %s at step %d (%s), but the dump's first anomaly is at step %d and its step %d is clean: check the iteration-to-step mapping (%s), or which ranks were dumped.", metric, l, printed, d, l, log.Mapping)
	case len(dumped) > 0 && l < dumped[0]:
		e.note("The log prints a non-finite %s at step %d (%s), before the first dumped step %d: the dump began too late, and its origin at step %d is only where it was first seen: dump steps from %d.", metric, l, printed, dumped[0], d, max(l-1, 0))
	default:
		e.note("The log prints a non-finite %s at step %d (%s), %s: the dump's origin at step %d is only where it was first seen: dump step %d.", metric, l, printed, uncovered(v, l, dumped), d, l)
	}
}

// lossBeforeOrigin: the loss is non-finite at the origin step, whose
// origin the dump places after the forward.
func (e sheet) lossBeforeOrigin(o *verdict.Origin, l int) {
	if o.Captured {
		e.contradict("The log's loss is already non-finite at step %d, but the dump's origin is in that step's %s, which runs after the loss is computed: an earlier cause is missing from the dump.", l, dumpPhase(o))
		return
	}
	e.note("The log's loss is already non-finite at step %d, before the dump first sees it in that step's %s (%s on %s, whose inputs were already non-finite): it was born in the forward, which the dump does not show there: dump step %d's forward on %s again.", l, dumpPhase(o), o.Op, ranklist.Name(o.Ranks), l, ranklist.Name(o.Ranks))
}

// logAtUpdate: the log prints a non-finite metric at the step whose
// update, the dump says, wrote the weights it first sees non-finite. The
// grad norm is computed by the optimizer step, with that update: they
// agree. The loss is computed in the forward, before it: it was born
// earlier in that step, which the dump must not have read clean.
func (e sheet) logAtUpdate(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	l, metric, d := *log.FirstNaNStep, metricName(log.FirstNaNMetric), v.Origin.Step
	printed := fmt.Sprintf("iteration %d", derefOr(log.FirstNaNIteration, l))
	switch {
	case log.FirstNaNMetric != "loss":
		e.agree("The log first prints a non-finite %s at step %d (%s): the update at the end of that step wrote the weights that the dump first shows non-finite at step %d.", metric, l, printed, d)
	case stepStatus(v, l) == "clean":
		e.contradict("The log prints a non-finite loss at step %d (%s), but the dump of that step, whose forward computes the loss, is clean.", l, printed)
	default:
		e.note("The log already prints a non-finite loss at step %d (%s), before the update at its end: it was born in step %d's forward, %s, and the update only carried it into the weights the dump first shows non-finite at step %d: dump step %d.", l, printed, l, uncovered(v, l, dumped), d, l)
	}
}

// logRanks compares the ranks that printed it first with the dump's
// source.
func (e sheet) logRanks(o *verdict.Origin, log *verdict.LogEvidence) {
	if len(log.Ranks) == 0 || len(log.Ranks) >= len(log.LoggedRanks) {
		return
	}
	switch {
	case ranklist.Same(log.Ranks, o.Ranks):
		e.agree("Only %s printed it first, the dump's source %s.", ranklist.Name(log.Ranks), ranklist.Name(o.Ranks))
	case !ranklist.Overlap(log.Ranks, o.Ranks):
		e.note("The log shows %s printing it first, not the dump's source %s: a rank prints the loss only where it computes it (the last pipeline stage), and a NaN reaches the printed metrics of the ranks it spread to.", ranklist.Name(log.Ranks), ranklist.Name(o.Ranks))
	}
}

// logParams compares the parameters the log lists as non-finite with the
// dump's origin.
func (e sheet) logParams(v *verdict.Verdict, log *verdict.LogEvidence, dumped []int) {
	p := log.NonFiniteParams
	if p == nil {
		return
	}
	o := v.Origin
	d, made := o.Step, madeAt(o)
	names := strings.Join(first(p.Params, 5), ", ")
	switch {
	case p.Step == d:
		e.agree("The log lists non-finite parameters after step %d (%s): the update of the origin step wrote them.", p.Step, names)
	case p.Step == made:
		e.agree("The log lists non-finite parameters after step %d (%s): the update the dump names wrote them.", p.Step, names)
	case p.Step < d && stepStatus(v, p.Step) == "clean":
		e.contradict("The log lists non-finite parameters already after step %d (%s), before the dump's origin at step %d, whose step %d is clean.", p.Step, names, d, p.Step)
	case p.Step < d:
		e.note("The log lists non-finite parameters already after step %d (%s), %s: the dump's origin at step %d is only where it was first seen: dump step %d.", p.Step, names, uncovered(v, p.Step, dumped), d, p.Step)
	}
}
