package trace

import (
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
)

// slotRef names an argument of a collective by position and keyword.
type slotRef struct {
	pos int
	kw  string
}

// collSpec says which arguments of a collective carry data out of a rank
// (send) and which receive data (dest), and where its root or peer is.
type collSpec struct {
	send, dest []slotRef
	// root: rooted collectives send only from the root (broadcast, scatter)
	// or receive only at it (gather, reduce).
	root      slotRef
	rootSends bool // only the root's send slots carry data
	p2p       int  // +1 sends to peer, -1 receives from peer, 0 not point-to-point
	peer      slotRef
	noTensors bool // object collectives and barriers: nothing to judge
}

var (
	tensorArg = slotRef{0, "tensor"}
)

// collSpecs covers torch.distributed (and torch_npu, MindSpore mint)
// collectives. Output buffers (tensor_list of all_gather, output of
// reduce_scatter and all_to_all, the tensor of recv) are dest only: before
// the call they hold garbage, which must never make a rank a source.
var collSpecs = map[string]collSpec{
	"all_reduce":             {send: []slotRef{tensorArg}, dest: []slotRef{tensorArg}},
	"reduce":                 {send: []slotRef{tensorArg}, dest: []slotRef{tensorArg}, root: slotRef{1, "dst"}},
	"broadcast":              {send: []slotRef{tensorArg}, dest: []slotRef{tensorArg}, root: slotRef{1, "src"}, rootSends: true},
	"all_gather":             {send: []slotRef{{1, "tensor"}}, dest: []slotRef{{0, "tensor_list"}}},
	"all_gather_into_tensor": {send: []slotRef{{1, "input_tensor"}}, dest: []slotRef{{0, "output_tensor"}}},
	"_all_gather_base":       {send: []slotRef{{1, "input_tensor"}}, dest: []slotRef{{0, "output_tensor"}}},
	"gather":                 {send: []slotRef{tensorArg}, dest: []slotRef{{1, "gather_list"}}, root: slotRef{2, "dst"}},
	"scatter":                {send: []slotRef{{1, "scatter_list"}}, dest: []slotRef{tensorArg}, root: slotRef{2, "src"}, rootSends: true},
	"reduce_scatter":         {send: []slotRef{{1, "input_list"}}, dest: []slotRef{{0, "output"}}},
	"reduce_scatter_tensor":  {send: []slotRef{{1, "input"}}, dest: []slotRef{{0, "output"}}},
	"_reduce_scatter_base":   {send: []slotRef{{1, "input"}}, dest: []slotRef{{0, "output"}}},
	"all_to_all_single":      {send: []slotRef{{1, "input"}}, dest: []slotRef{{0, "output"}}},
	"all_to_all":             {send: []slotRef{{1, "input_tensor_list"}}, dest: []slotRef{{0, "output_tensor_list"}}},
	"send":                   {send: []slotRef{tensorArg}, p2p: +1, peer: slotRef{1, "dst"}},
	"isend":                  {send: []slotRef{tensorArg}, p2p: +1, peer: slotRef{1, "dst"}},
	"recv":                   {dest: []slotRef{tensorArg}, p2p: -1, peer: slotRef{1, "src"}},
	"irecv":                  {dest: []slotRef{tensorArg}, p2p: -1, peer: slotRef{1, "src"}},
	"batch_isend_irecv":      {},
	"barrier":                {noTensors: true},
	"monitored_barrier":      {noTensors: true},
	"send_object_list":       {noTensors: true},
	"recv_object_list":       {noTensors: true},
	"broadcast_object_list":  {noTensors: true},
	"all_gather_object":      {noTensors: true},
	"gather_object":          {noTensors: true},
	"scatter_object_list":    {noTensors: true},
}

func specOf(api string) (collSpec, bool) {
	s, ok := collSpecs[api]
	if !ok {
		// npu_* variants and MindSpore spellings map onto torch names
		s, ok = collSpecs[strings.TrimPrefix(api, "npu_")]
	}
	return s, ok
}

