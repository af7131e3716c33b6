package dump

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
)

// Hits is where a dump.json may hold a non-finite value, found by a byte
// search without parsing. A file without hits holds none: every statistic
// the Reader would return is finite (or null, or not a number). The
// converse does not hold: a hit only says "parse here".
type Hits struct {
	// Offsets of the suspect tokens, ascending.
	Offsets []int64
	// Saturated: more hits than were kept; everything from the last offset
	// on is suspect.
	Saturated bool
	// Whole: the bytes start with '{', end with '}' (whitespace aside) and
	// hold as many closing brackets as opening ones. A dump.json cut by a
	// crash during msprobe's write is not whole, and must be parsed to say
	// where it ends. (A cleared file is not parsed, so other damage to it
	// goes unseen.)
	Whole bool
	// Tensors and Stats count the "dtype" and "Max" keys: a file whose
	// tensors carry no statistics (summary_mode xor) says nothing about
	// NaN, and must be parsed to say so.
	Tensors, Stats int
}

// Clear reports whether the file holds no non-finite value, looks whole and
// has statistics: it need not be parsed.
func (h *Hits) Clear() bool {
	return len(h.Offsets) == 0 && h.Whole && (h.Tensors == 0 || h.Stats > 0)
}

// Within reports whether [from, to) holds a hit.
func (h *Hits) Within(from, to int64) bool {
	if h.Saturated && len(h.Offsets) > 0 && to > h.Offsets[len(h.Offsets)-1] {
		return true
	}
	i, _ := slices.BinarySearch(h.Offsets, from)
	return i < len(h.Offsets) && h.Offsets[i] < to
}

// Prefilter searches dump.json bytes, at close to memory speed, for
// anything the Reader could read as a non-finite value:
//
//   - the bare tokens NaN and Infinity (and so -Infinity), anywhere;
//   - strings that spell nan, inf or infinity in any case with an optional
//     sign, strings with \u escapes (which could spell them), and the
//     "is_nan" flag of nan_check dumps;
//   - numbers whose exponent could make them overflow float64 (an exponent
//     of 200 or more: the Reader does not read number literals longer than
//     maxNumberLen, so no mantissa adds more than that many digits).
//
// Each kind is found by its own bytes.Index pass over a window, which the
// assembly behind package bytes does many bytes at a time.
type Prefilter struct {
	buf  []byte
	hits Hits
	max  int

	base        int64 // stream offset of the window's first new byte
	carry       int   // bytes kept from the previous window in front of it
	first, last byte  // first and last bytes that are not whitespace
	open, close int64 // brackets
}

// carryLen is how much of a window is kept in front of the next one.
// Plain patterns cut by the end of a window are found in the next one; a
// candidate that needs context (a spelling, an exponent) is judged in the
// window where contextLen bytes on both sides of it are present: candidates
// in the last contextLen bytes of a window wait for the next, where the
// carry gives them their left side. A number literal longer than
// maxNumberLen is not read as a value, so contextLen covers any that is.
const (
	contextLen = maxNumberLen + 28
	carryLen   = 2 * contextLen
)

// NewPrefilter returns a Prefilter reading through a window of the given
// size (0: 1 MiB) and keeping at most max offsets (0: 4096).
func NewPrefilter(window, max int) *Prefilter {
	if window <= 0 {
		window = 1 << 20
	}
	if max <= 0 {
		max = 4096
	}
	return &Prefilter{buf: make([]byte, carryLen+window), max: max}
}

// Scan reads r to the end and returns what it found, valid until the next
// call. It stops reading early once the hits saturate.
func (p *Prefilter) Scan(r io.Reader) (*Hits, error) {
	p.hits.Offsets = p.hits.Offsets[:0]
	p.hits.Saturated, p.hits.Whole = false, false
	p.hits.Tensors, p.hits.Stats = 0, 0
	p.base, p.carry = 0, 0
	p.first, p.last = 0, 0
	p.open, p.close = 0, 0
	for {
		n, err := io.ReadFull(r, p.buf[p.carry:])
		final := err == io.EOF || err == io.ErrUnexpectedEOF
		if n > 0 {
			p.window(p.buf[:p.carry+n], p.carry, final)
			p.base += int64(n)
			if p.hits.Saturated {
				return &p.hits, nil
			}
			keep := min(carryLen, p.carry+n)
			copy(p.buf, p.buf[p.carry+n-keep:p.carry+n])
			p.carry = keep
		}
		if final {
			p.hits.Whole = p.first == '{' && p.last == '}' && p.open == p.close
			slices.Sort(p.hits.Offsets)
			p.hits.Offsets = slices.Compact(p.hits.Offsets)
			return &p.hits, nil
		}
		if err != nil {
			return &p.hits, err
		}
	}
}

