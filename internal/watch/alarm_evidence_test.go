package watch

import (
	"path/filepath"
	"strings"
	"testing"

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
