package reference

import (
	"slices"
)

// UnreadRanks are expected ranks of one step that were not read whole, for
// one reason: "no folder", "unreadable" or "damaged" (README 9).
type UnreadRanks struct {
	Step   int
	Ranks  []int
	Reason string
}

// jobRanks are the job's ranks at a step (README 9): ranks with a folder
// in a selected step, ranks in the step's group_ranks, and every rank
// below the highest of those that the ranks option admits.
func (a *analysis) jobRanks(d *stepData) []int {
	want := map[int]bool{}
	for r := range a.known {
		want[r] = true
	}
	for _, rank := range d.dumped {
		if rd := d.read(rank); rd != nil {
			for _, g := range rd.named {
				want[g] = true
			}
		}
	}
	top := -1
	for r := range want {
		top = max(top, r)
	}
	for r := 0; r < min(top, 1<<17); r++ { // README 9: ranks below 131,072
		if a.selected == nil || a.selected[r] {
			want[r] = true
		}
	}
	return sortedInts(want)
}

// unreadOf lists a step's expected ranks not read whole, by reason: ranks
// with a folder in another selected step and none here, then unread
// files, then damaged ones. Ranks of the job with no folder anywhere are
// not dumped, not unread.
func (a *analysis) unreadOf(d *stepData) []UnreadRanks {
	var noFolder, unreadable, damaged []int
	for _, r := range d.notDumped {
		if a.known[r] {
			noFolder = append(noFolder, r)
		}
	}
	for _, rank := range d.dumped {
		switch d.ranks[rank].status {
		case fileUnread:
			unreadable = append(unreadable, rank)
		case fileDamaged:
			damaged = append(damaged, rank)
		}
	}
	var out []UnreadRanks
	why := "no folder"
	if d.unreadable {
		why = "step folder unreadable"
	}
	for _, u := range []UnreadRanks{{d.step, noFolder, why}, {d.step, unreadable, "unreadable"}, {d.step, damaged, "damaged"}} {
		if len(u.Ranks) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// neverDumped are the step's ranks of the job with a folder in no
// selected step.
func (a *analysis) neverDumped(d *stepData) []int {
	var out []int
	for _, r := range d.notDumped {
		if !a.known[r] {
			out = append(out, r)
		}
	}
	return out
}

// statusWithout is a step's status when it holds no anomaly: clean when
// read whole, unread when none of its expected ranks was, else incomplete.
func statusWithout(unread []UnreadRanks, d *stepData) string {
	var ranks []int
	for _, u := range unread {
		ranks = append(ranks, u.Ranks...)
	}
	slices.Sort(ranks)
	ranks = slices.Compact(ranks)
	expected := len(d.dumped)
	for _, r := range d.notDumped {
		if slices.Contains(ranks, r) {
			expected++
		}
	}
	switch {
	case len(ranks) == 0:
		return "clean"
	case len(ranks) == expected:
		return "unread"
	}
	return "incomplete"
}
