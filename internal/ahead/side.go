package ahead

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nanhunt/nanhunt/internal/climb"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/verdict"
)

// The sources of a warning, as verdict.Ahead.Source names them.
const (
	SourceDump    = "dump"
	SourceMonitor = "monitor"
	SourceLog     = "log"
)

// MonitorJudge is the rule for a monitored module's max or min (the
// dump's, Judge), its last points oldest first: the limit is the dtype's
// largest value; a row without a dtype is judged against float16's, the
// smallest, and FromMonitor decides what it may say of it.
func MonitorJudge(dtype, _ string, window []climb.Point) bool {
	limit, ok := policy.DtypeMax(dtype)
	if dtype == "" {
		limit, ok = policy.DtypeMax(policy.AheadAssumedDtype)
	}
	if !ok {
		return false
	}
	_, warn := Judge(points(window), limit, false)
	return warn
}

// points converts a window of a followed series.
func points(w []climb.Point) []verdict.Point {
	out := make([]verdict.Point, len(w))
	for i, p := range w {
		out[i] = verdict.Point{Step: p.Step, Value: p.Value}
	}
	return out
}

// Cutoff is the first step a source shows a non-finite value at: a
// warning is one before it. Nil when the source shows none.
type Cutoff = *int

// before reports whether step comes before the cutoff.
func before(step int, cut Cutoff) bool { return cut == nil || step < *cut }

// recovered reports whether a series that fired with window w fell back,
// before the cutoff, to the first of the rule's last points or below (in
// magnitude): a climb that came back down, such as a spike of two steps.
func recovered(w, after []climb.Point, cut Cutoff) bool {
	if len(w) < policy.AheadPoints {
		return false
	}
	start := math.Abs(w[len(w)-policy.AheadPoints].Value)
	for _, p := range after {
		if before(p.Step, cut) && math.Abs(p.Value) <= start {
			return true
		}
	}
	return false
}

// shown are the last policy.AheadShown points of a window.
func shown(w []climb.Point) []verdict.Point {
	return points(w[max(0, len(w)-policy.AheadShown):])
}

// FromMonitor turns the monitor's series that fired (MonitorJudge) into
// warnings: those that fired before cut (the monitor's first non-finite
// step) and did not fall back. dtypes are the dtypes the monitor
// recorded: a series whose rows recorded none is judged in float16 when
// every recorded dtype is float16; otherwise it gives no warning but a
// note saying why (its climb would warn in float16).
func FromMonitor(series []climb.Series, cut Cutoff, dtypes []string) (warnings []verdict.Ahead, notes []string) {
	assumed := len(dtypes) == 1 && dtypes[0] == policy.AheadAssumedDtype
	var cands []verdict.Ahead
	for _, s := range series {
		w := s.Fired
		if len(w) == 0 || !before(w[len(w)-1].Step, cut) || recovered(w, s.After, cut) {
			continue
		}
		pts := shown(w)
		dtype, reason := s.Dtype, ""
		switch {
		case dtype != "":
			reason = policy.DtypeLimitReason(dtype)
		case assumed:
			dtype = policy.AheadAssumedDtype
			reason = "no dtype in its rows; every row that has one is float16, which holds at most 65504"
		default:
			notes = append(notes, fmt.Sprintf("The monitor's %s %s %s climbs %s on rank %d, but its rows record no dtype (a TrainerMon before 2025-02, or monitor_v2): without its limit no warning is given. If it is float16 it overflows soon; record the dtype (msprobe's TrainerMon adds it to every row) or dump that step.",
				s.Op, s.Tensor, s.Stat, verdict.Ahead{Series: pts}.SeriesText(), s.Rank))
			continue
		}
		limit, _ := policy.DtypeMax(dtype)
		j, ok := Judge(pts, limit, false)
		if !ok {
			continue
		}
		cands = append(cands, verdict.Ahead{Source: SourceMonitor, Op: s.Op, Ranks: rankList(s.Rank), Tensor: s.Tensor, Stat: s.Stat,
			Dtype: dtype, Limit: limit, LimitReason: reason, Step: pts[len(pts)-1].Step, Series: pts, Growth: j.Growth,
			StepsLeft: j.StepsLeft, Module: []string{}})
	}
	return merge(cands), notes
}

func rankList(r int) []int {
	if r < 0 {
		return []int{}
	}
	return []int{r}
}

// merge joins the warnings of each source, op, tensor and statistic over
// the ranks (the series shown is that of the rank that warned first, then
// with the fewest steps left, then the lowest), keeps one statistic per
// tensor (the one that warned first, then the more urgent, max on a tie),
// writes their text and sorts them.
func merge(cands []verdict.Ahead) []verdict.Ahead {
	type key struct{ src, op, tensor, stat string }
	best := map[key]*verdict.Ahead{}
	ranks := map[key][]int{}
	for i := range cands {
		c := &cands[i]
		k := key{c.Source, c.Op, c.Tensor, c.Stat}
		ranks[k] = append(ranks[k], c.Ranks...)
		if b := best[k]; b == nil || firstOf(c, b) {
			best[k] = c
		}
	}
	perTensor := map[[3]string]*verdict.Ahead{}
	for k, b := range best {
		b.Ranks = append([]int{}, slices.Compact(slices.Sorted(slices.Values(ranks[k])))...)
		t := [3]string{k.src, k.op, k.tensor}
		if o := perTensor[t]; o == nil || b.Step < o.Step || (b.Step == o.Step && (b.StepsLeft < o.StepsLeft || (b.StepsLeft == o.StepsLeft && b.Stat < o.Stat))) {
			perTensor[t] = b
		}
	}
	out := make([]verdict.Ahead, 0, len(perTensor))
	for _, b := range perTensor {
		b.Text = Text(*b)
		out = append(out, *b)
	}
	Sort(out)
	return out
}

// firstOf reports whether a's series is shown rather than b's: the
// earlier warning, then fewer steps left, then the lower rank.
func firstOf(a, b *verdict.Ahead) bool {
	if a.Step != b.Step {
		return a.Step < b.Step
	}
	if a.StepsLeft != b.StepsLeft {
		return a.StepsLeft < b.StepsLeft
	}
	return cmp.Less(firstRank(a.Ranks), firstRank(b.Ranks))
}

func firstRank(rs []int) int {
	if len(rs) == 0 {
		return -1
	}
	return rs[0]
}

// Merge adds warnings from the log and the monitor to the dump's and
// sorts them all, most urgent first.
func Merge(dump []verdict.Ahead, side ...[]verdict.Ahead) []verdict.Ahead {
	out := slices.Clone(dump)
	if out == nil {
		out = []verdict.Ahead{}
	}
	for _, s := range side {
		out = append(out, s...)
	}
	Sort(out)
	return out
}

// sideWhat is how a warning from the log or the monitor names its series
// in its text: "the monitor's feat.output (actv) max", "the log's grad
// norm".
func sideWhat(a verdict.Ahead) string {
	if a.Source == SourceLog {
		return "the log's " + strings.ReplaceAll(a.Stat, "_", " ")
	}
	return fmt.Sprintf("the monitor's %s (%s) %s", a.Op, a.Tensor, a.Stat)
}
