package ahead

import (
	"math"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// Judgement is a series judged at its last point.
type Judgement struct {
	Growth    float64 // per step: a factor, or an increment when linear
	StepsLeft float64 // steps until the limit at that pace
}

// Judge applies the rule (README "Heading for overflow") to a series,
// oldest first, whose points are the series' values at consecutive dumped
// steps: the last policy.AheadPoints must each rise by at least
// policy.AheadRise a step (an exp input by policy.AheadExpRise of its
// limit a step), the last must be watched (Value.Watched) and either reach
// the limit within policy.AheadHorizon steps at the pace of those points
// or lie within policy.AheadClose of it (an exp input within
// policy.AheadExpClose).
func Judge(points []verdict.Point, limit float64, linear bool) (Judgement, bool) {
	n := len(points)
	if n < policy.AheadPoints || limit <= 0 {
		return Judgement{}, false
	}
	tail := points[n-policy.AheadPoints:]
	mag := func(p verdict.Point) float64 {
		if linear {
			return p.Value
		}
		return math.Abs(p.Value)
	}
	for i := 1; i < len(tail); i++ {
		gap := float64(tail[i].Step - tail[i-1].Step)
		a, b := mag(tail[i-1]), mag(tail[i])
		if gap <= 0 || !rises(a, b, gap, limit, linear) {
			return Judgement{}, false
		}
	}
	first, last := tail[0], tail[len(tail)-1]
	span := float64(last.Step - first.Step)
	a, b := mag(first), mag(last)
	if b >= limit {
		return Judgement{}, false
	}
	var j Judgement
	if linear {
		if b < limit*policy.AheadExpNear {
			return Judgement{}, false
		}
		j.Growth = (b - a) / span
		j.StepsLeft = (limit - b) / j.Growth
		return j, j.StepsLeft <= policy.AheadHorizon || b >= limit*policy.AheadExpClose
	}
	if b < limit/policy.AheadNear {
		return Judgement{}, false
	}
	j.Growth = math.Pow(b/a, 1/span)
	j.StepsLeft = math.Log(limit/b) / math.Log(j.Growth)
	return j, j.StepsLeft <= policy.AheadHorizon || b >= limit/policy.AheadClose
}

// rises reports whether b, gap steps after a, is at least the rule's
// rise above it.
func rises(a, b, gap, limit float64, linear bool) bool {
	if linear {
		return b-a >= policy.AheadExpRise*limit*gap
	}
	return a > 0 && b >= a*math.Pow(policy.AheadRise, gap)
}
