package synth

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dumpData is the "data" object of the dump.json of a rank at a step.
func dumpData(t *testing.T, root string, step, rank int) *jv {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "step"+strconv.Itoa(step), "rank"+strconv.Itoa(rank), "dump.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseLenient(b)
	if err != nil {
		t.Fatalf("step %d rank %d: %v", step, rank, err)
	}
	return v.get("data")
}

// slotTensor is the tensor of a slot ("output.0") of an entry.
func slotTensor(e *jv, slot string) *jv {
	field, idx, _ := strings.Cut(slot, ".")
	f := e.get(field)
	i, err := strconv.Atoi(idx)
	if f == nil || err != nil {
		return nil
	}
	if f.kind == 'o' && i == 0 {
		return f
	}
	if f.kind != 'a' || i >= len(f.vals) {
		return nil
	}
	return f.vals[i]
}

// statAt reads a statistic ("max", "min") of an entry's slot.
func statAt(t *testing.T, data *jv, op, slot, stat string) float64 {
	t.Helper()
	e := data.get(op)
	if e == nil {
		t.Fatalf("no entry %s", op)
	}
	v, ok := slotTensor(e, slot).stat(stat).num()
	if !ok {
		t.Fatalf("%s %s: no %s", op, slot, stat)
	}
	return v
}

// climb is what a scenario whose anomaly ends a climb must show.
type climb struct {
	dtype       string
	op          string  // prefix of the origin entry
	minGrowth   float64 // per step over the whole series (a factor, or an increment when linear)
	maxGrowth   float64
	linear      bool
	minRises    int     // dumped steps of rise before the first non-finite one
	minAtWarn   float64 // the value two steps before the first non-finite one at least
	scaleHalves int     // consecutive halvings of the loss scale from the first non-finite step
}

var climbs = map[string]climb{
	"gain-runaway-fp16":   {dtype: "torch.float16", op: "Tensor.__mul__.", minGrowth: 1.2, maxGrowth: 1.5, minRises: 8},
	"exp-drift-fp16":      {dtype: "torch.float16", op: "Torch.exp.", minGrowth: 0.5, maxGrowth: 1, linear: true, minRises: 4},
	"sharp-gradient-fp16": {dtype: "torch.float16", op: "Distributed.all_reduce.", minGrowth: 2, maxGrowth: 3, minRises: 4},
	"gain-runaway-fp32":   {dtype: "torch.float32", op: "Tensor.__mul__.", minGrowth: 1.5, maxGrowth: 2, minRises: 4, minAtWarn: 1e36},
	"loss-scale-falling":  {dtype: "torch.float16", op: "Tensor.half.", minGrowth: 2, maxGrowth: 3, minRises: 4, scaleHalves: 4},
}

// Every scenario whose fault is a climb has one warning due, and the
// dump holds its series: the same values at the same steps on the first
// rank, finite and rising before the first non-finite step, within reach
// of the limit two steps before it, past the limit at it. Every other
// scenario has none.
func TestAheadSeriesInDump(t *testing.T) {
	dir, truths := catalogue(t)
	seen := 0
	for _, sc := range Scenarios() {
		tr := truths[sc.Name]
		if tr == nil {
			t.Fatalf("%s: not generated", sc.Name)
		}
		f := sc.Spec.Fault
		want, ok := climbs[sc.Name]
		if (f != nil && f.Climbs()) != ok {
			t.Errorf("%s: a climb without its expectations, or expectations without a climb", sc.Name)
			continue
		}
		if !ok {
			if tr.Ahead == nil || len(tr.Ahead) != 0 {
				t.Errorf("%s: ahead %v, want []", sc.Name, tr.Ahead)
			}
			continue
		}
		seen++
		t.Run(sc.Name, func(t *testing.T) {
			if len(tr.Ahead) != 1 {
				t.Fatalf("ahead %+v, want one warning", tr.Ahead)
			}
			checkAhead(t, filepath.Join(dir, sc.Name), sc.Spec, tr, want)
		})
	}
	if seen != len(climbs) {
		t.Errorf("%d climbing scenarios, want %d", seen, len(climbs))
	}
}

