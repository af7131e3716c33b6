package spec

import (
	"errors"
	"fmt"
	"slices"
)

// Model is the parallel layout of the simulated model.
type Model int

const (
	// Dense is a GPT-style decoder trained with pure data parallelism.
	Dense Model = iota
	// TensorParallel is a Megatron-style decoder: TP groups of consecutive
	// ranks, column-parallel qkv/fc1, row-parallel out/fc2 followed by an
	// all_reduce in the TP group, gradients reduced in the DP group.
	TensorParallel
	// Pipeline splits the layers over PP stages that exchange activations
	// (forward) and gradients (backward) with send/recv.
	Pipeline
	// MoE replaces every MLP by a routed mixture of experts: router
	// (linear, softmax, topk), all_to_all_single dispatch and combine inside
	// EP groups of consecutive ranks, experts that only run when tokens are
	// routed to them.
	MoE
)

var modelNames = [...]string{"dense", "tensor-parallel", "pipeline", "moe"}

func (m Model) String() string {
	if m >= 0 && int(m) < len(modelNames) {
		return modelNames[m]
	}
	return fmt.Sprintf("Model(%d)", int(m))
}

// Format selects the on-disk variant of the dump.
type Format struct {
	// Indent is the JSON indentation: 1 (default) or 4 (older msprobe).
	Indent int
	// StackVersion is 2 (default, {"0": [[names], [lines]]}) or 1
	// ({"name": [lines]}).
	StackVersion int
	// NonFinite is "bare" (default: NaN, Infinity, -Infinity tokens) or
	// "string" ("nan", "inf", "-inf").
	NonFinite string
	// Groups is "recorded" (default: {"type": "torch.ProcessGroup",
	// "group_ranks": [...], "group_id": crc32} as kwarg "group", absent for
	// the world group), "null" ("group": null, pre-2024-11) or "absent".
	Groups string
	// ReceiveBuffers is "null" (default, msprobe >= 2026-03 writes receive
	// and output buffers on the input side as null and does not dump
	// Torch.empty), "garbage" (the buffer's previous contents, sometimes
	// NaN/Inf) or "stale" (finite leftovers).
	ReceiveBuffers string
	// OptimizerHooked: the optimizer update (Tensor.mul_, Tensor.add_,
	// Tensor.addcmul_, Torch.sqrt, Tensor.addcdiv_ per parameter for Adam;
	// Tensor.add_ for SGD) is dumped after the gradient all_reduces, with
	// construct.json parent "optimizer". False, the zero value, models a
	// fused optimizer (apex/torch fused Adam, multi_tensor_apply): the
	// update happens but nothing of it is dumped.
	OptimizerHooked bool
	// Framework is "pytorch" (default) or "none": the "framework" key is
	// omitted, as writers before 2025-01 did.
	Framework string
	// RankDir is "rank" (default, rankN), "proc" (single rank: procPID) or
	// "bare" (a folder named "rank" with no number).
	RankDir string
	// StatKeys spells the statistics keys: "msprobe" (default: Max, Min,
	// Mean, Norm), "lower" (max, min, ...) or "upper" (MAX, MIN, ...), as
	// mocks and converted dumps do.
	StatKeys string
	// StatStrings writes finite statistics as numeric strings ("Max":
	// "0.001"); non-finite ones follow NonFinite.
	StatStrings bool
	// Peers is how point-to-point peers and the roots of reduce and
	// broadcast are passed: "positional" (default, dist.send(t, 2)) or
	// "keyword" (dist.send(t, dst=2): input_kwargs {"dst": ...}, and the
	// value again at the end of output).
	Peers string
}

// Damage alters the written files of one rank at one step.
type Damage struct {
	Step, Rank int
	// Kind rewrites dump.json: "empty-data" ("data": {}), "no-data" (no
	// data member) and "cut-header" (cut before the first entry ends)
	// leave no entry to read; "dup-data" adds a second, empty data member
	// after the entries, damage after all of them. The empty kind leaves
	// the file as written.
	Kind string
	// TruncateAt > 0 cuts dump.json at this fraction of its size, as a
	// crash in the middle of a write would.
	TruncateAt float64
	// AfterOrigin measures TruncateAt from the end of the truth's origin
	// entry instead of from the start of the file (only meaningful on the
	// source rank at the origin step).
	AfterOrigin bool
	// DropStack and DropConstruct remove stack.json / construct.json.
	DropStack, DropConstruct bool
}

