package ahead

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// Series is one rank's values of one key at consecutive dumped steps,
// oldest first.
type Series struct {
	Value  // the last value, with its limit
	Rank   int
	Points []verdict.Point
}

// Build makes one rank's series: for each key watched at the last of
// steps (its dumped steps, oldest first), its values at the steps before,
// back to the first step that lacks it or policy.AheadShown points.
// values holds each step's values (at the last step, those Observe gave;
// before it, at least those of the keys watched at the last).
func Build(rank int, steps []int, values map[int][]Value) []Series {
	if len(steps) == 0 {
		return nil
	}
	last := steps[len(steps)-1]
	byStep := make(map[int]map[Key]float64, len(steps))
	for _, s := range steps[:len(steps)-1] {
		m := map[Key]float64{}
		for _, v := range values[s] {
			m[v.Key] = v.Value
		}
		byStep[s] = m
	}
	var out []Series
	for _, v := range values[last] {
		if !v.Watched() {
			continue
		}
		pts := []verdict.Point{{Step: last, Value: v.Value}}
		for i := len(steps) - 2; i >= 0 && len(pts) < policy.AheadShown; i-- {
			x, ok := byStep[steps[i]][v.Key]
			if !ok {
				break
			}
			pts = append(pts, verdict.Point{Step: steps[i], Value: x})
		}
		slices.Reverse(pts)
		out = append(out, Series{Value: v, Rank: rank, Points: pts})
	}
	return out
}

// Site is where a call was made: its module chain and the user's line.
type Site struct {
	Module []string
	Code   *verdict.Frame
}

// Warnings judges every series and merges those that qualify into the
// verdict's list: one warning per call, tensor and statistic with the
// ranks that qualify (its series that of the rank closest to the limit),
// one statistic per tensor (the more urgent), most urgent first. site
// gives a call's module chain and code line on a rank (nil: none).
func Warnings(series []Series, site func(rank int, op string) Site) []verdict.Ahead {
	type judged struct {
		Series
		j Judgement
	}
	best := map[Key]*judged{}
	ranks := map[Key][]int{}
	for _, s := range series {
		j, ok := Judge(s.Points, s.Limit, s.Linear)
		if !ok {
			continue
		}
		ranks[s.Key] = append(ranks[s.Key], s.Rank)
		if b := best[s.Key]; b == nil || urgent(j, s.Rank, b.j, b.Rank) {
			best[s.Key] = &judged{s, j}
		}
	}
	perTensor := map[[2]string]*judged{}
	for _, b := range best {
		t := [2]string{b.Op, b.Tensor}
		if o := perTensor[t]; o == nil || urgent(b.j, b.Rank, o.j, o.Rank) || (b.j == o.j && b.Stat < o.Stat) {
			perTensor[t] = b
		}
	}
	out := make([]verdict.Ahead, 0, len(perTensor))
	for _, b := range perTensor {
		rs := slices.Sorted(slices.Values(ranks[b.Key]))
		a := verdict.Ahead{
			Source: "dump", Op: b.Op, Ranks: slices.Compact(rs), Tensor: b.Tensor, Stat: b.Stat, Dtype: b.Dtype,
			Limit: b.Limit, LimitReason: b.LimitReason, Step: b.Points[len(b.Points)-1].Step,
			Series: b.Points, Growth: b.j.Growth, Linear: b.Linear, StepsLeft: b.j.StepsLeft, Module: []string{},
		}
		if site != nil {
			st := site(b.Rank, b.Op)
			if st.Module != nil {
				a.Module = st.Module
			}
			a.Code = st.Code
		}
		a.Text = Text(a)
		out = append(out, a)
	}
	Sort(out)
	return out
}

// urgent reports whether judgement a (on rank ra) comes before b (on rb).
func urgent(a Judgement, ra int, b Judgement, rb int) bool {
	if a.StepsLeft != b.StepsLeft {
		return a.StepsLeft < b.StepsLeft
	}
	return ra < rb
}

// Sort orders warnings most urgent first: fewest steps left, then by
// call, tensor and statistic.
func Sort(as []verdict.Ahead) {
	slices.SortFunc(as, func(a, b verdict.Ahead) int {
		return cmp.Or(cmp.Compare(a.StepsLeft, b.StepsLeft), cmp.Compare(a.Source, b.Source), cmp.Compare(a.Op, b.Op),
			cmp.Compare(a.Tensor, b.Tensor), cmp.Compare(a.Stat, b.Stat))
	})
}

// Text is a warning in one line: "Torch.exp.1.forward input_args.0 max
// 4.4 → 5.5 → 10.7 (steps 3-5): exp stores its result in float16, which
// overflows past ln(65504) = 11.09; at +3.15 a step it gets there within
// the next step". A warning from the log or the monitor names its source:
// "the monitor's feat.output (actv) max 1500 → …".
func Text(a verdict.Ahead) string {
	what := strings.TrimSpace(a.Op + " " + a.Tensor + " " + a.Stat)
	if a.Source == SourceLog || a.Source == SourceMonitor {
		what = sideWhat(a)
	}
	return fmt.Sprintf("%s %s: %s; at %s it gets there %s", what, a.SeriesText(), a.LimitReason, a.PaceText(), a.WhenText())
}