func checkAhead(t *testing.T, root string, s Spec, tr *Truth, want climb) {
	a := tr.Ahead[0]
	n := tr.Step
	if a.Op != tr.Op || !slices.Equal(a.Ranks, tr.Ranks) || a.FirstNonFinite != n || a.WarnBy != n-2 {
		t.Errorf("ahead %s ranks %v N %d warn by %d, truth %s ranks %v step %d", a.Op, a.Ranks, a.FirstNonFinite, a.WarnBy, tr.Op, tr.Ranks, n)
	}
	if !strings.HasPrefix(a.Op, want.op) || a.Dtype != want.dtype {
		t.Errorf("op %s dtype %s, want %s… %s", a.Op, a.Dtype, want.op, want.dtype)
	}
	var before []int
	for _, st := range s.Steps {
		if st < n {
			before = append(before, st)
		}
	}
	if len(a.Series) != len(before) {
		t.Fatalf("series %v, want one value at each dumped step %v", a.Series, before)
	}
	rank := a.Ranks[0]
	for i, p := range a.Series {
		v := statAt(t, dumpData(t, root, p.Step, rank), a.Op, a.Tensor, a.Stat)
		if p.Step != before[i] || v != p.Value || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("step %d: series %v, dump %v (dumped step %d)", p.Step, p.Value, v, before[i])
		}
		if i == 0 {
			continue
		}
		g := math.Abs(v) / math.Abs(a.Series[i-1].Value)
		if want.linear {
			g = math.Abs(v) - math.Abs(a.Series[i-1].Value)
		}
		if i >= len(a.Series)-want.minRises+1 && (g < want.minGrowth || g > want.maxGrowth) {
			t.Errorf("step %d: growth %.3g outside [%g, %g]", p.Step, g, want.minGrowth, want.maxGrowth)
		}
		if math.Abs(v) < 1.05*math.Abs(a.Series[i-1].Value) && i >= len(a.Series)-4 {
			t.Errorf("step %d: %v rises less than 5 %% from %v", p.Step, v, a.Series[i-1].Value)
		}
	}
	if len(a.Series) < want.minRises+1 || a.Series[len(a.Series)-1].Step != n-1 {
		t.Errorf("series %v: fewer than %d steps of rise up to step %d", a.Series, want.minRises, n-1)
	}
	checkAtLimit(t, root, a, rank, want)
	if want.scaleHalves > 0 {
		checkScaleHalves(t, root, s, n, rank, want.scaleHalves)
	}
}

// checkAtLimit: two steps before the first non-finite step the value is
// within a factor 64 of the limit (half of it for an exp's input), at it
// the value is past the limit.
func checkAtLimit(t *testing.T, root string, a Ahead, rank int, want climb) {
	n := a.FirstNonFinite
	var atWarn float64
	for _, p := range a.Series {
		if p.Step == n-2 {
			atWarn = math.Abs(p.Value)
		}
	}
	data := dumpData(t, root, n, rank)
	at := statAt(t, data, a.Op, a.Tensor, a.Stat)
	if strings.HasPrefix(a.Op, "Torch.exp.") {
		if a.Limit != math.Log(65504) || atWarn < a.Limit/2 || at <= a.Limit || !math.IsInf(statAt(t, data, a.Op, "output.0", "max"), 1) {
			t.Errorf("exp input %v two steps before, %v at step %d, limit %v: the output must overflow", atWarn, at, n, a.Limit)
		}
		return
	}
	lim := math.Abs(a.Limit)
	if (a.Dtype == "torch.float16" && lim != 65504) || (a.Dtype == "torch.float32" && lim != math.MaxFloat32) {
		t.Errorf("limit %v for %s", a.Limit, a.Dtype)
	}
	if atWarn*64 < lim || atWarn < want.minAtWarn || !math.IsInf(at, 0) {
		t.Errorf("%v two steps before step %d, %v at it, limit %v", atWarn, n, at, a.Limit)
	}
}

// checkScaleHalves: the loss scale the dump shows (the float of the
// scaled loss's Tensor.__mul__ on the last stage) halves at k
// consecutive steps after the first overflow.
func checkScaleHalves(t *testing.T, root string, s Spec, n, rank, k int) {
	var scales []float64
	for _, st := range s.Steps {
		if st < n {
			continue
		}
		var sc float64
		data := dumpData(t, root, st, rank)
		for i, key := range data.keys {
			if !strings.HasPrefix(key, "Tensor.__mul__.") {
				continue
			}
			arg := slotTensor(data.vals[i], "input_args.1")
			if typ := arg.get("type"); typ == nil || typ.s != "float" {
				continue
			}
			if v, ok := arg.get("value").num(); ok {
				sc = v
			}
		}
		scales = append(scales, sc)
	}
	halves := 0
	for i := 1; i < len(scales) && scales[i] == scales[i-1]/2; i++ {
		halves++
	}
	if halves < k {
		t.Errorf("loss scale from step %d: %v, want %d halvings in a row", n, scales, k)
	}
}

