package ahead

import (
	"fmt"
	"math"
	"slices"

	"github.com/nanhunt/nanhunt/internal/climb"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// The log's metrics, as climb.Series.Stat names them.
const (
	StatGradNorm  = "grad_norm"
	StatLossScale = "loss_scale"
)

// LogJudge is the rule for a training log's series (StatGradNorm or
// StatLossScale), its last points oldest first: JudgeGradNorm or
// JudgeLossScale.
func LogJudge(stat string, window []climb.Point) bool {
	var ok bool
	switch stat {
	case StatGradNorm:
		_, _, ok = JudgeGradNorm(points(window))
	case StatLossScale:
		_, ok = JudgeLossScale(points(window))
	}
	return ok
}

// JudgeGradNorm: from the policy.AheadGradFrom-th logged point on, the
// last policy.AheadPoints each rise by at least policy.AheadRise a step
// and the grad norm explodes: at least policy.AheadGradPace a step over
// them, or past policy.AheadGradMedian times the median of the points
// before them (policy.AheadGradHistory of them at least). The limit is
// float32's largest value (the norm is accumulated in float32); why says
// how it explodes.
func JudgeGradNorm(pts []verdict.Point) (j Judgement, why string, ok bool) {
	n := len(pts)
	if n < max(policy.AheadGradFrom, policy.AheadPoints) {
		return Judgement{}, "", false
	}
	tail := pts[n-policy.AheadPoints:]
	for i := 1; i < len(tail); i++ {
		gap := float64(tail[i].Step - tail[i-1].Step)
		if gap <= 0 || !rises(tail[i-1].Value, tail[i].Value, gap, 0, false) {
			return Judgement{}, "", false
		}
	}
	a, b := tail[0].Value, tail[len(tail)-1].Value
	j.Growth = math.Pow(b/a, 1/float64(tail[len(tail)-1].Step-tail[0].Step))
	var med float64
	if hist := pts[:n-policy.AheadPoints]; len(hist) >= policy.AheadGradHistory {
		med = median(hist)
	}
	switch {
	case j.Growth >= policy.AheadGradPace:
		why = fmt.Sprintf("exploding at ×%.2f a step", j.Growth)
	case med > 0 && b >= policy.AheadGradMedian*med:
		why = fmt.Sprintf("exploding: %.0f× its median of %s before", b/med, verdict.FormatValue(med))
	default:
		return Judgement{}, "", false
	}
	j.StepsLeft = math.Log(math.MaxFloat32/b) / math.Log(j.Growth)
	return j, why, true
}

func median(pts []verdict.Point) float64 {
	v := make([]float64, len(pts))
	for i, p := range pts {
		v[i] = p.Value
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// JudgeLossScale: the loss scale fell at each of the last
// policy.AheadScaleFalls logged steps, or at each of the last
// policy.AheadScaleFalls-1 and reaches policy.AheadScaleFloor within
// policy.AheadHorizon steps at that pace. Growth is the factor per step
// over the falling points (0.5: halved every step), StepsLeft the steps
// to the floor at that pace.
func JudgeLossScale(pts []verdict.Point) (Judgement, bool) {
	falls := 0
	for i := len(pts) - 1; i > 0 && pts[i].Value < pts[i-1].Value && pts[i].Step > pts[i-1].Step && pts[i].Value > 0; i-- {
		falls++
	}
	if falls < policy.AheadScaleFalls-1 {
		return Judgement{}, false
	}
	k := min(falls, policy.AheadScaleFalls)
	first, last := pts[len(pts)-1-k], pts[len(pts)-1]
	j := Judgement{Growth: math.Pow(last.Value/first.Value, 1/float64(last.Step-first.Step))}
	j.StepsLeft = max(0, math.Log(last.Value/policy.AheadScaleFloor)/math.Log(1/j.Growth))
	return j, falls >= policy.AheadScaleFalls || j.StepsLeft <= policy.AheadHorizon
}

// FromLog turns the log's series that fired (LogJudge) into warnings:
// those that fired before their cutoff (gradCut for the grad norm: the
// log's first non-finite value; scaleCut for the loss scale: its first
// non-finite loss) and did not come back (a grad norm that fell back
// below where its climb started, a loss scale that grew back above it).
func FromLog(series []climb.Series, gradCut, scaleCut Cutoff) []verdict.Ahead {
	var cands []verdict.Ahead
	for _, s := range series {
		w := s.Fired
		if len(w) == 0 {
			continue
		}
		pts := points(w)
		a := verdict.Ahead{Source: SourceLog, Op: s.Op, Ranks: rankList(s.Rank), Stat: s.Stat, Step: w[len(w)-1].Step, Module: []string{}}
		switch s.Stat {
		case StatGradNorm:
			j, why, ok := JudgeGradNorm(pts)
			if !ok || !before(a.Step, gradCut) || recovered(w, s.After, gradCut) {
				continue
			}
			a.Limit, a.Growth, a.StepsLeft = math.MaxFloat32, j.Growth, j.StepsLeft
			a.LimitReason = why + "; the norm overflows float32 past 3.403e+38"
		case StatLossScale:
			j, ok := JudgeLossScale(pts)
			if !ok || !before(a.Step, scaleCut) || grewBack(w, s.After, scaleCut) {
				continue
			}
			a.Limit, a.Growth, a.StepsLeft = policy.AheadScaleFloor, j.Growth, j.StepsLeft
			a.LimitReason = "the loss scaler halves its scale at every overflow of the scaled float16 gradients; its floor is 1 (min_loss_scale of Megatron-LM and DeepSpeed by default), where every overflow is a step lost"
		default:
			continue
		}
		a.Series = shown(w)
		cands = append(cands, a)
	}
	return merge(cands)
}

// grewBack reports whether a loss scale grew back, before the cutoff, to
// where its falls started: the scaler's normal cycle.
func grewBack(w, after []climb.Point, cut Cutoff) bool {
	falls := 0
	for i := len(w) - 1; i > 0 && w[i].Value < w[i-1].Value; i-- {
		falls++
	}
	start := w[len(w)-1-falls].Value
	for _, p := range after {
		if before(p.Step, cut) && p.Value >= start {
			return true
		}
	}
	return false
}
