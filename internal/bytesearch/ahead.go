package bytesearch

import (
	"bytes"
	"math/bits"
)

// AheadRules are the rule set's parameters of the search for values that
// may be heading for overflow (package policy, AheadSearchRules): a value
// counts when it has at least IntDigits digits before its decimal point,
// or an exponent of at least Exponent; a name counts when its API (after
// an optional "special_") is one of APIs.
type AheadRules struct {
	IntDigits int
	Exponent  int
	APIs      []string
}

// AheadFinds is what FindAhead found in one document, in increasing
// order: the first byte of each number literal that is the value of a
// "Max" or "Min" member and large enough (Numbers), and the opening quote
// of each string whose API may be of the exp family (Names: the caller
// checks that it names an entry).
type AheadFinds struct {
	Numbers []int
	Names   []int
}

// FindAhead searches b, 32 bytes at a time where the CPU can, for the
// values and names AheadRules describe, and appends them to f. It is
// exact: every such number and name is found (TestFindAheadMatchesScalar
// holds the vector search to the byte-by-byte one). A whole number such
// as 44000.0 is found by its ".0" ending, which every float16 value of
// 1024 or more has; others by their exponent's '+'.
func FindAhead(b []byte, r AheadRules, f *AheadFinds) {
	k := 0
	if haveAheadMasks {
		var masks [256]uint64
		k = min(4, len(b)) // the vector search reads four bytes before
		scalarAhead(b, 0, k, r, f)
		for {
			blocks := min((len(b)-3-k)/32, len(masks))
			if blocks <= 0 {
				break
			}
			n := aheadMasks(b, k, blocks, masks[:])
			for _, jm := range masks[:n] {
				at := k + 32*int(jm>>32)
				for m := uint32(jm); m != 0; m &= m - 1 {
					judgeAhead(b, at+bits.TrailingZeros32(m), r, f)
				}
			}
			k += 32 * blocks
		}
	}
	scalarAhead(b, k, len(b), r, f)
}

// scalarAhead is FindAhead byte by byte over b[lo:hi].
func scalarAhead(b []byte, lo, hi int, r AheadRules, f *AheadFinds) {
	for k := lo; k < hi; k++ {
		if aheadMark(b, k) {
			judgeAhead(b, k, r, f)
		}
	}
}

// aheadMark is the vector search's test of one byte (see aheadMasksAVX2).
func aheadMark(b []byte, k int) bool {
	at := func(i int) byte {
		if i < 0 || i >= len(b) {
			return 0
		}
		return b[i]
	}
	switch b[k] {
	case '+':
		return true
	case '.':
		if isDigit(at(k-1)) && isDigit(at(k-4)) && at(k+1) == '0' && !isDigit(at(k+2)) {
			return true
		}
		n1, n2 := at(k+1), at(k+2)
		return (n1 == 'e' && n2 == 'x') || (n1 == 'c' && n2 == 'o') || (n1 == 's' && (n2 == 'i' || n2 == 'p'))
	}
	return false
}

// judgeAhead looks closely at a mark and records what it is.
func judgeAhead(b []byte, k int, r AheadRules, f *AheadFinds) {
	if b[k] == '+' {
		if s, ok := bigExponent(b, k, r.Exponent); ok && statKeyBefore(b, s) {
			f.Numbers = append(f.Numbers, s)
		}
		return
	}
	if k+1 < len(b) && b[k+1] == '0' {
		if s, ok := wholeNumber(b, k, r.IntDigits); ok && statKeyBefore(b, s) {
			f.Numbers = append(f.Numbers, s)
			return
		}
	}
	if q, ok := expName(b, k, r.APIs); ok && (len(f.Names) == 0 || f.Names[len(f.Names)-1] != q) {
		f.Names = append(f.Names, q)
	}
}

// wholeNumber: b[k] is the point of a number with at least digits digits
// before it; its first byte (a '-' sign included).
func wholeNumber(b []byte, k, digits int) (int, bool) {
	s := k
	for s > 0 && isDigit(b[s-1]) {
		s--
	}
	if k-s < digits {
		return 0, false
	}
	if s > 0 && (b[s-1] == '.' || isLetter(b[s-1])) {
		return 0, false // not the integer part of a number
	}
	if s > 0 && b[s-1] == '-' {
		s--
	}
	return s, true
}

// bigExponent: b[k] is the '+' of an exponent of at least min; the first
// byte of its number.
func bigExponent(b []byte, k, min int) (int, bool) {
	if k < 2 || (b[k-1] != 'e' && b[k-1] != 'E') || !isDigit(b[k-2]) {
		return 0, false
	}
	exp, i := 0, k+1
	for ; i < len(b) && isDigit(b[i]) && exp < 1000; i++ {
		exp = 10*exp + int(b[i]-'0')
	}
	if i == k+1 || exp < min {
		return 0, false
	}
	s := k - 1
	for s > 0 && (isDigit(b[s-1]) || b[s-1] == '.') {
		s--
	}
	if s > 0 && b[s-1] == '-' {
		s--
	}
	return s, true
}

// statKeyBefore reports whether the value starting at b[s] is the value of
// a member named max or min, in any case ("Max": 44000.0).
func statKeyBefore(b []byte, s int) bool {
	i := s - 1
	for i >= 0 && isSpace(b[i]) {
		i--
	}
	if i < 0 || b[i] != ':' {
		return false
	}
	i--
	for i >= 0 && isSpace(b[i]) {
		i--
	}
	if i < 4 || b[i] != '"' || b[i-4] != '"' {
		return false
	}
	key := b[i-3 : i]
	return bytes.EqualFold(key, []byte("max")) || bytes.EqualFold(key, []byte("min"))
}

// expName: b[k] is a '.' of a string; when the dotted part after it is one
// of apis (after an optional "special_"), the string's opening quote.
func expName(b []byte, k int, apis []string) (int, bool) {
	end := k + 1
	for end < len(b) && end-k <= 24 && b[end] != '.' && b[end] != '"' {
		end++
	}
	if end >= len(b) || b[end] != '.' {
		return 0, false
	}
	api := bytes.TrimPrefix(b[k+1:end], []byte("special_"))
	found := false
	for _, a := range apis {
		if string(api) == a {
			found = true
			break
		}
	}
	if !found {
		return 0, false
	}
	q := k
	for q > 0 && k-q < 256 && b[q] != '"' {
		if b[q] == '\n' {
			return 0, false
		}
		q--
	}
	return q, b[q] == '"'
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
