package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/nanhunt/nanhunt/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// Options says what to follow and how.
type Options struct {
	// Path is the msprobe dump_path (step0/ step1/ …), which may not hold
	// any step yet.
	Path string
	// Trace holds the analysis settings (Rules, Jobs, Strict); its Path,
	// Steps, Ranks and Progress are set by the watcher. Jobs 0 means one.
	Trace trace.Options
	// Poll is how often the folder is looked at (0: 500 ms); Settle how
	// long a dump.json must stay unchanged to count as written (0: 2 s).
	Poll, Settle time.Duration
	// From is the first step to check: the steps before it were checked
	// in an earlier run (see State).
	From int
	// UntilStep, when set, stops the watch once that step is checked.
	UntilStep *int
	// IdleExit, when set, stops the watch when nothing in the folder has
	// changed for that long (the job ended).
	IdleExit time.Duration
	// Sidecars are other sources that may show the anomaly first.
	Sidecars []Sidecar
	// KeepGoing keeps following the folder after the alarm, reporting each
	// later step as it completes, until ctx ends, UntilStep or IdleExit.
	KeepGoing bool
	// StateFile, when set, is where the watch keeps its State: read at the
	// start (From and the last clean step come from it), written after
	// every step checked.
	StateFile string
	// Prune, when set, deletes the tensor files of the steps checked clean
	// but the last Prune.Keep.
	Prune *Prune
}

// Sidecar is a source other than the dump: a growing training log, the
// monitor's CSV files.
type Sidecar interface {
	// Name is how events name the source ("log", "monitor").
	Name() string
	// FirstBad reads what the source holds now and returns the first dump
	// step it shows a non-finite value at, when it does. It is called
	// once per poll and should read only when the source has grown.
	FirstBad(ctx context.Context) (step int, ok bool, err error)
}

// Event kinds.
const (
	EventStep      = "step"      // a step was checked and is clean (or, after the alarm, complete)
	EventWaiting   = "waiting"   // a step is waiting for ranks to finish writing it
	EventSuspect   = "suspect"   // a step shows an anomaly; the next dumped step tells whether it lasts
	EventEvidence  = "evidence"  // a sidecar shows a non-finite value
	EventAnomaly   = "anomaly"   // the alarm: the first anomaly that lasts
	EventRecovered = "recovered" // an anomaly that the next dumped step no longer shows
	EventStopped   = "stopped"   // the watch ended without error
)

// Event is one thing the watch reports.
type Event struct {
	Kind    string
	Step    int
	Status  string // step: "clean", or "after the alarm"
	Ranks   []int  // step: the ranks it has; anomaly: the origin ranks
	Missing []int  // waiting: the ranks not finished
	Known   []int  // waiting: every rank seen so far
	// Verdict is the analysis behind an anomaly or a recovery.
	Verdict *verdict.Verdict
	// Source names what showed the anomaly first: "dump" or a sidecar.
	Source string
	// Seen is when each source first showed a non-finite value at or
	// before the alarm's step.
	Seen   map[string]time.Time
	Reason string // stopped: "idle", "until-step" or "interrupted"
	At     time.Time
}

// Run follows the folder until the alarm (or, with KeepGoing, until it
// stops), calling emit for each event. It returns the alarm's verdict, or
// nil when the watch stopped without one. A cancelled ctx stops it with
// an EventStopped ("interrupted") and no error.
func Run(ctx context.Context, opt Options, emit func(Event)) (*verdict.Verdict, error) {
	w := newWatcher(opt, emit)
	if opt.StateFile != "" {
		st, err := LoadState(opt.StateFile, opt.Path)
		if err != nil {
			return nil, err
		}
		if st.Alarm != nil {
			return nil, fmt.Errorf("%s: this watch raised its alarm at step %d already (remove the file to watch again)", opt.StateFile, *st.Alarm)
		}
		w.state = st
		w.next, w.prev = max(opt.From, st.Next), st.Prev
	}
	return w.run(ctx)
}

// watcher is one watch's state: bounded by the steps not yet complete.
type watcher struct {
	opt  Options
	emit func(Event)

	next      int                   // the first step not checked yet
	files     map[[2]int]*fileState // (step, rank) of the steps not checked yet
	ranks     map[int]bool          // every rank seen
	waiting   map[int]string        // step -> the missing ranks last reported
	suspect   *int                  // a step whose own check found an anomaly
	suspectAt time.Time             // when
	prev      *int                  // the last clean step checked
	seen      map[string]sighting   // source -> its first sighting
	alarm     *verdict.Verdict      // once raised
	lastLook  string                // what the folder looked like, to tell idleness
	changed   time.Time             // when it last changed
	state     *State                // saved after each step, when kept
	stateErr  error                 // the first failure to save it
}

type sighting struct {
	step int
	at   time.Time
}

