package watch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/trace"
)

// readTruth is the truth a generated run was written with.
func readTruth(t *testing.T, dir string) *synth.Truth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "synth_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tr synth.Truth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return &tr
}

// warningsByKey are the warnings before the NaN among events, by call,
// tensor and statistic; each must be given once, after its step's line.
func warningsByKey(t *testing.T, events []Event) map[aheadKey]Event {
	t.Helper()
	out := map[aheadKey]Event{}
	stepSeen := map[int]bool{}
	for _, e := range events {
		if e.Kind == EventStep {
			stepSeen[e.Step] = true
		}
		if e.Kind != EventWarning || e.Ahead == nil {
			continue
		}
		k := aheadKey{e.Ahead.Op, e.Ahead.Tensor, e.Ahead.Stat}
		if first, ok := out[k]; ok {
			t.Errorf("%v warned at step %d and again at step %d", k, first.Step, e.Step)
		}
		out[k] = e
		if !stepSeen[e.Step] {
			t.Errorf("%v warned at step %d before that step's line", k, e.Step)
		}
		if e.Ahead.Step != e.Step || e.Source != "dump" || e.Message != e.Ahead.Text || e.Ahead.Text == "" {
			t.Errorf("warning event %+v of %+v", e, *e.Ahead)
		}
	}
	return out
}

// A run that climbs to its overflow, its steps written one at a time: the
// statistic that overflows is warned of by the step its truth says it is
// due, each call's statistic once, before the alarm; the alarm stands,
// and its verdict has the warnings an offline trace gives it.
func TestWatchReplayWarnsAhead(t *testing.T) {
	events, r, v := watchReplay(t, "sharp-gradient-fp16", 3, false)
	tr := readTruth(t, r.src)
	if len(tr.Ahead) != 1 {
		t.Fatalf("the scenario's truth has %d warnings, want 1", len(tr.Ahead))
	}
	due := tr.Ahead[0]
	if v == nil || v.Origin == nil || v.Origin.Step != tr.Step || v.Origin.Op != tr.Op {
		t.Fatalf("alarm %+v, want step %d at %s", v, tr.Step, tr.Op)
	}
	warned := warningsByKey(t, events)
	got, ok := warned[aheadKey{due.Op, due.Tensor, due.Stat}]
	if !ok {
		t.Fatalf("no warning for %s %s %s; warnings %v", due.Op, due.Tensor, due.Stat, warned)
	}
	if got.Step > due.WarnBy {
		t.Errorf("warned at step %d, due by step %d", got.Step, due.WarnBy)
	}
	for k, e := range warned {
		if e.Step >= tr.Step {
			t.Errorf("%v warned at step %d, not before the origin's %d", k, e.Step, tr.Step)
		}
	}
	offline, err := trace.Run(context.Background(), trace.Options{Path: r.dst})
	if err != nil {
		t.Fatal(err)
	}
	if len(offline.Ahead) == 0 || !reflect.DeepEqual(v.Ahead, offline.Ahead) {
		t.Errorf("the alarm's warnings\n%+v\noffline\n%+v", v.Ahead, offline.Ahead)
	}
}

// Clean runs whose values rise but head nowhere (a warm-up, float16 traps:
// a flat value near the limit, masks, a fill of the float16 maximum) give
// no warning, and no alarm.
func TestWatchCleanRunsWarnNot(t *testing.T) {
	for _, scenario := range []string{"warmup-spike", "half-traps"} {
		t.Run(scenario, func(t *testing.T) {
			var rec recorder
			res, err := Run(context.Background(), Options{Path: generate(t, scenario), Poll: 20 * time.Millisecond,
				Settle: 50 * time.Millisecond, IdleExit: 300 * time.Millisecond}, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Alarm != nil || !res.Complete {
				t.Errorf("alarm %v, complete %v", res.Alarm, res.Complete)
			}
			if w := warningsByKey(t, rec.events); len(w) > 0 {
				t.Errorf("warnings on a clean run: %v", w)
			}
			if n := len(kinds(rec.events, EventStep)); n < 6 {
				t.Errorf("%d steps checked", n)
			}
		})
	}
}

// A watch resumed after the climb began (From, as from its state) reads
// the steps before it for the series: it warns at its first step.
func TestWatchResumedWarnsAtOnce(t *testing.T) {
	dir := generate(t, "sharp-gradient-fp16")
	var rec recorder
	until := 12
	_, err := Run(context.Background(), Options{Path: dir, From: 12, UntilStep: &until, Poll: 20 * time.Millisecond,
		Settle: 50 * time.Millisecond}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	warned := warningsByKey(t, rec.events)
	if len(warned) == 0 {
		t.Fatalf("no warning at step 12 of a resumed watch: %+v", rec.events)
	}
	for k, e := range warned {
		if e.Step != 12 || len(e.Ahead.Series) != 4 || e.Ahead.Series[0].Step != 9 {
			t.Errorf("%v at step %d, series %v", k, e.Step, e.Ahead.Series)
		}
	}
}
