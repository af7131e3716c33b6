package watch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/sources"
	"github.com/nanhunt/nanhunt/internal/synth"
)

// The verdict of an alarm the dump raises holds what the followed log and
// monitor said next to it, as a trace given --log and --monitor does.
func TestDumpAlarmHasEvidence(t *testing.T) {
	var spec synth.Spec
	for _, sc := range synth.Scenarios() {
		if sc.Name == "log-negative" {
			spec = sc.Spec
		}
	}
	root := t.TempDir()
	dir := filepath.Join(root, "dump")
	side := synth.Sidecars{LogDir: filepath.Join(root, "log"), MonitorDir: filepath.Join(root, "monitor")}
	if _, err := synth.GenerateWith(spec, dir, side); err != nil {
		t.Fatal(err)
	}
	opt := fast
	opt.Sources = sources.Inputs{Log: sources.Log{Paths: []string{filepath.Join(side.LogDir, "train.log")}}, Monitor: sources.Monitor{Dir: side.MonitorDir}}
	events, res := watchDump(t, dir, opt)
	alarm := kinds(events, EventAnomaly)
	if res.Alarm == nil || len(alarm) != 1 {
		t.Fatalf("alarm %+v, want one", alarm)
	}
	e := res.Alarm.Evidence
	if e == nil || e.Log == nil || e.Monitor == nil {
		t.Fatalf("the alarm's verdict has evidence %+v, want the log's and the monitor's", e)
	}
	joined := strings.Join(e.Agreements, " ")
	if !strings.Contains(joined, "The log first prints") || !strings.Contains(joined, "The monitor first shows it") {
		t.Errorf("agreements %q: want the log and the monitor set beside the dump", e.Agreements)
	}
	if len(e.Contradictions) > 0 {
		t.Errorf("contradictions %q", e.Contradictions)
	}
}

// On a real msprobe run with its per-rank training logs followed, the
// alarm's verdict sets the log beside the dump as a trace does.
func TestDumpAlarmHasEvidenceRealRun(t *testing.T) {
	run := realruns.Dir(t, "pp-weight-from-update")
	opt := fast
	opt.Sources = sources.Inputs{Log: sources.Log{Paths: []string{filepath.Join(run, "train-log", "rank*.json")}}}
	events, res := watchDump(t, filepath.Join(run, "L1"), opt)
	if res.Alarm == nil || len(kinds(events, EventAnomaly)) != 1 {
		t.Fatalf("no alarm: %+v", kinds(events, EventAnomaly))
	}
	e := res.Alarm.Evidence
	if e == nil || e.Log == nil || e.Log.FirstNaNStep == nil || *e.Log.FirstNaNStep != 3 {
		t.Fatalf("the alarm's verdict has evidence %+v, want the log's NaN loss at step 3", e)
	}
	if !strings.Contains(strings.Join(e.Agreements, " "), "the update the dump names wrote them") {
		t.Errorf("agreements %q: want the log's non-finite parameters set beside the update", e.Agreements)
	}
	if len(e.Contradictions) > 0 {
		t.Errorf("contradictions %q", e.Contradictions)
	}
}
