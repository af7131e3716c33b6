package watch

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/nanhunt/nanhunt/internal/dumplayout"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// aheadWatch is what the warnings before the NaN need across steps: each
// rank's folders of the last aheadKept dumped steps, and the warnings
// already given.
type aheadWatch struct {
	pol    *policy.Policy               // the rule set (nil: the built-in one)
	dirs   map[int][]dumplayout.RankDir // rank -> its folders of the last steps, oldest first
	warned map[aheadKey]bool
	seeded bool // the steps before the first one read are in dirs
}

// aheadKept is how many dumped steps of a rank are remembered: the
// policy.AheadShown a series reaches back, and one more, as the alarm's
// warnings are judged at the step before the suspect one.
const aheadKept = policy.AheadShown + 1

// aheadKey is what a warning is given once for: a call's statistic of one
// tensor.
type aheadKey struct{ op, tensor, stat string }

// remember adds the rank folders of a step folder the watch has read,
// keeping each rank's last aheadKept. The first time, the steps
// before it that the folder holds (a watch resumed from its state, or
// started late) are added first, so that its first warnings have their
// series too.
func (a *aheadWatch) remember(root, stepDir string, step int) {
	if a.dirs == nil {
		a.dirs, a.warned = map[int][]dumplayout.RankDir{}, map[aheadKey]bool{}
	}
	if !a.seeded {
		a.seeded = true
		for _, d := range stepsBefore(root, step, policy.AheadShown-1) {
			a.add(d)
		}
	}
	a.add(stepDir)
}

// add records the rank folders of one step folder.
func (a *aheadWatch) add(stepDir string) {
	l, err := dumplayout.Discover(stepDir)
	if err != nil {
		return // gone or unreadable: the step's own check says so
	}
	for _, d := range l.Dirs {
		if d.Dump == "" {
			continue
		}
		rd := a.dirs[d.Rank]
		if n := len(rd); n > 0 && rd[n-1].Step >= d.Step {
			continue // read already
		}
		rd = append(rd, d)
		if n := len(rd); n > aheadKept {
			rd = slices.Delete(rd, 0, n-aheadKept)
		}
		a.dirs[d.Rank] = rd
	}
}

// stepsBefore are the last n step folders of root before step, oldest
// first.
func stepsBefore(root string, step, n int) []string {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var steps []int
	names := map[int]string{}
	for _, e := range ents {
		s, ok := dumplayout.Numbered(e.Name(), "step")
		if ok && s < step && dumplayout.IsFolder(root, e) {
			steps = append(steps, s)
			names[s] = filepath.Join(root, e.Name())
		}
	}
	slices.Sort(steps)
	steps = steps[max(0, len(steps)-n):]
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = names[s]
	}
	return out
}

// judge is the warnings judged at step (trace.AheadAt on the folders
// remembered) that were not given before: the series of those given are
// not read again. A file it cannot read is left out: the step's own check
// reports what it could not read.
func (a *aheadWatch) judge(ctx context.Context, step, jobs int) []verdict.Ahead {
	found, _ := trace.AheadAt(ctx, a.folders(), step, a.policy(), jobs, func(op, tensor, stat string) bool {
		return a.warned[aheadKey{op, tensor, stat}]
	})
	var fresh []verdict.Ahead
	for _, w := range found {
		k := aheadKey{w.Op, w.Tensor, w.Stat}
		if !a.warned[k] {
			a.warned[k] = true
			fresh = append(fresh, w)
		}
	}
	return fresh
}

// folders are the rank folders remembered.
func (a *aheadWatch) folders() []dumplayout.RankDir {
	var dirs []dumplayout.RankDir
	for _, rd := range a.dirs {
		dirs = append(dirs, rd...)
	}
	return dirs
}

// alarmAhead gives the verdict of an alarm the dump shows (read from
// steps) the warnings an offline trace gives it: all those judged at the
// last of its steps before the origin's (given or not), or none when it
// has none.
func (a *aheadWatch) alarmAhead(ctx context.Context, v *verdict.Verdict, steps map[int]bool, jobs int) {
	judged, ok := 0, false
	for s := range steps {
		if s < v.Origin.Step && (!ok || s > judged) {
			judged, ok = s, true
		}
	}
	v.Ahead = []verdict.Ahead{}
	if ok {
		v.Ahead, _ = trace.AheadAt(ctx, a.folders(), judged, a.policy(), jobs, nil)
	}
}

// warnAhead reports the warnings before the NaN first judged at step s, a
// step checked without an anomaly while no alarm was raised: one
// EventWarning each, with the warning in Ahead.
func (w *watcher) warnAhead(ctx context.Context, s int) {
	for _, a := range w.ahead.judge(ctx, s, w.opt.Trace.Jobs) {
		w.send(Event{Kind: EventWarning, Step: s, Source: a.Source, Message: a.Text, Ahead: &a})
	}
}

// policy is the rule set the warnings are judged with.
func (a *aheadWatch) policy() *policy.Policy {
	if a.pol == nil {
		a.pol = policy.Default()
	}
	return a.pol
}
