package trainlog

import (
	"fmt"
	"slices"
)

// The metrics of an Event.
const (
	metricLoss     = "loss"
	metricGradNorm = "grad_norm"
)

// The stage hints of a Summary.
const (
	StageForward  = "forward"
	StageBackward = "backward"
)

// maxListedSkips bounds Summary.Skipped; Summary.SkippedTotal counts all.
const maxListedSkips = 1000

// Summary is what the logs say about where values stopped being finite.
// Iterations are compared by Step, so that logs of different formats agree.
type Summary struct {
	// FirstNonFinite is the earlier of FirstNonFiniteLoss and
	// FirstNonFiniteGradNorm (the loss when both are at the same step); nil
	// when every printed value is finite.
	FirstNonFinite *Event `json:"first_nonfinite"`
	// FirstNonFiniteLoss and FirstNonFiniteGradNorm are the first step that
	// printed a non-finite loss, and grad norm, on any rank, skipped
	// iterations aside.
	FirstNonFiniteLoss     *Event `json:"first_nonfinite_loss"`
	FirstNonFiniteGradNorm *Event `json:"first_nonfinite_grad_norm"`
	// PersistentSkips is the first iteration of the first run of skipped
	// iterations that does not end (see persistent in agg.go): a value that
	// stays non-finite, which the scaler cannot skip away. It counts as a
	// non-finite grad norm (Kind "inf") in FirstNonFiniteGradNorm.
	PersistentSkips *Event `json:"persistent_skips,omitempty"`
	// FirstLossLeftOut is the first Megatron-LM line without its loss (see
	// Record.LossLeftOut); Kind is "absent".
	FirstLossLeftOut *Event `json:"first_loss_left_out,omitempty"`
	// FirstNonFiniteParams is the first step after which a record named
	// non-finite parameters (JSON fields such as nonfinite_params).
	FirstNonFiniteParams *ParamsEvent `json:"first_nonfinite_params,omitempty"`
	// StageHint is "backward" when the grad norm went non-finite, or the
	// parameters after a step did, at a step whose loss was printed finite
	// and earlier than any non-finite loss; "forward" when the loss went
	// non-finite first or at the same step; "" when the logs cannot say.
	// StageReason says why in words.
	StageHint   string `json:"stage_hint"`
	StageReason string `json:"stage_reason"`
	// LastFinite is the last step before FirstNonFinite (or the last step,
	// when there is none) at which some rank printed only finite values.
	LastFinite *Point `json:"last_finite"`
	// Skipped lists the skipped steps (loss-scale overflows), by step, at
	// most 1000; SkippedTotal counts them all. They are never taken as a
	// first non-finite value.
	Skipped      []Skip `json:"skipped"`
	SkippedTotal int    `json:"skipped_total"`
	// NaNIterations is Megatron-LM's "number of nan iterations" summed over
	// a rank's lines (the largest sum over ranks); nil if never printed.
	NaNIterations *int `json:"nan_iterations"`
	// PerRank gives each rank's first non-finite value, by rank, so that a
	// caller can see whether one rank printed it first. Records of unknown
	// rank are listed as rank -1.
	PerRank []RankFirst `json:"per_rank"`
	// Mapping is Log.Mapping.
	Mapping Mapping `json:"mapping"`
}

// Event is the first step at which a metric was non-finite.
type Event struct {
	// Iteration is as printed; Step is msprobe's step number.
	Iteration int `json:"iteration"`
	Step      int `json:"step"`
	// Metric is "loss" or "grad_norm".
	Metric string `json:"metric"`
	// Kind is "nan", "inf" or "-inf" (the value printed by the first of
	// Ranks).
	Kind string `json:"kind"`
	// Ranks are the ranks that printed a non-finite value of Metric at Step.
	Ranks []int `json:"ranks"`
	// File and Line say where the first of Ranks printed it.
	File string `json:"file"`
	Line int    `json:"line"`
}

// ParamsEvent is the first step after which parameters were non-finite.
type ParamsEvent struct {
	Iteration int `json:"iteration"`
	Step      int `json:"step"`
	// Ranks are the ranks that named non-finite parameters at Step.
	Ranks []int `json:"ranks"`
	// Names are the names the first of Ranks printed.
	Names []string `json:"names"`
	File  string   `json:"file"`
	Line  int      `json:"line"`
}

// Point is one iteration in both numberings.
type Point struct {
	Iteration int `json:"iteration"`
	Step      int `json:"step"`
}

// Skip is one skipped step.
type Skip struct {
	Iteration int   `json:"iteration"`
	Step      int   `json:"step"`
	Ranks     []int `json:"ranks"`
	// Reason is what the log said, e.g. "fp16 overflow, loss scale 65536 →
	// 32768".
	Reason string `json:"reason"`
	// Approximate reports that the step was counted, not printed, and may
	// be off (see the package documentation, "Skipped iterations").
	Approximate bool   `json:"approximate,omitempty"`
	File        string `json:"file"`
	Line        int    `json:"line"`
}

