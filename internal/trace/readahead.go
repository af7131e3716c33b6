package trace

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/nanhunt/nanhunt/dump"
)

// readAhead reads the next step's files on the workers a step leaves idle.
//
// The steps are read in order and the next one starts when the step before
// is decided, so a step of fewer files than workers would leave cores
// idle: one rank's run would use one core, eight ranks on a 64-core node
// eight. Those workers start on the files of the step the caller reads
// next whatever this one holds (unless it ends the run); the scans run on
// while the step is analysed, and the next step's read takes them instead
// of reading the files again (a file's scan depends on nothing but the
// file and the rules). No more files are in flight than there are workers,
// only one step ahead is read, and what is in flight when the run ends is
// cancelled: at most one step's files are read in vain, by cores that had
// nothing else to do.
//
// A worker that runs out of the step's files while others still read
// theirs starts one of the next step's files too, instead of waiting at
// the step's end: the steps' files need not take the same time (the
// ranks of the anomalous step are walked, a large rank's file is read
// longer). Every scan, of the step or ahead of it, holds one of the
// analysis's slots while it reads (analysis.slot), so that no more files
// than workers are read at once.
type readAhead struct {
	mu     sync.Mutex
	scans  map[string]*earlyScan // by rank folder
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// earlyScan is a scan started ahead; s is set when done is closed.
type earlyScan struct {
	done   chan struct{}
	s      *rankScan
	cancel context.CancelFunc
}

// aheadTaken counts the scans taken from those read ahead, for the tests.
var aheadTaken atomic.Int64

// start reads dirs ahead, each on a worker of its own, up to n of those
// not started yet.
func (r *readAhead) start(a *analysis, dirs []dump.RankDir, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(dirs) == 0 || n <= 0 {
		return
	}
	if r.scans == nil {
		r.scans = map[string]*earlyScan{}
		r.ctx, r.cancel = context.WithCancel(a.ctx)
	}
	for _, d := range dirs {
		if r.scans[d.Dir] != nil {
			continue
		}
		if n--; n < 0 {
			return
		}
		ctx, cancel := context.WithCancel(r.ctx)
		e := &earlyScan{done: make(chan struct{}), cancel: cancel}
		r.scans[d.Dir] = e
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(e.done)
			defer cancel()
			sc := a.scanner()
			defer a.scanners.Put(sc)
			defer a.slot()()
			e.s = sc.scanFile(ctx, d, scanAll)
		}()
	}
}

// take returns, by position in dirs, the scans started ahead for them (nil
// for the others), and forgets every other: the step that was next is the
// one read now. A scanAll scan serves scanUntilSevere too, which reads on
// to the end of a file that holds no anomaly; but one still running is
// cancelled instead (its file is read again the checking way, which stops
// at the first anomaly: the step after an anomaly is full of them).
func (r *readAhead) take(dirs []dump.RankDir, mode scanMode) []*earlyScan {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*earlyScan, len(dirs))
	if len(r.scans) == 0 {
		return out
	}
	if mode != scanWhole {
		for i, d := range dirs {
			e := r.scans[d.Dir]
			if e == nil {
				continue
			}
			if mode == scanUntilSevere {
				select {
				case <-e.done:
				default:
					e.cancel()
					continue
				}
			}
			out[i] = e
			aheadTaken.Add(1)
		}
	}
	clear(r.scans) // any left run to their end unseen (none, as the caller reads)
	return out
}

// stop cancels what is still read ahead and waits for it.
func (r *readAhead) stop() {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