// collEvent is one rank's view of one collective call.
type collEvent struct {
	index    int
	name     string
	api      string
	key      string // pairing key: see pairKey
	group    []int  // recorded group ranks; nil when unknown
	groupKey string // the group's identity, when recorded
	named    bool   // paired by entry name (no group recorded)

	send, dest dump.Class
	sendKnown  bool       // the rank sent data in this call
	destKnown  bool       // the call's output was recorded
	ignored    dump.Class // non-finite values in receive buffers, ignored
	peer       int        // point-to-point peer; -1 otherwise
	p2p        int
}

// readCollective reads a collective entry into an event. seen counts
// earlier calls per pairing key on this rank.
func readCollective(e *dump.Entry, n dump.Name, rank int, seen map[string]int) collEvent {
	ev := collEvent{index: e.Index, name: e.Name, api: n.API, peer: -1}
	spec, known := specOf(n.API)
	nargs := 0
	for _, t := range e.Tensors {
		if t.Field == dump.InputArgs {
			nargs = max(nargs, t.Arg+1)
		}
	}
	for _, a := range e.Args {
		if a.Field == dump.InputArgs {
			nargs = max(nargs, a.Arg+1)
		}
	}
	kwOrder := kwargOrder(e)

	// group
	groupKey := ""
	for _, a := range e.Args {
		if a.Field != dump.InputKwargs || a.Key != "group" {
			continue
		}
		switch {
		case a.Null:
		case a.GroupID != "":
			groupKey = "g" + a.GroupID
			ev.group = a.GroupRanks
		case len(a.GroupRanks) > 0:
			groupKey = "r" + dump.FormatRanges(a.GroupRanks)
			ev.group = a.GroupRanks
		case a.Str != "":
			groupKey = "s" + a.Str // MindSpore: group name
		}
	}

	isRoot := true
	if spec.root.kw != "" {
		if root, ok := intArg(e, spec.root); ok {
			isRoot = globalRank(root, ev.group, e, spec.root) == rank
		}
	}

	switch {
	case n.API == "batch_isend_irecv" || hasP2POps(e):
		readBatchP2P(e, &ev, rank, seen)
		return ev
	case !known:
		// unknown collective: every input is sent, every output received
		for _, t := range e.Tensors {
			c := t.Class()
			if t.Field.IsInput() {
				ev.send |= c
				ev.sendKnown = true
			} else if t.Field == dump.Output {
				ev.dest |= c
				ev.destKnown = true
			}
		}
	case spec.noTensors:
	default:
		for _, t := range e.Tensors {
			c := t.Class()
			switch {
			case t.Field == dump.InputArgs || t.Field == dump.InputKwargs:
				if isSlot(t.Field, t.Arg, t.Key, spec.send) && (isRoot || !spec.rootSends) {
					ev.send |= c
					ev.sendKnown = true
				} else {
					ev.ignored |= c
				}
			case t.Field == dump.Output:
				if outIsSlot(t.Arg, spec.dest, nargs, kwOrder) {
					ev.dest |= c
					ev.destKnown = true
				}
			}
		}
	}
	if spec.p2p != 0 {
		ev.p2p = spec.p2p
		if p, ok := intArg(e, spec.peer); ok {
			ev.peer = globalRank(p, ev.group, e, spec.peer)
		}
	}
	ev.groupKey = groupKey
	ev.key = pairKey(&ev, n, groupKey, rank, seen)
	return ev
}

// pairKey is what makes the same call on different ranks the same
// instance: (group, api, k-th call in that group) for collectives,
// (sender, receiver, k-th message) for point-to-point, the entry name when
// no group was recorded.
func pairKey(ev *collEvent, n dump.Name, groupKey string, rank int, seen map[string]int) string {
	var base string
	switch {
	case ev.p2p != 0 && ev.peer >= 0:
		from, to := rank, ev.peer
		if ev.p2p < 0 {
			from, to = ev.peer, rank
		}
		base = "p2p:" + strconv.Itoa(from) + ">" + strconv.Itoa(to)
	case groupKey != "":
		base = "coll:" + groupKey + ":" + n.API
	default:
		ev.named = true
		return "name:" + n.Full
	}
	k := seen[base]
	seen[base] = k + 1
	return base + "#" + strconv.Itoa(k)
}

