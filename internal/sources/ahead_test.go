package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/nanhunt/nanhunt/internal/fixturedir"
	"github.com/nanhunt/nanhunt/internal/plan"
	"github.com/nanhunt/nanhunt/internal/realruns"
	"github.com/nanhunt/nanhunt/internal/synth"
	"github.com/nanhunt/nanhunt/verdict"
)

// TestMain removes the real runs the tests extracted.
func TestMain(m *testing.M) {
	code := m.Run()
	realruns.Cleanup()
	os.Exit(code)
}

// sideAhead reads the sources as nanhunt trace does without a dump and
// returns the warnings before the NaN they give, and the notes on climbs
// they could not judge.
func sideAhead(t *testing.T, in Inputs) ([]verdict.Ahead, []string) {
	t.Helper()
	var g errgroup.Group
	said := in.Start(context.Background(), &g)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	v := said.Combine(nil, plan.Options{})
	var notes []string
	if v.Evidence != nil {
		for _, n := range v.Evidence.Notes {
			if strings.Contains(n, "record no dtype") {
				notes = append(notes, n)
			}
		}
	}
	for _, a := range v.Ahead {
		if a.Source == "dump" || a.Text == "" || a.Ranks == nil || len(a.Series) < 3 {
			t.Errorf("warning %+v", a)
		}
	}
	return v.Ahead, notes
}

// sideWant is a warning a generated run's log or monitor must give: its
// source, op, file kind and statistic, by the step the dump's is due
// (truth warn_by_step) when the monitor covers the climb.
type sideWant struct{ source, op, tensor, stat string }

// sideWants are the warnings of the generated runs, with a min and max
// monitor: every other run gives none.
var sideWants = map[string][]sideWant{
	// the learnable scale of the features is a parameter the monitor
	// records after each update: it climbs 1.35x (1.8x) a step
	"gain-runaway-fp16": {{"monitor", "feat_scale", "param_updated", "max"}},
	"gain-runaway-fp32": {{"monitor", "feat_scale", "param_updated", "max"}},
	// the head bias gradient, before and after the reduction
	"sharp-gradient-fp16": {{"monitor", "head.bias", "grad_reduced", "max"}, {"monitor", "head.bias", "grad_unreduced", "max"}},
	// the scaled gradient that overflows is a float16 copy the monitor
	// does not record (its gradients are the float32 ones); the scaler
	// halves at every step after the first overflow
	"loss-scale-falling":    {{"log", "loss_scale", "", "loss_scale"}},
	"loss-scale-persistent": {{"log", "loss_scale", "", "loss_scale"}},
	// exp-drift-fp16: the exp input is inside the gate module, whose
	// outputs (normalised) the monitor records: it does not cover it
}

// Every generated run, with its Megatron-LM log and a min/max monitor:
// the climbs the monitor covers warn at the latest at the step the dump's
// warning is due, the falling loss scales warn from the log, and no other
// run warns or notes anything.
func TestAheadOnGeneratedRuns(t *testing.T) {
	for _, sc := range synth.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			side := synth.Sidecars{LogDir: filepath.Join(root, "log"), MonitorDir: filepath.Join(root, "monitor"), MonitorOps: []string{"min", "max", "norm", "nans"}}
			truth, err := synth.GenerateWith(sc.Spec, filepath.Join(root, "dump"), side)
			if err != nil {
				t.Fatal(err)
			}
			ws, notes := sideAhead(t, Inputs{Log: Log{Paths: []string{filepath.Join(side.LogDir, "train.log")}}, Monitor: Monitor{Dir: side.MonitorDir}})
			var got []sideWant
			for _, a := range ws {
				got = append(got, sideWant{a.Source, a.Op, a.Tensor, a.Stat})
				if a.Source == "monitor" && len(truth.Ahead) > 0 && a.Step > truth.Ahead[0].WarnBy {
					t.Errorf("%s warns at step %d, after the dump's warning is due (%d)", a.Text, a.Step, truth.Ahead[0].WarnBy)
				}
				if truth.Anomaly && a.Source == "monitor" && a.Step >= truth.Step {
					t.Errorf("%s warns at step %d, not before the first non-finite step %d", a.Text, a.Step, truth.Step)
				}
			}
			slices.SortFunc(got, func(a, b sideWant) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			if want := sideWants[sc.Name]; !slices.Equal(got, want) {
				t.Errorf("warnings %v, want %v", got, want)
			}
			if len(notes) > 0 {
				t.Errorf("notes %q", notes)
			}
		})
	}
}

// realSideWant is a warning a real run's log or monitor gives, by the
// step the dump's warning is due (its truth's warn_by_step).
type realSideWant struct {
	sideWant
	by int
}

