package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
)

// runStep executes one training step of one rank: Spec.MicroBatches
// forward and backward passes whose parameter gradients accumulate (each
// forward followed by its backward, or with Schedule "gpipe" every forward
// first), then the gradient synchronisation, the loss logging, clipping
// and the update.
func (r *rk) runStep() {
	s := r.w.spec
	mp := r.st.model
	for _, p := range mp.params {
		p.t.RG = p.from <= r.step
	}
	var grads map[*param]*tensor
	var logged *tensor
	add := func(gs *gradSet, loss *tensor) {
		if grads == nil {
			grads = gs.p
		} else {
			r.accumulateGrads(grads, gs.p)
		}
		// the logged loss stands for the mean over the micro-batches: the
		// first non-finite one if any, else the last
		if loss != nil && (logged == nil || !logged.tainted()) {
			logged = loss
		}
		r.w.side.loss(r.rank, loss)
	}
	if s.Schedule == "gpipe" {
		// every forward, then every backward
		passes := make([]*pass, s.MicroBatches)
		for mb := range passes {
			r.mb, r.tape = mb, nil
			passes[mb] = r.forwardPass()
		}
		for _, ps := range passes {
			add(r.backwardPass(ps), ps.loss)
		}
	} else {
		for mb := 0; mb < s.MicroBatches; mb++ {
			r.mb = mb
			ps := r.forwardPass()
			gs := r.backwardPass(ps)
			if r.w.dry && r.rec.df != nil {
				r.st.passEnds = append(r.st.passEnds, r.rec.df.Offset())
			}
			add(gs, ps.loss)
		}
	}
	r.w.side.unreduced(r, grads)
	gs := &gradSet{p: grads}
	skip := false
	switch {
	case s.GradSync == "zero1":
		r.zeroReduce(gs)
	case s.GradSync == "reducer":
		r.bucketReduce(gs)
	case s.LossScale:
		skip = r.scaledSync(gs)
	default:
		r.gradSync(gs)
	}
	r.w.side.reduced(r, gs)
	if s.LossLog && mp.last && s.GradSync != "zero1" {
		r.lossLog(logged, r.st.lay.dp)
	}
	if skip {
		r.st.skipped++
		r.w.side.skippedStep(r)
		return
	}
	if s.ClipGrad {
		r.clipGrad(gs)
	}
	r.optimizer(gs)
	if s.GradSync == "zero1" {
		r.zeroBroadcast()
		if s.LossLog && mp.last {
			r.lossLog(logged, r.st.lay.dp)
		}
	}
	r.w.side.updated(r)
}

// accumulateGrads adds the parameter gradients of one more micro-batch into
// acc, in parameter order. The accumulation (param.grad += grad inside
// autograd) is not hooked by msprobe; a sum that overflows is recorded as
// an unhooked event.
func (r *rk) accumulateGrads(acc, add map[*param]*tensor) {
	for _, p := range r.st.model.params {
		g := add[p]
		if g == nil {
			continue
		}
		old := acc[p]
		if old == nil {
			acc[p] = g
			continue
		}
		sum := accumulateMicro(old, g)
		r.hiddenEvent("grad_accumulation", []*tensor{old, g}, []*tensor{sum})
		acc[p] = sum
	}
}

// accumulateMicro is the sum of two micro-batches' gradients of one
// parameter: means add, independent spreads add in quadrature, a spike at
// a fixed element survives, an element that is zero in both stays zero.
func accumulateMicro(a, b *tensor) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: a.Shape, DT: a.DT}}
	o.Mean = a.Mean + b.Mean
	o.Std = math.Hypot(a.Std, b.Std)
	o.Max = o.Mean + math.Hypot(a.Max-a.Mean, b.Max-b.Mean)
	o.Min = o.Mean - math.Hypot(a.Mean-a.Min, b.Mean-b.Min)
	o.Norm = math.Hypot(a.Norm, b.Norm)
	if a.Spike || b.Spike {
		o.Max = math.Max(o.Max, math.Max(a.Max, b.Max))
		o.Spike = true
	}
	if o.Numel() <= 1 {
		o.Max, o.Min, o.Norm = o.Mean, o.Mean, math.Abs(o.Mean)
	}
	flagsAdd(o, a, b, false)
	o.Zero = a.Zero && b.Zero
	o.ZeroRow = a.ZeroRow && b.ZeroRow
	o.RG = a.RG
	return settle(o, a, b)
}
