package watch

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// lateWrite is one move of a scripted replay: the rank folders of a step
// put in place at once (a rename of a finished copy; none: the step
// folder alone), then a pause, or a wait until the watch has reported
// step checked (a step event, when checked is set).
type lateWrite struct {
	step    int
	ranks   []int
	pause   time.Duration
	checked *int
	// flushes, when set, writes each rank's dump.json in place the way
	// msprobe rewrites it: the first cut of it, a longer one, then whole
	// with its side files, flushes apart
	flushes time.Duration
}

func checkedStep(s int) *int { return &s }

// scriptedReplay puts the rank folders of the finished run src into dst
// in the order of moves.
func scriptedReplay(t *testing.T, src, dst string, moves []lateWrite, rec *recorder) {
	t.Helper()
	stage := t.TempDir()
	for _, m := range moves {
		step := filepath.Join(dst, "step"+strconv.Itoa(m.step))
		if err := os.MkdirAll(step, 0o755); err != nil {
			t.Error(err)
			return
		}
		for _, r := range m.ranks {
			rank := "rank" + strconv.Itoa(r)
			if m.flushes > 0 {
				flushRank(t, filepath.Join(src, "step"+strconv.Itoa(m.step), rank), filepath.Join(step, rank), m.flushes)
				continue
			}
			staged := filepath.Join(stage, "staged-"+strconv.Itoa(m.step)+"-"+rank)
			if err := os.CopyFS(staged, os.DirFS(filepath.Join(src, "step"+strconv.Itoa(m.step), rank))); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(staged, filepath.Join(step, rank)); err != nil {
				t.Error(err)
				return
			}
		}
		time.Sleep(m.pause)
		for deadline := time.Now().Add(20 * time.Second); m.checked != nil && !rec.checked(*m.checked); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("step %d not checked in 20 s", *m.checked)
				return
			}
		}
	}
}

// flushRank writes the rank folder from as to, its dump.json in three
// flushes gap apart (a third of it, two thirds, all of it with the side
// files and tensors).
func flushRank(t *testing.T, from, to string, gap time.Duration) {
	data, err := os.ReadFile(filepath.Join(from, "dump.json"))
	if err == nil {
		err = os.MkdirAll(to, 0o755)
	}
	if err != nil {
		t.Error(err)
		return
	}
	for _, part := range []int{len(data) / 3, 2 * len(data) / 3, len(data)} {
		if part == len(data) {
			for _, side := range []string{"stack.json", "construct.json"} {
				if b, err := os.ReadFile(filepath.Join(from, side)); err == nil {
					os.WriteFile(filepath.Join(to, side), b, 0o644)
				}
			}
			copyTensors(t, from, to)
		}
		if err := os.WriteFile(filepath.Join(to, "dump.json"), data[:part], 0o644); err != nil {
			t.Error(err)
			return
		}
		if part < len(data) {
			time.Sleep(gap)
		}
	}
}

// checked reports whether step s was checked: a step event, or a
// suspect one.
func (r *recorder) checked(s int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if (e.Kind == EventStep || e.Kind == EventSuspect) && e.Step == s {
			return true
		}
	}
	return false
}

// watchScripted runs a watch over dst while moves are replayed into it,
// from step from, until it has been idle for a second.
func watchScripted(t *testing.T, src string, from int, moves []lateWrite) ([]Event, Result, string) {
	t.Helper()
	return watchScriptedWith(t, src, Options{From: from}, moves)
}

// watchScriptedWith is watchScripted with more options (From, Expected).
func watchScriptedWith(t *testing.T, src string, opt Options, moves []lateWrite) ([]Event, Result, string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "dump")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	replayed := make(chan struct{})
	go func() {
		defer close(replayed)
		scriptedReplay(t, src, dst, moves, &rec)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opt.Path, opt.Poll, opt.Settle, opt.RankTimeout, opt.IdleExit = dst, 20*time.Millisecond, 150*time.Millisecond, 5*time.Second, time.Second
	res, err := Run(ctx, opt, rec.emit)
	<-replayed
	if err != nil {
		t.Fatal(err)
	}
	return rec.events, res, dst
}

// lateEvents are the step events of rank-steps read after their step was
// checked.
func lateEvents(events []Event) []Event {
	var out []Event
	for _, e := range kinds(events, EventStep) {
		if e.Late {
			out = append(out, e)
		}
	}
	return out
}

