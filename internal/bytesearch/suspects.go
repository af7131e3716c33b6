package bytesearch

import (
	"bytes"

	"github.com/nanhunt/nanhunt/internal/nonfinite"
)

// isAnchor marks the anchors.
var isAnchor = func() (t [256]bool) {
	for _, c := range anchors {
		t[c] = true
	}
	return t
}()

// plausible is a quick look at the bytes next to an anchor, which rules out
// most of the anchors in names and keys before candidate looks closely.
func plausible(b []byte, k int) bool {
	switch c := b[k]; c {
	case 'N':
		// NaN, or the end of a spelling such as "NAN" or "-NaN"
		return k+1 < len(b) && (b[k+1] == 'a' || b[k+1] == '"')
	case 'I':
		return k+1 < len(b) && b[k+1] == 'n'
	case 'e', 'E':
		// a negative exponent never overflows to infinity
		return k > 0 && isDigit(b[k-1]) && (k+1 >= len(b) || b[k+1] != '-')
	case '\\':
		return true
	}
	// before a closing quote, unless a colon follows (a member name such
	// as "Min"; but the is_nan key counts)
	if k+1 >= len(b) || b[k+1] != '"' {
		return false
	}
	name := k+2 < len(b) && b[k+2] == ':'
	return !name || k < 2 || (b[k-1] == 'a' && b[k-2] == 'n')
}

// anchors are the bytes that start a non-finite token (N, I), a \u escape,
// an exponent (e, E), or end a non-finite spelling before its closing quote
// (n, N, f, F, y, Y).
var anchors = []byte{'N', 'I', '\\', 'e', 'E', 'n', 'f', 'F', 'y', 'Y'}

// suspectAt reports whether b[k] starts (or, before a quote, ends)
// something the Reader may read as non-finite, where it starts, and whether
// it can only be -inf.
func suspectAt(b []byte, k int) (start int, neg, ok bool) {
	switch c := b[k]; {
	case c == 'N':
		if bytes.HasPrefix(b[k:], []byte("NaN")) {
			return k, false, true
		}
	case c == 'I':
		if bytes.HasPrefix(b[k:], []byte("Infinity")) {
			return k, k > 0 && b[k-1] == '-', true
		}
		return 0, false, false
	case c == '\\':
		return k, false, k+1 < len(b) && b[k+1] == 'u'
	case c|0x20 == 'e':
		if q, ok := bigExponentAt(b, k); ok {
			return q, b[q] == '-', true
		}
		return 0, false, false
	}
	if c := b[k] | 0x20; (c == 'n' || c == 'f' || c == 'y') && k+1 < len(b) && b[k+1] == '"' {
		return spellingAt(b, k)
	}
	return 0, false, false
}

// ignoredStatOfTensor reports whether the value starting near b[k] is one
// of the ignored statistics of a tensor: the value of such a member ("Mean",
// "Norm") of an object that has a "Max" member before it.
func (p *Prefilter) ignoredStatOfTensor(b []byte, k int) bool {
	if len(p.ignored) == 0 {
		return false
	}
	// back from the value (a sign or digits may precede the anchor) to ':'
	j := k - 1
	for j >= 0 && (isDigit(b[j]) || b[j] == '-' || b[j] == '+' || b[j] == '.') {
		j--
	}
	for j >= 0 && isSpaceByte(b[j]) {
		j--
	}
	if j < 1 || b[j] != ':' {
		return false
	}
	j--
	for j >= 0 && isSpaceByte(b[j]) {
		j--
	}
	if j < 1 || b[j] != '"' {
		return false
	}
	var key []byte
	for _, q := range p.ignored {
		if j+1 >= len(q) && bytes.Equal(b[j+1-len(q):j+1], q) {
			key = q
			break
		}
	}
	if key == nil {
		return false
	}
	// a "Max" member earlier in the same object: the one found for the
	// tensor's previous ignored statistic, when it lies in this window and
	// no brace lies between (else the bytes are looked at one by one, back
	// from the key: the same answer, found again)
	from := j - len(key)
	if m := p.maxOf; m.quote-4 >= p.off && p.off+int64(from) >= m.seen && p.off+int64(j)-m.quote < 400 &&
		!bracesIn(b[m.seen-p.off:from+1]) {
		p.maxOf.seen = p.off + int64(from)
		return true
	}
	for i := from; i >= 0 && i > j-400; i-- {
		switch b[i] {
		case '{', '}':
			return false
		case '"':
			if i >= 4 && string(b[i-4:i+1]) == `"Max"` {
				p.maxOf = maxMember{quote: p.off + int64(i), seen: p.off + int64(from)}
				return true
			}
		}
	}
	return false
}

// maxMember is where ignoredStatOfTensor last found a "Max" member: the
// stream offset of its closing quote, and how far after it the bytes are
// known to hold no brace (the start of the key it was found for). quote is
// -1 when there is none. (seen >= quote always.)
type maxMember struct{ quote, seen int64 }

// bracesIn reports whether b holds a brace.
func bracesIn(b []byte) bool {
	for _, c := range b {
		if c == '{' || c == '}' {
			return true
		}
	}
	return false
}

// spellingAt reports whether the string closing at b[end+1] spells a
// non-finite value (or is the is_nan key of nan_check dumps), where its
// opening quote is, and whether it is -inf.
func spellingAt(b []byte, end int) (start int, neg, ok bool) {
	stop := end + 1 // the closing quote
	q := bytes.LastIndexByte(b[max(0, stop-10):stop], '"')
	if q < 0 {
		return 0, false, false
	}
	q += max(0, stop-10)
	s := b[q+1 : stop]
	if len(s) < 3 || len(s) > 9 || (q > 0 && b[q-1] == '\\') {
		return 0, false, false
	}
	if c, _ := nonfinite.Parse(s); c != 0 || string(s) == "is_nan" {
		return q, c == nonfinite.NegInf, true // q: the Mean/Norm check starts at the quote
	}
	return 0, false, false
}

// bigExponentAt reports whether b[i] ('e' or 'E') is the exponent mark of a
// number whose exponent is not negative and at least 200, and where the
// number starts.
func bigExponentAt(b []byte, i int) (int, bool) {
	if i == 0 || !isDigit(b[i-1]) {
		return 0, false
	}
	j := i + 1
	if j < len(b) && b[j] == '+' {
		j++
	}
	v, digits := 0, 0
	for ; j < len(b) && isDigit(b[j]); j++ {
		digits++
		if v < 1000 {
			v = v*10 + int(b[j]-'0')
		}
	}
	if digits == 0 || v < 200 || (j < len(b) && !isNumberEnd(b[j]) && b[j] != '"') {
		return 0, false
	}
	start := i
	for start > 0 && (isDigit(b[start-1]) || b[start-1] == '.' || b[start-1] == '-') {
		start--
	}
	if start > 0 && !isNumberStart(b[start-1]) && b[start-1] != '"' {
		return 0, false // inside a word, such as 0x7f5f11e79330
	}
	return start, true
}

// A JSON number follows one of these bytes, and is followed by one.
func isNumberStart(c byte) bool { return isSpaceByte(c) || c == ':' || c == ',' || c == '[' }
func isNumberEnd(c byte) bool   { return isSpaceByte(c) || c == ',' || c == ']' || c == '}' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
