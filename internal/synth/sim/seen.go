package sim

import (
	"math"
	"strings"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// holdsOf is what the tensors hold that is not legitimate, as their Max
// and Min show it (a tensor with a NaN shows NaN in both).
func holdsOf(ts ...*tensor) truth.Holds {
	var h truth.Holds
	for _, t := range ts {
		if !t.tainted() {
			continue
		}
		if t.NaN {
			h |= truth.HoldsNaN
			continue
		}
		if t.PInf {
			h |= truth.HoldsPInf
		}
		if t.NInf {
			h |= truth.HoldsNInf
		}
	}
	return h
}

// anyNegInf reports a tensor holding -inf, legitimate or not.
func anyNegInf(ts ...*tensor) bool {
	for _, t := range ts {
		if t != nil && t.NInf && !t.NaN {
			return true
		}
	}
	return false
}

// collSpec describes the collective side of an op for the record.
type collSpec struct {
	clock      truth.Clock
	send, recv []*tensor
	members    []int
	byName     bool // paired by its entry name
}

// groupSide is the record of a group collective's side as the dump can
// pair it: by its group when msprobe recorded the group; by its entry name
// when it wrote "group": null, and as the default group when it wrote no
// group, both with every rank as participant.
func (r *rk) groupSide(g *group, api string, send, recv []*tensor) *collSpec {
	cs := &collSpec{clock: truth.GroupClock(g.key, api), send: send, recv: recv, members: g.ranks}
	if g.world {
		return cs
	}
	switch r.fmt().Groups {
	case "null":
		cs.byName, cs.members = true, r.w.topo.world.ranks
	case "absent":
		cs.clock, cs.members = truth.GroupClock(r.w.topo.world.key, api), r.w.topo.world.ranks
	}
	return cs
}

// noted is an entry just written, as noteEntry records it.
type noted struct {
	name            string
	kind            truth.EntryKind
	op              apiKey   // the op (name without counter and direction)
	site            *mw.Site // the call site of an API entry
	in, out, params []*tensor
	legitNeg        bool
	coll            *collSpec
}

// noteEntry records an entry just written to dump.json.
func (r *rk) noteEntry(n noted) {
	l := r.seen
	if l == nil {
		return
	}
	e := truth.Entry{Pos: r.df.Entries() - 1, End: r.df.Offset(), Name: n.name, Kind: n.kind, Phase: r.ph,
		Op: truth.Op{Prefix: n.op.prefix, API: n.op.api}}
	e.In, e.Out, e.InParams = holdsOf(n.in...), holdsOf(n.out...), holdsOf(n.params...)
	e.In |= e.InParams
	e.InNeg = anyNegInf(n.in...) || anyNegInf(n.params...)
	e.OutNeg = anyNegInf(n.out...)
	e.LegitNeg = n.legitNeg
	if e.In != 0 {
		e.Weights, e.InGrad = true, true
		for _, t := range append(append([]*tensor(nil), n.in...), n.params...) {
			if t.tainted() && (t.param == nil || t.param.t != t) {
				e.Weights = false
			}
			if t.tainted() && !t.RG {
				e.InGrad = false
			}
		}
	}
	if cs := n.coll; cs != nil {
		e.Coll = &truth.Coll{Clock: cs.clock, Send: holdsOf(cs.send...), Recv: holdsOf(cs.recv...), Members: cs.members, ByName: cs.byName}
		e.In, e.Out = e.Coll.Send, e.Coll.Recv
	}
	if n.kind == truth.EntryAPI && (e.Coll != nil || e.In != 0 || e.Out != 0) {
		e.BwdFrame = r.backwardFrame(n.site)
	}
	l.Add(e)
}

// backwardFrame reports a stack with a frame of a function named backward:
// a call from an autograd backward.
func (r *rk) backwardFrame(s *mw.Site) bool {
	if s != nil && strings.Contains(s.Line, ", in backward, ") {
		return true
	}
	return r.st.chains.Within(r.chain, &ctxBwdFn)
}

// negArg reports a -inf among non-tensor arguments.
func negArg(in []arg, kw []mw.KV) bool {
	for _, a := range in {
		if f, ok := a.(mw.Float); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	for _, p := range kw {
		if f, ok := p.Value.(mw.Float); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	return false
}
