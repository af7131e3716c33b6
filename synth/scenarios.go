package synth

// Scenario is a named, documented Spec.
type Scenario struct {
	Name, Description string
	Spec              Spec
}

// base is the small data-parallel run most scenarios start from: 4 ranks,
// 2 layers, hooked Adam, steps 1-3 dumped (step 0 is simulated, not
// written) for a fault at step 2, steps 0-2 for a fault at step 1.
func base(name string, f *Fault) Spec {
	steps := []int{1, 2, 3}
	if f != nil && f.Step == 1 {
		steps = []int{0, 1, 2}
	}
	return Spec{
		Name: name, Ranks: 4, Steps: steps, Model: Dense, Layers: 2, Hidden: 32,
		Level: "L1", Fault: f, Format: Format{OptimizerHooked: true}, Seed: 7, LossLog: true,
	}
}

func with(s Spec, f func(*Spec)) Spec {
	f(&s)
	return s
}

// Scenarios returns the catalogue: one scenario per fault kind, format
// variants, damaged files, levels, a tie and a late fault. Each is small
// (1-8 ranks, 2-4 layers, 3-5 dumped steps) and generates in well under a
// second.
func Scenarios() []Scenario {
	logNeg := func() *Fault { return &Fault{Kind: LogNegative, Step: 2, Ranks: []int{2}} }
	return []Scenario{
		{"log-negative", "forward Torch.log of a negative input feature on rank 2 at step 2 (NaN); " +
			"the first gradient all_reduce carries it to ranks 0, 1, 3",
			base("log-negative", logNeg())},
		{"exp-overflow", "Torch.exp of a gate logit of 120 in layer 1 on rank 1 at step 2 (+Inf); " +
			"the first NaN is the Tensor.__truediv__ two entries later",
			base("exp-overflow", &Fault{Kind: ExpOverflow, Step: 2, Ranks: []int{1}, Layer: 1})},
		{"sqrt-zero-backward", "Torch.sqrt is finite at 0 in the forward, its backward is +Inf on rank 3 at step 2 (mix level); " +
			"the first NaN is Tensor.__mul__ backward two entries later, a gradient all_reduce carries it",
			with(base("sqrt-zero-backward", &Fault{Kind: SqrtZeroBackward, Step: 2, Ranks: []int{3}, Layer: 1}),
				func(s *Spec) { s.Level = "mix" })},
		{"custom-attention-backward", "MoE, 8 ranks, EP 4: the custom kernel moe_ext.kernels.fused_attention of layer 0 " +
			"writes NaN into a rel_bias gradient bucket in its backward on rank 5 at step 1; the dense gradient " +
			"all_reduce carries it; the loss turns NaN only at step 3",
			with(base("custom-attention-backward", &Fault{Kind: CustomAttentionBackward, Step: 1, Ranks: []int{5}, Layer: 0}),
				func(s *Spec) { s.Model, s.Ranks, s.EP, s.Experts, s.Steps = MoE, 8, 4, 8, []int{0, 1, 2, 3} })},
		{"cast-overflow", "tensor parallel (TP 2, DP 2): Tensor.half of a 1e5 activation in the float16 fc2 of layer 0 " +
			"on rank 1 at step 2 (+Inf); the row-parallel all_reduce carries it to rank 0",
			with(base("cast-overflow", &Fault{Kind: CastOverflow, Step: 2, Ranks: []int{1}, Layer: 0}),
				func(s *Spec) { s.Model, s.TP = TensorParallel, 2 })},
		{"masked-softmax-nan", "a left-padded sample fully masks a query row on rank 0 at step 1: " +
			"Functional.softmax returns NaN from an input holding only the legitimate -inf (mix level)",
			with(base("masked-softmax-nan", &Fault{Kind: MaskedSoftmaxNaN, Step: 1, Ranks: []int{0}}),
				func(s *Spec) { s.Level = "mix" })},
		{"optimizer-nan-hooked", "Adam with eps=0 on the newly unfrozen embedding: Tensor.addcdiv_ computes 0/0 " +
			"on every rank at step 2 (a tie of all ranks, stage optimizer)",
			base("optimizer-nan-hooked", &Fault{Kind: OptimizerNaN, Step: 2})},
		{"optimizer-nan-fused", "the same eps=0 update with a fused, unhooked optimizer: nothing of it is dumped; " +
			"the NaN is first visible at step 3 as the weight input of Functional.embedding (captured false)",
			with(base("optimizer-nan-fused", &Fault{Kind: OptimizerNaN, Step: 2}),
				func(s *Spec) { s.Format.OptimizerHooked = false })},
		{"uncaptured-fused-softmax", "an unhooked fused softmax kernel returns NaN for a fully masked row on rank 1 at step 2; " +
			"the first dumped entry showing it (Torch.matmul) already has NaN input",
			base("uncaptured-fused-softmax", &Fault{Kind: Uncaptured, Step: 2, Ranks: []int{1}})},
		{"allreduce-overflow", "float16 model: the head-bias gradients are finite on every rank but sum past 65504 " +
			"in Distributed.all_reduce at step 2 (origin = the collective on all ranks, a tie)",
			base("allreduce-overflow", &Fault{Kind: AllReduceOverflow, Step: 2})},
		{"sendrecv-carrier", "pipeline, 8 ranks (PP 4, DP 2), 4 layers: Torch.exp overflows in layer 1 on rank 2 (stage 1) " +
			"at step 1; Distributed.send carries the NaN activation to rank 4 (stage 2)",
			with(base("sendrecv-carrier", &Fault{Kind: SendRecvCarrier, Step: 1, Ranks: []int{2}, Layer: 1}),
				func(s *Spec) { s.Model, s.Ranks, s.PP, s.Layers = Pipeline, 8, 4, 4 })},
		{"alltoall-carrier", "MoE, 4 ranks, EP 4, 8 experts: padding rows of ranks 1 and 2 reach expert 0 on rank 0 in layer 1 " +
			"at step 2; its eps-less RMSNorm gives rsqrt(0) = +Inf, and the combine all_to_all_single carries the NaN rows back",
			with(base("alltoall-carrier", &Fault{Kind: AllToAllCarrier, Step: 2, Ranks: []int{1, 2}, Layer: 1}),
				func(s *Spec) { s.Model, s.EP, s.Experts = MoE, 4, 8 })},
		{"garbage-buffers", "clean MoE run in the old receive-buffer format: all_to_all_single output buffers and " +
			"Torch.empty outputs hold NaN/Inf garbage; no anomaly",
			with(base("garbage-buffers", &Fault{Kind: GarbageBuffers}),
				func(s *Spec) { s.Model, s.EP, s.Experts, s.Format.Groups = MoE, 4, 8, "null" })},
		{"stale-buffers-pipeline", "clean pipeline run (PP 2, DP 2) whose recv buffers hold finite leftovers; no anomaly",
			with(base("stale-buffers-pipeline", nil),
				func(s *Spec) { s.Model, s.PP, s.Format.ReceiveBuffers = Pipeline, 2, "stale" })},
		{"legit-masks", "clean run with Torch.full(-inf) + Torch.triu causal masks added in every layer of every step; no anomaly",
			base("legit-masks", &Fault{Kind: LegitMasks})},
		{"fmt-stack-v1", "log-negative with stack.json v1 (name -> lines, wrap_*.py frames)",
			with(base("fmt-stack-v1", logNeg()), func(s *Spec) { s.Format.StackVersion = 1 })},
		{"fmt-nonfinite-strings", "log-negative with non-finite statistics written as \"nan\"/\"inf\"/\"-inf\" strings",
			with(base("fmt-nonfinite-strings", logNeg()), func(s *Spec) { s.Format.NonFinite = "string" })},
		{"fmt-groups-null", "tensor parallel log-negative with pre-2024-11 \"group\": null kwargs",
			with(base("fmt-groups-null", logNeg()), func(s *Spec) { s.Model, s.TP, s.Format.Groups = TensorParallel, 2, "null" })},
		{"fmt-groups-absent", "tensor parallel log-negative with no group kwarg at all",
			with(base("fmt-groups-absent", logNeg()), func(s *Spec) { s.Model, s.TP, s.Format.Groups = TensorParallel, 2, "absent" })},
		{"fmt-indent4", "log-negative written with indent 4 (older msprobe)",
			with(base("fmt-indent4", logNeg()), func(s *Spec) { s.Format.Indent = 4 })},
		{"fmt-no-framework", "log-negative without the \"framework\" header key (pre-2025 writer)",
			with(base("fmt-no-framework", logNeg()), func(s *Spec) { s.Format.Framework = "none" })},
		{"damage-truncated-peer", "log-negative with dump.json of rank 0 at step 2 cut at 60% (a crash mid-write)",
			with(base("damage-truncated-peer", logNeg()), func(s *Spec) {
				s.Damage = []Damage{{Step: 2, Rank: 0, TruncateAt: 0.6}}
			})},
		{"damage-truncated-source", "log-negative with dump.json of the source rank 2 at step 2 cut shortly after the origin entry",
			with(base("damage-truncated-source", logNeg()), func(s *Spec) {
				s.Damage = []Damage{{Step: 2, Rank: 2, TruncateAt: 0.05, AfterOrigin: true}}
			})},
		{"damage-missing-stack-construct", "sqrt-zero-backward (mix) without stack.json and construct.json on the source rank",
			with(base("damage-missing-stack-construct", &Fault{Kind: SqrtZeroBackward, Step: 2, Ranks: []int{3}, Layer: 1}),
				func(s *Spec) {
					s.Level = "mix"
					s.Damage = []Damage{{Step: 2, Rank: 3, DropStack: true, DropConstruct: true}}
				})},
		{"level-l1", "log-negative at level L1: API entries only, construct.json {}",
			base("level-l1", logNeg())},
		{"level-mix", "log-negative at level mix: Module entries with parameters, parameters_grad, construct parents",
			with(base("level-mix", logNeg()), func(s *Spec) { s.Level = "mix" })},
		{"tie-log-negative", "the same corrupted feature on ranks 1 and 2 at step 2: a tie at Torch.log.0.forward",
			base("tie-log-negative", &Fault{Kind: LogNegative, Step: 2, Ranks: []int{1, 2}})},
		{"late-fault", "steps 0-4 dumped, clean until the sqrt'(0) backward on rank 0 at step 3",
			with(base("late-fault", &Fault{Kind: SqrtZeroBackward, Step: 3, Ranks: []int{0}, Layer: 0}),
				func(s *Spec) { s.Steps = []int{0, 1, 2, 3, 4} })},
		{"tp-clip-sgd", "tensor parallel (TP 2, DP 4, 8 ranks) with gradient clipping and SGD: exp overflow on rank 6 at step 1 " +
			"reaches its TP peer through the row-parallel all_reduce; clip_grad spreads the NaN to every gradient",
			with(base("tp-clip-sgd", &Fault{Kind: ExpOverflow, Step: 1, Ranks: []int{6}, Layer: 0}),
				func(s *Spec) {
					s.Model, s.Ranks, s.TP, s.ClipGrad, s.Optimizer, s.Level = TensorParallel, 8, 2, true, "sgd", "mix"
				})},
		{"single-rank-proc", "one process without torch.distributed (directory proc<pid>): log-negative at step 1",
			with(base("single-rank-proc", &Fault{Kind: LogNegative, Step: 1, Ranks: []int{0}}),
				func(s *Spec) { s.Ranks, s.Format.RankDir, s.LossLog = 1, "proc", false })},
	}
}
