package sim

import (
	"strconv"

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

	df        *mw.DumpFile
	seen      *truth.Log // what this step's dump shows (nil: not recorded)
	counters  map[apiKey]int
	modCount  map[*module]int
	construct []mw.ConstructEntry
	cseen     map[string]bool
	mods      []*modFrame
	chain     int32
	stacks    *mw.StackTable

	tape      []*node
	tokens    map[*module]int // tokens that reached the modules that count them
	ph        truth.Phase
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

func (r *rk) fmt() *spec.Format { return &r.w.spec.Format }

// setPhase switches phase and root context.
func (r *rk) setPhase(p truth.Phase, ctx *[]string, module bool) {
	r.ph = p
	r.chain = r.st.chains.Root(ctx, module)
}

// withFramesApply runs f inside an autograd Function called at s.
func (r *rk) withFramesApply(s *mw.Site, f func()) {
	prev := r.chain
	c := r.st.chains.Child(prev, s, false)
	r.chain = r.st.chains.Child(c, mw.ApplySite, false)
	f()
	r.chain = prev
}

func (r *rk) parentName() string {
	if n := len(r.mods); n > 0 {
		return r.mods[n-1].name
	}
	switch r.ph {
	case truth.PhaseOptimizer:
		return "optimizer"
	case truth.PhaseClip:
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
			r.construct = append(r.construct, mw.ConstructEntry{Name: parent})
		}
	}
	r.construct = append(r.construct, mw.ConstructEntry{Name: name, Parent: parent})
	for i, f := range r.mods {
		if !f.emitted {
			f.emitted = true
			p := ""
			if i > 0 {
				p = r.mods[i-1].name
			}
			r.construct = append(r.construct, mw.ConstructEntry{Name: f.name, Parent: p})
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
	visible := r.dumped && o.vis == visDump
	born := false
	if o.collective {
		born = o.birth
	} else if !o.legit {
		born = !anyTainted(inT...) && anyTainted(outT...)
	}
	if visible {
		r.df.Forward(name, o.in, o.kw, o.out, nil)
		if r.seen != nil {
			win, wout := inT, outT
			if o.inT != nil {
				win = r.written(o.in, o.kw)
			}
			if o.outT != nil {
				wout = collectTensors(nil, o.out)
			}
			r.noteEntry(noted{name: name, kind: truth.EntryAPI, op: apiKey{o.prefix, o.api}, site: o.site, in: win, out: wout,
				legitNeg: (o.legit && anyNegInf(outT...)) || negArg(o.in, o.kw), coll: o.coll})
		}
		r.stacks.AddAPI(o.site, r.chain, o.prefix, o.api, n)
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
func (r *rk) written(in []arg, kw []mw.KV) []*tensor {
	ts := collectTensors(nil, in)
	for _, p := range kw {
		if t, ok := p.Value.(*tensor); ok && t != nil {
			ts = append(ts, t)
		} else if l, ok := p.Value.(mw.List); ok {
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
		mw.Backward(r.df, name, gin, gout)
		r.noteEntry(noted{name: name, kind: truth.EntryBackward, in: gin, out: gout})
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
func (r *rk) enter(m *module, s *mw.Site, in ...arg) {
	n := r.modCount[m]
	r.modCount[m] = n + 1
	f := &modFrame{m: m, prev: r.chain, in: in}
	if r.dumped && r.mix {
		f.name = "Module." + m.path + "." + m.class + ".forward." + strconv.Itoa(n)
	}
	f.chain = r.st.chains.Child(r.chain, s, true)
	r.chain = f.chain
	r.mods = append(r.mods, f)
	if r.dumped && r.mix {
		r.stacks.AddModule(f.chain, "Module."+m.path+"."+m.class+".forward.", n)
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
		m.Actv(f.m.path, r.step, r.mb, f.in, out)
	}
	if !r.dumped || !r.mix {
		return
	}
	params := []mw.KV{}
	var pts []*tensor
	for _, p := range f.m.params {
		params = append(params, mw.KV{Key: p.key, Value: p.t})
		pts = append(pts, p.t)
	}
	r.df.Forward(f.name, f.in, nil, out, params)
	r.noteEntry(noted{name: f.name, kind: truth.EntryModule, op: apiKey{"Module", f.m.path + "." + f.m.class},
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
	var kvs []mw.KV
	var gts []*tensor
	ps := m.params
	for i := range ps {
		p := ps[i]
		if m.gradReversed {
			p = ps[len(ps)-1-i]
		}
		if g := grads[p]; g != nil {
			kvs = append(kvs, mw.KV{Key: p.key, Value: g})
			gts = append(gts, g)
		}
	}
	r.st.clk++
	name := "Module." + k + ".parameters_grad." + strconv.Itoa(n)
	r.df.ParamsGrad(name, kvs)
	r.noteEntry(noted{name: name, kind: truth.EntryParamsGrad, in: gts})
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
