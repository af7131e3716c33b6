package dumpname

import (
	"strconv"
	"strings"
)

// Direction is the pass an entry belongs to, as its name says.
type Direction uint8

const (
	// DirUnknown: the name does not follow any known pattern.
	DirUnknown Direction = iota
	// Forward: an API or module forward call.
	Forward
	// Backward: the gradient computation of an API or module call.
	Backward
	// ParamGrad: a module's parameter gradients ("parameters_grad").
	ParamGrad
)

func (d Direction) String() string {
	switch d {
	case Forward:
		return "forward"
	case Backward:
		return "backward"
	case ParamGrad:
		return "parameters_grad"
	}
	return "unknown"
}

// Name is an entry name taken apart. msprobe writes
//
//	{Prefix}.{api}.{N}.{forward|backward}              API calls
//	{Module|Cell}.{path}.{Class}.{forward|backward}.{N} module calls (only these two prefixes)
//	{Module|Cell}.{path}.{Class}.parameters_grad.{N}    module parameter gradients
//
// Custom prefixes (register_custom_api) may contain dots, so names are read
// from the right.
//
// The nan-overflow-detection skill documents API names of another form,
// {Prefix}.{api}_{N}_{M} ("Distributed.all_reduce_0_0",
// "Torch.ops.aten.linear_0_0"), which msprobe does not write. They are read
// as the counter N and the pass M, 0 forward and 1 backward (any other M
// leaves the name unread), and marked UnderscoreCounters.
type Name struct {
	Full   string
	Prefix string // "Torch", "Distributed", "Module", or a custom dotted prefix
	API    string // api name for API calls ("all_reduce"); "path.Class" for modules
	Call   int    // the counter N; -1 when absent
	Dir    Direction
	Module bool // a Module/Cell entry rather than an API call
	// UnderscoreCounters: the name ends in "_N_M" (the skill's form)
	// rather than ".N.forward".
	UnderscoreCounters bool
}

// ParseName splits an entry name. It never fails: names it cannot read get
// DirUnknown and the whole name as API.
func ParseName(full string) Name {
	n := Name{Full: full, API: full, Call: -1}
	last, rest, ok := cutLast(full)
	if !ok {
		return n
	}
	if d := dirOf(last); d != DirUnknown {
		// Prefix.api.N.forward
		num, head, ok := cutLast(rest)
		if !ok {
			return n
		}
		call, isNum := Counter(num)
		if !isNum {
			return n
		}
		n.Call, n.Dir = call, d
		n.Prefix, n.API = splitPrefix(head)
		return n
	}
	call, isNum := Counter(last)
	if !isNum {
		return underscoreName(n, last, rest)
	}
	d, head, ok := cutLast(rest)
	if !ok {
		return n
	}
	dir := dirOf(d)
	if dir == DirUnknown && d == "parameters_grad" {
		dir = ParamGrad
	}
	if dir == DirUnknown {
		return n
	}
	p, path, _ := strings.Cut(head, ".")
	if p != "Module" && p != "Cell" {
		return n // module calls are Module.… (PyTorch) or Cell.… (MindSpore)
	}
	// an empty module path ("Module.parameters_grad.0") is still a module
	// call: its op is the prefix alone
	n.Call, n.Dir, n.Module = call, dir, true
	n.Prefix, n.API = p, path
	return n
}

// underscoreName reads the last segment of a name as {api}_{N}_{M} below
// the prefix rest; n comes back unchanged when it is not of that form.
func underscoreName(n Name, last, rest string) Name {
	head, m, ok := cutLastByte(last, '_')
	if !ok {
		return n
	}
	api, num, ok := cutLastByte(head, '_')
	if !ok {
		return n
	}
	call, isNum := Counter(num)
	if !isNum || (m != "0" && m != "1") {
		return n
	}
	n.Prefix, n.API, n.Call, n.Dir, n.UnderscoreCounters = rest, api, call, Forward, true
	if m == "1" {
		n.Dir = Backward
	}
	return n
}

// Op is the name without counter and direction: "Torch.sqrt",
// "Module.encoder.proj.Linear". Rules match against it.
func (n Name) Op() string {
	if n.Prefix == "" {
		return n.API
	}
	if n.API == "" {
		return n.Prefix
	}
	if k := len(n.Prefix) + 1 + len(n.API); k <= len(n.Full) && n.Full[:len(n.Prefix)] == n.Prefix &&
		n.Full[len(n.Prefix)] == '.' && n.Full[len(n.Prefix)+1:k] == n.API {
		return n.Full[:k] // a prefix of the name: no allocation
	}
	return n.Prefix + "." + n.API
}

// IsBackward reports a call of the backward: a backward entry, a module's
// parameter gradients, or any other name that ends in ".backward" (one
// without a counter still says where it ran).
func (n Name) IsBackward() bool {
	return n.Dir == Backward || n.Dir == ParamGrad || (n.Dir == DirUnknown && strings.HasSuffix(n.Full, ".backward"))
}

// IsDistributed reports whether the entry is a torch.distributed (or
// MindSpore communication) call: its name starts with "Distributed." or
// "MintDistributed.", however the rest of it reads.
func (n Name) IsDistributed() bool {
	if n.Module {
		return false
	}
	switch n.Prefix {
	case "Distributed", "MintDistributed":
		return true
	}
	return strings.HasPrefix(n.Full, "Distributed.") || strings.HasPrefix(n.Full, "MintDistributed.")
}

// CollectiveAPI is the api a collective entry calls: the op without its
// "Distributed." or "MintDistributed." prefix, for a name that reads and
// for one that does not ("Distributed.recv" calls recv).
func (n Name) CollectiveAPI() string {
	op := n.Op()
	for _, p := range [...]string{"Distributed.", "MintDistributed."} {
		if api, ok := strings.CutPrefix(op, p); ok {
			return api
		}
	}
	return n.API
}

// ForwardName is the name of the forward call a backward entry belongs to
// (stack.json and construct.json know backward calls by their forward).
func (n Name) ForwardName() string {
	if n.Dir != Backward {
		return n.Full
	}
	if n.Module {
		return strings.TrimSuffix(n.Full, ".backward."+strconv.Itoa(n.Call)) + ".forward." + strconv.Itoa(n.Call)
	}
	if n.UnderscoreCounters {
		return strings.TrimSuffix(n.Full, "_1") + "_0"
	}
	return strings.TrimSuffix(n.Full, ".backward") + ".forward"
}

func dirOf(s string) Direction {
	switch s {
	case "forward":
		return Forward
	case "backward":
		return Backward
	}
	return DirUnknown
}

func splitPrefix(head string) (prefix, api string) {
	api, prefix, ok := cutLast(head)
	if !ok {
		return "", head
	}
	return prefix, api
}

// cutLast splits "a.b.c" into "c" and "a.b".
func cutLast(s string) (last, rest string, ok bool) {
	before, after, ok := cutLastByte(s, '.')
	return after, before, ok
}

// cutLastByte splits s at its last sep into what is before and after it;
// ok is false when either side would be empty.
func cutLastByte(s string, sep byte) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, sep)
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// Counter reads a counter as names write it (a call's, a position
// keyed as "0", a line number): digits only, any number of them; a
// counter past maxCall reads as maxCall.
func Counter(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int(c-'0'), maxCall)
	}
	return n, true
}

// maxCall bounds a call counter: no run calls one API a billion times in a
// step, and a longer number in a name still reads as a counter.
const maxCall = 999_999_999