// Spec describes a run to generate.
type Spec struct {
	Name string
	// Ranks is the world size.
	Ranks int
	// Steps are the dumped steps; the simulation runs from 0 to the last.
	Steps []int
	Model Model
	// Layers is the number of transformer layers (zero: 2, or what Fit
	// chooses for TargetFileBytes).
	Layers int
	// Hidden is the hidden size; it drives the shapes.
	Hidden int
	// TP, PP, EP are the group sizes the model uses (DP is the rest).
	TP, PP, EP int
	// Level is "L1" (APIs only, construct.json {}) or "mix" (APIs and
	// Module.* entries, parameters_grad entries, construct.json parents).
	Level string
	// DataMode is msprobe's data_mode: "all" (default) or "forward" (no
	// backward and no parameters_grad entries; forward-named calls made
	// during the backward, such as a kernel a backward calls or the
	// gradient all_reduce, are still dumped).
	DataMode string
	Fault    *Fault
	Format   Format
	Damage   []Damage
	Seed     int64

	// Batch and Seq are the micro-batch size and sequence length
	// (defaults 2 and 16); Vocab the vocabulary size (default 512).
	Batch, Seq, Vocab int
	// DType is the activation and parameter dtype: "float32", "bfloat16"
	// or "float16" (default float32 for Dense and Pipeline, bfloat16 for
	// the Megatron-style models, float16 when the fault needs it).
	DType string
	// Optimizer is "adam" (default) or "sgd".
	Optimizer string
	// Attention is "eager" (default: matmul, scale, mask, softmax, matmul),
	// "custom" (one moe_ext.kernels.fused_attention call per layer, with
	// its own backward entry) or "function" (FlashAttentionFn, an
	// autograd.Function whose forward and backward call the registered
	// kernels attn_ext.flash_attention and attn_ext.flash_attention_grad;
	// both are forward entries).
	Attention string
	// Mask is the causal mask of eager attention: "masked_fill" (default,
	// Tensor.masked_fill with a -inf float) or "add" (a Torch.full(-inf) +
	// Torch.triu mask added with Tensor.__add__) or "bias" (the same
	// with -1e4 instead of -inf, as float16 code often writes it).
	Mask string
	// Experts is the total number of experts (MoE, default 2*EP); TopK the
	// experts per token (default 2).
	Experts, TopK int
	// ClipGrad adds clip_grad_norm_ before the optimizer.
	ClipGrad bool
	// LossLog adds the all_reduce of the detached loss used for logging.
	LossLog bool
	// GradSync is how the gradients are synchronised: "allreduce"
	// (default: all_reduce and div_ per parameter, in its data-parallel
	// group), "zero1" (ZeRO-1: reduce to the parameter's owner, the
	// owner's update, broadcast from the owner inside optimizer.step) or
	// "reducer" (a hand-written bucketed reducer: the bucket's gradients
	// and its token count are all-reduced and the bucket divided by the
	// count; the router then feeds every expert in every step, as a load
	// balancing loss does).
	GradSync string
	// Backend is the process group backend: "nccl" (default) or "gloo";
	// with gloo a reduce leaves partial sums in the buffers of the ranks
	// that are not its destination.
	Backend string
	// LossScale trains in float16 with dynamic loss scaling: the loss is
	// multiplied by the scale before the backward, every gradient is cast
	// to float16 (Tensor.half) and all-reduced in float16, an overflow
	// check (Torch.isfinite, Tensor.all) decides, and a step with a
	// non-finite gradient skips the update and halves the scale. It needs
	// GradSync "allreduce".
	LossScale bool

	// Schedule orders the micro-batches: "sequential" (default: each
	// forward then its backward) or "gpipe" (every forward, then every
	// backward, as a GPipe pipeline schedule runs them).
	Schedule string
	// MicroBatches is the number of forward and backward passes per step
	// (gradient accumulation, default 1): parameter gradients accumulate
	// over the micro-batches and are synchronised and applied once, after
	// the last one. Entry counters run on through the step, as msprobe's
	// do.
	MicroBatches int
	// TargetFileBytes, when positive, sizes the run so that each
	// dump.json is about this large: Generate first measures the spec on
	// dry runs of one step, then chooses the layers (when Layers is zero:
	// as many as fit, at most 32 per pipeline stage) and the micro-batches
	// per step (when MicroBatches is zero). See Fit.
	TargetFileBytes int64
}

