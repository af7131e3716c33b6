package trainlog

import "slices"

// hit is the first record of one rank with some property, in the file's
// iteration numbering.
type hit struct {
	iter     int
	kind     Kind     // the value's kind
	lossKind Kind     // the kind of the loss of the same record
	line     int      // where it was printed
	names    []string // non-finite parameter names
}

// earlier reports whether a record at iteration it replaces h as the first.
func (h *hit) earlier(it int) bool { return h == nil || it < h.iter }

// skipHit is one skipped iteration of one rank.
type skipHit struct {
	line   int
	note   string
	approx bool
}

// maxSkipsPerRank bounds the skipped iterations remembered per rank and file;
// more are only counted.
const maxSkipsPerRank = 10000

// rankAgg accumulates what the records of one rank in one file say, in the
// file's iteration numbering. It is exact whatever records are kept.
type rankAgg struct {
	rank   int
	file   string
	offset int // set when the file is done

	loss, grad, params, leftOut *hit
	gradFromSkips               bool // grad is a run of persistent skips

	finite ivset // iterations whose printed values were all finite

	skips     map[int]*skipHit
	skipExtra int // skipped iterations over maxSkipsPerRank

	nanIters   int
	nanPrinted bool

	// judge, when set, follows the grad norm and the loss scale for a
	// warning before the NaN (climb.go)
	judge AheadJudge
	climb rankClimbs
}

func newRankAgg(rank int, file string) *rankAgg {
	return &rankAgg{rank: rank, file: file}
}

// add accounts for one record.
func (a *rankAgg) add(p *pending) {
	r := &p.rec
	if p.nanIters >= 0 {
		a.nanPrinted = true
		a.nanIters = min(a.nanIters+p.nanIters, maxCount)
	}
	it := r.Iteration
	a.follow(p)
	if r.Skipped {
		if r.Loss.NonFinite() && a.loss.earlier(it) {
			// the loss itself is not finite: the forward made it, whatever
			// the scaler did with the gradients
			a.loss = &hit{iter: it, kind: r.Loss.Kind, lossKind: r.Loss.Kind, line: r.Line}
		}
		if a.skips == nil {
			a.skips = map[int]*skipHit{}
		}
		if s, ok := a.skips[it]; ok {
			if s.note == "" {
				s.note = r.Note
			}
			s.approx = s.approx && p.approx
			return
		}
		if len(a.skips) >= maxSkipsPerRank {
			a.skipExtra++
			return
		}
		a.skips[it] = &skipHit{line: r.Line, note: r.Note, approx: p.approx}
		return
	}
	if r.Loss.NonFinite() && a.loss.earlier(it) {
		a.loss = &hit{iter: it, kind: r.Loss.Kind, lossKind: r.Loss.Kind, line: r.Line}
	}
	if r.GradNorm.NonFinite() && a.grad.earlier(it) {
		a.grad = &hit{iter: it, kind: r.GradNorm.Kind, lossKind: r.Loss.Kind, line: r.Line}
	}
	if len(r.NonFinite) > 0 && a.params.earlier(it) {
		a.params = &hit{iter: it, lossKind: r.Loss.Kind, line: r.Line, names: r.NonFinite}
	}
	if r.LossLeftOut && a.leftOut.earlier(it) {
		a.leftOut = &hit{iter: it, kind: Absent, lossKind: Absent, line: r.Line}
	}
	if !r.Loss.NonFinite() && !r.GradNorm.NonFinite() && !r.LossLeftOut &&
		(r.Loss.Kind == Finite || r.GradNorm.Kind == Finite) {
		a.finite.add(it)
	}
}

// Persistent skips: a run of skipped iterations this long after the rank
// printed a finite step, or this long and reaching its last printed
// iteration, is not an overflow the scaler recovers from but a value that
// stays non-finite (the scale only keeps falling). A longer run from the
// start of the log is one too (the initial scale search takes a few).
const (
	persistentRun      = 3
	persistentRunAtEnd = 2
	persistentFromZero = 8
)

// persistent returns the first iteration of the rank's first run of
// persistent skips, as a grad-norm hit of kind +Inf, or nil.
func (a *rankAgg) persistent() *hit {
	if len(a.skips) == 0 {
		return nil
	}
	its := make([]int, 0, len(a.skips))
	for it := range a.skips {
		its = append(its, it)
	}
	slices.Sort(its)
	last := its[len(its)-1]
	if m, ok := a.finite.max(); ok && m > last {
		last = m
	}
	for _, h := range []*hit{a.loss, a.grad, a.params} {
		if h != nil && h.iter > last {
			last = h.iter
		}
	}
	firstFinite, trained := a.finite.min()
	for i := 0; i < len(its); {
		j := i
		for j+1 < len(its) && its[j+1] == its[j]+1 {
			j++
		}
		start, n := its[i], j-i+1
		after := trained && firstFinite < start
		if (after && n >= persistentRun) || (after && n >= persistentRunAtEnd && its[j] == last) || n >= persistentFromZero {
			s := a.skips[start]
			return &hit{iter: start, kind: PosInf, lossKind: Absent, line: s.line}
		}
		i = j + 1
	}
	return nil
}

// first returns the earlier of the rank's first non-finite loss and grad
// norm, the loss when both are at the same iteration.
func (a *rankAgg) first() (*hit, string) {
	switch {
	case a.loss == nil && a.grad == nil:
		return nil, ""
	case a.grad == nil || (a.loss != nil && a.loss.iter <= a.grad.iter):
		return a.loss, metricLoss
	}
	return a.grad, metricGradNorm
}

// merge folds b, another part of the same rank in the same file, into a.
func (a *rankAgg) merge(b *rankAgg) {
	pick := func(x, y *hit) *hit {
		if y != nil && x.earlier(y.iter) {
			return y
		}
		return x
	}
	a.loss = pick(a.loss, b.loss)
	a.grad = pick(a.grad, b.grad)
	a.params = pick(a.params, b.params)
	a.leftOut = pick(a.leftOut, b.leftOut)
	a.finite.union(&b.finite)
	for it, s := range b.skips {
		if a.skips == nil {
			a.skips = map[int]*skipHit{}
		}
		if _, ok := a.skips[it]; !ok {
			a.skips[it] = s
		}
	}
	a.skipExtra += b.skipExtra
	a.climb.merge(&b.climb)
	a.nanIters = min(a.nanIters+b.nanIters, maxCount)
	a.nanPrinted = a.nanPrinted || b.nanPrinted
}
