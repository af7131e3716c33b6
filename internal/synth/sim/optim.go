package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

const (
	adamLR    = 1e-4
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	sgdLR     = 0.05
)

// gradSync all-reduces and averages the gradients in each parameter's data
// parallel group, in named_parameters order.
func (r *rk) gradSync(gs *gradSet) {
	r.setPhase(truth.PhaseSync, &ctxSync, false)
	for _, p := range r.st.model.params {
		if p.from > r.step {
			continue
		}
		g := gs.p[p]
		if g == nil {
			// an expert that received no tokens: its gradient buffer is zero
			g = zeros(p.t.Shape, p.t.DT)
		}
		if p.sync != nil {
			g = r.allReduce(sGradAR, g, p.sync)
			g = r.divInPlace(sGradDiv, g, p.sync.size())
		}
		gs.p[p] = g
	}
}

// divInPlace is Tensor.div_(t, n).
func (r *rk) divInPlace(s *mw.Site, t *tensor, n int) *tensor {
	o := t.clone()
	f := float64(n)
	o.Max, o.Min, o.Mean, o.Norm, o.Std = t.Max/f, t.Min/f, t.Mean/f, t.Norm/f, t.Std/f
	settle(o, t)
	r.op(&opSpec{prefix: "Tensor", api: "div_", site: s, in: []arg{t, mw.Int(n)}, out: args(o)})
	return o
}

// lossLog all-reduces a detached copy of the loss for logging.
func (r *rk) lossLog(loss *tensor, g *group) {
	if loss == nil || g.size() < 2 {
		return
	}
	r.setPhase(truth.PhaseSync, &ctxTrain, false)
	c := loss.clone()
	c.RG = false
	r.op(&opSpec{prefix: "Torch", api: "clone", site: sLossClone, vis: visFiltered, in: args(loss), out: args(c)})
	r.allReduce(sLossAR, c, g)
}

// clipGrad is torch.nn.utils.clip_grad_norm_(params, 1.0).
func (r *rk) clipGrad(gs *gradSet) {
	r.setPhase(truth.PhaseClip, &ctxClip, false)
	var norms []*tensor
	var ps []*param
	for _, p := range r.st.model.params {
		g := gs.p[p]
		if g == nil || p.from > r.step {
			continue
		}
		n := scalar(mw.DTFloat32, g.Norm)
		n.NaN = g.NaN || (g.PInf && g.NInf)
		n.PInf = !n.NaN && g.nonFinite()
		settle(n, g)
		r.op(&opSpec{prefix: "Torch", api: "norm", site: sClipNorm, in: []arg{g, mw.Float(2.0)}, out: args(n)})
		norms = append(norms, n)
		ps = append(ps, p)
	}
	if len(norms) == 0 {
		return
	}
	st := &tensor{Tensor: mw.Tensor{Shape: []int{len(norms)}, DT: mw.DTFloat32}}
	tot := 0.0
	st.Min = math.Inf(1)
	for _, n := range norms {
		st.Max = math.Max(st.Max, n.Max)
		st.Min = math.Min(st.Min, n.Min)
		tot += n.Max * n.Max
		st.Mean += n.Max / float64(len(norms))
		st.NaN, st.PInf = st.NaN || n.NaN, st.PInf || n.PInf
	}
	st.Norm = math.Sqrt(tot)
	settle(st, norms...)
	r.op(&opSpec{prefix: "Torch", api: "stack", site: sClipNorm, in: []arg{mw.List(tensorArgs(norms))}, out: args(st)})
	total := scalar(mw.DTFloat32, st.Norm)
	total.NaN, total.PInf = st.NaN, st.PInf && !st.NaN
	settle(total, st)
	r.op(&opSpec{prefix: "Torch", api: "norm", site: sClipNorm, in: []arg{st, mw.Float(2.0)}, out: args(total)})
	sum := scalar(mw.DTFloat32, total.Max+1e-6)
	flagsPass(sum, total)
	settle(sum, total)
	r.op(&opSpec{prefix: "Tensor", api: "__add__", site: sClipCoef, in: []arg{total, mw.Float(1e-06)}, out: args(sum)})
	coef := scalar(mw.DTFloat32, 1/sum.Max)
	coef.NaN = sum.NaN
	if sum.PInf {
		coef = scalar(mw.DTFloat32, 0)
	}
	settle(coef, sum)
	r.op(&opSpec{prefix: "Tensor", api: "__rtruediv__", site: sClipCoef, in: []arg{sum, mw.Float(1.0)}, out: args(coef)})
	cl := scalar(mw.DTFloat32, math.Min(coef.Max, 1))
	cl.NaN = coef.NaN
	settle(cl, coef)
	r.op(&opSpec{prefix: "Torch", api: "clamp", site: sClipClamp, vis: visFiltered, in: args(coef), kw: []mw.KV{{Key: "max", Value: mw.Float(1.0)}}, out: args(cl)})
	for _, p := range ps {
		g := gs.p[p]
		o := g.clone()
		c := cl.Max
		o.Max, o.Min, o.Mean, o.Norm, o.Std = g.Max*c, g.Min*c, g.Mean*c, g.Norm*c, g.Std*c
		o.NaN, o.PInf, o.NInf = false, false, false
		flagsMul(o, g, cl)
		if cl.Max == 0 {
			o.Zero = true
		}
		settle(o, g, cl)
		r.op(&opSpec{prefix: "Tensor", api: "mul_", site: sClipMul, in: []arg{g, cl}, out: args(o)})
		gs.p[p] = o
	}
}