// Normalized returns a copy of s with defaults filled in, or an error when
// the spec is inconsistent.
func (s Spec) Normalized() (*Spec, error) {
	n := s
	n.Steps = slices.Clone(s.Steps)
	n.Damage = slices.Clone(s.Damage)
	if s.Fault != nil {
		f := *s.Fault
		f.Ranks = slices.Clone(f.Ranks)
		n.Fault = &f
	}
	if err := n.normalizeLayout(); err != nil {
		return nil, err
	}
	if err := n.normalizeOptions(); err != nil {
		return nil, err
	}
	if err := n.normalizeFault(); err != nil {
		return nil, err
	}
	if n.LossScale && n.GradSync != "allreduce" {
		return nil, errors.New("synth: loss scaling needs GradSync allreduce")
	}
	if n.ClipGrad && n.GradSync == "zero1" {
		return nil, errors.New("synth: gradient clipping is not modelled with zero1")
	}
	if n.DType == "" {
		n.DType = "float32"
		if n.Model == TensorParallel || n.Model == MoE {
			n.DType = "bfloat16"
		}
	}
	if !slices.Contains([]string{"float32", "bfloat16", "float16"}, n.DType) {
		return nil, fmt.Errorf("synth: unknown dtype %q", n.DType)
	}
	if err := n.checkDamage(); err != nil {
		return nil, err
	}
	return &n, nil
}

// normalizeLayout checks the world size and the steps and fills in the
// shapes and the group sizes of the model layout.
func (n *Spec) normalizeLayout() error {
	if n.Ranks <= 0 {
		return errors.New("synth: ranks must be positive")
	}
	if len(n.Steps) == 0 {
		return errors.New("synth: no steps to dump")
	}
	slices.Sort(n.Steps)
	n.Steps = slices.Compact(n.Steps)
	if n.Steps[0] < 0 {
		return errors.New("synth: negative step")
	}
	if n.Layers <= 0 {
		n.Layers = 2
	}
	if n.Hidden <= 0 {
		n.Hidden = 64
	}
	if n.Batch <= 0 {
		n.Batch = 2
	}
	if n.Seq <= 0 {
		n.Seq = 16
	}
	if n.Vocab <= 0 {
		n.Vocab = 512
	}
	if n.MicroBatches <= 0 {
		n.MicroBatches = 1
	}
	n.TP, n.PP, n.EP = max(n.TP, 1), max(n.PP, 1), max(n.EP, 1)
	switch n.Model {
	case Dense:
		n.TP, n.PP, n.EP = 1, 1, 1
	case TensorParallel:
		n.PP, n.EP = 1, 1
	case Pipeline:
		n.TP, n.EP = 1, 1
	case MoE:
		n.TP, n.PP = 1, 1
		if n.Experts <= 0 {
			n.Experts = 2 * n.EP
		}
		if n.TopK <= 0 {
			n.TopK = 2
		}
		if n.Experts%n.EP != 0 {
			return fmt.Errorf("synth: %d experts do not split over EP %d", n.Experts, n.EP)
		}
		if n.TopK > n.Experts {
			return errors.New("synth: topk exceeds the number of experts")
		}
	default:
		return fmt.Errorf("synth: unknown model %d", int(n.Model))
	}
	if n.Ranks%(n.TP*n.PP) != 0 || n.Ranks%n.EP != 0 {
		return fmt.Errorf("synth: %d ranks do not split into TP %d, PP %d, EP %d", n.Ranks, n.TP, n.PP, n.EP)
	}
	if n.Model == Pipeline && n.Layers < n.PP {
		return fmt.Errorf("synth: %d layers for %d pipeline stages", n.Layers, n.PP)
	}
	if n.Hidden%n.TP != 0 || n.Hidden < 8 {
		return fmt.Errorf("synth: hidden size %d does not split over TP %d", n.Hidden, n.TP)
	}
	return nil
}

