package reference

import (
	"fmt"
	"slices"
)

// DiffOptions chooses what Diff leaves out.
type DiffOptions struct {
	// IgnorePhase leaves out origin.phase and steps[].anomalous[].phase.
	IgnorePhase bool
}

// Diff lists one line per differing field, "field: want X, got Y"; nil when
// the verdicts agree.
func Diff(want, got *Verdict) []string { return DiffWith(want, got, DiffOptions{}) }

// DiffWith is Diff with options.
func DiffWith(want, got *Verdict, o DiffOptions) []string {
	d := &differ{o: o}
	switch {
	case want == nil && got == nil:
		return nil
	case want == nil || got == nil:
		return []string{fmt.Sprintf("verdict: want %v, got %v", want, got)}
	}
	d.eq("anomaly", want.Anomaly, got.Anomaly)
	d.origin(want.Origin, got.Origin)
	d.opRef("first_nan", want.FirstNaN, got.FirstNaN)
	d.hopPtr("carrier", want.Carrier, got.Carrier)
	d.hops("spread", want.Spread, got.Spread)
	d.recovered(want.Recovered, got.Recovered)
	d.steps(want.Steps, got.Steps)
	d.ints("scanned.steps", want.Scanned.Steps, got.Scanned.Steps)
	d.intPtr("scanned.stopped_at", want.Scanned.StoppedAt, got.Scanned.StoppedAt)
	d.intPtr("scanned.checked_next", want.Scanned.CheckedNext, got.Scanned.CheckedNext)
	d.ints("scanned.not_scanned", want.Scanned.NotScanned, got.Scanned.NotScanned)
	d.eq("complete", want.Complete, got.Complete)
	d.strs("unread", unreadLines(want.Unread), unreadLines(got.Unread))
	d.ints("not_dumped", want.NotDumped, got.NotDumped)
	if want.Ahead != nil && got.Ahead != nil {
		d.strs("ahead", aheadLines(want.Ahead), aheadLines(got.Ahead))
	}
	return d.lines
}

// aheadLines are warnings one per line, "Torch.exp.0.forward
// input_args.0 max ranks [0 1] step 4 left 0.124", in their order.
func aheadLines(as []Ahead) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s %s %s ranks %v step %d left %.3f", a.Op, a.Tensor, a.Stat, a.Ranks, a.Step, a.StepsLeft))
	}
	return out
}

// unreadLines are unread rank-steps one per rank, "step 5 rank 2:
// damaged", sorted.
func unreadLines(rows []UnreadRanks) []string {
	var out []string
	for _, u := range rows {
		for _, r := range u.Ranks {
			out = append(out, fmt.Sprintf("step %d rank %d: %s", u.Step, r, u.Reason))
		}
	}
	slices.Sort(out)
	return out
}

// strs compares two sorted lists of lines: one line per line missing or
// extra.
func (d *differ) strs(field string, want, got []string) {
	for _, w := range want {
		if !slices.Contains(got, w) {
			d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got none", field, w))
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			d.lines = append(d.lines, fmt.Sprintf("%s: want none, got %s", field, g))
		}
	}
}

type differ struct {
	o     DiffOptions
	lines []string
}

func (d *differ) eq(field string, want, got any) {
	if want != got {
		d.lines = append(d.lines, fmt.Sprintf("%s: want %v, got %v", field, show(want), show(got)))
	}
}

func show(v any) any {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return v
}

func (d *differ) ints(field string, want, got []int) {
	if !slices.Equal(want, got) { // nil and empty are equal
		d.lines = append(d.lines, fmt.Sprintf("%s: want %v, got %v", field, fmtInts(want), fmtInts(got)))
	}
}

func fmtInts(xs []int) string {
	if len(xs) == 0 {
		return "[]"
	}
	return fmt.Sprint(xs)
}

func (d *differ) intPtr(field string, want, got *int) {
	switch {
	case want == nil && got == nil:
	case want == nil || got == nil:
		d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got %s", field, fmtIntPtr(want), fmtIntPtr(got)))
	default:
		d.eq(field, *want, *got)
	}
}

