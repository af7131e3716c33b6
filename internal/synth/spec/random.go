package spec

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Random returns a small valid spec chosen by seed: 1 to 16 ranks, a
// dense, tensor-parallel, pipeline or mixture-of-experts layout, a
// gradient synchronisation (all_reduce, ZeRO-1 or a bucketed reducer),
// float16 loss scaling, micro-batches and their schedule, a fault of a
// kind the layout can have (or none, or a clean kind) with its step, ranks
// (a tie sometimes), layer, micro-batch, repetition and -inf variants, and
// a format (indent, stack version, groups, receive buffers, statistics
// keys and strings, peers), damage, dense or sparse steps, level and data
// mode. Every run it describes generates in well under a second. The same
// seed gives the same spec.
//
// Valid means that the README's rules can read what the run did: a few
// combinations where the dump cannot show it are left out, each with its
// reason where it is left out (faultKinds, randomDamage).
func Random(seed int64) Spec {
	for attempt := uint64(0); attempt < 1000; attempt++ {
		s := randomSpec(rand.New(rand.NewPCG(uint64(seed), 0x7a9d_51c3^attempt)))
		s.Name, s.Seed = fmt.Sprintf("random-%d", seed), seed
		if _, err := s.Normalized(); err == nil {
			return s
		}
	}
	// not reached in practice: most draws are valid
	return Spec{Name: fmt.Sprintf("random-%d", seed), Ranks: 4, Steps: []int{1, 2, 3}, Model: Dense, Layers: 2, Hidden: 32,
		Level: "L1", Fault: &Fault{Kind: LogNegative, Step: 2, Ranks: []int{2}}, Format: Format{OptimizerHooked: true},
		Seed: seed, LossLog: true}
}

// chooser draws the parts of a random spec.
type chooser struct{ r *rand.Rand }

func (c chooser) p(x float64) bool { return c.r.Float64() < x }

func (c chooser) n(lo, hi int) int { return lo + c.r.IntN(hi-lo+1) }

func pick[T any](c chooser, xs ...T) T { return xs[c.r.IntN(len(xs))] }

// randomSpec draws one candidate; Random keeps the first that normalises.
func randomSpec(r *rand.Rand) Spec {
	c := chooser{r}
	s := Spec{Hidden: 16, Batch: c.n(1, 2), Seq: 8, Vocab: 64, Layers: c.n(1, 2)}
	switch x := c.r.Float64(); {
	case x < 0.35:
		s.Model, s.Ranks = Dense, c.n(1, 16)
	case x < 0.55:
		s.Model, s.TP = TensorParallel, pick(c, 2, 4)
		s.Ranks = s.TP * c.n(1, 16/s.TP)
	case x < 0.8:
		s.Model, s.PP = Pipeline, pick(c, 2, 2, 3, 4)
		s.Ranks = s.PP * c.n(1, min(4, 16/s.PP))
		s.Layers = s.PP + c.n(0, 1)
	default:
		s.Model, s.EP = MoE, pick(c, 1, 2, 4)
		s.Ranks = s.EP * c.n(1, 16/s.EP)
		s.Experts = s.EP * pick(c, 2, 4)
		s.TopK = min(pick(c, 1, 2), s.Experts)
	}
	s.MicroBatches = pick(c, 1, 1, 2, 2, 3)
	if s.MicroBatches > 1 && c.p(0.3) {
		s.Schedule = "gpipe"
	}
	s.Level = pick(c, "L1", "mix")
	if c.p(0.15) {
		s.DataMode = "forward"
	}
	switch x := c.r.Float64(); {
	case x < 0.2:
		s.GradSync = "zero1"
	case x < 0.4:
		s.GradSync = "reducer"
	}
	s.Backend = pick(c, "nccl", "gloo")
	s.LossScale = s.GradSync == "" && c.p(0.2)
	s.Optimizer = pick(c, "adam", "sgd")
	s.ClipGrad = s.GradSync != "zero1" && c.p(0.2)
	s.LossLog = c.p(0.5)
	s.Attention = pick(c, "eager", "eager", "custom", "function")
	s.Mask = pick(c, "masked_fill", "add")
	if c.p(0.15) {
		s.DType = pick(c, "bfloat16", "float32")
	}
	s.Format = randomFormat(c, s.Ranks)
	s.Steps = randomSteps(c)
	s.Fault = randomFault(c, &s)
	s.Damage = randomDamage(c, &s)
	return s
}

// randomFormat draws an on-disk variant.
func randomFormat(c chooser, ranks int) Format {
	f := Format{
		Indent:          pick(c, 1, 1, 4),
		StackVersion:    pick(c, 2, 2, 1),
		NonFinite:       pick(c, "bare", "bare", "string"),
		Groups:          pick(c, "recorded", "recorded", "null", "absent"),
		ReceiveBuffers:  pick(c, "null", "null", "garbage", "stale"),
		OptimizerHooked: c.p(0.6),
		Framework:       pick(c, "pytorch", "pytorch", "none"),
		StatKeys:        pick(c, "msprobe", "msprobe", "msprobe", "lower", "upper"),
		StatStrings:     c.p(0.15),
		Peers:           pick(c, "positional", "keyword"),
	}
	if ranks == 1 {
		f.RankDir = pick(c, "rank", "proc", "bare")
	}
	return f
}

