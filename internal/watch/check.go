package watch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/nanhunt/nanhunt/internal/ranklist"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// checkStep analyses a step that is ready (unfinished: its ranks that
// never finished it): alone at first; as the confirmation of a suspect
// step when one is waiting. retry is set when a file of it was caught in
// the middle of a rewrite: it is looked at again, and no later step is
// checked before it.
func (w *watcher) checkStep(ctx context.Context, l *listing, s int, unfinished []int) (stop string, retry bool, err error) {
	if w.alarm != nil {
		w.done(s)
		w.send(Event{Kind: EventStep, Step: s, Status: StatusAfterAlarm, Ranks: l.ranks[s]})
		return "", false, nil
	}
	w.unfinished[s] = unfinished
	if w.suspect != nil {
		return w.confirmBy(ctx, l, s)
	}
	v, retry, err := w.traceStep(ctx, l, s, unfinished)
	if err != nil || retry {
		return "", retry, err
	}
	w.ahead.remember(w.opt.Path, l.dirs[s], s)
	if v == nil {
		w.stepNotRead(l, s, unfinished)
		return "", false, nil
	}
	if !v.Anomaly {
		w.stepChecked(l, s, v)
		w.warnAhead(ctx, s)
		return "", false, nil
	}
	w.suspect, w.suspectAt = &s, time.Now()
	w.markSeen("dump", s, w.suspectAt)
	w.next = s + 1
	w.send(Event{Kind: EventSuspect, Step: s, Verdict: v})
	if w.opt.Trace.Strict {
		stop, err := w.confirm(ctx, nil) // every anomaly counts: no need to wait
		return stop, false, err
	}
	return "", false, nil
}

// traceStep reads step s alone, with the rules of trace and the ranks the
// watch knows expected. It asks for a retry when a file was caught in
// the middle of a rewrite, and returns no verdict when nothing of the
// step could be read.
func (w *watcher) traceStep(ctx context.Context, l *listing, s int, unfinished []int) (v *verdict.Verdict, retry bool, err error) {
	if len(l.ranks[s]) == 0 {
		return nil, false, nil
	}
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Strict, opt.Progress, opt.Expected = l.dirs[s], nil, nil, true, nil, sortedRanks(w.ranks)
	opt.NoAhead = true // one step has no series: warnAhead judges it with the steps before
	v, err = trace.Run(ctx, opt)
	var unreadable *trace.UnreadableError
	switch {
	case errors.As(err, &unreadable):
		// every file torn: look again, unless they have stayed so or the
		// watch is ending (the step is judged on what it holds then)
		return nil, !w.ending && !w.settledLong(l, s, unfinished), nil
	case err != nil:
		return nil, false, err
	case !w.ending && w.torn(v, l, s, unfinished):
		return nil, true, nil
	}
	markUnfinished(v, s, unfinished)
	return v, false, nil
}

// stepChecked reports a step without an anomaly: clean when every
// expected rank was read whole (its tensors may then be pruned), else
// incomplete or unread, which a resumed watch reads again.
func (w *watcher) stepChecked(l *listing, s int, v *verdict.Verdict) {
	rows := ranklist.UnreadAt(v.Unread, s)
	status := StatusClean
	if st := stepState(v, s); st != nil && st.Status != "clean" {
		status = st.Status
	}
	if len(rows) > 0 && status == StatusClean {
		status = StatusIncomplete // rows the step state does not count
	}
	w.prev = &s
	w.history.add(s, status)
	if len(rows) > 0 {
		w.notWhole(s, rows)
	} else {
		w.cleanUpTo(s)
		if w.opt.Prune != nil {
			w.opt.Prune.stepClean(l.dirs[s], l.ranks[s])
		}
	}
	w.done(s)
	w.send(Event{Kind: EventStep, Step: s, Status: status, Ranks: withoutRanks(l.ranks[s], rows), Complete: len(rows) == 0, Unread: rows})
}

