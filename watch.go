package nanhunt

import (
	"context"
	"fmt"
	"time"

	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// WatchInputs is what Watch follows and how. Dump is required.
type WatchInputs struct {
	// Dump is the dump_path of the running job (step0/ step1/ …): a
	// folder, which may hold no step yet.
	Dump string
	// Ranks restricts the watch to these ranks (nil: all).
	Ranks map[int]bool
	// WorldSize, when set, is the job's number of ranks: each of 0 to
	// WorldSize-1 (among Ranks) is expected from the first step, before
	// its folders appear (0: the ranks seen so far).
	WorldSize int
	// RulesFile and Strict are as for Run; Jobs bounds the files read at
	// once (0: one, to stay out of training's way).
	RulesFile string
	Jobs      int
	Strict    bool

	// Log and Monitor are followed as they grow: the first non-finite
	// value they show is an "evidence" event, and they may raise the
	// alarm alone when the dump cannot show it. A file that is missing or
	// cannot be read is a "warning" event, not an error.
	Log     LogInputs
	Monitor MonitorInputs
	// Plan shapes the plan of the alarm's verdict, which is sized from
	// the dump.
	Plan PlanOptions

	// Poll is how often the folder is looked at (0: 500 ms); Settle how
	// long a dump.json must stay unchanged to count as written (0: 2 s).
	Poll, Settle time.Duration
	// RankTimeout is how long a step that some ranks have finished waits
	// for the others after it last moved on; then it is judged without
	// them (0: four Settle periods).
	RankTimeout time.Duration
	// IdleExit, when set, stops the watch once the folder has not changed
	// for that long; the steps not finished then are judged on what they
	// hold.
	IdleExit time.Duration
	// UntilStep, when set, stops the watch once that step is checked.
	UntilStep *int
	// KeepGoing goes on after the alarm, reporting each later step as it
	// completes, until ctx ends, UntilStep or IdleExit.
	KeepGoing bool

	// OutDir, when set, is the folder the caller writes the alarm's files
	// to. Watch makes it and holds a lock on OutDir/watch.lock while it
	// runs, so that a second watch on it is refused at once; it removes
	// the folder at the end when it made it and nothing was written there.
	OutDir string
	// StateFile, when set, keeps what was checked, so that a new watch
	// resumes there: read at the start, written after every step checked.
	// It must be a regular file, or none yet; Watch holds a lock beside it
	// (STATE.lock) while it runs.
	StateFile string
	// PruneKeep, above 0, deletes the tensor files (dump_tensor_data) of
	// the steps checked clean but the last PruneKeep, and lists what it
	// deleted in OutDir/pruned.log; it needs OutDir. It is the one way
	// Watch writes inside the dump.
	PruneKeep int

	// Started, when set, is called once the rules are read and the locks
	// taken, just before the watch reads its state file and first looks at
	// the folder.
	Started func()
}

// WatchEvent is one thing a watch reports, in the order it happens. Each
// field names the member of the "nanhunt watch --format jsonl" line that
// carries it (README "Watch a running job").
type WatchEvent struct {
	// Kind is the line's "event": "step" (a step was checked), "waiting"
	// (a step waits for ranks to finish writing it), "suspect" (a step
	// shows an anomaly; the next dumped step tells whether it lasts),
	// "evidence" (the log or the monitor shows a non-finite value),
	// "anomaly" (the alarm), "recovered" (the next dumped step no longer
	// shows it), "warning" (a statistic heading for overflow, Ahead; or a
	// log or monitor that could not be read, Message) or "stopped" (the
	// watch ended; the last event).
	Kind string
	// Step ("step") is the step the event is about; none for "stopped".
	Step int
	// Status ("status"): step: "clean", "incomplete", "unread" or "after
	// the alarm"; anomaly from the log or the monitor alone: how the
	// dump's step of the alarm was checked ("" when it was not).
	Status string
	// Ranks ("ranks"): step: the ranks read whole; anomaly: the origin's
	// ranks, or those the log or the monitor names.
	Ranks []int
	// Missing ("missing"): waiting: the ranks that have not finished the
	// step; Known: every rank seen so far.
	Missing []int
	Known   []int
	// Complete and Unread ("complete", "unread"): step: whether every
	// expected rank of it was read whole, and the rank-steps that were
	// not; anomaly: the verdict's; stopped: of every step checked.
	Complete bool
	Unread   []verdict.UnreadRanks
	// Late ("late"): step: rank-steps whose folders appeared after the
	// watch had passed the step (ranks first seen then, or a step folder
	// that appeared after later ones), read then; Ranks, Complete and
	// Unread are about them alone.
	Late bool
	// Verdict is the analysis behind a suspect step, a recovery or the
	// alarm (its "op", "kind" and "stage" are the origin's). The verdict
	// of an alarm the log or the monitor alone raised has no origin.
	Verdict *verdict.Verdict
	// Source ("source") is what showed the anomaly first: "dump", "log"
	// or "monitor"; for a warning, what it is about.
	Source string
	// Seen ("seen_by") is when each source first showed a non-finite
	// value at or before the alarm's step.
	Seen map[string]time.Time
	// LastDumped ("last_dump_step"): anomaly from the log or the monitor
	// alone: the last dump step checked (nil: none).
	LastDumped *int
	// Reason ("reason"): stopped: "idle", "until-step", "interrupted" or
	// "anomaly".
	Reason string
	// Message ("message"): warning: what is wrong; anomaly from the log or
	// the monitor alone: the alarm in words ("the log shows NaN at step
	// 2; the dump stops at step 1: dump step 2").
	Message string
	// NonFinite ("kind"): anomaly from the log or the monitor alone: what
	// it shows ("nan", "inf"; "" when it does not tell).
	NonFinite string
	// Ahead ("ahead"): warning: the statistic heading for overflow (the
	// verdict's "ahead" entry), judged at Step; given once per call,
	// tensor and statistic.
	Ahead *verdict.Ahead
	// At ("time") is when the event happened.
	At time.Time
}

// WatchResult is how a watch ended.
type WatchResult struct {
	// Alarm is the verdict of the alarm; nil when there was none.
	Alarm *verdict.Verdict
	// Complete is true when every expected rank-step of the steps checked
	// was read whole; Unread lists the others. A watch without an alarm
	// that is not complete is no clean bill.
	Complete bool
	Unread   []verdict.UnreadRanks
}

// Watch follows the dump_path of a running msprobe job: each step is
// analysed, with the rules of Run, once msprobe has finished writing it,
// and the alarm is raised at the first anomaly that lasts (or one the log
// or the monitor alone shows). onEvent, when set, receives each event as
// it happens, on the goroutine that called Watch. Watch returns after the
// alarm (unless KeepGoing), at UntilStep or IdleExit, or when ctx ends
// (a "stopped" event, "interrupted", and no error: a step that waits to
// be confirmed is confirmed first).
//
// It fails before looking at the folder when an input is unusable (the
// rules file, the state file, a lock another watch holds); its errors
// name OutDir and StateFile as "nanhunt watch" names them (-o,
// --state). A state file that could not be written after a step is
// returned when the watch ends, the watch having gone on without it.
func Watch(ctx context.Context, in WatchInputs, onEvent func(WatchEvent)) (WatchResult, error) {
	opt, err := in.options()
	if err != nil {
		return WatchResult{}, err
	}
	locks, err := lockWatch(in.OutDir, in.StateFile)
	if err != nil {
		return WatchResult{}, err
	}
	defer locks.release()
	if in.PruneKeep > 0 {
		log, err := openPruneLog(in.OutDir)
		if err != nil {
			return WatchResult{}, err
		}
		defer log.Close()
		opt.Prune = &watch.Prune{Keep: in.PruneKeep, Log: log}
	}
	if in.Started != nil {
		in.Started()
	}
	res, err := watch.Run(ctx, opt, func(e watch.Event) {
		if onEvent != nil {
			onEvent(WatchEvent(e))
		}
	})
	return WatchResult(res), err
}

// options are the watch's options: the state file checked, the rules
// read, the dump's analysis as Run sets it (with the timeline an alarm's
// page shows), the followers of the log and the monitor, and the plan.
func (in WatchInputs) options() (watch.Options, error) {
	if in.Dump == "" {
		return watch.Options{}, fmt.Errorf("nothing to watch: give the dump_path of the running job")
	}
	if in.PruneKeep > 0 && in.OutDir == "" {
		return watch.Options{}, fmt.Errorf("PruneKeep %d without OutDir: pruning lists what it deletes in OutDir/pruned.log", in.PruneKeep)
	}
	if in.StateFile != "" {
		if err := watch.CheckStateFile(in.StateFile); err != nil {
			return watch.Options{}, fmt.Errorf("--state %s: %w", in.StateFile, err)
		}
	}
	topt, err := Inputs{Dump: in.Dump, Ranks: in.Ranks, RulesFile: in.RulesFile, Jobs: in.Jobs, Strict: in.Strict, Timeline: true, WorldSize: in.WorldSize}.traceOptions()
	if err != nil {
		return watch.Options{}, err
	}
	return watch.Options{
		Path: in.Dump, Trace: topt, Poll: in.Poll, Settle: in.Settle, RankTimeout: in.RankTimeout, UntilStep: in.UntilStep, IdleExit: in.IdleExit,
		Expected:  topt.Expected,
		Sources:   sources.Inputs{Log: sources.Log(in.Log), Monitor: sources.Monitor(in.Monitor)},
		KeepGoing: in.KeepGoing, StateFile: in.StateFile, Plan: planOptions(in.Plan, in.Dump, nil),
	}, nil
}
