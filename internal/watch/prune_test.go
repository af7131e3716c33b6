package watch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/internal/synth"
)

// A tensor-mode run replayed into a folder: the watch deletes the tensor
// files of the clean steps but the last Keep, keeps those of the anomaly
// and of the step that confirmed it, logs what it deleted, and changes
// nothing else in the tree.
func TestPruneCleanTensors(t *testing.T) {
	var spec synth.Spec
	for _, sc := range synth.Scenarios() {
		if sc.Name == "log-negative" {
			spec = sc.Spec
		}
	}
	fault := *spec.Fault
	fault.Step = 4
	spec.Fault, spec.Steps = &fault, []int{0, 1, 2, 3, 4, 5}
	src := filepath.Join(t.TempDir(), "finished")
	if _, err := synth.Generate(spec, src); err != nil {
		t.Fatal(err)
	}
	addTensors(t, src, spec.Steps, spec.Ranks)
	dst := filepath.Join(t.TempDir(), "dump")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &replayer{src: src, dst: dst, rng: rand.New(rand.NewSource(3)), gap: 20 * time.Millisecond, torn: 200 * time.Millisecond, complete: map[int]time.Time{}}
	replayed := make(chan struct{})
	go r.run(t, replayed)
	var log strings.Builder
	_, err := Run(context.Background(), Options{Path: dst, Poll: 20 * time.Millisecond, Settle: 100 * time.Millisecond, IdleExit: 2 * time.Second, RankTimeout: 5 * time.Second,
		Prune: &Prune{Keep: 2, Log: &log}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-replayed
	others := func(root string) map[string]string {
		sums := map[string]string{}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(root, p)
			// the step folders; the generator's own files beside them are not replayed
			if err == nil && !d.IsDir() && !strings.Contains(rel, tensorFolder) && strings.HasPrefix(rel, "step") {
				b, _ := os.ReadFile(p)
				sums[rel] = fmt.Sprintf("%x", b)
			}
			return nil
		})
		return sums
	}
	for _, step := range spec.Steps {
		left := tensorsLeft(dst, step)
		kept := step >= 2 // steps 0 and 1 are clean and older than the last two clean ones (2, 3); 4 is the anomaly, 5 confirmed it
		if kept && left != 2*spec.Ranks || !kept && left != 0 {
			t.Errorf("step %d: %d tensor files left, want %d", step, left, map[bool]int{true: 2 * spec.Ranks}[kept])
		}
	}
	// every other file is the one msprobe wrote
	before, after := others(src), others(dst)
	if len(after) != len(before) {
		t.Errorf("%d other files before, %d after", len(before), len(after))
	}
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed", p)
		}
	}
	if n := strings.Count(log.String(), "deleted "); n != 2*spec.Ranks {
		t.Errorf("the log names %d folders, want %d:\n%s", n, 2*spec.Ranks, log.String())
	}
}

// addTensors makes every rank of the steps save two tensors.
func addTensors(t *testing.T, root string, steps []int, ranks int) {
	t.Helper()
	for _, step := range steps {
		for rank := 0; rank < ranks; rank++ {
			dir := filepath.Join(root, fmt.Sprintf("step%d", step), fmt.Sprintf("rank%d", rank), tensorFolder)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"Torch.log.0.forward.input.0.pt", "Torch.log.0.forward.output.0.pt"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Repeat("t", 1000)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// tensorsLeft counts the tensor files of a step.
func tensorsLeft(root string, step int) int {
	left, _ := filepath.Glob(filepath.Join(root, fmt.Sprintf("step%d", step), "rank*", tensorFolder, "*.pt"))
	return len(left)
}

// A step some expected rank of which was not read whole keeps every rank's
// tensors, even when the ranks that were read are clean: a dump.json that
// is garbage, missing, or never written; the clean steps around it are
// pruned as before.
func TestPruneKeepsStepsNotReadWhole(t *testing.T) {
	for _, tt := range []struct {
		name   string
		edit   func(t *testing.T, dir string)
		pruned []int // the steps whose tensors go (Keep 1: every clean step but the last)
	}{
		{"rank 1's dump.json of step 1 is garbage", written("garbage", "step1/rank1/dump.json"), []int{2}},
		{"rank 3's dump.json of step 1 is missing", removed("step1/rank3/dump.json"), []int{2}},
		{"rank 2's dump.json of step 2 is garbage", written("\x00", "step2/rank2/dump.json"), []int{1}},
		{"rank 3 never wrote step 3", removed("step3/rank3/dump.json"), []int{1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := generate(t, "legit-masks")
			addTensors(t, dir, []int{1, 2, 3}, 4)
			tt.edit(t, dir)
			var log strings.Builder
			opt := fast
			opt.Prune = &Prune{Keep: 1, Log: &log}
			_, res := watchDump(t, dir, opt)
			if res.Complete {
				t.Errorf("the watch ended complete")
			}
			for _, step := range []int{1, 2, 3} {
				want := 8
				if slices.Contains(tt.pruned, step) {
					want = 0
				}
				if left := tensorsLeft(dir, step); left != want {
					t.Errorf("step %d: %d tensor files left, want %d\n%s", step, left, want, log.String())
				}
			}
		})
	}
}
