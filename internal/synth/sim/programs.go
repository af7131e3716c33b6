package sim

import (
	"math"
	"slices"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// maskInfo is the causal mask of eager attention.
type maskInfo struct {
	add  *tensor // additive -inf mask
	bias *tensor // additive -1e4 mask
	bool *tensor // boolean mask for masked_fill / the fused kernel
}

// pass is one micro-batch's forward, kept for its backward: its autograd
// tape, its output (the loss on the last pipeline stage, else the
// activation sent on) and the activation it received.
type pass struct {
	mb            int
	tape          []*node
	loss, h, from *tensor
}

// forwardPass runs the forward of micro-batch r.mb on r.tape.
func (r *rk) forwardPass() *pass {
	d := r.w.dims
	mp := r.st.model
	l := r.st.lay
	act := []int{d.B, d.S, d.H}
	ps := &pass{mb: r.mb}
	var h *tensor
	if !mp.first {
		r.setPhase(truth.PhaseForward, &ctxPipeFwd, false)
		ps.from = r.recv(sRecvBuf, sRecv, l.prev, act, d.dt, nil)
		ps.from.RG = true
		h = ps.from
	}
	r.setPhase(truth.PhaseForward, &ctxModel, true)
	var tokens *tensor
	if mp.first {
		tokens = ints([]int{d.B, d.S}, int64(r.g.r.IntN(7)), int64(d.V-1-r.g.r.IntN(3)))
		h = r.embed(tokens)
	}
	mk := r.buildMask(tokens)
	for _, lm := range mp.layers {
		h = r.layer(lm, h, mk)
	}
	if mp.last {
		r.enter(mp.lnf, sLnfCall, h)
		h = r.layerNorm(sLayerNormF, h, mp.lnf.params[0].t, mp.lnf.params[1].t)
		r.exit(h)
		logits := r.callLinear(mp.head, sHeadCall, h)
		r.setPhase(truth.PhaseForward, &ctxTrain, false)
		flat := r.view(sLoss, "Tensor", "view", logits, []int{d.B * d.S, d.V}, mw.Int(-1), mw.Int(d.V))
		labels := ints([]int{d.B * d.S}, int64(r.g.r.IntN(5)), int64(d.V-1-r.g.r.IntN(5)))
		ps.loss = r.crossEntropy(sLoss, flat, labels)
		if ps.loss.tainted() && r.st.lossBad < 0 {
			r.st.lossBad = r.step
		}
		if r.w.spec.LossScale {
			// (loss * scale).backward()
			ps.h = r.scale(sLossScale, ps.loss, r.st.scale)
		} else {
			ps.h = ps.loss
		}
	} else {
		r.setPhase(truth.PhaseForward, &ctxPipeSend, false)
		r.send(sSend, h, l.next)
		ps.h = h
	}
	ps.tape = r.tape
	return ps
}

// backwardPass runs the backward of a pass and returns its gradients.
func (r *rk) backwardPass(ps *pass) *gradSet {
	d := r.w.dims
	mp := r.st.model
	l := r.st.lay
	r.mb, r.tape = ps.mb, ps.tape
	r.setPhase(truth.PhaseBackward, &ctxBwdFn, false)
	var gs *gradSet
	if mp.last {
		gs = r.backward([]*tensor{ps.h}, []*tensor{scalar(ps.h.DT, 1)})
	} else {
		r.setPhase(truth.PhaseBackward, &ctxPipeRecv, false)
		gout := r.recv(sRecvGBuf, sRecvG, l.next, ps.h.Shape, d.dt, ps.h)
		r.setPhase(truth.PhaseBackward, &ctxBwdFn, false)
		gs = r.backward([]*tensor{ps.h}, []*tensor{gout})
	}
	if ps.from != nil {
		gin := gs.t[ps.from]
		if gin == nil {
			gin = zeros(ps.from.Shape, ps.from.DT)
		}
		r.setPhase(truth.PhaseBackward, &ctxPipeBack, false)
		r.send(sSendG, gin, l.prev)
	}
	// the pass's graph is freed once its backward ran
	clear(ps.tape)
	r.tape = ps.tape[:0]
	return gs
}

// linkView makes b an autograd alias of a where no hooked op runs (an
// implicit dtype promotion).
func (r *rk) linkView(a, b *tensor) {
	b.RG = a.RG
	r.push("", visHidden, []*tensor{a}, []*tensor{b}, func(g []*tensor) []*tensor {
		gx := g[0].withShape(a.Shape...)
		return []*tensor{gx}
	})
}

// faultOn reports whether fault k fires on this rank in this micro-batch
// of this step (a fault without ranks fires everywhere).
func (r *rk) faultOn(k spec.FaultKind) bool {
	f := r.w.spec.Fault
	if f == nil || f.Kind != k || !f.At(r.step) || f.MicroBatch != r.mb {
		return false
	}
	return len(f.Ranks) == 0 || slices.Contains(f.Ranks, r.rank)
}

func (r *rk) faultLayer(k spec.FaultKind, layer int) bool {
	return r.faultOn(k) && r.w.spec.Fault.Layer == layer
}

func (r *rk) faultValue(def float64) float64 {
	if v := r.w.spec.Fault.Value; v != 0 {
		return v
	}
	return def
}

// embed is the embedding stage (and the optional log feature).
func (r *rk) embed(tokens *tensor) *tensor {
	mp := r.st.model
	s := r.w.spec
	d := r.w.dims
	w := mp.embed.params[0]
	r.enter(mp.embed, sEmbedCall, tokens)
	var h *tensor
	if s.TP > 1 {
		h = r.embedding(sVocabEmb, tokens, w.t)
		h.Zero = true
		h = r.tpReduce(sVocabRed, h)
		// each token's row comes from the one shard that owns it: the
		// zeros of the shards do not survive the sum
		h.Zero, h.ZeroRow = false, false
	} else {
		h = r.embedding(sEmbeddingF, tokens, w.t)
	}
	r.exit(h)
	if r.w.has(spec.HalfTraps) {
		h = r.timeFeature(h)
	}
	if mp.feat != nil {
		feats := r.g.positive([]int{d.B, d.S, 8}, mw.DTFloat32, 0.5+0.01*r.g.u(), 1.25, 2-0.01*r.g.u())
		if r.faultOn(spec.LogNegative) {
			feats.Min = r.faultValue(-0.75)
			if feats.Min > 0 && feats.Min <= 1e-30 {
				feats.Min = 0 // a feature of exactly zero
			}
			if feats.Min == 0 {
				feats.Zero = true
			}
		}
		var proj *tensor
		if mp.scale != nil {
			proj = r.callLinear(mp.feat, sFeatCall, r.scaledFeatures(feats, mp.scale))
		} else {
			lf := r.log(sFeatLog, feats)
			proj = r.callLinear(mp.feat, sFeatCall, r.castTo(lf, d.dt))
		}
		h = r.add(sFeatCall, h, proj, false)
	}
	return h
}

// castTo changes the dtype of a value produced in float32 (the features are
// float32 whatever the model dtype; the projection casts them implicitly).
func (r *rk) castTo(t *tensor, dt mw.DType) *tensor {
	if t.DT == dt {
		return t
	}
	c := t.clone()
	c.DT = dt
	r.linkView(t, c)
	return c
}

// buildMask creates the step's causal mask.
func (r *rk) buildMask(tokens *tensor) *maskInfo {
	s := r.w.spec
	d := r.w.dims
	if s.Attention != "eager" {
		return nil
	}
	mk := &maskInfo{}
	if s.Mask == "bias" {
		mk.bias = r.maskBias(d.S, d.dt)
		return mk
	}
	if s.Mask == "add" {
		f := r.full(sMaskFull, d.S, d.dt)
		mk.add = r.triu(sMaskTriu, f)
		return mk
	}
	ones := r.onesBool(sMaskBool, d.S)
	mk.bool = r.triu(sMaskBool, ones)
	if (r.w.has(spec.MaskedSoftmaxNaN) || r.w.has(spec.Uncaptured)) && tokens != nil {
		pad := r.padMask(sMaskPad, tokens, r.faultOn(spec.MaskedSoftmaxNaN) || r.faultOn(spec.Uncaptured))
		mk.bool = r.orMask(sMaskPad, mk.bool, pad, d.B)
	}
	return mk
}

// callLinear calls a Linear-like module at call site s.
func (r *rk) callLinear(m *module, s *mw.Site, x *tensor) *tensor {
	r.enter(m, s, x)
	fs := sLinearF
	switch m.class {
	case "ColumnParallelLinear":
		fs = sColLinear
	case "RowParallelLinear":
		fs = sRowLinear
	}
	var b *tensor
	if len(m.params) > 1 {
		b = m.params[1].t
	}
	y := r.linear(fs, x, m.params[0].t, b)
	if m.class == "RowParallelLinear" {
		y = r.tpReduce(sRowReduce, y)
	}
	r.exit(y)
	return y
}

// tpReduce is the forward all_reduce of a row-parallel output; its
// backward is the identity.
func (r *rk) tpReduce(s *mw.Site, x *tensor) *tensor {
	y := r.allReduce(s, x, r.st.lay.tp)
	if y == x {
		return x
	}
	r.push("", visHidden, []*tensor{x}, []*tensor{y}, func(g []*tensor) []*tensor {
		return []*tensor{g[0]}
	})
	return y
}

// tpCopy is Megatron's copy to the tensor-parallel region: identity in the
// forward, all_reduce of the gradient in the backward.
func (r *rk) tpCopy(x *tensor) *tensor {
	tp := r.st.lay.tp
	if tp.size() < 2 {
		return x
	}
	y := x.clone()
	y.RG = x.RG
	n := &node{vis: visHidden, ins: []*tensor{x}, outs: []*tensor{y}, comm: true}
	n.bwd = func(g []*tensor) []*tensor {
		return []*tensor{r.allReduce(sCopyTPBwd, g[0], tp)}
	}
	if r.ph == truth.PhaseForward && x.RG {
		y.node = n
		r.tape = append(r.tape, n)
	}
	return y
}

// layer is one transformer block.
func (r *rk) layer(lm *layerMods, h *tensor, mk *maskInfo) *tensor {
	s := r.w.spec
	var maskArg arg
	if mk != nil {
		if mk.add != nil {
			maskArg = mk.add
		} else if mk.bias != nil {
			maskArg = mk.bias
		} else {
			maskArg = mk.bool
		}
	}
	r.enter(lm.block, sLayerCall, h, maskArg)
	if lm.delta != nil {
		h = r.deltaFeature(lm, h)
	}
	r.enter(lm.ln1, sLn1Call, h)
	x := r.layerNorm(sLayerNormF, h, lm.ln1.params[0].t, lm.ln1.params[1].t)
	r.exit(x)
	a := r.attention(lm, x, mk, maskArg)
	h = r.add(sLn1Call, h, a, false)
	ln2Site := sLn2Call
	if r.w.has(spec.AllToAllCarrier) && s.Fault.Layer == lm.idx {
		ln2Site = sLn2Mask
	}
	r.enter(lm.ln2, ln2Site, h)
	x = r.layerNorm(sLayerNormF, h, lm.ln2.params[0].t, lm.ln2.params[1].t)
	r.exit(x)
	padRows := 0
	if ln2Site == sLn2Mask {
		tm := constant([]int{r.w.dims.B, r.w.dims.S, 1}, x.DT, 1)
		if r.faultLayer(spec.AllToAllCarrier, lm.idx) {
			padRows = r.padTokens()
			tm.Min, tm.Zero, tm.ZeroRow = 0, true, true
			tm.Mean = 1 - float64(padRows)/float64(r.w.dims.B*r.w.dims.S)
			tm.Norm = math.Sqrt(float64(r.w.dims.B*r.w.dims.S - padRows))
		}
		x = r.mul(sLn2Mask, x, tm)
	}
	var y *tensor
	if lm.moe != nil {
		y = r.moe(lm, x, padRows)
	} else {
		y = r.mlp(lm, x)
	}
	if lm.gate != nil {
		y = r.gateFeature(lm, x, y)
	}
	if lm.adapter != nil {
		y = r.adapterFeature(lm, x, y)
	}
	h = r.add(sResid2, h, y, false)
	r.exit(h)
	return h
}

// deltaFeature adds the projected length of the step between consecutive
// positions (sqrt of a sum of squares).
func (r *rk) deltaFeature(lm *layerMods, h *tensor) *tensor {
	d := r.w.dims
	sh := []int{d.B, d.S - 1, d.H}
	a := r.view(sDeltaSub, "Tensor", "__getitem__", h, sh)
	b := r.view(sDeltaSub, "Tensor", "__getitem__", h, sh)
	if r.faultLayer(spec.SqrtZeroBackward, lm.idx) {
		r.inject = func(o *tensor) {
			o.ZeroRow, o.Zero = true, true
			o.Min = math.Min(o.Min, 0)
			o.Max = math.Max(o.Max, 0)
		}
	}
	dd := r.add(sDeltaSub, a, b, true)
	sq := r.mul(sDeltaSq, dd, dd)
	sum := r.reduceLast(sDeltaSq, "sum", sq)
	st := r.sqrt(sDeltaSq, "Torch", sum)
	pd := r.pad(sDeltaPad, st, 1)
	pr := r.callLinear(lm.delta, sDeltaPad, pd)
	return r.add(sDeltaPad, h, pr, false)
}

// gateFeature is the hand-written softmax gating of the MLP output.
func (r *rk) gateFeature(lm *layerMods, x, y *tensor) *tensor {
	if r.faultLayer(spec.ExpOverflow, lm.idx) || r.faultLayer(spec.SendRecvCarrier, lm.idx) {
		v := r.faultValue(120)
		r.inject = func(o *tensor) { o.Max = math.Max(o.Max, v) }
	}
	gl := r.callLinear(lm.gate, sGateExp, x)
	e := r.exp(sGateExp, gl)
	sum := r.reduceLast(sGateNorm, "sum", e)
	w := r.truediv(sGateNorm, e, sum)
	w1 := r.view(sGateMul, "Tensor", "__getitem__", w, shapeWithLast(w.Shape, 1))
	return r.mul(sGateMul, y, w1)
}

// attention is the attention block of a layer.
func (r *rk) attention(lm *layerMods, x *tensor, mk *maskInfo, maskArg arg) *tensor {
	s := r.w.spec
	d := r.w.dims
	nh := d.NH / s.TP
	hd := d.HD
	if mk != nil {
		r.enter(lm.attn, sLn1Call, x, maskArg)
	} else {
		r.enter(lm.attn, sLn1Call, x)
	}
	qkv := r.callLinear(lm.qkv, sQkvCall, r.tpCopy(x))
	q, k, v := r.chunk3(sQkvCall, qkv)
	scale := 1 / math.Sqrt(float64(hd))
	var y *tensor
	if s.Attention == "custom" {
		y = r.customAttention(sCustomAtt, q, k, v, lm.relBias.t, scale, r.usedBuckets())
	} else if s.Attention == "function" {
		y = r.fnAttention(lm, q, k, v, scale)
	} else {
		heads := func(t *tensor) *tensor {
			t = r.view(sHeads, "Tensor", "view", t, []int{d.B, d.S, nh, hd}, mw.Int(d.B), mw.Int(d.S), mw.Int(nh), mw.Int(hd))
			return r.view(sHeads, "Tensor", "transpose", t, []int{d.B, nh, d.S, hd}, mw.Int(1), mw.Int(2))
		}
		q4, k4, v4 := heads(q), heads(k), heads(v)
		kt := r.view(sScores, "Tensor", "transpose", k4, []int{d.B, nh, hd, d.S}, mw.Int(-2), mw.Int(-1))
		sc := r.matmul(sScores, q4, kt, []int{d.B, nh, d.S, d.S})
		var p *tensor
		if r.w.has(spec.Uncaptured) {
			p = r.fusedSoftmax(sc, mk.bool, scale)
		} else {
			sc = r.scale(sScores, sc, scale)
			if mk.bias != nil {
				sc = r.addMaskBias(sMaskAdd, sc, mk.bias)
			} else if mk.add != nil {
				sc = r.add(sMaskAdd, sc, mk.add, false)
			} else {
				sc = r.maskedFill(sMaskFill, sc, mk.bool)
			}
			p = r.softmax(sSoftmax, "Functional", sc, []mw.KV{{Key: "dim", Value: mw.Int(-1)}}, sc.DT)
		}
		y4 := r.matmul(sAttnV, p, v4, []int{d.B, nh, d.S, hd})
		y4 = r.view(sMerge, "Tensor", "transpose", y4, []int{d.B, d.S, nh, hd}, mw.Int(1), mw.Int(2))
		y = r.view(sMerge, "Tensor", "reshape", y4, []int{d.B, d.S, nh * hd}, mw.Int(d.B), mw.Int(d.S), mw.Int(-1))
	}
	out := r.callLinear(lm.out, sOutCall, y)
	r.exit(out)
	return out
}

// fusedSoftmax is an unhooked scale + mask + softmax kernel.
func (r *rk) fusedSoftmax(x, mask *tensor, scale float64) *tensor {
	n := float64(lastDim(x))
	o := &tensor{Tensor: mw.Tensor{Shape: x.Shape, DT: x.DT, Mean: 1 / n, Max: 1, Min: 0}, Zero: true}
	o.Std = 0.25
	o.Norm = math.Sqrt(x.Numel()/n) * math.Min(1, 1.6/math.Sqrt(n)+0.1)
	o.NaN = x.NaN || x.PInf || x.NInf
	if mask.FullRow {
		o.NaN, o.born = true, true
	}
	settle(o, x)
	r.push("", visHidden, []*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
		gx := r.grad(x.Shape, x.DT, 0, nz(g[0].rms()*o.rms()))
		gx.NaN = g[0].nonFinite() || o.NaN
		return []*tensor{settle(gx, g[0], o)}
	})
	o.RG = x.RG
	r.hiddenEvent("scaled_masked_softmax", []*tensor{x}, []*tensor{o})
	return o
}

