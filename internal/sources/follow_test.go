package sources

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// megatronLog is a Megatron-LM log of the trainlog tests: a NaN grad
// norm at iteration 5, dump step 4.
var megatronLog = filepath.Join("..", "trainlog", "testdata", "megatron-fp16.log")

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A followed source that cannot be read says so: FirstBad returns why,
// again at each call while nothing changed, and a log read whole after
// it grew ends the failure; a log file that cannot be read beside one
// that can is a warning of the reading.
func TestFollowerReportsReadErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.log")
	os.WriteFile(garbage, []byte("no training log line here\n"), 0o644)
	folderLog := filepath.Join(dir, "a-folder.log")
	os.Mkdir(folderLog, 0o755)
	badCSV := filepath.Join(dir, "monitor", "rank_0")
	os.MkdirAll(badCSV, 0o755)
	os.WriteFile(filepath.Join(badCSV, "module_0-9.csv"), []byte("\x00\x01 not a csv header\n\x02\n"), 0o644)
	tests := []struct {
		name   string
		follow interface {
			FirstBad(context.Context) (int, bool, error)
		}
		want string
	}{
		{"a log without a line of a training log", NewLogFollower(Log{Paths: []string{garbage}}), "no training-log lines recognised"},
		{"a log that is a folder", NewLogFollower(Log{Paths: []string{folderLog}}), "no file could be read"},
		{"a monitor folder without a readable csv", NewMonitorFollower(Monitor{Dir: filepath.Join(dir, "monitor")}), "no readable monitor csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for call := 1; call <= 2; call++ {
				_, ok, err := tt.follow.FirstBad(context.Background())
				if ok || err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("call %d: ok %v, error %v, want one saying %q", call, ok, err, tt.want)
				}
			}
		})
	}
	t.Run("the log is read whole once it grew", func(t *testing.T) {
		f := NewLogFollower(Log{Paths: []string{garbage}})
		if _, _, err := f.FirstBad(context.Background()); err == nil {
			t.Fatal("no error for a log without a line of a training log")
		}
		copyFile(t, megatronLog, garbage)
		step, ok, err := f.FirstBad(context.Background())
		if err != nil || !ok || step != 4 {
			t.Errorf("step %d, ok %v, error %v, want the NaN at step 4", step, ok, err)
		}
	})
	t.Run("a log that cannot be read beside one that can", func(t *testing.T) {
		good := filepath.Join(dir, "rank0.log")
		copyFile(t, megatronLog, good)
		f := NewLogFollower(Log{Paths: []string{good, folderLog}})
		if _, ok, err := f.FirstBad(context.Background()); err != nil || !ok {
			t.Fatalf("ok %v, error %v", ok, err)
		}
		found := false
		for _, w := range f.Last().Warnings {
			found = found || w.File == folderLog
		}
		if !found {
			t.Errorf("warnings %+v name no %s", f.Last().Warnings, folderLog)
		}
	})
}

// A followed log or monitor folder that is not there is no silent gap:
// the first look fails, as a trace with the same flag does, and again at
// each call while it is missing; once made and still empty nothing is
// wrong (the run has written nothing yet); once written it is read.
func TestFollowerReportsWhatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	t.Run("a log file", func(t *testing.T) {
		missing := filepath.Join(dir, "train.log")
		f := NewLogFollower(Log{Paths: []string{missing}})
		for call := 1; call <= 2; call++ {
			if _, ok, err := f.FirstBad(context.Background()); ok || err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("call %d: ok %v, error %v, want one naming %s as not there", call, ok, err, missing)
			}
		}
		if err := os.WriteFile(missing, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := f.FirstBad(context.Background()); ok || err != nil {
			t.Fatalf("made empty: ok %v, error %v, want neither", ok, err)
		}
		copyFile(t, megatronLog, missing)
		if step, ok, err := f.FirstBad(context.Background()); err != nil || !ok || step != 4 {
			t.Errorf("written: step %d, ok %v, error %v, want the NaN at step 4", step, ok, err)
		}
	})
	t.Run("a glob that matches nothing", func(t *testing.T) {
		glob := filepath.Join(dir, "logs", "rank*.log")
		f := NewLogFollower(Log{Paths: []string{glob}})
		if _, ok, err := f.FirstBad(context.Background()); ok || err == nil || !strings.Contains(err.Error(), glob) {
			t.Errorf("ok %v, error %v, want one naming %s", ok, err, glob)
		}
	})
	t.Run("a monitor folder", func(t *testing.T) {
		mon := filepath.Join(dir, "monitor_output")
		f := NewMonitorFollower(Monitor{Dir: mon})
		for call := 1; call <= 2; call++ {
			f.after = time.Time{} // a look at each call, not every few seconds
			if _, ok, err := f.FirstBad(context.Background()); ok || err == nil || !strings.Contains(err.Error(), mon) || !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("call %d: ok %v, error %v, want one naming %s as not there", call, ok, err, mon)
			}
		}
		if err := os.Mkdir(mon, 0o755); err != nil {
			t.Fatal(err)
		}
		f.after = time.Time{}
		if _, ok, err := f.FirstBad(context.Background()); ok || err != nil {
			t.Fatalf("made empty: ok %v, error %v, want neither", ok, err)
		}
		if err := os.CopyFS(mon, os.DirFS(filepath.Join("..", "monitor", "testdata", "v1-forward-tp"))); err != nil {
			t.Fatal(err)
		}
		f.after = time.Time{}
		if _, ok, err := f.FirstBad(context.Background()); err != nil || !ok {
			t.Errorf("written: ok %v, error %v, want the monitor's non-finite step", ok, err)
		}
	})
}
