package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nanhunt/nanhunt/internal/evidence"
	"github.com/nanhunt/nanhunt/internal/monitor"
	"github.com/nanhunt/nanhunt/internal/watch"
	"github.com/nanhunt/nanhunt/verdict"
)

// logSidecar follows growing training logs: they are read again when they
// have grown.
type logSidecar struct {
	f    *evidenceFlags
	size int64
	last *verdict.LogEvidence // what the logs said at the last read
}

func (s *logSidecar) Name() string { return "log" }

func (s *logSidecar) FirstBad(ctx context.Context) (int, bool, error) {
	var size int64
	for _, p := range s.f.logPaths() {
		if info, err := os.Stat(p); err == nil {
			size += info.Size()
		}
	}
	if size == s.size {
		return 0, false, nil
	}
	s.size = size
	l, err := s.f.readLogs(ctx)
	if err != nil {
		return 0, false, err
	}
	le := evidence.FromLog(l)
	s.last = le
	if le == nil || le.FirstNaNStep == nil {
		return 0, false, nil
	}
	return *le.FirstNaNStep, true, nil
}

// monitorSidecar follows the monitor's CSV files, read again when they have
// grown, at most every few seconds (a run of many ranks writes many files).
type monitorSidecar struct {
	f     *evidenceFlags
	size  int64
	after time.Time
	last  *verdict.MonitorEvidence // what the monitor said at the last read
}

func (s *monitorSidecar) Name() string { return "monitor" }

func (s *monitorSidecar) FirstBad(ctx context.Context) (int, bool, error) {
	if time.Now().Before(s.after) {
		return 0, false, nil
	}
	s.after = time.Now().Add(2 * time.Second)
	var size int64
	filepath.WalkDir(s.f.monitor, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".csv" {
			if info, err := d.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	if size == s.size || size == 0 {
		return 0, false, nil
	}
	s.size = size
	opt := monitor.Options{}
	if s.f.tpSize > 1 {
		opt.Groups = monitor.TPGroups(worldOf(s.f.monitorRanks()), s.f.tpSize)
	}
	run, err := monitor.Read(ctx, s.f.monitor, opt)
	if err != nil {
		return 0, false, nil // not readable yet: looked at again when it grows
	}
	me := evidence.FromMonitor(run)
	s.last = me
	if me == nil || me.Step == nil {
		return 0, false, nil
	}
	return *me.Step, true, nil
}

// sidecarEvidence is what the sidecars said at their last read (nil for a
// source not followed).
func sidecarEvidence(sidecars []watch.Sidecar) (*verdict.LogEvidence, *verdict.MonitorEvidence) {
	var le *verdict.LogEvidence
	var me *verdict.MonitorEvidence
	for _, sc := range sidecars {
		switch sc := sc.(type) {
		case *logSidecar:
			le = sc.last
		case *monitorSidecar:
			me = sc.last
		}
	}
	return le, me
}
