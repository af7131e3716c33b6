package monitor

import (
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// forwardBorn: the NaN is born in module mod's output on one rank at
// (step, micro); it spreads to everything after it on that rank, to the
// reduced gradients and updated weights of every rank, and from the next
// step on to every rank.
func forwardBorn(rank, step, micro, mod int) func(w where) *stats {
	return func(w where) *stats {
		nan := st(nanStats)
		switch w.kind {
		case kActv:
			if (w.rank == rank && w.atOrAfter(step, micro, mod, true)) || w.step > step {
				return nan
			}
		case kActvGrad:
			if (w.rank == rank && w.step == step && w.micro >= micro) || w.step > step {
				return nan
			}
		case kGradUnreduced:
			if w.step > step || (w.step == step && w.rank == rank) {
				return nan
			}
		case kGradReduced, kParamUpdated:
			if w.step >= step {
				return nan
			}
		case kExpAvg, kExpAvgSq, kParamOrigin:
			if w.step > step {
				return nan
			}
		}
		return nil
	}
}

func TestForwardBornOneRank(t *testing.T) {
	for _, style := range []string{StyleV1, StyleV1Old, StyleV2} {
		t.Run(style, func(t *testing.T) {
			dir := t.TempDir()
			s := defaultSpec()
			s.style = style
			s.vpp = true
			s.fault = forwardBorn(2, 2, 1, 3)
			generate(t, dir, s)
			_, f := readRun(t, dir, Options{})
			if !reflect.DeepEqual(f.HeaderStyles, []string{style}) {
				t.Errorf("header styles %v, want [%s]", f.HeaderStyles, style)
			}
			wantGen := "v1"
			if style == StyleV2 {
				wantGen = "v2"
			}
			if f.Generation != wantGen {
				t.Errorf("generation %q", f.Generation)
			}
			if !f.Found || f.Stage != StageForward || f.Step != 2 {
				t.Fatalf("found %v stage %q step %d", f.Found, f.Stage, f.Step)
			}
			a := f.Forward
			if a.OriginRank != 2 || a.First.Name != "0.mlp.dense_h_to_4h" || a.First.MicroStep != 1 || a.First.Kind != "nan" || a.Born != BornHere {
				t.Errorf("origin %+v born %s", a.First, a.Born)
			}
			wantTensor := map[string]string{StyleV1: "output", StyleV1Old: "output", StyleV2: "output.0"}[style]
			if a.First.Tensor != wantTensor || a.First.Side != "out" {
				t.Errorf("tensor %q side %q", a.First.Tensor, a.First.Side)
			}
			if !slices.Equal(a.RanksAnomalous, []int{2}) || !slices.Equal(a.RanksClean, []int{0, 1, 3}) {
				t.Errorf("anomalous %v clean %v", a.RanksAnomalous, a.RanksClean)
			}
			if a.Partners == nil || a.Partners.Verdict != PartnersLocal || a.Partners.GroupsKnown || !slices.Equal(a.Partners.Compared, []int{0, 1, 2, 3}) {
				t.Errorf("partners %+v", a.Partners)
			}
			g := f.Gradients
			if g == nil || g.Step != 2 || g.Where != GradBeforeReduction || !slices.Equal(g.Before.RanksAnomalous, []int{2}) || !slices.Equal(g.After.RanksAnomalous, []int{0, 1, 2, 3}) {
				t.Errorf("gradients %+v", g)
			} else if g.Before.First.Name != "0.input_layernorm.weight" || !slices.Equal(g.Before.FirstRanks, []int{2}) {
				t.Errorf("first gradient %s on %v", g.Before.First.Name, g.Before.FirstRanks)
			}
			if o := f.Optimizer; o == nil || o.Step != 2 || o.Verdict != OptimizerFromGradients {
				t.Errorf("optimizer %+v", o)
			}
			if f.Backward == nil || f.Backward.Step != 2 || f.Backward.OriginRank != 2 {
				t.Errorf("backward %+v", f.Backward)
			}
			if f.WarningCount != 0 {
				t.Errorf("warnings: %v", f.Warnings)
			}
		})
	}
}

// A module whose inputs are already NaN is not the origin when another
// rank shows a module that turned clean inputs into NaN.
func TestOriginPrefersCleanInputs(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.fault = func(w where) *stats {
		if w.kind != kActv || w.step != 1 {
			return nil
		}
		// Rank 0: NaN already in the input of module 1 (came from an
		// unmonitored computation) — earlier in call order.
		if w.rank == 0 && w.atOrAfter(1, 0, 1, false) {
			return st(nanStats)
		}
		// Rank 3: born in module 2's output.
		if w.rank == 3 && w.atOrAfter(1, 0, 2, true) {
			return st(nanStats)
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	a := f.Forward
	if a.OriginRank != 3 || a.Born != BornHere || a.First.Name != "0.self_attention.dense" {
		t.Fatalf("origin rank %d born %s %s", a.OriginRank, a.Born, a.First.Name)
	}
	var r0 *RankFirst
	for i := range a.PerRank {
		if a.PerRank[i].Rank == 0 {
			r0 = &a.PerRank[i]
		}
	}
	if r0 == nil || r0.Born != BornInputsAnomalous || r0.First.Tensor != "input" || r0.First.Name != "0.self_attention.linear_qkv" {
		t.Errorf("rank 0: %+v", r0)
	}
	if !slices.Equal(a.RanksAnomalous, []int{0, 3}) {
		t.Errorf("anomalous %v", a.RanksAnomalous)
	}
}

func TestGradientBeforeReduction(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.mbsGrad = true
	s.fault = func(w where) *stats {
		switch w.kind {
		case kGradUnreduced:
			// rank 1, micro-step 1, parameter 2 onwards.
			if w.rank == 1 && w.step == 2 && w.micro == 1 && w.mod >= 2 {
				return st(posInfStats)
			}
		case kGradReduced:
			if w.step == 2 && w.mod >= 2 {
				return st(posInfStats)
			}
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	g := f.Gradients
	if g == nil || g.Where != GradBeforeReduction || g.Step != 2 {
		t.Fatalf("gradients %+v", g)
	}
	if !slices.Equal(g.Before.RanksAnomalous, []int{1}) || g.Before.First.Name != "0.self_attention.dense.weight" || g.Before.First.MicroStep != 1 || g.Before.First.Kind != "+inf" {
		t.Errorf("before %+v first %+v", g.Before, g.Before.First)
	}
	if !slices.Equal(g.Before.FirstRanks, []int{1}) || !slices.Equal(g.After.RanksAnomalous, []int{0, 1, 2, 3}) {
		t.Errorf("first ranks %v after %v", g.Before.FirstRanks, g.After.RanksAnomalous)
	}
	if f.Stage != StageBackward || f.Step != 2 || f.Origin.Source != "gradients" || !slices.Equal(f.Origin.Ranks, []int{1}) {
		t.Errorf("origin %+v", f.Origin)
	}
	if f.Forward != nil || f.Backward != nil {
		t.Errorf("activations reported: %+v %+v", f.Forward, f.Backward)
	}
}

func TestGradientAfterReduction(t *testing.T) {
	fault := func(w where) *stats {
		if w.kind == kGradReduced && w.step == 1 && w.mod == 4 {
			return st(nanStats)
		}
		return nil
	}
	t.Run("recorded", func(t *testing.T) {
		dir := t.TempDir()
		s := defaultSpec()
		s.fault = fault
		generate(t, dir, s)
		_, f := readRun(t, dir, Options{})
		g := f.Gradients
		if g == nil || g.Where != GradAfterReduction || g.Step != 1 || len(g.Before.RanksAnomalous) != 0 || !slices.Equal(g.Before.RanksClean, []int{0, 1, 2, 3}) {
			t.Fatalf("gradients %+v", g)
		}
		if g.After.First.Name != "0.mlp.dense_4h_to_h.weight" || !slices.Equal(g.After.FirstRanks, []int{0, 1, 2, 3}) {
			t.Errorf("after %+v", g.After)
		}
		if f.Stage != StageBackward || f.Step != 1 {
			t.Errorf("stage %s step %d", f.Stage, f.Step)
		}
	})
	t.Run("unreduced-missing", func(t *testing.T) {
		dir := t.TempDir()
		s := defaultSpec()
		s.fault = fault
		s.skipRank = func(rank int, k kind) bool { return k == kGradUnreduced && rank == 3 }
		generate(t, dir, s)
		_, f := readRun(t, dir, Options{})
		if g := f.Gradients; g == nil || g.Where != GradAfterReductionUnverified || !slices.Equal(g.Before.RanksNotRecorded, []int{3}) {
			t.Fatalf("gradients %+v", g)
		}
	})
}

func TestOptimizerFault(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kActv, kGradUnreduced, kGradReduced, kExpAvg, kExpAvgSq}
	// optimizer.step of step 2 writes a NaN into exp_avg_sq of parameter 3
	// (recorded before step 3's update); weights go NaN, so step 3's
	// forward and gradients are NaN too.
	s.fault = func(w where) *stats {
		switch w.kind {
		case kExpAvgSq:
			if w.step >= 3 && w.mod == 3 {
				return st(nanStats)
			}
		case kExpAvg:
			if w.step >= 4 {
				return st(nanStats)
			}
		case kActv:
			if w.step >= 3 && w.mod >= 3 && w.out {
				return st(nanStats)
			}
		case kGradUnreduced, kGradReduced:
			if w.step >= 3 {
				return st(nanStats)
			}
		}
		return nil
	}
	s.steps = []int{0, 1, 2, 3, 4}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	o := f.Optimizer
	if o == nil || o.Step != 2 || o.Verdict != OptimizerFault || !o.GradientsClean || o.State == nil || o.State.Source != KindExpAvgSq || o.State.RecordedStep != 3 || o.State.WrittenByStep != 2 {
		t.Fatalf("optimizer %+v state %+v", o, o.State)
	}
	if o.State.First.Name != "0.mlp.dense_h_to_4h.weight" || !slices.Equal(o.State.RanksAnomalous, []int{0, 1, 2, 3}) {
		t.Errorf("state %+v", o.State)
	}
	if f.Stage != StageOptimizer || f.Step != 2 {
		t.Errorf("stage %s step %d, want optimizer 2", f.Stage, f.Step)
	}
	if f.Forward == nil || f.Forward.Step != 3 {
		t.Errorf("forward %+v", f.Forward)
	}
}

func TestParamOriginBetweenSteps(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kParamOrigin, kParamUpdated, kGradReduced}
	s.fault = func(w where) *stats {
		if w.kind == kParamOrigin && w.step >= 2 && w.rank == 1 {
			return st(nanStats)
		}
		if w.kind == kParamUpdated && w.step >= 2 && w.rank == 1 {
			return st(nanStats)
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	o := f.Optimizer
	if o == nil || o.Verdict != OptimizerBetweenSteps || o.Step != 1 || o.Origin == nil || o.Origin.RecordedStep != 2 || !slices.Equal(o.Origin.RanksAnomalous, []int{1}) {
		t.Fatalf("optimizer %+v", o)
	}
	if f.Stage != StageOptimizer || f.Step != 1 {
		t.Errorf("stage %s step %d", f.Stage, f.Step)
	}
}

func TestPartners(t *testing.T) {
	// The NaN appears in 0.self_attention.dense's output (a row-parallel
	// linear whose all-reduce is inside the module).
	fault := func(ranks ...int) func(w where) *stats {
		return func(w where) *stats {
			if w.kind == kActv && slices.Contains(ranks, w.rank) && w.atOrAfter(1, 0, 2, true) {
				return st(nanStats)
			}
			return nil
		}
	}
	groups := [][]int{{0, 1}, {2, 3}}
	for _, tc := range []struct {
		name     string
		ranks    []int
		groups   [][]int
		verdict  string
		compared []int
	}{
		{"shared-in-group", []int{0, 1}, groups, PartnersShared, []int{0, 1}},
		{"shared-no-groups", []int{0, 1}, nil, PartnersPartial, []int{0, 1, 2, 3}},
		{"one-rank-in-group", []int{1}, groups, PartnersLocal, []int{0, 1}},
		{"all-ranks-no-groups", []int{0, 1, 2, 3}, nil, PartnersShared, []int{0, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := defaultSpec()
			s.kinds = []kind{kActv}
			s.fault = fault(tc.ranks...)
			generate(t, dir, s)
			_, f := readRun(t, dir, Options{Groups: tc.groups})
			p := f.Forward.Partners
			if p == nil || p.Verdict != tc.verdict || !slices.Equal(p.Compared, tc.compared) || p.GroupsKnown != (tc.groups != nil) {
				t.Fatalf("partners %+v", p)
			}
			if f.Forward.OriginRank != tc.ranks[0] || f.Forward.First.Name != "0.self_attention.dense" {
				t.Errorf("origin %d %s", f.Forward.OriginRank, f.Forward.First.Name)
			}
			if !p.SameKind {
				t.Errorf("same kind false")
			}
		})
	}
}

// Rows are written module by module with each module's micro-steps
// together; the first anomaly is the earliest micro-step, not the first
// row.
func TestMicroStepOrder(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.micro = 4
	s.steps = []int{0, 1, 2, 3, 4, 5}
	s.perFile = 3
	s.kinds = []kind{kActv, kActvGrad}
	s.fault = func(w where) *stats {
		if w.kind != kActv || w.rank != 1 || w.step != 4 {
			return nil
		}
		if w.mod == 1 && w.micro == 2 && w.tensor == "output_1" {
			return st(nanStats) // earlier row, later micro-step
		}
		if w.mod == 3 && w.micro == 1 && w.out {
			return st(posInfStats)
		}
		return nil
	}
	generate(t, dir, s)
	r, f := readRun(t, dir, Options{})
	if len(r.Folders[0].Files) != 4 {
		t.Errorf("files %+v", r.Folders[0].Files)
	}
	a := f.Forward
	if a == nil || a.Step != 4 || a.First.MicroStep != 1 || a.First.Name != "0.mlp.dense_h_to_4h" || a.First.Kind != "+inf" || a.PerRank[0].AnomalousRows != 2 {
		t.Fatalf("forward %+v", a)
	}
	if !strings.HasPrefix(a.First.File, "Dec03_21-34-41-rank1-") || !strings.HasSuffix(a.First.File, "/actv_3-5.csv") {
		t.Errorf("file %s", a.First.File)
	}
	if a.First.Values["max"] != "inf" || a.First.Values["shape"] != "[4, 8]" || a.First.Values["dtype"] != "torch.bfloat16" {
		t.Errorf("values %v", a.First.Values)
	}
	if f.Backward != nil {
		t.Errorf("backward %+v", f.Backward)
	}
}

func TestMultiTensorNames(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.mods[1].ins = 2
	s.kinds = []kind{kActv}
	s.fault = func(w where) *stats {
		if w.kind == kActv && w.rank == 0 && w.step == 3 && w.mod == 1 && w.tensor == "output_1" {
			return st(stats{min: math.Inf(-1), max: 3, mean: math.Inf(-1), norm: math.Inf(1)})
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	a := f.Forward
	if a == nil || a.First.Tensor != "output_1" || a.First.Name != "0.self_attention.linear_qkv" || a.Born != BornHere || a.First.Kind != "-inf" {
		t.Fatalf("forward %+v", a)
	}
	if a.First.Call != 2 {
		t.Errorf("call %d, want 2 (third module call of the step)", a.First.Call)
	}
}

func TestBackwardBorn(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kActv, kActvGrad}
	// In the backward pass of step 1, micro-step 0, module 2 turns a clean
	// output gradient into a NaN input gradient; the modules before it (in
	// backward order) receive it.
	s.fault = func(w where) *stats {
		if w.kind != kActvGrad || w.rank != 2 || w.step != 1 || w.micro != 0 {
			return nil
		}
		if w.mod < 2 || (w.mod == 2 && w.out) {
			return st(nanStats)
		}
		return nil
	}
	for _, style := range []string{StyleV1, StyleV1Old, StyleV2} {
		t.Run(style, func(t *testing.T) {
			d := filepath.Join(dir, style)
			s.style = style
			generate(t, d, s)
			_, f := readRun(t, d, Options{})
			b := f.Backward
			if b == nil || b.Step != 1 || b.OriginRank != 2 || b.First.Name != "0.self_attention.dense" || b.Born != BornHere || b.First.Side != "out" {
				t.Fatalf("backward %+v", b)
			}
			if f.Stage != StageBackward || f.Forward != nil {
				t.Errorf("stage %s", f.Stage)
			}
		})
	}
}

func TestWeakNormInf(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kActv}
	s.fault = func(w where) *stats {
		if w.kind == kActv && w.rank == 0 && w.step == 1 && w.mod == 0 && w.out {
			return st(stats{min: -60000, max: 65000, mean: 1, norm: math.Inf(1)})
		}
		if w.kind == kActv && w.rank == 1 && w.step == 3 && w.mod == 4 && w.out {
			return st(nanStats)
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	a := f.Forward
	if a == nil || a.Step != 3 || a.Weak || a.EarlierWeakStep == nil || *a.EarlierWeakStep != 1 || a.OriginRank != 1 {
		t.Fatalf("forward %+v", a)
	}
	if f.Origin.Weak || f.Step != 3 {
		t.Errorf("origin %+v", f.Origin)
	}

	// Only the weak row: reported, marked weak.
	dir2 := t.TempDir()
	s.fault = func(w where) *stats {
		if w.kind == kActv && w.rank == 0 && w.step == 1 && w.mod == 0 && w.out {
			return st(stats{min: -60000, max: 65000, mean: 1, norm: math.Inf(1)})
		}
		return nil
	}
	generate(t, dir2, s)
	_, f = readRun(t, dir2, Options{})
	if f.Forward == nil || !f.Forward.Weak || !f.Origin.Weak || f.Forward.First.Kind != "inf" || !f.Forward.First.Weak {
		t.Fatalf("forward %+v", f.Forward)
	}
}

func TestPlaceholderRowsAreNotAnomalies(t *testing.T) {
	dir := t.TempDir()
	s := defaultSpec()
	s.kinds = []kind{kActv}
	s.fault = func(w where) *stats {
		if w.kind == kActv && w.mod == 1 && w.tensor == "output_1" {
			return st(placeholder) // e.g. a bias that is None
		}
		return nil
	}
	generate(t, dir, s)
	_, f := readRun(t, dir, Options{})
	if f.Found || f.PlaceholderRows != 4*4*2 {
		t.Fatalf("found %v placeholders %d", f.Found, f.PlaceholderRows)
	}
}

func TestJudge(t *testing.T) {
	c := func(vals ...string) *[numStats]cell {
		var out [numStats]cell
		for i, v := range vals {
			out[i] = classify([]byte(v))
		}
		return &out
	}
	for _, tc := range []struct {
		min, max, mean, norm, nans string
		shape                      string
		want                       anomaly
	}{
		{"1", "2", "1.5", "3", "0.0", "[4, 8]", anomaly{}},
		{"nan", "nan", "nan", "nan", "5.0", "[4, 8]", anomaly{kind: anNaN}},
		{"1", "2", "1", "3", "1.0", "[4, 8]", anomaly{kind: anNaN}},
		{"nan", "nan", "nan", "nan", "nan", "nan", anomaly{skip: true}},
		{"nan", "nan", "nan", "0.0", "0.0", "[0]", anomaly{}},
		{"-inf", "inf", "nan", "inf", "0.0", "[4, 8]", anomaly{kind: anInf}},
		{"-inf", "2", "-inf", "inf", "0.0", "", anomaly{kind: anNegInf}},
		{"1", "inf", "inf", "inf", "", "", anomaly{kind: anPosInf}},
		{"1", "2", "1", "inf", "0.0", "[4, 8]", anomaly{kind: anInf, weak: true}},
		{"", "", "", "inf", "", "", anomaly{kind: anInf, weak: true}},
		{"nan", "2", "1", "3", "0.0", "[4, 8]", anomaly{kind: anNaN, weak: true}},
		{"", "", "", "nan", "", "", anomaly{kind: anNaN}},
	} {
		got := judge(c(tc.min, tc.max, tc.mean, tc.norm, tc.nans), []byte(tc.shape), tc.shape != "")
		if got != tc.want {
			t.Errorf("%+v: got %+v", tc, got)
		}
	}
}