// hookGrad applies the faults that live in a parameter gradient.
func (r *rk) hookGrad(p *param, g *tensor) {
	f := r.w.spec.Fault
	if f == nil {
		return
	}
	switch {
	case r.faultOn(spec.CustomAttentionBackward):
		for _, lm := range r.st.model.layers {
			if lm.idx == f.Layer && lm.relBias == p {
				// the kernel's bias-gradient reduction for the last bucket
				g.NaN, g.Rows = true, 1<<(r.w.dims.buckets-1)
				g.Legit = false
			}
		}
	case r.faultOn(spec.AllReduceOverflow):
		if h := r.st.model.head; h != nil && len(h.params) > 1 && h.params[1] == p {
			g.Max = math.Max(g.Max, r.faultValue(21000))
			g.Spike = true
		}
	case p.sharp != 0:
		sharpGrad(p, g)
	case r.faultOn(spec.ScaledGradOverflow):
		for _, lm := range r.st.model.layers {
			if lm.idx == f.Layer && lm.fc1 != nil && lm.fc1.params[0] == p {
				// an outlier record: the scaled gradient leaves float16's range
				v := r.faultValue(2e5)
				if f.Growth > 0 {
					// a shard sorted by the outlier's magnitude
					v *= math.Pow(f.Growth, float64(r.step-f.Step)) * r.st.scale / initialLossScale
				}
				g.Max, g.Min = math.Max(g.Max, v), math.Min(g.Min, -v)
			}
		}
	}
}

