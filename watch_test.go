package nanhunt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// generated is a finished run of a generated scenario: its dump, and the
// training log and monitor output written beside it.
type generated struct {
	dump, log, monitor string
}

func generate(t *testing.T, scenario string) generated {
	t.Helper()
	for _, sc := range synth.Scenarios() {
		if sc.Name != scenario {
			continue
		}
		root := t.TempDir()
		g := generated{dump: filepath.Join(root, "dump"), monitor: filepath.Join(root, "monitor")}
		side := synth.Sidecars{LogDir: filepath.Join(root, "log"), MonitorDir: g.monitor}
		if _, err := synth.GenerateWith(sc.Spec, g.dump, side); err != nil {
			t.Fatal(err)
		}
		g.log = filepath.Join(side.LogDir, "train.log")
		return g
	}
	t.Fatalf("no scenario %s", scenario)
	return generated{}
}

// fastWatch are the timings of a watch over a finished run.
func fastWatch(in nanhunt.WatchInputs) nanhunt.WatchInputs {
	in.Poll, in.Settle, in.RankTimeout, in.IdleExit = 20*time.Millisecond, 50*time.Millisecond, 300*time.Millisecond, time.Second
	return in
}

// Watch over a finished run of log-negative (Torch.log makes a NaN on
// rank 2 at step 2) with its log and monitor followed: step 1 is clean,
// step 2 raises the alarm, whose verdict names the origin, holds the
// evidence of the log and the monitor and the plan shaped as asked; the
// watch stops at the alarm and leaves its state, and no lock or empty
// output folder.
func TestWatch(t *testing.T) {
	run := generate(t, "log-negative")
	work := t.TempDir()
	outDir, state := filepath.Join(work, "alarms"), filepath.Join(work, "watch.json")
	started := 0
	var events []nanhunt.WatchEvent
	res, err := nanhunt.Watch(context.Background(), fastWatch(nanhunt.WatchInputs{
		Dump: run.dump, Log: nanhunt.LogInputs{Paths: []string{run.log}}, Monitor: nanhunt.MonitorInputs{Dir: run.monitor},
		Plan: nanhunt.PlanOptions{DumpPath: "/data/followup"}, OutDir: outDir, StateFile: state,
		Started: func() { started++ },
	}), func(e nanhunt.WatchEvent) {
		if started != 1 {
			t.Errorf("event %q before Started was called once (%d)", e.Kind, started)
		}
		events = append(events, e)
	})
	if err != nil {
		t.Fatal(err)
	}
	if started != 1 {
		t.Errorf("Started called %d times", started)
	}
	first, alarm, last := eventOf(events, "step"), eventOf(events, "anomaly"), events[len(events)-1]
	if first == nil || first.Step != 1 || first.Status != "clean" || !first.Complete || len(first.Ranks) != 4 {
		t.Errorf("first step event %+v, want step 1 clean on ranks 0-3", first)
	}
	if alarm == nil {
		t.Fatalf("no anomaly event in %d events", len(events))
	}
	o := alarm.Verdict.Origin
	if alarm.Step != 2 || !alarm.Complete || alarm.At.IsZero() || o == nil || o.Step != 2 || len(o.Ranks) != 1 || o.Ranks[0] != 2 || o.Op != "Torch.log.0.forward" || o.Kind != "nan" {
		t.Fatalf("anomaly event %+v, origin %+v; want Torch.log.0.forward's NaN on rank 2 at step 2", alarm, o)
	}
	if res.Alarm != alarm.Verdict || !res.Complete {
		t.Errorf("result %+v: want the anomaly's verdict, complete", res)
	}
	if o.Timeline == nil {
		t.Errorf("the alarm's origin has no timeline, which its page shows")
	}
	if e := res.Alarm.Evidence; e == nil || e.Log == nil || e.Monitor == nil {
		t.Errorf("the alarm's evidence %+v: want the followed log's and monitor's", e)
	}
	if p := res.Alarm.Plan; p == nil || p.Config.DumpPath != "/data/followup" || p.Estimate == nil {
		t.Errorf("the alarm's plan %+v: want one sized from the dump, dumping to /data/followup", p)
	}
	if last.Kind != "stopped" || last.Reason != "anomaly" {
		t.Errorf("last event %+v, want stopped by the anomaly", last)
	}
	if _, err := os.Stat(outDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the output folder Watch made and nothing was written to is left (%v)", err)
	}
	if _, err := os.Stat(state + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state's lock is left (%v)", err)
	}
	if b, err := os.ReadFile(state); err != nil || !strings.Contains(string(b), `"alarm_step": 2`) {
		t.Errorf("state %q (%v): want the alarm at step 2 recorded", b, err)
	}
}

// eventOf is the first event of a kind, nil when there is none.
func eventOf(events []nanhunt.WatchEvent, kind string) *nanhunt.WatchEvent {
	for i := range events {
		if events[i].Kind == kind {
			return &events[i]
		}
	}
	return nil
}

// A rules file that does not parse fails the watch before it makes its
// output folder or looks at the dump, naming the file.
func TestWatchBadRules(t *testing.T) {
	run := generate(t, "log-negative")
	work := t.TempDir()
	rules, outDir := filepath.Join(work, "rules.json"), filepath.Join(work, "alarms")
	if err := os.WriteFile(rules, []byte(`[{"op": `), 0o644); err != nil {
		t.Fatal(err)
	}
	called := false
	_, err := nanhunt.Watch(context.Background(), fastWatch(nanhunt.WatchInputs{Dump: run.dump, RulesFile: rules, OutDir: outDir,
		Started: func() { called = true }}), func(nanhunt.WatchEvent) { called = true })
	var ie *nanhunt.InputError
	if !errors.As(err, &ie) || ie.File != rules {
		t.Fatalf("error %v, want an InputError naming %s", err, rules)
	}
	if called {
		t.Errorf("the watch started")
	}
	if _, err := os.Stat(outDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the output folder was made (%v)", err)
	}
}