// normalizeOptions fills in the level, the schedule, the gradient
// synchronisation, the backend, the data mode, the optimizer, the
// attention, the mask and the format, and refuses unknown values.
func (n *Spec) normalizeOptions() error {
	switch n.Level {
	case "":
		n.Level = "L1"
	case "L1", "mix":
	default:
		return fmt.Errorf("synth: unknown level %q", n.Level)
	}
	switch n.Schedule {
	case "":
		n.Schedule = "sequential"
	case "sequential", "gpipe":
	default:
		return fmt.Errorf("synth: unknown schedule %q", n.Schedule)
	}
	switch n.GradSync {
	case "":
		n.GradSync = "allreduce"
	case "allreduce", "zero1", "reducer":
	default:
		return fmt.Errorf("synth: unknown gradient synchronisation %q", n.GradSync)
	}
	switch n.Backend {
	case "":
		n.Backend = "nccl"
	case "nccl", "gloo":
	default:
		return fmt.Errorf("synth: unknown backend %q", n.Backend)
	}
	switch n.DataMode {
	case "":
		n.DataMode = "all"
	case "all", "forward":
	default:
		return fmt.Errorf("synth: unknown data mode %q", n.DataMode)
	}
	if n.Optimizer == "" {
		n.Optimizer = "adam"
	}
	if n.Optimizer != "adam" && n.Optimizer != "sgd" {
		return fmt.Errorf("synth: unknown optimizer %q", n.Optimizer)
	}
	switch n.Attention {
	case "":
		n.Attention = "eager"
	case "eager", "custom", "function":
	default:
		return fmt.Errorf("synth: unknown attention %q", n.Attention)
	}
	if n.Mask == "" {
		n.Mask = "masked_fill"
	}
	if err := n.Format.normalize(n.Ranks); err != nil {
		return err
	}
	return nil
}

// normalizeFault checks the fault against the spec and adjusts the
// features its kind needs.
func (n *Spec) normalizeFault() error {
	if f := n.Fault; f != nil {
		if f.Kind < LogNegative || f.Kind > LastKind {
			return fmt.Errorf("synth: unknown fault kind %d", int(f.Kind))
		}
		if f.Layer < 0 || f.Layer >= n.Layers {
			return fmt.Errorf("synth: fault layer %d outside 0..%d", f.Layer, n.Layers-1)
		}
		for _, r := range f.Ranks {
			if r < 0 || r >= n.Ranks {
				return fmt.Errorf("synth: fault rank %d outside the world", r)
			}
		}
		if f.MicroBatch < 0 {
			f.MicroBatch += n.MicroBatches
		}
		if f.MicroBatch < 0 || f.MicroBatch >= n.MicroBatches {
			return fmt.Errorf("synth: fault micro-batch outside 0..%d", n.MicroBatches-1)
		}
		slices.Sort(f.Ranks)
		f.Ranks = slices.Compact(f.Ranks)
		if len(f.Ranks) == 0 && !f.Kind.Clean() && !f.Kind.EveryRank() {
			return fmt.Errorf("synth: fault %v needs at least one rank", f.Kind)
		}
		if err := n.applyFault(f); err != nil {
			return err
		}
	}
	return nil
}

// checkDamage refuses damage to files that are not written and damage
// kinds that do not exist.
func (n *Spec) checkDamage() error {
	for _, d := range n.Damage {
		if d.Rank < 0 || d.Rank >= n.Ranks || !slices.Contains(n.Steps, d.Step) {
			return fmt.Errorf("synth: damage at step %d rank %d is not a written file", d.Step, d.Rank)
		}
		if d.TruncateAt < 0 || d.TruncateAt >= 1 {
			return fmt.Errorf("synth: truncation fraction %v outside [0, 1)", d.TruncateAt)
		}
		switch d.Kind {
		case "", "empty-data", "no-data", "dup-data", "cut-header":
		default:
			return fmt.Errorf("synth: unknown damage kind %q", d.Kind)
		}
		if d.Kind != "" && d.TruncateAt > 0 {
			return errors.New("synth: a damage kind and a truncation exclude each other")
		}
	}
	return nil
}

