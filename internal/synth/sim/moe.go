package sim

import (
	"math"
	"slices"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// routing returns how many tokens rank routes to each global expert in a
// layer in micro-batch mb of a step, and how many of those are zeroed
// padding rows. Every rank can compute every other rank's routing, so the
// split sizes agree.
func (w *world) routing(step, mb, layer, rank int) (counts, zeroRows []int) {
	d := w.dims
	T, K, E := d.B*d.S, d.K, d.E
	f := w.spec.Fault
	carrier := f != nil && f.Kind == spec.AllToAllCarrier && f.At(step) && f.MicroBatch == mb && f.Layer == layer
	keys := []uint64{uint64(w.spec.Seed), uint64(step), uint64(layer)}
	if mb > 0 {
		keys = append(keys, uint64(mb)<<32)
	}
	cg := newGen(append(keys, 0xc01d)...)
	cold := make([]bool, E)
	ncold := 0
	for e := 0; e < E; e++ {
		if cg.u() < 0.12 && !(carrier && e < K) && E-ncold > K+1 && w.spec.GradSync != "reducer" {
			cold[e] = true
			ncold++
		}
	}
	counts = make([]int, E)
	zeroRows = make([]int, E)
	pad := 0
	if carrier && slices.Contains(f.Ranks, rank) {
		pad = max(1, T/8)
		for e := 0; e < K; e++ {
			counts[e] += pad
			zeroRows[e] = pad
		}
	}
	rest := (T - pad) * K
	g := newGen(append(keys, uint64(rank), 0x707)...)
	wts := make([]float64, E)
	sum := 0.0
	for e := range wts {
		if !cold[e] {
			wts[e] = math.Exp(0.5 * g.n())
			sum += wts[e]
		}
	}
	given := 0
	frac := make([]float64, E)
	for e := range wts {
		x := float64(rest) * wts[e] / sum
		n := int(x)
		counts[e] += n
		given += n
		frac[e] = x - float64(n)
	}
	for given < rest {
		best := -1
		for e := range frac {
			if !cold[e] && (best < 0 || frac[e] > frac[best]) {
				best = e
			}
		}
		counts[best]++
		frac[best] = -1
		given++
	}
	if w.spec.GradSync == "reducer" {
		// a load-balancing loss feeds every expert from every rank
		for e := range counts {
			if counts[e] > 0 {
				continue
			}
			top := 0
			for x := range counts {
				if counts[x] > counts[top] {
					top = x
				}
			}
			if counts[top] > 1 {
				counts[top]--
				counts[e]++
			}
		}
	}
	return counts, zeroRows
}

// moe is the mixture-of-experts block of a layer.
func (r *rk) moe(lm *layerMods, x *tensor, pad int) *tensor {
	d := r.w.dims
	ep := r.st.lay.ep
	P, L := ep.size(), d.localE
	T, K, H := d.B*d.S, d.K, d.H
	r.enter(lm.moe, sMoeCall, x)
	xf := r.view(sRouterCall, "Tensor", "view", x, []int{T, H}, mw.Int(-1), mw.Int(H))
	r.enter(lm.router, sRouterCall, xf)
	logits := r.linear(sRouterLin, xf, lm.router.params[0].t, nil)
	probs := r.softmax(sRouterSm, "Torch", logits, []mw.KV{{Key: "dim", Value: mw.Int(-1)}, {Key: "dtype", Value: mw.DTypeName("torch.float32")}}, mw.DTFloat32)
	wts, idx := r.topk(sRouterTopk, probs, K, d.E)
	r.exit(wts, idx)

	// routing of every member of the EP group
	routes := make([][]int, P)
	zrows := make([][]int, P)
	for i, peer := range ep.ranks {
		routes[i], zrows[i] = r.w.routing(r.step, r.mb, lm.idx, peer)
	}
	me := ep.index(r.rank)
	mine := routes[me]
	cnt := r.bincount(sBincount, idx, mine)

	// exchange the counts
	cbuf := r.emptyBuf(sCntBuf, "empty_like", []int{d.E}, mw.DTInt64, cnt)
	cp := make([]*tensor, P)
	cc := make([]int, P)
	for j := 0; j < P; j++ {
		sl := mine[j*L : (j+1)*L]
		cp[j] = ints([]int{L}, int64(slices.Min(sl)), int64(slices.Max(sl)))
		cc[j] = L
	}
	r.allToAll(sCntA2A, cbuf, cnt, cp, cc, false, ep, nil)

	order := ints([]int{T * K}, 0, int64(T*K-1))
	r.op(&opSpec{prefix: "Torch", api: "argsort", site: sArgsort, vis: visFiltered, in: []arg{idx.withShape(T * K)},
		kw: []mw.KV{{Key: "stable", Value: mw.Bool(true)}}, out: args(order)})
	tokIdx := ints([]int{T * K}, 0, int64(T-1))
	perm := r.indexSelect(sPermute, xf, tokIdx, T*K)

	// dispatch
	send := make([]int, P)
	recvFrom := make([]int, P)
	pieces := make([]*tensor, P)
	for j := 0; j < P; j++ {
		zero := false
		for e := j * L; e < (j+1)*L; e++ {
			send[j] += mine[e]
			zero = zero || zrows[me][e] > 0
		}
		p := rowPiece(perm, send[j])
		p.ZeroRow, p.Zero = zero, zero
		pieces[j] = p
	}
	rows := make([]int, L)
	for i := 0; i < P; i++ {
		for j := 0; j < L; j++ {
			c := routes[i][me*L+j]
			recvFrom[i] += c
			rows[j] += c
		}
	}
	R := 0
	for _, c := range recvFrom {
		R += c
	}
	var disp a2aResult
	r.rec.withFramesApply(sDispatch, func() {
		buf := r.emptyBuf(sA2AFwdBuf, "empty", []int{R, H}, x.DT, nil)
		disp = r.allToAll(sA2AFwd, buf, perm, pieces, send, true, ep, []int{H})
	})
	recv := disp.recv
	r.linkA2A(perm, recv, send, recvFrom, ep)

	// experts
	flags := make([]*tensor, L)
	for j := 0; j < L; j++ {
		f := &tensor{}
		for i := 0; i < P; i++ {
			if routes[i][me*L+j] == 0 || disp.pieces[i] == nil {
				continue
			}
			p := disp.pieces[i]
			f.NaN, f.PInf, f.NInf = f.NaN || p.NaN, f.PInf || p.PInf, f.NInf || p.NInf
			f.ZeroRow = f.ZeroRow || zrows[i][me*L+j] > 0
		}
		flags[j] = f
	}
	chunks := r.splitRows(sSplit, recv, rows, flags)
	outs := make([]*tensor, L)
	for j := 0; j < L; j++ {
		r.countTokens(lm.experts[j].fc1, rows[j])
		r.countTokens(lm.experts[j].fc2, rows[j])
		if rows[j] == 0 {
			continue
		}
		outs[j] = r.expert(lm.experts[j], chunks[j])
	}
	eo := r.catRows(sCat, outs, R, x.DT, H)

	// what goes back to each source
	back := make([]*tensor, P)
	for i := 0; i < P; i++ {
		p := rowPiece(eo, recvFrom[i])
		p.NaN, p.PInf, p.NInf, p.Legit = false, false, false, false
		for j := 0; j < L; j++ {
			if routes[i][me*L+j] == 0 || outs[j] == nil {
				continue
			}
			in := disp.pieces[i]
			bad := (in != nil && in.nonFinite()) || anyTainted(paramTensors(lm.experts[j])...)
			if r.w.has(spec.AllToAllCarrier) && zrows[i][me*L+j] > 0 {
				bad = true
			}
			if bad {
				p.NaN = true
			}
		}
		back[i] = p
	}
	var comb a2aResult
	r.rec.withFramesApply(sCombine, func() {
		buf := r.emptyBuf(sA2AFwdBuf, "empty", []int{T * K, H}, x.DT, nil)
		comb = r.allToAll(sA2AFwd, buf, eo, back, recvFrom, true, ep, []int{H})
	})
	got := comb.recv
	r.linkA2A(eo, got, recvFrom, send, ep)

	wcol := r.view(sWeigh, "Tensor", "unsqueeze", wts, []int{T * K, 1}, mw.Int(-1))
	bw := r.mul(sWeigh, got, wcol)
	y0 := zeros([]int{T, H}, x.DT)
	r.op(&opSpec{prefix: "Torch", api: "zeros_like", site: sZerosLike, vis: visFiltered, in: args(xf), out: args(y0)})
	y := r.indexAdd(sIndexAdd, y0, tokIdx, bw)
	yv := r.view(sMoeCall, "Tensor", "view", y, []int{d.B, d.S, H}, mw.Int(d.B), mw.Int(d.S), mw.Int(H))
	r.exit(yv)
	return yv
}

// rowPiece is a block of n rows of t.
func rowPiece(t *tensor, n int) *tensor {
	p := t.clone()
	rows := 1
	if len(t.Shape) > 0 {
		rows = t.Shape[0]
	}
	p.Shape = []int{n, lastDim(t)}
	if rows > 0 {
		p.Norm = t.Norm * math.Sqrt(float64(n)/float64(rows))
	}
	return p
}

func paramTensors(em *expertMods) []*tensor {
	var ts []*tensor
	for _, m := range []*module{em.fc1, em.fc2} {
		for _, p := range m.params {
			ts = append(ts, p.t)
		}
	}
	return ts
}

// expert is one expert MLP (with the eps-less RMSNorm when the run has the
// all_to_all carrier fault).
func (r *rk) expert(em *expertMods, x *tensor) *tensor {
	r.enter(em.mod, sExpertCall, x)
	if r.w.has(spec.AllToAllCarrier) {
		p := r.pow2(sExpPow, x)
		m := r.reduceLast(sExpPow, "mean", p)
		rs := r.rsqrt(sExpPow, m)
		x = r.mul(sExpPow, x, rs)
	}
	h := r.callLinear(em.fc1, sExpFc, x)
	r.enter(em.act, sExpFc, h)
	g := r.gelu(sGeluF, h)
	r.exit(g)
	o := r.callLinear(em.fc2, sExpFc, g)
	r.exit(o)
	return o
}

// linkA2A is the autograd link of an all_to_all: the backward sends the
// gradient back the way the data came.
func (r *rk) linkA2A(in, out *tensor, sent, received []int, ep *group) {
	out.RG = true
	n := &node{vis: visHidden, ins: []*tensor{in}, outs: []*tensor{out}, comm: true}
	n.bwd = func(g []*tensor) []*tensor {
		gy := g[0]
		pieces := make([]*tensor, len(received))
		for i, c := range received {
			pieces[i] = rowPiece(gy, c)
		}
		rows := 0
		for _, c := range sent {
			rows += c
		}
		buf := r.emptyBuf(sA2ABwdBuf, "empty", []int{rows, lastDim(gy)}, gy.DT, nil)
		res := r.allToAll(sA2ABwd, buf, gy, pieces, received, true, ep, []int{lastDim(gy)})
		gx := res.recv
		gx.RG = false
		return []*tensor{gx}
	}
	// every member of the group must run the backward exchange, whether
	// or not its own side needs a gradient
	if r.ph == truth.PhaseForward {
		out.node = n
		r.tape = append(r.tape, n)
	}
}
