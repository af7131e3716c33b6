package sim

import (
	"slices"
	"strconv"
	"strings"

	mw "github.com/nanhunt/nanhunt/internal/synth/msprobewrite"
	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// group is a process group.
type group struct {
	ranks []int // ascending
	id    string
	key   string
	// keyHash is the FNV-1a state after key: seeds derived from key and a
	// suffix cost the suffix only (a world group's key is long).
	keyHash uint64
	world   bool
}

func newGroup(ranks []int, world bool) *group {
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = strconv.Itoa(r)
	}
	key := strings.Join(parts, ",")
	return &group{ranks: ranks, id: mw.GroupID(ranks), key: key, keyHash: fnvAdd(fnvOffset, key), world: world}
}

func (g *group) size() int { return len(g.ranks) }

// index returns the position of rank in the group.
func (g *group) index(rank int) int {
	if i, ok := slices.BinarySearch(g.ranks, rank); ok {
		return i
	}
	return -1
}

// topology holds the process groups of a run.
type topology struct {
	world  *group
	groups map[string]*group
}

func (t *topology) intern(ranks []int) *group {
	g := newGroup(ranks, false)
	if old, ok := t.groups[g.key]; ok {
		return old
	}
	if g.key == t.world.key {
		return t.world
	}
	t.groups[g.key] = g
	return g
}

// DataParallelGroup returns the ranks of rank's data-parallel group (the
// replicas of its dense parameters) in the run s describes, normalized.
func DataParallelGroup(s *spec.Spec, rank int) []int {
	return newTopology(s).layout(s, rank).dp.ranks
}

// ParamNames returns the names of rank's parameters in the run s
// describes (normalized), in the order the monitor writes them.
func ParamNames(s *spec.Spec, rank int) []string {
	w := newWorld(s)
	var names []string
	for _, p := range w.ranks[rank].model.params {
		names = append(names, p.name)
	}
	return names
}

func newTopology(s *spec.Spec) *topology {
	all := make([]int, s.Ranks)
	for i := range all {
		all[i] = i
	}
	return &topology{world: newGroup(all, true), groups: map[string]*group{}}
}

// layout of one rank.
type layout struct {
	tpRank, stage, epRank int
	tp, dp, ep, edp       *group
	next, prev            int // pipeline neighbours (-1 when none)
}

func (t *topology) layout(s *spec.Spec, rank int) layout {
	var l layout
	perStage := s.Ranks / s.PP
	l.stage = rank / perStage
	l.tpRank = rank % s.TP
	base := l.stage * perStage
	var tp, dp []int
	for i := 0; i < s.TP; i++ {
		tp = append(tp, rank-l.tpRank+i)
	}
	for d := 0; d < perStage/s.TP; d++ {
		dp = append(dp, base+d*s.TP+l.tpRank)
	}
	l.tp, l.dp = t.intern(tp), t.intern(dp)
	l.epRank = rank % s.EP
	var ep, edp []int
	for i := 0; i < s.EP; i++ {
		ep = append(ep, rank-l.epRank+i)
	}
	for k := l.epRank; k < s.Ranks; k += s.EP {
		edp = append(edp, k)
	}
	l.ep, l.edp = t.intern(ep), t.intern(edp)
	l.next, l.prev = -1, -1
	if l.stage+1 < s.PP {
		l.next = rank + perStage
	}
	if l.stage > 0 {
		l.prev = rank - perStage
	}
	return l
}

// param is a model parameter on one rank.
type param struct {
	name, key string
	module    *module
	t         *tensor
	m, v      *tensor
	steps     int
	sync      *group
	// frozen before this step (requires_grad false, not in the optimizer)
	from    int
	eps     float64
	seedKey uint64
	// drift is the learning rate of an Adam parameter group set far too
	// high (ExpDrift); gain the update rule of an input scale; sharp
	// the signed deviation along the sharpest direction and curv its
	// curvature (SharpGradient). See drift.go.
	drift       float64
	gain        gainRule
	sharp, curv float64
}

// module is an nn.Module instance.
type module struct {
	path, class string
	params      []*param
	// Linear-like modules report bias before weight in parameters_grad.
	gradReversed bool
}

func (m *module) trainable(step int) int {
	n := 0
	for _, p := range m.params {
		if p.from <= step {
			n++
		}
	}
	return n
}

