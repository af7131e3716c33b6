package nanhunt

import (
	"fmt"
	"sync"

	"github.com/nanhunt/nanhunt/internal/plan"
)

// measureOnce is measure (a plan's sizing, plan.Options.Measure) that
// reads the dump once for each step, rank and list of APIs: the plan made
// with the log's or the monitor's evidence asks again what the dump's
// plan asked. Nil stays nil.
func measureOnce(measure func(step, rank int, apis []string) (plan.Sizes, error)) func(step, rank int, apis []string) (plan.Sizes, error) {
	if measure == nil {
		return nil
	}
	type result struct {
		sizes plan.Sizes
		err   error
	}
	var mu sync.Mutex
	done := map[string]result{}
	return func(step, rank int, apis []string) (plan.Sizes, error) {
		key := fmt.Sprintf("%d %d %q", step, rank, apis)
		mu.Lock()
		defer mu.Unlock()
		r, ok := done[key]
		if !ok {
			r.sizes, r.err = measure(step, rank, apis)
			done[key] = r
		}
		return r.sizes, r.err
	}
}