// usedBuckets is the set of relative-position buckets this step's batch
// reaches: the last ones only with a sequence of the maximum length.
func (r *rk) usedBuckets() uint64 {
	nb := r.w.dims.buckets
	all := uint64(1)<<nb - 1
	if r.longSequence() {
		return all
	}
	return all >> 8
}

// longSequence reports a packed sequence of the maximum length in the batch:
// on the fault ranks at the fault step and, from two steps later on, on
// every rank.
func (r *rk) longSequence() bool {
	f := r.w.spec.Fault
	if f == nil || f.Kind != spec.CustomAttentionBackward {
		return false
	}
	return r.faultOn(spec.CustomAttentionBackward) || r.step >= f.Step+2
}

// mlp is the dense MLP of a layer.
func (r *rk) mlp(lm *layerMods, x *tensor) *tensor {
	d := r.w.dims
	r.enter(lm.mlp, sMlpCall, x)
	if r.faultLayer(spec.CastOverflow, lm.idx) {
		v := r.faultValue(1e5)
		r.inject = func(o *tensor) { o.Max = math.Max(o.Max, v) }
	}
	h := r.callLinear(lm.fc1, sFc1Call, r.tpCopy(x))
	r.enter(lm.act, sFc1Call, h)
	g := r.gelu(sGeluF, h)
	r.exit(g)
	var o *tensor
	if lm.fp16MLP {
		g = r.cast(sHalf, "half", g, mw.DTFloat16)
		o = r.callLinear(lm.fc2, sFc2F, g)
		o = r.cast(sFc2F, "float", o, d.dt)
	} else {
		o = r.callLinear(lm.fc2, sFc2Call, g)
	}
	r.exit(o)
	return o
}