// The first step checked on the one rank whose folder was there: the
// ranks that appear after it are read when they are seen (a step event
// marked Late), the watch ends complete, and the alarm's warnings before
// the NaN have their whole series, as offline.
func TestWatchReadsLateRanks(t *testing.T) {
	t.Parallel()
	src := generate(t, "sharp-gradient-fp16")
	moves := []lateWrite{{9, []int{0}, 0, checkedStep(9), 0}, {9, []int{1, 2, 3}, 100 * time.Millisecond, nil, 0}}
	for s := 10; s <= 14; s++ {
		moves = append(moves, lateWrite{s, []int{0, 1, 2, 3}, 250 * time.Millisecond, nil, 0})
	}
	events, res, dst := watchScripted(t, src, 0, moves)
	steps := kinds(events, EventStep)
	if len(steps) == 0 || steps[0].Step != 9 || !reflect.DeepEqual(steps[0].Ranks, []int{0}) {
		t.Fatalf("the first step event %+v, want step 9 checked on rank 0 alone (the replay's premise)", steps)
	}
	// the ranks may be seen over more than one look: a late event each time
	var lateRanks []int
	for _, e := range lateEvents(events) {
		if e.Step != 9 || e.Status != StatusClean || !e.Complete {
			t.Errorf("late step event %+v, want step 9 clean", e)
		}
		lateRanks = append(lateRanks, e.Ranks...)
	}
	if slices.Sort(lateRanks); !reflect.DeepEqual(lateRanks, []int{1, 2, 3}) {
		t.Errorf("ranks %v read late, want 1-3", lateRanks)
	}
	if !res.Complete || res.Alarm == nil || res.Alarm.Origin.Step != 14 {
		t.Fatalf("result %+v", res)
	}
	offline, err := trace.Run(context.Background(), trace.Options{Path: dst})
	if err != nil {
		t.Fatal(err)
	}
	if len(offline.Ahead) == 0 || !reflect.DeepEqual(res.Alarm.Ahead, offline.Ahead) {
		t.Errorf("the alarm's warnings\n%+v\noffline\n%+v", res.Alarm.Ahead, offline.Ahead)
	}
}

