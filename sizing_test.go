package nanhunt

import (
	"errors"
	"testing"

	"github.com/nanhunt/nanhunt/internal/plan"
)

// A run sizes the same calls once (the plan made again with the evidence
// asks what the dump's plan asked), other calls again; an error is kept
// as well as sizes.
func TestMeasureOnce(t *testing.T) {
	calls := 0
	measure := measureOnce(func(step, rank int, apis []string) (plan.Sizes, error) {
		calls++
		if step < 0 {
			return plan.Sizes{}, errors.New("no such step")
		}
		return plan.Sizes{Calls: step, Tensors: rank, File: apis[0]}, nil
	})
	for range 3 {
		if s, err := measure(6, 3, []string{"Torch.exp"}); err != nil || s.Calls != 6 || s.Tensors != 3 || s.File != "Torch.exp" {
			t.Fatalf("sizes %+v, %v", s, err)
		}
	}
	if calls != 1 {
		t.Errorf("measured %d times, want once", calls)
	}
	if _, err := measure(6, 3, []string{"Torch.exp", "Tensor.__mul__"}); err != nil || calls != 2 {
		t.Errorf("other APIs: %v, %d measures, want 2", err, calls)
	}
	for range 2 {
		if _, err := measure(-1, 3, []string{"Torch.exp"}); err == nil {
			t.Error("the error was lost")
		}
	}
	if calls != 3 {
		t.Errorf("%d measures in all, want 3", calls)
	}
	if measureOnce(nil) != nil {
		t.Error("no sizing became one")
	}
}
