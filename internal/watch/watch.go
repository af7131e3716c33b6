package watch

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// Options says what to follow and how.
type Options struct {
	// Path is the msprobe dump_path (step0/ step1/ …), which may not hold
	// any step yet.
	Path string
	// Trace holds the analysis settings (Rules, Jobs, Strict); its Path,
	// Steps, Ranks, Expected and Progress are set by the watcher. Jobs 0
	// means one.
	Trace trace.Options
	// Poll is how often the folder is looked at (0: 500 ms); Settle how
	// long a dump.json must stay unchanged to count as written (0: 2 s).
	Poll, Settle time.Duration
	// RankTimeout is how long a step that some ranks have finished waits
	// for the others, counted from when the latest of them finished it
	// (0: DefaultRankTimeouts settle periods). A rank that has not
	// finished the step by then never finished it: the step is judged on
	// the ranks present and is not read whole, and later steps do not wait
	// for that rank again until it writes a later step.
	RankTimeout time.Duration
	// Expected are ranks of the job known before their folders appear
	// (the world size): each is expected from the first step on, with the
	// ranks seen (those of Trace.Ranks, when it is set).
	Expected []int
	// From is the first step to check: the steps before it were checked
	// in an earlier run (see State).
	From int
	// UntilStep, when set, stops the watch once that step is checked.
	UntilStep *int
	// IdleExit, when set, stops the watch when nothing in the folder has
	// changed for that long (the job ended); the steps not finished then
	// are judged on what they hold.
	IdleExit time.Duration
	// Sources are the growing training logs and monitor output to follow:
	// Run follows them as the Sidecars "log" and "monitor", and the
	// verdict of an alarm that only they show holds what they said.
	Sources sources.Inputs
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
	// Plan shapes and sizes the plan of an alarm's verdict; without a
	// Measure, the plan is sized from the dump watched (plan.FromDump).
	Plan plan.Options
}

// DefaultRankTimeouts is the rank timeout in settle periods: a rank whose
// dump.json is written up to three settle periods after the others' still
// counts, as the torn files of a rewrite are waited for that long too.
const DefaultRankTimeouts = 4

// Sidecar is a source other than the dump: a growing training log, the
// monitor's CSV files.
type Sidecar interface {
	// Name is how events name the source ("log", "monitor").
	Name() string
	// FirstBad reads what the source holds now and returns the first dump
	// step it shows a non-finite value at, when it does. It is called
	// once per poll and should read only when the source has grown. err
	// is why its last read failed: the watch reports it (EventWarning,
	// and a warning in the alarm's verdict) until a call returns nil.
	FirstBad(ctx context.Context) (step int, ok bool, err error)
}

// reader is a Sidecar that says what its last read found, for the verdict
// of an alarm that only the sidecars show.
type reader interface {
	Last() sources.Reading
}

// Event kinds.
const (
	EventStep      = "step"      // a step was checked: clean, incomplete, unread (or, after the alarm, complete)
	EventWaiting   = "waiting"   // a step is waiting for ranks to finish writing it
	EventSuspect   = "suspect"   // a step shows an anomaly; the next dumped step tells whether it lasts
	EventEvidence  = "evidence"  // a sidecar shows a non-finite value
	EventAnomaly   = "anomaly"   // the alarm: the first anomaly that lasts, or one a sidecar alone shows
	EventRecovered = "recovered" // an anomaly that the next dumped step no longer shows
	EventStopped   = "stopped"   // the watch ended without error
	EventWarning   = "warning"   // a sidecar could not be read (Message says why), or a statistic heads for overflow (Ahead)
)

// Step statuses of an EventStep.
const (
	StatusClean      = "clean"           // every expected rank read whole, no anomaly
	StatusIncomplete = "incomplete"      // some expected ranks not read whole, no anomaly in the others
	StatusUnread     = "unread"          // no expected rank read whole
	StatusAfterAlarm = "after the alarm" // complete, after the alarm (KeepGoing)
)

