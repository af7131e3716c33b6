package watch

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/verdict"
)

// followers are the Sidecars that follow in's logs and monitor output.
func followers(in sources.Inputs) []Sidecar {
	var out []Sidecar
	if len(in.Log.Paths) > 0 {
		out = append(out, sources.NewLogFollower(in.Log))
	}
	if in.Monitor.Dir != "" {
		out = append(out, sources.NewMonitorFollower(in.Monitor))
	}
	return out
}

// readFailed records why a sidecar could not be read, and reports it when
// it was not the reason reported last.
func (w *watcher) readFailed(name string, err error) {
	if old, had := w.failed[name]; had && old.Error() == err.Error() {
		return
	}
	w.failed[name] = err
	w.send(Event{Kind: EventWarning, Source: name, Message: fmt.Sprintf("the %s could not be read: %v", name, err)})
}

// failureWarnings are the sidecars whose last read failed, as warnings of
// the alarm's verdict.
func (w *watcher) failureWarnings() []verdict.Warning {
	names := make([]string, 0, len(w.failed))
	for name := range w.failed {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []verdict.Warning
	for _, name := range names {
		out = append(out, verdict.Warning{Message: fmt.Sprintf("the followed %s could not be read at the watch's last look: %v", name, w.failed[name])})
	}
	return out
}

func (w *watcher) markSeen(source string, step int, at time.Time) {
	if old, ok := w.seen[source]; !ok || step < old.step {
		w.seen[source] = sighting{step: step, at: at}
	}
}

// firstSource names the source that first showed a non-finite value at or
// before the alarm's step (a later step of a log is the spread, not the
// birth).
func (w *watcher) firstSource(step int) (string, map[string]time.Time) {
	seen := map[string]time.Time{}
	first := "dump"
	for name, s := range w.seen {
		if s.step > step+1 {
			continue
		}
		seen[name] = s.at
		if f, ok := seen[first]; !ok || s.at.Before(f) {
			first = name
		}
	}
	return first, seen
}

// readSidecars asks each sidecar what it holds now. A read that failed
// is reported once (again when its reason changes) and kept for the
// alarm's verdict until a read succeeds; one that ctx stopped is not a
// failure of the source.
func (w *watcher) readSidecars(ctx context.Context, now time.Time) {
	for _, sc := range w.opt.Sidecars {
		step, ok, err := sc.FirstBad(ctx)
		if err != nil && ctx.Err() == nil {
			w.readFailed(sc.Name(), err)
		}
		if err == nil {
			delete(w.failed, sc.Name())
		}
		if err != nil || !ok {
			continue
		}
		if old, had := w.seen[sc.Name()]; had && old.step <= step {
			continue
		}
		w.markSeen(sc.Name(), step, now)
		w.send(Event{Kind: EventEvidence, Step: step, Source: sc.Name()})
	}
}

// firstSighting is the sidecar that showed a non-finite value at the
// earliest step (the earliest in time among those of that step).
func (w *watcher) firstSighting() (string, sighting, bool) {
	name, first, ok := "", sighting{}, false
	for n, s := range w.seen {
		if n == "dump" {
			continue
		}
		if !ok || s.step < first.step || s.step == first.step && s.at.Before(first.at) {
			name, first, ok = n, s, true
		}
	}
	return name, first, ok
}

// sidecarAlarm raises the alarm from a sidecar alone when the dump cannot
// show what it saw: the dump has checked the sidecar's step and the one
// after it without an anomaly that lasts; or it has no step left to check
// RankTimeout after the sighting (it stops before, or is behind); or the
// watch is ending (l is nil then). It reports whether it raised it.
func (w *watcher) sidecarAlarm(l *listing, now time.Time, ending bool) bool {
	if w.alarm != nil || w.suspect != nil {
		return false
	}
	name, first, ok := w.firstSighting()
	if !ok {
		return false
	}
	passed := w.next > first.step+1
	stalled := l != nil && !w.dumpAhead(l) && now.Sub(first.at) >= w.opt.RankTimeout
	if !passed && !stalled && !ending {
		return false
	}
	e := Event{Kind: EventAnomaly, Step: first.step, Source: name, LastDumped: w.history.last(), Status: w.history.status(first.step)}
	v := w.sidecarVerdict()
	v, e.Ranks, e.NonFinite, e.Message = w.sidecarFindings(v, e)
	w.alarm, w.alarmStep = v, &first.step
	w.save()
	_, e.Seen = w.firstSource(first.step)
	e.Verdict, e.Complete, e.Unread = v, v.Complete, v.Unread
	w.send(e)
	return true
}

// dumpAhead reports whether the dump has a step folder not checked yet.
func (w *watcher) dumpAhead(l *listing) bool {
	for _, s := range l.steps {
		if s >= w.next {
			return true
		}
	}
	return false
}

// sidecarVerdict is the verdict of an alarm that only a sidecar shows: an
// anomaly without an origin in the dump, with what the watch could not
// read whole. The caller adds what the sidecars say (package evidence).
func (w *watcher) sidecarVerdict() *verdict.Verdict {
	return &verdict.Verdict{
		Schema: verdict.Schema, SchemaRevision: verdict.Revision, Anomaly: true, Complete: len(w.unread) == 0,
		Unread: append([]verdict.UnreadRanks{}, w.unread...), NotDumped: []int{},
		Spread: []verdict.Hop{}, Candidates: []verdict.Candidate{}, Recovered: []verdict.Recovered{}, Suppressed: []verdict.Suppressed{},
		Warnings: []verdict.Warning{}, NextSteps: []string{}, Steps: []verdict.StepState{},
		Scanned: verdict.Scanned{Steps: []int{}, Ranks: []int{}, NotScanned: []int{}, Path: verdict.Path(w.opt.Path)},
	}
}

// stepHistory is the status of every step checked, as runs of consecutive
// step numbers of one status: a few runs for a long run, so that an alarm
// from a sidecar can say what the dump holds of the step it names.
type stepHistory []statusRun

// statusRun is steps from..to, each checked with one status.
type statusRun struct {
	from, to int
	status   string
}

// add records step s, checked after every step recorded before.
func (h *stepHistory) add(s int, status string) {
	if n := len(*h); n > 0 && (*h)[n-1].to == s-1 && (*h)[n-1].status == status {
		(*h)[n-1].to = s
		return
	}
	*h = append(*h, statusRun{from: s, to: s, status: status})
}

// status is how step s was checked, "" when it was not.
func (h stepHistory) status(s int) string {
	for _, r := range h {
		if r.from <= s && s <= r.to {
			return r.status
		}
	}
	return ""
}

// last is the last step checked, nil when none was.
func (h stepHistory) last() *int {
	if len(h) == 0 {
		return nil
	}
	s := h[len(h)-1].to
	return &s
}