// optOp records an optimizer op, or only simulates it when the optimizer
// is not hooked.
func (r *rk) optOp(o *opSpec) {
	if !r.fmt().OptimizerHooked {
		o.vis = visHidden
	}
	r.op(o)
}

// optimizer applies Adam or SGD to every trainable parameter.
func (r *rk) optimizer(gs *gradSet) {
	ctx := &ctxAdam
	if r.w.spec.Optimizer == "sgd" {
		ctx = &ctxSGD
	}
	r.setPhase(truth.PhaseOptimizer, ctx, false)
	zero := r.w.spec.GradSync == "zero1"
	for i, p := range r.st.model.params {
		if p.from > r.step || (zero && !r.owns(i, p)) {
			continue
		}
		g := gs.p[p]
		if g == nil {
			continue
		}
		pg := newGen(p.seedKey, uint64(r.step), 7)
		if r.w.spec.Optimizer == "sgd" {
			r.sgd(p, g, pg)
		} else {
			r.adam(p, g, pg)
		}
	}
	r.gainSteps()
}

func (r *rk) sgd(p *param, g *tensor, pg *gen) {
	o := p.t.clone()
	d := sgdLR * g.rms()
	o.Max += d * pg.in(0.2, 1)
	o.Min -= d * pg.in(0.2, 1)
	o.Mean -= sgdLR * g.Mean
	r.sharpStep(p, o)
	o.NaN, o.PInf, o.NInf = false, false, false
	step := g.clone()
	step.Max, step.Min = -sgdLR*g.Min, -sgdLR*g.Max
	step.PInf, step.NInf = g.NInf, g.PInf
	flagsAdd(o, p.t, step, false)
	settle(o, p.t, g)
	o.RG = true
	r.optOp(&opSpec{prefix: "Tensor", api: "add_", site: sSGDStep, in: []arg{p.t, g},
		kw: []mw.KV{{Key: "alpha", Value: mw.Float(-sgdLR)}}, out: args(o)})
	r.setParam(p, o)
}

func (r *rk) setParam(p *param, t *tensor) {
	t.param = p
	t.node = nil
	t.RG = true
	p.t = t
}