func readBatchP2P(e *dump.Entry, ev *collEvent, rank int, seen map[string]int) {
	ev.p2p = 2 // a batch: send and receive
	// One key for the batch: the first message it carries.
	var first string
	for _, a := range e.Args {
		if !strings.Contains(a.Type, "P2POp") || a.Peer < 0 {
			continue
		}
		isSend := strings.Contains(a.Op, "isend") || strings.Contains(a.Op, "send")
		isRecv := strings.Contains(a.Op, "recv")
		var c dump.Class
		if a.Tensor >= 0 && a.Tensor < len(e.Tensors) {
			c = e.Tensors[a.Tensor].Class()
		}
		switch {
		case isRecv && a.Field == dump.Output:
			ev.dest |= c
			ev.destKnown = true
		case isRecv:
			ev.ignored |= c
		case isSend && a.Field != dump.Output:
			ev.send |= c
			ev.sendKnown = true
		}
		if first == "" && a.Field != dump.Output {
			from, to := rank, a.Peer
			if isRecv {
				from, to = a.Peer, rank
			}
			first = "p2p:" + strconv.Itoa(from) + ">" + strconv.Itoa(to)
		}
	}
	if first == "" {
		ev.named = true
		ev.key = "name:" + e.Name
		return
	}
	k := seen[first]
	seen[first] = k + 1
	ev.key = first + "#" + strconv.Itoa(k)
}

func hasP2POps(e *dump.Entry) bool {
	for _, a := range e.Args {
		if strings.Contains(a.Type, "P2POp") {
			return true
		}
	}
	return false
}

// kwargOrder lists the keyword arguments in the order they were passed:
// msprobe records a collective's output as args + kwargs values.
func kwargOrder(e *dump.Entry) []string {
	var keys []string
	last := -1
	add := func(f dump.Field, arg int, key string) {
		if f == dump.InputKwargs && arg > last {
			for len(keys) < arg {
				keys = append(keys, "")
			}
			keys = append(keys, key)
			last = arg
		}
	}
	for _, t := range e.Tensors {
		add(t.Field, t.Arg, t.Key)
	}
	for _, a := range e.Args {
		add(a.Field, a.Arg, a.Key)
	}
	return keys
}

func isSlot(f dump.Field, arg int, key string, refs []slotRef) bool {
	for _, r := range refs {
		if f == dump.InputArgs && arg == r.pos {
			return true
		}
		if f == dump.InputKwargs && key == r.kw {
			return true
		}
	}
	return false
}

// outIsSlot maps an output position back to the argument it re-reads.
func outIsSlot(pos int, refs []slotRef, nargs int, kwOrder []string) bool {
	for _, r := range refs {
		if pos < nargs && pos == r.pos {
			return true
		}
		if pos >= nargs {
			if i := pos - nargs; i < len(kwOrder) && kwOrder[i] == r.kw {
				return true
			}
		}
	}
	return false
}

// intArg reads an integer argument by position or keyword, also the
// group-relative spellings group_src/group_dst.
func intArg(e *dump.Entry, ref slotRef) (int, bool) {
	for _, a := range e.Args {
		if a.Num.Kind != dump.StatNumber || a.Num.Class != 0 {
			continue
		}
		if (a.Field == dump.InputKwargs && (a.Key == ref.kw || a.Key == "group_"+ref.kw)) ||
			(a.Field == dump.InputArgs && a.Arg == ref.pos) {
			return int(a.Num.Value), true
		}
	}
	return 0, false
}

// globalRank turns a group-relative rank (group_src=, group_dst=) into a
// global one.
func globalRank(r int, group []int, e *dump.Entry, ref slotRef) int {
	for _, a := range e.Args {
		if a.Field == dump.InputKwargs && a.Key == "group_"+ref.kw && r >= 0 && r < len(group) {
			return group[r]
		}
	}
	return r
}
