package nanhunt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt"
	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/verdict"
)

// run is one real run's files: the dump of bwd-sqrt-zero-rank2-step5
// (rank 2 makes a NaN in Torch.sqrt's backward at step 5), its training
// logs, a summary of the dump as its node writes one, and a monitor output
// of the tests'.
type run struct {
	dump, logs, summary, monitor string
}

func realRun(t *testing.T) run {
	t.Helper()
	scen := fixturedir.Dir(t, "msprobe-generated", "bwd-sqrt-zero-rank2-step5")
	return run{
		dump:    filepath.Join(scen, "L1"),
		logs:    filepath.Join(scen, "train-log", "rank*.json"),
		summary: summaryOf(t, filepath.Join(scen, "L1")),
		monitor: filepath.Join("internal", "monitor", "testdata", "v2-optimizer"),
	}
}

// summaryOf writes the summary a node writes of dumpDir into a temporary
// folder and returns its path.
func summaryOf(t *testing.T, dumpDir string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node0.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := trace.Summarize(context.Background(), trace.SummaryOptions{Path: dumpDir}, f); err != nil {
		t.Fatalf("summarising %s: %v", dumpDir, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// want is what a verdict must hold.
type want struct {
	originStep int // -1: no origin
	log        bool
	monitor    bool
	planStep   int // a step the plan's config dumps
}

func TestRun(t *testing.T) {
	r := realRun(t)
	tests := []struct {
		name string
		in   nanhunt.Inputs
		want want
	}{
		{"the dump alone", nanhunt.Inputs{Dump: r.dump}, want{originStep: 5, planStep: 5}},
		{"the summaries of its node", nanhunt.Inputs{Dump: r.summary, Summaries: []string{r.summary}}, want{originStep: 5, planStep: 5}},
		{"the logs alone", nanhunt.Inputs{Log: nanhunt.LogInputs{Paths: []string{r.logs}}}, want{originStep: -1, log: true, planStep: 5}},
		{"the monitor alone", nanhunt.Inputs{Monitor: nanhunt.MonitorInputs{Dir: r.monitor, TPSize: 2}}, want{originStep: -1, monitor: true, planStep: 1}},
		{"the dump, the logs and the monitor", nanhunt.Inputs{Dump: r.dump, Log: nanhunt.LogInputs{Paths: []string{r.logs}, Format: "json"},
			Monitor: nanhunt.MonitorInputs{Dir: r.monitor}}, want{originStep: 5, log: true, monitor: true, planStep: 5}},
		{"the dump, some ranks, and the logs", nanhunt.Inputs{Dump: r.dump, Ranks: map[int]bool{2: true, 3: true}, Steps: map[int]bool{4: true, 5: true, 6: true},
			Log: nanhunt.LogInputs{Paths: []string{r.logs}}}, want{originStep: 5, log: true, planStep: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := nanhunt.Run(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, v, tt.want)
		})
	}
}

func checkVerdict(t *testing.T, v *verdict.Verdict, w want) {
	t.Helper()
	if !v.Anomaly {
		t.Errorf("no anomaly")
	}
	switch o := v.Origin; {
	case w.originStep < 0 && o != nil:
		t.Errorf("origin %+v, want none", o)
	case w.originStep >= 0 && (o == nil || o.Step != w.originStep || len(o.Ranks) != 1 || o.Ranks[0] != 2 || o.Op != "Torch.sqrt.0.backward"):
		t.Errorf("origin %+v, want Torch.sqrt.0.backward on rank 2 at step %d", o, w.originStep)
	}
	gotLog := v.Evidence != nil && v.Evidence.Log != nil
	gotMonitor := v.Evidence != nil && v.Evidence.Monitor != nil
	if gotLog != w.log || gotMonitor != w.monitor {
		t.Errorf("evidence of the log %v, of the monitor %v; want %v, %v", gotLog, gotMonitor, w.log, w.monitor)
	}
	if v.Plan == nil || !planDumps(v.Plan, w.planStep) {
		t.Errorf("plan %+v, want one that dumps step %d", v.Plan, w.planStep)
	}
}

// planDumps reports whether the plan's config dumps step (an any-step
// plan dumps every step).
func planDumps(p *verdict.Plan, step int) bool {
	return len(p.Config.Step) == 0 && p.Mode == "any-step" || slices.Contains(p.Config.Step, step)
}

// The plan's options reach the plan: its dump_path, and the estimate the
// summaries give is the one the dump gives.
func TestRunPlanOptions(t *testing.T) {
	r := realRun(t)
	opt := nanhunt.PlanOptions{DumpPath: "/data/followup", Mode: "same-step", Budget: 1 << 30}
	fromDump, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Dump: r.dump, Plan: opt})
	if err != nil {
		t.Fatal(err)
	}
	fromSummary, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Summaries: []string{r.summary}, Plan: opt})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]*verdict.Verdict{"dump": fromDump, "summary": fromSummary} {
		if p := v.Plan; p == nil || p.Config.DumpPath != "/data/followup" || p.Mode != "same-step" || p.Estimate == nil {
			t.Errorf("from the %s: plan %+v", name, p)
		}
	}
	if a, b := fromDump.Plan.Estimate, fromSummary.Plan.Estimate; a != nil && b != nil && a.PerRankStep != b.PerRankStep {
		t.Errorf("estimate from the dump %d bytes a rank-step, from the summary %d", a.PerRankStep, b.PerRankStep)
	}
}