func (r *rk) adam(p *param, g *tensor, pg *gen) {
	if p.m == nil {
		p.m, p.v = zeros(p.t.Shape, mw.DTFloat32), zeros(p.t.Shape, mw.DTFloat32)
		if p.t.DT == mw.DTFloat32 {
			p.m.DT, p.v.DT = p.t.DT, p.t.DT
		} else {
			p.m.DT, p.v.DT = p.t.DT, p.t.DT
		}
	}
	p.steps++
	// exp_avg.mul_(beta1)
	m1 := p.m.clone()
	m1.Max, m1.Min, m1.Mean, m1.Norm, m1.Std = p.m.Max*adamBeta1, p.m.Min*adamBeta1, p.m.Mean*adamBeta1, p.m.Norm*adamBeta1, p.m.Std*adamBeta1
	settle(m1, p.m)
	r.optOp(&opSpec{prefix: "Tensor", api: "mul_", site: sAdamM, in: []arg{p.m, mw.Float(adamBeta1)}, out: args(m1)})
	// .add_(grad, alpha=1 - beta1)
	c := 1 - adamBeta1
	m2 := &tensor{Tensor: mw.Tensor{Shape: p.t.Shape, DT: p.m.DT}}
	m2.Mean = m1.Mean + c*g.Mean
	m2.Std = math.Hypot(m1.Std, c*g.Std)
	m2.Max = m1.Max*0.8 + c*g.Max
	m2.Min = m1.Min*0.8 + c*g.Min
	m2.Norm = math.Hypot(m1.Norm, c*g.Norm)
	m2.Zero = m1.Zero && g.Zero
	flagsAdd(m2, m1, g, false)
	settle(m2, m1, g)
	r.optOp(&opSpec{prefix: "Tensor", api: "add_", site: sAdamM, in: []arg{m1, g}, kw: []mw.KV{{Key: "alpha", Value: mw.Float(c)}}, out: args(m2)})
	// exp_avg_sq.mul_(beta2)
	v1 := p.v.clone()
	v1.Max, v1.Min, v1.Mean, v1.Norm, v1.Std = p.v.Max*adamBeta2, p.v.Min*adamBeta2, p.v.Mean*adamBeta2, p.v.Norm*adamBeta2, p.v.Std*adamBeta2
	settle(v1, p.v)
	r.optOp(&opSpec{prefix: "Tensor", api: "mul_", site: sAdamV, in: []arg{p.v, mw.Float(adamBeta2)}, out: args(v1)})
	// .addcmul_(grad, grad, value=1 - beta2)
	c2 := 1 - adamBeta2
	gg := math.Max(g.Max*g.Max, g.Min*g.Min)
	v2 := &tensor{Tensor: mw.Tensor{Shape: p.t.Shape, DT: p.v.DT}}
	v2.Max = v1.Max + c2*gg
	v2.Min = v1.Min
	if !g.Zero {
		v2.Min += c2 * math.Min(g.Max*g.Max, g.Min*g.Min) * 0.01
	}
	v2.Mean = v1.Mean + c2*(g.Mean*g.Mean+g.Std*g.Std)
	v2.Std = v2.Mean
	v2.Norm = math.Sqrt(v1.Norm*v1.Norm + c2*c2*3*math.Pow(g.rms(), 4)*g.Numel())
	v2.Zero = v1.Zero && g.Zero
	v2.NaN = v1.NaN || g.NaN
	v2.PInf = v1.PInf || g.PInf || g.NInf
	mergeRows(v2, v1, g)
	settle(v2, v1, g)
	r.optOp(&opSpec{prefix: "Tensor", api: "addcmul_", site: sAdamV, in: []arg{v1, g, g}, kw: []mw.KV{{Key: "value", Value: mw.Float(c2)}}, out: args(v2)})
	// torch.sqrt(exp_avg_sq)
	den := &tensor{Tensor: mw.Tensor{Shape: p.t.Shape, DT: v2.DT}}
	den.Max, den.Min = math.Sqrt(v2.Max), math.Sqrt(math.Max(v2.Min, 0))
	den.Mean = math.Min(den.Max, math.Sqrt(v2.Mean)*0.9)
	den.Std = den.Mean / 2
	den.Norm = math.Sqrt(v2.Mean * v2.Numel())
	den.Zero = v2.Zero
	den.NaN, den.PInf = v2.NaN, v2.PInf
	mergeRows(den, v2)
	settle(den, v2)
	r.optOp(&opSpec{prefix: "Torch", api: "sqrt", site: sAdamDenom, in: args(v2), out: args(den)})
	// .add_(eps)
	den2 := den.clone()
	den2.Max, den2.Min, den2.Mean = den.Max+p.eps, den.Min+p.eps, den.Mean+p.eps
	den2.Zero = den.Zero && p.eps == 0
	den2.Legit = false
	settle(den2, den)
	r.optOp(&opSpec{prefix: "Tensor", api: "add_", site: sAdamDenom, in: []arg{den, mw.Float(p.eps)}, out: args(den2)})
	// param.addcdiv_(exp_avg, denom, value=-step_size)
	bc1 := 1 - math.Pow(adamBeta1, float64(p.steps))
	o := p.t.clone()
	o.NaN, o.PInf, o.NInf = p.t.NaN, p.t.PInf, p.t.NInf
	lr, up := r.adamRate(p, pg)
	stepSize := lr / bc1
	o.Max += up
	o.Min -= adamLR * pg.in(0.3, 1.2)
	o.Spike = o.Spike || p.drift > 0
	o.Mean -= adamLR * math.Tanh(m2.Mean*1e3) * 0.1
	o.Norm *= 1 + 1e-5*pg.n()
	upNaN := m2.NaN || den2.NaN || (m2.Zero && den2.Zero) || ((m2.PInf || m2.NInf) && den2.PInf)
	upInf := !upNaN && (den2.Zero || m2.PInf || m2.NInf)
	if upNaN {
		o.NaN = true
		o.born = !m2.NaN && !den2.NaN
	}
	if upInf {
		o.PInf, o.NInf, o.born = true, true, true
	}
	mergeRows(o, p.t, m2, den2)
	if o.born {
		o.Rows = 0
	}
	settle(o, p.t, m2, den2)
	o.RG = true
	r.optOp(&opSpec{prefix: "Tensor", api: "addcdiv_", site: sAdamStep, in: []arg{p.t, m2, den2},
		kw: []mw.KV{{Key: "value", Value: mw.Float(-stepSize)}}, out: args(o)})
	p.m, p.v = m2, v2
	r.setParam(p, o)
}