// The clean scenarios hold each trap and no warning is due.
func TestCleanTraps(t *testing.T) {
	dir, truths := catalogue(t)
	for name, check := range map[string]func(*testing.T, string, Spec){
		"warmup-spike": checkWarmupSpike,
		"half-traps":   checkHalfTraps,
	} {
		t.Run(name, func(t *testing.T) {
			tr := truths[name]
			if tr == nil || tr.Anomaly || len(tr.Ahead) != 0 {
				t.Fatalf("truth %+v: want a clean run without warning", tr)
			}
			for _, sc := range Scenarios() {
				if sc.Name == name {
					check(t, filepath.Join(dir, name), sc.Spec)
					return
				}
			}
			t.Fatalf("no scenario %s", name)
		})
	}
}

// checkWarmupSpike: the scaled features rise for a few steps, then
// flatten far from float32's limit; the loss spikes at the fault step and
// is back at the next; -inf masks, int64 and bool tensors are written.
func checkWarmupSpike(t *testing.T, root string, s Spec) {
	var prod, loss []float64
	for _, st := range s.Steps {
		data := dumpData(t, root, st, 0)
		prod = append(prod, statAt(t, data, "Tensor.__mul__.0.forward", "output.0", "max"))
		loss = append(loss, statAt(t, data, "Functional.cross_entropy.0.forward", "output.0", "max"))
	}
	rises := 0
	for i := 1; i < len(prod) && prod[i] >= 1.05*prod[i-1]; i++ {
		rises++
	}
	last := prod[len(prod)-4:]
	if rises < 3 || slices.Max(last) > 1.05*slices.Min(last) || slices.Max(prod) > 1e3 {
		t.Errorf("scaled features %v: want a rise of 3 steps or more, then flat, far from the limit", prod)
	}
	sp := s.Fault.Step - s.Steps[0]
	if loss[sp] < 2*loss[sp-1] || loss[sp+1] > 1.2*loss[sp-1] {
		t.Errorf("loss %v: want a spike at step %d that recovers", loss, s.Fault.Step)
	}
	data := dumpData(t, root, s.Steps[0], 0)
	want := map[string]bool{"-inf mask": false, "torch.int64": false, "torch.bool": false}
	for _, ts := range tensorsIn(data, nil) {
		dt := ts.get("dtype").s
		want[dt] = true
		if v, _ := ts.stat("Min").num(); math.IsInf(v, -1) {
			want["-inf mask"] = true
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("no %s in step %d", k, s.Steps[0])
		}
	}
}

// checkHalfTraps: a float16 Torch.full_like of 65504 with an infinite
// Norm, a -1e4 mask bias, and a float16 feature of about 30000 that
// jitters by at most 2 % around it without growing.
func checkHalfTraps(t *testing.T, root string, s Spec) {
	var feat []float64
	for _, st := range s.Steps {
		data := dumpData(t, root, st, 0)
		full := slotTensor(data.get("Torch.full_like.0.forward"), "output.0")
		mx, _ := full.stat("Max").num()
		mn, _ := full.stat("Min").num()
		norm, _ := full.stat("Norm").num()
		if full.get("dtype").s != "torch.float16" || mx != 65504 || mn != 65504 || !math.IsInf(norm, 1) {
			t.Errorf("step %d: Torch.full_like max %v min %v norm %v, want 65504 and a +Inf norm", st, mx, mn, norm)
		}
		if v := statAt(t, data, "Torch.triu.0.forward", "output.0", "min"); v != -1e4 {
			t.Errorf("step %d: mask bias min %v, want -1e4", st, v)
		}
		feat = append(feat, statAt(t, data, "Tensor.half.0.forward", "output.0", "max"))
	}
	if slices.Min(feat) < 30000*0.98 || slices.Max(feat) > 30000*1.02 || !jitters(feat) {
		t.Errorf("float16 feature %v: want about 30000, ±2 %%, up and down", feat)
	}
}

// jitters reports a series that goes both up and down.
func jitters(v []float64) bool {
	up, down := false, false
	for i := 1; i < len(v); i++ {
		up = up || v[i] > v[i-1]
		down = down || v[i] < v[i-1]
	}
	return up && down
}
