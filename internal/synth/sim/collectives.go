package sim

import (
	"context"
	"math"
	"slices"
	"strconv"
	"sync"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/truth"
)

// comm is the meeting point of the ranks' collectives of one step.
type comm struct {
	ctx  context.Context
	mu   sync.Mutex
	rv   map[collKey]*rendezvous
	mail map[string]chan p2pMsg
}

// collKey identifies the n-th collective call of a kind in a group.
type collKey struct {
	kind byte // 'r' all_reduce, 'a' all_to_all_single
	g    *group
	n    int
}

type rendezvous struct {
	n    int
	in   []collIn
	out  []collOut
	done chan struct{}
}

// collIn is one participant's contribution.
type collIn struct {
	rank         int
	clk          int64
	name         string // the participant's entry name
	contaminated bool
	t            *tensor   // all_reduce, broadcast
	pieces       []*tensor // all_to_all: one piece per destination
	counts       []int
}

// collOut is what a participant gets back.
type collOut struct {
	clk    int64
	t      *tensor
	pieces []*tensor
	counts []int
	birth  bool
	// tainted: the participant received illegitimate non-finite data
	tainted bool
}

type p2pMsg struct {
	t    *tensor
	clk  int64
	name string
	rank int
}

func newComm(ctx context.Context) *comm {
	return &comm{ctx: ctx, rv: map[collKey]*rendezvous{}, mail: map[string]chan p2pMsg{}}
}

// errAborted unwinds a rank goroutine when another one failed.
type errAborted struct{ err error }

// meet blocks until every member of g contributed; the last one computes
// the results.
func (c *comm) meet(key collKey, size, idx int, in collIn, compute func([]collIn) []collOut) collOut {
	c.mu.Lock()
	rv := c.rv[key]
	if rv == nil {
		rv = &rendezvous{in: make([]collIn, size), done: make(chan struct{})}
		c.rv[key] = rv
	}
	rv.in[idx] = in
	rv.n++
	last := rv.n == size
	if last {
		delete(c.rv, key)
	}
	c.mu.Unlock()
	if last {
		rv.out = compute(rv.in)
		close(rv.done)
	} else {
		select {
		case <-rv.done:
		case <-c.ctx.Done():
			panic(errAborted{c.ctx.Err()})
		}
	}
	return rv.out[idx]
}

func (c *comm) box(key string) chan p2pMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.mail[key]
	if ch == nil {
		ch = make(chan p2pMsg, 1)
		c.mail[key] = ch
	}
	return ch
}

func (c *comm) post(key string, m p2pMsg) {
	select {
	case c.box(key) <- m:
	case <-c.ctx.Done():
		panic(errAborted{c.ctx.Err()})
	}
}

func (c *comm) take(key string) p2pMsg {
	ch := c.box(key)
	select {
	case m := <-ch:
		c.mu.Lock()
		delete(c.mail, key)
		c.mu.Unlock()
		return m
	case <-c.ctx.Done():
		panic(errAborted{c.ctx.Err()})
	}
}

// nextColl returns the key of this rank's next collective of a kind in g
// (the n-th collective in g this step) and a seed derived from the group,
// the step and n.
func (r *rk) nextColl(kind byte, g *group) (collKey, uint64) {
	n := r.collSeq[g]
	r.collSeq[g] = n + 1
	seed := fnvAdd(g.keyHash, "|"+strconv.Itoa(r.step)+"|"+strconv.Itoa(n))
	return collKey{kind, g, n}, seed
}

// groupKw is the group keyword as the format records it.
func (r *rk) groupKw(g *group) []mw.KV {
	if g.world {
		return nil
	}
	switch r.fmt().Groups {
	case "recorded":
		return []mw.KV{{Key: "group", Value: mw.Group{Ranks: g.ranks, ID: g.id}}}
	case "null":
		return []mw.KV{{Key: "group", Value: nil}}
	}
	return nil
}

func kwValues(kw []mw.KV) []arg {
	a := make([]arg, len(kw))
	for i, p := range kw {
		a[i] = p.Value
	}
	return a
}

