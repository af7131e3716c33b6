package synth

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/internal/synth/sim"
)

// largeSpec is a mid-size run: 4 ranks, steps 0-2 dumped, dump.json files
// of about 8 MB (the layers and micro-batches come from the target).
func largeSpec(name string, m Model, f *Fault) Spec {
	return Spec{Name: name, Ranks: 4, Steps: []int{0, 1, 2}, Model: m, Hidden: 1024, Batch: 1, Seq: 1024,
		Vocab: 32000, Seed: 11, LossLog: true, TargetFileBytes: 8 << 20, Fault: f}
}

// TestLargeRuns generates a mid-size run of every model layout, with the
// fault in a later micro-batch, and checks the chosen size, the size of the
// files, the truth against the files, clean steps before the fault and
// identical weights on data-parallel replicas.
func TestLargeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 400 MB")
	}
	cases := []struct {
		spec Spec
		// op is the origin's entry name as a format of the micro-batch count
		op    func(mbs int) string
		ranks []int
	}{
		{with(largeSpec("large-dense", Dense, &Fault{Kind: ExpOverflow, Step: 1, Ranks: []int{2}, Layer: 5, MicroBatch: -1}), func(*Spec) {}),
			func(mbs int) string { return fmt.Sprintf("Torch.exp.%d.forward", mbs-1) }, []int{2}},
		{with(largeSpec("large-tp", TensorParallel, &Fault{Kind: CastOverflow, Step: 2, Ranks: []int{1}, Layer: 3, MicroBatch: 2}),
			func(s *Spec) { s.TP = 2 }),
			func(int) string { return "Tensor.half.2.forward" }, []int{1}},
		{with(largeSpec("large-pp", Pipeline, &Fault{Kind: SendRecvCarrier, Step: 1, Ranks: []int{0}, Layer: 1, MicroBatch: 1}),
			func(s *Spec) { s.PP = 2 }),
			func(int) string { return "Torch.exp.1.forward" }, []int{0}},
		{with(largeSpec("large-moe", MoE, &Fault{Kind: AllToAllCarrier, Step: 2, Ranks: []int{1, 2}, Layer: 2, MicroBatch: 1}),
			func(s *Spec) { s.EP, s.Experts = 4, 8 }),
			nil, []int{0}},
	}
	for _, c := range cases {
		t.Run(c.spec.Name, func(t *testing.T) {
			fitted, err := Fit(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if fitted.MicroBatches < 2 || fitted.Layers < 2 {
				t.Fatalf("fit chose %d layers and %d micro-batches", fitted.Layers, fitted.MicroBatches)
			}
			root := filepath.Join(t.TempDir(), "run")
			tr, err := Generate(c.spec, root)
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(root)
			s, err := fitted.Normalized()
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Anomaly || tr.Step != s.Fault.Step || !slices.Equal(tr.Ranks, c.ranks) || !tr.Captured {
				t.Fatalf("truth %+v", tr)
			}
			if c.op != nil && tr.Op != c.op(fitted.MicroBatches) {
				t.Errorf("origin %s, want %s", tr.Op, c.op(fitted.MicroBatches))
			}
			checkTruthFiles(t, fitted, root, tr)
			checkSizes(t, s, root)
			for step := 0; step < s.Fault.Step; step++ {
				dumps := make([]*parsedDump, s.Ranks)
				for r := range dumps {
					rd := rankDir(root, s, step, r)
					dumps[r] = loadDump(t, filepath.Join(rd, "dump.json"))
					checkClean(t, rd, s, dumps[r])
				}
				checkReplicas(t, s, dumps)
			}
		})
	}
}

// checkSizes verifies that the files of clean steps are about the target
// size.
func checkSizes(t *testing.T, s *Spec, root string) {
	t.Helper()
	for _, step := range s.Steps {
		if step >= s.Fault.Step {
			continue
		}
		for r := 0; r < s.Ranks; r++ {
			fi, err := os.Stat(filepath.Join(rankDir(root, s, step, r), "dump.json"))
			if err != nil {
				t.Fatal(err)
			}
			if x := float64(fi.Size()) / float64(s.TargetFileBytes); x < 0.8 || x > 1.25 {
				t.Errorf("step %d rank %d: dump.json is %d bytes for a target of %d", step, r, fi.Size(), s.TargetFileBytes)
			}
		}
	}
}

// checkReplicas verifies that the ranks of a data-parallel group see the
// same weights: the weight and bias of the first Functional.layer_norm are
// identical on all of them.
func checkReplicas(t *testing.T, s *Spec, dumps []*parsedDump) {
	t.Helper()
	const name = "Functional.layer_norm.0.forward"
	for r := range dumps {
		for _, peer := range sim.DataParallelGroup(s, r) {
			a, b := dumps[r].entries[name], dumps[peer].entries[name]
			if a == nil || b == nil {
				t.Fatalf("%s missing on rank %d or %d", name, r, peer)
			}
			ia, ib := a.get("input_args"), b.get("input_args")
			for _, i := range []int{2, 3} {
				if !sameJV(ia.vals[i], ib.vals[i]) {
					t.Errorf("%s input %d differs between replicas %d and %d", name, i, r, peer)
				}
			}
			if r != peer && sameJV(a.get("output"), b.get("output")) {
				t.Errorf("%s output identical on ranks %d and %d: replicas see the same data", name, r, peer)
			}
		}
	}
}
