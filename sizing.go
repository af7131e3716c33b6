package nanhunt

import (
	"fmt"
	"sync"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// sizing measures the follow-up dump of a plan (plan.Options.Measure)
// once per step, rank and APIs, and may start before the plan asks: as
// soon as the dump has decided the origin (trace.Options.Decided), while
// the warnings before the NaN are read, so that the two reads overlap. A
// measure the plan does not ask for (the run failed or was cancelled
// after the origin was decided) ends on its own: it reads one file.
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

func newSizing(measure func(step, rank int, apis []string) (plan.Sizes, error)) *sizing {
	return &sizing{measure: measure, runs: map[string]*sizingRun{}}
}

// start begins the measure of the calls of apis at step on rank, unless
// it was begun already.
func (s *sizing) start(step, rank int, apis []string) *sizingRun {
	key := fmt.Sprintf("%d %d %q", step, rank, apis)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[key]; ok {
		return r
	}
	r := &sizingRun{done: make(chan struct{})}
	s.runs[key] = r
	go func() {
		defer close(r.done)
		r.sizes, r.err = s.measure(step, rank, apis)
	}()
	return r
}

// decided starts the measure the plan of v will ask for, if any.
func (s *sizing) decided(v *verdict.Verdict) {
	if step, rank, apis, ok := plan.Measured(v); ok {
		s.start(step, rank, apis)
	}
}

// Measure is plan.Options.Measure: the measure's result, begun now or
// before.
func (s *sizing) Measure(step, rank int, apis []string) (plan.Sizes, error) {
	r := s.start(step, rank, apis)
	<-r.done
	return r.sizes, r.err
}
