package synth

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

// FaultKind names a physical event that creates a NaN or Inf, or, for the
// last two kinds, a clean run with legitimate non-finite values.
type FaultKind int

const (
	// LogNegative: a corrupted input feature on the source rank(s) is
	// negative (Fault.Value, default -0.75); the forward Torch.log of the
	// features returns NaN.
	LogNegative FaultKind = iota + 1
	// ExpOverflow: a hand-written gating softmax (Torch.exp, Tensor.sum,
	// Tensor.__truediv__) in Fault.Layer gets a logit of Fault.Value
	// (default 120); exp overflows to +Inf and the division Inf/Inf makes the
	// first NaN two entries later.
	ExpOverflow
	// SqrtZeroBackward: a duplicated token makes a row of the delta feature
	// in Fault.Layer exactly zero; sqrt is finite in the forward, its
	// backward is +Inf, and Inf·0 in the backward of d*d makes the first NaN.
	SqrtZeroBackward
	// CustomAttentionBackward: the attention of every layer is a custom
	// kernel registered with register_custom_api under the prefix
	// "moe_ext.kernels"; in Fault.Layer its backward writes NaN into the
	// gradient of the last relative-position bucket of its bias table.
	CustomAttentionBackward
	// CastOverflow: an activation outlier of Fault.Value (default 1e5) in
	// the MLP of Fault.Layer is cast to float16 with Tensor.half and
	// becomes +Inf.
	CastOverflow
	// MaskedSoftmaxNaN: a left-padded sample leaves the first query row
	// fully masked with -inf; the softmax of that row is NaN.
	MaskedSoftmaxNaN
	// OptimizerNaN: the embedding is unfrozen at Fault.Step into an Adam
	// parameter group with eps=0; its gradient is exactly zero for every
	// token absent from the batch, so m/(sqrt(v)+eps) is 0/0 = NaN on every
	// rank at once (Fault.Ranks is not used).
	OptimizerNaN
	// Uncaptured: the attention softmax is an unhooked fused kernel; a
	// fully masked row (as in MaskedSoftmaxNaN) makes it return NaN, and
	// the first dump entry to show the NaN already has it in its input.
	Uncaptured
	// AllReduceOverflow: a float16 model whose head-bias gradients carry a
	// spike of Fault.Value (default 21000) at the same element on every
	// rank of Fault.Ranks (all ranks when empty); each input is finite, the
	// sum overflows float16. The collective itself is the origin, on every
	// participant: Truth.Ranks lists them all, Tie is false, Stage is
	// backward (gradient synchronisation) and there is no Carrier.
	AllReduceOverflow
	// SendRecvCarrier: an ExpOverflow event in Fault.Layer on a pipeline
	// stage; the NaN activation reaches the next stage through send/recv.
	SendRecvCarrier
	// AllToAllCarrier: in Fault.Layer of a MoE model, the batches of
	// Fault.Ranks hold padding tokens whose hidden states are zeroed; the
	// router sends them to expert 0, whose eps-less RMSNorm computes
	// rsqrt(0) = +Inf and 0·Inf = NaN; the combine all_to_all returns the
	// NaN rows to the ranks that own the tokens.
	AllToAllCarrier
	// GarbageBuffers is a clean run in the old receive-buffer format:
	// receive buffers and Torch.empty outputs hold NaN/Inf garbage.
	GarbageBuffers
	// LegitMasks is a clean run whose causal -inf masks (Torch.full,
	// Torch.triu, Tensor.__add__) appear in every layer of every step.
	LegitMasks
)

var faultNames = [...]string{"", "log-negative", "exp-overflow", "sqrt-zero-backward",
	"custom-attention-backward", "cast-overflow", "masked-softmax-nan", "optimizer-nan",
	"uncaptured", "allreduce-overflow", "sendrecv-carrier", "alltoall-carrier",
	"garbage-buffers", "legit-masks"}

