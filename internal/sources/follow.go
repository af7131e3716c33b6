package sources

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nanhunt/nanhunt/internal/evidence"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// Reading is what a follower holds from its last read that succeeded:
// the evidence, the warnings of that read, and what it warns of before
// the NaN.
type Reading struct {
	Log      *verdict.LogEvidence
	Monitor  *verdict.MonitorEvidence
	Warnings []verdict.Warning
	Ahead    Ahead
}

// CombineReadings joins the followers' last readings with a verdict, as
// Said.Combine joins a read's, and plans with popt.
func CombineReadings(v *verdict.Verdict, popt plan.Options, readings ...Reading) *verdict.Verdict {
	var le *verdict.LogEvidence
	var me *verdict.MonitorEvidence
	var warnings []verdict.Warning
	var ahead []Ahead
	for _, r := range readings {
		le, me = cmpOr(r.Log, le), cmpOr(r.Monitor, me)
		warnings = append(warnings, r.Warnings...)
		ahead = append(ahead, r.Ahead)
	}
	v = evidence.Combine(v, le, me, popt)
	v.Warnings = append(v.Warnings, warnings...)
	addAhead(v, ahead...)
	return v
}

// cmpOr is a unless it is nil, else b.
func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// LogFollower follows growing training logs: they are read again when
// they have grown, or when a file of them appeared or went. A read that
// fails is returned by FirstBad, and again at each call until a read
// succeeds; a log file that is not there (a mistyped path, a glob that
// matches nothing) fails the first look, as it fails a trace, rather than
// leave the log unread in silence. Files that are all there and still
// empty are not read: nothing is wrong, nothing is written yet.
type LogFollower struct {
	log     Log
	size    int64   // of the files there, at the last look
	missing int     // files not there at the last look
	last    Reading // of the last read that succeeded
	lastErr error   // of the last read, nil when it succeeded
}

// NewLogFollower follows the logs l names.
func NewLogFollower(l Log) *LogFollower { return &LogFollower{log: l} }

// Name is how a watch names the source.
func (f *LogFollower) Name() string { return "log" }

// FirstBad reads the logs when they have grown (or a file of them
// appeared or went) and returns the first dump step they show a
// non-finite value at, when they do; err is why the last read failed.
func (f *LogFollower) FirstBad(ctx context.Context) (int, bool, error) {
	var size int64
	missing := 0
	for _, p := range f.log.Files() {
		if info, err := os.Stat(p); err == nil {
			size += info.Size()
		} else {
			missing++
		}
	}
	if size != f.size || missing != f.missing {
		f.size, f.missing = size, missing
		if size == 0 && missing == 0 {
			f.lastErr = nil
		} else {
			l, err := f.log.Read(ctx)
			f.lastErr = err
			if err == nil {
				f.last = Reading{Log: evidence.FromLog(l), Warnings: logWarnings(l), Ahead: logAhead(l)}
			}
		}
	}
	if f.lastErr != nil {
		return 0, false, f.lastErr
	}
	if le := f.last.Log; le != nil && le.FirstNaNStep != nil {
		return *le.FirstNaNStep, true, nil
	}
	return 0, false, nil
}

// Last is what the logs said at the last read that succeeded.
func (f *LogFollower) Last() Reading { return f.last }

// MonitorFollower follows the monitor's CSV files, read again when they
// have grown, at most every few seconds (a run of many ranks writes many
// files). A read that fails is returned by FirstBad, and again at each
// call until a read succeeds; a monitor folder that is not there fails
// the first look, as it fails a trace, until it is made. A folder without
// CSV files yet is not read: the monitor has written nothing so far.
type MonitorFollower struct {
	monitor Monitor
	size    int64
	gone    bool // the folder was not there at the last look
	after   time.Time
	last    Reading
	lastErr error
}

// NewMonitorFollower follows the monitor output m names.
func NewMonitorFollower(m Monitor) *MonitorFollower { return &MonitorFollower{monitor: m} }

// Name is how a watch names the source.
func (f *MonitorFollower) Name() string { return "monitor" }

// monitorEvery is how often the monitor's files are looked at.
const monitorEvery = 2 * time.Second

// FirstBad reads the monitor output when it has grown and returns the
// first dump step it shows a non-finite value at, when it does; err is
// why the last read failed.
func (f *MonitorFollower) FirstBad(ctx context.Context) (int, bool, error) {
	if now := time.Now(); !now.Before(f.after) {
		f.after = now.Add(monitorEvery)
		_, statErr := os.Stat(f.monitor.Dir)
		gone := statErr != nil
		size := int64(0)
		if !gone {
			size = csvBytes(f.monitor.Dir)
		}
		read := size != f.size && size != 0 || gone && !f.gone
		if !gone && f.gone && size == 0 {
			f.lastErr = nil // made, and nothing written in it yet
		}
		f.size, f.gone = size, gone
		if read {
			run, err := f.monitor.Read(ctx)
			f.lastErr = err
			if err == nil {
				f.last = Reading{Monitor: evidence.FromMonitor(run), Warnings: monitorWarnings(run), Ahead: monitorAhead(run)}
			}
		}
	}
	if f.lastErr != nil {
		return 0, false, f.lastErr
	}
	if me := f.last.Monitor; me != nil && me.Step != nil {
		return *me.Step, true, nil
	}
	return 0, false, nil
}

// Last is what the monitor said at the last read that succeeded.
func (f *MonitorFollower) Last() Reading { return f.last }

// csvBytes is the size of the CSV files under dir.
func csvBytes(dir string) int64 {
	var size int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".csv" {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return size
}
