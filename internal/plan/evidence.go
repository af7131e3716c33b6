package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// EarliestStep is the first step the evidence points at: the log's first
// non-finite value, the monitor's, or the step whose update wrote the
// parameters the log found non-finite.
func EarliestStep(e *verdict.Evidence) (int, bool) {
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

// FromEvidence: with only a log or monitor (or a dump that starts too
// late), dump the first step they show and the one before it.
func FromEvidence(v *verdict.Verdict, opt Options) *verdict.Plan {
	e := v.Evidence
	if e == nil {
		return nil
	}
	step, ok := EarliestStep(e)
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
	firstRanks := ranklist.Unique(ranks)
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
		for _, r := range ranklist.Unique(pool) {
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
		who = ranklist.Name(ranklist.Unique(ranks)) + " (named by " + strings.Join(from, " and ") + ", with one rank for comparison)"
	}
	p.Why = fmt.Sprintf("The first sign of a non-finite value is at step %d; without a dump of it the op and the rank that made it are unknown.", step)
	if len(from) > 0 {
		p.Why = fmt.Sprintf("The first sign of a non-finite value is at step %d on %s; without a dump of it the op that made it is unknown.", step, ranklist.Name(firstRanks))
	}
	p.Collect = fmt.Sprintf("statistics of every module and API call at steps %s on %s; the step before is included because its backward or update may have made the weights that step %d reads",
		notation.FormatRanges(ranklist.Unique(steps)), who, step)
	p.Then = []string{fmt.Sprintf("nanhunt trace %s, with the same --log and --monitor", opt.DumpPath)}
	return p
}