func (k FaultKind) String() string {
	if k > 0 && int(k) < len(faultNames) {
		return faultNames[k]
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// clean reports whether the kind describes a run without a real anomaly.
func (k FaultKind) clean() bool { return k == GarbageBuffers || k == LegitMasks }

// Fault is the event injected into the simulation.
type Fault struct {
	Kind FaultKind
	// Step is the training step of the event.
	Step int
	// Ranks are the ranks where the event happens. More than one rank means
	// independent events at the same op at the same time (a tie).
	Ranks []int
	// Layer is the transformer layer (global index) for kinds that live in
	// a layer.
	Layer int
	// Value is the magnitude of the event where a kind has one (see the
	// kind's documentation); zero selects the default.
	Value float64
	// MicroBatch is the micro-batch of Step in which the event happens
	// (Spec.MicroBatches); a negative value counts from the end, -1 being
	// the last. Kinds that live outside the forward and backward passes
	// (OptimizerNaN) ignore it.
	MicroBatch int
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
}

// Damage alters the written files of one rank at one step.
type Damage struct {
	Step, Rank int
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
	Level  string
	Fault  *Fault
	Format Format
	Damage []Damage
	Seed   int64

	// Batch and Seq are the micro-batch size and sequence length
	// (defaults 2 and 16); Vocab the vocabulary size (default 512).
	Batch, Seq, Vocab int
	// DType is the activation and parameter dtype: "float32", "bfloat16"
	// or "float16" (default float32 for Dense and Pipeline, bfloat16 for
	// the Megatron-style models, float16 when the fault needs it).
	DType string
	// Optimizer is "adam" (default) or "sgd".
	Optimizer string
	// Attention is "eager" (default: matmul, scale, mask, softmax, matmul)
	// or "custom" (one moe_ext.kernels.fused_attention call per layer).
	Attention string
	// Mask is the causal mask of eager attention: "masked_fill" (default,
	// Tensor.masked_fill with a -inf float) or "add" (a Torch.full(-inf) +
	// Torch.triu mask added with Tensor.__add__).
	Mask string
	// Experts is the total number of experts (MoE, default 2*EP); TopK the
	// experts per token (default 2).
	Experts, TopK int
	// ClipGrad adds clip_grad_norm_ before the optimizer.
	ClipGrad bool
	// LossLog adds the all_reduce of the detached loss used for logging.
	LossLog bool

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

// normalized returns a copy of s with defaults filled in, or an error when
// the spec is inconsistent.
func (s Spec) normalized() (*Spec, error) {
	n := s
	n.Steps = slices.Clone(s.Steps)
	n.Damage = slices.Clone(s.Damage)
	if s.Fault != nil {
		f := *s.Fault
		f.Ranks = slices.Clone(f.Ranks)
		n.Fault = &f
	}
	if n.Ranks <= 0 {
		return nil, errors.New("synth: ranks must be positive")
	}
	if len(n.Steps) == 0 {
		return nil, errors.New("synth: no steps to dump")
	}
	slices.Sort(n.Steps)
	n.Steps = slices.Compact(n.Steps)
	if n.Steps[0] < 0 {
		return nil, errors.New("synth: negative step")
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
			return nil, fmt.Errorf("synth: %d experts do not split over EP %d", n.Experts, n.EP)
		}
		if n.TopK > n.Experts {
			return nil, errors.New("synth: topk exceeds the number of experts")
		}
	default:
		return nil, fmt.Errorf("synth: unknown model %d", int(n.Model))
	}
	if n.Ranks%(n.TP*n.PP) != 0 || n.Ranks%n.EP != 0 {
		return nil, fmt.Errorf("synth: %d ranks do not split into TP %d, PP %d, EP %d", n.Ranks, n.TP, n.PP, n.EP)
	}
	if n.Model == Pipeline && n.Layers < n.PP {
		return nil, fmt.Errorf("synth: %d layers for %d pipeline stages", n.Layers, n.PP)
	}
	if n.Hidden%n.TP != 0 || n.Hidden < 8 {
		return nil, fmt.Errorf("synth: hidden size %d does not split over TP %d", n.Hidden, n.TP)
	}
	switch n.Level {
	case "":
		n.Level = "L1"
	case "L1", "mix":
	default:
		return nil, fmt.Errorf("synth: unknown level %q", n.Level)
	}
	if n.Optimizer == "" {
		n.Optimizer = "adam"
	}
	if n.Optimizer != "adam" && n.Optimizer != "sgd" {
		return nil, fmt.Errorf("synth: unknown optimizer %q", n.Optimizer)
	}
	if n.Attention == "" {
		n.Attention = "eager"
	}
	if n.Mask == "" {
		n.Mask = "masked_fill"
	}
	if err := n.Format.normalize(n.Ranks); err != nil {
		return nil, err
	}
	if f := n.Fault; f != nil {
		if f.Kind < LogNegative || f.Kind > LegitMasks {
			return nil, fmt.Errorf("synth: unknown fault kind %d", int(f.Kind))
		}
		if f.Layer < 0 || f.Layer >= n.Layers {
			return nil, fmt.Errorf("synth: fault layer %d outside 0..%d", f.Layer, n.Layers-1)
		}
		for _, r := range f.Ranks {
			if r < 0 || r >= n.Ranks {
				return nil, fmt.Errorf("synth: fault rank %d outside the world", r)
			}
		}
		if f.MicroBatch < 0 {
			f.MicroBatch += n.MicroBatches
		}
		if f.MicroBatch < 0 || f.MicroBatch >= n.MicroBatches {
			return nil, fmt.Errorf("synth: fault micro-batch outside 0..%d", n.MicroBatches-1)
		}
		slices.Sort(f.Ranks)
		f.Ranks = slices.Compact(f.Ranks)
		if len(f.Ranks) == 0 && !f.Kind.clean() && f.Kind != OptimizerNaN && f.Kind != AllReduceOverflow {
			return nil, fmt.Errorf("synth: fault %v needs at least one rank", f.Kind)
		}
		if err := n.applyFault(f); err != nil {
			return nil, err
		}
	}
	if n.DType == "" {
		n.DType = "float32"
		if n.Model == TensorParallel || n.Model == MoE {
			n.DType = "bfloat16"
		}
	}
	if _, ok := dtypeByName(n.DType); !ok {
		return nil, fmt.Errorf("synth: unknown dtype %q", n.DType)
	}
	for _, d := range n.Damage {
		if d.Rank < 0 || d.Rank >= n.Ranks || !slices.Contains(n.Steps, d.Step) {
			return nil, fmt.Errorf("synth: damage at step %d rank %d is not a written file", d.Step, d.Rank)
		}
		if d.TruncateAt < 0 || d.TruncateAt >= 1 {
			return nil, fmt.Errorf("synth: truncation fraction %v outside [0, 1)", d.TruncateAt)
		}
	}
	return &n, nil
}

// applyFault adjusts the model features a fault kind needs.
func (n *Spec) applyFault(f *Fault) error {
	last := n.Steps[len(n.Steps)-1]
	if !f.Kind.clean() && f.Step > last {
		return fmt.Errorf("synth: fault step %d after the last dumped step %d", f.Step, last)
	}
	if n.Model == Pipeline {
		want := -1
		switch f.Kind {
		case LogNegative, MaskedSoftmaxNaN, Uncaptured:
			want = 0
		case ExpOverflow, SqrtZeroBackward, CastOverflow, CustomAttentionBackward, SendRecvCarrier:
			want = n.stageOfLayer(f.Layer)
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
	case MaskedSoftmaxNaN, Uncaptured:
		n.Attention = "eager"
		n.Mask = "masked_fill"
	case AllReduceOverflow:
		n.DType = "float16"
		n.Optimizer = "adam"
	case OptimizerNaN:
		n.Optimizer = "adam"
	case SendRecvCarrier:
		if n.Model != Pipeline {
			return errors.New("synth: sendrecv-carrier needs the pipeline model")
		}
		if n.stageOfLayer(f.Layer) == n.PP-1 {
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
	}
	return nil
}

// stageOfLayer returns the pipeline stage holding a layer.
func (n *Spec) stageOfLayer(layer int) int {
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
