package evidence

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// sighting is where a source places the value first: a step and a phase.
type sighting struct {
	step  int
	phase string
	who   string
	ranks []int // the ranks it saw it on, when it tells them apart
}

// before reports whether s comes earlier in training than t.
func (s sighting) before(t sighting) bool {
	if s.step != t.step {
		return s.step < t.step
	}
	return phaseOrder(s.phase) < phaseOrder(t.phase)
}

// explainBornEarlier adds the explanation that the training log or the
// monitor see the value before the dump's first sight of it, when the dump
// did not see it born (its first call already had it in its inputs) and
// did not read that place clean: the birth is there, in what the dump does
// not show. An origin the dump saw born from clean inputs is not refined:
// an earlier sighting of it is a contradiction (compareLog, compareMonitor).
func explainBornEarlier(v *verdict.Verdict, log *verdict.LogEvidence, mon *verdict.MonitorEvidence) {
	o := v.Origin
	if o == nil || o.Captured {
		return
	}
	first := sighting{step: o.Step, phase: firstSeenPhase(v), who: "the dump"}
	var best *sighting
	consider := func(s sighting) {
		if !s.before(first) || (s.step != o.Step && stepStatus(v, s.step) == "clean") {
			return
		}
		switch {
		case best == nil || s.before(*best):
			best = &s
		case !best.before(s):
			best.who += " and " + s.who
			best.ranks = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(best.ranks), s.ranks...))))
		}
	}
	if log != nil && log.FirstNaNStep != nil && log.FirstNaNMetric == "loss" {
		consider(sighting{step: *log.FirstNaNStep, phase: phaseForward, who: "the training log's loss" + onRanks(log.Ranks, log.LoggedRanks), ranks: log.Ranks})
	}
	if mon != nil && mon.Step != nil && !mon.Weak && phaseOrder(monitorPhase(mon)) >= 0 {
		consider(sighting{step: *mon.Step, phase: monitorPhase(mon), who: "the monitor" + onRanks(mon.Ranks, nil), ranks: mon.Ranks})
	}
	if best == nil {
		return
	}
	text := fmt.Sprintf("%s %s it already in step %d's %s, before the dump first sees it (%s, step %d): it was born there, in calls the dump does not show",
		capital(best.who), showVerb(best.who), best.step, best.phase, o.Op, o.Step)
	if stepStatus(v, best.step) == "" {
		text += fmt.Sprintf("; step %d was not dumped: dump it", best.step)
	}
	v.Explanations = append(v.Explanations, verdict.Explanation{Kind: verdict.ExplainBornEarlier, Op: o.Op, Step: best.step, Text: text + "."})
	v.NextSteps = append([]string{bornEarlierNext(*best)}, v.NextSteps...)
}

// onRanks names the ranks a source saw it on, " (on rank 1)", when they are
// some of the ranks it covers; "" when it tells none apart or saw it on all.
func onRanks(ranks, covered []int) string {
	if len(ranks) == 0 || (len(covered) > 0 && len(ranks) == len(covered)) {
		return ""
	}
	return " (on " + ranklist.Name(ranks) + ")"
}

// bornEarlierNext is the first thing to do when an earlier sighting places
// the birth before what the dump shows: look in that step and phase, on
// the ranks that saw it first, before the update the dump points at.
func bornEarlierNext(s sighting) string {
	where := "its " + s.phase
	if len(s.ranks) > 0 {
		where = ranklist.Name(s.ranks) + "'s " + s.phase
	}
	return fmt.Sprintf("%s %s it in step %d's %s already: the call that makes it runs there, before anything the dump shows. Dump step %d and read %s first.",
		capital(s.who), showVerb(s.who), s.step, s.phase, s.step, where)
}

func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// showVerb agrees with one source or two ("the monitor shows", "the log's
// loss and the monitor show").
func showVerb(who string) string {
	if strings.Contains(who, " and ") {
		return "show"
	}
	return "shows"
}

// firstSeenPhase is the phase of the call where the dump first sees the
// origin on its ranks: for weights an update wrote, the forward call that
// reads them, not the update's phase the origin is given.
func firstSeenPhase(v *verdict.Verdict) string {
	o := v.Origin
	for _, st := range v.Steps {
		if st.Step != o.Step {
			continue
		}
		for _, a := range st.Anomalous {
			if a.Op == o.Op && slices.Contains(o.Ranks, a.Rank) && phaseOrder(a.Phase) >= 0 {
				return a.Phase
			}
		}
	}
	return dumpPhase(o)
}
