package evidence

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/internal/trace"
	"github.com/nanhunt/nanhunt/internal/trainlog"
	"github.com/nanhunt/nanhunt/verdict"
)

// Every generated scenario, traced with the Megatron-LM log and the
// TrainerMon output of its own simulation, under both monitor op sets: the
// three sources come from one run, so they never contradict each other,
// and the evidence neither raises an alarm the run does not hold nor
// hides one it does.
func TestEvidenceEveryScenario(t *testing.T) {
	for _, sc := range synth.Scenarios() {
		for _, ops := range [][]string{nil, {"min", "max", "norm", "nans"}} {
			t.Run(fmt.Sprintf("%s/ops=%s", sc.Name, strings.Join(ops, ",")), func(t *testing.T) {
				t.Parallel()
				r := generate(t, sc, ops)
				v := r.combine(t)
				if c := v.Evidence.Contradictions; len(c) > 0 {
					t.Errorf("contradictions %q\nagreements %q\nnotes %q", c, v.Evidence.Agreements, v.Evidence.Notes)
				}
				if v.Anomaly != r.truth.Anomaly {
					t.Errorf("anomaly %v, the run's truth %v (headline evidence %q, notes %q)", v.Anomaly, r.truth.Anomaly, v.Evidence.Agreements, v.Evidence.Notes)
				}
			})
		}
	}
}

// A true contradiction seeded into a scenario is still found: the log
// or the monitor, tampered with, shows a NaN at a step the dump read
// whole and clean, before the dump's origin.
func TestEvidenceSeededContradiction(t *testing.T) {
	seeded := 0
	for _, sc := range synth.Scenarios() {
		// a subtest per scenario: its run is deleted when it is done
		t.Run(sc.Name, func(t *testing.T) {
			r := generate(t, sc, []string{"min", "max", "norm", "nans"})
			clean := r.cleanStepBeforeOrigin(t)
			if clean < 0 {
				return
			}
			seeded++
			t.Run("log", func(t *testing.T) {
				r.tamperLog(t, clean)
				v := r.combine(t)
				if !anyContains(v.Evidence.Contradictions, fmt.Sprintf("at step %d", clean)) {
					t.Errorf("a log NaN at the clean step %d: contradictions %q, notes %q", clean, v.Evidence.Contradictions, v.Evidence.Notes)
				}
			})
			t.Run("monitor", func(t *testing.T) {
				r.tamperMonitor(t, clean)
				r.log = ""
				v := r.combine(t)
				if !anyContains(v.Evidence.Contradictions, fmt.Sprintf("at step %d", clean)) {
					t.Errorf("a monitor NaN at the clean step %d: contradictions %q, notes %q", clean, v.Evidence.Contradictions, v.Evidence.Notes)
				}
			})
		})
	}
	if seeded < 10 {
		t.Errorf("only %d scenarios have a clean dumped step before their origin", seeded)
	}
}

// run is a generated scenario with its log and monitor output.
type run struct {
	truth     *synth.Truth
	dump, log string
	monitor   string
}

func generate(t *testing.T, sc synth.Scenario, ops []string) *run {
	t.Helper()
	root := t.TempDir()
	side := synth.Sidecars{LogDir: filepath.Join(root, "log"), MonitorDir: filepath.Join(root, "monitor"), MonitorOps: ops}
	truth, err := synth.GenerateWith(sc.Spec, filepath.Join(root, "dump"), side)
	if err != nil {
		t.Fatal(err)
	}
	return &run{truth: truth, dump: filepath.Join(root, "dump"), log: filepath.Join(side.LogDir, "train.log"), monitor: side.MonitorDir}
}

// combine traces the dump and joins the log and the monitor to it.
func (r *run) combine(t *testing.T) *verdict.Verdict {
	t.Helper()
	ctx := context.Background()
	v, err := trace.Run(ctx, trace.Options{Path: r.dump})
	if err != nil {
		t.Fatal(err)
	}
	var le *verdict.LogEvidence
	if r.log != "" {
		l, err := trainlog.Read(ctx, []string{r.log}, trainlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		le = FromLog(l)
	}
	m, err := monitor.Read(ctx, r.monitor, monitor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Combine(v, le, FromMonitor(m), plan.Options{})
}

// cleanStepBeforeOrigin is a step the dump read whole and clean before
// its origin, -1 when there is none.
func (r *run) cleanStepBeforeOrigin(t *testing.T) int {
	v, err := trace.Run(context.Background(), trace.Options{Path: r.dump})
	if err != nil {
		t.Fatal(err)
	}
	if v.Origin == nil {
		return -1
	}
	for _, st := range v.Steps {
		if st.Step < v.Origin.Step && st.Status == "clean" {
			return st.Step
		}
	}
	return -1
}

var gradNorm = regexp.MustCompile(`grad norm: [^|]*\|`)

// tamperLog makes the log print a NaN grad norm at step (iteration step+1).
func (r *run) tamperLog(t *testing.T, step int) {
	t.Helper()
	data, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	it := regexp.MustCompile(fmt.Sprintf(`iteration +%d/`, step+1))
	done := false
	for i, l := range lines {
		if it.MatchString(l) && gradNorm.MatchString(l) {
			lines[i], done = gradNorm.ReplaceAllString(l, "grad norm: nan |"), true
		}
	}
	if !done {
		t.Fatalf("no line of iteration %d with a grad norm in %s", step+1, r.log)
	}
	if err := os.WriteFile(r.log, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tamperMonitor gives the first activation row of step a NaN count.
func (r *run) tamperMonitor(t *testing.T, step int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.monitor, "*", "actv_*.csv"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		cols := strings.Split(lines[0], ",")
		stepCol, nansCol := index(cols, "step"), index(cols, "nans")
		for i, l := range lines[1:] {
			fields := strings.Split(l, ",")
			if len(fields) <= max(stepCol, nansCol) || fields[stepCol] != fmt.Sprint(step) {
				continue
			}
			fields[nansCol] = "3.0"
			lines[i+1] = strings.Join(fields, ",")
			if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no activation row of step %d in %s", step, r.monitor)
}

func index(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}
