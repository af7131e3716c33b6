package trace

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/policy"
	"github.com/nanhunt/nanhunt/internal/realruns"
)

// A long tail is not named to the side files: they are asked for the calls
// they place in the optimizer. For every call of every tail, both ways must
// say the same of it, on real msprobe runs (a forward-only one among them)
// and on generated ones whose optimizer shows only in stack.json.
func TestTailByNameOrByOptimizer(t *testing.T) {
	var roots []string
	for _, name := range realruns.Scenarios() {
		dir := realruns.Dir(t, name)
		for _, level := range realruns.Truth(t, name).Levels {
			roots = append(roots, filepath.Join(dir, level))
		}
	}
	roots = append(roots, filepath.Join(fixtures(t), "msprobe-generated", "fwd-log-neg-rank2-step5", "mix"),
		filepath.Join(fixtures(t), "msprobe-real", "gpu-resnet50-mix-2steps"))
	for _, name := range []string{"tp-clip-sgd", "optimizer-nan-hooked", "forward-only"} {
		roots = append(roots, scenarioDir(t, name))
	}
	sc := newScanner(policy.Default(), nil)
	tails, byParent, byStack := 0, 0, 0
	for _, root := range roots {
		l, err := dump.Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range l.Dirs {
			s := sc.scanRank(context.Background(), rd, scanWhole)
			if len(s.tail) == 0 {
				continue
			}
			tails++
			names := map[string]bool{}
			for _, e := range s.tail {
				names[e.name] = true
			}
			byName := sc.readTags(s, names, false)
			byOptimizer := sc.readTags(s, map[string]bool{}, true)
			for _, e := range s.tail {
				a, b := byName.optimizer(e.name), byOptimizer.optimizer(e.name)
				pa, pb := policy.OptimizerParent(byName.parents[e.name]), policy.OptimizerParent(byOptimizer.parents[e.name])
				fa, fb := byName.frames[e.name].Optimizer, byOptimizer.frames[e.name].Optimizer
				if a != b || pa != pb || fa != fb {
					t.Fatalf("%s: %s: in the optimizer %v (parent %v, stack %v) by name, %v (%v, %v) asked for the optimizer's calls",
						rd.Dir, e.name, a, pa, fa, b, pb, fb)
				}
				if policy.OptimizerParent(byName.parents[e.name]) {
					byParent++
				}
				if byName.frames[e.name].Optimizer {
					byStack++
				}
			}
		}
	}
	if tails == 0 || byParent == 0 || byStack == 0 {
		t.Fatalf("%d tails, %d calls placed in the optimizer by construct.json, %d by stack.json: not every way was compared", tails, byParent, byStack)
	}
	t.Logf("%d tails; calls placed in the optimizer: %d by construct.json, %d by stack.json", tails, byParent, byStack)
}
