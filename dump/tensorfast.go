package dump

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/jsonlex"
)

// Almost every object in a dump.json is a tensor's statistics with the same
// few members: type, dtype, shape, Max, Min, Mean, Norm, requires_grad and
// sometimes data_name; most others are typed scalars ({"type": "int",
// "value": 3}) and process groups (type, group_ranks, group_id or
// process_group_id). tensorFast reads such an object straight from the read
// window, member names compared as bytes and values scanned in place,
// instead of token by token; it fills objState exactly as object's member
// loop would. Anything else (another member, a member twice, a name spelled
// another way or escaped, a value of another kind, a value before its type,
// an object that does not end in the window) makes it give up having
// consumed nothing, and the member loop reads the object.

// directOff turns the direct reads (tensorFast, entryFast) off: tests and
// benchmarks compare them with the token-by-token reads.
var directOff = false

// The members tensorFast reads, as bits of the set it has seen.
const (
	tmType = 1 << iota
	tmDtype
	tmShape
	tmMax
	tmMin
	tmMean
	tmNorm
	tmGrad
	tmDataName
	tmValue // a typed scalar's value
	tmGroupRanks
	tmGroupID
	tmProcessGroupID
)

// tensorMember tells the member whose name (with its closing quote) starts
// b, and the name's length with that quote; 0 for any other.
func tensorMember(b []byte) (member uint16, n int) {
	if len(b) < 4 {
		return 0, 0
	}
	switch b[0] {
	case 't':
		if has(b, `type"`) {
			return tmType, 5
		}
	case 'd':
		if has(b, `dtype"`) {
			return tmDtype, 6
		}
		if has(b, `data_name"`) {
			return tmDataName, 10
		}
	case 's':
		if has(b, `shape"`) {
			return tmShape, 6
		}
	case 'M':
		switch string(b[:4]) {
		case `Max"`:
			return tmMax, 4
		case `Min"`:
			return tmMin, 4
		}
		if has(b, `Mean"`) {
			return tmMean, 5
		}
	case 'N':
		if has(b, `Norm"`) {
			return tmNorm, 5
		}
	case 'r':
		if has(b, `requires_grad"`) {
			return tmGrad, 14
		}
	case 'v':
		if has(b, `value"`) {
			return tmValue, 6
		}
	case 'g':
		if has(b, `group_ranks"`) {
			return tmGroupRanks, 12
		}
		if has(b, `group_id"`) {
			return tmGroupID, 9
		}
	case 'p':
		if has(b, `process_group_id"`) {
			return tmProcessGroupID, 17
		}
	}
	return 0, 0
}

// has reports whether b starts with lit.
func has(b []byte, lit string) bool { return len(b) >= len(lit) && string(b[:len(lit)]) == lit }

// tensorFast reads the object just opened (its '{' was the last token) if
// it is a tensor in the shape described above and lies whole in the window.
func (r *Reader) tensorFast(o *objState) bool {
	if directOff || !r.lx.JustOpened() || r.lx.Depth() >= maxDepth {
		return false
	}
	end, odd := r.tensorMembers(r.lx.Pending(), 0, o)
	if end < 0 || !r.lx.Close(end) {
		*o = objState{firstTensor: o.firstTensor, firstArg: o.firstArg, peer: -1}
		r.shape, r.groupRanks = r.shape[:0], r.groupRanks[:0]
		return false
	}
	r.e.OddStats += odd
	r.direct++
	return true
}

