package sim

import (
	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// fnAttention is FlashAttentionFn.apply(q, k, v, scale): a
// torch.autograd.Function whose forward calls the kernel
// attn_ext.flash_attention and whose backward calls
// attn_ext.flash_attention_grad, both registered with register_custom_api.
// msprobe records each kernel as a forward entry, the grad kernel between
// the backward entries of the step (with a stack through autograd's
// backward and a null construct.json parent), and neither has a backward
// entry: the forward kernel runs with grad mode off, its output does not
// require grad.
func (r *rk) fnAttention(lm *layerMods, q, k, v *tensor, scale float64) *tensor {
	o := r.g.normal(q.Shape, q.DT, v.Mean*0.3, nz(v.rms()*0.55))
	o.NaN = q.NaN || k.NaN || v.NaN || q.PInf || q.NInf || k.PInf || k.NInf
	o.PInf, o.NInf = v.PInf && !o.NaN, v.NInf && !o.NaN
	settle(o, q, k, v)
	r.rec.withFramesApply(sFnApply, func() {
		r.op(&opSpec{prefix: "attn_ext", api: "flash_attention", site: sFnKern, in: []arg{q, k, v, mw.Float(scale)}, out: args(o)})
	})
	y := o.clone()
	y.RG = q.RG || k.RG || v.RG
	layer := lm.idx
	n := &node{vis: visHidden, ins: []*tensor{q, k, v}, outs: []*tensor{y}, own: true}
	n.bwd = func(g []*tensor) []*tensor {
		gy := g[0]
		bad := gy.nonFinite() || o.NaN
		mk := func(t *tensor, std float64) *tensor {
			x := r.grad(t.Shape, t.DT, 0, nz(std))
			x.NaN = bad
			return settle(x, gy, o)
		}
		dq := mk(q, gy.rms()*k.rms()*scale*2)
		dk := mk(k, gy.rms()*q.rms()*scale*2)
		dv := mk(v, gy.rms()*0.8)
		if r.faultLayer(spec.GradKernelNaN, layer) {
			// a sample whose every token is padding: the forward kernel
			// clamps the softmax denominator, the grad kernel recomputes
			// the probabilities without the clamp, 0/0 in grad_v (or,
			// with a negative Fault.Value, log(0) = -inf)
			if r.w.spec.Fault.Value < 0 {
				dv.NInf = true
			} else {
				dv.NaN = true
			}
			dv.Legit = false
		}
		r.op(&opSpec{prefix: "attn_ext", api: "flash_attention_grad", site: sFnKernGrad,
			in: []arg{q, k, v, gy, mw.Float(scale)}, out: args(dq, dk, dv)})
		return []*tensor{dq, dk, dv}
	}
	if r.ph == truth.PhaseForward && y.RG {
		y.node = n
		r.tape = append(r.tape, n)
	}
	return y
}
