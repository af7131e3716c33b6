package truth

import (
	"fmt"
	"slices"
	"sort"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// cleanNotes describes a run without anomaly.
func (w *reading) cleanNotes() []string {
	n := []string{"no op creates a non-finite value from clean inputs"}
	if b := w.firstBirth(); b != nil {
		name := b.Name
		if name == "" {
			name = "an unhooked " + b.Key[len("hidden:"):]
		}
		n = []string{fmt.Sprintf("the simulation's first birth, %s on rank(s) %s at step %d, leaves no lasting trace in the dumped steps", name, rankList(w.birthRanks(b)), b.Step)}
	}
	f := w.spec.Fault
	if f != nil && f.Kind == spec.GarbageBuffers {
		n = append(n, "receive buffers on the input side of collectives and Torch.empty outputs hold uninitialised memory (NaN/Inf garbage included); the collectives overwrite them")
	}
	switch {
	case f != nil && f.Kind == spec.WarmupSpike:
		n = append(n, fmt.Sprintf("the learnable scale of the input features rises towards 1 while its learning rate warms up, then flattens far from any limit; the loss spikes at step %d (mislabelled records) and recovers at the next step", f.Step))
	case f != nil && f.Kind == spec.HalfTraps:
		n = append(n, "an unnormalised float16 input feature of about 30000 jitters by 2 % without growing; Torch.full_like of 65504 (float16's max, a cap on purpose) has a float16 Norm of +Inf while its elements are finite")
	}
	if w.spec.Attention == "eager" {
		if w.spec.Mask == "bias" {
			n = append(n, "every layer adds a float16 causal mask bias of -1e4 built each step by Torch.full and Torch.triu: finite, large and legitimate")
		} else if w.spec.Mask == "add" {
			n = append(n, "every layer adds a causal mask built each step by Torch.full(-inf) and Torch.triu: -Infinity in Min is legitimate")
		} else {
			n = append(n, "every layer fills the causal mask with Tensor.masked_fill(-inf): -Infinity in Min is legitimate")
		}
	}
	return n
}

// notes explains the fault and what the simulation made of it.
func (w *reading) notes(t *Truth) []string {
	s := w.spec
	f := s.Fault
	var n []string
	if f != nil {
		switch f.Kind {
		case spec.LogNegative:
			n = append(n, fmt.Sprintf("a corrupted input feature on rank(s) %s at step %d is negative; Torch.log returns NaN", rankList(f.Ranks), f.Step))
		case spec.ExpOverflow:
			n = append(n, fmt.Sprintf("a gate logit on rank(s) %s in layer %d overflows Torch.exp to +Inf; the normalisation Inf/Inf makes the first NaN", rankList(f.Ranks), f.Layer))
		case spec.SqrtZeroBackward:
			n = append(n, fmt.Sprintf("a duplicated token on rank(s) %s makes a row of the layer %d delta exactly zero: sqrt is finite in the forward, its backward is +Inf and Inf*0 in the backward of d*d makes the first NaN", rankList(f.Ranks), f.Layer))
		case spec.CustomAttentionBackward:
			n = append(n, fmt.Sprintf("the custom kernel moe_ext.kernels.fused_attention (register_custom_api) of layer %d writes NaN into the gradient of the last relative-position bucket of rel_bias on rank(s) %s at step %d, when a batch reaches that bucket", f.Layer, rankList(f.Ranks), f.Step))
			n = append(n, fmt.Sprintf("Adam writes NaN into that bucket of rel_bias at step %d; the forward reads it only when a batch holds a sequence of the maximum length (from step %d on), so steps in between show NaN in the rel_bias input of the kernel with a finite output", f.Step, f.Step+2))
		case spec.CastOverflow:
			n = append(n, fmt.Sprintf("an activation outlier on rank(s) %s in the MLP of layer %d is cast to float16 by Tensor.half and becomes +Inf", rankList(f.Ranks), f.Layer))
		case spec.MaskedSoftmaxNaN:
			n = append(n, fmt.Sprintf("a left-padded sample on rank(s) %s leaves a query row fully masked with -inf; the softmax of that row is NaN while its input only holds the legitimate -inf", rankList(f.Ranks)))
		case spec.OptimizerNaN:
			n = append(n, fmt.Sprintf("the embedding joins the optimizer at step %d in a parameter group with eps=0; its gradient is exactly zero for tokens absent from the batch and m/(sqrt(v)+eps) = 0/0 in Tensor.addcdiv_ on every rank", f.Step))
			if !s.Format.OptimizerHooked {
				n = append(n, fmt.Sprintf("the optimizer is fused and not dumped: the NaN is first visible at step %d as the weight input of the first forward op using the embedding", t.Step))
			}
		case spec.Uncaptured:
			n = append(n, fmt.Sprintf("a fully masked row on rank(s) %s goes through an unhooked fused softmax kernel (scaled_masked_softmax) that returns NaN; the first dumped entry already has NaN in its input", rankList(f.Ranks)))
		case spec.AllReduceOverflow:
			n = append(n, "the float16 head-bias gradients are finite on every rank but their spikes sit at the same element; the sum in Distributed.all_reduce overflows float16 on every participant")
		case spec.SendRecvCarrier:
			n = append(n, fmt.Sprintf("Torch.exp overflows in layer %d on rank(s) %s; the NaN activation reaches the next pipeline stage through Distributed.send/recv", f.Layer, rankList(f.Ranks)))
		case spec.GainRunaway:
			n = append(n, fmt.Sprintf("the LayerScale gain of layer %d is multiplied at every step from step %d by its weight decay of the wrong sign (Tensor.mul_); the product of the fc2 output and the gain climbs until it overflows", f.Layer, f.Step))
		case spec.ExpDrift:
			n = append(n, fmt.Sprintf("the gate bias of layer %d is in an Adam group with a learning rate far too high: from step %d the gate logit rises by about the learning rate a step until Torch.exp overflows", f.Layer, f.Step))
		case spec.SharpGradient:
			n = append(n, "float16 SGD past the edge of stability: the head bias's deviation along the sharpest direction, and its gradient, grow by the same factor every step on every replica until the float16 Distributed.all_reduce of the gradients overflows")
		case spec.ScaledGradOverflow:
			if f.Growth > 0 {
				n = append(n, fmt.Sprintf("from step %d rank(s) %s read a shard sorted by an outlier's magnitude: the scaled gradient of the fc1 weight of layer %d grows %gx a step until Tensor.half overflows; every later step overflows again and the loss scaler halves the scale each time", f.Step, rankList(f.Ranks), f.Layer, f.Growth))
			}
		case spec.AllToAllCarrier:
			n = append(n, fmt.Sprintf("ranks %s zero the hidden states of padding tokens in layer %d; the router sends them to expert 0, whose eps-less RMSNorm computes rsqrt(0) = +Inf and 0*Inf = NaN; the combine all_to_all_single returns the NaN rows to the ranks owning the tokens", rankList(f.Ranks), f.Layer))
		}
	}
	if !t.Captured {
		n = append(n, "the op that created the anomaly is not in the dump; op names the first entry that shows it")
	}
	if t.Tie {
		n = append(n, fmt.Sprintf("tie: ranks %s create the anomaly independently at the same op", rankList(t.Ranks)))
	}
	if t.Carrier == nil {
		n = append(n, "no collective carries the anomaly to a rank that did not have it")
	}
	loss := -1
	var lossRanks []int
	for _, st := range w.ranks {
		if st.LossBad >= 0 && (loss < 0 || st.LossBad < loss) {
			loss = st.LossBad
		}
	}
	for _, st := range w.ranks {
		if st.LossBad == loss && loss >= 0 {
			lossRanks = append(lossRanks, st.Rank)
		}
	}
	if loss >= 0 {
		n = append(n, fmt.Sprintf("the loss is first non-finite at step %d (rank(s) %s)", loss, rankList(lossRanks)))
	} else {
		n = append(n, "the loss stays finite in every simulated step")
	}
	if o := w.walk.originOf(); o != nil {
		switch {
		case o.root.ph != o.root.phys && !o.captured:
			n = append(n, fmt.Sprintf("the dump has no backward entry: README rule 3 places %s in the %s phase; the simulation ran it in the %s phase", o.root.name, o.ph.Name(), o.root.phys.Name()))
		case o.rule8 != o.weights:
			if o.rule8 {
				n = append(n, fmt.Sprintf("README 6.8 reads %s as weights the previous update wrote (stage optimizer); its non-finite inputs are not weights", o.root.name))
			} else {
				n = append(n, fmt.Sprintf("the non-finite inputs of %s are weights an earlier update wrote, which README 6.8 cannot tell from the dump (stage %s)", o.root.name, o.ph.Stage()))
			}
		}
	}
	if b := w.firstBirth(); b != nil {
		name := b.Name
		if name == "" {
			name = "an unhooked " + b.Key[len("hidden:"):]
		}
		switch {
		case !slices.Contains(s.Steps, b.Step):
			n = append(n, fmt.Sprintf("the simulation's first birth, %s on rank(s) %s (%s), is at step %d, which is not dumped", name, rankList(w.birthRanks(b)), b.Stage, b.Step))
		case b.Step != t.Step || !slices.Equal(w.birthRanks(b), t.Ranks) || (b.Captured && b.Name != t.Op):
			n = append(n, fmt.Sprintf("the simulation's first birth is %s on rank(s) %s at step %d (%s); the dump shows it as above", name, rankList(w.birthRanks(b)), b.Step, b.Stage))
		}
	}
	return n
}

// firstBirth is the simulation's first op that made illegitimate
// non-finite values from clean inputs, nil when none did.
func (w *reading) firstBirth() *Birth {
	var best *Birth
	for _, st := range w.ranks {
		for i := range st.Births {
			b := &st.Births[i]
			if best == nil || b.Step < best.Step || (b.Step == best.Step && (b.Clock < best.Clock || (b.Clock == best.Clock && b.Rank < best.Rank))) {
				best = b
			}
			break
		}
	}
	return best
}

// birthRanks are the ranks whose first birth is the same op at the same
// step as b.
func (w *reading) birthRanks(b *Birth) []int {
	var out []int
	for _, st := range w.ranks {
		for _, x := range st.Births {
			if x.Step == b.Step && x.Key == b.Key {
				out = append(out, st.Rank)
				break
			}
		}
	}
	sort.Ints(out)
	return out
}
