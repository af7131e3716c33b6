package trace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/tinylimits"
	"github.com/nanhunt/nanhunt/verdict"
)

// oneFOneB is one rank's calls in a 1F1B pipeline schedule: the forward of
// the first micro-batch, then for each later one the backward of the one
// before it and its own forward, then the last backward. Every layer of a
// forward builds an attention mask: masked_fill writes -inf, softmax reads
// it. 2 × layers × (microBatches − 1) calls holding -inf lie after the
// first backward entry, all before the last.
func oneFOneB(microBatches, layers int) []string {
	var calls []string
	masks, grads := 0, 0
	forward := func() {
		for range layers {
			calls = append(calls, call(fmt.Sprintf("Tensor.masked_fill.%d.forward", masks), list(tensorFinite, tensorFinite, floatNegInf), list(tensorNegInf)),
				call(fmt.Sprintf("Functional.softmax.%d.forward", masks), list(tensorNegInf), list(tensorFinite)))
			masks++
		}
	}
	backward := func() {
		calls = append(calls, call(fmt.Sprintf("Torch.matmul.%d.backward", grads), list(tensorFinite), list(tensorFinite)))
		grads++
	}
	forward()
	for range microBatches - 1 {
		backward()
		forward()
	}
	backward()
	return calls
}

// An update that writes -inf after the last backward entry is the origin
// (README "How it decides", 5: -inf is severe after B₂), however many masks
// holding -inf the walk passed over before it: 20,000 between the backward
// entries of a 1F1B schedule (kept for a second look only since the latest
// backward entry), or more after the last backward entry than the walk
// keeps (then the file is parsed whole). With the normal limits and with
// tiny ones.
func TestUpdateAfterManyMasks(t *testing.T) {
	const update = "Tensor.addcdiv_.0.forward"
	afterLast := oneFOneB(2, 1)
	for k := range normalLimits.deferred + 100 {
		afterLast = append(afterLast, call(fmt.Sprintf("Torch.triu.%d.forward", k), list(tensorFinite), list(tensorNegInf)))
	}
	for _, c := range []struct {
		name  string
		calls []string
	}{
		{"20,000 masks between the backward entries", oneFOneB(101, 100)},
		{"more masks after the last backward entry than the walk keeps", afterLast},
	} {
		root := layDump(t, map[int]map[int][]string{0: {0: append(c.calls, call(update, list(tensorFinite, tensorFinite, tensorFinite), list(tensorNegInf)))}})
		for _, tiny := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tiny=%v", c.name, tiny), func(t *testing.T) {
				ctx := context.Background()
				if tiny {
					ctx = tinylimits.With(ctx)
				}
				v, err := Run(ctx, Options{Path: root})
				if err != nil {
					t.Fatal(err)
				}
				if o := v.Origin; o == nil || o.Op != update || o.Stage != "optimizer" || o.Kind != "inf" || !o.Captured {
					t.Fatalf("origin = %+v, want the update %s (optimizer, inf, captured)", o, update)
				}
			})
		}
	}
}

// Every limit of the rank scan is reached in the tiny-limits mode on the
// generated scenarios, real runs and dumps below, so that the differential
// tests that run in that mode (internal/reference) run every fallback; and
// the verdict's origin, first NaN and carrier are those of the normal
// limits.
func TestTinyLimitsAreReached(t *testing.T) {
	roots := []string{
		layDump(t, map[int]map[int][]string{0: {0: append(oneFOneB(3, 2), call("Tensor.addcdiv_.0.forward", list(tensorFinite, tensorFinite, tensorFinite), list(tensorNegInf)))}}),
		layDump(t, map[int]map[int][]string{0: {0: {call("Torch.log.0.forward", list(tensorFinite), list(tensorNegInf)), call("Torch.log.1.forward", list(tensorFinite), list(tensorNegInf)),
			call("Torch.log.2.forward", list(tensorFinite), list(tensorNegInf)), call("Tensor.mul.0.forward", list(tensorNegInf, tensorFinite), list(tensorNaN))}}}),
	}
	for _, name := range []string{"tp-clip-sgd", "grad-kernel-nan", "forward-only", "sendrecv-carrier", "garbage-buffers", "legit-masks", "damage-truncated-source"} {
		roots = append(roots, scenarioDir(t, name))
	}
	for _, name := range realruns.Scenarios()[:2] {
		dir := realruns.Dir(t, name)
		roots = append(roots, filepath.Join(dir, realruns.Truth(t, name).Levels[0]))
	}
	counters := []struct {
		name string
		n    func() int64
	}{
		{"deferred", reached.deferred.Load}, {"spans", reached.spans.Load}, {"colls", reached.colls.Load}, {"colls read again", reached.collsAgain.Load},
		{"preOps", reached.preOps.Load}, {"tail", reached.tail.Load}, {"births", reached.births.Load},
		{"suppressKeys", reached.suppressKeys.Load}, {"groups", reached.groups.Load}, {"interned", reached.interned.Load},
	}
	before := make([]int64, len(counters))
	for i, c := range counters {
		before[i] = c.n()
	}
	for _, root := range roots {
		want, err := Run(context.Background(), Options{Path: root})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Run(tinylimits.With(context.Background()), Options{Path: root})
		if err != nil {
			t.Fatal(err)
		}
		if w, g := decided(want), decided(got); w != g {
			t.Errorf("%s: with tiny limits\n %s\nwith the normal ones\n %s", root, g, w)
		}
	}
	for i, c := range counters {
		if c.n() == before[i] {
			t.Errorf("the %s limit was not reached in the tiny-limits mode", c.name)
		}
	}
}

// decided is what a verdict decides of the origin, first NaN and carrier,
// as text.
func decided(v *verdict.Verdict) string {
	s := fmt.Sprint("anomaly ", v.Anomaly)
	if o := v.Origin; o != nil {
		s += fmt.Sprintf("; origin step %d ranks %v op %s stage %s kind %s confidence %s", o.Step, o.Ranks, o.Op, o.Stage, o.Kind, o.Confidence)
	}
	if f := v.FirstNaN; f != nil {
		s += fmt.Sprintf("; first NaN step %d rank %d op %s", f.Step, f.Rank, f.Op)
	}
	if c := v.Carrier; c != nil {
		s += fmt.Sprintf("; carrier step %d op %s from %v to %v", c.Step, c.Op, c.FromRanks, c.ToRanks)
	}
	return s
}

// More pairing bases than a rank scan follows (a process group per call)
// are not followed past maxBases, and the verdict warns that ranks they
// would order may read as a tie.
func TestPairingBasesPastTheBoundWarn(t *testing.T) {
	var calls []string
	for k := range maxBases + 1 {
		calls = append(calls, call(fmt.Sprintf("Distributed.all_reduce.%d.forward", k), list(tensorFinite), list(tensorFinite), groupKw(0, k+1)))
	}
	calls = append(calls, call("Torch.log.0.forward", list(tensorFinite), list(tensorNaN)))
	v, err := Run(context.Background(), Options{Path: layDump(t, map[int]map[int][]string{0: {0: calls}})})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range v.Warnings {
		found = found || strings.Contains(w.Message, "pairing bases")
	}
	if !found || v.Origin == nil || v.Origin.Op != "Torch.log.0.forward" {
		t.Errorf("origin %+v, warnings %+v: want the log and a warning about the pairing bases", v.Origin, v.Warnings)
	}
}
