package watch

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/verdict"
)

// Reasons of the rank-steps a watch could not read whole, beside those of
// trace ("no folder", "unreadable", "damaged").
const (
	ReasonNeverFinished = "never finished" // the watch stopped waiting for the rank: RankTimeout, or the watch ended
	ReasonNotChecked    = "not checked"    // the watch was interrupted before it checked the step
	reasonNoFolder      = "no folder"
	reasonUnreadable    = "unreadable"
)

// markUnfinished says, in a verdict, which rank-steps of step s were not
// read whole because their rank never finished the step: their rows get
// the reason "never finished" whatever trace found of them (no folder, a
// file that is missing, empty or cut). When the origin is at step s, its
// confidence is at most medium and the reasons name them: one of them may
// have made it first.
func markUnfinished(v *verdict.Verdict, s int, unfinished []int) {
	if len(unfinished) == 0 {
		return
	}
	var rows []verdict.UnreadRanks
	var never []int
	for _, u := range v.Unread {
		if u.Step != s {
			rows = append(rows, u)
			continue
		}
		var rest []int
		for _, r := range u.Ranks {
			if slices.Contains(unfinished, r) {
				never = append(never, r)
			} else {
				rest = append(rest, r)
			}
		}
		if len(rest) > 0 {
			u.Ranks = rest
			rows = append(rows, u)
		}
	}
	if len(never) == 0 {
		return
	}
	never = ranklist.Unique(never)
	rows = append(rows, verdict.UnreadRanks{Step: s, Ranks: never, Reason: ReasonNeverFinished})
	slices.SortStableFunc(rows, func(a, b verdict.UnreadRanks) int { return a.Step - b.Step })
	v.Unread, v.Complete = rows, false
	if o := v.Origin; v.Anomaly && o != nil && o.Step == s {
		lowerForUnfinished(o, never)
	}
}

// lowerForUnfinished lowers an origin's confidence to medium at most for
// ranks of its step that never finished writing it, names them, and counts
// the ones that are not origin ranks as possible sources.
func lowerForUnfinished(o *verdict.Origin, never []int) {
	var others []int
	for _, r := range never {
		if !slices.Contains(o.Ranks, r) {
			others = append(others, r)
		}
	}
	n := len(never)
	reason := fmt.Sprintf("%s never finished writing step %d (the watch stopped waiting for %s: --rank-timeout)", ranklist.Name(never), o.Step, pick(n, "it", "them"))
	switch {
	case len(others) == 0:
		reason += fmt.Sprintf("; what %s had written was read", pick(n, "it", "they"))
	default:
		reason += fmt.Sprintf("; %s may have made it first", pick(len(others), ranklist.Name(others), "one of "+ranklist.Name(others)))
		o.PossibleSources = ranklist.Unique(append(o.PossibleSources, others...))
	}
	o.Reasons = append(o.Reasons, reason)
	if o.Confidence == "high" {
		o.Confidence = "medium"
	}
}

// unreadRows are the expected rank-steps of a step of which nothing could
// be read (no verdict): the ranks that never finished it, those without a
// folder for it, and those whose file could not be read. None when the
// step folder holds no rank and no rank was waited for.
func (w *watcher) unreadRows(l *listing, s int, unfinished []int) []verdict.UnreadRanks {
	if len(l.ranks[s]) == 0 && len(unfinished) == 0 {
		return nil
	}
	var noFolder, unreadable []int
	for _, r := range sortedRanks(w.ranks) {
		switch {
		case slices.Contains(unfinished, r):
		case slices.Contains(l.ranks[s], r):
			unreadable = append(unreadable, r)
		default:
			noFolder = append(noFolder, r)
		}
	}
	var rows []verdict.UnreadRanks
	for _, u := range []verdict.UnreadRanks{
		{Step: s, Ranks: noFolder, Reason: reasonNoFolder},
		{Step: s, Ranks: unreadable, Reason: reasonUnreadable},
		{Step: s, Ranks: unfinished, Reason: ReasonNeverFinished},
	} {
		if len(u.Ranks) > 0 {
			rows = append(rows, u)
		}
	}
	return rows
}

// stepState is a verdict's state of step s, nil when it has none.
func stepState(v *verdict.Verdict, s int) *verdict.StepState {
	for i := range v.Steps {
		if v.Steps[i].Step == s {
			return &v.Steps[i]
		}
	}
	return nil
}

// withoutRanks are the ranks that no row names.
func withoutRanks(ranks []int, rows []verdict.UnreadRanks) []int {
	out := []int{}
	for _, r := range ranks {
		named := false
		for _, u := range rows {
			named = named || slices.Contains(u.Ranks, r)
		}
		if !named {
			out = append(out, r)
		}
	}
	return out
}

// pick is one or many, by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// notChecked records, when a watch is interrupted, the steps of the folder
// from the first it had not checked on (up to UntilStep) as not read
// whole: each was begun, so its ranks are expected there, and a watch
// stopped before it checked them is no clean bill for them (exit status
// 3, not 0). A folder that cannot be listed any more leaves the first
// step not checked unread.
func (w *watcher) notChecked() {
	if w.alarm != nil {
		return
	}
	l, err := look(w.opt.Path, w.next, nil)
	if err != nil {
		if ranks := sortedRanks(w.ranks); len(ranks) > 0 {
			w.unread = append(w.unread, verdict.UnreadRanks{Step: w.next, Ranks: ranks, Reason: ReasonNotChecked})
		}
		return
	}
	for _, s := range l.steps {
		if w.opt.UntilStep != nil && s > *w.opt.UntilStep {
			break
		}
		expected := maps.Clone(w.ranks)
		for _, r := range l.ranks[s] {
			if w.opt.Trace.Ranks == nil || w.opt.Trace.Ranks[r] {
				expected[r] = true
			}
		}
		if len(expected) == 0 {
			continue // no rank known, and none in it: nothing expected there yet
		}
		w.unread = append(w.unread, verdict.UnreadRanks{Step: s, Ranks: sortedRanks(expected), Reason: ReasonNotChecked})
	}
}
