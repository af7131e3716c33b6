package plan

import (
	"fmt"
	"slices"

	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/safeio"
	"github.com/nanhunt/nanhunt/verdict"
)

// chooseMode turns a same-step tensor plan into an any-step one when asked,
// or when its estimate fits the budget (or cannot be made), and says why.
func chooseMode(p *verdict.Plan, v *verdict.Verdict, opt Options, list []string, sameRanks []int) {
	o := v.Origin
	budget := opt.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	all := runRanks(v)
	steps := o.Step + 2 // a watch ends the re-run after the step that shows it lasts
	var per int64
	basis := ""
	switch {
	case opt.Measure != nil:
		if s, err := opt.Measure(o.Step, o.Ranks[0], list); err == nil {
			per = s.Bytes
			basis = fmt.Sprintf("%d calls of %s, %d tensors, in %s", s.Calls, joinOr(list), s.Tensors, s.File)
		} else {
			basis = "not measured: " + err.Error()
		}
	case v.Plan != nil && v.Plan.Estimate != nil:
		// a saved verdict: its plan was measured on the dump it came from
		per, basis = v.Plan.Estimate.PerRankStep, v.Plan.Estimate.Basis
	}
	anyEst := &verdict.Estimate{PerRankStep: per, Ranks: len(all), Steps: steps, Total: per * int64(len(all)) * int64(steps), Budget: budget, Basis: basis}
	sameEst := &verdict.Estimate{PerRankStep: per, Ranks: len(sameRanks), Steps: 1, Total: per * int64(len(sameRanks)), Basis: basis}
	fits := per == 0 || anyEst.Total <= budget
	mode := opt.Mode
	if mode == "" {
		mode = SameStep
		if fits {
			mode = AnyStep
		}
	}
	if mode == SameStep {
		p.Mode, p.Estimate = SameStep, sameEst
		switch {
		case opt.Mode == SameStep:
			p.Other = "--mode any-step collects the same calls on every step and rank, for a NaN that does not come back at the same step"
		default:
			p.Other = fmt.Sprintf("an any-step dump (every step and rank) would take %s for %d ranks × %d steps, above the budget of %s: raise --budget, or use --mode any-step",
				sizeWords(anyEst.Total), len(all), steps, safeio.Size(budget))
		}
		if per == 0 {
			p.Estimate = nil
		}
		return
	}
	p.Mode, p.Estimate = AnyStep, anyEst
	if per == 0 {
		p.Estimate = nil
	}
	p.Config.Step, p.Config.Rank = nil, nil
	p.Collect = fmt.Sprintf("the input and output tensors (dump_tensor_data/*.pt) of every %s call on every step and every rank, until a watch ends the run at the first lasting anomaly", joinOr(list))
	p.Watch = fmt.Sprintf("nanhunt watch %s --exit-on-anomaly --on-anomaly '<the command that stops your job, e.g. scancel $SLURM_JOB_ID>'", p.Config.DumpPath)
	p.Other = fmt.Sprintf("--mode same-step collects only step %d on %s, for a run that repeats itself", o.Step, ranklist.Name(sameRanks))
}

// runRanks is every rank the verdict knows of.
func runRanks(v *verdict.Verdict) []int {
	seen := map[int]bool{}
	for _, r := range v.Scanned.Ranks {
		seen[r] = true
	}
	for _, st := range v.Steps {
		if set, err := notation.ParseRanges(st.Ranks); err == nil {
			for r := range set {
				seen[r] = true
			}
		}
	}
	return ranklist.Keys(seen)
}

// moves says what shows the anomaly moving: the same op at different steps
// on different ranks, or iterations the loss scaler skipped.
func moves(v *verdict.Verdict) string {
	o := v.Origin
	for _, r := range v.Recovered {
		if r.Op == o.Op && r.Step != o.Step && !slices.Equal(r.Ranks, o.Ranks) {
			return fmt.Sprintf("%s also made a non-finite value at step %d on %s: the NaN moves between steps and ranks", o.Op, r.Step, ranklist.Name(r.Ranks))
		}
	}
	if len(v.Recovered) > 0 {
		r := v.Recovered[0]
		return fmt.Sprintf("an earlier anomaly at step %d (%s on %s) did not last: the NaN need not come back at the same step", r.Step, r.Op, ranklist.Name(r.Ranks))
	}
	if e := v.Evidence; e != nil && e.Log != nil && len(e.Log.Skipped) > 0 {
		s := e.Log.Skipped[0]
		return fmt.Sprintf("the loss scaler skipped iteration %d (step %d): overflows come and go, the NaN need not come back at the same step", s.Iteration, s.Step)
	}
	return ""
}

// sizeWords writes a byte count for people: "≈ 5.8 GiB".
func sizeWords(n int64) string { return "≈ " + safeio.Size(n) }
