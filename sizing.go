package nanhunt

import (
	"fmt"
	"sync"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// sizing is a run's sizing of the plan's follow-up dump
// (plan.Options.Measure): each step, rank and list of APIs is measured
// once (the plan made again with a log's or the monitor's evidence asks
// what the dump's plan asked), and the one the plan will ask for begins
// as soon as the dump has decided the origin (trace.Options.Decided),
// beside the warnings before the NaN, from the dump.json the trace found:
// the dump's folders are not listed again. A measure begun for a plan
// that never asks (the run failed after the origin was decided) ends on
// its own: it reads one file.
type sizing struct {
	measure func(step, rank int, apis []string) (plan.Sizes, error)
	mu      sync.Mutex
	runs    map[string]*sizingRun
}

// sizingRun is one measure, under way or done.
type sizingRun struct {
	done  chan struct{}
	sizes plan.Sizes
	err   error
}

// newSizing measures with measure, once for each step, rank and APIs.
func newSizing(measure func(step, rank int, apis []string) (plan.Sizes, error)) *sizing {
	return &sizing{measure: measure, runs: map[string]*sizingRun{}}
}

func sizingKey(step, rank int, apis []string) string {
	return fmt.Sprintf("%d %d %q", step, rank, apis)
}

// run returns the measure of key, begun by begin (in its own goroutine)
// unless it was begun before.
func (s *sizing) run(key string, begin func() (plan.Sizes, error)) *sizingRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[key]; ok {
		return r
	}
	r := &sizingRun{done: make(chan struct{})}
	s.runs[key] = r
	go func() {
		defer close(r.done)
		r.sizes, r.err = begin()
	}()
	return r
}

// decided begins the measure the plan of v will ask for, if any, on the
// dump.json dumpOf names.
func (s *sizing) decided(v *verdict.Verdict, dumpOf func(step, rank int) (string, bool)) {
	step, rank, apis, ok := plan.Measured(v)
	if !ok {
		return
	}
	if file, found := dumpOf(step, rank); found {
		s.run(sizingKey(step, rank, apis), func() (plan.Sizes, error) { return plan.Measure(file, apis) })
	}
}

// Measure is plan.Options.Measure: the measure begun before, or begun now.
func (s *sizing) Measure(step, rank int, apis []string) (plan.Sizes, error) {
	r := s.run(sizingKey(step, rank, apis), func() (plan.Sizes, error) { return s.measure(step, rank, apis) })
	<-r.done
	return r.sizes, r.err
}
