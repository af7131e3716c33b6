package trace

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/nanhunt/nanhunt/dump"
)

// Progress is a snapshot of a running analysis, for a progress display.
type Progress struct {
	Step      int   // the step being read
	StepsDone int   // steps finished
	Steps     int   // steps that may be read (the scan usually stops earlier)
	FilesDone int   // dump.json files finished
	Files     int   // dump.json files that may be read
	BytesRead int64 // bytes read so far (a file may be read twice: searched, then parsed)
	Bytes     int64 // total size of the files that may be read
	Elapsed   time.Duration
	Final     bool // the last snapshot
}

// progress counts what the workers read; its fields are updated
// atomically and reported from one goroutine.
type progress struct {
	fn                   func(Progress)
	start                time.Time
	step, stepsDone      atomic.Int64
	filesDone, bytesRead atomic.Int64
	steps, files         int
	bytes                int64
}

func newProgress(fn func(Progress), dirs []dump.RankDir) *progress {
	if fn == nil {
		return nil
	}
	p := &progress{fn: fn, start: time.Now(), files: len(dirs)}
	steps := map[int]bool{}
	for _, d := range dirs {
		steps[d.Step] = true
		if info, err := os.Stat(d.Dump); err == nil {
			p.bytes += info.Size()
		}
	}
	p.steps = len(steps)
	return p
}

func (p *progress) snapshot(final bool) Progress {
	return Progress{
		Step: int(p.step.Load()), StepsDone: int(p.stepsDone.Load()), Steps: p.steps,
		FilesDone: int(p.filesDone.Load()), Files: p.files,
		BytesRead: p.bytesRead.Load(), Bytes: p.bytes,
		Elapsed: time.Since(p.start), Final: final,
	}
}

// run reports a snapshot every interval until stop is closed, then a final one.
func (p *progress) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.fn(p.snapshot(false))
		case <-stop:
			p.fn(p.snapshot(true))
			return
		}
	}
}

// The methods below accept a nil *progress, so the scan needs no checks.

func (p *progress) read(n int) {
	if p != nil {
		p.bytesRead.Add(int64(n))
	}
}

func (p *progress) fileDone() {
	if p != nil {
		p.filesDone.Add(1)
	}
}

func (p *progress) startStep(step int) {
	if p != nil {
		p.step.Store(int64(step))
	}
}

func (p *progress) stepDone() {
	if p != nil {
		p.stepsDone.Add(1)
	}
}
