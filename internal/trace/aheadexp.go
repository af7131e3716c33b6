package trace

import (
	"bytes"
	"math"
	"strconv"

	"github.com/nanhunt/nanhunt/internal/policy"
)

// expUnwatched decides, from an entry's bytes alone, that a call of the
// exp family holds no value to watch. It reads the entry plainly, in one
// pass: its name, then "input_args" as its first key, whose first item is
// a tensor object (its dtype and Max), then, when the next keys are an
// empty "input_kwargs" and "output", the dtype of the output's first
// tensor. The Max must be finite and outside [policy.AheadExpNear·limit,
// limit). It says false (parse the entry) for anything it cannot read so:
// every entry it passes is one package dump's reader, and ahead.Observe,
// would find nothing watched in. raw starts at the entry's name's quote
// and may go on past the entry.
func expUnwatched(raw []byte) bool {
	s := &plain{b: raw}
	name, ok := s.str()
	if !ok || !s.punct(':') || !s.punct('{') {
		return false
	}
	if _, ok := policy.ExpLimitValue(string(name), "torch.float32"); !ok {
		return true // not a forward call of the family as the rule reads names (a backward entry)
	}
	if key, ok := s.str(); !ok || string(key) != "input_args" || !s.punct(':') || !s.punct('[') {
		return false
	}
	inDtype, inMax, ok := s.tensor()
	if !ok {
		return false
	}
	result := inDtype
	if s.skipRestOfList() && s.punct(',') {
		if key, ok := s.str(); ok && string(key) == "input_kwargs" {
			if !s.punct(':') || !s.punct('{') || !s.punct('}') || !s.punct(',') {
				return false
			}
		} else {
			s.i -= len(key) + 2 // not input_kwargs: read it again as the next key
		}
		key, ok := s.str()
		if !ok || string(key) != "output" || !s.punct(':') || !s.punct('[') {
			return false
		}
		if result, _, ok = s.tensor(); !ok {
			return false
		}
	} else if !s.punct('}') {
		return false // the entry goes on with more than this reads
	}
	limit, ok := policy.ExpLimitValue(string(name), result)
	if !ok {
		return true // a result of no floating dtype: nothing to overflow
	}
	v, err := strconv.ParseFloat(string(inMax), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return false
	}
	return v < limit*policy.AheadExpNear || v >= limit
}

// plain reads JSON tokens written plainly: strings without escapes,
// number literals, punctuation.
type plain struct {
	b []byte
	i int
}

func (s *plain) space() {
	b, i := s.b, s.i
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	s.i = i
}

func (s *plain) punct(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *plain) str() ([]byte, bool) {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	b := s.b
	for j := s.i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			return nil, false
		case '"':
			out := b[s.i+1 : j]
			s.i = j + 1
			return out, true
		}
	}
	return nil, false
}

// literal reads a number, true, false or null.
func (s *plain) literal() ([]byte, bool) {
	s.space()
	b, j := s.b, s.i
	for j < len(b) && literalByte[b[j]] {
		j++
	}
	if j == s.i {
		return nil, false
	}
	out := b[s.i:j]
	s.i = j
	return out, true
}

// literalByte: the bytes of a number, true, false or null (and of any
// other word, which the caller tells apart).
var literalByte = func() (t [256]bool) {
	for _, c := range []byte("-+.0123456789") {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// tensor reads an object of plain members (strings, literals, a list of
// integers) and returns its dtype and its Max literal; false when either
// is missing or written twice, or a key spells max otherwise.
func (s *plain) tensor() (dtype string, max []byte, ok bool) {
	if !s.punct('{') {
		return "", nil, false
	}
	for first := true; ; first = false {
		if s.punct('}') {
			return dtype, max, dtype != "" && max != nil
		}
		if !first && !s.punct(',') {
			return "", nil, false
		}
		key, ok := s.str()
		if !ok || !s.punct(':') {
			return "", nil, false
		}
		switch {
		case string(key) == "dtype":
			v, ok := s.str()
			if !ok || dtype != "" {
				return "", nil, false
			}
			dtype = string(v)
		case string(key) == "Max":
			v, ok := s.literal()
			if !ok || max != nil {
				return "", nil, false
			}
			max = v
		case bytes.EqualFold(key, []byte("max")):
			return "", nil, false
		default:
			if !s.value() {
				return "", nil, false
			}
		}
	}
}

// value skips a string, a literal or a flat list of literals.
func (s *plain) value() bool {
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, ok := s.str()
		return ok
	case '[':
		s.i++
		for first := true; ; first = false {
			if s.punct(']') {
				return true
			}
			if !first && !s.punct(',') {
				return false
			}
			if _, ok := s.literal(); !ok {
				return false
			}
		}
	}
	_, ok := s.literal()
	return ok
}

// skipRestOfList passes the other items of the list being read, plain
// tensors each, and its closing bracket.
func (s *plain) skipRestOfList() bool {
	for {
		if s.punct(']') {
			return true
		}
		if !s.punct(',') {
			return false
		}
		if _, _, ok := s.tensor(); !ok {
			return false
		}
	}
}