type expertMods struct {
	global             int
	mod, fc1, act, fc2 *module
}

type layerMods struct {
	idx                                       int
	block, ln1, attn, qkv, out, ln2, mlp, act *module
	fc1, fc2, gate, delta                     *module
	adapter                                   *module // a domain adapter (ReducerZeroCount)
	relBias                                   *param
	moe, router                               *module
	experts                                   []*expertMods
	fp16MLP                                   bool
}

// modelParts is the part of the model held by one rank.
type modelParts struct {
	first, last bool
	embed, feat *module
	scale       *param // the learnable scale of the input features
	layers      []*layerMods
	lnf, head   *module
	params      []*param
}

// dims of the simulated model.
type dims struct {
	B, S, V, H, F, NH, HD, FE int
	E, localE, K              int
	buckets                   int
	dt                        mw.DType
}

func specDims(s *spec.Spec) dims {
	d := dims{B: s.Batch, S: s.Seq, V: s.Vocab, H: s.Hidden, F: 4 * s.Hidden}
	d.HD = 64
	if s.Hidden < 256 {
		d.HD = s.Hidden / 4
	}
	d.NH = s.Hidden / d.HD
	d.FE = 2 * s.Hidden
	d.E, d.K = s.Experts, s.TopK
	if s.EP > 0 && s.Experts > 0 {
		d.localE = s.Experts / s.EP
	}
	d.buckets = 32
	d.dt, _ = mw.DTypeByName(s.DType)
	return d
}

// builder creates modules and parameters in named_parameters order.
type builder struct {
	w      *world
	rank   int
	l      layout
	params []*param
}

func (b *builder) mod(path, class string) *module {
	return &module{path: path, class: class}
}

// add creates a parameter. shard distinguishes tensor-parallel shards and
// experts; replicas with the same shard start identical.
func (b *builder) add(m *module, key string, shape []int, dt mw.DType, mean, std float64, shard string, sync *group) *param {
	name := strings.TrimPrefix(m.path+"."+key, ".")
	seed := newGen(uint64(b.w.spec.Seed), strKey(name), strKey(shard)).r.Uint64()
	g := newGen(seed, 1)
	t := g.normal(shape, dt, mean, std)
	t.RG = true
	if sync != nil && sync.size() < 2 {
		sync = nil
	}
	p := &param{name: name, key: key, module: m, t: t, sync: sync, eps: 1e-8, seedKey: seed}
	t.param = p
	m.params = append(m.params, p)
	b.params = append(b.params, p)
	return p
}

func (b *builder) linear(path, class string, out, in int, dt mw.DType, bias bool, shard string, sync *group) *module {
	m := b.mod(path, class)
	m.gradReversed = true
	b.add(m, "weight", []int{out, in}, dt, 0, 0.02, shard, sync)
	if bias {
		b.add(m, "bias", []int{out}, dt, 0, 0.004, shard, sync)
	}
	return m
}

func (b *builder) layerNorm(path string, h int, dt mw.DType, sync *group) *module {
	m := b.mod(path, "LayerNorm")
	b.add(m, "weight", []int{h}, dt, 1, 0.002, "", sync)
	b.add(m, "bias", []int{h}, dt, 0, 0.002, "", sync)
	return m
}

