package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/verdict"
)

// fast are the timings of the watches of a finished run in these tests.
var fast = Options{Poll: 20 * time.Millisecond, Settle: 50 * time.Millisecond, RankTimeout: 300 * time.Millisecond, IdleExit: time.Second}

// edited writes a generated scenario and changes it (a crash, garbage).
func edited(t *testing.T, scenario string, edits ...func(t *testing.T, dir string)) string {
	t.Helper()
	dir := generate(t, scenario)
	for _, e := range edits {
		e(t, dir)
	}
	return dir
}

// removed deletes paths under the dump.
func removed(paths ...string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		for _, p := range paths {
			if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// written replaces the files under the dump with content.
func written(content string, paths ...string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		for _, p := range paths {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// watchDump watches a finished run with opt's timings and returns its
// events and how it ended.
func watchDump(t *testing.T, dir string, opt Options) ([]Event, Result) {
	t.Helper()
	opt.Path = dir
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var rec recorder
	res, err := Run(ctx, opt, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	return rec.events, res
}

// stepEvent is the EventStep of step s, nil when there is none.
func stepEvent(events []Event, s int) *Event {
	for i := range events {
		if events[i].Kind == EventStep && events[i].Step == s {
			return &events[i]
		}
	}
	return nil
}

func sameRows(got, want []verdict.UnreadRanks) bool {
	return slices.EqualFunc(got, want, func(a, b verdict.UnreadRanks) bool {
		return a.Step == b.Step && a.Reason == b.Reason && slices.Equal(a.Ranks, b.Ranks)
	})
}

// A step that some ranks never finish is judged on the others after
// RankTimeout, is not called clean, names the missing ranks, and the watch
// ends incomplete; a rank that began a later step is not waited for.
func TestStepSomeRanksNeverFinish(t *testing.T) {
	never := func(step int, ranks ...int) []verdict.UnreadRanks {
		return []verdict.UnreadRanks{{Step: step, Ranks: ranks, Reason: ReasonNeverFinished}}
	}
	for _, tt := range []struct {
		name   string
		dir    string
		status string
		unread []verdict.UnreadRanks
	}{
		{"rank 3 crashed before its folder of step 2", edited(t, "legit-masks", removed("step3", "step2/rank3")),
			StatusIncomplete, never(2, 3)},
		{"rank 3's folder of step 2 without dump.json", edited(t, "legit-masks", removed("step3", "step2/rank3/dump.json")),
			StatusIncomplete, never(2, 3)},
		{"rank 3's dump.json of step 2 stays empty", edited(t, "legit-masks", removed("step3"), written("", "step2/rank3/dump.json")),
			StatusIncomplete, never(2, 3)},
		{"rank 3's dump.json of step 2 settles cut", edited(t, "legit-masks", removed("step3"), written(`{"task": "statistics", "data": {"Torch.`, "step2/rank3/dump.json")),
			StatusIncomplete, []verdict.UnreadRanks{{Step: 2, Ranks: []int{3}, Reason: "unreadable"}}},
		{"every rank of step 2 stopped writing", edited(t, "legit-masks", removed("step3"), written("", "step2/rank0/dump.json", "step2/rank1/dump.json", "step2/rank2/dump.json", "step2/rank3/dump.json")),
			StatusUnread, never(2, 0, 1, 2, 3)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, res := watchDump(t, tt.dir, fast)
			e := stepEvent(events, 2)
			if e == nil {
				t.Fatalf("no line for step 2: %+v", events)
			}
			if e.Status != tt.status || e.Complete || !sameRows(e.Unread, tt.unread) {
				t.Errorf("step 2: %s complete %v unread %+v; want %s, false, %+v", e.Status, e.Complete, e.Unread, tt.status, tt.unread)
			}
			if res.Alarm != nil || res.Complete || !sameRows(res.Unread, tt.unread) {
				t.Errorf("the watch ended with alarm %v complete %v unread %+v", res.Alarm != nil, res.Complete, res.Unread)
			}
			if s1 := stepEvent(events, 1); s1 == nil || s1.Status != StatusClean || !s1.Complete {
				t.Errorf("step 1: %+v, want clean", s1)
			}
			stop := kinds(events, EventStopped)
			if len(stop) != 1 || stop[0].Complete || !sameRows(stop[0].Unread, tt.unread) {
				t.Errorf("stopped %+v", stop)
			}
		})
	}
}

// A rank dead from step 2 on is waited for once: the later steps of the
// other ranks are judged at once, each incomplete; a rank whose dump.json
// is missing while it has begun a later step is not waited for at all.
func TestDeadRankWaitedForOnce(t *testing.T) {
	dir := edited(t, "legit-masks", removed("step2/rank3", "step3/rank3"))
	opt := fast
	last := 3
	opt.RankTimeout, opt.IdleExit, opt.UntilStep = time.Second, 0, &last // no idle end: the rank timeout decides
	events, res := watchDump(t, dir, opt)
	s2, s3 := stepEvent(events, 2), stepEvent(events, 3)
	if s2 == nil || s3 == nil {
		t.Fatalf("steps 2 and 3 not both reported: %+v", events)
	}
	if s3.Status != StatusIncomplete || !sameRows(s3.Unread, []verdict.UnreadRanks{{Step: 3, Ranks: []int{3}, Reason: ReasonNeverFinished}}) {
		t.Errorf("step 3: %+v", s3)
	}
	if gap := s3.At.Sub(s2.At); gap > opt.RankTimeout/2 {
		t.Errorf("step 3 came %v after step 2: rank 3 was waited for again", gap)
	}
	if len(res.Unread) != 2 {
		t.Errorf("unread %+v, want steps 2 and 3", res.Unread)
	}

	moved := edited(t, "legit-masks", removed("step2/rank3/dump.json"))
	opt.RankTimeout = time.Minute // a rank that began step 3 must not wait for it
	started := time.Now()
	events, _ = watchDump(t, moved, opt)
	s2 = stepEvent(events, 2)
	if s2 == nil || s2.Status != StatusIncomplete || !sameRows(s2.Unread, []verdict.UnreadRanks{{Step: 2, Ranks: []int{3}, Reason: "unreadable"}}) {
		t.Errorf("step 2: %+v, want incomplete, rank 3 unreadable", s2)
	}
	if took := time.Since(started); took > 20*time.Second {
		t.Errorf("took %v: a rank that began step 3 was waited for at step 2", took)
	}
}

// An anomaly found while a rank never finished its step raises the alarm:
// the verdict names the rank unread ("never finished"), a possible source,
// and its confidence is at most medium with a reason naming it.
func TestAnomalyWithRankThatNeverFinished(t *testing.T) {
	dir := edited(t, "log-negative", removed("step3", "step2/rank3"))
	events, res := watchDump(t, dir, fast)
	v := res.Alarm
	if v == nil || v.Origin == nil {
		t.Fatalf("no alarm: %+v", events)
	}
	o := v.Origin
	if o.Step != 2 || !slices.Equal(o.Ranks, []int{2}) || o.Op != "Torch.log.0.forward" {
		t.Errorf("origin %+v", o)
	}
	if o.Confidence == "high" || !slices.Contains(o.PossibleSources, 3) {
		t.Errorf("confidence %s, possible sources %v", o.Confidence, o.PossibleSources)
	}
	if !slices.ContainsFunc(o.Reasons, func(r string) bool { return strings.HasPrefix(r, "rank 3 never finished writing step 2") }) {
		t.Errorf("no reason names rank 3: %q", o.Reasons)
	}
	if v.Complete || !slices.ContainsFunc(v.Unread, func(u verdict.UnreadRanks) bool {
		return u.Step == 2 && u.Reason == ReasonNeverFinished && slices.Equal(u.Ranks, []int{3})
	}) {
		t.Errorf("complete %v unread %+v", v.Complete, v.Unread)
	}
	alarm := kinds(events, EventAnomaly)
	if len(alarm) != 1 || alarm[0].Complete || len(alarm[0].Unread) == 0 {
		t.Errorf("anomaly events %+v", alarm)
	}
}

// Every file of a step garbage: one line, the step unread, and the watch
// ends incomplete.
func TestUnreadableStepGetsALine(t *testing.T) {
	var files []string
	for r := range 4 {
		files = append(files, fmt.Sprintf("step2/rank%d/dump.json", r))
	}
	dir := edited(t, "legit-masks", written("\x00 not a dump\n", files...))
	events, res := watchDump(t, dir, fast)
	e := stepEvent(events, 2)
	want := []verdict.UnreadRanks{{Step: 2, Ranks: []int{0, 1, 2, 3}, Reason: "unreadable"}}
	if e == nil || e.Status != StatusUnread || !sameRows(e.Unread, want) {
		t.Fatalf("step 2: %+v", e)
	}
	if s3 := stepEvent(events, 3); s3 == nil || s3.Status != StatusClean {
		t.Errorf("step 3: %+v, want clean", s3)
	}
	if res.Complete || !sameRows(res.Unread, want) {
		t.Errorf("complete %v unread %+v", res.Complete, res.Unread)
	}
}

// A watch interrupted while a suspect step waits for the next one
// confirms it with what is there: the alarm, not silence.
func TestInterruptedSuspectRaisesTheAlarm(t *testing.T) {
	dir := edited(t, "log-negative", removed("step3"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []Event
	opt := fast
	opt.Path, opt.IdleExit = dir, 0
	res, err := Run(ctx, opt, func(e Event) {
		events = append(events, e)
		if e.Kind == EventSuspect {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Alarm == nil || res.Alarm.Origin == nil || res.Alarm.Origin.Step != 2 {
		t.Fatalf("no alarm at step 2: %+v", events)
	}
	if stop := kinds(events, EventStopped); len(stop) != 1 || stop[0].Reason != "anomaly" {
		t.Errorf("stopped %+v", stop)
	}
}

// A step not read whole is not recorded as checked: the state resumes at
// it, and a resumed watch reads it again.
func TestStateResumesAtTheFirstStepNotReadWhole(t *testing.T) {
	dir := edited(t, "legit-masks", removed("step2/rank1/dump.json"))
	opt := fast
	opt.StateFile = filepath.Join(t.TempDir(), "watch.json")
	watchDump(t, dir, opt)
	st, err := LoadState(opt.StateFile, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Next != 2 || st.Prev == nil || *st.Prev != 1 {
		t.Errorf("state next %d prev %v, want 2 and 1", st.Next, st.Prev)
	}
	events, res := watchDump(t, dir, opt)
	if stepEvent(events, 1) != nil || stepEvent(events, 2) == nil || stepEvent(events, 3) == nil {
		t.Errorf("the resumed watch reported %+v, want steps 2 and 3", events)
	}
	if res.Complete {
		t.Errorf("the resumed watch ended complete")
	}
}

// fakeSource is a sidecar named name that shows a non-finite value at a
// step from the start.
type fakeSource struct {
	name string
	step int
}

func (f fakeSource) Name() string { return f.name }
func (f fakeSource) FirstBad(context.Context) (int, bool, error) {
	return f.step, true, nil
}

// A non-finite value that only the log or the monitor shows raises the
// alarm, from that source, with a verdict without origin and what the dump
// holds of that step: when the dump stops before it (without waiting for
// the job to end), or has checked it and the step after.
func TestSidecarAloneRaisesTheAlarm(t *testing.T) {
	stops := edited(t, "log-negative", removed("step2", "step3"))
	clean := generate(t, "legit-masks")
	for _, tt := range []struct {
		name       string
		dir        string
		source     string
		status     string
		lastDumped int
	}{
		{"the log, the dump stops at step 1", stops, "log", "", 1},
		{"the monitor, the dump stops at step 1", stops, "monitor", "", 1},
		{"the log, the dump's steps 2 and 3 are clean", clean, "log", StatusClean, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opt := fast
			opt.IdleExit, opt.Sidecars = 0, []Sidecar{fakeSource{name: tt.source, step: 2}}
			events, res := watchDump(t, tt.dir, opt)
			alarm := kinds(events, EventAnomaly)
			if res.Alarm == nil || len(alarm) != 1 {
				t.Fatalf("no alarm: %+v", events)
			}
			a := alarm[0]
			if a.Step != 2 || a.Source != tt.source || a.Status != tt.status || a.LastDumped == nil || *a.LastDumped != tt.lastDumped {
				t.Errorf("alarm step %d source %s status %q last dumped %v", a.Step, a.Source, a.Status, a.LastDumped)
			}
			if v := a.Verdict; !v.Anomaly || v.Origin != nil || !v.Complete {
				t.Errorf("verdict anomaly %v origin %v complete %v", v.Anomaly, v.Origin, v.Complete)
			}
			if stop := kinds(events, EventStopped); len(stop) != 1 || stop[0].Reason != "anomaly" {
				t.Errorf("stopped %+v", stop)
			}
		})
	}
}

// An overflow that did not last at a step one rank of which was not read
// is no alarm, and no clean step either: the watch ends incomplete.
func TestRecoveredStepWithARankNotRead(t *testing.T) {
	dir := edited(t, "loss-scale-recovered", removed("step2/rank3"))
	events, res := watchDump(t, dir, fast)
	if rec := kinds(events, EventRecovered); len(rec) != 1 || rec[0].Step != 2 {
		t.Fatalf("recovered %+v", rec)
	}
	want := []verdict.UnreadRanks{{Step: 2, Ranks: []int{3}, Reason: "no folder"}}
	if res.Alarm != nil || res.Complete || !sameRows(res.Unread, want) {
		t.Errorf("alarm %v complete %v unread %+v, want none, false, %+v", res.Alarm != nil, res.Complete, res.Unread, want)
	}
}

// A watch interrupted before it checked every step the folder holds is no
// clean bill: the steps it did not check are unread ("not checked", every
// rank expected there), in the result and in its stopped event; with
// UntilStep, only those up to it.
func TestInterruptedBeforeEveryStepIsIncomplete(t *testing.T) {
	dir := generate(t, "legit-masks") // steps 1 to 3, ranks 0 to 3
	all := []int{0, 1, 2, 3}
	for _, until := range []*int{nil, ptr(2)} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var events []Event
		opt := fast
		opt.Path, opt.IdleExit, opt.UntilStep = dir, 0, until
		res, err := Run(ctx, opt, func(e Event) {
			events = append(events, e)
			if e.Kind == EventStep {
				cancel() // after the first step checked
			}
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Alarm != nil || stepEvent(events, 1) == nil || stepEvent(events, 2) != nil {
			t.Fatalf("until %v: alarm %v, events %+v: want step 1 checked, and no other", until, res.Alarm, events)
		}
		want := []verdict.UnreadRanks{{Step: 2, Ranks: all, Reason: ReasonNotChecked}}
		if until == nil {
			want = append(want, verdict.UnreadRanks{Step: 3, Ranks: all, Reason: ReasonNotChecked})
		}
		if res.Complete || !sameRows(res.Unread, want) {
			t.Errorf("until %v: complete %v, unread %+v, want %+v", until, res.Complete, res.Unread, want)
		}
		if stop := kinds(events, EventStopped); len(stop) != 1 || stop[0].Reason != "interrupted" || stop[0].Complete || !sameRows(stop[0].Unread, want) {
			t.Errorf("until %v: stopped %+v", until, stop)
		}
	}
}

func ptr(i int) *int { return &i }
