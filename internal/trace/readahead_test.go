package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// verdictJSON traces as opt says and returns the verdict as
// JSON, and how many scans were taken from those read ahead.
func verdictJSON(t *testing.T, opt Options) (string, int64) {
	t.Helper()
	before := aheadTaken.Load()
	v, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), aheadTaken.Load() - before
}

// Workers a step leaves idle read the next step's files, and the verdict
// is the one of a single worker: on the real msprobe runs (4 ranks: 16
// workers read two steps at once), and on generated runs of one rank, of
// a recovered anomaly (the checking read takes the scans read ahead) and
// of a fault in the last step.
func TestReadAheadKeepsTheVerdict(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-generated", "*", "mix"))
	if len(dirs) == 0 {
		t.Fatal("no msprobe-generated run")
	}
	specs := []synth.Spec{{Name: "one-rank", Ranks: 1, Steps: []int{0, 1, 2, 3}, Model: synth.Dense,
		Fault: &synth.Fault{Kind: synth.LogNegative, Step: 2, Ranks: []int{0}}, Seed: 1}}
	for _, s := range synth.Scenarios() {
		if s.Name == "loss-scale-recovered" || s.Name == "tp-clip-sgd" {
			specs = append(specs, s.Spec)
		}
	}
	if len(specs) != 3 {
		t.Fatalf("scenarios missing: %d specs", len(specs))
	}
	oneRank := len(dirs) // the first of specs
	for _, spec := range specs {
		dir := filepath.Join(t.TempDir(), "dump")
		if _, err := synth.Generate(spec, dir); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	for i, dir := range dirs {
		// --strict on the one-rank run: the step after the fault is read
		// ahead in vain, and cancelled
		strict := i == oneRank
		want, taken := verdictJSON(t, Options{Path: dir, Jobs: 1, Strict: strict})
		if taken != 0 {
			t.Errorf("%s: one worker took %d scans read ahead", dir, taken)
		}
		before := runtime.NumGoroutine()
		got, taken := verdictJSON(t, Options{Path: dir, Jobs: 16, Strict: strict})
		if taken == 0 {
			t.Errorf("%s: 16 workers read nothing ahead", dir)
		}
		if n := goroutinesAfter(before); n > before {
			t.Errorf("%s: %d goroutines run on after the trace", dir, n-before)
		}
		if got != want {
			t.Errorf("%s: the verdict with 16 workers differs from one worker's\n got %s\nwant %s", dir, got, want)
		}
	}
}

// With fewer workers than a step has files, a worker that runs out of the
// step's files while another still reads starts on the next step's: the
// verdict is one worker's. (Which worker finishes last depends on the
// timing, so the scans taken are counted over every real run, tens of
// step ends, not asserted for each.)
func TestReadAheadAtTheStepsEnd(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(fixtures(t), "msprobe-generated", "*", "mix"))
	if len(dirs) == 0 {
		t.Fatal("no msprobe-generated run")
	}
	var taken int64
	for _, dir := range dirs {
		want, _ := verdictJSON(t, Options{Path: dir, Jobs: 1})
		before := runtime.NumGoroutine()
		got, n := verdictJSON(t, Options{Path: dir, Jobs: 3}) // 4 ranks a step
		taken += n
		if got != want {
			t.Errorf("%s: the verdict with 3 workers differs from one worker's\n got %s\nwant %s", dir, got, want)
		}
		if n := goroutinesAfter(before); n > before {
			t.Errorf("%s: %d goroutines run on after the trace", dir, n-before)
		}
	}
	if taken == 0 {
		t.Error("no worker read ahead at a step's end")
	}
	t.Logf("%d scans read ahead at steps' ends, over %d runs", taken, len(dirs))
}

// A node's summary is the same whether its idle workers read ahead.
func TestReadAheadKeepsTheSummary(t *testing.T) {
	dir := filepath.Join(fixtures(t), "msprobe-generated", "bwd-sqrt-zero-rank2-step5", "mix")
	var out [2]bytes.Buffer
	for i, jobs := range []int{1, 16} {
		if _, err := Summarize(context.Background(), SummaryOptions{Path: dir, Jobs: jobs, Run: "r", Job: Job{ID: "j", From: "flag"}}, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	if out[0].String() != out[1].String() {
		t.Errorf("summaries differ:\n%s\n%s", out[0].String(), out[1].String())
	}
}

// A run cancelled at any moment, files read ahead among them, stops with
// the cancellation and leaves nothing running; one that gets to its end
// gives the verdict of a run never cancelled (one is cancelled before it
// starts, one never).
func TestReadAheadCancelled(t *testing.T) {
	spec, err := synth.Fit(synth.Spec{Name: "one-rank", Ranks: 1, Steps: []int{0, 1, 2, 3, 4, 5}, Model: synth.Dense,
		TargetFileBytes: 2 << 20, Fault: &synth.Fault{Kind: synth.LogNegative, Step: 4, Ranks: []int{0}}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dump")
	if _, err := synth.Generate(spec, dir); err != nil {
		t.Fatal(err)
	}
	want, _ := verdictJSON(t, Options{Path: dir, Jobs: 1})
	before := runtime.NumGoroutine()
	cancelled := 0
	for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, time.Hour} {
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(after, cancel)
		v, err := Run(ctx, Options{Path: dir, Jobs: 4})
		timer.Stop()
		cancel()
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			t.Fatalf("cancelled after %v: %v", after, err)
		case err != nil:
			cancelled++
		default:
			b, _ := json.Marshal(v)
			if string(b) != want {
				t.Errorf("cancelled after %v: the verdict differs from an uncancelled run's", after)
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines run on after a run cancelled after %v", n-before, after)
		}
	}
	if cancelled == 0 {
		t.Error("no run was cancelled")
	}
}

// goroutinesAfter is the number of goroutines once those a trace started
// have ended: a goroutine that has said it is done may take a moment to
// exit on a busy machine, so it waits up to two seconds for the count to
// come back to before.
func goroutinesAfter(before int) int {
	deadline := time.Now().Add(2 * time.Second)
	n := runtime.NumGoroutine()
	for n > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}
