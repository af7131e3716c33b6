package msprobewrite

import (
	"strconv"

	"github.com/nanhunt/nanhunt/internal/synth/spec"
)

// Where the Python libraries of the simulated run live.
const (
	pyLib = "/usr/local/lib/python3.10/site-packages"
	// TorchDir is the folder of the torch package.
	TorchDir   = pyLib + "/torch"
	msprobeDir = pyLib + "/msprobe"
)

// Site is one line of Python source: a call site of an op or a module.
type Site struct {
	ID   int32
	Line string // "File ..., line N, in fn, \n src"
}

var siteCount int32

// NewSite returns the site of line in function fn of file, whose source
// text is src. Every site has its own ID.
func NewSite(file string, line int, fn, src string) *Site {
	siteCount++
	return &Site{ID: siteCount, Line: "File " + file + ", line " + strconv.Itoa(line) + ", in " + fn + ", \n " + src}
}

func torchf(file string, line int, fn, src string) *Site {
	return NewSite(TorchDir+"/"+file, line, fn, src)
}

// Frames of the machinery between a call site and the callee.
var (
	frCallImpl = torchf("nn/modules/module.py", 1527, "_call_impl", "return forward_call(*args, **kwargs)").Line
	frWrapped  = torchf("nn/modules/module.py", 1518, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)").Line
	frHook     = torchf("nn/modules/module.py", 1561, "_call_impl", "args_result = hook(self, args)").Line
	frApply    = torchf("autograd/function.py", 539, "apply", "return super().apply(*args, **kwargs)  # type: ignore[misc]").Line
	frRegistry = NewSite(msprobeDir+"/core/dump/api_dump/api_registry.py", 95, "api_function", "return api_instance(*args, **kwargs)").Line
)

// wrapper frames of msprobe stack v1, by API prefix.
var v1Wrappers = map[string]string{
	"Tensor":      NewSite(msprobeDir+"/pytorch/hook_module/wrap_tensor.py", 61, "tensor_op_template", "return TensorOPTemplate(op_name, hook)(*args, **kwargs)").Line,
	"Torch":       NewSite(msprobeDir+"/pytorch/hook_module/wrap_torch.py", 69, "torch_op_template", "return TorchOPTemplate(op_name, hook)(*args, **kwargs)").Line,
	"Functional":  NewSite(msprobeDir+"/pytorch/hook_module/wrap_functional.py", 80, "functional_op_template", "return FunctionalOPTemplate(op_name, hook)(*args, **kwargs)").Line,
	"Distributed": NewSite(msprobeDir+"/pytorch/hook_module/wrap_distributed.py", 68, "distributed_op_template", "return DistributedOPTemplate(op_name, hook)(*args, **kwargs)").Line,
}

// chainNode is one level of the Python call stack above an op: a module
// call (entered through torch's _call_impl) or plain frames.
type chainNode struct {
	parent int32
	module bool
	frames []string
}

type chainKey struct {
	parent int32
	site   int32
}

// Chains interns call chains; id 0 is unused.
type Chains struct {
	nodes []chainNode
	idx   map[chainKey]int32
	roots map[*[]string]int32
}

func NewChains() *Chains {
	return &Chains{nodes: make([]chainNode, 1), idx: map[chainKey]int32{}, roots: map[*[]string]int32{}}
}

// ApplySite is the frame of torch.autograd.Function.apply, between the call
// of a Function and its forward.
var ApplySite = &Site{ID: -1 << 20, Line: frApply}

// Within reports whether chain id starts at the root context ctx.
func (c *Chains) Within(id int32, ctx *[]string) bool {
	for id > 0 && c.nodes[id].parent > 0 {
		id = c.nodes[id].parent
	}
	return id > 0 && c.roots[ctx] == id
}

// Root returns the chain of a root context.
func (c *Chains) Root(ctx *[]string, module bool) int32 {
	if id, ok := c.roots[ctx]; ok {
		return id
	}
	c.nodes = append(c.nodes, chainNode{parent: -1, module: module, frames: *ctx})
	id := int32(len(c.nodes) - 1)
	c.roots[ctx] = id
	return id
}

// Child returns the chain for a call from chain parent at site s.
func (c *Chains) Child(parent int32, s *Site, module bool) int32 {
	k := chainKey{parent, s.ID}
	if !module {
		k.site = -s.ID
	}
	if id, ok := c.idx[k]; ok {
		return id
	}
	c.nodes = append(c.nodes, chainNode{parent: parent, module: module, frames: []string{s.Line}})
	id := int32(len(c.nodes) - 1)
	c.idx[k] = id
	return id
}

// lines appends the frames of chain id, innermost first.
func (c *Chains) lines(dst []string, id int32) []string {
	for id > 0 {
		n := &c.nodes[id]
		if n.module {
			dst = append(dst, frCallImpl, frWrapped)
		}
		dst = append(dst, n.frames...)
		id = n.parent
	}
	return dst
}

// stackKey identifies a stack: wrapper, op site (0 for module hooks) and
// chain.
type stackKey struct {
	wrap  string
	site  int32
	chain int32
}

type stackGroup struct {
	key   stackKey
	line  string
	names []stackName // v2: the entries of this stack
}