// A verdict made before is not analysed again: the logs are joined with it
// and it is planned with the options given.
func TestRunSavedVerdict(t *testing.T) {
	r := realRun(t)
	saved, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Dump: r.dump})
	if err != nil {
		t.Fatal(err)
	}
	saved.Plan = nil
	v, err := nanhunt.Run(context.Background(), nanhunt.Inputs{Verdict: saved, Log: nanhunt.LogInputs{Paths: []string{r.logs}},
		Plan: nanhunt.PlanOptions{DumpPath: "/data/followup"}})
	if err != nil {
		t.Fatal(err)
	}
	checkVerdict(t, v, want{originStep: 5, log: true, planStep: 5})
	if v.Plan.Config.DumpPath != "/data/followup" {
		t.Errorf("plan dump_path %q", v.Plan.Config.DumpPath)
	}
}

// What cannot be read, or does not parse, is an error; nothing is read
// first.
func TestRunErrors(t *testing.T) {
	r := realRun(t)
	dir := t.TempDir()
	badRules := filepath.Join(dir, "rules.json")
	os.WriteFile(badRules, []byte(`[{"op": "x", "side": "sideways"}]`), 0o644)
	tests := []struct {
		name  string
		in    nanhunt.Inputs
		check func(error) bool
	}{
		{"nothing to read", nanhunt.Inputs{}, func(err error) bool { return errors.Is(err, nanhunt.ErrNothingToRead) }},
		{"only plan options", nanhunt.Inputs{Plan: nanhunt.PlanOptions{Mode: "same-step"}}, func(err error) bool { return errors.Is(err, nanhunt.ErrNothingToRead) }},
		{"a rules file that does not parse", nanhunt.Inputs{Dump: r.dump, RulesFile: badRules}, func(err error) bool {
			var ie *nanhunt.InputError
			return errors.As(err, &ie) && ie.File == badRules
		}},
		{"a log pattern that does not parse", nanhunt.Inputs{Dump: r.dump, Log: nanhunt.LogInputs{Paths: []string{r.logs}, Patterns: []string{"step"}}},
			func(err error) bool { return err != nil }},
		{"a missing dump", nanhunt.Inputs{Dump: filepath.Join(dir, "none")}, func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"a missing log", nanhunt.Inputs{Dump: r.dump, Log: nanhunt.LogInputs{Paths: []string{filepath.Join(dir, "train.log")}}},
			func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
		{"an empty monitor folder", nanhunt.Inputs{Monitor: nanhunt.MonitorInputs{Dir: dir}}, func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := nanhunt.Run(context.Background(), tt.in)
			if v != nil || !tt.check(err) {
				t.Errorf("verdict %v, error %v", v != nil, err)
			}
		})
	}
}

// A cancelled context stops every reader: Run returns its error at once.
func TestRunCancelled(t *testing.T) {
	r := realRun(t)
	tests := []struct {
		name string
		in   nanhunt.Inputs
	}{
		{"the dump", nanhunt.Inputs{Dump: r.dump}},
		{"the summary", nanhunt.Inputs{Summaries: []string{r.summary}}},
		{"the logs", nanhunt.Inputs{Log: nanhunt.LogInputs{Paths: []string{r.logs}}}},
		{"the monitor", nanhunt.Inputs{Monitor: nanhunt.MonitorInputs{Dir: r.monitor}}},
		{"all three", nanhunt.Inputs{Dump: r.dump, Log: nanhunt.LogInputs{Paths: []string{r.logs}}, Monitor: nanhunt.MonitorInputs{Dir: r.monitor}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			start := time.Now()
			v, err := nanhunt.Run(ctx, tt.in)
			if v != nil || !errors.Is(err, context.Canceled) {
				t.Errorf("verdict %v, error %v", v != nil, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("returned after %v", d)
			}
		})
	}
}

// A context cancelled while the files are read (here at the dump's first
// progress snapshot) gives its error, not a verdict of what was read
// before.
func TestRunCancelledWhileReading(t *testing.T) {
	r := realRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snapshots := 0
	in := nanhunt.Inputs{Dump: r.dump, Log: nanhunt.LogInputs{Paths: []string{r.logs}}, Monitor: nanhunt.MonitorInputs{Dir: r.monitor},
		Progress: func(nanhunt.Progress) { snapshots++; cancel() }}
	v, err := nanhunt.Run(ctx, in)
	if snapshots == 0 || v != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("%d snapshots, verdict %v, error %v", snapshots, v != nil, err)
	}
}
