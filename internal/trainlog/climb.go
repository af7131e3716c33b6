package trainlog

import "github.com/nanhunt/nanhunt/internal/climb"

// The series a log's records are followed in, as climb.Series.Stat names
// them.
const (
	StatGradNorm  = "grad_norm"
	StatLossScale = "loss_scale"
)

// AheadJudge tells whether a rank's series of a metric (StatGradNorm or
// StatLossScale), its last points oldest first in the file's iteration
// numbering, warns at its last point. Package ahead holds the rule; the
// reader only follows the series.
type AheadJudge func(stat string, window []climb.Point) bool

// rankClimbs are the series of one rank in one file.
type rankClimbs struct {
	grad, scale climb.Track
	// trained: the rank printed an iteration the loss scaler did not skip.
	// Before it, a falling scale is the scaler searching its first value.
	trained bool
}

// follow adds a record's grad norm and loss scale to their series. A
// grad norm is followed at the iterations that were not skipped (a
// skipped one prints the overflow's, or none); a non-finite one ends its
// series. The loss scale is followed from the rank's first iteration that
// was not skipped (or a DeepSpeed progress line counting one); before an overflow line's reduced scale comes the one
// it attempted, held up to the iteration before, so that overflows far
// apart do not read as falls in a row.
func (a *rankAgg) follow(p *pending) {
	if a.judge == nil {
		return
	}
	r := &p.rec
	it := r.Iteration
	c := &a.climb
	c.trained = c.trained || p.trained
	if !r.Skipped {
		c.trained = true
		switch {
		case r.GradNorm.Kind == Finite:
			c.grad.Add(climb.Point{Step: it, Value: r.GradNorm.V}, a.judgeOf(StatGradNorm))
		case r.GradNorm.NonFinite():
			c.grad.Stop(it)
		}
	}
	if !c.trained {
		return
	}
	switch r.LossScale.Kind {
	case Finite:
		if last, ok := c.scale.Last(); p.scaleFrom.Kind == Finite && (!ok || last.Step < it-1) {
			c.scale.Add(climb.Point{Step: it - 1, Value: p.scaleFrom.V}, a.judgeOf(StatLossScale))
		}
		c.scale.Add(climb.Point{Step: it, Value: r.LossScale.V}, a.judgeOf(StatLossScale))
	case Absent:
	default:
		c.scale.Stop(it)
	}
}

func (a *rankAgg) judgeOf(stat string) climb.Judge {
	return func(w []climb.Point) bool { return a.judge(stat, w) }
}

// shiftClimbs turns the series' iterations into steps.
func (a *rankAgg) shiftClimbs(off int) {
	a.climb.grad.Shift(off)
	a.climb.scale.Shift(off)
}

// merge takes b's series where a has none (records of a rank read before
// the file named its rank).
func (c *rankClimbs) merge(b *rankClimbs) {
	if c.grad.Count == 0 {
		c.grad = b.grad
	}
	if c.scale.Count == 0 {
		c.scale = b.scale
	}
	c.trained = c.trained || b.trained
}

// climbs are the rank's series that fired, in steps.
func (a *rankAgg) climbs() []climb.Series {
	var out []climb.Series
	for _, s := range []struct {
		stat string
		t    *climb.Track
	}{{StatGradNorm, &a.climb.grad}, {StatLossScale, &a.climb.scale}} {
		if s.t.Fired != nil {
			out = append(out, climb.Series{Rank: a.rank, Op: s.stat, Stat: s.stat, Track: *s.t})
		}
	}
	return out
}

// Climbs are the grad-norm and loss-scale series of each rank and file
// that a warning before the NaN fired on (Options.Ahead), in steps; nil
// when Read was given no judge.
func (l *Log) Climbs() []climb.Series { return l.climbs }
