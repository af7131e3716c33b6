package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// Climbs towards a dtype's limit, step after step (spec.FaultKind.Drifts),
// and the clean runs that climb without heading anywhere. Each comes from
// the state a parameter carries from one step to the next and from the
// update the optimizer applies to it, never from a value written into a
// step:
//
//   - a learnable scale of the input features, multiplied at every step
//     by a hooked Tensor.mul_ (GainRunaway: a decoupled weight decay of
//     the wrong sign; WarmupSpike: a move towards 1 under a warming-up
//     learning rate);
//   - a gate bias whose Adam learning rate is far too high (ExpDrift):
//     Adam's normalised step moves it by about the learning rate a step;
//   - a head bias trained by SGD past the edge of stability (SharpGradient):
//     its deviation along the sharpest direction, and with it the
//     gradient, is multiplied by 1 - lr*curvature every step.

// Sites of the ops the climbs add to the program.
var (
	sFeatScale = model(212, "forward", "feats = batch_feats * self.feat_scale            # learnable input scale")
	sFeatNorm  = model(209, "forward", "feats = F.layer_norm(feats, feats.shape[-1:])    # no affine parameters")
	sGainStep  = train(153, "train_step", "model.feat_scale.data.mul_(scale_step)         # the scale's multiplicative update")
	sTimeHalf  = model(211, "forward", "t = batch_time.half()                            # seconds since the session began")
	sTimeCap   = model(214, "forward", "t = torch.minimum(t, torch.full_like(t, torch.finfo(t.dtype).max))")
	sTimeAdd   = model(218, "forward", "h = h + t * (1 / 32768)")
	sMaskBias  = model(215, "forward", "mask = torch.full((s, s), -1e4, dtype=h.dtype, device=h.device)")
)

// gainRule is how the optimizer moves a LayerScale gain at every step.
type gainRule struct {
	// runaway multiplies the gain by this factor from step from on.
	runaway float64
	from    int
	// warm moves the gain towards target with a learning rate that warms
	// up linearly over warm steps to peak.
	warm, peak, target float64
}

// factor is what the rule multiplies a gain of mean m by at step.
func (g gainRule) factor(step int, m float64) float64 {
	switch {
	case g.runaway > 0:
		if step < g.from {
			return 1
		}
		return g.runaway
	case g.warm > 0 && m > 0:
		lr := g.peak * math.Min(1, float64(step+1)/g.warm)
		return 1 + lr*(g.target/m-1)
	}
	return 1
}

// addGain adds the learnable scale of the input features when the run
// has one.
func (w *world) addGain(b *builder, dt mw.DType, sync *group) *param {
	f := w.spec.Fault
	if f == nil {
		return nil
	}
	root := b.mod("", "GPT")
	switch f.Kind {
	case spec.GainRunaway:
		p := b.add(root, "feat_scale", []int{8}, dt, 1, 0.1, "", sync)
		p.gain = gainRule{runaway: faultOr(f, 1.35), from: f.Step}
		return p
	case spec.WarmupSpike:
		p := b.add(root, "feat_scale", []int{8}, dt, 0.25, 0.02, "", sync)
		p.gain = gainRule{warm: 4, peak: 0.6, target: 1}
		return p
	}
	return nil
}

// setDrift puts the gate bias of ExpDrift in its too-fast Adam group.
func (w *world) setDrift(p *param) {
	if w.has(spec.ExpDrift) {
		p.drift = faultOr(w.spec.Fault, 0.8)
	}
}

// setSharp gives the head bias of SharpGradient its deviation along the
// sharpest direction: curvature (1+c)/lr, so that an SGD step multiplies
// the deviation by -c, and a gradient spike of 0.5 at the start.
func (w *world) setSharp(p *param) {
	c := faultOr(w.spec.Fault, 2.2)
	p.curv = (1 + c) / sgdLR
	p.sharp = 0.5 / p.curv
	p.t.Max, p.t.Min = math.Max(p.t.Max, p.sharp), math.Min(p.t.Min, -p.sharp)
	p.t.Spike = true
}

