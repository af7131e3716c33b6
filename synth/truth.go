package synth

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Truth is what an analysis of a generated run must find. It is read off
// the simulation, not declared: the origin is the first op whose inputs
// were clean and whose output held illegitimate non-finite values. When
// Anomaly is false every other field keeps its zero value (Ranks empty).
type Truth struct {
	// Name is the spec's name.
	Name    string `json:"name"`
	Anomaly bool   `json:"anomaly"`
	// Step is the step of Op (for an uncaptured origin, the step where the
	// anomaly is first visible in the dump).
	Step int `json:"step"`
	// Ranks are the source ranks, where the anomaly was born.
	Ranks []int `json:"ranks"`
	// Op is the dump.json entry name of the origin op on the source ranks;
	// when the origin is not in the dump (Captured false), the first entry
	// that shows the anomaly on Ranks[0].
	Op string `json:"op"`
	// Stage is forward, backward (including the gradient all_reduces) or
	// optimizer: where the origin op ran.
	Stage string `json:"stage"`
	// Kind is "nan" or "inf": what the origin op's output first held.
	Kind string `json:"kind"`
	// Tie: independent births at the same op at the same time on several
	// ranks. An overflowing collective is one event seen by all its
	// participants, not a tie.
	Tie      bool `json:"tie"`
	Captured bool `json:"captured"`
	// FirstNaN is the first entry with a NaN output on Ranks[0] when Kind
	// is inf; nil when the origin already made NaN.
	FirstNaN *OpAt `json:"first_nan"`
	// Carrier is the first collective that made ranks without the anomaly
	// non-finite; nil if none.
	Carrier *Carrier `json:"carrier"`
	Notes   []string `json:"notes"`
}

// OpAt is one dump entry of one rank.
type OpAt struct {
	Step int    `json:"step"`
	Rank int    `json:"rank"`
	Op   string `json:"op"`
}

// Carrier is the collective that spread the anomaly: FromRanks sent
// non-finite data, ToRanks received it with clean data of their own. Op is
// the entry name on the first source rank.
type Carrier struct {
	Step      int    `json:"step"`
	Op        string `json:"op"`
	FromRanks []int  `json:"from_ranks"`
	ToRanks   []int  `json:"to_ranks"`
}

// truth derives the Truth from the births and carriers the simulation
// recorded.
func (w *world) truth() *Truth {
	s := w.spec
	t := &Truth{Name: s.Name, Ranks: []int{}, Notes: []string{}}
	var all []birthRec
	for _, st := range w.ranks {
		all = append(all, st.births...)
	}
	if len(all) == 0 {
		t.Notes = append(t.Notes, w.cleanNotes()...)
		return t
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].step != all[j].step {
			return all[i].step < all[j].step
		}
		if all[i].clk != all[j].clk {
			return all[i].clk < all[j].clk
		}
		return all[i].rank < all[j].rank
	})
	first := all[0]
	var src *birthRec
	for _, st := range w.ranks {
		for i := range st.births {
			b := &st.births[i]
			if b.step == first.step && b.key == first.key {
				if !slices.Contains(t.Ranks, b.rank) {
					t.Ranks = append(t.Ranks, b.rank)
				}
				if src == nil {
					src = b
				}
				break
			}
		}
	}
	slices.Sort(t.Ranks)
	t.Anomaly = true
	t.Step = first.step
	// Several ranks making it at once is a tie; a collective that makes it is
	// one event seen by all its participants, not a tie.
	t.Tie = len(t.Ranks) > 1 && !strings.HasPrefix(first.name, "Distributed.")
	t.Stage = first.stage
	t.Kind = first.kind
	t.Captured = src.captured
	if src.captured {
		t.Op = src.name
	} else if src.visible != nil {
		t.Op = src.visible.Op
		t.Step = src.visible.Step
	}
	if t.Kind == "inf" {
		t.FirstNaN = src.firstNaN
	}
	var best *carrierEv
	for i := range w.tr.carriers {
		c := &w.tr.carriers[i]
		if c.step < first.step {
			continue
		}
		if best == nil || c.step < best.step || (c.step == best.step && c.clk < best.clk) {
			best = c
		}
	}
	if best != nil {
		t.Carrier = &Carrier{Step: best.step, Op: best.op, FromRanks: best.from, ToRanks: best.to}
	}
	t.Notes = w.notes(t, first, src)
	return t
}

func rankList(rs []int) string {
	p := make([]string, len(rs))
	for i, r := range rs {
		p[i] = fmt.Sprint(r)
	}
	return strings.Join(p, ", ")
}