// tensorMembers reads into t the members of a tensor object from b[i],
// just past its '{', as object's member loop would, and returns the index
// past its '}' and the Max and Min that are no statistic; end -1 when it is
// not a tensor as described above (t and r.shape then hold part of it).
func (r *Reader) tensorMembers(b []byte, i int, t *objState) (end, oddStats int) {
	var seen uint16
	var indent lineStart
	i = firstItem(b, i, &indent)
	for {
		if i >= len(b) || b[i] != '"' {
			return -1, 0
		}
		member, n := tensorMember(b[i+1:])
		if member == 0 || seen&member != 0 {
			return -1, 0
		}
		seen |= member
		i = space(b, i+1+n)
		if i >= len(b) || b[i] != ':' {
			return -1, 0
		}
		if i++; i < len(b) && b[i] == ' ' {
			i++ // Python's separator is ": "
		}
		if i = space(b, i); i >= len(b) {
			return -1, 0
		}
		switch member {
		case tmType, tmDtype, tmDataName:
			s, end := directString(b, i)
			if end < 0 {
				return -1, 0
			}
			switch member {
			case tmType:
				t.hasType, t.typ = true, intern(s)
			case tmDtype:
				t.tensorKeys = true
				if r.opt.Details {
					t.dtype = intern(s)
				}
			case tmDataName:
				t.tensorKeys = true
				if r.opt.Details {
					t.dataName = intern(s)
				}
			}
			i = end
		case tmGroupRanks:
			t.hasGroup = true
			if i = r.directShape(b, i, nil); i < 0 {
				return -1, 0
			}
		case tmGroupID, tmProcessGroupID:
			s, end := directString(b, i)
			if end < 0 {
				return -1, 0
			}
			t.hasGroup, t.groupID = true, intern(s)
			i = end
		case tmShape:
			t.tensorKeys = true
			if i = r.directShape(b, i, t); i < 0 {
				return -1, 0
			}
		case tmValue:
			// as readScalar, after a type; before one the member loop
			// reads it otherwise
			if !t.hasType && !t.tensorKeys {
				return -1, 0
			}
			if i = r.directScalar(b, i, t); i < 0 {
				return -1, 0
			}
		case tmGrad:
			kind, end := directLiteral(b, i)
			if kind != jsonlex.True && kind != jsonlex.False {
				return -1, 0
			}
			t.requiresGrad = kind == jsonlex.True
			i = end
		default: // a statistic
			st, end := r.directStat(b, i)
			if end < 0 {
				return -1, 0
			}
			t.tensorKeys = true
			switch member {
			case tmMax:
				t.max = st
				t.stats |= statBit('a')
			case tmMin:
				t.min = st
				t.stats |= statBit('i')
			case tmMean:
				t.mean = st
				t.stats |= statBit('e')
			default:
				t.norm = st
				t.stats |= statBit('o')
			}
			if (member == tmMax || member == tmMin) && (st.Kind == StatOther || st.Kind == StatString) {
				oddStats++
			}
			i = end
		}
		if i < len(b) && b[i] <= ' ' {
			if k := r.tensorClose.match(b, i); k > 0 {
				return k, oddStats
			}
			j := i
			if i = space(b, i); i < len(b) && b[i] == '}' {
				r.tensorClose.learn(b, j, i+1)
			}
		}
		var more bool
		if i, more = nextItem(b, i, &indent, '}'); !more {
			if i < 0 {
				return -1, 0
			}
			return i, oddStats
		}
	}
}

// closeLine is the whitespace and bracket that closed the last object or
// list of a kind, as one word: the next one most often closes the same way
// (json.dump's newline and indentation). Only bytes equal to those are
// passed over, so what it learnt from an earlier window stays right.
type closeLine struct {
	word, mask uint64
	n          int // 0: nothing learnt (or longer than a word)
}

// match returns the index past the closing bytes at b[i] when they are c,
// else 0.
func (c *closeLine) match(b []byte, i int) int {
	if c.n > 0 && i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&c.mask == c.word {
		return i + c.n
	}
	return 0
}

// learn takes b[from:to] (whitespace, then the bracket) as the closing bytes.
func (c *closeLine) learn(b []byte, from, to int) {
	c.n = 0
	if n := to - from; n < 8 && from+8 <= len(b) {
		c.n, c.mask = n, 1<<(8*n)-1
		c.word = binary.LittleEndian.Uint64(b[from:]) & c.mask
	}
}