// sumTensors is the elementwise sum of the participants' tensors.
func sumTensors(ts []*tensor, g *gen) *tensor {
	o := &tensor{Tensor: mw.Tensor{Shape: ts[0].Shape, DT: ts[0].DT}}
	var dev2, norm2, spike, low float64
	maxDev, minDev := 0.0, 0.0
	for _, t := range ts {
		o.Mean += t.Mean
		o.Std = math.Hypot(o.Std, t.Std)
		norm2 += t.Norm * t.Norm
		d := t.Max - t.Mean
		dev2 += d * d
		maxDev = math.Max(maxDev, d)
		minDev = math.Max(minDev, t.Mean-t.Min)
		if t.Spike {
			spike += t.Max
		}
		if t.SpikeLow {
			low += t.Min
		}
		flagsAdd(o, o, t, false)
	}
	o.Max = o.Mean + math.Max(maxDev, math.Sqrt(dev2)*(0.8+0.2*g.u()))
	o.Min = o.Mean - math.Max(minDev, math.Sqrt(dev2)*(0.8+0.2*g.u()))
	if spike > 0 {
		o.Max = math.Max(o.Max, spike)
		o.Spike = true
	}
	if low < 0 {
		o.Min = math.Min(o.Min, low)
		o.SpikeLow = true
	}
	o.Norm = math.Sqrt(norm2) * (1 + 0.3*g.u())
	if o.Numel() <= 1 {
		o.Max, o.Min, o.Norm = o.Mean, o.Mean, math.Abs(o.Mean)
	}
	o.Zero = slices.ContainsFunc(ts, func(t *tensor) bool { return t.Zero }) && !slices.ContainsFunc(ts, func(t *tensor) bool { return !t.Zero })
	o.ZeroRow = o.Zero
	o.Legit = false
	return o.fin()
}

// allReduce is Distributed.all_reduce(t, op=SUM, group=g) in place.
func (r *rk) allReduce(s *mw.Site, t *tensor, g *group) *tensor {
	kw := append([]mw.KV{{Key: "op", Value: mw.ReduceOp("RedOpType.SUM")}}, r.groupKw(g)...)
	if g.size() < 2 {
		return t
	}
	in := collIn{rank: r.rank, clk: r.st.clk, name: r.rec.nextName("Distributed", "all_reduce"), contaminated: r.st.contaminated, t: t}
	key, seed := r.nextColl('r', g)
	res := r.w.comm.meet(key, g.size(), g.index(r.rank), in, func(ins []collIn) []collOut {
		ts := make([]*tensor, len(ins))
		var clk int64
		for i, x := range ins {
			ts[i] = x.t
			clk = max(clk, x.clk)
		}
		sum := sumTensors(ts, newGen(uint64(r.w.spec.Seed), seed))
		out := make([]collOut, len(ins))
		r.w.judge(ins, func(int) *tensor { return sum }, out)
		for i := range out {
			out[i].clk = clk + 1
			c := sum.clone()
			c.RG = false
			out[i].t = c
		}
		return out
	})
	r.st.clk = res.clk - 1
	if res.tainted {
		r.st.contaminated = true
	}
	o := res.t
	o.RG = t.RG
	outArgs := append([]arg{o}, kwValues(kw)...)
	r.op(&opSpec{prefix: "Distributed", api: "all_reduce", site: s, in: args(t), kw: kw, out: outArgs,
		inT: []*tensor{t}, outT: []*tensor{o}, collective: true, birth: res.birth,
		coll: r.rec.groupSide(g, "all_reduce", []*tensor{t}, []*tensor{o})})
	return o
}

// judge decides the births of a collective: a collective whose inputs
// were all clean made what its participants received. received(i) is what
// participant i gets.
func (w *world) judge(ins []collIn, received func(int) *tensor, out []collOut) {
	anyTaintIn := false
	for i, x := range ins {
		sent := x.t.tainted()
		for _, p := range x.pieces {
			sent = sent || p.tainted()
		}
		anyTaintIn = anyTaintIn || sent
		out[i].tainted = received(i).tainted()
	}
	if !anyTaintIn {
		for i := range ins {
			out[i].birth = received(i).tainted()
		}
	}
}

// a2aResult is what one participant of an all_to_all_single receives.
type a2aResult struct {
	recv   *tensor
	pieces []*tensor // by source
	counts []int     // rows by source
}