// randomSteps draws 2 to 5 dumped steps, contiguous or every n-th.
func randomSteps(c chooser) []int {
	n := c.n(2, 5)
	every, first := 1, c.n(0, 1)
	if c.p(0.3) {
		every, first = pick(c, 2, 3), 0
	}
	steps := make([]int, n)
	for i := range steps {
		steps[i] = first + i*every
	}
	return steps
}

// faultKinds lists the kinds a spec's layout can have.
func faultKinds(s *Spec) []FaultKind {
	ks := []FaultKind{LogNegative, ExpOverflow, SqrtZeroBackward, CustomAttentionBackward, MaskedSoftmaxNaN,
		OptimizerNaN, Uncaptured, GradKernelNaN, GarbageBuffers, LegitMasks}
	if s.Model != MoE {
		ks = append(ks, CastOverflow)
	}
	if s.DataParallel() > 1 {
		ks = append(ks, AllReduceOverflow)
		if s.LossScale && s.Model != MoE {
			ks = append(ks, ScaledGradOverflow, ScaledGradOverflow)
		}
	}
	if s.Model == Pipeline {
		ks = append(ks, SendRecvCarrier, SendRecvCarrier)
	}
	if s.Model == MoE && s.Experts/max(s.EP, 1) >= 2 {
		ks = append(ks, AllToAllCarrier, AllToAllCarrier)
	}
	if s.GradSync == "reducer" {
		ks = append(ks, ReducerZeroCount, ReducerZeroCount)
	}
	if s.DataMode == "forward" {
		// README 4, rule 3: without backward entries every call before
		// the optimizer is in the forward phase, so a birth the dump holds
		// in the backward (the grad kernel) or in the gradient reduction
		// (the collective, the reducer's division, the float16 cast of the
		// gradients) is read as a forward one: the analysis cannot see
		// where the simulation ran it.
		ks = slices.DeleteFunc(ks, func(k FaultKind) bool {
			return k == GradKernelNaN || k == AllReduceOverflow || k == ReducerZeroCount || k == ScaledGradOverflow
		})
	}
	return ks
}

// DataParallel is the size of the data-parallel group of the dense
// parameters.
func (s *Spec) DataParallel() int {
	return s.Ranks / max(s.TP, 1) / max(s.PP, 1)
}

// randomFault draws a fault the spec's layout can have, or none.
func randomFault(c chooser, s *Spec) *Fault {
	if c.p(0.08) {
		return nil
	}
	k := pick(c, faultKinds(s)...)
	last := s.Steps[len(s.Steps)-1]
	f := &Fault{Kind: k, Step: c.n(0, last), Layer: c.n(0, s.Layers-1), MicroBatch: c.n(0, s.MicroBatches-1)}
	if k == SendRecvCarrier {
		f.Layer = c.n(0, max(0, s.Layers-1-(s.Layers+s.PP-1)/s.PP))
	}
	switch {
	case k == AllReduceOverflow:
		f.Value = max(21000, 1.25*65504/float64(s.DataParallel()))
	case k == LogNegative && c.p(0.2):
		f.Value = 1e-300 // log of a zero feature is -inf: a forward -inf that grows into +inf
	case k == CastOverflow && c.p(0.2):
		f.Value = -1e5 // the outlier is negative: -inf in the forward
	case k == GradKernelNaN && c.p(0.3):
		f.Value = -1 // the grad kernel writes -inf
	}
	f.Repeat = c.p(0.1)
	// the stage where the fault happens
	perStage := s.Ranks
	stage := 0
	if s.Model == Pipeline {
		perStage = s.Ranks / s.PP
		switch k {
		case ExpOverflow, SqrtZeroBackward, CastOverflow, CustomAttentionBackward, SendRecvCarrier, GradKernelNaN, ScaledGradOverflow:
			n := s.withLayers()
			stage = n.StageOfLayer(f.Layer)
		}
	}
	if !k.EveryRank() && !k.Clean() {
		pool := make([]int, perStage)
		for i := range pool {
			pool[i] = stage*perStage + i
		}
		f.Ranks = []int{pick(c, pool...)}
		if len(pool) > 1 && c.p(0.2) {
			f.Ranks = append(f.Ranks, pick(c, pool...))
		}
		slices.Sort(f.Ranks)
		f.Ranks = slices.Compact(f.Ranks)
	}
	return f
}

// withLayers returns the spec with its layers and pipeline size as
// normalized sets them, enough for stageOfLayer.
func (s *Spec) withLayers() *Spec {
	n := *s
	n.PP = max(n.PP, 1)
	if n.Layers <= 0 {
		n.Layers = 2
	}
	return &n
}

// randomDamage draws at most one damaged file.
func randomDamage(c chooser, s *Spec) []Damage {
	if !c.p(0.15) {
		return nil
	}
	d := Damage{Step: pick(c, s.Steps...), Rank: c.n(0, s.Ranks-1)}
	if f := s.Fault; f != nil && len(f.Ranks) > 0 && c.p(0.5) {
		d.Rank = f.Ranks[0]
		if slices.Contains(s.Steps, f.Step) {
			d.Step = f.Step
		}
	}
	x := c.r.Float64()
	switch {
	case x < 0.4:
		d.TruncateAt = 0.2 + 0.7*c.r.Float64()
		d.AfterOrigin = c.p(0.5)
	case x < 0.8:
		d.Kind = pick(c, "empty-data", "no-data", "dup-data", "cut-header")
	default:
		d.DropStack, d.DropConstruct = c.p(0.7), c.p(0.7)
	}
	return []Damage{d}
}
