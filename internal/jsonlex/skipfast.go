package jsonlex

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// SkipValueFast skips the next value like SkipValue, but inside an object
// or array it checks only what is needed to find the value's end: that
// strings close and that brackets balance. Scalars between them are not
// validated, so a syntax error inside the skipped container may go
// unnoticed; a document that ends inside it is still a truncation error.
// It runs several times faster than SkipValue on pretty-printed JSON.
func (l *Lexer) SkipValueFast() error {
	tok, err := l.Next()
	if err != nil {
		return err
	}
	if tok.Kind != ObjectStart && tok.Kind != ArrayStart {
		return nil
	}
	depth := 1
	inString := false
	for {
		buf, pos := l.buf, l.pos
		for pos < len(buf) {
			if inString {
				q := nextQuote(buf, pos)
				if q >= len(buf) {
					break
				}
				pos = q
				if l.escapedQuote(buf, pos) {
					pos++
					continue
				}
				inString = false
				pos++
				continue
			}
			// Outside strings: jump to the next quote or bracket, eight
			// bytes at a time.
			pos = nextStructural(buf, pos)
			if pos >= len(buf) {
				break
			}
			c := buf[pos]
			pos++
			switch skipClass[c] {
			case 0:
				continue
			case '"':
				inString = true
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				l.pos = pos
				l.end = l.base + int64(pos)
				l.pop()
				l.pos = l.afterValueAt(pos)
				return nil
			}
		}
		// A quote at the window's start may close a string whose escaping
		// backslashes were at the end of the previous window, or of several
		// windows when one holds nothing but backslashes.
		if inString && len(buf) > 0 {
			n := trailingBackslashes(buf)
			if n == len(buf) {
				n += l.tailBackslashes
			}
			l.tailBackslashes = n
		} else {
			l.tailBackslashes = 0
		}
		l.pos = len(buf)
		if !l.more() {
			_, err := l.ended(" inside a skipped value")
			return err
		}
	}
}

// skipClass tells the bytes SkipValueFast reacts to: '{' for an opening
// bracket, '}' for a closing one, '"' for a quote.
var skipClass = [256]byte{'{': '{', '[': '{', '}': '}', ']': '}', '"': '"'}

// escapedQuote reports whether the quote at buf[i] is escaped: preceded by
// an odd number of backslashes (counting those at the end of the previous
// window when the run reaches the start of this one).
func (l *Lexer) escapedQuote(buf []byte, i int) bool {
	n, j := 0, i-1
	for ; j >= 0 && buf[j] == '\\'; j-- {
		n++
	}
	if j < 0 {
		n += l.tailBackslashes
	}
	return n%2 == 1
}

func trailingBackslashes(buf []byte) int {
	n := 0
	for j := len(buf) - 1; j >= 0 && buf[j] == '\\'; j-- {
		n++
	}
	return n
}

// nextStructural returns the index of the first byte at or after pos that
// may be a quote or a bracket ('[', ']', '{', '}' differ only in the bits
// 0x20, 0x04 and 0x02, which the mask clears; a few letters share the
// pattern and are told apart by the caller), or len(buf).
func nextStructural(buf []byte, pos int) int {
	const ones, lo7, hi1 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	eq := func(x uint64, c byte) uint64 {
		x ^= uint64(c) * ones
		return ^(((x & lo7) + lo7) | x) & hi1
	}
	for ; pos+8 <= len(buf); pos += 8 {
		w := binary.LittleEndian.Uint64(buf[pos:])
		if m := eq(w, '"') | eq(w&^(0x26*ones), 0x59); m != 0 {
			return pos + bits.TrailingZeros64(m)>>3
		}
	}
	for ; pos < len(buf); pos++ {
		if skipClass[buf[pos]] != 0 {
			return pos
		}
	}
	return pos
}

// nextQuote returns the index of the first quote at or after pos, or
// len(buf): eight bytes at a time for the short strings of a dump, then
// bytes.IndexByte for long ones.
func nextQuote(buf []byte, pos int) int {
	const ones, lo7, hi1 = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	for k := 0; k < 4 && pos+8 <= len(buf); k, pos = k+1, pos+8 {
		x := binary.LittleEndian.Uint64(buf[pos:]) ^ ('"' * ones)
		if m := ^(((x & lo7) + lo7) | x) & hi1; m != 0 {
			return pos + bits.TrailingZeros64(m)>>3
		}
	}
	if q := bytes.IndexByte(buf[pos:], '"'); q >= 0 {
		return pos + q
	}
	return len(buf)
}

// Buffered returns the input bytes from stream offset from up to the end of
// the last token consumed, when the read window still holds all of them;
// nil otherwise. The bytes are valid until the next call on the Lexer.
func (l *Lexer) Buffered(from int64) []byte {
	if from < l.base || l.end < from || l.end > l.base+int64(len(l.buf)) {
		return nil
	}
	return l.buf[from-l.base : l.end-l.base]
}
