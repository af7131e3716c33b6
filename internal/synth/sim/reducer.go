package sim

import (
	"math"
	"strings"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// The bucketed reducer (Spec.GradSync "reducer"), as hand-written data
// parallel code does it: the parameters are split into buckets in reverse
// order (the last layer first, as the backward makes them); for each
// bucket the gradients are concatenated, the concatenation and the number
// of tokens that reached the bucket on this rank are all-reduced, and the
// bucket is divided by the count: the mean gradient per token.

// bucket is a run of parameters reduced together.
type bucket struct {
	params []*param
	group  *group
	module *module // the module whose tokens count; nil: every token
}

// bucketKey decides where buckets end: at a change of layer, expert,
// adapter or group.
func bucketKey(p *param) string {
	n := p.name
	if i := strings.Index(n, ".experts."); i >= 0 {
		rest := n[i+len(".experts."):]
		if j := strings.IndexByte(rest, '.'); j >= 0 {
			rest = rest[:j]
		}
		return n[:i] + ".experts." + rest
	}
	if i := strings.Index(n, ".adapter."); i >= 0 {
		return n[:i] + ".adapter"
	}
	if strings.HasPrefix(n, "layers.") {
		parts := strings.SplitN(n, ".", 3)
		return parts[0] + "." + parts[1]
	}
	switch strings.SplitN(n, ".", 2)[0] {
	case "head", "ln_f":
		return "out"
	}
	return "in"
}

// buckets splits the trainable parameters with a reduction group.
func (r *rk) buckets() []*bucket {
	var out []*bucket
	var cur *bucket
	key := ""
	ps := r.st.model.params
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p.from > r.step || p.sync == nil {
			continue
		}
		k := bucketKey(p)
		if cur == nil || k != key || p.sync != cur.group {
			cur = &bucket{group: p.sync}
			if r.tokenModule(p.module) {
				cur.module = p.module
			}
			out = append(out, cur)
			key = k
		}
		cur.params = append(cur.params, p)
	}
	return out
}

// tokenModule reports a module that counts its own tokens (an expert, a
// domain adapter); the others see every token.
func (r *rk) tokenModule(m *module) bool {
	_, ok := r.tokens[m]
	return ok
}

// countTokens records that n tokens reached module m.
func (r *rk) countTokens(m *module, n int) { r.tokens[m] += n }

// bucketReduce runs the reducer over every bucket.
func (r *rk) bucketReduce(gs *gradSet) {
	r.setPhase(truth.PhaseSync, &ctxReducer, false)
	d := r.w.dims
	all := d.B * d.S * r.w.spec.MicroBatches
	for _, b := range r.buckets() {
		grads := make([]*tensor, len(b.params))
		for i, p := range b.params {
			g := gs.p[p]
			if g == nil {
				g = zeros(p.t.Shape, p.t.DT)
			}
			grads[i] = g
		}
		flat := flatCat(grads)
		r.op(&opSpec{prefix: "Torch", api: "cat", site: sBucketCat, vis: visFiltered, in: []arg{mw.List(tensorArgs(grads))}, out: args(flat)})
		n := all
		if b.module != nil {
			n = r.tokens[b.module]
		}
		mask := &tensor{Tensor: mw.Tensor{Shape: []int{all}, DT: mw.DTFloat32, Mean: float64(n) / float64(all), Norm: math.Sqrt(float64(n))}}
		if n > 0 {
			mask.Max = 1
		}
		if n >= all {
			mask.Min = 1
		}
		mask.Zero = n < all
		cnt := scalar(mw.DTFloat32, float64(n))
		r.op(&opSpec{prefix: "Tensor", api: "sum", site: sBucketCount, in: args(mask), out: args(cnt)})
		sum, pieces := r.allReducePieces(sBucketAR, flat, grads, b.group)
		cnt = r.allReduce(sBucketCntAR, cnt, b.group)
		r.truediv(sBucketDiv, sum, cnt)
		for i, p := range b.params {
			q := r.quotient(pieces[i], cnt)
			q.RG = false
			gs.p[p] = q
		}
	}
}

// flatCat is torch.cat of the flattened tensors.
func flatCat(ts []*tensor) *tensor {
	o := &tensor{Tensor: mw.Tensor{DT: ts[0].DT}}
	n := 0.0
	for i, t := range ts {
		k := t.Numel()
		if i == 0 {
			o.Max, o.Min = t.Max, t.Min
		} else {
			o.Max, o.Min = math.Max(o.Max, t.Max), math.Min(o.Min, t.Min)
		}
		o.Mean = (o.Mean*n + t.Mean*k) / math.Max(n+k, 1)
		o.Norm = math.Hypot(o.Norm, t.Norm)
		o.Std = math.Max(o.Std, t.Std)
		o.NaN, o.PInf, o.NInf = o.NaN || t.NaN, o.PInf || t.PInf, o.NInf || t.NInf
		o.Zero = o.Zero || t.Zero
		o.Spike = o.Spike || t.Spike
		n += k
	}
	o.Shape = []int{int(n)}
	o.ZeroRow = o.Zero
	return o
}

// allReducePieces is Distributed.all_reduce of a concatenation: the entry
// is the concatenation's, and each piece is summed over the ranks on its
// own (a NaN in one parameter's gradient stays in that parameter).
func (r *rk) allReducePieces(s *mw.Site, flat *tensor, pieces []*tensor, g *group) (*tensor, []*tensor) {
	kw := r.groupKw(g)
	in := collIn{rank: r.rank, clk: r.st.clk, contaminated: r.st.contaminated, t: flat, pieces: pieces}
	key, seed := r.nextColl('r', g)
	res := r.w.comm.meet(key, g.size(), g.index(r.rank), in, func(ins []collIn) []collOut {
		rg := newGen(uint64(r.w.spec.Seed), seed)
		var clk int64
		ts := make([]*tensor, len(ins))
		for i, x := range ins {
			ts[i] = x.t
			clk = max(clk, x.clk)
		}
		sum := sumTensors(ts, rg)
		sums := make([]*tensor, len(pieces))
		for j := range sums {
			ps := make([]*tensor, len(ins))
			for i, x := range ins {
				ps[i] = x.pieces[j]
			}
			sums[j] = sumTensors(ps, rg)
		}
		out := make([]collOut, len(ins))
		r.w.judge(ins, func(int) *tensor { return sum }, out)
		for i := range out {
			c := sum.clone()
			c.RG = false
			out[i].clk, out[i].t, out[i].pieces = clk+1, c, sums
		}
		return out
	})
	r.st.clk = res.clk - 1
	if res.tainted {
		r.st.contaminated = true
	}
	o := res.t
	r.op(&opSpec{prefix: "Distributed", api: "all_reduce", site: s, in: args(flat), kw: kw, out: append([]arg{o}, kwValues(kw)...),
		inT: []*tensor{flat}, outT: []*tensor{o}, collective: true, birth: res.birth,
		coll: r.rec.groupSide(g, "all_reduce", []*tensor{flat}, []*tensor{o})})
	out := make([]*tensor, len(res.pieces))
	for j, p := range res.pieces {
		out[j] = p.clone()
	}
	return o, out
}