// Event is one thing the watch reports.
type Event struct {
	Kind   string
	Step   int
	Status string // step: one of the Status values
	// Ranks: step: the ranks read whole; anomaly: the origin ranks.
	Ranks   []int
	Missing []int // waiting: the ranks not finished
	Known   []int // waiting: every rank seen so far
	// Complete and Unread: step: whether every expected rank of it was
	// read whole, and the others (a step after the alarm is not read);
	// anomaly: the verdict's; stopped: of every step checked (and the
	// alarm's verdict).
	Complete bool
	Unread   []verdict.UnreadRanks
	// Late: step: rank-steps whose folders appeared after the watch had
	// passed the step (ranks first seen then, or a step folder that
	// appeared after later ones), read then; Ranks, Complete and Unread
	// are about them alone.
	Late bool
	// Verdict is the analysis behind an anomaly or a recovery. The
	// verdict of an anomaly that only a sidecar shows has no origin.
	Verdict *verdict.Verdict
	// Source names what showed the anomaly first: "dump" or a sidecar.
	Source string
	// Seen is when each source first showed a non-finite value at or
	// before the alarm's step.
	Seen map[string]time.Time
	// LastDumped: anomaly from a sidecar alone: the last dump step
	// checked (nil: none); its Status is then how the dump's step of the
	// alarm was checked ("" when it was not: not dumped, or not yet).
	LastDumped *int
	Reason     string // stopped: "idle", "until-step", "interrupted" or "anomaly"
	// Message: warning: why the sidecar could not be read; anomaly from
	// a sidecar alone: the alarm in words ("the log shows NaN at step 2;
	// the dump stops at step 1: dump step 2"), also the verdict's first
	// next step.
	Message string
	// NonFinite: anomaly from a sidecar alone: what it shows ("nan",
	// "inf"; "" when it does not tell).
	NonFinite string
	// Ahead: warning: a statistic heading for overflow (README "How it
	// decides", 12), judged at Step, a step checked without an anomaly
	// before any alarm; given once per call, tensor and statistic. Its
	// Source is "dump" and Message its Text. Nil for a sidecar's warning.
	Ahead *verdict.Ahead
	At    time.Time
}

// Result is how a watch ended.
type Result struct {
	// Alarm is the verdict of the alarm; nil when there was none.
	Alarm *verdict.Verdict
	// Complete is true when every expected rank-step of the steps checked
	// was read whole; Unread lists the others. A watch without an alarm
	// that is not complete is no clean bill (exit status 3).
	Complete bool
	Unread   []verdict.UnreadRanks
}

// Run follows the folder until the alarm (or, with KeepGoing, until it
// stops), calling emit for each event, and says how it ended. A cancelled
// ctx stops it with an EventStopped ("interrupted") and no error.
func Run(ctx context.Context, opt Options, emit func(Event)) (Result, error) {
	w := newWatcher(opt, emit)
	if opt.StateFile != "" {
		st, err := LoadState(opt.StateFile, opt.Path)
		if err != nil {
			return Result{}, err
		}
		if st.Alarm != nil {
			return Result{}, fmt.Errorf("%s: this watch raised its alarm at step %d already (remove the file to watch again)", opt.StateFile, *st.Alarm)
		}
		w.state = st
		w.next, w.prev = max(opt.From, st.Next), st.Prev
		w.resume = resumePoint{next: w.next, prev: st.Prev}
	}
	w.start = w.next
	for _, r := range opt.Expected {
		if opt.Trace.Ranks == nil || opt.Trace.Ranks[r] {
			w.ranks[r] = true
		}
	}
	if w.next > 0 {
		for _, r := range ranksBefore(opt.Path, w.next) {
			w.ranks[r] = true
		}
	}
	err := w.run(ctx)
	return w.result(), err
}

// watcher is one watch's state: bounded by the steps not yet complete
// (and a row per rank-step it could not read whole).
type watcher struct {
	opt  Options
	emit func(Event)

	start      int                   // the first step this watch answers for (From, or the state's)
	next       int                   // the first step not checked yet
	passed     stepSet               // the steps checked (a step folder before next that is not is late)
	lateFiles  map[[2]int]*fileState // (step, rank) of the late steps and rank-steps not read yet
	lateRanks  map[[2]int]string     // (step, rank) -> step folder: rank-steps of ranks first seen after their step was checked, not read yet
	files      map[[2]int]*fileState // (step, rank) of the steps not checked yet
	ranks      map[int]bool          // every rank seen
	waiting    map[int]string        // step -> the missing ranks last reported
	clocks     map[int]stepClock     // step -> how far its ranks have got
	gone       map[int]bool          // ranks that never finished a step and have written no later one since
	unfinished map[int][]int         // step -> its ranks that never finished it, while a verdict may read it
	ending     bool                  // the job ended (IdleExit): steps are judged on what they hold, torn or not
	suspect    *int                  // a step whose own check found an anomaly
	suspectAt  time.Time             // when
	prev       *int                  // the last step checked without an anomaly
	history    stepHistory           // how each step checked was found
	unread     []verdict.UnreadRanks // the rank-steps not read whole, of every step checked
	seen       map[string]sighting   // source -> its first sighting
	failed     map[string]error      // sidecar -> why its last read failed
	alarm      *verdict.Verdict      // once raised
	alarmStep  *int                  // the step it names
	lastLook   string                // what the folder looked like, to tell idleness
	changed    time.Time             // when it last changed
	resume     resumePoint           // where a resumed watch starts
	state      *State                // saved after each step, when kept
	stateErr   error                 // the first failure to save it
	ahead      aheadWatch            // the warnings before the NaN
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
	if opt.RankTimeout <= 0 {
		opt.RankTimeout = DefaultRankTimeouts * opt.Settle
	}
	if opt.Trace.Jobs <= 0 {
		opt.Trace.Jobs = 1
	}
	opt.Sidecars = append(followers(opt.Sources), opt.Sidecars...)
	w := &watcher{opt: opt, emit: emit, start: opt.From, next: opt.From, files: map[[2]int]*fileState{},
		ranks: map[int]bool{}, waiting: map[int]string{}, clocks: map[int]stepClock{}, gone: map[int]bool{},
		lateFiles: map[[2]int]*fileState{}, lateRanks: map[[2]int]string{},
		unfinished: map[int][]int{}, seen: map[string]sighting{}, failed: map[string]error{}, changed: time.Now(), resume: resumePoint{next: opt.From}}
	if pol, err := policy.New(opt.Trace.Rules); err == nil {
		w.ahead.pol = pol // a rule set that does not compile fails the steps' traces, which say why
	}
	return w
}