func faultOr(f *spec.Fault, def float64) float64 {
	if f.Value != 0 {
		return f.Value
	}
	return def
}

// scaledFeatures multiplies the input features by their learnable scale
// and normalises them (F.layer_norm without affine parameters).
func (r *rk) scaledFeatures(feats *tensor, scale *param) *tensor {
	x := r.mul(sFeatScale, r.castTo(feats, r.w.dims.dt), scale.t)
	return r.plainLayerNorm(sFeatNorm, x)
}

// plainLayerNorm is F.layer_norm over the last dimension without weight
// and bias: unit spread whatever the input's scale.
func (r *rk) plainLayerNorm(s *mw.Site, x *tensor) *tensor {
	h := lastDim(x)
	o := r.g.normal(x.Shape, x.DT, 0, 1)
	o.NaN = x.nonFinite()
	o.born = !x.NaN && (x.PInf || x.NInf)
	settle(o, x)
	in := []arg{x, mw.IntList{h}, nil, nil, mw.Float(1e-05)}
	r.emit(&opSpec{prefix: "Functional", api: "layer_norm", site: s, in: in, out: args(o)},
		[]*tensor{x}, []*tensor{o}, func(g []*tensor) []*tensor {
			gy := g[0]
			gx := r.grad(x.Shape, x.DT, 0, nz(gy.rms()/math.Max(x.rms(), 1e-6)))
			gx.NaN = gy.nonFinite() || x.nonFinite()
			gx.born = gx.NaN && !gy.NaN && !x.NaN
			return []*tensor{settle(gx, gy, x)}
		})
	return o
}

// gainSteps applies the multiplicative updates of the feature scales
// after the optimizer step (param.data.mul_, hooked like the optimizer).
func (r *rk) gainSteps() {
	for _, p := range r.st.model.params {
		if p.gain == (gainRule{}) || p.from > r.step {
			continue
		}
		f := p.gain.factor(r.step, p.t.Mean)
		if f == 1 {
			continue
		}
		r.setPhase(truth.PhaseOptimizer, &ctxTrain, false)
		o := p.t.clone()
		o.Max, o.Min, o.Mean, o.Norm, o.Std = p.t.Max*f, p.t.Min*f, p.t.Mean*f, p.t.Norm*f, p.t.Std*f
		settle(o, p.t)
		r.optOp(&opSpec{prefix: "Tensor", api: "mul_", site: sGainStep, in: []arg{p.t, mw.Float(f)}, out: args(o)})
		r.setParam(p, o)
	}
}

// adamRate is the learning rate of p's Adam group at this step and the
// extent of the update of its largest element: Adam's normalised step is
// about the rate for an element whose gradient keeps its sign.
func (r *rk) adamRate(p *param, pg *gen) (lr, up float64) {
	if p.drift > 0 && r.step >= r.w.spec.Fault.Step {
		return p.drift, p.drift * pg.in(0.9, 1)
	}
	return adamLR, adamLR * pg.in(0.3, 1.2)
}

// sharpStep moves the deviation of p along the sharpest direction by an
// SGD step past the edge of stability: d <- (1 - lr*curv) d.
func (r *rk) sharpStep(p *param, o *tensor) {
	if p.sharp == 0 {
		return
	}
	if r.step >= r.w.spec.Fault.Step {
		p.sharp *= 1 - sgdLR*p.curv
	}
	d := math.Abs(p.sharp)
	o.Max, o.Min = math.Max(o.Max, d), math.Min(o.Min, -d)
	o.Spike = true
}

// sharpGrad adds the gradient along the sharpest direction to the
// gradient of p: curv*d at one element, -curv*d at its partner, the same
// on every replica.
func sharpGrad(p *param, g *tensor) {
	s := p.curv * math.Abs(p.sharp)
	g.Max, g.Min = math.Max(g.Max, s), math.Min(g.Min, -s)
	g.Spike, g.SpikeLow = true, true
	g.fin()
	g.born = false
}

