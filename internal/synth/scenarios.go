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
// variants, damaged files, levels, a tie, a late fault and climbs towards
// a dtype's limit. Each is small (1-8 ranks, 2-4 layers, 3-10 dumped
// steps) and generates in well under a second.
func Scenarios() []Scenario {
	var all []Scenario
	for _, part := range [][]Scenario{faultScenarios(), formatScenarios(), trainingScenarios(), moreScenarios(), driftScenarios()} {
		all = append(all, part...)
	}
	return all
}

// logNeg is the log-negative fault of rank 2 at step 2.
func logNeg() *Fault { return &Fault{Kind: LogNegative, Step: 2, Ranks: []int{2}} }

// faultScenarios are one scenario per fault kind, and the clean runs with
// legitimate non-finite values.
func faultScenarios() []Scenario {
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
	}
}

// formatScenarios are the format variants, damaged files, the levels, a
// tie and a late fault.
func formatScenarios() []Scenario {
	return []Scenario{
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
	}
}

// trainingScenarios are the training patterns: clipping, registered grad
// kernels, micro-batches, ZeRO-1, a bucketed reducer, data mode forward,
// sparse steps and loss scaling.
func trainingScenarios() []Scenario {
	return []Scenario{
		{"tp-clip-sgd", "tensor parallel (TP 2, DP 4, 8 ranks) with gradient clipping and SGD: exp overflow on rank 6 at step 1 " +
			"reaches its TP peer through the row-parallel all_reduce; clip_grad spreads the NaN to every gradient",
			with(base("tp-clip-sgd", &Fault{Kind: ExpOverflow, Step: 1, Ranks: []int{6}, Layer: 0}),
				func(s *Spec) {
					s.Model, s.Ranks, s.TP, s.ClipGrad, s.Optimizer, s.Level = TensorParallel, 8, 2, true, "sgd", "mix"
				})},
		{"grad-kernel-nan", "the attention is a torch.autograd.Function over registered kernels: its backward calls " +
			"attn_ext.flash_attention_grad (dumped as a forward entry between the backward entries, mix level), which writes NaN " +
			"into grad_v of layer 1 on rank 1 at step 2 from clean inputs; the gradient all_reduce carries it",
			with(base("grad-kernel-nan", &Fault{Kind: GradKernelNaN, Step: 2, Ranks: []int{1}, Layer: 1}),
				func(s *Spec) { s.Level = "mix" })},
		{"grad-kernel-neginf", "the same registered grad kernel writes -inf (log of a zero probability) into grad_v: " +
			"-inf is not severe in a forward-named call between the backward entries, so the first sign is the next " +
			"backward entry, and the kernel is its promoted root (kind inf)",
			with(base("grad-kernel-neginf", &Fault{Kind: GradKernelNaN, Step: 2, Ranks: []int{1}, Layer: 1, Value: -1}),
				func(s *Spec) { s.Level = "mix" })},
		{"p2p-keyword-microbatch", "pipeline (PP 2, DP 2), 2 micro-batches in GPipe order, peers passed as dst=/src= " +
			"keywords: Torch.log of a negative feature in the second micro-batch on rank 0 at step 2; the second send of " +
			"rank 0 (Distributed.send.1.forward) carries it to rank 2's second recv",
			with(base("p2p-keyword-microbatch", &Fault{Kind: LogNegative, Step: 2, Ranks: []int{0}, MicroBatch: 1}),
				func(s *Spec) {
					s.Model, s.PP, s.MicroBatches, s.Schedule, s.Format.Peers = Pipeline, 2, 2, "gpipe", "keyword"
				})},
		{"zero1-reduce-broadcast", "ZeRO-1 over gloo: every gradient is reduced to its owner (dst=), the owner updates, " +
			"each parameter is broadcast from its owner (src=); sqrt'(0) is +Inf on rank 2 at step 2 and the first reduce " +
			"leaves NaN in every rank's buffer (partial sums on the ranks that are not its destination)",
			with(base("zero1-reduce-broadcast", &Fault{Kind: SqrtZeroBackward, Step: 2, Ranks: []int{2}, Layer: 1}),
				func(s *Spec) { s.GradSync, s.Backend, s.Format.Peers = "zero1", "gloo", "keyword" })},
		{"reducer-zero-count", "a hand-written bucketed reducer divides each bucket by its all-reduced token count; " +
			"at step 2 no rank has a token of the domain that layer 0's adapter serves: 0/0 in Tensor.__truediv__ on every " +
			"rank right after the reduction (a tie, stage backward, phase gradient reduction, no carrier; mix level)",
			with(base("reducer-zero-count", &Fault{Kind: ReducerZeroCount, Step: 2, Layer: 0}),
				func(s *Spec) { s.GradSync, s.Level = "reducer", "mix" })},
		{"forward-only", "msprobe data_mode [\"forward\"]: no backward and no parameters_grad entries; every layer's " +
			"masked_fill mask holds -inf; Torch.log of a negative feature on rank 3 at step 2, the gradient all_reduce " +
			"carries it",
			with(base("forward-only", &Fault{Kind: LogNegative, Step: 2, Ranks: []int{3}}),
				func(s *Spec) { s.DataMode = "forward" })},
		{"sparse-steps-undumped-origin", "steps 0, 2, 4, 6 dumped: the negative feature on rank 1 at step 3 is not " +
			"dumped; step 4 shows NaN weights on every rank at their first use (captured false, a tie, stage optimizer)",
			with(base("sparse-steps-undumped-origin", &Fault{Kind: LogNegative, Step: 3, Ranks: []int{1}}),
				func(s *Spec) { s.Steps = []int{0, 2, 4, 6} })},
		{"sparse-steps-hidden-fault", "steps 0, 2, 4, 6 dumped, float16 with loss scaling: the NaN of step 3 makes the " +
			"scaler skip that step; no dumped step shows anything: no anomaly",
			with(base("sparse-steps-hidden-fault", &Fault{Kind: LogNegative, Step: 3, Ranks: []int{1}}),
				func(s *Spec) { s.Steps, s.LossScale = []int{0, 2, 4, 6}, true })},
		{"loss-scale-recovered", "steps 0, 2, 4, 6 dumped, float16 gradients with dynamic loss scaling: an outlier " +
			"record on rank 1 at step 2 makes Tensor.half of a scaled gradient +Inf/-Inf; every rank skips the update, " +
			"step 4 is clean again (recovered), no anomaly",
			with(base("loss-scale-recovered", &Fault{Kind: ScaledGradOverflow, Step: 2, Ranks: []int{1}, Layer: 1}),
				func(s *Spec) { s.Steps, s.LossScale = []int{0, 2, 4, 6}, true })},
		{"loss-scale-persistent", "the same loss-scaled overflow on rank 1, read again at every step from step 2: " +
			"every dumped step is skipped; the first is the origin",
			with(base("loss-scale-persistent", &Fault{Kind: ScaledGradOverflow, Step: 2, Ranks: []int{1}, Layer: 1, Repeat: true}),
				func(s *Spec) { s.Steps, s.LossScale = []int{0, 2, 4, 6}, true })},
	}
}

