package reference

import (
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/verdict"
)

func sample() *Verdict {
	five := 5
	return &Verdict{
		Anomaly: true,
		Origin: &Origin{Step: 5, Ranks: []int{2}, Op: "Torch.sqrt.0.backward", Stage: "backward", Phase: "backward",
			Kind: "inf", Captured: true, Confidence: "high"},
		FirstNaN: &OpRef{Step: 5, Rank: 2, Op: "Tensor.__mul__.1.backward"},
		Carrier:  &Hop{Step: 5, Op: "Distributed.all_reduce.1.forward", FromRanks: []int{2}, ToRanks: []int{0, 1, 3}},
		Spread:   []Hop{{Step: 5, Op: "Distributed.all_reduce.1.forward", FromRanks: []int{2}, ToRanks: []int{0, 1, 3}}},
		Steps: []Step{{Step: 5, Status: "anomaly", Anomalous: []RankRole{
			{Rank: 2, Role: "source", Kind: "inf", Op: "Torch.sqrt.0.backward", Stage: "backward", Phase: "backward"}}}},
		Scanned: Scanned{Steps: []int{5}, StoppedAt: &five},
	}
}

func TestDiff(t *testing.T) {
	if d := Diff(sample(), sample()); d != nil {
		t.Errorf("equal verdicts: %v", d)
	}
	got := sample()
	got.Origin.Op = "Tensor.sum.0.backward"
	got.Origin.Phase = ""
	got.Steps[0].Anomalous[0].Phase = ""
	got.Spread = nil
	got.Scanned.NotScanned = []int{}
	want := []string{
		`origin.op: want "Torch.sqrt.0.backward", got "Tensor.sum.0.backward"`,
		`origin.phase: want "backward", got ""`,
		`spread: want {step 5 op "Distributed.all_reduce.1.forward" from [2] to [0 1 3]}, got none`,
		`steps[5].rank[2].phase: want "backward", got ""`,
	}
	if d := Diff(sample(), got); !slices.Equal(d, want) {
		t.Errorf("Diff:\n got %q\nwant %q", d, want)
	}
	d := DiffWith(sample(), got, DiffOptions{IgnorePhase: true})
	if !slices.Equal(d, []string{want[0], want[2]}) {
		t.Errorf("DiffWith IgnorePhase: got %q", d)
	}
}

func TestFromTrace(t *testing.T) {
	five, six := 5, 6
	fast := &verdict.Verdict{
		Anomaly:  true,
		Origin:   &verdict.Origin{Step: 5, Ranks: []int{2}, Op: "Torch.sqrt.0.backward", Stage: "backward", Phase: "backward", Kind: "inf", Captured: true, Confidence: "high"},
		FirstNaN: &verdict.OpRef{Step: 5, Rank: 2, Op: "Tensor.__mul__.1.backward"},
		Carrier:  &verdict.Hop{Step: 5, Op: "Distributed.all_reduce.1.forward", FromRanks: []int{2}, ToRanks: []int{0, 1, 3}},
		Spread:   []verdict.Hop{{Step: 5, Op: "Distributed.all_reduce.1.forward", FromRanks: []int{2}, ToRanks: []int{0, 1, 3}}},
		Steps: []verdict.StepState{{Step: 5, Status: "anomaly", Anomalous: []verdict.RankState{
			{Rank: 2, Role: "source", Kind: "+inf", Op: "Torch.sqrt.0.backward", Stage: "backward", Phase: "backward"}}}},
		Scanned: verdict.Scanned{Steps: []int{5}, StoppedAt: &five, CheckedNext: &six},
	}
	want := sample()
	want.Scanned.CheckedNext = &six
	if d := Diff(want, FromTrace(fast)); d != nil {
		t.Errorf("FromTrace: %q", d)
	}
	fast.Steps[0].Anomalous[0].Role = "seen"
	if r := FromTrace(fast).Steps[0].Anomalous[0].Role; r != "inherited" {
		t.Errorf("role seen: got %q, want inherited", r)
	}
	if FromTrace(nil) != nil {
		t.Error("FromTrace(nil): want nil")
	}
}
