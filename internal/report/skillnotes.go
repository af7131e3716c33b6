package report

import (
	"fmt"
	"strings"

	"github.com/nanhunt/nanhunt/internal/intranges"
	"github.com/nanhunt/nanhunt/verdict"
)

// skillNotes says in words what the skill's two shapes cannot hold: how
// sure the origin is, and the ranks that met the anomaly outside them.
// rank is the rank single_rank_trace follows.
func skillNotes(v *verdict.Verdict, rank int) []string {
	o := v.Origin
	var notes []string
	add := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	switch {
	case o.Unread:
		add("only ranks that received it were read: ranks %s sent it, but their dumps could not be read; single_rank_trace is rank %d's receive, %s",
			intranges.Format(o.Ranks), rank, o.Op)
	case o.Collective:
		add("%s made it from clean inputs on ranks %s at step %d: the collective itself overflowed (in cross_rank_analysis with no source rank)",
			o.Op, intranges.Format(o.Ranks), o.Step)
	case !o.Captured:
		n := fmt.Sprintf("the origin is not in the dump: %s is the first call on rank %d that shows it at step %d, and its inputs already hold it", o.Op, rank, o.Step)
		if iv := o.Interval; iv != nil && iv.After != nil {
			n += fmt.Sprintf("; the last call before it with finite outputs is %s", iv.After.Op)
		}
		notes = append(notes, n)
	default:
		add("%s on rank %d made %s from clean inputs at step %d (%s)", o.Op, rank, kindWord(o.Kind), o.Step, o.Stage)
	}
	if !o.Captured && !o.Collective && o.Stage == "optimizer" {
		add("the weights came in non-finite: the update at the end of step %d wrote them (nanhunt plan dumps that step)", o.Step-1)
	}
	if o.Tie {
		add("ranks %s made it independently (a tie): single_rank_trace follows rank %d; every source is in nanhunt trace --format json, candidates",
			intranges.Format(o.Ranks), rank)
	}
	if f := v.FirstNaN; f != nil {
		add("the Inf became NaN at %s (step %d, rank %d)", f.Op, f.Step, f.Rank)
	}
	switch c := v.Carrier; {
	case c == nil && !o.Collective:
		add("no recorded collective carried it to another rank")
	case c != nil && c.Step != o.Step:
		add("the collective that spread it, %s, is in step %d, the next dumped step", c.Op, c.Step)
	}
	for _, r := range []struct{ role, words string }{
		{"inherited", "hold it too, received through a path the dump does not record (DDP's or FSDP's collectives run in C++, unhooked): they are not in cross_rank_analysis"},
		{"later", "made it again later, after another rank held it: not origins"},
	} {
		if ranks := ranksWithRole(v, o.Step, r.role); len(ranks) > 0 {
			add("ranks %s %s", intranges.Format(ranks), r.words)
		}
	}
	if len(o.PossibleSources) > 0 {
		add("ranks %s of step %d could not be read or were not dumped: any of them may have made it first", intranges.Format(o.PossibleSources), o.Step)
	}
	if o.Confidence != "high" && len(o.Reasons) > 0 {
		add("confidence %s: %s", o.Confidence, strings.Join(o.Reasons, "; "))
	}
	return notes
}

// ranksWithRole are the ranks of the origin step that first met the
// anomaly in the given role.
func ranksWithRole(v *verdict.Verdict, step int, role string) []int {
	var out []int
	for _, s := range v.Steps {
		if s.Step != step || s.Status != "anomaly" {
			continue
		}
		for _, a := range s.Anomalous {
			if a.Role == role {
				out = append(out, a.Rank)
			}
		}
	}
	return out
}
