package watch

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nanhunt/nanhunt/synth"
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
	// every rank of every step saved two tensors
	for _, step := range spec.Steps {
		for rank := 0; rank < spec.Ranks; rank++ {
			dir := filepath.Join(src, fmt.Sprintf("step%d", step), fmt.Sprintf("rank%d", rank), tensorFolder)
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
	dst := filepath.Join(t.TempDir(), "dump")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &replayer{src: src, dst: dst, rng: rand.New(rand.NewSource(3)), gap: 20 * time.Millisecond, torn: 200 * time.Millisecond, complete: map[int]time.Time{}}
	replayed := make(chan struct{})
	go r.run(t, replayed)
	var log strings.Builder
	_, err := Run(context.Background(), Options{Path: dst, Poll: 20 * time.Millisecond, Settle: 100 * time.Millisecond, IdleExit: 2 * time.Second,
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
		left, _ := filepath.Glob(filepath.Join(dst, fmt.Sprintf("step%d", step), "rank*", tensorFolder, "*.pt"))
		kept := step >= 2 // steps 0 and 1 are clean and older than the last two clean ones (2, 3); 4 is the anomaly, 5 confirmed it
		if kept && len(left) != 2*spec.Ranks || !kept && len(left) != 0 {
			t.Errorf("step %d: %d tensor files left, want %d", step, len(left), map[bool]int{true: 2 * spec.Ranks}[kept])
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