// stepNotRead reports a step of which nothing could be read: every file
// unreadable, or no rank folder at all.
func (w *watcher) stepNotRead(l *listing, s int, unfinished []int) {
	rows := w.unreadRows(l, s, unfinished)
	if len(rows) == 0 {
		w.done(s) // an empty step folder, and no rank expected in it
		return
	}
	w.history.add(s, StatusUnread)
	w.notWhole(s, rows)
	w.done(s)
	w.send(Event{Kind: EventStep, Step: s, Status: StatusUnread, Ranks: []int{}, Unread: rows})
}

// notWhole records the rank-steps of step s that were not read whole: the
// watch can no longer end clean, and a resumed watch starts at the first
// such step.
func (w *watcher) notWhole(s int, rows []verdict.UnreadRanks) {
	w.unread = append(w.unread, rows...)
	if !w.resume.held {
		w.resume.next, w.resume.held = s, true
	}
}

// torn reports a rank of step s whose file is damaged while that rank has
// not begun a later step and the file has not stayed unchanged for
// RankTimeout: a file caught in the middle of a rewrite, read again once
// it settles. The ranks that never finished the step are not waited for.
func (w *watcher) torn(v *verdict.Verdict, l *listing, s int, unfinished []int) bool {
	st := stepState(v, s)
	if st == nil {
		return false
	}
	for _, r := range st.Damaged {
		if l.last[r] > s || slices.Contains(unfinished, r) {
			continue // msprobe has moved on, or the watch has: the damage stays
		}
		if f := w.files[[2]int{s, r}]; f != nil && time.Since(f.since) < w.opt.RankTimeout {
			return true
		}
	}
	return false
}

// settledLong reports whether every file of step s that the watch waited
// for has been unchanged for RankTimeout: what is damaged then stays
// damaged.
func (w *watcher) settledLong(l *listing, s int, unfinished []int) bool {
	for _, r := range l.ranks[s] {
		if slices.Contains(unfinished, r) || l.last[r] > s {
			continue
		}
		if f := w.files[[2]int{s, r}]; f != nil && time.Since(f.since) < w.opt.RankTimeout {
			return false
		}
	}
	return true
}

// done forgets a checked step, and saves the state when it is kept.
func (w *watcher) done(s int) {
	w.passed.add(s)
	w.next = max(w.next, s+1) // a late rank-step's alarm names an earlier step
	if !w.resume.held {
		w.resume.next = w.next
	}
	for key := range w.files {
		if key[0] <= s {
			delete(w.files, key)
		}
	}
	for step := range w.clocks {
		if step <= s {
			delete(w.clocks, step)
		}
	}
	w.forgetUnfinished()
	w.save()
}

// forgetUnfinished keeps the ranks that never finished a step only for
// the steps a verdict may still read: the step before the suspect one,
// the suspect one, and those after it.
func (w *watcher) forgetUnfinished() {
	keep := w.next
	if w.suspect != nil {
		keep = *w.suspect
	}
	if w.prev != nil {
		keep = min(keep, *w.prev)
	}
	for step := range w.unfinished {
		if step < keep {
			delete(w.unfinished, step)
		}
	}
}

// confirmBy confirms the suspect step with step next, which is ready;
// when a file of next was caught in the middle of a rewrite (as
// traceStep tells), it asks for a retry instead: a next step read in part
// would leave the anomaly standing (§9) where it did not last.
func (w *watcher) confirmBy(ctx context.Context, l *listing, next int) (stop string, retry bool, err error) {
	v, steps, err := w.traceAround(ctx, *w.suspect, w.prev, &next)
	if err != nil {
		return "", false, err
	}
	if !w.ending && w.torn(v, l, next, w.unfinished[next]) {
		return "", true, nil
	}
	stop, err = w.settle(ctx, v, steps, &next)
	return stop, false, err
}

// confirm reads the suspect step with the step before it and the step
// after (next, nil when there is none) the way an offline trace does.
func (w *watcher) confirm(ctx context.Context, next *int) (string, error) {
	v, steps, err := w.traceAround(ctx, *w.suspect, w.prev, next)
	if err != nil {
		return "", err
	}
	return w.settle(ctx, v, steps, next)
}

