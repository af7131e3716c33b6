package nanhunt

import (
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/verdict"
)

// The sizing the plan asks for is begun when the dump decides the origin,
// on the dump.json the trace found, and given to the plan (which does not
// list the dump again): it is plan.Measure's of that file. Other calls are
// measured when asked, each once; an origin whose file the trace did not
// find begins nothing.
func TestSizingBegunWhenDecided(t *testing.T) {
	file := filepath.Join(fixturedir.Dir(t), "msprobe-generated/bwd-sqrt-zero-rank2-step5/mix/step5/rank2/dump.json")
	var asked atomic.Int32
	sz := newSizing(func(step, rank int, apis []string) (plan.Sizes, error) {
		asked.Add(1)
		return plan.Sizes{Calls: -1}, nil
	})
	v := &verdict.Verdict{Anomaly: true, Origin: &verdict.Origin{Step: 5, Ranks: []int{2}, Op: "Torch.sqrt.0.backward", Captured: true}}
	step, rank, apis, ok := plan.Measured(v)
	if !ok {
		t.Fatal("nothing to measure")
	}
	sz.decided(v, func(s, r int) (string, bool) { return file, s == 5 && r == 2 })
	want, err := plan.Measure(file, apis)
	if err != nil || want.Calls == 0 {
		t.Fatalf("plan.Measure: %+v, %v", want, err)
	}
	for range 2 {
		if got, err := sz.Measure(step, rank, apis); err != nil || got != want {
			t.Errorf("sizes %+v, %v; want %+v", got, err, want)
		}
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the dump was measured again %d times", n)
	}
	for range 2 {
		if got, _ := sz.Measure(step, rank, []string{"Torch.sqrt", "Tensor.__mul__"}); got.Calls != -1 {
			t.Errorf("other APIs: %+v", got)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("other APIs measured %d times, want once", n)
	}
	other := newSizing(func(step, rank int, apis []string) (plan.Sizes, error) { return plan.Sizes{Calls: -2}, nil })
	other.decided(v, func(int, int) (string, bool) { return "", false })
	if got, _ := other.Measure(step, rank, apis); got.Calls != -2 {
		t.Errorf("an origin whose file was not found: %+v, want the plan's own measure", got)
	}
}
