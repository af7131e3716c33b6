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
// rank's folders of the last dumped steps (the series of a warning reach
// back policy.AheadShown of them), and the warnings already given.
type aheadWatch struct {
	dirs   map[int][]dumplayout.RankDir // rank -> its folders of the last steps, oldest first
	warned map[aheadKey]bool
	seeded bool // the steps before the first one read are in dirs
	// judged is the last step judged and found every warning judged at it
	// (given before or not), for the verdict of an alarm that follows
	judged *int
	found  []verdict.Ahead
}

// aheadKey is what a warning is given once for: a call's statistic of one
// tensor.
type aheadKey struct{ op, tensor, stat string }

// remember adds the rank folders of a step folder the watch has read,
// keeping each rank's last policy.AheadShown. The first time, the steps
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
		if n := len(rd); n > policy.AheadShown {
			rd = slices.Delete(rd, 0, n-policy.AheadShown)
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
// remembered) that were not given before. A file it cannot read is left
// out: the step's own check reports what it could not read.
func (a *aheadWatch) judge(ctx context.Context, step, jobs int) []verdict.Ahead {
	var fresh []verdict.Ahead
	for _, w := range a.at(ctx, step, jobs) {
		k := aheadKey{w.Op, w.Tensor, w.Stat}
		if !a.warned[k] {
			a.warned[k] = true
			fresh = append(fresh, w)
		}
	}
	return fresh
}

// at is every warning judged at step, from the folders remembered (the
// last step judged is not judged again).
func (a *aheadWatch) at(ctx context.Context, step, jobs int) []verdict.Ahead {
	if a.judged != nil && *a.judged == step {
		return a.found
	}
	var dirs []dumplayout.RankDir
	for _, rd := range a.dirs {
		dirs = append(dirs, rd...)
	}
	found, _ := trace.AheadAt(ctx, dirs, step, jobs)
	if ctx.Err() == nil {
		a.judged, a.found = &step, found
	}
	return found
}

// alarmAhead gives the verdict of an alarm the dump shows (read from
// steps) the warnings an offline trace gives it: those judged at the last
// of its steps before the origin's, or none when it has none.
func (a *aheadWatch) alarmAhead(ctx context.Context, v *verdict.Verdict, steps map[int]bool, jobs int) {
	judged, ok := 0, false
	for s := range steps {
		if s < v.Origin.Step && (!ok || s > judged) {
			judged, ok = s, true
		}
	}
	v.Ahead = []verdict.Ahead{}
	if ok {
		v.Ahead = slices.Clone(a.at(ctx, judged, jobs))
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