// firstItem passes over the whitespace at b[j], just past a container's
// opening bracket, taking it as the line start of the container's items,
// and returns the index after it.
func firstItem(b []byte, j int, line *lineStart) int {
	i := space(b, j)
	line.set(b[j:i], b, j)
	return i
}

// nextItem passes over what follows an item of a container at b[i]: a
// comma and the next item's line start (more is true), or the container's
// closing bracket (the index past it); -1 for anything else.
func nextItem(b []byte, i int, line *lineStart, close byte) (next int, more bool) {
	if i = space(b, i); i >= len(b) {
		return -1, false
	}
	switch b[i] {
	case ',':
		return space(b, line.skip(b, i+1)), true
	case close:
		return i + 1, false
	}
	return -1, false
}

// lineStart is the whitespace that starts the lines of a container's
// items, most often the same before each: compared as one word when it
// fits in one.
type lineStart struct {
	b          []byte
	word, mask uint64 // b as one little-endian word, when it fits in one
}

func (l *lineStart) set(line []byte, b []byte, i int) {
	l.b = line
	l.word, l.mask = 0, 0
	if len(line) <= 8 && i+8 <= len(b) {
		l.mask = 1<<(8*len(line)) - 1
		if len(line) == 8 {
			l.mask = ^uint64(0)
		}
		l.word = binary.LittleEndian.Uint64(b[i:]) & l.mask
	}
}

// skip returns the index past the whitespace at b[i] if it is l, else i.
func (l *lineStart) skip(b []byte, i int) int {
	if l.mask != 0 && i+8 <= len(b) {
		if binary.LittleEndian.Uint64(b[i:])&l.mask == l.word {
			return i + len(l.b)
		}
		return i
	}
	if len(l.b) > 0 && bytes.HasPrefix(b[i:], l.b) {
		return i + len(l.b)
	}
	return i
}

// directString reads the string at b[i] when it is short and has no escape
// (what a type or dtype is): its bytes and the index past its closing quote,
// or end -1.
func directString(b []byte, i int) (s []byte, end int) {
	if b[i] != '"' {
		return nil, -1
	}
	j := jsonlex.ScanPlain(b, i+1)
	if j >= len(b) || b[j] != '"' || j-i-1 > 4096 {
		return nil, -1
	}
	return b[i+1 : j], j + 1
}

// directScalar reads a typed scalar's value at b[i] into t as readScalar
// does, and returns the index past it; -1 for a value it does not read (a
// list, an object, an escaped or long string).
func (r *Reader) directScalar(b []byte, i int, t *objState) int {
	switch c := b[i]; {
	case c == '"':
		s, end := directString(b, i)
		if end < 0 {
			return -1
		}
		if st := stringStat(s); st.Class != 0 {
			t.num = st
		}
		if len(s) <= 256 {
			t.str = intern(s)
		}
		t.hasValue = true
		return end
	case c == '-' || c-'0' < 10:
		if end := jsonlex.ScanNumber(b, i); end > 0 && end-i <= 4096 {
			t.num, t.hasValue = numberStat(b[i:end], true), true
			return end
		}
	}
	kind, end := directLiteral(b, i)
	switch {
	case end < 0:
		return -1
	case kind == jsonlex.Null:
		t.null = true
	default:
		t.num = r.stat(jsonlex.Token{Kind: kind})
	}
	t.hasValue = true
	return end
}

// directLiteral reads true, false, null, NaN, Infinity or -Infinity at b[i]:
// its kind and the index past it, or kind 0 (jsonlex.EOF) when there is none.
func directLiteral(b []byte, i int) (kind jsonlex.Kind, end int) {
	var lit string
	switch b[i] {
	case 't':
		lit, kind = "true", jsonlex.True
	case 'f':
		lit, kind = "false", jsonlex.False
	case 'n':
		lit, kind = "null", jsonlex.Null
	case 'N':
		lit, kind = "NaN", jsonlex.NaN
	case 'I':
		lit, kind = "Infinity", jsonlex.PosInf
	case '-':
		lit, kind = "-Infinity", jsonlex.NegInf
	default:
		return jsonlex.EOF, -1
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return jsonlex.EOF, -1
	}
	return kind, i + len(lit)
}