// buildModel creates the modules and parameters rank holds.
func (w *world) buildModel(rank int, l layout) *modelParts {
	s := w.spec
	d := w.dims
	b := &builder{w: w, rank: rank, l: l}
	mp := &modelParts{first: l.stage == 0, last: l.stage == s.PP-1}
	tpShard := ""
	if s.TP > 1 {
		tpShard = "tp" + strconv.Itoa(l.tpRank)
	}
	dense := l.dp // the reduction group of replicated parameters
	colClass, rowClass, embClass := "Linear", "Linear", "Embedding"
	if s.Model == spec.TensorParallel {
		colClass, rowClass, embClass = "ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding"
	}
	dt := d.dt
	if mp.first {
		mp.embed = b.mod("embed", embClass)
		b.add(mp.embed, "weight", []int{d.V / s.TP, d.H}, dt, 0, 0.02, tpShard, dense)
		if f := s.Fault; f != nil && (f.Kind == spec.OptimizerNaN) {
			mp.embed.params[0].from = f.Step
			mp.embed.params[0].eps = 0
		}
		mp.scale = w.addGain(b, dt, dense)
		if w.has(spec.LogNegative) || mp.scale != nil {
			mp.feat = b.linear("feat_proj", "Linear", d.H, 8, dt, true, "", dense)
		}
	}
	for i := 0; i < s.Layers; i++ {
		if s.StageOfLayer(i) != l.stage {
			continue
		}
		p := "layers." + strconv.Itoa(i)
		lm := &layerMods{idx: i}
		lm.block = b.mod(p, "Block")
		if w.has(spec.SqrtZeroBackward) && w.spec.Fault.Layer == i {
			lm.delta = b.linear(p+".delta_proj", "Linear", d.H, 1, dt, true, "", dense)
		}
		lm.ln1 = b.layerNorm(p+".ln1", d.H, dt, dense)
		lm.attn = b.mod(p+".attn", "Attention")
		if s.Attention == "custom" {
			lm.relBias = b.add(lm.attn, "rel_bias", []int{d.buckets, d.NH / s.TP}, dt, 0, 0.02, tpShard, dense)
		}
		lm.qkv = b.linear(p+".attn.qkv", colClass, 3*d.H/s.TP, d.H, dt, true, tpShard, dense)
		lm.out = b.linear(p+".attn.out", rowClass, d.H, d.H/s.TP, dt, true, tpShard, dense)
		lm.ln2 = b.layerNorm(p+".ln2", d.H, dt, dense)
		if s.Model == spec.MoE {
			lm.moe = b.mod(p+".moe", "MoELayer")
			lm.router = b.mod(p+".moe.router", "TopKRouter")
			b.add(lm.router, "weight", []int{d.E, d.H}, dt, 0, 0.02, "", dense)
			for j := 0; j < d.localE; j++ {
				ge := l.epRank*d.localE + j
				ep := p + ".moe.experts." + strconv.Itoa(j)
				em := &expertMods{global: ge}
				em.mod = b.mod(ep, "Expert")
				shard := "expert" + strconv.Itoa(ge)
				em.fc1 = b.linear(ep+".fc1", "Linear", d.FE, d.H, dt, false, shard, l.edp)
				em.act = b.mod(ep+".act", "GELU")
				em.fc2 = b.linear(ep+".fc2", "Linear", d.H, d.FE, dt, false, shard, l.edp)
				lm.experts = append(lm.experts, em)
			}
		} else {
			lm.mlp = b.mod(p+".mlp", "MLP")
			lm.fc1 = b.linear(p+".mlp.fc1", colClass, d.F/s.TP, d.H, dt, true, tpShard, dense)
			lm.act = b.mod(p+".mlp.act", "GELU")
			fdt := dt
			if w.has(spec.CastOverflow) && w.spec.Fault.Layer == i {
				fdt, lm.fp16MLP = mw.DTFloat16, true
			}
			lm.fc2 = b.linear(p+".mlp.fc2", rowClass, d.H, d.F/s.TP, fdt, true, tpShard, dense)
		}
		if (w.has(spec.ExpOverflow) || w.has(spec.SendRecvCarrier) || w.has(spec.ExpDrift)) && w.spec.Fault.Layer == i {
			lm.gate = b.linear(p+".gate", "Linear", 4, d.H, dt, true, "", dense)
			w.setDrift(lm.gate.params[1])
		}
		if w.has(spec.ReducerZeroCount) && w.spec.Fault.Layer == i {
			lm.adapter = b.linear(p+".adapter", "Linear", d.H, d.H, dt, false, "", dense)
		}
		mp.layers = append(mp.layers, lm)
	}
	if mp.last {
		mp.lnf = b.layerNorm("ln_f", d.H, dt, dense)
		mp.head = b.linear("head", "Linear", d.V, d.H, dt, w.has(spec.AllReduceOverflow) || w.has(spec.SharpGradient), "", dense)
		if w.has(spec.SharpGradient) {
			w.setSharp(mp.head.params[1])
		}
	}
	mp.params = b.params
	return mp
}

// has reports whether the run's fault is of kind k.
func (w *world) has(k spec.FaultKind) bool { return w.spec.Fault != nil && w.spec.Fault.Kind == k }
