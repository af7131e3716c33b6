package synth

import (
	"strconv"
)

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

// Phase is the part of a training step an op runs in.
type Phase uint8

const (
	phForward Phase = iota
	phBackward
	phSync
	phClip
	phOptimizer
)

// Name is the verdict's Name of a phase.
func (p Phase) Name() string {
	switch p {
	case phForward:
		return "forward"
	case phBackward:
		return "backward"
	case phSync:
		return "gradient reduction"
	}
	return "optimizer"
}

// Stage is the truth's name of a phase.
func (p Phase) Stage() string {
	switch p {
	case phForward:
		return "forward"
	case phBackward, phSync:
		return "backward"
	}
	return "optimizer"
}

// opSpec describes one call of an API.
type opSpec struct {
	prefix, api string
	site        *Site
	vis         vis
	in          []arg
	kw          []KV
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

// cEnt is a construct.json member; parent "" is null.
type cEnt struct{ name, parent string }

// modFrame is a module being executed.
type modFrame struct {
	m       *module
	name    string
	chain   int32
	prev    int32
	in      []arg
	emitted bool
}

// rk executes one rank's step and records what msprobe would record.
type rk struct {
	w          *world
	st         *rankState
	rank, step int
	mb         int // micro-batch of the step
	dumped     bool
	mix        bool
	fwdOnly    bool // data_mode forward: no backward entries
	g          *gen

	df        *dumpFile
	seen      *stepLog // what this step's dump shows (nil: not recorded)
	counters  map[apiKey]int
	modCount  map[*module]int
	construct []cEnt
	cseen     map[string]bool
	mods      []*modFrame
	chain     int32
	stacks    *stackTable

	tape      []*node
	tokens    map[*module]int // tokens that reached the modules that count them
	ph        Phase
	collSeq   map[*group]int
	p2pSeq    map[p2pKey]int
	gradCount map[*module]int

	// inject, when set, alters the output of the next op (the physical
	// event of a fault: a corrupted value, a duplicated row).
	inject func(*tensor)

	// scratch space of op, reused from call to call
	nameBuf   []byte
	tIn, tOut []*tensor
}

// p2pKey counts the messages a rank sends to or receives from a peer.
type p2pKey struct {
	send bool
	peer int
}

// apiKey identifies an API for the per-step call counters.
type apiKey struct{ prefix, api string }

// entryName builds "prefix.api.n.forward".
func (r *rk) entryName(prefix, api string, n int) string {
	b := append(r.nameBuf[:0], prefix...)
	b = append(b, '.')
	b = append(b, api...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ".forward"...)
	r.nameBuf = b
	return string(b)
}

func (r *rk) fmt() *Format { return &r.w.spec.Format }

// setPhase switches phase and root context.
func (r *rk) setPhase(p Phase, ctx *[]string, module bool) {
	r.ph = p
	r.chain = r.st.chains.root(ctx, module)
}

// withFramesApply runs f inside an autograd Function called at s.
func (r *rk) withFramesApply(s *Site, f func()) {
	prev := r.chain
	c := r.st.chains.child(prev, s, false)
	r.chain = r.st.chains.child(c, applySite, false)
	f()
	r.chain = prev
}

var applySite = &Site{ID: -1 << 20, Line: frApply}

func (r *rk) parentName() string {
	if n := len(r.mods); n > 0 {
		return r.mods[n-1].name
	}
	switch r.ph {
	case phOptimizer:
		return "optimizer"
	case phClip:
		return "clip_grad"
	}
	return ""
}

func (r *rk) addConstruct(name, parent string) {
	if !r.dumped || !r.mix {
		return
	}
	if parent == "optimizer" || parent == "clip_grad" {
		if !r.cseen[parent] {
			r.cseen[parent] = true
			r.construct = append(r.construct, cEnt{parent, ""})
		}
	}
	r.construct = append(r.construct, cEnt{name, parent})
	for i, f := range r.mods {
		if !f.emitted {
			f.emitted = true
			p := ""
			if i > 0 {
				p = r.mods[i-1].name
			}
			r.construct = append(r.construct, cEnt{f.name, p})
		}
	}
}

// op records a forward call and returns its base name "Prefix.api.N".
func (r *rk) op(o *opSpec) string {
	r.st.clk++
	base, name, n := "", "", 0
	if o.vis != visHidden {
		k := apiKey{o.prefix, o.api}
		n = r.counters[k]
		r.counters[k] = n + 1
		name = r.entryName(o.prefix, o.api, n)
		base = name[:len(name)-len(".forward")]
	}
	inT, outT := o.inT, o.outT
	if inT == nil {
		inT = collectTensors(r.tIn[:0], o.in)
		for _, p := range o.kw {
			if t, ok := p.Value.(*tensor); ok && t != nil {
				inT = append(inT, t)
			} else if l, ok := p.Value.(aList); ok {
				inT = collectTensors(inT, l)
			}
		}
		r.tIn = inT
	}
	if outT == nil {
		outT = collectTensors(r.tOut[:0], o.out)
		r.tOut = outT
	}
	visible := r.dumped && o.vis == visDump
	born := false
	if o.collective {
		born = o.birth
	} else if !o.legit {
		born = !anyTainted(inT...) && anyTainted(outT...)
	}
	if visible {
		r.df.forward(name, o.in, o.kw, o.out, nil)
		if r.seen != nil {
			win, wout := inT, outT
			if o.inT != nil {
				win = r.written(o.in, o.kw)
			}
			if o.outT != nil {
				wout = collectTensors(nil, o.out)
			}
			r.noteEntry(noted{name: name, kind: entAPI, op: apiKey{o.prefix, o.api}, site: o.site, in: win, out: wout,
				legitNeg: (o.legit && anyNegInf(outT...)) || negArg(o.in, o.kw), coll: o.coll})
		}
		wrap := frRegistry
		if r.fmt().StackVersion == 1 {
			if w, ok := v1Wrappers[o.prefix]; ok {
				wrap = w
			}
		}
		r.stacks.addAPI(stackKey{wrap, o.site.ID, r.chain}, o.site.Line, o.prefix, o.api, n)
	}
	if o.vis != visHidden {
		r.addConstruct(name, r.parentName())
	}
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

// written is every tensor of an entry's arguments, as dump.json shows them.
func (r *rk) written(in []arg, kw []KV) []*tensor {
	ts := collectTensors(nil, in)
	for _, p := range kw {
		if t, ok := p.Value.(*tensor); ok && t != nil {
			ts = append(ts, t)
		} else if l, ok := p.Value.(aList); ok {
			ts = collectTensors(ts, l)
		}
	}
	return ts
}

// bwdEntry records the backward of a node.
func (r *rk) bwdEntry(n *node, gin, gout []*tensor) {
	r.st.clk++
	name := n.base + ".backward"
	visible := r.dumped && n.vis == visDump && !r.fwdOnly
	born := !anyTainted(gin...) && anyTainted(gout...)
	if visible {
		r.df.backward(name, gin, gout)
		r.noteEntry(noted{name: name, kind: entBackward, in: gin, out: gout})
	}
	if n.vis != visHidden && !r.fwdOnly {
		r.addConstruct(name, "")
	}
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
func (r *rk) enter(m *module, s *Site, in ...arg) {
	n := r.modCount[m]
	r.modCount[m] = n + 1
	f := &modFrame{m: m, prev: r.chain, in: in}
	if r.dumped && r.mix {
		f.name = "Module." + m.path + "." + m.class + ".forward." + strconv.Itoa(n)
	}
	f.chain = r.st.chains.child(r.chain, s, true)
	r.chain = f.chain
	r.mods = append(r.mods, f)
	if r.dumped && r.mix {
		r.stacks.addModule(stackKey{"", 0, f.chain}, m, n)
	}
}

// exit ends the innermost module call.
func (r *rk) exit(out ...arg) {
	f := r.mods[len(r.mods)-1]
	if r.dumped && r.mix && !f.emitted {
		r.addConstruct(f.name, r.parentOfFrame(len(r.mods)-1))
		f.emitted = true
	}
	r.mods = r.mods[:len(r.mods)-1]
	r.chain = f.prev
	if m := r.w.side.monitorOf(r.rank); m != nil {
		m.actv(f.m.path, r.step, r.mb, f.in, out)
	}
	if !r.dumped || !r.mix {
		return
	}
	params := []KV{}
	var pts []*tensor
	for _, p := range f.m.params {
		params = append(params, KV{p.key, p.t})
		pts = append(pts, p.t)
	}
	r.df.forward(f.name, f.in, nil, out, params)
	r.noteEntry(noted{name: f.name, kind: entModule, op: apiKey{"Module", f.m.path + "." + f.m.class},
		in: collectTensors(nil, f.in), out: collectTensors(nil, out), params: pts})
}

func (r *rk) parentOfFrame(i int) string {
	if i > 0 {
		return r.mods[i-1].name
	}
	return ""
}

// paramsGrad records Module.x.parameters_grad.N for a module whose
// parameter gradients are all computed.
func (r *rk) paramsGrad(m *module, grads map[*param]*tensor) {
	if !r.dumped || !r.mix || r.fwdOnly {
		return
	}
	k := m.path + "." + m.class
	n := r.gradCount[m]
	r.gradCount[m] = n + 1
	var kvs []KV
	var gts []*tensor
	ps := m.params
	for i := range ps {
		p := ps[i]
		if m.gradReversed {
			p = ps[len(ps)-1-i]
		}
		if g := grads[p]; g != nil {
			kvs = append(kvs, KV{p.key, g})
			gts = append(gts, g)
		}
	}
	r.st.clk++
	name := "Module." + k + ".parameters_grad." + strconv.Itoa(n)
	r.df.paramsGrad(name, kvs)
	r.noteEntry(noted{name: name, kind: entParamsGrad, in: gts})
}

// birth records that an op created non-finite values from clean inputs.
func (r *rk) birth(name, key string, captured bool, kind string) {
	b := Birth{Step: r.step, Rank: r.rank, Clock: r.st.clk, Name: name, Key: key, Captured: captured,
		Stage: r.ph.Stage(), Kind: kind}
	if captured {
		b.end = r.df.j.offset()
	}
	r.st.births = append(r.st.births, b)
}

func collectTensors(dst []*tensor, args []arg) []*tensor {
	for _, a := range args {
		switch v := a.(type) {
		case *tensor:
			if v != nil {
				dst = append(dst, v)
			}
		case aList:
			dst = collectTensors(dst, v)
		}
	}
	return dst
}
