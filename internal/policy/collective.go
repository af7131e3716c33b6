package policy

import "strings"

// Slot names an argument of a collective by position and keyword.
type Slot struct {
	Pos int
	Kw  string
}

// CollSpec says which arguments of a collective carry data out of a rank
// (Send, judged on the input side, before the call) and which receive data
// (Receive, judged on the output side, after it), and where its root or
// peer is. Receive buffers on the input side hold whatever was there before
// the call and are never judged.
type CollSpec struct {
	Send, Receive []Slot
	// Root: rooted collectives send only from the root (broadcast,
	// scatter: RootSends) or receive only at it (gather, reduce).
	Root      Slot
	RootSends bool
	// P2P is +1 for calls that send to Peer, -1 for calls that receive
	// from it, 0 for the others.
	P2P  int
	Peer Slot
	// Batch: batch_isend_irecv, whose P2POp arguments each name their op
	// and peer.
	Batch bool
	// NoTensors: object collectives and barriers, with nothing to judge.
	NoTensors bool
	// Unknown: an API this table does not know; every input is sent and
	// every output received.
	Unknown bool
}

var tensorSlot = Slot{0, "tensor"}

// collectives covers torch.distributed (and torch_npu, MindSpore mint).
var collectives = map[string]CollSpec{
	"all_reduce":             {Send: []Slot{tensorSlot}, Receive: []Slot{tensorSlot}},
	"reduce":                 {Send: []Slot{tensorSlot}, Receive: []Slot{tensorSlot}, Root: Slot{1, "dst"}},
	"broadcast":              {Send: []Slot{tensorSlot}, Receive: []Slot{tensorSlot}, Root: Slot{1, "src"}, RootSends: true},
	"all_gather":             {Send: []Slot{{1, "tensor"}}, Receive: []Slot{{0, "tensor_list"}}},
	"all_gather_into_tensor": {Send: []Slot{{1, "input_tensor"}}, Receive: []Slot{{0, "output_tensor"}}},
	"_all_gather_base":       {Send: []Slot{{1, "input_tensor"}}, Receive: []Slot{{0, "output_tensor"}}},
	"gather":                 {Send: []Slot{tensorSlot}, Receive: []Slot{{1, "gather_list"}}, Root: Slot{2, "dst"}},
	"scatter":                {Send: []Slot{{1, "scatter_list"}}, Receive: []Slot{tensorSlot}, Root: Slot{2, "src"}, RootSends: true},
	"reduce_scatter":         {Send: []Slot{{1, "input_list"}}, Receive: []Slot{{0, "output"}}},
	"reduce_scatter_tensor":  {Send: []Slot{{1, "input"}}, Receive: []Slot{{0, "output"}}},
	"_reduce_scatter_base":   {Send: []Slot{{1, "input"}}, Receive: []Slot{{0, "output"}}},
	"all_to_all_single":      {Send: []Slot{{1, "input"}}, Receive: []Slot{{0, "output"}}},
	"all_to_all":             {Send: []Slot{{1, "input_tensor_list"}}, Receive: []Slot{{0, "output_tensor_list"}}},
	"send":                   {Send: []Slot{tensorSlot}, P2P: +1, Peer: Slot{1, "dst"}},
	"isend":                  {Send: []Slot{tensorSlot}, P2P: +1, Peer: Slot{1, "dst"}},
	"recv":                   {Receive: []Slot{tensorSlot}, P2P: -1, Peer: Slot{1, "src"}},
	"irecv":                  {Receive: []Slot{tensorSlot}, P2P: -1, Peer: Slot{1, "src"}},
	"batch_isend_irecv":      {Batch: true},
	"barrier":                {NoTensors: true},
	"monitored_barrier":      {NoTensors: true},
	"send_object_list":       {NoTensors: true},
	"recv_object_list":       {NoTensors: true},
	"broadcast_object_list":  {NoTensors: true},
	"all_gather_object":      {NoTensors: true},
	"gather_object":          {NoTensors: true},
	"scatter_object_list":    {NoTensors: true},
}

// Collective returns the spec of a collective API ("all_reduce"); npu_
// spellings map onto the torch names.
func Collective(api string) CollSpec {
	if s, ok := collectives[api]; ok {
		return s
	}
	if s, ok := collectives[strings.TrimPrefix(api, "npu_")]; ok {
		return s
	}
	return CollSpec{Unknown: true}
}

// IsCollective tells a collective by its entry name, before it is parsed.
func IsCollective(name string) bool {
	return strings.HasPrefix(name, "Distributed.") || strings.HasPrefix(name, "MintDistributed.")
}

// IsSendInput reports whether an input-side value (input_args position or
// input_kwargs key) is one of the spec's send slots.
func (s *CollSpec) IsSendInput(kwarg bool, pos int, key string) bool {
	return isSlot(s.Send, kwarg, pos, key)
}

// IsReceiveOutput reports whether output item pos is one of the spec's
// receive slots. msprobe records a collective's output as its positional
// arguments followed by its keyword arguments in the order they were
// passed: item pos is positional argument pos while pos < numArgs (null
// items count), and keyword argument kwargs[pos-numArgs] after that.
func (s *CollSpec) IsReceiveOutput(pos, numArgs int, kwargs []string) bool {
	if pos < numArgs {
		return isSlot(s.Receive, false, pos, "")
	}
	if i := pos - numArgs; i < len(kwargs) {
		return isSlot(s.Receive, true, -1, kwargs[i])
	}
	return false
}

func isSlot(slots []Slot, kwarg bool, pos int, key string) bool {
	for _, r := range slots {
		if kwarg && key == r.Kw {
			return true
		}
		if !kwarg && pos == r.Pos {
			return true
		}
	}
	return false
}
