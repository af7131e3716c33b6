package evidence

import (
	"fmt"
	"sort"

	"github.com/nanhunt/nanhunt/verdict"

	"github.com/nanhunt/nanhunt/internal/trainlog"
)

// FromLog reduces what the training logs say to the verdict's
// evidence.log.
func FromLog(l *trainlog.Log) *verdict.LogEvidence {
	s := l.Summary()
	e := &verdict.LogEvidence{
		LoggedRanks: []int{}, Ranks: []int{}, Skipped: []verdict.SkippedIteration{},
		StageHint: s.StageHint, Mapping: mappingText(s.Mapping),
	}
	ranks := map[int]bool{}
	for _, f := range l.Files {
		if f.Format == "" {
			continue
		}
		e.Files++
		if f.Rank >= 0 {
			ranks[f.Rank] = true
		}
		for _, r := range f.Ranks {
			ranks[r] = true
		}
	}
	for _, pr := range s.PerRank {
		if pr.Rank >= 0 {
			ranks[pr.Rank] = true
		}
	}
	for r := range ranks {
		e.LoggedRanks = append(e.LoggedRanks, r)
	}
	sort.Ints(e.LoggedRanks)
	ev := s.FirstNonFinite
	leftOut := false
	if lo := s.FirstLossLeftOut; lo != nil && (ev == nil || lo.Step <= ev.Step) {
		// Megatron-LM prints no loss that is not above 0: a NaN loss
		// vanishes from its line. The loss is computed before the
		// gradients, so a loss gone at the step the grad norm went
		// non-finite points at the forward.
		ev, leftOut = lo, true
		if e.StageHint == "" {
			e.StageHint = trainlog.StageForward
		}
	}
	if ev != nil {
		it, st := ev.Iteration, ev.Step
		e.FirstNaNIteration, e.FirstNaNStep = &it, &st
		e.FirstNaNMetric, e.Kind = ev.Metric, ev.Kind
		if leftOut {
			e.FirstNaNMetric, e.Kind = "loss", "nan"
		}
		for _, r := range ev.Ranks {
			if r >= 0 {
				e.Ranks = append(e.Ranks, r)
			}
		}
		e.Where = fmt.Sprintf("%s:%d", ev.File, ev.Line)
		if leftOut {
			e.Where += " (the loss is missing from the line: Megatron-LM leaves out a loss that is not above 0, NaN included)"
		}
	}
	if lf := s.LastFinite; ev == nil && lf != nil {
		st := lf.Step
		e.LastStep = &st
	}
	if p := s.PersistentSkips; p != nil {
		st := p.Step
		e.PersistentSkipStep = &st
	}
	for _, sk := range s.Skipped {
		e.Skipped = append(e.Skipped, verdict.SkippedIteration{Iteration: sk.Iteration, Step: sk.Step, Ranks: append([]int{}, sk.Ranks...), Reason: sk.Reason})
	}
	if p := s.FirstNonFiniteParams; p != nil {
		e.NonFiniteParams = &verdict.ParamsAfterStep{Step: p.Step, Params: append([]string{}, p.Names...)}
	}
	return e
}

func mappingText(m trainlog.Mapping) string {
	if m.Text == "" {
		return ""
	}
	if m.Source == "" {
		return m.Text
	}
	return m.Text + ", " + m.Source
}
