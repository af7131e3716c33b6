package nanhunt

import (
	"sync/atomic"
	"testing"

	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// The plan's sizing begun when the origin is decided is the one the plan
// gets: the file is measured once for the same step, rank and APIs (also
// when a log makes the plan twice), again for others.
func TestSizingMeasuresOnce(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	sz := newSizing(func(step, rank int, apis []string) (plan.Sizes, error) {
		calls.Add(1)
		<-release
		return plan.Sizes{Calls: step * 10, Tensors: rank, File: apis[0]}, nil
	})
	v := &verdict.Verdict{Anomaly: true, Origin: &verdict.Origin{Step: 6, Ranks: []int{3}, Op: "Torch.exp.0.forward", Captured: true}}
	sz.decided(v)
	got := make(chan plan.Sizes, 2)
	for range 2 {
		go func() {
			s, err := sz.Measure(6, 3, []string{"Torch.exp"})
			if err != nil {
				t.Error(err)
			}
			got <- s
		}()
	}
	close(release)
	for range 2 {
		if s := <-got; s.Calls != 60 || s.Tensors != 3 || s.File != "Torch.exp" {
			t.Errorf("sizes %+v", s)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("measured %d times, want once", n)
	}
	if _, err := sz.Measure(6, 3, []string{"Torch.exp", "Tensor.__mul__"}); err != nil || calls.Load() != 2 {
		t.Errorf("other APIs: err %v, %d measures in all, want 2", err, calls.Load())
	}
	sz.decided(&verdict.Verdict{}) // nothing to measure
	if n := calls.Load(); n != 2 {
		t.Errorf("a clean verdict began a measure (%d in all)", n)
	}
}
