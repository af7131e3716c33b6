package watch

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// stepClock is how far the ranks of a step have got: how many had finished
// it at the last look, and since when the step last moved on.
type stepClock struct {
	finished int
	since    time.Time
}

// readiness is whether a step can be judged, and on which ranks.
type readiness struct {
	ready      bool
	pending    []int // ranks still expected to finish it
	unfinished []int // ranks that never finished it: judged without them
}

// rankProgress is where one rank stands with one step.
type rankProgress int

const (
	rankPending  rankProgress = iota // still writing it, or not begun
	rankFinished                     // its dump.json settled, or it began a later step
	rankSkipped                      // no folder for it, one for a later step: it will not write it
	rankGone                         // never finished an earlier step and wrote none since
)

// readiness tells whether step s can be judged now: when every rank seen
// has finished it (or will not write it); when some have and the step has
// not moved on for RankTimeout; or when the watch is ending (idle),
// whatever its ranks hold then. A step moves on when one more rank
// finishes it, and, while no later step has a folder, when anything in
// the folder changes (a rank that has not finished it is still writing);
// once a later step has begun, a rank that keeps rewriting this step's
// file (its step counter no longer moves) is not waited for beyond
// RankTimeout.
func (w *watcher) readiness(l *listing, s int, now time.Time, ending bool) readiness {
	var rd readiness
	has := map[int]bool{}
	for _, r := range l.ranks[s] {
		has[r] = true
	}
	finished := 0
	for _, r := range sortedRanks(w.ranks) {
		switch w.progress(l, s, r, has[r], now) {
		case rankFinished:
			finished++
		case rankGone:
			rd.unfinished = append(rd.unfinished, r)
		case rankPending:
			rd.pending = append(rd.pending, r)
		}
	}
	c := w.clocks[s]
	laterBegun := l.steps[len(l.steps)-1] > s
	if finished > c.finished || finished > 0 && !laterBegun && w.changed.Equal(now) {
		c = stepClock{finished: finished, since: now}
		w.clocks[s] = c
	}
	timedOut := c.finished > 0 && now.Sub(c.since) >= w.opt.RankTimeout
	switch {
	case len(l.ranks[s]) == 0 && !laterBegun && !ending:
		// a step folder being made, before its rank folders: with no
		// rank seen yet nothing is pending, yet it is not finished
	case len(rd.pending) == 0:
		rd.ready = true
	case ending || timedOut:
		rd.ready = true
		for _, r := range rd.pending {
			w.gone[r] = true
		}
		rd.unfinished = append(rd.unfinished, rd.pending...)
		slices.Sort(rd.unfinished)
		rd.pending = nil
	}
	return rd
}

// progress is where rank r stands with step s (has: it has a folder
// there).
func (w *watcher) progress(l *listing, s, r int, has bool, now time.Time) rankProgress {
	movedOn := l.last[r] > s
	if !has {
		switch {
		case movedOn:
			return rankSkipped
		case w.gone[r]:
			return rankGone
		}
		return rankPending
	}
	delete(w.gone, r) // it writes again
	key := [2]int{s, r}
	f := w.files[key]
	if f == nil {
		f = &fileState{}
		w.files[key] = f
	}
	exists, stable := f.stable(rankDump(l.dirs[s], r), now, w.opt.Settle)
	if exists && f.since == now {
		w.changed = now
	}
	if stable || movedOn {
		return rankFinished
	}
	return rankPending
}

// reportWaiting says which ranks step s waits for, when that changed.
func (w *watcher) reportWaiting(s int, missing []int) {
	key := fmt.Sprint(missing)
	if w.waiting[s] == key {
		return
	}
	w.waiting[s] = key
	w.send(Event{Kind: EventWaiting, Step: s, Missing: missing, Known: sortedRanks(w.ranks)})
}

// sortedRanks are the keys of a set of ranks, ascending.
func sortedRanks(set map[int]bool) []int {
	return slices.Sorted(maps.Keys(set))
}