// realSideWants are the warnings of the real runs that climb (the warn-*
// runs, where the checkout holds them): every other real run gives none.
var realSideWants = map[string][]realSideWant{
	// the model's float16 output (the exp of a rate the learning rate
	// drives up) climbs x7 a step in the monitor's actv rows
	"warn-exp-lr": {{sideWant{"monitor", ".output_1", "actv", "max"}, 6}},
	// the squared activations are cast to float16 after the monitored
	// module input (float32): the monitor cannot judge them, the log's
	// grad norm explodes x2.3 a step
	"warn-fp16-activations": {{sideWant{"log", "grad_norm", "", "grad_norm"}, 6}},
	// warn-fp16-grad-sum: the float16 sum is made in the all_reduce; the
	// monitor records the float32 gradients, far from their limit
}

// The real runs, with their per-rank JSON logs (loss, and for
// sparse-steps-loss-scale the scaler's loss_scale and skips) and the real
// TrainerMon output of those that have one, and the generated fixtures'
// logs: the climbing runs warn as realSideWants says, by their due step;
// no other warns or notes anything.
func TestAheadOnRealRuns(t *testing.T) {
	type input struct {
		name string
		in   Inputs
	}
	var inputs []input
	withScale, withMonitor := false, false
	for _, name := range realruns.Scenarios() {
		dir := realruns.Dir(t, name)
		var in Inputs
		if _, err := os.Stat(filepath.Join(dir, "train-log")); err == nil {
			in.Log.Paths = []string{filepath.Join(dir, "train-log", "rank*.json")}
		}
		if _, err := os.Stat(filepath.Join(dir, "monitor")); err == nil {
			in.Monitor.Dir = filepath.Join(dir, "monitor")
			withMonitor = true
		}
		withScale = withScale || name == "sparse-steps-loss-scale"
		if in.Given() {
			inputs = append(inputs, input{name, in})
		}
	}
	fx := fixturedir.Dir(t, "msprobe-generated")
	for _, name := range []string{"bwd-sqrt-zero-rank2-step5", "fwd-log-neg-rank2-step5"} {
		inputs = append(inputs, input{name, Inputs{Log: Log{Paths: []string{filepath.Join(fx, name, "train-log", "rank*.json")}}}})
	}
	if !withScale || !withMonitor || len(inputs) < 15 {
		t.Fatalf("%d inputs, loss scale %v, monitor %v: the real runs are not all there", len(inputs), withScale, withMonitor)
	}
	for _, c := range inputs {
		t.Run(c.name, func(t *testing.T) {
			ws, notes := sideAhead(t, c.in)
			want := realSideWants[c.name]
			if len(ws) != len(want) || len(notes) > 0 {
				t.Fatalf("warnings %+v, notes %q; want %v", ws, notes, want)
			}
			for i, a := range ws {
				if w := want[i]; (sideWant{a.Source, a.Op, a.Tensor, a.Stat}) != w.sideWant || a.Step > w.by {
					t.Errorf("warning %s at step %d, want %v by step %d", a.Text, a.Step, w.sideWant, w.by)
				}
			}
		})
	}
}

// The real run whose loss scale halves once (step 2) and again at the
// NaN (step 6) is read with its scales, and halving once is no warning.
func TestRealLossScaleRead(t *testing.T) {
	in := Log{Paths: []string{filepath.Join(realruns.Dir(t, "sparse-steps-loss-scale"), "train-log", "rank1.json")}}
	l, err := in.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var scales []string
	for _, r := range l.Records {
		scales = append(scales, r.LossScale.String())
	}
	if len(scales) < 7 || scales[0] != "16384" || scales[3] != "8192" {
		t.Errorf("loss scales %v: want 16384 at step 0, 8192 from step 3", scales)
	}
	if c := l.Climbs(); len(c) != 0 {
		t.Errorf("climbs %+v", c)
	}
}

// A watch's followers carry the log's warning into the verdict they
// combine with.
func TestFollowersCarryAhead(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i, sc := range []float64{65536, 65536, 65536, 32768, 16384, 8192} {
		skipped := 0
		if i >= 3 {
			skipped = 1
		}
		fmt.Fprintf(&b, " [2024-05-01 10:00:00] iteration %8d/     100 | lm loss: 2.500000E+00 | loss scale: %.1f | number of skipped iterations: %3d | number of nan iterations:   0 |\n", i+1, sc, skipped)
	}
	path := filepath.Join(dir, "train.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f := NewLogFollower(Log{Paths: []string{path}})
	if _, _, err := f.FirstBad(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := CombineReadings(nil, plan.Options{}, f.Last())
	if len(v.Ahead) != 1 || v.Ahead[0].Stat != "loss_scale" || v.Ahead[0].Step != 5 {
		t.Errorf("ahead %+v: want the loss scale falling at step 5 (iteration 6)", v.Ahead)
	}
}