// directStat reads a statistic's value at b[i], a number or a literal, as
// stat reads its token, and returns the index past it; end -1 for anything
// else.
func (r *Reader) directStat(b []byte, i int) (st Stat, end int) {
	if c := b[i]; c == '-' || c-'0' < 10 {
		end, big := directNumber(b, i)
		switch {
		case end < 0 || end-i > 4096:
		case !big && !r.opt.Details && end-i < 24:
			return Stat{Kind: StatNumber}, end // what numberStat says of it
		default:
			return numberStat(b[i:end], r.opt.Details), end
		}
	}
	kind, end := directLiteral(b, i)
	if end < 0 {
		return Stat{}, -1
	}
	return r.stat(jsonlex.Token{Kind: kind}), end
}

// directNumber returns the end of the well-formed number at b[i] that is
// followed within b by a byte that cannot continue it, as
// jsonlex.ScanNumber, and whether it may be too large for a float64 (as
// mayOverflow says of it); end -1 otherwise.
func directNumber(b []byte, i int) (end int, big bool) {
	j := i
	if b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return -1, false
	case b[j] == '0':
		j++
	case b[j]-'1' < 9:
		j = jsonlex.SkipDigits(b, j+1)
	default:
		return -1, false
	}
	if j < len(b) && b[j] == '.' {
		k := j + 1
		if j = jsonlex.SkipDigits(b, k); j == k {
			return -1, false
		}
	}
	if j < len(b) && b[j]|0x20 == 'e' {
		e := j + 1
		k := e
		if k < len(b) && (b[k] == '-' || b[k] == '+') {
			k++
		}
		if j = jsonlex.SkipDigits(b, k); j == k {
			return -1, false
		}
		big = exponentMayOverflow(b[e:j])
	}
	if j >= len(b) || b[j] == '+' || b[j] == '-' || b[j] == '.' || b[j]|0x20 == 'e' || b[j]-'0' < 10 {
		return -1, false
	}
	return j, big
}

// directShape reads a shape's list of numbers at b[i] as readShape would
// and returns the index past its ']', or -1 for anything else.
//
// With t nil it reads a process group's ranks as readInts does.
func (r *Reader) directShape(b []byte, i int, t *objState) int {
	if b[i] != '[' {
		return -1
	}
	var item lineStart
	if i = firstItem(b, i+1, &item); i < len(b) && b[i] == ']' {
		return i + 1
	}
	for {
		if i >= len(b) {
			return -1
		}
		end := jsonlex.ScanNumber(b, i)
		if end < 0 || end-i > 4096 {
			return -1
		}
		if t != nil {
			r.shapeItem(b[i:end], t)
		} else if n, err := strconv.Atoi(string(b[i:end])); err == nil && len(r.groupRanks) < 1<<16 {
			r.groupRanks = append(r.groupRanks, n)
		}
		if i = end; i < len(b) && b[i] <= ' ' && t != nil {
			if k := r.shapeClose.match(b, i); k > 0 {
				return k
			}
			j := i
			if i = space(b, i); i < len(b) && b[i] == ']' {
				r.shapeClose.learn(b, j, i+1)
			}
		}
		var more bool
		if i, more = nextItem(b, i, &item, ']'); !more {
			return i
		}
	}
}

// space returns the index of the first byte at or after i in b that is not
// whitespace; the call is made only when there may be some (JSON's four
// whitespace bytes are at most ' ').
func space(b []byte, i int) int {
	if i < len(b) && b[i] <= ' ' {
		return jsonlex.SkipSpace(b, i)
	}
	return i
}