func newWatcher(opt Options, emit func(Event)) *watcher {
	if opt.Poll <= 0 {
		opt.Poll = 500 * time.Millisecond
	}
	if opt.Settle <= 0 {
		opt.Settle = 2 * time.Second
	}
	if opt.Trace.Jobs <= 0 {
		opt.Trace.Jobs = 1
	}
	return &watcher{opt: opt, emit: emit, next: opt.From, files: map[[2]int]*fileState{},
		ranks: map[int]bool{}, waiting: map[int]string{}, seen: map[string]sighting{}, changed: time.Now()}
}

func (w *watcher) send(e Event) {
	e.At = time.Now()
	if w.emit != nil {
		w.emit(e)
	}
}

func (w *watcher) run(ctx context.Context) (*verdict.Verdict, error) {
	tick := time.NewTicker(w.opt.Poll)
	defer tick.Stop()
	for {
		done, err := w.poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				w.send(Event{Kind: EventStopped, Reason: "interrupted"})
				return w.alarm, nil
			}
			return w.alarm, err
		}
		if done != "" {
			w.send(Event{Kind: EventStopped, Reason: done})
			return w.alarm, w.stateErr
		}
		select {
		case <-ctx.Done():
			w.send(Event{Kind: EventStopped, Reason: "interrupted"})
			return w.alarm, nil
		case <-tick.C:
		}
	}
}

// poll looks once, checks every step that became complete, and says why
// the watch ends ("" to go on).
func (w *watcher) poll(ctx context.Context) (string, error) {
	now := time.Now()
	w.readSidecars(ctx, now)
	l, err := look(w.opt.Path, w.next)
	if err != nil {
		return "", fmt.Errorf("watch %s: %w", w.opt.Path, err)
	}
	if sig := l.signature(); sig != w.lastLook {
		w.lastLook, w.changed = sig, now
	}
	for _, s := range l.steps {
		for _, r := range l.ranks[s] {
			w.ranks[r] = true
		}
	}
	for _, s := range l.steps {
		if s < w.next {
			continue
		}
		complete, missing := w.complete(l, s, now)
		if !complete {
			w.reportWaiting(s, missing)
			break
		}
		delete(w.waiting, s)
		stop, err := w.checkStep(ctx, l, s)
		if err != nil {
			return "", err
		}
		if stop != "" {
			return stop, nil
		}
		if w.opt.UntilStep != nil && s >= *w.opt.UntilStep && w.suspect == nil {
			return "until-step", nil
		}
	}
	if w.opt.IdleExit > 0 && now.Sub(w.changed) >= w.opt.IdleExit {
		if w.suspect != nil && w.alarm == nil {
			// the job ended after the suspect step: nothing follows it
			if stop, err := w.confirm(ctx, l, nil); err != nil || stop != "" {
				return stop, err
			}
		}
		return "idle", nil
	}
	return "", nil
}

// signature is what changes when the folder does.
func (l *listing) signature() string {
	b := make([]byte, 0, 64)
	for _, s := range l.steps {
		b = strconv.AppendInt(b, int64(s), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(len(l.ranks[s])), 10)
		b = append(b, ',')
	}
	return string(b)
}

// complete reports whether every rank has finished writing step s, and
// which have not.
func (w *watcher) complete(l *listing, s int, now time.Time) (bool, []int) {
	var missing []int
	has := map[int]bool{}
	for _, r := range l.ranks[s] {
		has[r] = true
	}
	for r := range w.ranks {
		if !has[r] {
			if l.last[r] <= s {
				missing = append(missing, r) // not begun, or between steps
			}
			continue // a later step has it: this one was not dumped there
		}
		key := [2]int{s, r}
		f := w.files[key]
		if f == nil {
			f = &fileState{}
			w.files[key] = f
		}
		exists, stable := f.stable(filepath.Join(l.dirs[s], "rank"+strconv.Itoa(r), "dump.json"), now, w.opt.Settle)
		if exists && f.since == now {
			w.changed = now
		}
		if !stable && !(exists && l.last[r] > s) {
			missing = append(missing, r)
		}
	}
	slices.Sort(missing)
	return len(missing) == 0, missing
}

func (w *watcher) reportWaiting(s int, missing []int) {
	key := fmt.Sprint(missing)
	if w.waiting[s] == key {
		return
	}
	w.waiting[s] = key
	known := make([]int, 0, len(w.ranks))
	for r := range w.ranks {
		known = append(known, r)
	}
	slices.Sort(known)
	w.send(Event{Kind: EventWaiting, Step: s, Missing: missing, Known: known})
}