// lossSpike is the factor of the step's loss: mislabelled records in the
// batch of WarmupSpike's step.
func (r *rk) lossSpike() float64 {
	if r.w.has(spec.WarmupSpike) && r.step == r.w.spec.Fault.Step {
		return 3
	}
	return 1
}

// timeFeature adds HalfTraps' unnormalised input feature: seconds since
// the session began, about 30000 and jittering by 2 % from step to step,
// cast to float16, capped at float16's max with a Torch.full of 65504
// (whose float16 Norm is +Inf while its elements are finite) and scaled
// down.
func (r *rk) timeFeature(h *tensor) *tensor {
	d := r.w.dims
	shape := []int{d.B, d.S, 1}
	top := 30000 * (1 + 0.02*(2*r.g.u()-1))
	raw := r.g.positive(shape, mw.DTFloat32, top*0.97, top*0.985, top)
	t := r.cast(sTimeHalf, "half", raw, mw.DTFloat16)
	limit := mw.DTFloat16.MaxFinite()
	full := constant(shape, mw.DTFloat16, limit)
	r.op(&opSpec{prefix: "Torch", api: "full_like", site: sTimeCap, in: []arg{t, mw.Float(limit)}, out: args(full)})
	capped := t.clone()
	r.op(&opSpec{prefix: "Torch", api: "minimum", site: sTimeCap, in: args(t, full), out: args(capped)})
	t = r.scale(sTimeAdd, capped, 1.0/32768)
	return r.add(sTimeAdd, h, r.castTo(t, h.DT), false)
}

// maskBias is HalfTraps' additive causal mask: Torch.full((s, s), -1e4)
// and Torch.triu(mask, diagonal=1), finite large negative values.
func (r *rk) maskBias(n int, dt mw.DType) *tensor {
	f := constant([]int{n, n}, dt, -1e4)
	r.op(&opSpec{prefix: "Torch", api: "full", site: sMaskBias,
		in: []arg{mw.List{mw.Int(n), mw.Int(n)}, mw.Float(-1e4)}, kw: []mw.KV{{Key: "dtype", Value: mw.DTypeName(dt.String())}}, out: args(f)})
	nn := float64(n)
	o := &tensor{Tensor: mw.Tensor{Shape: []int{n, n}, DT: dt, Max: 0, Min: -1e4,
		Mean: -1e4 * (nn - 1) / (2 * nn), Norm: 1e4 * math.Sqrt(nn*(nn-1)/2)}, Zero: true, Std: 5e3}
	settle(o, f)
	r.op(&opSpec{prefix: "Torch", api: "triu", site: sMaskTriu, in: args(f),
		kw: []mw.KV{{Key: "diagonal", Value: mw.Int(1)}}, out: args(o)})
	return o
}

// addMaskBias is scores + mask for a finite mask of 0 and -1e4: the
// largest score is kept, the smallest moves down by 1e4.
func (r *rk) addMaskBias(s *mw.Site, x, m *tensor) *tensor {
	o := x.clone()
	o.Min = x.Min + m.Min
	o.Mean = x.Mean + m.Mean
	o.Std = math.Hypot(x.Std, m.Std)
	o.Norm = math.Hypot(x.Norm, m.Norm*math.Sqrt(x.Numel()/m.Numel()))
	o.Zero, o.ZeroRow = false, false
	settle(o, x, m)
	r.emit(&opSpec{prefix: "Tensor", api: "__add__", site: s, in: args(x, m), out: args(o)},
		[]*tensor{x, m}, []*tensor{o}, func(g []*tensor) []*tensor {
			gx := g[0].clone()
			gx.RG = false
			return []*tensor{settle(gx, g[0]), nil}
		})
	return o
}
