package synth

import (
	"math"
	"strings"
)

// What the dump shows. While a dumped step runs, every rank keeps a short
// record of the entries it wrote that matter to an analysis: the ones that
// held illegitimate non-finite values (up to the first one with a NaN
// output), the ones that make -inf on purpose (masks), and every
// collective side with the physical instance it took part in. At the end of
// the step the records of all ranks, cut where the damage of the spec cuts
// the files, make the step's view (view.go), from which the truth is read.

// Holds is a set of illegitimate non-finite values.
type Holds uint8

const (
	hNaN Holds = 1 << iota
	hPInf
	hNInf
)

func (h Holds) has(x Holds) bool { return h&x != 0 }

// kind names what a set of values holds: nan when it holds NaN, else inf.
func (h Holds) kind() string {
	if h.has(hNaN) {
		return "nan"
	}
	return "inf"
}

// holdsOf is what the tensors hold that is not legitimate, as their Max
// and Min show it (a tensor with a NaN shows NaN in both).
func holdsOf(ts ...*tensor) Holds {
	var h Holds
	for _, t := range ts {
		if !t.tainted() {
			continue
		}
		if t.NaN {
			h |= hNaN
			continue
		}
		if t.PInf {
			h |= hPInf
		}
		if t.NInf {
			h |= hNInf
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

// entKind is the kind of a dump entry.
type entKind uint8

const (
	entAPI entKind = iota
	entBackward
	entModule
	entParamsGrad
)

// clockID is a pairing key without its counter: a group and an api, a
// sender and a receiver, or an entry name.
type clockID struct {
	p2p      bool
	group    string
	api      string
	from, to int
	name     string
}

// instID is one physical collective instance: the k-th call of a clock.
type instID struct {
	clock clockID
	k     int
}

// collSide is one rank's side of a collective instance.
type collSide struct {
	inst       instID
	send, recv Holds
	members    []int // participants, ascending
}

// seenEntry is one recorded dump entry.
type seenEntry struct {
	pos  int   // index in dump.json
	end  int64 // byte offset after the entry
	name string
	kind entKind
	// ph is the phase the analysis sees, phys the one the simulation ran
	// the call in (they differ where the dump cannot tell, see view.go).
	ph, phys Phase
	// in, out: illegitimate non-finite values in the inputs and outputs;
	// inParams: those under a module entry's parameters.
	in, out, inParams Holds
	// inNeg, outNeg: -inf anywhere, legitimate or not.
	inNeg, outNeg bool
	// legitNeg: the entry makes -inf on purpose (a mask) or has a -inf
	// non-tensor argument.
	legitNeg bool
	op       apiKey
	// bwdFrame: the stack has a frame of a function named backward
	bwdFrame bool
	// weights: every illegitimate input is a parameter as the update of an
	// earlier step wrote it (nothing else writes parameters); inGrad:
	// every illegitimate input requires grad.
	weights, inGrad bool
	// nextBwd is the end offset of the next backward entry in the file,
	// -1 when none follows; afterBwd: a backward entry comes before it.
	nextBwd  int64
	afterBwd bool
	coll     *collSide
}

// stepLog is one rank's record of one dumped step.
type stepLog struct {
	entries []seenEntry
	// pending are the entries still waiting for a backward entry after
	// them.
	pending []int
	// nanSeen: an entry with a NaN output was recorded; later entries are
	// recorded only when they are collectives.
	nanSeen bool
	counts  map[clockID]int
	// total is the number of entries written, firstEnd the end offset of
	// the first one; bwdSeen: a backward entry was written, firstBwdEnd
	// the end offset of the first one (-1: none); firstOpt is the position
	// of the first entry the simulation ran in the optimizer or in the
	// gradient clipping (-1: none).
	total       int
	firstEnd    int64
	bwdSeen     bool
	firstBwdEnd int64
	firstOpt    int
	// before are the ops of the entries before the first backward entry.
	before      map[apiKey]bool
	firstBwd    int   // position of the first backward entry (-1: none)
	lastBwd     int   // position of the last backward entry (-1: none)
	firstOptEnd int64 // end offset of the entry at firstOpt
}

func newStepLog() *stepLog {
	return &stepLog{counts: map[clockID]int{}, firstBwdEnd: -1, firstOpt: -1, firstBwd: -1, lastBwd: -1, before: map[apiKey]bool{}}
}

// add appends an entry when it matters: collectives always, the others
// when they hold non-finite values or make masks, up to the first NaN.
func (l *stepLog) add(e seenEntry) {
	e.nextBwd, e.afterBwd = -1, l.bwdSeen
	if l.total == 0 {
		l.firstEnd = e.end
	}
	l.total++
	if e.kind == entBackward || e.kind == entParamsGrad {
		for _, i := range l.pending {
			l.entries[i].nextBwd = e.end
		}
		l.pending = l.pending[:0]
		if !l.bwdSeen {
			l.firstBwd, l.firstBwdEnd = e.pos, e.end
		}
		l.bwdSeen = true
		l.lastBwd = e.pos
	} else if !l.bwdSeen {
		l.before[e.op] = true
	}
	if l.firstOpt < 0 && (e.ph == phOptimizer || e.ph == phClip) {
		l.firstOpt, l.firstOptEnd = e.pos, e.end
	}
	keep := e.coll != nil || (!l.nanSeen && (e.in != 0 || e.out != 0 || e.inParams != 0 || e.legitNeg))
	if !keep {
		return
	}
	if e.coll == nil && e.out.has(hNaN) {
		l.nanSeen = true
	}
	if e.coll != nil && e.coll.recv.has(hNaN) {
		// a collective that received NaN is a first NaN too
		l.nanSeen = true
	}
	l.entries = append(l.entries, e)
	l.pending = append(l.pending, len(l.entries)-1)
}

// collSpec describes the collective side of an op for the record.
type collSpec struct {
	clock      clockID
	send, recv []*tensor
	members    []int
	byName     bool // paired by its entry name
}

// groupSide is the record of a group collective's side as the dump can
// pair it: by its group when msprobe recorded the group; by its entry name
// when it wrote "group": null, and as the default group when it wrote no
// group, both with every rank as participant.
func (r *rk) groupSide(g *group, api string, send, recv []*tensor) *collSpec {
	cs := &collSpec{clock: clockID{group: g.key, api: api}, send: send, recv: recv, members: g.ranks}
	if g.world {
		return cs
	}
	switch r.fmt().Groups {
	case "null":
		cs.byName, cs.members = true, r.w.topo.world.ranks
	case "absent":
		cs.clock.group, cs.members = r.w.topo.world.key, r.w.topo.world.ranks
	}
	return cs
}

// p2pClock is the pairing key of the messages from one rank to another.
func p2pClock(from, to int) clockID { return clockID{p2p: true, from: from, to: to} }

// noted is an entry just written, as noteEntry records it.
type noted struct {
	name            string
	kind            entKind
	op              apiKey // the op (name without counter and direction)
	site            *Site  // the call site of an API entry
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
	e := seenEntry{pos: r.df.entries - 1, end: r.df.j.offset(), name: n.name, kind: n.kind, ph: r.ph, phys: r.ph, op: n.op}
	e.in, e.out, e.inParams = holdsOf(n.in...), holdsOf(n.out...), holdsOf(n.params...)
	e.in |= e.inParams
	e.inNeg = anyNegInf(n.in...) || anyNegInf(n.params...)
	e.outNeg = anyNegInf(n.out...)
	e.legitNeg = n.legitNeg
	if e.in != 0 {
		e.weights, e.inGrad = true, true
		for _, t := range append(append([]*tensor(nil), n.in...), n.params...) {
			if t.tainted() && (t.param == nil || t.param.t != t) {
				e.weights = false
			}
			if t.tainted() && !t.RG {
				e.inGrad = false
			}
		}
	}
	if cs := n.coll; cs != nil {
		clock := cs.clock
		if cs.byName {
			clock = clockID{name: n.name}
		}
		k := l.counts[clock]
		l.counts[clock] = k + 1
		e.coll = &collSide{inst: instID{clock, k}, send: holdsOf(cs.send...), recv: holdsOf(cs.recv...), members: cs.members}
		e.in, e.out = e.coll.send, e.coll.recv
	}
	if n.kind == entAPI && (e.coll != nil || e.in != 0 || e.out != 0) {
		e.bwdFrame = r.backwardFrame(n.site)
	}
	l.add(e)
}

// backwardFrame reports a stack with a frame of a function named backward:
// a call from an autograd backward.
func (r *rk) backwardFrame(s *Site) bool {
	if s != nil && strings.Contains(s.Line, ", in backward, ") {
		return true
	}
	c := r.st.chains
	id := r.chain
	for id > 0 && c.nodes[id].parent > 0 {
		id = c.nodes[id].parent
	}
	return id > 0 && c.roots[&ctxBwdFn] == id
}

// negArg reports a -inf among non-tensor arguments.
func negArg(in []arg, kw []KV) bool {
	for _, a := range in {
		if f, ok := a.(aFloat); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	for _, p := range kw {
		if f, ok := p.Value.(aFloat); ok && math.IsInf(float64(f), -1) {
			return true
		}
	}
	return false
}

// firstTaintEnd is the end offset of the first recorded entry that held
// illegitimate non-finite values, 0 when none did.
func (l *stepLog) firstTaintEnd() int64 {
	if l == nil {
		return 0
	}
	for _, e := range l.entries {
		if e.in != 0 || e.out != 0 {
			return e.end
		}
	}
	return 0
}
