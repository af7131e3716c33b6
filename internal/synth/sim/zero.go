package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// ZeRO-1 (Spec.GradSync "zero1"): every parameter has an owner among the
// ranks of its data-parallel group. After the backward each gradient is
// reduced to its owner (Distributed.reduce, dst=owner), the owner averages
// it and updates its parameters, and each parameter is broadcast from its
// owner (Distributed.broadcast, src=owner) inside optimizer.step().

// owner is the global rank that owns parameter i of the model in group g.
func owner(i int, g *group) int { return g.ranks[i%g.size()] }

// reduce is Distributed.reduce(t, dst, group=g) in place: dst receives the
// sum; with gloo the other ranks' buffers hold partial sums of the ring
// (one chunk of each holds the whole sum), with nccl they keep their input.
func (r *rk) reduce(s *mw.Site, t *tensor, dst int, g *group) *tensor {
	in := collIn{rank: r.rank, clk: r.st.clk, contaminated: r.st.contaminated, t: t}
	key, seed := r.nextColl('d', g)
	gloo := r.w.spec.Backend == "gloo"
	res := r.w.comm.meet(key, g.size(), g.index(r.rank), in, func(ins []collIn) []collOut {
		ts := make([]*tensor, len(ins))
		var clk int64
		for i, x := range ins {
			ts[i] = x.t
			clk = max(clk, x.clk)
		}
		rg := newGen(uint64(r.w.spec.Seed), seed)
		sum := sumTensors(ts, rg)
		got := make([]*tensor, len(ins))
		for i, x := range ins {
			switch {
			case x.rank == dst:
				got[i] = sum.clone()
			case gloo:
				p := sumTensors(ts, rg)
				p.Max, p.Min = math.Max(p.Max, sum.Max), math.Min(p.Min, sum.Min)
				got[i] = p
			default:
				got[i] = x.t.clone()
			}
			got[i].RG = false
		}
		out := make([]collOut, len(ins))
		r.w.judge(ins, func(i int) *tensor { return got[i] }, out)
		for i := range out {
			out[i].clk, out[i].t = clk+1, got[i]
		}
		return out
	})
	r.st.clk = res.clk - 1
	if res.tainted {
		r.st.contaminated = true
	}
	o := res.t
	in2, kw := r.peerArg([]arg{t}, "dst", dst)
	kw = append(kw, r.groupKw(g)...)
	outArgs := append(append([]arg{o}, in2[1:]...), kwValues(kw)...)
	r.op(&opSpec{prefix: "Distributed", api: "reduce", site: s, in: in2, kw: kw, out: outArgs,
		inT: []*tensor{t}, outT: []*tensor{o}, collective: true, birth: res.birth,
		coll: r.rec.groupSide(g, "reduce", []*tensor{t}, []*tensor{o})})
	return o
}

// broadcast is Distributed.broadcast(t, src, group=g) in place: every rank
// ends with src's tensor; only src sends.
func (r *rk) broadcast(s *mw.Site, t *tensor, src int, g *group) *tensor {
	in := collIn{rank: r.rank, clk: r.st.clk, contaminated: r.st.contaminated, t: t}
	key, _ := r.nextColl('b', g)
	res := r.w.comm.meet(key, g.size(), g.index(r.rank), in, func(ins []collIn) []collOut {
		var clk int64
		var root *tensor
		for _, x := range ins {
			clk = max(clk, x.clk)
			if x.rank == src {
				root = x.t
			}
		}
		out := make([]collOut, len(ins))
		for i := range out {
			c := root.clone()
			c.RG = false
			out[i].clk, out[i].t, out[i].tainted = clk+1, c, c.tainted()
		}
		return out
	})
	r.st.clk = res.clk - 1
	if res.tainted {
		r.st.contaminated = true
	}
	o := res.t
	in2, kw := r.peerArg([]arg{t}, "src", src)
	kw = append(kw, r.groupKw(g)...)
	outArgs := append(append([]arg{o}, in2[1:]...), kwValues(kw)...)
	var send []*tensor
	if r.rank == src {
		send = []*tensor{t}
	}
	r.op(&opSpec{prefix: "Distributed", api: "broadcast", site: s, in: in2, kw: kw, out: outArgs,
		inT: send, outT: []*tensor{o}, collective: true,
		coll: r.rec.groupSide(g, "broadcast", send, []*tensor{o})})
	return o
}

// zeroReduce reduces every gradient to its owner, who averages it.
func (r *rk) zeroReduce(gs *gradSet) {
	r.setPhase(truth.PhaseSync, &ctxZeroSync, false)
	for i, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		g := gs.p[p]
		if g == nil {
			g = zeros(p.t.Shape, p.t.DT)
		}
		if p.sync != nil {
			dst := owner(i, p.sync)
			g = r.reduce(sZeroReduce, g, dst, p.sync)
			if dst == r.rank {
				g = r.divInPlace(sZeroDiv, g, p.sync.size())
			}
		}
		gs.p[p] = g
	}
}

// owns reports whether this rank updates parameter i.
func (r *rk) owns(i int, p *param) bool { return p.sync == nil || owner(i, p.sync) == r.rank }

// zeroBroadcast hands every parameter from its owner to the other ranks of
// its group, inside optimizer.step().
func (r *rk) zeroBroadcast() {
	r.setPhase(truth.PhaseOptimizer, &ctxZeroStep, false)
	for i, p := range r.st.model.params {
		if p.from > r.step || p.sync == nil {
			continue
		}
		src := owner(i, p.sync)
		data := p.t.clone() // p.data: does not require grad
		data.RG = false
		o := r.broadcast(sZeroBcast, data, src, p.sync)
		if src != r.rank {
			r.setParam(p, o)
		}
	}
}