// allToAll is Distributed.all_to_all_single(output, input, out_splits,
// in_splits, group=g) issued at site s into buf. pieces[d] is what goes to
// the d-th member of g, counts[d] its rows; splits says whether the split
// sizes are passed (variable-size exchange).
func (r *rk) allToAll(s *mw.Site, buf, input *tensor, pieces []*tensor, counts []int, splits bool, g *group, rowShape []int) a2aResult {
	in := collIn{rank: r.rank, clk: r.st.clk, name: r.rec.nextName("Distributed", "all_to_all_single"),
		contaminated: r.st.contaminated, pieces: make([]*tensor, len(pieces)), counts: counts}
	for i, p := range pieces {
		if counts[i] > 0 {
			in.pieces[i] = p
		}
	}
	key, _ := r.nextColl('a', g)
	me := g.index(r.rank)
	res := r.w.comm.meet(key, g.size(), me, in, func(ins []collIn) []collOut {
		var clk int64
		for _, x := range ins {
			clk = max(clk, x.clk)
		}
		out := make([]collOut, len(ins))
		recv := make([]*tensor, len(ins))
		for j := range ins {
			ps := make([]*tensor, len(ins))
			cs := make([]int, len(ins))
			for i, x := range ins {
				ps[i] = x.pieces[j]
				cs[i] = x.counts[j]
			}
			out[j].pieces = ps
			out[j].counts = cs
			recv[j] = joinPieces(ps, cs, input.DT, rowShape)
			out[j].clk = clk + 1
		}
		r.w.judge(ins, func(j int) *tensor { return recv[j] }, out)
		for j := range out {
			out[j].t = recv[j]
		}
		return out
	})
	r.st.clk = res.clk - 1
	if res.tainted {
		r.st.contaminated = true
	}
	kw := r.groupKw(g)
	inArgs := []arg{r.bufArg(buf), input}
	if splits {
		inArgs = append(inArgs, mw.IntList(res.counts), mw.IntList(counts))
	}
	outArgs := append([]arg{res.t}, inArgs[1:]...)
	outArgs = append(outArgs, kwValues(kw)...)
	r.op(&opSpec{prefix: "Distributed", api: "all_to_all_single", site: s, in: inArgs, kw: kw, out: outArgs,
		inT: []*tensor{input}, outT: []*tensor{res.t}, collective: true, birth: res.birth,
		coll: r.rec.groupSide(g, "all_to_all_single", []*tensor{input}, []*tensor{res.t})})
	return a2aResult{recv: res.t, pieces: res.pieces, counts: res.counts}
}

// joinPieces builds the received tensor out of the pieces.
func joinPieces(ps []*tensor, counts []int, dt mw.DType, rowShape []int) *tensor {
	var o *tensor
	rows := 0
	for i, p := range ps {
		if p == nil || counts[i] == 0 {
			continue
		}
		rows += counts[i]
		if o == nil {
			o = p.clone()
			continue
		}
		w := float64(counts[i])
		o.Mean = (o.Mean*float64(rows-counts[i]) + p.Mean*w) / float64(rows)
		o.Max = math.Max(o.Max, p.Max)
		o.Min = math.Min(o.Min, p.Min)
		o.Norm = math.Hypot(o.Norm, p.Norm)
		o.Std = math.Max(o.Std, p.Std)
		o.NaN, o.PInf, o.NInf = o.NaN || p.NaN, o.PInf || p.PInf, o.NInf || p.NInf
		o.Zero, o.ZeroRow = o.Zero || p.Zero, o.ZeroRow || p.ZeroRow
		o.Legit = o.Legit && p.Legit
	}
	shape := append([]int{rows}, rowShape...)
	if o == nil {
		o = &tensor{Tensor: mw.Tensor{DT: dt, Empty: true}}
	}
	o.Shape = shape
	if rows == 0 {
		o.Empty = true
	}
	o.RG = false
	o.node, o.param = nil, nil
	return o
}

// sendRecv moves t from this rank to dst (send side).
func (r *rk) send(s *mw.Site, t *tensor, dst int) {
	seq := r.p2pSeq[p2pKey{send: true, peer: dst}]
	r.p2pSeq[p2pKey{send: true, peer: dst}] = seq + 1
	name := r.rec.nextName("Distributed", "send")
	r.st.clk++
	r.w.comm.post("p2p|"+strconv.Itoa(r.rank)+">"+strconv.Itoa(dst)+"|"+strconv.Itoa(r.step)+"|"+strconv.Itoa(seq),
		p2pMsg{t: t, clk: r.st.clk, name: name, rank: r.rank})
	in, kw := r.peerArg([]arg{t}, "dst", dst)
	r.op(&opSpec{prefix: "Distributed", api: "send", site: s, in: in, kw: kw, out: []arg{t, mw.Int(dst)},
		inT: []*tensor{t}, outT: []*tensor{t}, collective: true,
		coll: &collSpec{clock: truth.P2PClock(r.rank, dst), send: []*tensor{t}, members: pair(r.rank, dst)}})
}