// RankFirst is one rank's first non-finite value.
type RankFirst struct {
	Rank int `json:"rank"`
	// First is nil when every value the rank printed was finite.
	First *Event `json:"first"`
	// LastFinite is the rank's last finite step before First (or its last
	// finite step).
	LastFinite *Point `json:"last_finite"`
}

// candidate is a hit of one rankAgg, in step numbering.
type candidate struct {
	h      *hit
	a      *rankAgg
	step   int
	metric string
}

// better orders candidates by step, then rank, then file order.
func (c candidate) better(d candidate) bool {
	if c.step != d.step {
		return c.step < d.step
	}
	return c.a.rank < d.a.rank
}

// firstOf returns the earliest candidate among aggs for the hit get picks,
// with every rank that has one at the same step; ok is false if none.
func firstOf(aggs []*rankAgg, get func(*rankAgg) (*hit, string)) (best candidate, ranks []int, all []candidate, ok bool) {
	for _, a := range aggs {
		h, metric := get(a)
		if h == nil {
			continue
		}
		c := candidate{h: h, a: a, step: h.iter + a.offset, metric: metric}
		all = append(all, c)
		if !ok || c.better(best) {
			best, ok = c, true
		}
	}
	if !ok {
		return best, nil, nil, false
	}
	var at []candidate
	for _, c := range all {
		if c.step == best.step {
			at = append(at, c)
			ranks = append(ranks, c.a.rank)
		}
	}
	slices.Sort(ranks)
	return best, slices.Compact(ranks), at, true
}

func (c candidate) event() *Event {
	return &Event{Iteration: c.h.iter, Step: c.step, Metric: c.metric, Kind: c.h.kind.String(),
		File: c.a.file, Line: c.h.line}
}

// summarize builds the Summary from every rank of every file.
func summarize(aggs []*rankAgg, m Mapping) Summary {
	// aggs come file by file, each file's by rank: ties go to the lowest
	// rank, then the earliest file.
	s := Summary{Mapping: m}
	var lossAt, gradAt, paramsAt []candidate

	if c, ranks, at, ok := firstOf(aggs, func(a *rankAgg) (*hit, string) { return a.loss, metricLoss }); ok {
		s.FirstNonFiniteLoss = c.event()
		s.FirstNonFiniteLoss.Ranks = ranks
		lossAt = at
	}
	for _, a := range aggs {
		if p := a.persistent(); p != nil && a.grad.earlier(p.iter) {
			a.grad = p
			a.gradFromSkips = true
		}
	}
	if c, ranks, _, ok := firstOf(aggs, func(a *rankAgg) (*hit, string) {
		if a.gradFromSkips {
			return a.grad, metricGradNorm
		}
		return nil, ""
	}); ok {
		s.PersistentSkips = c.event()
		s.PersistentSkips.Ranks = ranks
	}
	if c, ranks, at, ok := firstOf(aggs, func(a *rankAgg) (*hit, string) { return a.grad, metricGradNorm }); ok {
		s.FirstNonFiniteGradNorm = c.event()
		s.FirstNonFiniteGradNorm.Ranks = ranks
		gradAt = at
	}
	if c, ranks, _, ok := firstOf(aggs, func(a *rankAgg) (*hit, string) { return a.leftOut, metricLoss }); ok {
		s.FirstLossLeftOut = c.event()
		s.FirstLossLeftOut.Ranks = ranks
	}
	if c, ranks, at, ok := firstOf(aggs, func(a *rankAgg) (*hit, string) { return a.params, "" }); ok {
		s.FirstNonFiniteParams = &ParamsEvent{Iteration: c.h.iter, Step: c.step, Ranks: ranks,
			Names: c.h.names, File: c.a.file, Line: c.h.line}
		paramsAt = at
	}
	switch l, g := s.FirstNonFiniteLoss, s.FirstNonFiniteGradNorm; {
	case l != nil && (g == nil || l.Step <= g.Step):
		s.FirstNonFinite = l
	case g != nil:
		s.FirstNonFinite = g
	}
	s.StageHint, s.StageReason = stageHint(&s, lossAt, gradAt, paramsAt)

	// LastFinite, overall and per rank.
	bound := func(a *rankAgg, limit *int) (Point, bool) {
		var it int
		var ok bool
		if limit != nil {
			it, ok = a.finite.maxBelow(*limit - a.offset)
		} else {
			it, ok = a.finite.max()
		}
		return Point{Iteration: it, Step: it + a.offset}, ok
	}
	var limit *int
	if s.FirstNonFinite != nil {
		limit = &s.FirstNonFinite.Step
	}
	for _, a := range aggs {
		if p, ok := bound(a, limit); ok && (s.LastFinite == nil || p.Step > s.LastFinite.Step) {
			s.LastFinite = &p
		}
	}

	byRank := map[int][]*rankAgg{}
	var ranks []int
	for _, a := range aggs {
		if _, seen := byRank[a.rank]; !seen {
			ranks = append(ranks, a.rank)
		}
		byRank[a.rank] = append(byRank[a.rank], a)
	}
	slices.Sort(ranks)
	for _, r := range ranks {
		rf := RankFirst{Rank: r}
		if c, _, _, ok := firstOf(byRank[r], (*rankAgg).first); ok {
			rf.First = c.event()
			rf.First.Ranks = []int{r}
		}
		var lim *int
		if rf.First != nil {
			lim = &rf.First.Step
		}
		for _, a := range byRank[r] {
			if p, ok := bound(a, lim); ok && (rf.LastFinite == nil || p.Step > rf.LastFinite.Step) {
				rf.LastFinite = &p
			}
		}
		s.PerRank = append(s.PerRank, rf)
	}

	// NaN iterations: the largest per-rank sum.
	for _, r := range ranks {
		sum, printed := 0, false
		for _, a := range byRank[r] {
			if a.nanPrinted {
				printed = true
				sum = min(sum+a.nanIters, maxCount)
			}
		}
		if printed && (s.NaNIterations == nil || sum > *s.NaNIterations) {
			v := sum
			s.NaNIterations = &v
		}
	}

	s.Skipped, s.SkippedTotal = mergeSkips(aggs)
	return s
}

