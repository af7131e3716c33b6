package watch

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// Folders can appear after the watch has passed their step. A rank the
// watch had not seen when it checked a step may have a folder there: the
// step was judged on the ranks seen then (the first steps of a job whose
// ranks start writing at different times). A whole step folder may appear
// after later ones were checked: a copy or an rsync from the nodes brings
// the steps in name order, step10 before step2. Left alone, such a
// rank-step would never be read, and the watch would end clean without
// it; so each is read when it is seen (a step event marked Late), as the
// step's check would have read it, and an anomaly in it is confirmed by
// the step after it, as any suspect step.

// learnRanks adds the ranks of a listing to those seen, and lists the
// rank-steps of the newly seen ones in the steps already checked, to be
// read once written (readLateRanks).
func (w *watcher) learnRanks(l *listing) {
	var fresh []int
	for _, s := range l.steps {
		for _, r := range l.ranks[s] {
			if !w.ranks[r] {
				w.ranks[r] = true
				fresh = append(fresh, r)
			}
		}
	}
	if len(fresh) == 0 || w.passed.empty() || w.alarm != nil {
		return
	}
	checked, err := look(w.opt.Path, w.next, w.hasPassed)
	if err != nil {
		return // the step loop's own look reports a folder that is gone
	}
	isFresh := rankSet(fresh)
	for _, s := range checked.late {
		for _, r := range intersect(ranksIn(checked.dirs[s]), isFresh) {
			w.lateRanks[[2]int{s, r}] = checked.dirs[s]
		}
	}
}

// readLateRanks reads the late rank-steps that are written: their rank
// has begun a later step, or their dump.json has stayed the same for
// Settle, or the watch is ending; oldest step first, the ranks of a step
// together.
func (w *watcher) readLateRanks(ctx context.Context, l *listing, now time.Time) (string, error) {
	if w.alarm != nil {
		return "", nil
	}
	ready := map[int][]int{}
	for key, dir := range w.lateRanks {
		s, r := key[0], key[1]
		_, movedOn := l.last[r] // a folder at the next step to check or later
		if !w.ending && !movedOn && !w.lateSettled(dir, s, []int{r}, now) {
			continue
		}
		ready[s] = append(ready[s], r)
	}
	for _, s := range sortedKeys(ready) {
		ranks := ready[s]
		slices.Sort(ranks)
		dir := w.lateRanks[[2]int{s, ranks[0]}]
		for _, r := range ranks {
			delete(w.lateRanks, [2]int{s, r})
			delete(w.lateFiles, [2]int{s, r})
		}
		before, after := w.around(s)
		stop, err := w.readLate(ctx, dir, s, ranks, ranks, before, after)
		if err != nil || stop != "" {
			return stop, err
		}
	}
	return "", nil
}

