package sim

import (
	"strconv"
	"strings"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// recorder is what msprobe records of one rank's step: it names the
// entries (per-step counters), follows the module calls and the Python
// call chains, and in a dumped step writes dump.json, collects stack.json's
// table and construct.json's members, and keeps the truth's log; it feeds
// the monitor the activations of every module call.
type recorder struct {
	format *spec.Format
	// chains are the rank's interned call chains (kept across steps);
	// world is the world group
	chains *mw.Chains
	world  *group
	// mon writes the rank's monitor rows (nil: none); step is the step
	mon  *mw.Monitor
	step int

	dumped  bool
	mix     bool
	fwdOnly bool // data_mode forward: no backward entries

	df        *mw.DumpFile
	seen      *truth.Log // what this step's dump shows (nil: not recorded)
	stacks    *mw.StackTable
	construct []mw.ConstructEntry
	cseen     map[string]bool

	counters  map[apiKey]int
	modCount  map[*module]int
	gradCount map[*module]int
	mods      []*modFrame
	chain     int32

	nameBuf []byte // scratch space of entryName
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

func newRecorder(w *world, st *rankState, step int, dumped bool) *recorder {
	return &recorder{format: &w.spec.Format, chains: st.chains, world: w.topo.world, mon: w.side.monitorOf(st.rank), step: step,
		dumped: dumped, mix: w.spec.Level == "mix", fwdOnly: w.spec.DataMode == "forward",
		counters: map[apiKey]int{}, modCount: map[*module]int{}, cseen: map[string]bool{}, gradCount: map[*module]int{}}
}

// entryName builds "prefix.api.n.forward".
func (c *recorder) entryName(prefix, api string, n int) string {
	b := append(c.nameBuf[:0], prefix...)
	b = append(b, '.')
	b = append(b, api...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ".forward"...)
	c.nameBuf = b
	return string(b)
}

// nextName is the name the next call of prefix.api gets.
func (c *recorder) nextName(prefix, api string) string {
	return c.entryName(prefix, api, c.counters[apiKey{prefix, api}])
}

// setRoot starts the chain of a root context.
func (c *recorder) setRoot(ctx *[]string, module bool) {
	c.chain = c.chains.Root(ctx, module)
}

// withFramesApply runs f inside an autograd Function called at s.
func (c *recorder) withFramesApply(s *mw.Site, f func()) {
	prev := c.chain
	ch := c.chains.Child(prev, s, false)
	c.chain = c.chains.Child(ch, mw.ApplySite, false)
	f()
	c.chain = prev
}

// parentName is the construct.json parent of a call made now in phase ph.
func (c *recorder) parentName(ph truth.Phase) string {
	if n := len(c.mods); n > 0 {
		return c.mods[n-1].name
	}
	switch ph {
	case truth.PhaseOptimizer:
		return "optimizer"
	case truth.PhaseClip:
		return "clip_grad"
	}
	return ""
}

func (c *recorder) addConstruct(name, parent string) {
	if !c.dumped || !c.mix {
		return
	}
	if parent == "optimizer" || parent == "clip_grad" {
		if !c.cseen[parent] {
			c.cseen[parent] = true
			c.construct = append(c.construct, mw.ConstructEntry{Name: parent})
		}
	}
	c.construct = append(c.construct, mw.ConstructEntry{Name: name, Parent: parent})
	for i, f := range c.mods {
		if !f.emitted {
			f.emitted = true
			p := ""
			if i > 0 {
				p = c.mods[i-1].name
			}
			c.construct = append(c.construct, mw.ConstructEntry{Name: f.name, Parent: p})
		}
	}
}

// api records a forward call made in phase ph whose tensors in and out
// are inT and outT: it returns its entry name and base name "Prefix.api.N"
// (both empty for a call msprobe does not hook) and whether dump.json
// shows it.
func (c *recorder) api(o *opSpec, inT, outT []*tensor, ph truth.Phase) (name, base string, visible bool) {
	n := 0
	if o.vis != visHidden {
		k := apiKey{o.prefix, o.api}
		n = c.counters[k]
		c.counters[k] = n + 1
		name = c.entryName(o.prefix, o.api, n)
		base = name[:len(name)-len(".forward")]
	}
	visible = c.dumped && o.vis == visDump
	if visible {
		c.df.Forward(name, o.in, o.kw, o.out, nil)
		if c.seen != nil {
			win, wout := inT, outT
			if o.inT != nil {
				win = written(o.in, o.kw)
			}
			if o.outT != nil {
				wout = collectTensors(nil, o.out)
			}
			c.noteEntry(noted{name: name, kind: truth.EntryAPI, op: apiKey{o.prefix, o.api}, site: o.site, in: win, out: wout,
				legitNeg: (o.legit && anyNegInf(outT...)) || negArg(o.in, o.kw), coll: o.coll}, ph)
		}
		c.stacks.AddAPI(o.site, c.chain, o.prefix, o.api, n)
	}
	if o.vis != visHidden {
		c.addConstruct(name, c.parentName(ph))
	}
	return name, base, visible
}

// written is every tensor of an entry's arguments, as dump.json shows them.
func written(in []arg, kw []mw.KV) []*tensor {
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

// backward records the backward entry name of a node msprobe sees as vis,
// made in phase ph, and reports whether dump.json shows it.
func (c *recorder) backward(name string, vis vis, gin, gout []*tensor, ph truth.Phase) bool {
	visible := c.dumped && vis == visDump && !c.fwdOnly
	if visible {
		mw.Backward(c.df, name, gin, gout)
		c.noteEntry(noted{name: name, kind: truth.EntryBackward, in: gin, out: gout}, ph)
	}
	if vis != visHidden && !c.fwdOnly {
		c.addConstruct(name, "")
	}
	return visible
}

// enter starts a module call.
func (c *recorder) enter(m *module, s *mw.Site, in []arg) {
	n := c.modCount[m]
	c.modCount[m] = n + 1
	f := &modFrame{m: m, prev: c.chain, in: in}
	if c.dumped && c.mix {
		f.name = "Module." + m.path + "." + m.class + ".forward." + strconv.Itoa(n)
	}
	f.chain = c.chains.Child(c.chain, s, true)
	c.chain = f.chain
	c.mods = append(c.mods, f)
	if c.dumped && c.mix {
		c.stacks.AddModule(f.chain, "Module."+m.path+"."+m.class+".forward.", n)
	}
}

// exit ends the innermost module call, made in phase ph in micro-batch mb.
func (c *recorder) exit(out []arg, ph truth.Phase, mb int) {
	f := c.mods[len(c.mods)-1]
	if c.dumped && c.mix && !f.emitted {
		c.addConstruct(f.name, c.parentOfFrame(len(c.mods)-1))
		f.emitted = true
	}
	c.mods = c.mods[:len(c.mods)-1]
	c.chain = f.prev
	if c.mon != nil {
		c.mon.Actv(f.m.path, c.step, mb, f.in, out)
	}
	if !c.dumped || !c.mix {
		return
	}
	params := []mw.KV{}
	var pts []*tensor
	for _, p := range f.m.params {
		params = append(params, mw.KV{Key: p.key, Value: p.t})
		pts = append(pts, p.t)
	}
	c.df.Forward(f.name, f.in, nil, out, params)
	c.noteEntry(noted{name: f.name, kind: truth.EntryModule, op: apiKey{"Module", f.m.path + "." + f.m.class},
		in: collectTensors(nil, f.in), out: collectTensors(nil, out), params: pts}, ph)
}

func (c *recorder) parentOfFrame(i int) string {
	if i > 0 {
		return c.mods[i-1].name
	}
	return ""
}

// paramsGrad records Module.x.parameters_grad.N, made in phase ph, for a
// module whose parameter gradients are all computed; it reports whether
// the level and data mode write the entry.
func (c *recorder) paramsGrad(m *module, grads map[*param]*tensor, ph truth.Phase) bool {
	if !c.dumped || !c.mix || c.fwdOnly {
		return false
	}
	k := m.path + "." + m.class
	n := c.gradCount[m]
	c.gradCount[m] = n + 1
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
	name := "Module." + k + ".parameters_grad." + strconv.Itoa(n)
	c.df.ParamsGrad(name, kvs)
	c.noteEntry(noted{name: name, kind: truth.EntryParamsGrad, in: gts}, ph)
	return true
}

// groupSide is the record of a group collective's side as the dump can
// pair it: by its group when msprobe recorded the group; by its entry name
// when it wrote "group": null, and as the default group when it wrote no
// group, both with every rank as participant.
func (c *recorder) groupSide(g *group, api string, send, recv []*tensor) *collSpec {
	cs := &collSpec{clock: truth.GroupClock(g.key, api), send: send, recv: recv, members: g.ranks}
	if g.world {
		return cs
	}
	switch c.format.Groups {
	case "null":
		cs.byName, cs.members = true, c.world.ranks
	case "absent":
		cs.clock, cs.members = truth.GroupClock(c.world.key, api), c.world.ranks
	}
	return cs
}

// noteEntry records an entry just written to dump.json.
func (c *recorder) noteEntry(n noted, ph truth.Phase) {
	l := c.seen
	if l == nil {
		return
	}
	e := truth.Entry{Pos: c.df.Entries() - 1, End: c.df.Offset(), Name: n.name, Kind: n.kind, Phase: ph,
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
		e.BwdFrame = c.backwardFrame(n.site)
	}
	l.Add(e)
}

// backwardFrame reports a stack with a frame of a function named backward:
// a call from an autograd backward.
func (c *recorder) backwardFrame(s *mw.Site) bool {
	if s != nil && strings.Contains(s.Line, ", in backward, ") {
		return true
	}
	return c.chains.Within(c.chain, &ctxBwdFn)
}
