package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/sources"
)

// failingSource is a sidecar whose every read fails.
type failingSource struct {
	name string
	err  error
}

func (f failingSource) Name() string { return f.name }
func (f failingSource) FirstBad(context.Context) (int, bool, error) {
	return 0, false, f.err
}

// A followed source that cannot be read (or is not there) is reported once
// (not at every poll) and named in the alarm's verdict, whether the dump or another
// source raises the alarm; the verdict of the dump's alarm carries its
// plan.
func TestSidecarReadErrorsReported(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "train.log")
	if err := os.WriteFile(garbage, []byte("no training log line here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missingLog := filepath.Join(t.TempDir(), "train-typo.log")
	tests := []struct {
		name    string
		dir     string
		opt     func(*Options)
		source  string // of the warning
		message string // in the warning and the verdict
		alarmBy string
	}{
		{"the monitor fails, the log raises the alarm", edited(t, "log-negative", removed("step2", "step3")), func(o *Options) {
			o.IdleExit = 0
			o.Sidecars = []Sidecar{fakeSource{name: "log", step: 2}, failingSource{name: "monitor", err: errors.New("rank_0/actv_0-9.csv: permission denied")}}
		}, "monitor", "rank_0/actv_0-9.csv: permission denied", "log"},
		{"the followed log does not parse, the dump raises the alarm", generate(t, "log-negative"), func(o *Options) {
			o.Sources = sources.Inputs{Log: sources.Log{Paths: []string{garbage}}}
		}, "log", "no training-log lines recognised", "dump"},
		{"the followed log is not there, the dump raises the alarm", generate(t, "log-negative"), func(o *Options) {
			o.Sources = sources.Inputs{Log: sources.Log{Paths: []string{missingLog}}}
		}, "log", missingLog + ": no such file or directory", "dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := fast
			tt.opt(&opt)
			events, res := watchDump(t, tt.dir, opt)
			warned := kinds(events, EventWarning)
			if len(warned) != 1 || warned[0].Source != tt.source || !strings.Contains(warned[0].Message, tt.message) {
				t.Fatalf("warnings %+v, want one of the %s saying %q", warned, tt.source, tt.message)
			}
			alarm := kinds(events, EventAnomaly)
			if res.Alarm == nil || len(alarm) != 1 || alarm[0].Source != tt.alarmBy {
				t.Fatalf("alarm %+v, want one from the %s", alarm, tt.alarmBy)
			}
			found := false
			for _, w := range res.Alarm.Warnings {
				found = found || strings.Contains(w.Message, "followed "+tt.source) && strings.Contains(w.Message, tt.message)
			}
			if !found {
				t.Errorf("the alarm's warnings %+v do not name the %s's failure", res.Alarm.Warnings, tt.source)
			}
			if tt.alarmBy == "dump" && res.Alarm.Plan == nil {
				t.Errorf("the alarm's verdict has no plan")
			}
		})
	}
}