// sortedKeys are the keys of m, ascending.
func sortedKeys(m map[int][]int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isLate reports whether a step folder before the next step to check is
// one the watch passed without it: a step it answers for, neither
// checked nor the suspect one.
func (w *watcher) isLate(s int) bool {
	return s >= w.start && !w.passed.has(s) && (w.suspect == nil || *w.suspect != s)
}

// hasPassed reports whether step s was checked.
func (w *watcher) hasPassed(s int) bool { return w.passed.has(s) }

// readLateSteps reads the late step folders of a listing whose files have
// settled (every rank folder's dump.json unchanged for Settle), or all of
// them when the watch is ending, oldest first; every rank seen is
// expected in each.
func (w *watcher) readLateSteps(ctx context.Context, l *listing, now time.Time, ending bool) (string, error) {
	if w.alarm != nil {
		return "", nil
	}
	for _, s := range l.late {
		ranks := ranksIn(l.dirs[s])
		if !ending && !w.lateSettled(l.dirs[s], s, ranks, now) {
			continue
		}
		for r := range w.lateFiles {
			if r[0] == s {
				delete(w.lateFiles, r)
			}
		}
		w.passed.add(s)
		before, after := w.around(s)
		expected := sortedRanks(w.ranks)
		if len(ranks) == 0 {
			if len(expected) > 0 {
				rows := []verdict.UnreadRanks{{Step: s, Ranks: expected, Reason: reasonNoFolder}}
				w.lateNotWhole(s, rows, before)
				w.send(Event{Kind: EventStep, Step: s, Status: StatusUnread, Ranks: []int{}, Unread: rows, Late: true})
			}
			continue
		}
		stop, err := w.readLate(ctx, l.dirs[s], s, nil, expected, before, after)
		if err != nil || stop != "" {
			return stop, err
		}
	}
	return "", nil
}

// lateSettled reports whether a late step folder has rank folders and
// each one's dump.json has stayed the same for Settle.
func (w *watcher) lateSettled(dir string, s int, ranks []int, now time.Time) bool {
	settled := len(ranks) > 0
	for _, r := range ranks {
		key := [2]int{s, r}
		f := w.lateFiles[key]
		if f == nil {
			f = &fileState{}
			w.lateFiles[key] = f
		}
		exists, stable := f.stable(rankDump(dir, r), now, w.opt.Settle)
		if exists && f.since.Equal(now) {
			w.changed = now // being written: the job (or the copy) goes on
		}
		if !stable {
			settled = false
		}
	}
	return settled
}

// around are the steps checked just before and just after step s (nil
// when none); the suspect step counts as after.
func (w *watcher) around(s int) (before, after *int) {
	before, after = w.passed.around(s)
	if w.suspect != nil && *w.suspect > s && (after == nil || *w.suspect < *after) {
		after = w.suspect
	}
	return before, after
}

// readLate reads step s (its folder dir), passed without some of its
// folders: its ranks only, or all when only is nil, with the ranks
// expected (before, after: the steps checked around it, nil when none). A
// clean or damaged rank-step is reported as a step event marked Late; an
// anomaly is confirmed by the step after it.
func (w *watcher) readLate(ctx context.Context, dir string, s int, only, expected []int, before, after *int) (string, error) {
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Strict, opt.Progress, opt.Expected = dir, nil, nil, true, nil, expected
	if only != nil {
		opt.Ranks = rankSet(only)
	}
	opt.NoAhead = true
	v, err := trace.Run(ctx, opt)
	var unreadable *trace.UnreadableError
	switch {
	case errors.As(err, &unreadable):
		rows := []verdict.UnreadRanks{{Step: s, Ranks: expected, Reason: reasonUnreadable}}
		w.lateNotWhole(s, rows, before)
		w.send(Event{Kind: EventStep, Step: s, Status: StatusUnread, Ranks: []int{}, Unread: rows, Late: true})
		return "", nil
	case err != nil:
		return "", err
	}
	w.ahead.add(dir)
	if v.Anomaly && v.Origin != nil {
		return w.lateAnomaly(ctx, s, v, before, after)
	}
	rows := ranklist.UnreadAt(v.Unread, s)
	status := StatusClean
	if len(rows) > 0 {
		status = StatusIncomplete
		w.lateNotWhole(s, rows, before)
	}
	read := only
	if read == nil {
		read = ranksIn(dir)
	}
	w.send(Event{Kind: EventStep, Step: s, Status: status, Ranks: withoutRanks(read, rows), Complete: len(rows) == 0, Unread: rows, Late: true})
	return "", nil
}

// lateAnomaly handles an anomaly found late at step s: the step after it
// (checked, or the suspect one) tells whether it lasts, as offline; with
// none, s becomes the suspect that the next step to finish confirms.
func (w *watcher) lateAnomaly(ctx context.Context, s int, v *verdict.Verdict, before, after *int) (string, error) {
	now := time.Now()
	w.markSeen("dump", s, now)
	if after == nil {
		if w.suspect == nil {
			w.suspect, w.suspectAt, w.prev = &s, now, before
			w.send(Event{Kind: EventSuspect, Step: s, Verdict: v})
		}
		return "", nil // a suspect at s already: its confirmation reads every rank seen
	}
	w.send(Event{Kind: EventSuspect, Step: s, Verdict: v})
	around, steps, err := w.traceAround(ctx, s, before, after)
	if err != nil {
		return "", err
	}
	if around.Anomaly && around.Origin != nil {
		w.suspect = nil // an earlier origin than any suspect's
		w.ahead.alarmAhead(ctx, around, steps, w.opt.Trace.Jobs)
		return w.raise(around, after)
	}
	w.history.add(s, "recovered")
	if rows := ranklist.UnreadAt(around.Unread, s); len(rows) > 0 {
		w.lateNotWhole(s, rows, before)
	}
	w.send(Event{Kind: EventRecovered, Step: s, Verdict: around, Complete: around.Complete, Unread: around.Unread})
	return "", nil
}

// lateUnread records, when the watch stops without an alarm, the late
// rank-steps and step folders it has seen and not read (still being
// written): steps it passed, which it cannot call clean.
func (w *watcher) lateUnread() {
	if w.alarm != nil {
		return
	}
	pending := map[int][]int{}
	for key := range w.lateRanks {
		pending[key[0]] = append(pending[key[0]], key[1])
	}
	if l, err := look(w.opt.Path, w.next, w.isLate); err == nil {
		for _, s := range l.late {
			pending[s] = sortedRanks(w.ranks)
			if len(pending[s]) == 0 {
				pending[s] = ranksIn(l.dirs[s])
			}
		}
	}
	for _, s := range sortedKeys(pending) {
		if len(pending[s]) == 0 {
			continue // no rank known, and none in it: nothing expected there
		}
		slices.Sort(pending[s])
		before, _ := w.around(s)
		w.lateNotWhole(s, []verdict.UnreadRanks{{Step: s, Ranks: pending[s], Reason: ReasonNeverFinished}}, before)
	}
	clear(w.lateRanks)
}

// lateNotWhole records rows of a step passed earlier that were not read
// whole: a resumed watch starts there (before: the step checked before it).
func (w *watcher) lateNotWhole(s int, rows []verdict.UnreadRanks, before *int) {
	w.unread = append(w.unread, rows...)
	if !w.resume.held || s < w.resume.next {
		w.resume = resumePoint{next: s, prev: before, held: true}
	}
	w.save()
}

// intersect are the ranks that are in set, in their order.
func intersect(ranks []int, set map[int]bool) []int {
	var out []int
	for _, r := range ranks {
		if set[r] {
			out = append(out, r)
		}
	}
	return out
}

// rankSet is ranks as a set.
func rankSet(ranks []int) map[int]bool {
	set := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		set[r] = true
	}
	return set
}

// rankDump is the dump.json of rank r in a step folder.
func rankDump(dir string, r int) string {
	return filepath.Join(dir, "rank"+strconv.Itoa(r), "dump.json")
}
