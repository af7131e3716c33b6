package trace

import (
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/dump"
	"github.com/nanhunt/nanhunt/internal/nonfinite"
	"github.com/nanhunt/nanhunt/internal/notation"
	"github.com/nanhunt/nanhunt/internal/policy"
)

// collEvent is one rank's view of one collective call.
type collEvent struct {
	*collWhere
	index int
	name  string
	named bool // paired by entry name (no group recorded)

	send, dest nonfinite.Class // what the rank sent, what it received
	ignored    nonfinite.Class // non-finite values in receive buffers, ignored
	peer       int             // point-to-point peer; -1 otherwise
	p2p        int
	// phase is a send's phase, when it sent a severe value and the scan
	// placed it (finish): the stage its receiver's recv takes (p2pStages)
	phase policy.Phase
}

// collWhere is what makes a call one instance across the ranks that take
// part, the same on each of them: a step's ranks share one (collShare),
// so that thousands of ranks' collectives take little room.
type collWhere struct {
	api      string
	key      string // pairing key: base + "#" + k
	base     string // the pairing key without the occurrence
	group    []int  // recorded group ranks; nil when unknown
	groupKey string // the group's identity, when recorded
}

// readCollective reads a collective entry. seen counts earlier calls per
// pairing base on this rank.
func readCollective(e *dump.Entry, n dump.Name, rank int, seen map[string]int) collEvent {
	api := n.CollectiveAPI()
	ev := collEvent{collWhere: &collWhere{api: api}, index: e.Index, name: e.Name, peer: -1}
	spec := policy.Collective(api)

	groupKey := ""
	for i := range e.Args {
		a := &e.Args[i]
		if !e.ArgInLast(i) {
			continue // a field written twice: the call passed the last
		}
		isGroup := (a.Field == dump.InputKwargs && a.Key == "group") ||
			(a.Field == dump.InputArgs && (a.GroupID != "" || len(a.GroupRanks) > 0)) // passed by position
		if !isGroup {
			continue
		}
		switch {
		case a.Null:
			groupKey = "null"
		case a.GroupID != "":
			groupKey = "g" + a.GroupID
			ev.group = a.GroupRanks
		case len(a.GroupRanks) > 0:
			groupKey = "r" + notation.FormatRanges(a.GroupRanks)
			ev.group = a.GroupRanks
		case a.Str != "":
			groupKey = "s" + a.Str // MindSpore: group name
		}
	}

	isRoot := true
	if spec.Root.Kw != "" {
		if root, ok := intArg(e, spec.Root); ok {
			isRoot = globalRank(root, ev.group, e, spec.Root) == rank
		}
	}

	switch {
	case spec.Batch || hasP2POps(e):
		readBatchP2P(e, &ev, rank, seen)
		return ev
	case spec.NoTensors:
	case spec.Unknown:
		// every input is sent, every output received
		eachValue(e, func(f dump.Field, _ int, _ string, c nonfinite.Class) {
			if f == dump.InputArgs || f == dump.InputKwargs { // the call's arguments (README 3)
				ev.send |= c
			} else if f == dump.Output {
				ev.dest |= c
			}
		})
	default:
		eachValue(e, func(f dump.Field, arg int, key string, c nonfinite.Class) {
			switch f {
			case dump.InputArgs, dump.InputKwargs:
				if spec.IsSendInput(f == dump.InputKwargs, arg, key) && (isRoot || !spec.RootSends) {
					ev.send |= c
				} else {
					ev.ignored |= c
				}
			case dump.Output:
				if spec.IsReceiveOutput(arg, e.NumArgs, e.Kwargs) {
					ev.dest |= c
				}
			}
		})
	}
	if spec.P2P != 0 {
		ev.p2p = spec.P2P
		if p, ok := intArg(e, spec.Peer); ok {
			ev.peer = globalRank(p, ev.group, e, spec.Peer)
		}
	}
	ev.groupKey = groupKey
	ev.base, ev.key = pairKey(&ev, n, groupKey, rank, seen)
	return ev
}