// cleanNotes describes a run without anomaly.
func (w *world) cleanNotes() []string {
	n := []string{"no op creates a non-finite value from clean inputs"}
	f := w.spec.Fault
	if f != nil && f.Kind == GarbageBuffers {
		n = append(n, "receive buffers on the input side of collectives and Torch.empty outputs hold uninitialised memory (NaN/Inf garbage included); the collectives overwrite them")
	}
	if w.spec.Attention == "eager" {
		if w.spec.Mask == "add" {
			n = append(n, "every layer adds a causal mask built each step by Torch.full(-inf) and Torch.triu: -Infinity in Min is legitimate")
		} else {
			n = append(n, "every layer fills the causal mask with Tensor.masked_fill(-inf): -Infinity in Min is legitimate")
		}
	}
	return n
}

// notes explains the fault and what the simulation made of it.
func (w *world) notes(t *Truth, first birthRec, src *birthRec) []string {
	s := w.spec
	f := s.Fault
	var n []string
	if f != nil {
		switch f.Kind {
		case LogNegative:
			n = append(n, fmt.Sprintf("a corrupted input feature on rank(s) %s at step %d is negative; Torch.log returns NaN", rankList(f.Ranks), f.Step))
		case ExpOverflow:
			n = append(n, fmt.Sprintf("a gate logit on rank(s) %s in layer %d overflows Torch.exp to +Inf; the normalisation Inf/Inf makes the first NaN", rankList(f.Ranks), f.Layer))
		case SqrtZeroBackward:
			n = append(n, fmt.Sprintf("a duplicated token on rank(s) %s makes a row of the layer %d delta exactly zero: sqrt is finite in the forward, its backward is +Inf and Inf*0 in the backward of d*d makes the first NaN", rankList(f.Ranks), f.Layer))
		case CustomAttentionBackward:
			n = append(n, fmt.Sprintf("the custom kernel moe_ext.kernels.fused_attention (register_custom_api) of layer %d writes NaN into the gradient of the last relative-position bucket of rel_bias on rank(s) %s at step %d, when a batch reaches that bucket", f.Layer, rankList(f.Ranks), f.Step))
			n = append(n, fmt.Sprintf("Adam writes NaN into that bucket of rel_bias at step %d; the forward reads it only when a batch holds a sequence of the maximum length (from step %d on), so steps in between show NaN in the rel_bias input of the kernel with a finite output", f.Step, f.Step+2))
		case CastOverflow:
			n = append(n, fmt.Sprintf("an activation outlier on rank(s) %s in the MLP of layer %d is cast to float16 by Tensor.half and becomes +Inf", rankList(f.Ranks), f.Layer))
		case MaskedSoftmaxNaN:
			n = append(n, fmt.Sprintf("a left-padded sample on rank(s) %s leaves a query row fully masked with -inf; the softmax of that row is NaN while its input only holds the legitimate -inf", rankList(f.Ranks)))
		case OptimizerNaN:
			n = append(n, fmt.Sprintf("the embedding joins the optimizer at step %d in a parameter group with eps=0; its gradient is exactly zero for tokens absent from the batch and m/(sqrt(v)+eps) = 0/0 in Tensor.addcdiv_ on every rank", f.Step))
			if !s.Format.OptimizerHooked {
				n = append(n, fmt.Sprintf("the optimizer is fused and not dumped: the NaN is first visible at step %d as the weight input of the first forward op using the embedding", t.Step))
			}
		case Uncaptured:
			n = append(n, fmt.Sprintf("a fully masked row on rank(s) %s goes through an unhooked fused softmax kernel (scaled_masked_softmax) that returns NaN; the first dumped entry already has NaN in its input", rankList(f.Ranks)))
		case AllReduceOverflow:
			n = append(n, "the float16 head-bias gradients are finite on every rank but their spikes sit at the same element; the sum in Distributed.all_reduce overflows float16 on every participant")
		case SendRecvCarrier:
			n = append(n, fmt.Sprintf("Torch.exp overflows in layer %d on rank(s) %s; the NaN activation reaches the next pipeline stage through Distributed.send/recv", f.Layer, rankList(f.Ranks)))
		case AllToAllCarrier:
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
		if st.lossBad >= 0 && (loss < 0 || st.lossBad < loss) {
			loss = st.lossBad
		}
	}
	for _, st := range w.ranks {
		if st.lossBad == loss && loss >= 0 {
			lossRanks = append(lossRanks, st.rank)
		}
	}
	if loss >= 0 {
		n = append(n, fmt.Sprintf("the loss is first non-finite at step %d (rank(s) %s)", loss, rankList(lossRanks)))
	} else {
		n = append(n, "the loss stays finite in every simulated step")
	}
	if !slices.Contains(s.Steps, first.step) {
		n = append(n, fmt.Sprintf("the origin step %d is not dumped", first.step))
	}
	return n
}
