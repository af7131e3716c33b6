package reference

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonoracle"
)

// slotSpec is one send or receive slot: a position or a keyword.
type slotSpec struct {
	pos int
	kw  string
}

func (s slotSpec) matches(pos int, kw string) bool {
	return (pos >= 0 && pos == s.pos) || (kw != "" && kw == s.kw)
}

// apiSpec is one row of the collectives table (README section 3).
type apiSpec struct {
	send, recv   slotSpec
	hasSend      bool
	hasRecv      bool
	sendRootOnly bool
	root         slotSpec // broadcast and scatter: who sends
	rootGroupKw  string
	p2p          int // 1 send, 2 receive
	peer         slotSpec
	peerGroupKw  string
	batch        bool
	inert        bool
}

var apiSpecs = func() map[string]apiSpec {
	both := func(s, r slotSpec) apiSpec { return apiSpec{send: s, recv: r, hasSend: true, hasRecv: true} }
	m := map[string]apiSpec{
		"all_reduce":             both(slotSpec{0, "tensor"}, slotSpec{0, "tensor"}),
		"reduce":                 both(slotSpec{0, "tensor"}, slotSpec{0, "tensor"}),
		"all_gather":             both(slotSpec{1, "tensor"}, slotSpec{0, "tensor_list"}),
		"all_gather_into_tensor": both(slotSpec{1, "input_tensor"}, slotSpec{0, "output_tensor"}),
		"_all_gather_base":       both(slotSpec{1, "input_tensor"}, slotSpec{0, "output_tensor"}),
		"gather":                 both(slotSpec{0, "tensor"}, slotSpec{1, "gather_list"}),
		"reduce_scatter":         both(slotSpec{1, "input_list"}, slotSpec{0, "output"}),
		"reduce_scatter_tensor":  both(slotSpec{1, "input"}, slotSpec{0, "output"}),
		"_reduce_scatter_base":   both(slotSpec{1, "input"}, slotSpec{0, "output"}),
		"all_to_all_single":      both(slotSpec{1, "input"}, slotSpec{0, "output"}),
		"all_to_all":             both(slotSpec{1, "input_tensor_list"}, slotSpec{0, "output_tensor_list"}),
		"send":                   {send: slotSpec{0, "tensor"}, hasSend: true, p2p: 1, peer: slotSpec{1, "dst"}, peerGroupKw: "group_dst"},
		"isend":                  {send: slotSpec{0, "tensor"}, hasSend: true, p2p: 1, peer: slotSpec{1, "dst"}, peerGroupKw: "group_dst"},
		"recv":                   {recv: slotSpec{0, "tensor"}, hasRecv: true, p2p: 2, peer: slotSpec{1, "src"}, peerGroupKw: "group_src"},
		"irecv":                  {recv: slotSpec{0, "tensor"}, hasRecv: true, p2p: 2, peer: slotSpec{1, "src"}, peerGroupKw: "group_src"},
		"batch_isend_irecv":      {batch: true},
	}
	b := both(slotSpec{0, "tensor"}, slotSpec{0, "tensor"})
	b.sendRootOnly, b.root, b.rootGroupKw = true, slotSpec{1, "src"}, "group_src"
	m["broadcast"] = b
	sc := both(slotSpec{1, "scatter_list"}, slotSpec{0, "tensor"})
	sc.sendRootOnly, sc.root, sc.rootGroupKw = true, slotSpec{2, "src"}, "group_src"
	m["scatter"] = sc
	return m
}()

func specOf(api string) (apiSpec, bool) {
	if strings.Contains(api, "barrier") || strings.Contains(api, "_object") {
		return apiSpec{inert: true}, true
	}
	s, ok := apiSpecs[api]
	return s, ok
}

// groupMode says what a collective's group argument told.
type groupMode uint8

const (
	groupDefault groupMode = iota // no group argument
	groupNull                     // "group": null: pair by entry name
	groupKnown                    // group_id, group_ranks or a MindSpore name
)

type groupRef struct {
	mode  groupMode
	key   string
	ranks []int // nil when the dump does not list them
}

// keyKind is the kind of pairing key.
type keyKind uint8

const (
	keyGroup keyKind = iota // (group, api)
	keyP2P                  // (sender, receiver)
	keyName                 // the entry name
)

// clockKey is a pairing key without its counter: what happened-before
// compares.
type clockKey struct {
	kind     keyKind
	group    string
	api      string
	from, to int
	name     string
}

// instKey names one instance: the k-th call or message of a clock key.
type instKey struct {
	clockKey
	k int
}