// settle ends the suspect step with the verdict of it and the steps
// around it: the alarm when its anomaly lasts, a recovery otherwise.
func (w *watcher) settle(ctx context.Context, v *verdict.Verdict, steps map[int]bool, next *int) (string, error) {
	s := *w.suspect
	w.suspect = nil
	if v.Anomaly && v.Origin != nil {
		w.ahead.alarmAhead(ctx, v, steps, w.opt.Trace.Jobs)
		return w.raise(v, next)
	}
	// the next step no longer shows it: an overflow the loss scaler
	// skipped, a batch that was dropped; the next step is checked on its
	// own, as offline
	w.prev = &s
	w.history.add(s, "recovered")
	if rows := ranklist.UnreadAt(v.Unread, s); len(rows) > 0 {
		w.notWhole(s, rows) // ranks of it were not read: it is not "clean" either
	} else {
		w.cleanUpTo(s)
	}
	w.done(s)
	w.send(Event{Kind: EventRecovered, Step: s, Verdict: v, Complete: v.Complete, Unread: v.Unread})
	return "", nil
}

// traceAround reads step s with the step before it and the step after
// (either nil when there is none) the way an offline trace does, every
// rank seen expected; steps are those read.
func (w *watcher) traceAround(ctx context.Context, s int, prev, next *int) (*verdict.Verdict, map[int]bool, error) {
	steps := map[int]bool{s: true}
	if prev != nil {
		steps[*prev] = true
	}
	if next != nil {
		steps[*next] = true
	}
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Progress, opt.Expected = w.opt.Path, steps, nil, nil, sortedRanks(w.ranks)
	opt.NoAhead = true // the steps before are not all read: the alarm's are judged with them
	v, err := trace.Run(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	for step := range steps {
		markUnfinished(v, step, w.unfinished[step])
	}
	return v, steps, nil
}

// raise is the alarm of a lasting anomaly in the dump (next: the step
// that confirmed it, nil when none followed).
func (w *watcher) raise(v *verdict.Verdict, next *int) (string, error) {
	w.alarm, w.alarmStep = v, &v.Origin.Step
	w.history.add(v.Origin.Step, "anomaly")
	w.addUnread(v.Unread)
	if next != nil {
		w.done(*next)
	} else {
		w.done(v.Origin.Step)
	}
	w.finishDumpAlarm(v)
	source, seen := w.firstSource(v.Origin.Step)
	w.send(Event{Kind: EventAnomaly, Step: v.Origin.Step, Ranks: v.Origin.Ranks, Verdict: v, Source: source, Seen: seen,
		Complete: v.Complete, Unread: v.Unread})
	if !w.opt.KeepGoing {
		return "anomaly", nil
	}
	return "", nil
}

// addUnread records rows of a verdict, once per step and rank.
func (w *watcher) addUnread(rows []verdict.UnreadRanks) {
	for _, u := range rows {
		if !w.hasUnread(u) {
			w.unread = append(w.unread, u)
		}
	}
}

// hasUnread reports whether every rank of a row is recorded at its step.
func (w *watcher) hasUnread(u verdict.UnreadRanks) bool {
	for _, r := range u.Ranks {
		found := false
		for _, have := range w.unread {
			if have.Step == u.Step && slices.Contains(have.Ranks, r) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// resumePoint is where a watch resumed from the state would start: after
// the last step checked, or at the first step not read whole (held), so
// that it is read again; prev is the last clean step before it.
type resumePoint struct {
	next int
	prev *int
	held bool
}

// cleanUpTo records step s as checked without anomaly and read whole.
func (w *watcher) cleanUpTo(s int) {
	if !w.resume.held {
		w.resume.prev = &s
	}
}

func (w *watcher) save() {
	if w.state == nil {
		return
	}
	w.state.Next, w.state.Prev = w.resume.next, w.resume.prev
	w.state.Alarm = w.alarmStep
	if err := w.state.Save(w.opt.StateFile); err != nil && w.stateErr == nil {
		w.stateErr = &SaveError{File: w.opt.StateFile, Err: err}
	}
}
