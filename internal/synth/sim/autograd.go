package sim

import (
	"math"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// node is an autograd node: the backward of one recorded forward call.
type node struct {
	base string // entry base name ("" when unhooked)
	vis  vis
	ins  []*tensor // tensor inputs, in the order of the backward output
	outs []*tensor
	bwd  func(g []*tensor) []*tensor
	// comm: the backward runs collectives, which record their own births.
	comm bool
	// own: the backward records its own entries (an autograd.Function
	// whose backward calls hooked APIs).
	own bool
}

// push records a node for outputs that require grad.
func (r *rk) push(base string, v vis, ins, outs []*tensor, bwd func(g []*tensor) []*tensor) {
	if r.ph != truth.PhaseForward {
		return
	}
	need := false
	for _, t := range ins {
		if t != nil && t.RG {
			need = true
			break
		}
	}
	if !need {
		return
	}
	n := &node{base: base, vis: v, ins: ins, outs: outs, bwd: bwd}
	for _, o := range outs {
		if o != nil {
			o.RG = o.DT.IsFloat()
			o.node = n
		}
	}
	r.tape = append(r.tape, n)
}

// grads of one backward pass.
type gradSet struct {
	t map[*tensor]*tensor
	p map[*param]*tensor
}

// backward runs autograd from roots seeded with seeds, records the backward
// entries and returns the gradients of parameters and of other leaves.
func (r *rk) backward(roots, seeds []*tensor) *gradSet {
	gs := &gradSet{t: map[*tensor]*tensor{}, p: map[*param]*tensor{}}
	for i, t := range roots {
		gs.t[t] = seeds[i]
	}
	pending := map[*module]int{}
	for i := len(r.tape) - 1; i >= 0; i-- {
		n := r.tape[i]
		gout := make([]*tensor, len(n.outs))
		any := false
		for k, o := range n.outs {
			if g, ok := gs.t[o]; ok {
				gout[k] = g
				any = true
			}
		}
		if !any {
			if !n.comm {
				continue
			}
			// a collective in the backward runs on every rank of its group
			// even when this rank has no gradient to send
			for k, o := range n.outs {
				gout[k] = zeros(o.Shape, o.DT)
			}
		}
		gin := n.bwd(gout)
		for k, in := range n.ins {
			if in == nil || !in.RG {
				gin[k] = nil
			} else if in.param != nil && gin[k] != nil {
				r.hookGrad(in.param, gin[k])
			}
		}
		if n.vis != visHidden || n.base != "" {
			r.bwdEntry(n, gout, gin)
		} else if !n.comm && !n.own {
			r.hiddenEvent("backward", gout, gin)
		}
		for k, in := range n.ins {
			g := gin[k]
			if g == nil {
				continue
			}
			if p := in.param; p != nil {
				if old := gs.p[p]; old != nil {
					gs.p[p] = accumulate(old, g)
				} else {
					gs.p[p] = g
				}
				if m := p.module; m != nil {
					pending[m]++
					if pending[m] == m.trainable(r.step) {
						r.paramsGrad(m, gs.p)
					}
				}
				continue
			}
			if old := gs.t[in]; old != nil {
				gs.t[in] = accumulate(old, g)
			} else {
				gs.t[in] = g
			}
		}
	}
	return gs
}

// accumulate adds two gradients of the same tensor (no entry: autograd's
// own accumulation).
func accumulate(a, b *tensor) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: a.Shape, DT: a.DT}}
	o.Mean = a.Mean + b.Mean
	o.Std = math.Hypot(a.Std, b.Std)
	o.Max = math.Max(a.Max, b.Max) + 0.5*math.Min(math.Abs(a.Max), math.Abs(b.Max))
	o.Min = math.Min(a.Min, b.Min) - 0.5*math.Min(math.Abs(a.Min), math.Abs(b.Min))
	o.Norm = math.Hypot(a.Norm, b.Norm)
	o.Zero = a.Zero && b.Zero
	flagsAdd(o, a, b, false)
	return o.fin()
}