// moreScenarios are more damage and formats, overflows in several groups,
// faults that surface at the next step, a pipeline tie and a single
// process.
func moreScenarios() []Scenario {
	return []Scenario{
		{"damage-empty-data", "log-negative with \"data\": {} on the source rank 2 at step 2: the origin is unread",
			with(base("damage-empty-data", logNeg()), func(s *Spec) { s.Damage = []Damage{{Step: 2, Rank: 2, Kind: "empty-data"}} })},
		{"damage-no-data", "log-negative with no data member in rank 0's dump.json at step 2",
			with(base("damage-no-data", logNeg()), func(s *Spec) { s.Damage = []Damage{{Step: 2, Rank: 0, Kind: "no-data"}} })},
		{"damage-dup-data", "log-negative whose source rank 2 wrote a second, empty data member after its entries at step 2: " +
			"damage after the entries of the first, which are read",
			with(base("damage-dup-data", logNeg()), func(s *Spec) { s.Damage = []Damage{{Step: 2, Rank: 2, Kind: "dup-data"}} })},
		{"damage-cut-header", "log-negative with rank 3's dump.json at step 2 cut before its first entry ends",
			with(base("damage-cut-header", logNeg()), func(s *Spec) { s.Damage = []Damage{{Step: 2, Rank: 3, Kind: "cut-header"}} })},
		{"fmt-lowercase-string-stats", "log-negative with lower-case statistics keys (max, min, mean, norm) and finite " +
			"statistics written as numeric strings (\"0.001\")",
			with(base("fmt-lowercase-string-stats", logNeg()), func(s *Spec) { s.Format.StatKeys, s.Format.StatStrings = "lower", true })},
		{"allreduce-overflow-groups", "tensor parallel (TP 2, DP 2), float16: the head-bias gradients sum past 65504 in " +
			"both data-parallel groups at step 2; the collective is the origin on every rank, a tie of two instances",
			with(base("allreduce-overflow-groups", &Fault{Kind: AllReduceOverflow, Step: 2, Value: 40000}),
				func(s *Spec) { s.Model, s.TP = TensorParallel, 2 })},
		{"inf-absorbed-next-step", "float16 SGD: the head-bias all_reduce overflows to +Inf at step 2; SGD writes +Inf " +
			"into the bias and nothing turns it into NaN before the next step's forward (first NaN at step 3)",
			with(base("inf-absorbed-next-step", &Fault{Kind: AllReduceOverflow, Step: 2}),
				func(s *Spec) { s.Optimizer = "sgd" })},
		{"pipeline-nan-next-step", "pipeline (PP 2, DP 2), hooked Adam with eps=0 on the embedding of stage 0 at step 2 " +
			"(a tie of ranks 0 and 1); the NaN weights reach stage 1 only through the next step's send (carrier at step 3)",
			with(base("pipeline-nan-next-step", &Fault{Kind: OptimizerNaN, Step: 2}),
				func(s *Spec) { s.Model, s.PP = Pipeline, 2 })},
		{"pipeline-fused-weight", "pipeline (PP 2, DP 2), fused Adam with eps=0 on stage 0's embedding at step 2: at " +
			"step 3 ranks 0 and 1 first show NaN in the embedding weight, ranks 2 and 3 receive it (stage optimizer)",
			with(base("pipeline-fused-weight", &Fault{Kind: OptimizerNaN, Step: 2}),
				func(s *Spec) { s.Model, s.PP, s.Format.OptimizerHooked = Pipeline, 2, false })},
		{"tie-pipeline-carrier", "pipeline (PP 2, DP 2): the negative feature on ranks 0 and 1 at step 2, a tie; each " +
			"sends to its own stage-1 peer and the carrier is the lowest source rank's first hop (rank 0 to rank 2)",
			with(base("tie-pipeline-carrier", &Fault{Kind: LogNegative, Step: 2, Ranks: []int{0, 1}}),
				func(s *Spec) { s.Model, s.PP = Pipeline, 2 })},
		{"single-rank-proc", "one process without torch.distributed (directory proc<pid>): log-negative at step 1",
			with(base("single-rank-proc", &Fault{Kind: LogNegative, Step: 1, Ranks: []int{0}}),
				func(s *Spec) { s.Ranks, s.Format.RankDir, s.LossLog = 1, "proc", false })},
	}
}