// The origin on ranks whose folders appear after their step was checked
// clean on the others: the alarm names the step and ranks an offline
// trace of the same steps names, whether the step after it is checked
// already or not yet.
func TestWatchLateRankHoldsOrigin(t *testing.T) {
	src := generate(t, "pipeline-nan-next-step")
	offline, err := trace.Run(context.Background(), trace.Options{Path: src, Steps: map[int]bool{2: true, 3: true}})
	if err != nil || offline.Origin == nil {
		t.Fatalf("offline %+v, %v", offline, err)
	}
	for _, tc := range []struct {
		name  string
		moves []lateWrite
	}{
		{"next step not checked yet", []lateWrite{
			{2, []int{2, 3}, 0, checkedStep(2), 0},
			{2, []int{0, 1}, 0, nil, 0}, {3, []int{0, 1, 2, 3}, 0, nil, 0}}},
		{"next step checked already", []lateWrite{
			{2, []int{2, 3}, 0, checkedStep(2), 0},
			{3, []int{2, 3}, 0, checkedStep(3), 0},
			{2, []int{0, 1}, 0, nil, 0}, {3, []int{0, 1}, 0, nil, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events, res, _ := watchScripted(t, src, 2, tc.moves)
			if steps := kinds(events, EventStep); len(steps) == 0 || steps[0].Step != 2 || !reflect.DeepEqual(steps[0].Ranks, []int{2, 3}) {
				t.Fatalf("step events %+v, want step 2 checked on ranks 2, 3 alone first (the replay's premise)", steps)
			}
			v := res.Alarm
			if v == nil || v.Origin == nil {
				t.Fatalf("no alarm: %+v", events)
			}
			if v.Origin.Step != offline.Origin.Step || v.Origin.Op != offline.Origin.Op || !slices.Equal(v.Origin.Ranks, offline.Origin.Ranks) {
				t.Errorf("alarm at step %d %s ranks %v, offline step %d %s ranks %v", v.Origin.Step, v.Origin.Op, v.Origin.Ranks,
					offline.Origin.Step, offline.Origin.Op, offline.Origin.Ranks)
			}
			if alarms := kinds(events, EventAnomaly); len(alarms) != 1 {
				t.Errorf("%d alarms", len(alarms))
			}
		})
	}
}

// A step folder made before any rank folder, while no rank is known yet,
// waits for its ranks: it is checked on them, not passed over as empty.
func TestWatchEmptyFirstStepWaits(t *testing.T) {
	t.Parallel()
	src := generate(t, "log-negative")
	moves := []lateWrite{{1, nil, 600 * time.Millisecond, nil, 0}, {1, []int{0, 1, 2, 3}, 300 * time.Millisecond, nil, 0}, {2, []int{0, 1, 2, 3}, 0, nil, 0}}
	events, res, _ := watchScripted(t, src, 0, moves)
	steps := kinds(events, EventStep)
	if len(steps) == 0 || steps[0].Step != 1 || !reflect.DeepEqual(steps[0].Ranks, []int{0, 1, 2, 3}) || steps[0].Status != StatusClean {
		t.Errorf("step events %+v, want step 1 clean on ranks 0-3 first", steps)
	}
	if !res.Complete || len(lateEvents(events)) != 0 {
		t.Errorf("complete %v, late %+v", res.Complete, lateEvents(events))
	}
}

// Step folders that appear after later ones were checked (a copy or an
// rsync brings them in name order: step3 before step1) are read when they
// have settled: clean ones are step events marked Late, a damaged one
// leaves the watch incomplete, and an anomaly in one is the alarm an
// offline trace gives.
func TestWatchReadsLateSteps(t *testing.T) {
	all := []int{0, 1, 2, 3}
	inNameOrder := []lateWrite{{3, all, 0, checkedStep(3), 0}, {1, all, 0, nil, 0}, {2, all, 0, nil, 0}}
	for _, tc := range []struct {
		name, scenario string
		damage         string // a rank folder whose dump.json is cut, under the run
		wantLate       []int  // steps read late
		wantComplete   bool
	}{
		{"clean", "legit-masks", "", []int{1, 2}, true},
		{"damaged", "legit-masks", "step2/rank1", []int{1, 2}, false},
		{"anomaly", "log-negative", "", []int{1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := generate(t, tc.scenario)
			if tc.damage != "" {
				if err := os.WriteFile(filepath.Join(src, tc.damage, "dump.json"), []byte(`{"task": "statistics", "data": {"Torch.`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			offline, err := trace.Run(context.Background(), trace.Options{Path: src})
			if err != nil {
				t.Fatal(err)
			}
			events, res, _ := watchScripted(t, src, 0, inNameOrder)
			var late []int
			for _, e := range lateEvents(events) {
				late = append(late, e.Step)
			}
			if !slices.Equal(late, tc.wantLate) {
				t.Errorf("steps read late %v, want %v: %+v", late, tc.wantLate, events)
			}
			if res.Complete != tc.wantComplete {
				t.Errorf("complete %v, unread %+v", res.Complete, res.Unread)
			}
			switch {
			case offline.Origin == nil && res.Alarm != nil:
				t.Errorf("alarm %+v on a run without anomaly", res.Alarm.Origin)
			case offline.Origin != nil && (res.Alarm == nil || res.Alarm.Origin == nil):
				t.Errorf("no alarm; offline: step %d %s", offline.Origin.Step, offline.Origin.Op)
			case offline.Origin != nil && (res.Alarm.Origin.Step != offline.Origin.Step || res.Alarm.Origin.Op != offline.Origin.Op):
				t.Errorf("alarm at step %d %s, offline step %d %s", res.Alarm.Origin.Step, res.Alarm.Origin.Op, offline.Origin.Step, offline.Origin.Op)
			}
		})
	}
}

// The job ends (IdleExit, shorter than RankTimeout) while the last step
// holds a cut dump.json that its rank never rewrites: the step is judged
// on what it holds then, damaged, and the watch does not end complete. (It
// used to wait for the file to settle until the end, never judged the
// step, and ended clean.)
func TestWatchEndingJudgesTornStep(t *testing.T) {
	t.Parallel()
	src := generate(t, "legit-masks")
	cut := rankDump(filepath.Join(src, "step3"), 1)
	b, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	all := []int{0, 1, 2, 3}
	events, res, _ := watchScripted(t, src, 0, []lateWrite{{1, all, 0, nil, 0}, {2, all, 0, nil, 0}, {3, all, 0, nil, 0}})
	if res.Complete || len(res.Unread) != 1 || res.Unread[0].Step != 3 || !slices.Equal(res.Unread[0].Ranks, []int{1}) {
		t.Errorf("complete %v, unread %+v; want step 3 rank 1 unread", res.Complete, res.Unread)
	}
	if !slices.ContainsFunc(kinds(events, EventStep), func(e Event) bool { return e.Step == 3 && e.Status == StatusIncomplete }) {
		t.Errorf("no incomplete step 3 among %+v", kinds(events, EventStep))
	}
}

// One rank writes the step that holds the NaN, and the next one, before
// the others begin it (their folders come later): a watch that knows the
// world size waits for them and names the rank the NaN came from, as an
// offline trace of the finished run; without it, the one rank it has seen
// is the world it confirms the anomaly in.
func TestWatchWorldSizeWaitsForRanks(t *testing.T) {
	t.Parallel()
	src := generate(t, "log-negative") // the NaN born on rank 2 at step 2, carried to the others
	offline, err := trace.Run(context.Background(), trace.Options{Path: src, Steps: map[int]bool{2: true, 3: true}})
	if err != nil || offline.Origin == nil {
		t.Fatalf("offline %+v, %v", offline, err)
	}
	moves := []lateWrite{{2, []int{0}, 0, nil, 0}, {3, []int{0}, 600 * time.Millisecond, nil, 0}, {2, []int{1, 2, 3}, 0, nil, 0}, {3, []int{1, 2, 3}, 0, nil, 0}}
	_, res, _ := watchScriptedWith(t, src, Options{Expected: []int{0, 1, 2, 3}}, moves)
	v := res.Alarm
	if v == nil || v.Origin == nil || v.Origin.Step != 2 || v.Origin.Op != offline.Origin.Op || !slices.Equal(v.Origin.Ranks, offline.Origin.Ranks) {
		t.Errorf("alarm %+v; offline step 2 %s ranks %v", v, offline.Origin.Op, offline.Origin.Ranks)
	}
}

// The step after a suspect one is ready while one of its files is caught
// between two flushes for longer than Settle: it is read again once whole,
// not taken damaged, which would leave an overflow the loss scaler
// skipped standing as the alarm.
func TestWatchConfirmWaitsForTornNextStep(t *testing.T) {
	t.Parallel()
	src := generate(t, "loss-scale-recovered") // steps 0, 2, 4, 6: an overflow at step 2 that step 4 no longer shows
	all := []int{0, 1, 2, 3}
	moves := []lateWrite{{0, all, 0, nil, 0}, {2, all, 0, nil, 0}, {4, []int{0, 1, 3}, 0, nil, 0}, {4, []int{2}, 0, nil, 500 * time.Millisecond},
		{6, all, 0, nil, 0}}
	events, res, _ := watchScripted(t, src, 0, moves)
	if res.Alarm != nil {
		t.Errorf("alarm at step %d %s; the run recovers at step 4", res.Alarm.Origin.Step, res.Alarm.Origin.Op)
	}
	if len(kinds(events, EventRecovered)) != 1 || !res.Complete {
		t.Errorf("recovered %d, complete %v (unread %+v)", len(kinds(events, EventRecovered)), res.Complete, res.Unread)
	}
}

// A rank whose folder in a step already checked appears while it still
// writes that step (its dump.json in flushes, apart longer than Settle) is
// read whole: once it has begun a later step, or its file has settled.
func TestWatchLateRankReadWhenWritten(t *testing.T) {
	t.Parallel()
	src := generate(t, "legit-masks") // clean, steps 1-3
	moves := []lateWrite{{1, []int{0, 1, 2}, 0, checkedStep(1), 0}, {1, []int{3}, 0, nil, 400 * time.Millisecond},
		{2, []int{0, 1, 2, 3}, 0, nil, 0}, {3, []int{0, 1, 2, 3}, 0, nil, 0}}
	events, res, _ := watchScripted(t, src, 0, moves)
	late := lateEvents(events)
	if len(late) != 1 || late[0].Step != 1 || late[0].Status != StatusClean || !slices.Equal(late[0].Ranks, []int{3}) {
		t.Errorf("late step events %+v, want step 1 rank 3 clean", late)
	}
	if !res.Complete || res.Alarm != nil {
		t.Errorf("complete %v (unread %+v), alarm %v", res.Complete, res.Unread, res.Alarm)
	}
}

// The watch stops (UntilStep) while a late step folder is still being
// written: it was passed and not read, so the watch does not end complete.
func TestWatchStopsWithLateStepUnread(t *testing.T) {
	t.Parallel()
	src := generate(t, "late-fault") // steps 0-4, clean until step 3
	all := []int{0, 1, 2, 3}
	dst := filepath.Join(t.TempDir(), "dump")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	until := 2
	done := make(chan Result)
	go func() {
		res, err := Run(context.Background(), Options{Path: dst, Poll: 20 * time.Millisecond, Settle: 150 * time.Millisecond,
			RankTimeout: 5 * time.Second, IdleExit: 5 * time.Second, UntilStep: &until}, rec.emit)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	scriptedReplay(t, src, dst, []lateWrite{{1, all, 0, checkedStep(1), 0}}, &rec)
	// step 0 comes after step 1 was checked, and its rank has not written its file yet
	if err := os.MkdirAll(filepath.Join(dst, "step0", "rank0"), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	scriptedReplay(t, src, dst, []lateWrite{{2, all, 0, nil, 0}}, &rec)
	res := <-done
	if res.Complete || !slices.ContainsFunc(res.Unread, func(u verdict.UnreadRanks) bool { return u.Step == 0 }) {
		t.Errorf("complete %v, unread %+v; step 0 was passed and never read", res.Complete, res.Unread)
	}
}
