package sim

import (
	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// Dynamic loss scaling (Spec.LossScale), written by hand as float16
// training loops do: the loss is multiplied by the scale before the
// backward; after it every gradient that is communicated is cast to
// float16 and all-reduced in float16; an overflow check over the gradients
// decides whether the step updates (the gradients are unscaled in float32
// first) or is skipped, in which case the scale is halved.

// initialLossScale is the scale of step 0.
const initialLossScale = 1024

// scaledSync synchronises the scaled gradients in float16 and reports
// whether the step must be skipped.
func (r *rk) scaledSync(gs *gradSet) (skip bool) {
	r.setPhase(truth.PhaseSync, &ctxSync, false)
	var ps []*param
	for _, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		g := gs.p[p]
		if g == nil {
			g = zeros(p.t.Shape, p.t.DT)
		}
		h := g
		if p.sync != nil {
			h = r.cast(sGradHalf, "half", g, mw.DTFloat16)
			h = r.allReduce(sGradAR16, h, p.sync)
		}
		gs.p[p] = h
		ps = append(ps, p)
	}
	finite := true
	for _, p := range ps {
		h := gs.p[p]
		f := bools(h.Shape, true, !h.nonFinite())
		r.op(&opSpec{prefix: "Torch", api: "isfinite", site: sGradCheck, in: args(h), out: args(f)})
		a := bools([]int{}, !h.nonFinite(), !h.nonFinite())
		r.op(&opSpec{prefix: "Tensor", api: "all", site: sGradCheck, in: args(f), out: args(a)})
		finite = finite && !h.nonFinite()
	}
	if !finite {
		r.st.scale /= 2
		return true
	}
	n := 1
	if len(ps) > 0 && ps[0].sync != nil {
		n = ps[0].sync.size()
	}
	for _, p := range ps {
		h := gs.p[p]
		if h.DT == mw.DTFloat16 && p.t.DT != mw.DTFloat16 {
			h = r.cast(sGradUnscale, "float", h, p.t.DT)
		}
		gs.p[p] = r.divScalar(sGradUnscale, h, r.st.scale*float64(n))
	}
	return false
}

// divScalar is Tensor.__truediv__ by a Python float, with no autograd.
func (r *rk) divScalar(s *mw.Site, x *tensor, c float64) *tensor {
	o := x.clone()
	o.Max, o.Min, o.Mean, o.Norm, o.Std = x.Max/c, x.Min/c, x.Mean/c, x.Norm/c, x.Std/c
	if c < 0 {
		o.Max, o.Min = o.Min, o.Max
	}
	settle(o, x)
	r.op(&opSpec{prefix: "Tensor", api: "__truediv__", site: s, in: []arg{x, mw.Float(c)}, out: args(o)})
	return o
}