// adapterFeature adds the domain adapter: y + adapter(x) * domain_mask,
// where the mask selects the tokens of one data domain. When the domain
// is paused (ReducerZeroCount) no token uses the adapter and its gradient
// is exactly zero.
func (r *rk) adapterFeature(lm *layerMods, x, y *tensor) *tensor {
	d := r.w.dims
	t := d.B * d.S
	n := 1 + r.g.r.IntN(max(1, t/4))
	if f := r.w.spec.Fault; f != nil && f.Kind == spec.ReducerZeroCount && f.At(r.step) {
		n = 0
	}
	r.countTokens(lm.adapter, n)
	a := r.callLinear(lm.adapter, sAdapterCall, x)
	dm := zeros([]int{d.B, d.S, 1}, a.DT)
	if n > 0 {
		dm = &tensor{Tensor: mw.Tensor{Shape: []int{d.B, d.S, 1}, DT: a.DT, Max: 1, Mean: float64(n) / float64(t), Norm: math.Sqrt(float64(n))}, Zero: n < t}
	}
	a = r.mul(sAdapterCall, a, dm)
	return r.add(sAdapterCall, y, a, false)
}

// padTokens is the number of padding tokens in a padded batch.
func (r *rk) padTokens() int {
	return max(1, r.w.dims.B*r.w.dims.S/8)
}
