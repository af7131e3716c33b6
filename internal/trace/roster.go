package trace

import (
	"errors"
	"slices"

	"github.com/nanhunt/nanhunt/verdict"
)

// roster is what is known of the job's ranks before a step is read (README
// "How it decides", 9): the ranks with a folder at some analysed step, and
// the ranks the analysis was restricted to (nil: all). In a join with a
// node missing, unsummarised are the known ranks no summary holds, and
// unknownRanks is set when a missing node's ranks cannot be told.
type roster struct {
	known        map[int]bool
	selected     map[int]bool
	unsummarised map[int]bool
	unknownRanks bool
	// empty are the step folders with no rank folder that can be read:
	// true when the folder itself could not be listed
	empty map[int]bool
	// noDump are the ranks of each step whose folder holds no dump.json,
	// ascending: no scan is made of them
	noDump map[int][]int
}

// hasNoDump reports whether rank's folder at step holds no dump.json.
func (ro roster) hasNoDump(step, rank int) bool {
	_, ok := slices.BinarySearch(ro.noDump[step], rank)
	return ok
}

// absentReason is why a known rank without a folder at a step is unread.
func (ro roster) absentReason(step int) string {
	if ro.empty[step] {
		return "step folder unreadable"
	}
	return "no folder"
}

// ranksAt are the job's ranks at a step: the known ranks, the ranks of the
// step's process groups, and every rank below the highest of those that
// the selection admits (ranks are numbered from 0: a gap is a rank that
// exists and was not dumped).
func (ro roster) ranksAt(scans map[int]*rankScan) []int {
	// a sorted list rather than a set: a join with a node missing knows a
	// hundred thousand ranks at every step
	named := make([]int, 0, len(ro.known))
	for rk := range ro.known {
		named = append(named, rk)
	}
	groups := map[string][]int{} // each group once: thousands of ranks share it
	for _, s := range scans {
		for k, g := range s.groups {
			if had, ok := groups[k]; !ok || !slices.Equal(had, g) {
				groups[k] = g
				named = append(named, g...)
			}
		}
	}
	top := -1
	for _, rk := range named {
		top = max(top, rk)
	}
	fill := min(top, maxFilledRank)
	job := make([]int, 0, max(fill, 0)+len(named))
	for rk := range max(fill, 0) {
		if ro.selected == nil || ro.selected[rk] {
			job = append(job, rk)
		}
	}
	job = append(job, named...)
	slices.Sort(job)
	return slices.Compact(job)
}

// maxFilledRank bounds the gap fill (README "How it decides", 9): a rank
// number in a folder name or a process group may be anything up to
// dumplayout.MaxFolderNumber, and a billion ranks not dumped would be a billion
// entries. No msprobe job comes near this many ranks.
const maxFilledRank = 1 << 17

// unreadList lists the step's expected ranks that were not read whole, by
// reason: without a folder here, unreadable, damaged; in a join also
// without a summary (a missing node's) and not summarised (listed by a
// summary that holds no record of it).
func (r *stepResult) unreadList() []verdict.UnreadRanks {
	var unreadable, damaged, unsummarised []int
	for _, rank := range r.ranks {
		var lost errNotSummarised
		switch s := r.scans[rank]; {
		case errors.As(s.openErr, &lost):
			unsummarised = append(unsummarised, rank)
		case s.unread():
			unreadable = append(unreadable, rank)
		case s.damage != nil:
			damaged = append(damaged, rank)
		}
	}
	noFolder := without(r.absent, r.noSummary)
	if len(r.noDump) > 0 {
		unreadable = slices.Sorted(slices.Values(append(unreadable, r.noDump...)))
	}
	var out []verdict.UnreadRanks
	for _, u := range []verdict.UnreadRanks{
		{Step: r.step, Ranks: noFolder, Reason: r.absentWhy},
		{Step: r.step, Ranks: r.noSummary, Reason: "no summary"},
		{Step: r.step, Ranks: unsummarised, Reason: "not summarised"},
		{Step: r.step, Ranks: unreadable, Reason: "unreadable"},
		{Step: r.step, Ranks: damaged, Reason: "damaged"},
	} {
		if len(u.Ranks) > 0 {
			u.Ranks = slices.Clone(u.Ranks)
			out = append(out, u)
		}
	}
	return out
}

// unreadRanksOf is every rank the rows name, once, ascending.
func unreadRanksOf(rows []verdict.UnreadRanks) []int {
	var out []int
	for _, u := range rows {
		out = append(out, u.Ranks...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unreadBefore are the rows of steps before step.
func unreadBefore(rows []verdict.UnreadRanks, step int) []verdict.UnreadRanks {
	var out []verdict.UnreadRanks
	for _, u := range rows {
		if u.Step < step {
			out = append(out, u)
		}
	}
	return out
}