// driftScenarios are runs whose anomaly is the end of a climb towards a
// dtype's limit, and clean runs that climb without heading anywhere.
func driftScenarios() []Scenario {
	small := func(name string, f *Fault, steps []int) Spec {
		return with(base(name, f), func(s *Spec) { s.Ranks, s.Steps = 2, steps })
	}
	return []Scenario{
		{"gain-runaway-fp16", "float16 model: the learnable scale of the input features grows 1.35x a step (a weight " +
			"decay of the wrong sign) until their float16 product Tensor.__mul__ overflows",
			with(small("gain-runaway-fp16", &Fault{Kind: GainRunaway}, stepRange(26, 35)), func(s *Spec) { s.DType = "float16" })},
		{"exp-drift-fp16", "float16 model: the gate bias of layer 0 is in an Adam group with lr 0.8; the gate logit rises " +
			"about 0.8 a step until Torch.exp overflows float16 (past 11.09)",
			with(small("exp-drift-fp16", &Fault{Kind: ExpDrift, Layer: 0}, stepRange(9, 15)), func(s *Spec) { s.DType = "float16" })},
		{"sharp-gradient-fp16", "float16 SGD past the edge of stability: the head-bias gradient grows 2.2x a step on every " +
			"replica until the float16 all_reduce of the gradients overflows",
			with(base("sharp-gradient-fp16", &Fault{Kind: SharpGradient}), func(s *Spec) { s.Steps = stepRange(9, 14) })},
		{"gain-runaway-fp32", "float32 model: the learnable scale of the input features grows 1.8x a step until their " +
			"product Tensor.__mul__ overflows past 3.4e38",
			small("gain-runaway-fp32", &Fault{Kind: GainRunaway, Value: 1.8}, stepRange(145, 150))},
		{"loss-scale-falling", "float16 gradients with dynamic loss scaling: from step 2 rank 1 reads a shard sorted by an " +
			"outlier's magnitude; the scaled fc1 gradient grows 2.5x a step until Tensor.half overflows, and the scaler halves the scale at every step after",
			small("loss-scale-falling", &Fault{Kind: ScaledGradOverflow, Step: 2, Ranks: []int{1}, Layer: 1, Value: 300, Growth: 2.5}, stepRange(3, 12))},
		{"warmup-spike", "clean: the learnable scale of the input features rises while its learning rate warms up, then flattens; the loss spikes " +
			"threefold at step 5 and recovers; -inf masks, int64 and bool tensors; no anomaly",
			small("warmup-spike", &Fault{Kind: WarmupSpike, Step: 5}, stepRange(0, 9))},
		{"half-traps", "clean float16 run: -1e4 causal mask biases, an input feature of about 30000 jittering by 2 %, " +
			"a Torch.full_like of 65504 whose float16 Norm is +Inf; no anomaly",
			small("half-traps", &Fault{Kind: HalfTraps}, stepRange(0, 5))},
	}
}

// stepRange is the steps from a to b.
func stepRange(a, b int) []int {
	var s []int
	for i := a; i <= b; i++ {
		s = append(s, i)
	}
	return s
}
