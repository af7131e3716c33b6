package spec

import "fmt"

// FaultKind names a physical event that creates a NaN or Inf, or, for the
// last two kinds, a clean run with legitimate non-finite values.
type FaultKind int

const (
	// LogNegative: a corrupted input feature on the source rank(s) is
	// negative (Fault.Value, default -0.75); the forward Torch.log of the
	// features returns NaN. A Value in (0, 1e-30] is a feature of exactly
	// zero: Torch.log returns -inf, which a forward does not count, until
	// the projection turns it into +inf.
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
	// GradKernelNaN: the attention of every layer is FlashAttentionFn, a
	// torch.autograd.Function over kernels registered with
	// register_custom_api (Spec.Attention "function"); in Fault.Layer a
	// sample whose every token is padding makes the grad kernel
	// attn_ext.flash_attention_grad, called from the Function's backward
	// and dumped as a forward entry between the backward entries, write
	// NaN into grad_v from clean inputs (the forward kernel clamps the
	// softmax denominator, the grad kernel does not); with a negative
	// Fault.Value it writes -inf (the log of a zero probability), which
	// is not severe where the kernel is dumped, between the backward
	// entries, until a backward entry receives it.
	GradKernelNaN
	// ReducerZeroCount: the gradients are reduced by a hand-written
	// bucketed reducer (it sets Spec.GradSync "reducer": all_reduce of the summed
	// bucket and of its token count, then a division by the count), and
	// layer Fault.Layer has a domain adapter that only tokens of one data
	// domain use. At Fault.Step the domain is paused on every rank: the
	// adapter's bucket is exactly zero and its all-reduced count is 0, so
	// the division makes 0/0 = NaN on every rank at once, right after the
	// reduction (Fault.Ranks is not used).
	ReducerZeroCount
	// ScaledGradOverflow: float16 training with dynamic loss scaling (it
	// sets Spec.LossScale): an outlier record on the ranks of Fault.Ranks
	// makes the scaled gradient of layer Fault.Layer's fc1 weight reach
	// Fault.Value (default 2e5); its cast to float16 for the all_reduce
	// (Tensor.half; without data parallelism nothing is cast and nothing
	// overflows) is +Inf and -Inf, the float16 all_reduce spreads it, every rank's
	// overflow check fails and the update is skipped: the next step is
	// clean again (recovered) unless Fault.Repeat makes it happen at every
	// step.
	ScaledGradOverflow
	// GarbageBuffers is a clean run in the old receive-buffer format:
	// receive buffers and Torch.empty outputs hold NaN/Inf garbage.
	GarbageBuffers
	// LegitMasks is a clean run whose causal -inf masks (Torch.full,
	// Torch.triu, Tensor.__add__) appear in every layer of every step.
	LegitMasks
	// GainRunaway: the raw input features (as LogNegative's, positive,
	// at most 2) are multiplied by a learnable per-feature scale
	// (initialised at 1), normalised by F.layer_norm without affine
	// parameters and projected into the hidden states. The scale's
	// decoupled weight decay has the wrong sign: from Fault.Step on,
	// every optimizer step multiplies it by Fault.Value (default 1.35,
	// below 2 so that the product overflows before the scale does) with
	// a hooked Tensor.mul_. The product Tensor.__mul__ climbs by that
	// factor a step until it overflows the model dtype. The normalisation
	// keeps everything after it, gradients included, in range. It happens
	// on every rank: the scale is replicated.
	GainRunaway
	// ExpDrift: the hand-written gating softmax of ExpOverflow in
	// Fault.Layer, whose gate bias is in an Adam parameter group with a
	// learning rate of Fault.Value (default 0.8), far too high: from
	// Fault.Step on, the gradient of one gate's bias keeps its sign, so
	// Adam's normalised step moves it by about the learning rate every
	// step. The gate logit rises linearly until Torch.exp overflows the
	// model dtype (past ln(65504) = 11.09 in float16). Every rank.
	ExpDrift
	// SharpGradient: float16 SGD (it sets Spec.DType and Spec.Optimizer)
	// past the edge of stability along the sharpest direction of the head
	// bias: each step multiplies the bias's deviation along that direction
	// by -Fault.Value (1 - lr*curvature, default -2.2), and with it the
	// gradient's pair of opposite spikes, identical on every replica. The
	// float16 Distributed.all_reduce of the gradients overflows when their
	// sum passes 65504 while every input is finite. Every rank.
	SharpGradient
	// WarmupSpike is a clean run that climbs without heading anywhere:
	// the feature scale of GainRunaway, initialised at 0.25, moves
	// towards 1 under a learning rate that warms up over four steps
	// (it rises for a few steps, then flattens), and the batch of
	// Fault.Step holds mislabelled records: the loss spikes threefold and
	// recovers at the next step.
	WarmupSpike
	// HalfTraps is a clean float16 run with every large value that is not
	// heading for an overflow: an additive causal mask bias of -1e4
	// (Torch.full, Torch.triu, Tensor.__add__ in eager attention), an
	// unnormalised float16 input feature of about 30000 that jitters by
	// 2 % from step to step without growing, and a Torch.full of 65504
	// (float16's max, on purpose: a cap for that feature) whose Norm is
	// +Inf in float16 while every element is finite.
	HalfTraps
)

