package dump

import (
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Most entries hold nothing but the fields msprobe writes (input_args,
// input and output as lists of slots, input_kwargs and parameters as
// objects of slots, is_recompute; a parameters_grad entry's parameters as
// lists of slots), each slot a tensor, a typed scalar, a process group,
// null or a list of those. entryFast reads such an entry's value straight from the read
// window, each slot as tensorFast reads one, and gives what readEntry
// gives. At anything else (another member, a member twice, a slot of
// another kind, an entry that does not end in the window) it gives up: the
// entry is reset to its name, nothing was consumed, and readEntry reads it.

// entryField tells the member of an entry whose name (with its closing
// quote) starts b: a field, or recompute for is_recompute; n is the name's
// length with the quote, 0 for any other member.
func entryField(b []byte) (f Field, recompute bool, n int) {
	switch {
	case has(b, `input_args"`):
		return InputArgs, false, 11
	case has(b, `output"`):
		return Output, false, 7
	case has(b, `input_kwargs"`):
		return InputKwargs, false, 13
	case has(b, `input"`):
		return Input, false, 6
	case has(b, `parameters"`):
		return Parameters, false, 11
	case has(b, `is_recompute"`):
		return 0, true, 13
	}
	return 0, false, 0
}

// entryFast reads the value of the entry just named (Next has set its
// name, offset and index).
func (r *Reader) entryFast() bool {
	e := &r.e
	if directOff || !r.lx.AtValue() || r.lx.Depth()+4+maxNest > maxDepth {
		return false
	}
	direct := r.direct
	r.path = r.path[:0]
	end := r.entryMembers(r.lx.Pending(), strings.Contains(e.Name, ".parameters_grad."))
	if end < 0 || !r.lx.ConsumeValue(end) {
		e.reset()
		clear(r.merged)
		r.path, r.shape, r.groupRanks = r.path[:0], r.shape[:0], r.groupRanks[:0]
		r.direct = direct
		return false
	}
	r.paramGrads = false
	r.directEntries++
	return true
}

// maxNest is how deep lists may lie in lists of slots for entryFast (a
// normalized_shape of typed ints is one level).
const maxNest = 2

// entryMembers reads an entry's object from b[0] and returns the index
// past its '}', or -1. In a parameters_grad entry every member but
// is_recompute is a parameter's list of gradients.
func (r *Reader) entryMembers(b []byte, paramGrads bool) int {
	e := &r.e
	i := space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	var seen uint16 // the fields, and bit 15 for is_recompute
	var line lineStart
	i = firstItem(b, i+1, &line)
	for member := 0; ; member++ {
		if i >= len(b) || b[i] != '"' {
			return -1 // an empty entry too: rare, read by readEntry
		}
		f, recompute, n := entryField(b[i+1:])
		var param []byte
		switch {
		case recompute:
			if seen&(1<<15) != 0 {
				return -1
			}
			seen |= 1 << 15
		case paramGrads:
			var end int
			if param, end = directString(b, i); end < 0 || string(param) == "is_nan" {
				return -1
			}
			f, n = ParamGrads, end-i-1
		case n == 0 || seen&(1<<f) != 0:
			return -1
		default:
			seen |= 1 << f
		}
		if i = colon(b, i+1+n); i < 0 {
			return -1
		}
		switch {
		case recompute:
			kind, end := directLiteral(b, i)
			if kind != jsonlex.True && kind != jsonlex.False {
				return -1
			}
			e.Recompute = kind == jsonlex.True
			i = end
		case paramGrads:
			key := string(param)
			r.pushPath(key)
			i = r.slotList(b, i, slotLoc{field: ParamGrads, arg: member, key: key, top: true}, 0)
			r.popPath()
		case isPositional(f):
			i = r.slotList(b, i, slotLoc{field: f, fieldLevel: true}, 0)
		default:
			i = r.slotObject(b, i, slotLoc{field: f, fieldLevel: true})
		}
		if i < 0 {
			return -1
		}
		if !recompute {
			e.Fields |= 1 << f
			if f == Output {
				e.HasOutput = true
			}
		}
		var more bool
		if i, more = nextItem(b, i, &line, '}'); !more {
			return i
		}
	}
}

// colon passes over the whitespace, the colon and the whitespace after a
// member name that ends before b[i]; -1 when there is no colon or nothing
// after it.
func colon(b []byte, i int) int {
	if i = space(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	if i++; i < len(b) && b[i] == ' ' {
		i++ // Python's separator is ": "
	}
	if i = space(b, i); i >= len(b) {
		return -1
	}
	return i
}

// slotList reads a list of slots at b[i] (a positional field, a
// parameter's gradients, or a list nest deep in one of them), as value
// does, and returns the index past its ']', or -1.
func (r *Reader) slotList(b []byte, i int, loc slotLoc, nest int) int {
	if b[i] != '[' {
		return -1
	}
	var line lineStart
	i = firstItem(b, i+1, &line)
	numArgs := loc.fieldLevel && loc.field == InputArgs
	if i < len(b) && b[i] == ']' {
		if numArgs {
			r.e.NumArgs = 0
		}
		return i + 1
	}
	for k := 0; ; k++ {
		if i >= len(b) {
			return -1
		}
		path := ""
		if r.opt.Details {
			path = strconv.Itoa(k)
		}
		if i = r.slot1(b, i, loc.child(k, ""), path, nest); i < 0 {
			return -1
		}
		var more bool
		if i, more = nextItem(b, i, &line, ']'); !more {
			if i > 0 && numArgs {
				r.e.NumArgs = k + 1
			}
			return i
		}
	}
}

// slotObject reads input_kwargs or parameters at b[i], an object of slots,
// as slotDict does, and returns the index past its '}', or -1.
func (r *Reader) slotObject(b []byte, i int, loc slotLoc) int {
	if b[i] != '{' {
		return -1
	}
	var line lineStart
	if i = firstItem(b, i+1, &line); i < len(b) && b[i] == '}' {
		return i + 1
	}
	for member := 0; ; member++ {
		if i >= len(b) {
			return -1
		}
		s, end := directString(b, i)
		if end < 0 {
			return -1
		}
		name := intern(s)
		if loc.field == InputKwargs {
			r.addKwarg(name)
		}
		if i = colon(b, end); i < 0 {
			return -1
		}
		if i = r.slot1(b, i, loc.child(member, name), name, 0); i < 0 {
			return -1
		}
		var more bool
		if i, more = nextItem(b, i, &line, '}'); !more {
			return i
		}
	}
}

// slot1 reads one slot at b[i] (a tensor, a typed scalar, null, or a list
// of those), as value does below the slot's path element, and returns the
// index past it, or -1.
func (r *Reader) slot1(b []byte, i int, loc slotLoc, path string, nest int) int {
	r.pushPath(path)
	defer r.popPath()
	e := &r.e
	switch b[i] {
	case '{':
		o := objState{firstTensor: len(e.Tensors), firstArg: len(e.Args), peer: -1}
		r.shape, r.groupRanks = r.shape[:0], r.groupRanks[:0]
		end, odd := r.tensorMembers(b, i+1, &o)
		if end < 0 {
			return -1
		}
		e.OddStats += odd
		r.direct++
		r.finishObject(&o, loc)
		return end
	case '[':
		if nest >= maxNest {
			return -1
		}
		return r.slotList(b, i, loc, nest+1)
	case 'n':
		if !has(b[i:], "null") {
			return -1
		}
		if loc.field == InputKwargs && loc.direct && loc.key == "group" {
			r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Null: true, Peer: -1, Tensor: -1})
		}
		return i + 4
	}
	return -1
}
