package watch

import (
	"context"
	"errors"
	"time"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// A rank the watch had not seen when it checked a step may have a folder
// in that step: its folder appeared after the step was judged on the
// ranks seen then (the first steps of a job whose ranks start writing at
// different times, a rank whose folder is created late). Such a rank-step
// is read when the rank is first seen, as the step's check would have
// read it: left alone, the step would stand as clean without it.

// learnRanks adds the ranks of a listing to those seen, and reads the
// rank-steps of the newly seen ones in the steps already checked.
func (w *watcher) learnRanks(ctx context.Context, l *listing) (string, error) {
	var fresh []int
	for _, s := range l.steps {
		for _, r := range l.ranks[s] {
			if !w.ranks[r] {
				w.ranks[r] = true
				fresh = append(fresh, r)
			}
		}
	}
	if len(fresh) == 0 || w.first == nil || w.alarm != nil {
		return "", nil
	}
	checked, err := look(w.opt.Path, *w.first)
	if err != nil {
		return "", nil // the step loop's own look reports a folder that is gone
	}
	isFresh := rankSet(fresh)
	var steps []int
	for _, s := range checked.steps {
		if s < w.next {
			steps = append(steps, s)
		}
	}
	for i, s := range steps {
		late := intersect(checked.ranks[s], isFresh)
		if len(late) == 0 {
			continue
		}
		stop, err := w.readLate(ctx, checked.dirs[s], s, late, neighbour(steps, i-1), neighbour(steps, i+1))
		if err != nil || stop != "" {
			return stop, err
		}
	}
	return "", nil
}

// readLate reads ranks late of step s (its folder dir), which was checked
// without them (before, after: the steps checked around it, nil when
// none). A clean or damaged rank-step is reported as a step event marked
// Late; an anomaly is a suspect confirmed as any other, by the step after.
func (w *watcher) readLate(ctx context.Context, dir string, s int, late []int, before, after *int) (string, error) {
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Strict, opt.Progress, opt.Expected = dir, nil, rankSet(late), true, nil, late
	opt.NoAhead = true
	v, err := trace.Run(ctx, opt)
	var unreadable *trace.UnreadableError
	switch {
	case errors.As(err, &unreadable):
		rows := []verdict.UnreadRanks{{Step: s, Ranks: late, Reason: reasonUnreadable}}
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
	w.send(Event{Kind: EventStep, Step: s, Status: status, Ranks: withoutRanks(late, rows), Complete: len(rows) == 0, Unread: rows, Late: true})
	return "", nil
}

// lateAnomaly handles an anomaly found in a late rank-step of step s: the
// step after it (checked already) tells whether it lasts, as offline;
// when s is the last step checked, s becomes the suspect that the next
// step to finish confirms.
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

// lateNotWhole records rows of a step checked earlier that were not read
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

// neighbour is steps[i], nil when i is out of range.
func neighbour(steps []int, i int) *int {
	if i < 0 || i >= len(steps) {
		return nil
	}
	s := steps[i]
	return &s
}

// rankSet is ranks as a set.
func rankSet(ranks []int) map[int]bool {
	set := make(map[int]bool, len(ranks))
	for _, r := range ranks {
		set[r] = true
	}
	return set
}
