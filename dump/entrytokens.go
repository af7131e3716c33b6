package dump

import (
	"strconv"
	"strings"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
	"github.com/nanhunt/nanhunt/internal/notation"
)

// fieldByName tells the field a member of an entry names.
func fieldByName(key []byte) (Field, bool) {
	switch string(key) {
	case "input_args":
		return InputArgs, true
	case "input_kwargs":
		return InputKwargs, true
	case "input":
		return Input, true
	case "output":
		return Output, true
	case "parameters":
		return Parameters, true
	}
	return FieldOther, false
}

// readEntry reads an entry's value.
func (r *Reader) readEntry() error {
	e := &r.e
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	if tok.Kind != jsonlex.ObjectStart {
		if isOpen(tok.Kind) {
			return r.skipRest()
		}
		return nil
	}
	r.paramGrads = strings.Contains(e.Name, ".parameters_grad.")
	var seen uint16 // the fields seen, and bit 15 for is_nan
	for member := 0; ; member++ {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return nil
		}
		key := tok.Bytes
		if !r.paramGrads && e.DuplicateKey == "" {
			if bit := memberBit(key); bit != 0 {
				if seen&bit != 0 {
					e.DuplicateKey = string(key)
				}
				seen |= bit
			}
		}
		var loc slotLoc
		switch {
		case string(key) == "is_nan":
			if err := r.readIsNaN(); err != nil {
				return err
			}
			continue
		case string(key) == "is_recompute":
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			e.Recompute = tok.Kind == jsonlex.True
			if isOpen(tok.Kind) {
				if err := r.skipRest(); err != nil {
					return err
				}
			}
			continue
		case r.paramGrads:
			loc = slotLoc{field: ParamGrads, arg: member, key: string(key), top: true}
		default:
			f, _ := fieldByName(key)
			loc = slotLoc{field: f, fieldLevel: true}
		}
		if e.Fields&(1<<loc.field) != 0 && !r.paramGrads {
			// written again: its last occurrence is what the call passed
			e.last[loc.field] = fieldStart{Tensor: int32(len(e.Tensors)), Arg: int32(len(e.Args))}
			switch loc.field {
			case InputArgs:
				e.NumArgs = 0
			case InputKwargs:
				e.Kwargs = e.Kwargs[:0]
			}
		}
		e.Fields |= 1 << loc.field
		if loc.field == Output {
			e.HasOutput = true
		}
		r.path = r.path[:0]
		if loc.field == ParamGrads {
			r.pushPath(loc.key)
		}
		tok, err = r.lx.Next()
		if err != nil {
			return err
		}
		if err := r.value(tok, loc); err != nil {
			return err
		}
	}
}

func (r *Reader) readIsNaN() error {
	tok, err := r.lx.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case jsonlex.Number:
		r.e.IsNaN = 1
		if v, err := strconv.ParseFloat(string(tok.Bytes), 64); err == nil && v == 0 {
			r.e.IsNaN = 0
		}
	case jsonlex.True:
		r.e.IsNaN = 1
	case jsonlex.False:
		r.e.IsNaN = 0
	case jsonlex.ObjectStart, jsonlex.ArrayStart:
		return r.skipRest()
	}
	return nil
}

// slotLoc says where a value sits in the entry.
type slotLoc struct {
	field      Field
	arg        int
	key        string
	top        bool // arg/key are set: the value is a top-level slot or below one
	direct     bool // the value is the top-level slot itself
	fieldLevel bool // the value is the field's own value (a list or dict of slots, or one value)
}

// child is the location of the i-th element (or member key) of a container at loc.
func (l slotLoc) child(i int, key string) slotLoc {
	if l.fieldLevel {
		return slotLoc{field: l.field, arg: i, key: key, top: true, direct: true}
	}
	l.direct = false
	if l.top && l.key == "" && key != "" {
		// a dict nested in a positional slot: keep the positional index,
		// name it after the first key level
		l.key = key
	}
	return l
}

func (r *Reader) pushPath(s string) {
	if r.opt.Details {
		r.path = append(r.path, s)
	}
}

func (r *Reader) popPath() {
	if r.opt.Details && len(r.path) > 0 {
		r.path = r.path[:len(r.path)-1]
	}
}

func (r *Reader) slot() string {
	if !r.opt.Details {
		return ""
	}
	return strings.Join(r.path, ".")
}