func fmtIntPtr(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func (d *differ) origin(want, got *Origin) {
	switch {
	case want == nil && got == nil:
		return
	case want == nil || got == nil:
		d.lines = append(d.lines, fmt.Sprintf("origin: want %s, got %s", fmtOrigin(want), fmtOrigin(got)))
		return
	}
	d.eq("origin.step", want.Step, got.Step)
	d.ints("origin.ranks", want.Ranks, got.Ranks)
	d.eq("origin.op", want.Op, got.Op)
	d.eq("origin.stage", want.Stage, got.Stage)
	if !d.o.IgnorePhase {
		d.eq("origin.phase", want.Phase, got.Phase)
	}
	d.eq("origin.kind", want.Kind, got.Kind)
	d.eq("origin.tie", want.Tie, got.Tie)
	d.eq("origin.captured", want.Captured, got.Captured)
	d.eq("origin.collective", want.Collective, got.Collective)
	d.eq("origin.unread", want.Unread, got.Unread)
	d.eq("origin.confidence", want.Confidence, got.Confidence)
}

func fmtOrigin(o *Origin) string {
	if o == nil {
		return "null"
	}
	return fmt.Sprintf("{step %d ranks %v op %q}", o.Step, o.Ranks, o.Op)
}

func (d *differ) opRef(field string, want, got *OpRef) {
	switch {
	case want == nil && got == nil:
	case want == nil || got == nil || *want != *got:
		d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got %s", field, fmtOpRef(want), fmtOpRef(got)))
	}
}

func fmtOpRef(r *OpRef) string {
	if r == nil {
		return "null"
	}
	return fmt.Sprintf("{step %d rank %d op %q}", r.Step, r.Rank, r.Op)
}

func fmtHop(h *Hop) string {
	if h == nil {
		return "null"
	}
	return fmt.Sprintf("{step %d op %q from %s to %s}", h.Step, h.Op, fmtInts(h.FromRanks), fmtInts(h.ToRanks))
}

func hopEqual(a, b Hop) bool {
	return a.Step == b.Step && a.Op == b.Op && slices.Equal(a.FromRanks, b.FromRanks) && slices.Equal(a.ToRanks, b.ToRanks)
}

func (d *differ) hopPtr(field string, want, got *Hop) {
	switch {
	case want == nil && got == nil:
	case want == nil || got == nil || !hopEqual(*want, *got):
		d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got %s", field, fmtHop(want), fmtHop(got)))
	}
}

// hops compares two hop lists as sets in canonical order: one line per hop
// missing or extra.
func (d *differ) hops(field string, want, got []Hop) {
	w, g := slices.Clone(want), slices.Clone(got)
	sortHops(w)
	sortHops(g)
	for _, h := range w {
		if !slices.ContainsFunc(g, func(x Hop) bool { return hopEqual(x, h) }) {
			d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got none", field, fmtHop(&h)))
		}
	}
	for _, h := range g {
		if !slices.ContainsFunc(w, func(x Hop) bool { return hopEqual(x, h) }) {
			d.lines = append(d.lines, fmt.Sprintf("%s: want none, got %s", field, fmtHop(&h)))
		}
	}
}

func (d *differ) recovered(want, got []Recovered) {
	for i := 0; i < max(len(want), len(got)); i++ {
		f := fmt.Sprintf("recovered[%d]", i)
		switch {
		case i >= len(got):
			d.lines = append(d.lines, fmt.Sprintf("%s: want step %d, got none", f, want[i].Step))
			continue
		case i >= len(want):
			d.lines = append(d.lines, fmt.Sprintf("%s: want none, got step %d", f, got[i].Step))
			continue
		}
		w, g := want[i], got[i]
		d.eq(f+".step", w.Step, g.Step)
		d.ints(f+".ranks", w.Ranks, g.Ranks)
		d.eq(f+".op", w.Op, g.Op)
		d.eq(f+".stage", w.Stage, g.Stage)
		d.eq(f+".kind", w.Kind, g.Kind)
		d.eq(f+".next_step", w.NextStep, g.NextStep)
	}
}

func (d *differ) steps(want, got []Step) {
	gotBy := map[int]Step{}
	for _, s := range got {
		gotBy[s.Step] = s
	}
	wantBy := map[int]bool{}
	for _, w := range want {
		wantBy[w.Step] = true
		f := fmt.Sprintf("steps[%d]", w.Step)
		g, ok := gotBy[w.Step]
		if !ok {
			d.lines = append(d.lines, fmt.Sprintf("%s: want %s, got none", f, w.Status))
			continue
		}
		d.eq(f+".status", w.Status, g.Status)
		d.rows(f, w.Anomalous, g.Anomalous)
	}
	for _, g := range got {
		if !wantBy[g.Step] {
			d.lines = append(d.lines, fmt.Sprintf("steps[%d]: want none, got %s", g.Step, g.Status))
		}
	}
}

func (d *differ) rows(f string, want, got []RankRole) {
	gotBy := map[int]RankRole{}
	for _, r := range got {
		gotBy[r.Rank] = r
	}
	wantBy := map[int]bool{}
	for _, w := range want {
		wantBy[w.Rank] = true
		rf := fmt.Sprintf("%s.rank[%d]", f, w.Rank)
		g, ok := gotBy[w.Rank]
		if !ok {
			d.lines = append(d.lines, fmt.Sprintf("%s: want %s %s, got none", rf, w.Role, w.Op))
			continue
		}
		d.eq(rf+".role", w.Role, g.Role)
		d.eq(rf+".kind", w.Kind, g.Kind)
		d.eq(rf+".op", w.Op, g.Op)
		d.eq(rf+".stage", w.Stage, g.Stage)
		if !d.o.IgnorePhase {
			d.eq(rf+".phase", w.Phase, g.Phase)
		}
	}
	for _, g := range got {
		if !wantBy[g.Rank] {
			d.lines = append(d.lines, fmt.Sprintf("%s.rank[%d]: want none, got %s %s", f, g.Rank, g.Role, g.Op))
		}
	}
}