// window scans b, whose first carry bytes were already seen at the end of
// the previous window.
func (p *Prefilter) window(b []byte, carry int, final bool) {
	fresh := b[carry:]
	p.ends(fresh)
	p.open += int64(bytes.Count(fresh, []byte{'{'}) + bytes.Count(fresh, []byte{'['}))
	p.close += int64(bytes.Count(fresh, []byte{'}'}) + bytes.Count(fresh, []byte{']'}))
	off := p.base - int64(carry) // stream offset of b[0]
	for _, pat := range plainPatterns {
		p.each(b, pat, func(i int) bool { return i+len(pat) > carry }, func(i int) { p.hit(off + int64(i)) })
	}
	if p.hits.Stats == 0 {
		p.each(b, `"Max"`, func(i int) bool { return i+5 > carry }, func(int) { p.hits.Stats++ })
		p.each(b, `"dtype"`, func(i int) bool { return i+7 > carry }, func(int) { p.hits.Tensors++ })
	}
	// Candidates that need context: those in [lo, hi) are judged here.
	lo, hi := max(0, carry-contextLen), len(b)-contextLen
	if final {
		hi = len(b)
	}
	if carry == 0 {
		lo = 0
	}
	in := func(i int) bool { return lo <= i && i < hi }
	for _, pat := range spellingEnds {
		p.each(b, pat, in, func(i int) {
			if q, ok := spellingAt(b, i); ok {
				p.hit(off + int64(q))
			}
		})
	}
	for i := lo; i < hi && !p.hits.Saturated; {
		k := indexExponentMark(b, i, hi)
		if k < 0 {
			break
		}
		if q, ok := bigExponentAt(b, k); ok {
			p.hit(off + int64(q))
		}
		i = k + 1
	}
}

// indexExponentMark returns the index in [from, to) of the first 'e' or 'E'
// of b that follows a digit, or -1. It looks at eight bytes at a time: 'e'
// and 'E' differ only in the 0x20 bit.
func indexExponentMark(b []byte, from, to int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	isMark := func(k int) bool { return b[k]|0x20 == 'e' && k > 0 && isDigit(b[k-1]) }
	i := from
	for ; i+8 <= to; i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) | 0x2020202020202020
		x ^= 'e' * ones
		if (x-ones)&^x&highs != 0 {
			for k := i; k < i+8; k++ {
				if isMark(k) {
					return k
				}
			}
		}
	}
	for k := i; k < to; k++ {
		if isMark(k) {
			return k
		}
	}
	return -1
}

// Patterns that are a hit wherever they stand.
var plainPatterns = []string{"NaN", "Infinity", `\u`, `"is_nan"`}

// The closing bytes of every non-finite spelling: nan, inf, infinity.
var spellingEnds = []string{`n"`, `N"`, `f"`, `F"`, `y"`, `Y"`}

// each calls fn with the index of every occurrence of pat in b that keep
// accepts.
func (p *Prefilter) each(b []byte, pat string, keep func(int) bool, fn func(int)) {
	for i := 0; i < len(b) && !p.hits.Saturated; {
		j := bytes.Index(b[i:], []byte(pat))
		if j < 0 {
			return
		}
		at := i + j
		if keep(at) {
			fn(at)
		}
		i = at + 1
	}
}

// spellingAt reports whether the string closing at b[end+1] (end is where a
// spellingEnds pattern starts) spells a non-finite value, and where its
// opening quote is.
func spellingAt(b []byte, end int) (int, bool) {
	stop := end + 1 // the closing quote
	q := bytes.LastIndexByte(b[max(0, stop-10):stop], '"')
	if q < 0 {
		return 0, false
	}
	q += max(0, stop-10)
	s := b[q+1 : stop]
	if len(s) < 3 || len(s) > 9 || (q > 0 && b[q-1] == '\\') {
		return 0, false
	}
	if st := stringStat(s); st.Class != 0 {
		return q, true
	}
	return 0, false
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
	if digits == 0 || v < 200 || (j < len(b) && !isNumberEnd(b[j])) {
		return 0, false
	}
	start := i
	for start > 0 && (isDigit(b[start-1]) || b[start-1] == '.' || b[start-1] == '-') {
		start--
	}
	if start > 0 && !isNumberStart(b[start-1]) {
		return 0, false // inside a word or a string, such as 0x7f5f11e79330
	}
	return start, true
}

// A JSON number follows one of these bytes, and is followed by one.
func isNumberStart(c byte) bool { return isSpaceByte(c) || c == ':' || c == ',' || c == '[' }
func isNumberEnd(c byte) bool   { return isSpaceByte(c) || c == ',' || c == ']' || c == '}' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ends records the first and the last byte that are not whitespace.
func (p *Prefilter) ends(b []byte) {
	if p.first == 0 {
		for _, c := range b {
			if !isSpaceByte(c) {
				p.first = c
				break
			}
		}
	}
	for k := len(b) - 1; k >= 0; k-- {
		if !isSpaceByte(b[k]) {
			p.last = b[k]
			return
		}
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func (p *Prefilter) hit(off int64) {
	if len(p.hits.Offsets) >= p.max {
		p.hits.Saturated = true
		return
	}
	p.hits.Offsets = append(p.hits.Offsets, off)
}