func (k instKey) String() string {
	switch k.kind {
	case keyP2P:
		return fmt.Sprintf("p2p %d->%d #%d", k.from, k.to, k.k)
	case keyName:
		return "name " + k.name
	}
	return fmt.Sprintf("%s %s #%d", k.group, k.api, k.k)
}

// collSide is one instance a collective entry takes part in, with what its
// send and receive slots held.
type collSide struct {
	clock clockKey
	k     int
	group groupRef
	send  holds
	recv  holds
}

func (s *collSide) inst() instKey { return instKey{s.clock, s.k} }

// collCall is the collective part of an entry.
type collCall struct {
	api   string
	sides []*collSide
}

// argList is a collective's arguments: positions first, then keywords in
// the order they were passed.
type argList struct {
	args   []*jsonoracle.Node
	kwargs []jsonoracle.Member
}

func (a argList) kw(name string) (*jsonoracle.Node, bool) {
	for _, m := range a.kwargs {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// outputSlot maps output item i to its argument: position i while below
// the number of input_args items, keyword i-n after that.
func (a argList) outputSlot(i int) (int, string) {
	if i < len(a.args) {
		return i, ""
	}
	if j := i - len(a.args); j < len(a.kwargs) {
		return -1, a.kwargs[j].Name
	}
	return -1, fmt.Sprintf("#%d", i)
}

func argsOf(e *jsonoracle.Node) argList {
	var a argList
	// a lone value is item 0 (or a keyword without a name), as for other
	// calls (slotsOf)
	if n := member(e, "input_args"); n != nil && n.Kind == jsonoracle.Array {
		a.args = n.Elems
	} else if n != nil && n.Kind != jsonoracle.Object {
		a.args = []*jsonoracle.Node{n}
	}
	if n := member(e, "input_kwargs"); n != nil && n.Kind == jsonoracle.Object {
		a.kwargs = n.Members
	} else if n != nil {
		a.kwargs = []jsonoracle.Member{{Name: "", Value: n}}
	}
	return a
}

// readGroup finds the group argument: keyword "group", else a positional
// ProcessGroup object.
func readGroup(a argList) groupRef {
	if g, ok := a.kw("group"); ok {
		return groupOf(g)
	}
	for _, n := range a.args {
		if n != nil && n.Kind == jsonoracle.Object && (member(n, "group_id") != nil || member(n, "group_ranks") != nil) {
			return groupOf(n)
		}
	}
	return groupRef{mode: groupDefault, key: "default"}
}

func groupOf(g *jsonoracle.Node) groupRef {
	if g == nil {
		return groupRef{mode: groupNull}
	}
	switch g.Kind {
	case jsonoracle.String:
		return groupRef{mode: groupKnown, key: "name:" + g.Literal}
	case jsonoracle.Object:
		ranks := intList(member(g, "group_ranks"))
		if id := member(g, "group_id"); id != nil && (id.Kind == jsonoracle.String || id.Kind == jsonoracle.Number) {
			return groupRef{mode: groupKnown, key: "id:" + id.Literal, ranks: ranks}
		}
		if ranks != nil {
			return groupRef{mode: groupKnown, key: "ranks:" + joinInts(ranks), ranks: ranks}
		}
		if t := member(g, "type"); t != nil && t.Kind == jsonoracle.String && t.Literal == "str" {
			if v := member(g, "value"); v != nil && v.Kind == jsonoracle.String {
				return groupRef{mode: groupKnown, key: "name:" + v.Literal}
			}
		}
	}
	return groupRef{mode: groupNull}
}

func intList(n *jsonoracle.Node) []int {
	if n == nil || n.Kind != jsonoracle.Array {
		return nil
	}
	out := []int{}
	for _, e := range n.Elems {
		v, ok := intValue(e)
		if !ok {
			return nil
		}
		out = append(out, v)
	}
	return out
}

func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// readRank reads a root or peer: by keyword, by its group-relative keyword
// (mapped through the group's ranks), or by position.
func readRank(a argList, s slotSpec, groupKw string, g groupRef) (int, bool) {
	if n, ok := a.kw(s.kw); ok {
		return intValue(n)
	}
	if groupKw != "" {
		if n, ok := a.kw(groupKw); ok {
			v, ok := intValue(n)
			if ok && g.ranks != nil && v >= 0 && v < len(g.ranks) {
				return g.ranks[v], true
			}
			return v, ok
		}
	}
	if s.pos < len(a.args) {
		return intValue(a.args[s.pos])
	}
	return 0, false
}

// holdsIn is what the leaves of a value hold.
func holdsIn(n *jsonoracle.Node) holds {
	var h holds
	for _, l := range leaves(n) {
		h |= l.holds
	}
	return h
}

// buildCollective reads the send and receive slots of a collective entry
// of rank self.
func buildCollective(api, name string, e *jsonoracle.Node, self int) *collCall {
	c := &collCall{api: api}
	a := argsOf(e)
	var outs []*jsonoracle.Node
	if n := member(e, "output"); n != nil && n.Kind == jsonoracle.Array {
		outs = n.Elems
	} else if n != nil {
		outs = []*jsonoracle.Node{n} // a lone value is item 0, as for other calls
	}
	g := readGroup(a)
	spec, known := specOf(api)
	groupSide := func() *collSide {
		if g.mode == groupNull {
			return &collSide{clock: clockKey{kind: keyName, name: name}, group: g}
		}
		return &collSide{clock: clockKey{kind: keyGroup, group: g.key, api: api}, group: g}
	}
	// inputs returns what the input slots accepted by keep hold; the out=
	// keyword is a destination and never counts.
	inputs := func(keep func(pos int, kw string) bool) holds {
		var h holds
		for i, n := range a.args {
			if keep(i, "") {
				h |= holdsIn(n)
			}
		}
		for _, m := range a.kwargs {
			if m.Name != "out" && keep(-1, m.Name) {
				h |= holdsIn(m.Value)
			}
		}
		return h
	}
	outputs := func(keep func(pos int, kw string) bool) holds {
		var h holds
		for i, n := range outs {
			if pos, kw := a.outputSlot(i); keep(pos, kw) {
				h |= holdsIn(n)
			}
		}
		return h
	}
	all := func(int, string) bool { return true }
	switch {
	case !known:
		s := groupSide()
		s.send, s.recv = inputs(all), outputs(all)
		c.sides = append(c.sides, s)
	case spec.inert:
		c.sides = append(c.sides, groupSide())
	case spec.batch:
		c.sides = batchSides(a, outs, g, self)
	case spec.p2p != 0:
		peer, ok := readRank(a, spec.peer, spec.peerGroupKw, g)
		if !ok {
			peer = -1
		}
		s := &collSide{group: g}
		if spec.p2p == 1 {
			s.clock = clockKey{kind: keyP2P, from: self, to: peer}
			s.send = inputs(spec.send.matches)
		} else {
			s.clock = clockKey{kind: keyP2P, from: peer, to: self}
			s.recv = outputs(spec.recv.matches)
		}
		c.sides = append(c.sides, s)
	default:
		s := groupSide()
		sends := spec.hasSend
		if spec.sendRootOnly {
			root, ok := readRank(a, spec.root, spec.rootGroupKw, g)
			sends = ok && root == self
		}
		if sends {
			s.send = inputs(spec.send.matches)
		}
		s.recv = outputs(spec.recv.matches)
		c.sides = append(c.sides, s)
	}
	return c
}

// batchSides makes one message per P2POp of a batch_isend_irecv: an isend's
// tensor is judged on the input side, an irecv's on the output side.
func batchSides(a argList, outs []*jsonoracle.Node, g groupRef, self int) []*collSide {
	var ops *jsonoracle.Node
	if len(a.args) > 0 {
		ops = a.args[0]
	} else if n, ok := a.kw("p2p_op_list"); ok {
		ops = n
	}
	if ops == nil || ops.Kind != jsonoracle.Array {
		return nil
	}
	var after *jsonoracle.Node
	if len(outs) > 0 && outs[0] != nil && outs[0].Kind == jsonoracle.Array {
		after = outs[0]
	}
	var sides []*collSide
	for j, op := range ops.Elems {
		kind := member(op, "op")
		if kind == nil || kind.Kind != jsonoracle.String {
			continue
		}
		peer, ok := intValue(member(op, "peer"))
		if !ok {
			peer = -1
		}
		switch {
		case strings.Contains(kind.Literal, "isend"):
			sides = append(sides, &collSide{clock: clockKey{kind: keyP2P, from: self, to: peer}, group: g, send: holdsIn(member(op, "tensor"))})
		case strings.Contains(kind.Literal, "irecv"):
			s := &collSide{clock: clockKey{kind: keyP2P, from: peer, to: self}, group: g}
			if after != nil && j < len(after.Elems) {
				s.recv = holdsIn(member(after.Elems[j], "tensor"))
			}
			sides = append(sides, s)
		}
	}
	return sides
}