// pairKey is what makes the same call on different ranks the same
// instance: (group, api, k-th call of that api in that group) for
// collectives, (sender, receiver, k-th message) for point-to-point, the
// entry name when msprobe recorded "group": null. It returns the key
// without the occurrence (the base) and the key.
func pairKey(ev *collEvent, n dump.Name, groupKey string, rank int, seen map[string]int) (base, key string) {
	switch {
	case ev.p2p != 0 && ev.peer >= 0:
		from, to := rank, ev.peer
		if ev.p2p < 0 {
			from, to = ev.peer, rank
		}
		base = "p2p:" + strconv.Itoa(from) + ">" + strconv.Itoa(to)
	case groupKey == "null":
		ev.named = true
		// entry counters restart every step on every rank: the counter is
		// the occurrence
		return "name:" + n.Op(), "name:" + n.Full
	default:
		base = "coll:" + groupKey + ":" + ev.api // groupKey "" is the default group
	}
	k := seen[base]
	seen[base] = k + 1
	return base, base + "#" + strconv.Itoa(k)
}

func readBatchP2P(e *dump.Entry, ev *collEvent, rank int, seen map[string]int) {
	ev.p2p = 2 // a batch: send and receive
	// One key for the batch: the first message it carries.
	var first string
	for _, a := range e.Args {
		if !strings.Contains(a.Type, "P2POp") || a.Peer < 0 {
			continue
		}
		isRecv := strings.Contains(a.Op, "recv")
		isSend := !isRecv && strings.Contains(a.Op, "send")
		var c nonfinite.Class
		if a.Tensor >= 0 && a.Tensor < len(e.Tensors) {
			c = policy.Holds(&e.Tensors[a.Tensor])
		}
		switch {
		case isRecv && a.Field == dump.Output:
			ev.dest |= c
		case isRecv:
			ev.ignored |= c
		case isSend && a.Field != dump.Output:
			ev.send |= c
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
		ev.base, ev.key = "name:"+dump.ParseName(e.Name).Op(), "name:"+e.Name
		return
	}
	k := seen[first]
	seen[first] = k + 1
	ev.base, ev.key = first, first+"#"+strconv.Itoa(k)
}

func hasP2POps(e *dump.Entry) bool {
	for _, a := range e.Args {
		if strings.Contains(a.Type, "P2POp") {
			return true
		}
	}
	return false
}

// intArg reads an integer argument by position or keyword, also the
// group-relative spellings group_src/group_dst.
func intArg(e *dump.Entry, ref policy.Slot) (int, bool) {
	for i := range e.Args {
		a := &e.Args[i]
		if a.Num.Kind != dump.StatNumber || a.Num.Class != 0 || !e.ArgInLast(i) {
			continue
		}
		if (a.Field == dump.InputKwargs && (a.Key == ref.Kw || a.Key == "group_"+ref.Kw)) ||
			(a.Field == dump.InputArgs && a.Arg == ref.Pos) {
			return int(a.Num.Value), true
		}
	}
	return 0, false
}

// globalRank turns a group-relative rank (group_src=, group_dst=) into a
// global one.
func globalRank(r int, group []int, e *dump.Entry, ref policy.Slot) int {
	for _, a := range e.Args {
		if a.Field == dump.InputKwargs && a.Key == "group_"+ref.Kw && r >= 0 && r < len(group) {
			return group[r]
		}
	}
	return r
}

// eachValue calls fn with what each tensor and each non-tensor value of a
// collective holds, and where it sits: the data a slot carries is both
// (README "How it decides", 3).
func eachValue(e *dump.Entry, fn func(f dump.Field, arg int, key string, c nonfinite.Class)) {
	for i := range e.Tensors {
		if t := &e.Tensors[i]; e.TensorInLast(i) {
			fn(t.Field, t.Arg, t.Key, policy.Holds(t))
		}
	}
	for i := range e.Args {
		if a := &e.Args[i]; a.Num.Class != 0 && e.ArgInLast(i) {
			fn(a.Field, a.Arg, a.Key, a.Num.Class)
		}
	}
}