func (w *watcher) send(e Event) {
	e.At = time.Now()
	if w.emit != nil {
		w.emit(e)
	}
}

// result is how the watch ended, for Run.
func (w *watcher) result() Result {
	return Result{Alarm: w.alarm, Complete: len(w.unread) == 0, Unread: w.unread}
}

// stop ends the watch: an alarm a sidecar alone holds is raised first (the
// dump will not show it now; none once an alarm was raised), then
// EventStopped says why it ended and what was not read whole.
func (w *watcher) stop(reason string) {
	w.lateUnread()
	w.sidecarAlarm(nil, time.Now(), true)
	w.send(Event{Kind: EventStopped, Reason: reason, Complete: len(w.unread) == 0, Unread: w.unread})
}

func (w *watcher) run(ctx context.Context) error {
	tick := time.NewTicker(w.opt.Poll)
	defer tick.Stop()
	for {
		done, err := w.poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return w.interrupted(ctx)
			}
			return err
		}
		if done != "" {
			w.stop(done)
			return w.stateErr
		}
		select {
		case <-ctx.Done():
			return w.interrupted(ctx)
		case <-tick.C:
		}
	}
}

// interrupted ends a watch whose ctx was cancelled. A suspect step is
// confirmed with what the folder holds (as when the job ends): left
// alone, an anomaly the dump showed would end in no alarm. The steps the
// folder holds that were not checked are not read whole (notChecked).
func (w *watcher) interrupted(ctx context.Context) error {
	if w.suspect != nil && w.alarm == nil {
		stop, err := w.confirm(context.WithoutCancel(ctx), nil)
		if err != nil {
			return err
		}
		if stop != "" {
			w.stop(stop)
			return w.stateErr
		}
	}
	w.notChecked()
	w.stop("interrupted")
	return w.stateErr
}

// poll looks once, checks every step that became ready, and says why the
// watch ends ("" to go on).
func (w *watcher) poll(ctx context.Context) (string, error) {
	now := time.Now()
	w.readSidecars(ctx, now)
	l, err := look(w.opt.Path, w.next, w.isLate)
	if err != nil {
		return "", fmt.Errorf("watch %s: %w", w.opt.Path, err)
	}
	if sig := l.signature(); sig != w.lastLook {
		w.lastLook, w.changed = sig, now
	}
	w.learnRanks(l)
	idle := w.opt.IdleExit > 0 && now.Sub(w.changed) >= w.opt.IdleExit
	w.ending = idle
	if stop, err := w.readLateRanks(ctx, l, now); err != nil || stop != "" {
		return stop, err
	}
	if stop, err := w.readLateSteps(ctx, l, now, idle); err != nil || stop != "" {
		return stop, err
	}
	for _, s := range l.steps {
		if s < w.next {
			continue
		}
		rd := w.readiness(l, s, now, idle)
		if !rd.ready {
			w.reportWaiting(s, rd.pending)
			break
		}
		delete(w.waiting, s)
		stop, retry, err := w.checkStep(ctx, l, s, rd.unfinished)
		if err != nil {
			return "", err
		}
		if stop != "" {
			return stop, nil
		}
		if retry {
			break // read again at the next look, before any later step
		}
		if w.opt.UntilStep != nil && s >= *w.opt.UntilStep && w.suspect == nil {
			return "until-step", nil
		}
	}
	if w.sidecarAlarm(l, now, false) && !w.opt.KeepGoing {
		return "anomaly", nil
	}
	if idle {
		if w.suspect != nil && w.alarm == nil {
			// the job ended after the suspect step: nothing follows it
			if stop, err := w.confirm(ctx, nil); err != nil || stop != "" {
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
	for _, s := range l.late {
		b = append(b, 'L')
		b = strconv.AppendInt(b, int64(s), 10)
		b = append(b, ',')
	}
	return string(b)
}