// applyFault adjusts the model features a fault kind needs.
func (n *Spec) applyFault(f *Fault) error {
	last := n.Steps[len(n.Steps)-1]
	if !f.Kind.Clean() && f.Step > last {
		return fmt.Errorf("synth: fault step %d after the last dumped step %d", f.Step, last)
	}
	if n.Model == Pipeline {
		want := -1
		switch f.Kind {
		case LogNegative, MaskedSoftmaxNaN, Uncaptured:
			want = 0
		case ExpOverflow, SqrtZeroBackward, CastOverflow, CustomAttentionBackward, SendRecvCarrier, GradKernelNaN, ScaledGradOverflow:
			want = n.StageOfLayer(f.Layer)
		}
		for _, r := range f.Ranks {
			if want >= 0 && r/(n.Ranks/n.PP) != want {
				return fmt.Errorf("synth: fault rank %d is not on pipeline stage %d where %v happens", r, want, f.Kind)
			}
		}
	}
	switch f.Kind {
	case CustomAttentionBackward:
		n.Attention = "custom"
	case GradKernelNaN:
		n.Attention = "function"
	case ReducerZeroCount:
		n.GradSync = "reducer"
	case ScaledGradOverflow:
		n.LossScale = true
		if n.Model == MoE {
			return errors.New("synth: scaled-grad-overflow needs a dense MLP")
		}
	case CastOverflow:
		if n.Model == MoE {
			return errors.New("synth: cast-overflow needs a dense MLP")
		}
	case MaskedSoftmaxNaN, Uncaptured:
		n.Attention = "eager"
		n.Mask = "masked_fill"
	case AllReduceOverflow:
		n.DType = "float16"
	case OptimizerNaN:
		n.Optimizer = "adam"
	case SendRecvCarrier:
		if n.Model != Pipeline {
			return errors.New("synth: sendrecv-carrier needs the pipeline model")
		}
		if n.StageOfLayer(f.Layer) == n.PP-1 {
			return errors.New("synth: sendrecv-carrier needs a fault layer before the last stage")
		}
	case AllToAllCarrier:
		if n.Model != MoE {
			return errors.New("synth: alltoall-carrier needs the MoE model")
		}
		if n.Experts/n.EP < 2 {
			return errors.New("synth: alltoall-carrier needs two local experts per rank")
		}
	case GarbageBuffers:
		if n.Format.ReceiveBuffers == "null" {
			n.Format.ReceiveBuffers = "garbage"
		}
	case LegitMasks:
		n.Attention = "eager"
		n.Mask = "add"
	case SharpGradient:
		n.DType, n.Optimizer = "float16", "sgd"
	case HalfTraps:
		n.DType, n.Attention, n.Mask = "float16", "eager", "bias"
	}
	if f.Growth < 0 || (f.Growth > 0 && f.Kind != ScaledGradOverflow) {
		return fmt.Errorf("synth: growth %v: only a scaled-grad-overflow grows", f.Growth)
	}
	return nil
}

// StageOfLayer returns the pipeline stage holding a layer.
func (n *Spec) StageOfLayer(layer int) int {
	per := (n.Layers + n.PP - 1) / n.PP
	return min(layer/per, n.PP-1)
}

func (f *Format) normalize(ranks int) error {
	if f.Indent == 0 {
		f.Indent = 1
	}
	if f.Indent < 0 || f.Indent > 8 {
		return fmt.Errorf("synth: indent %d", f.Indent)
	}
	if f.StackVersion == 0 {
		f.StackVersion = 2
	}
	if f.StackVersion != 1 && f.StackVersion != 2 {
		return fmt.Errorf("synth: stack version %d", f.StackVersion)
	}
	if f.NonFinite == "" {
		f.NonFinite = "bare"
	}
	if f.NonFinite != "bare" && f.NonFinite != "string" {
		return fmt.Errorf("synth: non-finite style %q", f.NonFinite)
	}
	if f.Groups == "" {
		f.Groups = "recorded"
	}
	if f.Groups != "recorded" && f.Groups != "null" && f.Groups != "absent" {
		return fmt.Errorf("synth: groups style %q", f.Groups)
	}
	if f.ReceiveBuffers == "" {
		f.ReceiveBuffers = "null"
	}
	if f.ReceiveBuffers != "null" && f.ReceiveBuffers != "garbage" && f.ReceiveBuffers != "stale" {
		return fmt.Errorf("synth: receive-buffer style %q", f.ReceiveBuffers)
	}
	switch f.Framework {
	case "":
		f.Framework = "pytorch"
	case "pytorch", "none":
	default:
		return fmt.Errorf("synth: framework %q", f.Framework)
	}
	switch f.StatKeys {
	case "":
		f.StatKeys = "msprobe"
	case "msprobe", "lower", "upper":
	default:
		return fmt.Errorf("synth: statistics key style %q", f.StatKeys)
	}
	switch f.Peers {
	case "":
		f.Peers = "positional"
	case "positional", "keyword":
	default:
		return fmt.Errorf("synth: peer style %q", f.Peers)
	}
	switch f.RankDir {
	case "":
		f.RankDir = "rank"
	case "rank":
	case "proc", "bare":
		if ranks != 1 {
			return fmt.Errorf("synth: rank directory style %q needs a single rank", f.RankDir)
		}
	default:
		return fmt.Errorf("synth: rank directory style %q", f.RankDir)
	}
	return nil
}
