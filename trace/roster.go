package trace

import (
	"slices"

	"github.com/nanhunt/nanhunt/verdict"
)

// roster is what is known of the job's ranks before a step is read (README
// "How it decides", 9): the ranks with a folder at some analysed step, and
// the ranks the analysis was restricted to (nil: all).
type roster struct {
	known    map[int]bool
	selected map[int]bool
}

// ranksAt are the job's ranks at a step: the known ranks, the ranks of the
// step's process groups, and every rank below the highest of those that
// the selection admits (ranks are numbered from 0: a gap is a rank that
// exists and was not dumped).
func (ro roster) ranksAt(scans map[int]*rankScan) []int {
	job := map[int]bool{}
	top := -1
	add := func(rk int) {
		job[rk] = true
		top = max(top, rk)
	}
	for rk := range ro.known {
		add(rk)
	}
	for _, s := range scans {
		for _, g := range s.groups {
			for _, rk := range g {
				add(rk)
			}
		}
	}
	for rk := 0; rk < top; rk++ {
		if !job[rk] && (ro.selected == nil || ro.selected[rk]) {
			job[rk] = true
		}
	}
	return sortedKeys(job)
}

// unreadList lists the step's expected ranks that were not read whole, by
// reason: without a folder here, unreadable, damaged.
func (r *stepResult) unreadList() []verdict.UnreadRanks {
	var unreadable, damaged []int
	for _, rank := range r.ranks {
		switch s := r.scans[rank]; {
		case s.unread():
			unreadable = append(unreadable, rank)
		case s.damage != nil:
			damaged = append(damaged, rank)
		}
	}
	var out []verdict.UnreadRanks
	for _, u := range []verdict.UnreadRanks{
		{Step: r.step, Ranks: r.absent, Reason: "no folder"},
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