// LastKind is the last fault kind.
const LastKind = HalfTraps

var faultNames = [...]string{"", "log-negative", "exp-overflow", "sqrt-zero-backward",
	"custom-attention-backward", "cast-overflow", "masked-softmax-nan", "optimizer-nan",
	"uncaptured", "allreduce-overflow", "sendrecv-carrier", "alltoall-carrier",
	"grad-kernel-nan", "reducer-zero-count", "scaled-grad-overflow",
	"garbage-buffers", "legit-masks", "gain-runaway", "exp-drift", "sharp-gradient",
	"warmup-spike", "half-traps"}

func (k FaultKind) String() string {
	if k > 0 && int(k) < len(faultNames) {
		return faultNames[k]
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// EveryRank reports a kind that happens on every rank (Fault.Ranks empty)
// or, for AllReduceOverflow, on every rank of Fault.Ranks.
func (k FaultKind) EveryRank() bool {
	return k == OptimizerNaN || k == AllReduceOverflow || k == ReducerZeroCount || k.Drifts()
}

// Drifts reports the kinds whose anomaly is the end of a climb: a
// statistic heads for its dtype's limit step after step before it
// overflows (their Truth.Ahead is read off the dump).
func (k FaultKind) Drifts() bool { return k == GainRunaway || k == ExpDrift || k == SharpGradient }

// Clean reports whether the kind describes a run without a real anomaly.
func (k FaultKind) Clean() bool {
	return k == GarbageBuffers || k == LegitMasks || k == WarmupSpike || k == HalfTraps
}

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
	// (OptimizerNaN, ReducerZeroCount) ignore it.
	MicroBatch int
	// Repeat makes the event happen again at every step after Step (a
	// bad shard read every step), for the kinds that come from the data.
	Repeat bool
	// Growth > 0 makes the event of ScaledGradOverflow come from a shard
	// sorted by the outlier's magnitude: from Step on (Repeat implied)
	// each step's outlier record is Growth times the last one, and the
	// scaled gradient it makes is Value times Growth^(step-Step) times the
	// loss scale of the step over the initial one.
	Growth float64
}

// Climbs reports a fault whose anomaly is the end of a climb towards a
// dtype's limit: a kind that drifts, or an event that grows.
func (f *Fault) Climbs() bool { return f.Kind.Drifts() || f.Growth > 0 }

// At reports whether the event happens At step.
func (f *Fault) At(step int) bool {
	return step == f.Step || ((f.Repeat || f.Growth > 0) && step > f.Step)
}