// mergeSkips merges the skipped iterations of every rank by step.
func mergeSkips(aggs []*rankAgg) ([]Skip, int) {
	bySteps := map[int]*Skip{}
	extra := 0
	for _, a := range aggs {
		extra += a.skipExtra
		its := make([]int, 0, len(a.skips))
		for it := range a.skips {
			its = append(its, it)
		}
		slices.Sort(its)
		for _, it := range its {
			h := a.skips[it]
			step := it + a.offset
			sk := bySteps[step]
			if sk == nil {
				bySteps[step] = &Skip{Iteration: it, Step: step, Ranks: []int{a.rank}, Reason: h.note,
					Approximate: h.approx, File: a.file, Line: h.line}
				continue
			}
			if sk.File == a.file && h.line < sk.Line {
				// The earliest line of a file tells why.
				sk.Reason, sk.Line = h.note, h.line
			}
			if !slices.Contains(sk.Ranks, a.rank) {
				sk.Ranks = append(sk.Ranks, a.rank)
				slices.Sort(sk.Ranks)
			}
			sk.Approximate = sk.Approximate && h.approx
		}
	}
	steps := make([]int, 0, len(bySteps))
	for st := range bySteps {
		steps = append(steps, st)
	}
	slices.Sort(steps)
	total := len(steps) + extra
	if len(steps) > maxListedSkips {
		steps = steps[:maxListedSkips]
	}
	out := make([]Skip, 0, len(steps))
	for _, st := range steps {
		out = append(out, *bySteps[st])
	}
	return out, total
}

// stageHint decides forward or backward from the first non-finite loss,
// grad norm and parameters, and the loss printed next to the latter two.
func stageHint(s *Summary, lossAt, gradAt, paramsAt []candidate) (string, string) {
	const never = int(^uint(0) >> 1)
	l, g, p := never, never, never
	if s.FirstNonFiniteLoss != nil {
		l = s.FirstNonFiniteLoss.Step
	}
	if s.FirstNonFiniteGradNorm != nil {
		g = s.FirstNonFiniteGradNorm.Step
	}
	if s.FirstNonFiniteParams != nil {
		p = s.FirstNonFiniteParams.Step
	}
	if l == never && g == never && p == never {
		return "", "no non-finite loss, grad norm or parameter in the logs"
	}
	if l <= g && l <= p {
		e := s.FirstNonFiniteLoss
		switch {
		case l == g:
			return StageForward, fmt.Sprintf("the loss and the grad norm went non-finite at the same step %d (iteration %d): the loss was already bad", l, e.Iteration)
		case l == p:
			return StageForward, fmt.Sprintf("the loss was non-finite at step %d (iteration %d), the step after which the parameters were", l, e.Iteration)
		}
		return StageForward, fmt.Sprintf("the loss went non-finite at step %d (iteration %d), before any grad norm or parameter", l, e.Iteration)
	}
	// The grad norm or the parameters went bad first.
	what, at, step, iter := "grad norm", gradAt, g, 0
	if g != never {
		iter = s.FirstNonFiniteGradNorm.Iteration
	}
	if p < g {
		what, at, step, iter = "parameters after the step", paramsAt, p, s.FirstNonFiniteParams.Iteration
	}
	finite, printed := false, false
	for _, c := range at {
		if c.h.lossKind != Absent {
			printed = true
		}
		if c.h.lossKind == Finite {
			finite = true
		}
	}
	if finite {
		return StageBackward, fmt.Sprintf("the %s went non-finite at step %d (iteration %d) while the loss printed with it was finite", what, step, iter)
	}
	if !printed {
		reason := fmt.Sprintf("the %s went non-finite at step %d (iteration %d) but no loss was printed with it", what, step, iter)
		if s.FirstLossLeftOut != nil && s.FirstLossLeftOut.Step <= step {
			reason += fmt.Sprintf("; Megatron-LM left the loss out from step %d, which it does when the loss is NaN", s.FirstLossLeftOut.Step)
		}
		return "", reason
	}
	return "", fmt.Sprintf("the %s went non-finite at step %d (iteration %d) and the loss printed with it was not finite", what, step, iter)
}