// checkStep analyses a complete step: alone at first; as the confirmation
// of a suspect step when one is waiting.
func (w *watcher) checkStep(ctx context.Context, l *listing, s int) (string, error) {
	if w.alarm != nil {
		w.done(s)
		w.send(Event{Kind: EventStep, Step: s, Status: "after the alarm", Ranks: l.ranks[s]})
		return "", nil
	}
	if w.suspect != nil {
		return w.confirm(ctx, l, &s)
	}
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Strict, opt.Progress = l.dirs[s], nil, nil, true, nil
	v, err := trace.Run(ctx, opt)
	if err != nil {
		var unreadable *trace.UnreadableError
		if errors.As(err, &unreadable) && !w.settledLong(l, s) {
			return "", nil // every file torn: look again
		}
		if errors.As(err, &unreadable) {
			w.done(s) // nothing of it can be read: go on
			return "", nil
		}
		return "", err
	}
	if torn := w.torn(v, l, s); torn {
		return "", nil
	}
	if !v.Anomaly {
		w.prev = &s
		w.done(s)
		w.send(Event{Kind: EventStep, Step: s, Status: "clean", Ranks: l.ranks[s]})
		if w.opt.Prune != nil {
			w.opt.Prune.stepClean(l.dirs[s])
		}
		return "", nil
	}
	w.suspect, w.suspectAt = &s, time.Now()
	w.markSeen("dump", s, w.suspectAt)
	w.next = s + 1
	w.send(Event{Kind: EventSuspect, Step: s, Verdict: v})
	if w.opt.Trace.Strict {
		return w.confirm(ctx, l, nil) // every anomaly counts: no need to wait
	}
	return "", nil
}

// torn reports a rank of step s whose file is damaged while that rank has
// not begun a later step and the file has not stayed unchanged long: a
// file caught in the middle of a rewrite. Its state is forgotten, so that
// it must settle again.
func (w *watcher) torn(v *verdict.Verdict, l *listing, s int) bool {
	torn := false
	for _, st := range v.Steps {
		if st.Step != s {
			continue
		}
		for _, r := range st.Damaged {
			if l.last[r] > s {
				continue // msprobe has moved on: the damage stays
			}
			f := w.files[[2]int{s, r}]
			if f != nil && time.Since(f.since) < 4*w.opt.Settle {
				torn = true
			}
		}
	}
	return torn
}

// settledLong reports whether every file of step s has been unchanged for
// four settle periods: what is damaged then stays damaged.
func (w *watcher) settledLong(l *listing, s int) bool {
	for _, r := range l.ranks[s] {
		if f := w.files[[2]int{s, r}]; f != nil && time.Since(f.since) < 4*w.opt.Settle && l.last[r] <= s {
			return false
		}
	}
	return true
}

// done forgets a checked step, and saves the state when it is kept.
func (w *watcher) done(s int) {
	w.next = s + 1
	for key := range w.files {
		if key[0] <= s {
			delete(w.files, key)
		}
	}
	w.save()
}

func (w *watcher) save() {
	if w.state == nil {
		return
	}
	w.state.Next, w.state.Prev = w.next, w.prev
	if w.alarm != nil && w.alarm.Origin != nil {
		step := w.alarm.Origin.Step
		w.state.Alarm = &step
	}
	if err := w.state.Save(w.opt.StateFile); err != nil && w.stateErr == nil {
		w.stateErr = err
	}
}

// confirm reads the suspect step with the step before it and the step
// after (next, nil when there is none) the way an offline trace does.
func (w *watcher) confirm(ctx context.Context, l *listing, next *int) (string, error) {
	s := *w.suspect
	steps := map[int]bool{s: true}
	if w.prev != nil {
		steps[*w.prev] = true
	}
	if next != nil {
		steps[*next] = true
	}
	opt := w.opt.Trace
	opt.Path, opt.Steps, opt.Ranks, opt.Progress = w.opt.Path, steps, nil, nil
	v, err := trace.Run(ctx, opt)
	if err != nil {
		return "", err
	}
	w.suspect = nil
	if v.Anomaly && v.Origin != nil {
		w.alarm = v
		if next != nil {
			w.done(*next)
		} else {
			w.done(s)
		}
		source, seen := w.firstSource(v.Origin.Step)
		w.send(Event{Kind: EventAnomaly, Step: v.Origin.Step, Ranks: v.Origin.Ranks, Verdict: v, Source: source, Seen: seen})
		if !w.opt.KeepGoing {
			return "anomaly", nil
		}
		return "", nil
	}
	// the next step no longer shows it: an overflow the loss scaler
	// skipped, a batch that was dropped; the next step is checked on its
	// own, as offline
	w.prev = &s
	w.done(s)
	w.send(Event{Kind: EventRecovered, Step: s, Verdict: v})
	return "", nil
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

// readSidecars asks each sidecar what it holds now.
func (w *watcher) readSidecars(ctx context.Context, now time.Time) {
	for _, sc := range w.opt.Sidecars {
		step, ok, err := sc.FirstBad(ctx)
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
