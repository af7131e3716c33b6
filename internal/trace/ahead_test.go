package trace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// Every generated scenario whose statistic climbs towards its dtype's
// limit warns, at the latest two steps before the first non-finite value
// (the dump cut there), naming the call, tensor and statistic; every other
// scenario warns about nothing, at the step judged of the whole run and,
// when it has no anomaly, at every step it could be cut at.
func TestAheadGenerated(t *testing.T) {
	climbs := 0
	for _, sc := range synth.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dump")
			truth, err := synth.Generate(sc.Spec, dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(truth.Ahead) == 0 {
				checkSilent(t, dir, truth.Anomaly)
				return
			}
			climbs++
			for _, due := range truth.Ahead {
				steps := map[int]bool{}
				for s := 0; s <= due.WarnBy; s++ {
					steps[s] = true
				}
				v, err := Run(context.Background(), Options{Path: dir, Steps: steps})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(v.Ahead, func(a verdict.Ahead) bool {
					return a.Op == due.Op && a.Tensor == due.Tensor && a.Stat == due.Stat && a.Step == due.WarnBy && slices.Contains(a.Ranks, due.Ranks[0])
				}) {
					t.Errorf("cut at step %d: no warning about %s %s %s on rank %d in %+v", due.WarnBy, due.Op, due.Tensor, due.Stat, due.Ranks[0], v.Ahead)
				}
			}
		})
	}
	if climbs < 4 {
		t.Errorf("%d scenarios climb towards a limit, want at least 4", climbs)
	}
}

// checkSilent holds a run without a warning due to none.
func checkSilent(t *testing.T, dir string, anomaly bool) {
	t.Helper()
	v, err := Run(context.Background(), Options{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Ahead) > 0 {
		t.Errorf("false warnings: %+v", v.Ahead)
	}
	if anomaly {
		return
	}
	for _, st := range v.Steps {
		cut := map[int]bool{}
		for _, s := range v.Steps {
			if s.Step <= st.Step {
				cut[s.Step] = true
			}
		}
		c, err := Run(context.Background(), Options{Path: dir, Steps: cut})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Ahead {
			t.Errorf("cut at step %d: false warning %s", st.Step, a.Text)
		}
	}
}

// No false warning on real data: a clean real dump warns about nothing,
// and a real run with an anomaly warns only about a call that went on to
// overflow (it holds a non-finite value at the origin step on a rank it
// warned about), at every level it was dumped at.
func TestAheadRealNoFalseWarnings(t *testing.T) {
	var paths []string
	for _, name := range []string{"gpu-resnet50-mix-2steps", "megatron-npu-mix-v1stack", "mindspore-megatron-mix", "mix-no-framework-key"} {
		paths = append(paths, filepath.Join(fixtures(t), "msprobe-real", name))
	}
	for _, sc := range []string{"bwd-sqrt-zero-rank2-step5", "fwd-log-neg-rank2-step5"} {
		for _, level := range []string{"L1", "mix"} {
			paths = append(paths, filepath.Join(fixtures(t), "msprobe-generated", sc, level))
		}
	}
	for _, name := range realruns.Scenarios() {
		for _, level := range realruns.Truth(t, name).Levels {
			paths = append(paths, filepath.Join(realruns.Dir(t, name), level))
		}
	}
	warned := 0
	for _, p := range paths {
		v, err := Run(context.Background(), Options{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range v.Ahead {
			if v.Origin == nil || !overflowsLater(t, p, v.Origin.Step, a) {
				t.Errorf("%s: false warning %s", p, a.Text)
			}
			warned++
		}
	}
	if len(paths) < 20 {
		t.Errorf("%d real dumps, want every fixture and real run", len(paths))
	}
	t.Logf("%d real dumps, %d true warnings", len(paths), warned)
}

// Every real run whose statistic climbs towards a float16 limit warns at
// the latest two steps before its first non-finite value, the dump cut
// there: about the climbing call, or the cast that stores its result in
// float16 (for an exp computed in float32 and stored by a cast).
func TestAheadRealRunsInTime(t *testing.T) {
	checked := 0
	for _, name := range realruns.Scenarios() {
		truth := realruns.Truth(t, name)
		due := truth.Extras.Ahead
		if due == nil {
			continue
		}
		checked++
		for _, level := range truth.Levels {
			steps := map[int]bool{}
			for s := 0; s <= due.WarnByStep; s++ {
				steps[s] = true
			}
			v, err := Run(context.Background(), Options{Path: filepath.Join(realruns.Dir(t, name), level), Steps: steps})
			if err != nil {
				t.Fatal(err)
			}
			named := func(a verdict.Ahead) bool {
				return (a.Op == due.Op && a.Tensor == due.Tensor && a.Stat == due.Stat) || (due.StoredBy != "" && a.Op == due.StoredBy)
			}
			if !slices.ContainsFunc(v.Ahead, named) || v.Anomaly {
				t.Errorf("%s/%s cut at step %d: anomaly %v, warnings %+v; want one about %s %s %s (or %s)", name, level, due.WarnByStep, v.Anomaly, v.Ahead, due.Op, due.Tensor, due.Stat, due.StoredBy)
			}
			for _, a := range v.Ahead {
				t.Logf("%s/%s: %s", name, level, a.Text)
			}
		}
	}
	if checked < 3 {
		t.Errorf("%d real runs climb towards a limit, want 3", checked)
	}
}

// overflowsLater reports whether the warned call holds a non-finite Max or
// Min (in the warned tensor, or in its result: an input that climbs makes
// an overflowing sum) at the given step on one of the warned ranks.
func overflowsLater(t *testing.T, path string, step int, a verdict.Ahead) bool {
	t.Helper()
	l, err := dump.Discover(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range l.Dirs {
		if d.Step != step || !slices.Contains(a.Ranks, d.Rank) {
			continue
		}
		f, err := os.Open(d.Dump)
		if err != nil {
			t.Fatal(err)
		}
		rd := dump.NewReader(f, dump.ReaderOptions{Details: true, Select: func(name string, _ int64) bool { return name == a.Op }})
		for rd.Next() {
			e := rd.Entry()
			for i := range e.Tensors {
				tn := &e.Tensors[i]
				if tn.Max.Class != 0 || tn.Min.Class != 0 {
					f.Close()
					return true
				}
			}
		}
		f.Close()
	}
	return false
}