// value reads one value whose first token is tok.
func (r *Reader) value(tok jsonlex.Token, loc slotLoc) error {
	switch tok.Kind {
	case jsonlex.ArrayStart:
		for i := 0; ; i++ {
			tok, err := r.lx.Next()
			if err != nil {
				return err
			}
			if tok.Kind == jsonlex.ArrayEnd {
				if loc.fieldLevel && loc.field == InputArgs {
					r.e.NumArgs = i
				}
				return nil
			}
			r.pushPath(strconv.Itoa(i))
			if err := r.value(tok, loc.child(i, "")); err != nil {
				return err
			}
			r.popPath()
		}
	case jsonlex.ObjectStart:
		if loc.fieldLevel {
			return r.slotDict(loc)
		}
		return r.object(loc)
	case jsonlex.Null:
		if loc.field == InputKwargs && loc.direct && loc.key == "group" {
			r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Null: true, Peer: -1, Tensor: -1})
		}
	case jsonlex.Number, jsonlex.NaN, jsonlex.PosInf, jsonlex.NegInf:
		// a bare number where msprobe writes {"type": ..., "value": ...}
		st := r.stat(tok)
		if tok.Kind == jsonlex.Number {
			st = numberStat(tok.Bytes, true)
		}
		if st.Class != 0 || r.opt.Details {
			r.addArg(Arg{Field: loc.field, Arg: loc.arg, Key: loc.key, Slot: r.slot(), Num: st, Peer: -1, Tensor: -1})
		}
	}
	return nil
}

// slotDict reads a field whose value is an object of slots (input_kwargs,
// parameters): every member is a slot, whatever its name. A positional
// field written so, keyed by position, is read as the list it stands for.
func (r *Reader) slotDict(loc slotLoc) error {
	for member := 0; ; member++ {
		tok, err := r.lx.Next()
		if err != nil {
			return err
		}
		if tok.Kind == jsonlex.ObjectEnd {
			return nil
		}
		name := intern(tok.Bytes)
		if loc.field == InputKwargs {
			r.addKwarg(name)
		}
		child := loc.child(member, name)
		if i, ok := notation.Counter(name); ok && isPositional(loc.field) {
			// {"0": {...}} for [{...}]: the member is the list's item i
			child = loc.child(i, "")
			r.e.KeyedByIndex = true
			if loc.field == InputArgs {
				r.e.NumArgs = max(r.e.NumArgs, i+1)
			}
		}
		tok, err = r.lx.Next()
		if err != nil {
			return err
		}
		r.pushPath(name)
		if err := r.value(tok, child); err != nil {
			return err
		}
		r.popPath()
	}
}

// isPositional reports whether msprobe writes the field as a list, whose
// items are known by position.
func isPositional(f Field) bool { return f == InputArgs || f == Input || f == Output }

// statBit is the bit of a statistic ('a' Max, 'i' Min, 'e' Mean, 'o' Norm)
// in objState.stats.
func statBit(which byte) uint8 {
	switch which {
	case 'a':
		return 1
	case 'i':
		return 2
	case 'e':
		return 4
	}
	return 8
}

func statName(which byte) string {
	switch which {
	case 'a':
		return "Max"
	case 'i':
		return "Min"
	case 'e':
		return "Mean"
	}
	return "Norm"
}

// memberBit is the bit of an entry member whose repetition is reported:
// the fields and is_nan.
func memberBit(key []byte) uint16 {
	if string(key) == "is_nan" {
		return 1 << 15
	}
	if f, ok := fieldByName(key); ok {
		return 1 << f
	}
	return 0
}

// statKey tells the statistic a member key names: 'a' Max, 'i' Min, 'e'
// Mean, 'o' Norm, 0 none; odd is set when the key is not spelled the way
// msprobe spells it ("max", "MIN").
func statKey(key []byte) (which byte, odd bool) {
	if len(key) != 3 && len(key) != 4 {
		return 0, false
	}
	var w byte
	switch {
	case equalFoldASCII(key, "max"):
		w = 'a'
	case equalFoldASCII(key, "min"):
		w = 'i'
	case equalFoldASCII(key, "mean"):
		w = 'e'
	case equalFoldASCII(key, "norm"):
		w = 'o'
	default:
		return 0, false
	}
	return w, key[0] != key[0]&^0x20 || (len(key) > 1 && key[1] == key[1]&^0x20)
}

// equalFoldASCII reports whether b is the lower-case word w in any case.
func equalFoldASCII(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := range b {
		if b[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}
