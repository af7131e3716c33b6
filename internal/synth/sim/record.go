package sim

import (
	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// arg is a value of a dump entry (see msprobewrite's value types).
type arg = any

// vis is how msprobe sees an op.
type vis uint8

const (
	// visDump: hooked and written to dump.json.
	visDump vis = iota
	// visFiltered: hooked (counted, listed in construct.json) but left out
	// of dump.json by the risk-level filter.
	visFiltered
	// visHidden: not hooked at all (C++ extension, fused kernel).
	visHidden
)

// opSpec describes one call of an API.
type opSpec struct {
	prefix, api string
	site        *mw.Site
	vis         vis
	in          []arg
	kw          []mw.KV
	out         []arg
	// inT/outT override the tensors used for birth detection (default:
	// every tensor in in/kw and out).
	inT, outT []*tensor
	// legit: the op creates legitimate non-finite values (masks, garbage).
	legit bool
	// collective: the birth decision was made at the rendezvous.
	collective bool
	birth      bool
	// coll is the collective side of the call, for the record of what
	// the dump shows.
	coll *collSpec
}

// rk executes one rank's step: it computes, and hands what msprobe would
// record of each call to its recorder.
type rk struct {
	w          *world
	st         *rankState
	rank, step int
	mb         int // micro-batch of the step
	g          *gen
	// rec records the step's calls (dump.json, stack.json, construct.json,
	// the truth's log, the monitor's activations)
	rec *recorder

	tape    []*node
	tokens  map[*module]int // tokens that reached the modules that count them
	ph      truth.Phase
	collSeq map[*group]int
	p2pSeq  map[p2pKey]int

	// inject, when set, alters the output of the next op (the physical
	// event of a fault: a corrupted value, a duplicated row).
	inject func(*tensor)

	// scratch space of op, reused from call to call
	tIn, tOut []*tensor
}

// p2pKey counts the messages a rank sends to or receives from a peer.
type p2pKey struct {
	send bool
	peer int
}

// apiKey identifies an API for the per-step call counters.
type apiKey struct{ prefix, api string }

func (r *rk) fmt() *spec.Format { return &r.w.spec.Format }

// setPhase switches phase and root context.
func (r *rk) setPhase(p truth.Phase, ctx *[]string, module bool) {
	r.ph = p
	r.rec.setRoot(ctx, module)
}

// op runs the record of a forward call and returns its base name
// "Prefix.api.N"; an op that makes non-finite values from clean inputs is
// a birth.
func (r *rk) op(o *opSpec) string {
	r.st.clk++
	inT, outT := o.inT, o.outT
	if inT == nil {
		inT = collectTensors(r.tIn[:0], o.in)
		for _, p := range o.kw {
			if t, ok := p.Value.(*tensor); ok && t != nil {
				inT = append(inT, t)
			} else if l, ok := p.Value.(mw.List); ok {
				inT = collectTensors(inT, l)
			}
		}
		r.tIn = inT
	}
	if outT == nil {
		outT = collectTensors(r.tOut[:0], o.out)
		r.tOut = outT
	}
	born := false
	if o.collective {
		born = o.birth
	} else if !o.legit {
		born = !anyTainted(inT...) && anyTainted(outT...)
	}
	name, base, visible := r.rec.api(o, inT, outT, r.ph)
	if anyTainted(inT...) || anyTainted(outT...) {
		r.st.contaminated = true
	}
	if born {
		key := base
		if o.vis == visHidden {
			key = "hidden:" + o.prefix + "." + o.api
		}
		r.birth(name, key, visible, kindOf(outT...))
	}
	return base
}

// bwdEntry runs the record of the backward of a node.
func (r *rk) bwdEntry(n *node, gin, gout []*tensor) {
	r.st.clk++
	name := n.base + ".backward"
	born := !anyTainted(gin...) && anyTainted(gout...)
	visible := r.rec.backward(name, n.vis, gin, gout, r.ph)
	if anyTainted(gin...) || anyTainted(gout...) {
		r.st.contaminated = true
	}
	if born {
		r.birth(name, n.base+".backward", visible, kindOf(gout...))
	}
}

// hiddenEvent records an unhooked computation (fused kernel, optimizer
// internals) that may create non-finite values.
func (r *rk) hiddenEvent(key string, in, out []*tensor) {
	r.st.clk++
	if !anyTainted(in...) && anyTainted(out...) {
		r.birth("", "hidden:"+key, false, kindOf(out...))
	}
	if anyTainted(in...) || anyTainted(out...) {
		r.st.contaminated = true
	}
}

// enter starts a module call.
func (r *rk) enter(m *module, s *mw.Site, in ...arg) { r.rec.enter(m, s, in) }

// exit ends the innermost module call.
func (r *rk) exit(out ...arg) { r.rec.exit(out, r.ph, r.mb) }

// paramsGrad records Module.x.parameters_grad.N for a module whose
// parameter gradients are all computed.
func (r *rk) paramsGrad(m *module, grads map[*param]*tensor) {
	if r.rec.paramsGrad(m, grads, r.ph) {
		r.st.clk++
	}
}

// birth records that an op created non-finite values from clean inputs.
func (r *rk) birth(name, key string, captured bool, kind string) {
	b := truth.Birth{Step: r.step, Rank: r.rank, Clock: r.st.clk, Name: name, Key: key, Captured: captured,
		Stage: r.ph.Stage(), Kind: kind}
	r.st.births = append(r.st.births, b)
}

func collectTensors(dst []*tensor, args []arg) []*tensor {
	for _, a := range args {
		switch v := a.(type) {
		case *tensor:
			if v != nil {
				dst = append(dst, v)
			}
		case mw.List:
			dst = collectTensors(dst, v)
		}
	}
	return dst
}
