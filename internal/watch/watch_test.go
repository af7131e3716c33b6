package watch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// watchReplay replays a generated run into a folder while a watch follows
// it, and returns the events and the replayer.
func watchReplay(t *testing.T, scenario string, seed int64, keepGoing bool) ([]Event, *replayer, *verdict.Verdict) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "dump")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &replayer{src: generate(t, scenario), dst: dst, rng: rand.New(rand.NewSource(seed)),
		gap: 40 * time.Millisecond, torn: 500 * time.Millisecond, complete: map[int]time.Time{}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var rec recorder
	replayed := make(chan struct{})
	go r.run(t, replayed)
	// the replay writes the ranks of a step one after another: a long rank timeout
	opt := Options{Path: dst, Poll: 50 * time.Millisecond, Settle: 300 * time.Millisecond, RankTimeout: 5 * time.Second, IdleExit: 3 * time.Second, KeepGoing: keepGoing}
	res, err := Run(ctx, opt, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	<-replayed
	return rec.events, r, res.Alarm
}

// recorder keeps the events a watch emits.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func kinds(events []Event, kind string) []Event {
	var out []Event
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// A run whose NaN lasts: every step before it is reported clean, the alarm
// comes within seconds of the step's files (and the next step's) being
// complete, and its verdict is the offline trace's.
func TestWatchReplayAlarm(t *testing.T) {
	events, r, v := watchReplay(t, "log-negative", 1, false)
	offline, err := trace.Run(context.Background(), trace.Options{Path: r.dst})
	if err != nil {
		t.Fatal(err)
	}
	if !offline.Anomaly || offline.Origin == nil {
		t.Fatalf("the finished run has no anomaly: %+v", offline)
	}
	alarms := kinds(events, EventAnomaly)
	if len(alarms) != 1 || v == nil {
		t.Fatalf("%d alarms, want 1: %+v", len(alarms), events)
	}
	a := alarms[0]
	o := offline.Origin
	var clean []int
	for _, e := range kinds(events, EventStep) {
		clean = append(clean, e.Step)
	}
	for _, s := range r.steps(t) {
		if s < o.Step && !slices.Contains(clean, s) {
			t.Errorf("step %d before the origin was not reported clean (clean: %v; events: %s)", s, clean, eventKinds(events))
		}
	}
	if len(kinds(events, EventRecovered)) != 0 {
		t.Errorf("a lasting NaN was reported as recovered")
	}
	// the same verdict as offline, field by field where it matters
	got := a.Verdict.Origin
	if got.Step != o.Step || got.Op != o.Op || !slices.Equal(got.Ranks, o.Ranks) || got.Stage != o.Stage || got.Kind != o.Kind || got.Confidence != o.Confidence {
		t.Errorf("watch origin %+v\noffline origin %+v", got, o)
	}
	if (a.Verdict.Carrier == nil) != (offline.Carrier == nil) || (offline.Carrier != nil && a.Verdict.Carrier.Op != offline.Carrier.Op) {
		t.Errorf("carrier %+v, offline %+v", a.Verdict.Carrier, offline.Carrier)
	}
	if len(a.Verdict.Candidates) != len(offline.Candidates) {
		t.Errorf("%d candidates, offline %d", len(a.Verdict.Candidates), len(offline.Candidates))
	}
	// within 5 s of the files being complete: the origin step's, and the
	// next step's, which tells a lasting NaN from a skipped overflow
	ready := r.completedAt(o.Step)
	if next := nextStep(r.steps(t), o.Step); next >= 0 {
		ready = r.completedAt(next)
	}
	if late := a.At.Sub(ready); late > 5*time.Second {
		t.Errorf("the alarm came %v after the files were complete", late)
	}
	if a.Source != "dump" {
		t.Errorf("source %q, want dump", a.Source)
	}
}

// An overflow the loss scaler skipped is never an alarm: the watch reports
// it as recovered and every later step as clean.
func TestWatchReplayRecovered(t *testing.T) {
	events, r, v := watchReplay(t, "loss-scale-recovered", 2, false)
	if v != nil || len(kinds(events, EventAnomaly)) > 0 {
		t.Fatalf("alarm on a skipped overflow: %+v", v.Origin)
	}
	rec := kinds(events, EventRecovered)
	if len(rec) != 1 || rec[0].Step != 2 {
		t.Errorf("recovered %+v, want step 2", rec)
	}
	var clean []int
	for _, e := range kinds(events, EventStep) {
		clean = append(clean, e.Step)
	}
	for _, s := range r.steps(t) {
		if s != 2 && !slices.Contains(clean, s) {
			t.Errorf("step %d not reported clean (clean %v)", s, clean)
		}
	}
	stop := kinds(events, EventStopped)
	if len(stop) != 1 || stop[0].Reason != "idle" {
		t.Errorf("stopped %+v, want idle", stop)
	}
}

func nextStep(steps []int, s int) int {
	for _, x := range steps {
		if x > s {
			return x
		}
	}
	return -1
}

// fakeLog is a sidecar that shows a non-finite value at a step from the
// start.
type fakeLog struct{ step int }

func (f fakeLog) Name() string { return "log" }
func (f fakeLog) FirstBad(context.Context) (int, bool, error) {
	return f.step, true, nil
}

// A source that saw the anomaly before the dump did is named by the alarm,
// once; a later step of it (the spread) is not.
func TestWatchSidecarFirst(t *testing.T) {
	dir := generate(t, "log-negative")
	for _, tt := range []struct {
		name   string
		step   int
		source string
	}{
		{"the log saw the origin step", 2, "log"},
		{"the log saw only a later step", 5, "dump"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var events []Event
			_, err := Run(context.Background(), Options{Path: dir, Poll: 20 * time.Millisecond, Settle: 50 * time.Millisecond,
				Sidecars: []Sidecar{fakeLog{step: tt.step}}}, func(e Event) { events = append(events, e) })
			if err != nil {
				t.Fatal(err)
			}
			ev, alarm := kinds(events, EventEvidence), kinds(events, EventAnomaly)
			if len(ev) != 1 || ev[0].Source != "log" || ev[0].Step != tt.step {
				t.Errorf("evidence events %+v", ev)
			}
			if len(alarm) != 1 || alarm[0].Source != tt.source {
				t.Fatalf("alarm %+v, want the source %s", alarm, tt.source)
			}
		})
	}
}

// eventKinds lists events in short, "suspect@2 anomaly@2", for a failure
// message.
func eventKinds(events []Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%s@%d(%s) ", e.Kind, e.Step, e.Status)
	}
	return b.String()
}