// recv receives from src into a buffer created at bufSite.
func (r *rk) recv(bufSite, s *mw.Site, src int, shape []int, dt mw.DType, like *tensor) *tensor {
	api := "empty"
	if like != nil {
		api = "empty_like"
	}
	buf := r.emptyBuf(bufSite, api, shape, dt, like)
	seq := r.p2pSeq[p2pKey{peer: src}]
	r.p2pSeq[p2pKey{peer: src}] = seq + 1
	m := r.w.comm.take("p2p|" + strconv.Itoa(src) + ">" + strconv.Itoa(r.rank) + "|" + strconv.Itoa(r.step) + "|" + strconv.Itoa(seq))
	clk := max(m.clk, r.st.clk) + 1
	got := m.t.clone()
	got.RG = false
	if got.tainted() && !m.t.tainted() {
		got.Legit = false
	}
	if got.tainted() {
		r.st.contaminated = true
	}
	r.st.clk = clk - 1
	in, kw := r.peerArg([]arg{r.bufArg(buf)}, "src", src)
	r.op(&opSpec{prefix: "Distributed", api: "recv", site: s, in: in, kw: kw, out: []arg{got, mw.Int(src)},
		inT: []*tensor{}, outT: []*tensor{got}, collective: true,
		coll: &collSpec{clock: truth.P2PClock(src, r.rank), recv: []*tensor{got}, members: pair(src, r.rank)}})
	return got
}

// peerArg passes a peer or root after the arguments in: positionally, or
// as the keyword name (Format.Peers). msprobe writes output as the
// positional arguments followed by the keyword values, so the output is
// the same either way.
func (r *rk) peerArg(in []arg, name string, peer int) ([]arg, []mw.KV) {
	if r.fmt().Peers == "keyword" {
		return in, []mw.KV{{Key: name, Value: mw.Int(peer)}}
	}
	return append(in, mw.Int(peer)), nil
}

// bufArg is a receive buffer on the input side as the format writes it.
func (r *rk) bufArg(buf *tensor) arg {
	if r.fmt().ReceiveBuffers == "null" || buf == nil {
		return nil
	}
	return buf
}

// emptyBuf is Torch.empty(*shape, dtype=dt) or, with like, Torch.empty_like
// (like): uninitialised memory.
func (r *rk) emptyBuf(s *mw.Site, api string, shape []int, dt mw.DType, like *tensor) *tensor {
	mode := r.fmt().ReceiveBuffers
	var t *tensor
	switch mode {
	case "garbage":
		t = r.garbage(shape, dt)
	default:
		if dt == mw.DTInt64 {
			t = ints(shape, 0, int64(2*r.w.dims.S))
		} else {
			t = r.g.normal(shape, dt, 0, 0.3+r.g.u())
		}
	}
	v := visDump
	if mode == "null" {
		v = visFiltered
	}
	var in []arg
	var kw []mw.KV
	if api == "empty" {
		for _, d := range shape {
			in = append(in, mw.Int(d))
		}
		kw = []mw.KV{{Key: "dtype", Value: mw.DTypeName(dt.String())}}
	} else {
		in = args(like)
	}
	r.op(&opSpec{prefix: "Torch", api: api, site: s, vis: v, in: in, kw: kw, out: args(t), legit: true})
	return t
}

// garbage is what uninitialised device memory looks like.
func (r *rk) garbage(shape []int, dt mw.DType) *tensor {
	if dt == mw.DTInt64 {
		t := ints(shape, 0, int64(r.g.r.Int64N(1<<47)))
		if r.g.u() < 0.5 {
			t.Min = -4611686018427387904
		}
		return t
	}
	t := r.g.normal(shape, dt, 0, 1)
	switch x := r.g.u(); {
	case x < 0.3:
		t.NaN = true
	case x < 0.4:
		t.PInf, t.NInf = true, r.g.u() < 0.5
	default:
		lim := dt.MaxFinite()
		t.Max = lim * r.g.in(0.01, 0.9)
		t.Min = -lim * r.g.in(0.01, 0.9)
		t.Mean = t.Max * 1e-4 * r.g.n()
		t.Norm = t.Max * 3
	}
	t.Legit = t.nonFinite()
	return t
}

// pair is the two peers of a message, ascending.
func pair(a, b int) []int {
	if a > b {
		a, b = b, a
	}
	return []int{a, b}
}