// stackName is an entry name kept in 8 bytes: the interned text before the
// counter ("Torch.matmul.", "Module.layers.0.Block.forward."), the
// counter, and the interned text after it (".forward" or nothing).
type stackName struct {
	base int32
	n    int32
}

// nameKey interns the text around the counter of an API (prefix, api) or
// of a module.
type nameKey struct {
	prefix, api string
	module      string
}

type nameBase struct{ pre, suf string }

// StackTable collects the stacks of one dump.json. A rank-step of a large
// run has hundreds of thousands of entries, so their names are kept as
// stackNames.
type StackTable struct {
	v1     bool
	idx    map[stackKey]int32
	groups []stackGroup
	bases  []nameBase
	baseOf map[nameKey]int32
	order  []int32     // v1: group index per name, in recording order
	names  []stackName // v1: every name in recording order
	count  int
}

func NewStackTable(version int) *StackTable {
	return &StackTable{v1: version == 1, idx: map[stackKey]int32{}, baseOf: map[nameKey]int32{}}
}

// AddAPI records the stack of entry prefix.api.n.forward, called at site
// from chain: msprobe's wrapper frame (by API prefix in stack v1), the
// site, then the chain.
func (st *StackTable) AddAPI(site *Site, chain int32, prefix, api string, n int) {
	wrap := frRegistry
	if st.v1 {
		if w, ok := v1Wrappers[prefix]; ok {
			wrap = w
		}
	}
	nk := nameKey{prefix: prefix, api: api}
	b, ok := st.baseOf[nk]
	if !ok {
		b = st.intern(nk, prefix+"."+api+".", ".forward")
	}
	st.add(stackKey{wrap, site.ID, chain}, site.Line, stackName{b, int32(n)})
}

// AddModule records the stack of entry <base><n>, the forward of a module
// call whose chain is chain; base is "Module.<path>.<Class>.forward.".
func (st *StackTable) AddModule(chain int32, base string, n int) {
	nk := nameKey{module: base}
	b, ok := st.baseOf[nk]
	if !ok {
		b = st.intern(nk, base, "")
	}
	st.add(stackKey{"", 0, chain}, "", stackName{b, int32(n)})
}

func (st *StackTable) intern(k nameKey, pre, suf string) int32 {
	b := int32(len(st.bases))
	st.bases = append(st.bases, nameBase{pre, suf})
	st.baseOf[k] = b
	return b
}

func (st *StackTable) add(k stackKey, line string, name stackName) {
	i, ok := st.idx[k]
	if !ok {
		i = int32(len(st.groups))
		st.groups = append(st.groups, stackGroup{key: k, line: line})
		st.idx[k] = i
	}
	st.count++
	if st.v1 {
		st.order = append(st.order, i)
		st.names = append(st.names, name)
		return
	}
	st.groups[i].names = append(st.groups[i].names, name)
}

// appendName appends the text of a name.
func (st *StackTable) appendName(dst []byte, name stackName) []byte {
	b := &st.bases[name.base]
	dst = append(dst, b.pre...)
	dst = strconv.AppendInt(dst, int64(name.n), 10)
	return append(dst, b.suf...)
}

// stackLines builds the lines of a stack.
func stackLines(c *Chains, k stackKey, line string) []string {
	var l []string
	if k.site == 0 {
		l = append(l, frHook, frWrapped)
		n := &c.nodes[k.chain]
		l = append(l, n.frames...)
		return c.lines(l, n.parent)
	}
	l = append(l, k.wrap, line)
	return c.lines(l, k.chain)
}

// WriteStack writes stack.json (path "" only counts the bytes).
func WriteStack(path string, f *spec.Format, o *OutSizes, c *Chains, st *StackTable) error {
	j, err := newJSONOut(path, f, o)
	if err != nil {
		return err
	}
	lines := make([][]string, len(st.groups))
	for i := range st.groups {
		lines[i] = stackLines(c, st.groups[i].key, st.groups[i].line)
	}
	strs := func(d int, l []string) {
		if len(l) == 0 {
			j.raw("[]")
			return
		}
		j.raw("[")
		for i, s := range l {
			if i > 0 {
				j.raw(",")
			}
			j.nl(d + 1)
			j.str(s)
		}
		j.nl(d)
		j.raw("]")
	}
	var name []byte
	j.raw("{")
	if st.v1 {
		for i, n := range st.names {
			if i > 0 {
				j.raw(",")
			}
			j.nl(1)
			name = st.appendName(name[:0], n)
			j.strBytes(name)
			j.raw(": ")
			strs(1, lines[st.order[i]])
		}
	} else {
		for i := range st.groups {
			if i > 0 {
				j.raw(",")
			}
			j.nl(1)
			j.key(strconv.Itoa(i))
			j.raw("[")
			j.nl(2)
			j.raw("[")
			for k, n := range st.groups[i].names {
				if k > 0 {
					j.raw(",")
				}
				j.nl(3)
				name = st.appendName(name[:0], n)
				j.strBytes(name)
			}
			j.nl(2)
			j.raw("],")
			j.nl(2)
			strs(2, lines[i])
			j.nl(1)
			j.raw("]")
		}
	}
	if st.count > 0 {
		j.nl(0)
	}
	j.raw("}")
	return j.close()
}
