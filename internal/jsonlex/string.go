package jsonlex

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainByte marks the bytes that stand for themselves inside a string:
// everything but '"', '\\' and control characters.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanPlain returns the index of the first byte at or after i in b that is
// not a plain string byte, or len(b). It tests eight bytes at a time: a byte
// b is special when b < 0x20, b == '"' or b == '\\', and the classic
// "has less than" and "has zero byte" bit tricks flag such bytes in a word.
// Borrows can only produce false flags above a true one, so the lowest flag
// is exact.
func scanPlain(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lsb * '"')
		s := x ^ (lsb * '\\')
		m := ((x-lsb*0x20)&^x | (q-lsb)&^q | (s-lsb)&^s) & msb
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if !plainByte[b[i]] {
			break
		}
	}
	return i
}

// escapeByte maps the byte after a backslash to the byte it stands for; 0
// marks bytes that do not form a valid single-character escape.
var escapeByte = [256]byte{
	'"': '"', '\\': '\\', '/': '/',
	'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t',
}

// hexValue maps a hexadecimal digit to its value and other bytes to 0xff.
var hexValue = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = uint8(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = uint8(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			t[c] = uint8(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// str consumes the string that starts with the quote at buf[pos]; Next
// calls it when its inline path does not apply. When the whole string is in
// the window and has no escapes, Bytes points into the window, else into
// scratch.
func (l *Lexer) str(pos int, kind Kind, skip bool) (Token, error) {
	buf := l.buf
	start := pos + 1
	i := scanPlain(buf, start)
	if i < len(buf) && buf[i] == '"' {
		off := l.base + int64(pos)
		quote, cut := i, false
		if !skip && i-start > l.maxStr {
			if kind != String || !l.cutLong {
				return l.tooLong(off, "string")
			}
			i, cut = start+l.maxStr, true
			l.cuts++
		}
		l.pos = quote + 1
		l.end = off + int64(quote+1-pos)
		if kind == Name {
			l.state = stColon
		} else {
			l.afterValue()
		}
		return Token{Kind: kind, Offset: off, Bytes: buf[start:i:i], Cut: cut}, nil
	}
	return l.strSlow(pos, i, kind, skip)
}

// strSlow continues the string that starts at buf[pos] from buf[i], the
// first byte that is an escape, a control character or past the window.
// Unless skip is set, the unescaped content is built in scratch.
func (l *Lexer) strSlow(pos, i int, kind Kind, skip bool) (Token, error) {
	off := l.base + int64(pos)
	if !skip {
		l.scratch = append(l.scratch[:0], l.buf[pos+1:i]...)
	}
	l.pos = i
	var hi rune // a high surrogate from a \u escape that waits for its low half, or 0
	cut := false
	for {
		if !skip && len(l.scratch) > l.maxStr {
			if kind != String || !l.cutLong {
				return l.tooLong(off, "string")
			}
			// keep the beginning, read the rest through
			l.scratch, skip, cut = l.scratch[:l.maxStr], true, true
			l.cuts++
		}
		if l.pos >= len(l.buf) && !l.more() {
			return l.ended(" inside string")
		}
		buf := l.buf
		i := scanPlain(buf, l.pos)
		if i > l.pos {
			if !skip {
				if hi != 0 {
					l.scratch = utf8.AppendRune(l.scratch, utf8.RuneError)
					hi = 0
				}
				l.scratch = append(l.scratch, buf[l.pos:i]...)
			}
			l.pos = i
		}
		if i == len(buf) {
			continue
		}
		c := buf[i]
		l.pos = i + 1
		if c == '"' {
			break
		}
		if c != '\\' {
			return l.syntaxAt(i, "invalid character "+quoteChar(c)+" in string (control characters must be escaped)")
		}
		if l.pos >= len(l.buf) && !l.more() {
			return l.ended(" inside string")
		}
		e := l.buf[l.pos]
		l.pos++
		if e != 'u' {
			r := escapeByte[e]
			if r == 0 {
				return l.syntaxAt(l.pos-1, "invalid character "+quoteChar(e)+" in string escape sequence")
			}
			if !skip {
				if hi != 0 {
					l.scratch = utf8.AppendRune(l.scratch, utf8.RuneError)
					hi = 0
				}
				l.scratch = append(l.scratch, r)
			}
			continue
		}
		var v rune
		for range 4 {
			if l.pos >= len(l.buf) && !l.more() {
				return l.ended(" inside string")
			}
			h := l.buf[l.pos]
			d := hexValue[h]
			if d == 0xff {
				return l.syntaxAt(l.pos, "invalid character "+quoteChar(h)+" in \\u escape (expecting a hexadecimal digit)")
			}
			v = v<<4 | rune(d)
			l.pos++
		}
		if skip {
			continue
		}
		if hi != 0 {
			if v >= 0xdc00 && v <= 0xdfff {
				l.scratch = utf8.AppendRune(l.scratch, 0x10000+(hi-0xd800)<<10+(v-0xdc00))
				hi = 0
				continue
			}
			l.scratch = utf8.AppendRune(l.scratch, utf8.RuneError)
			hi = 0
		}
		switch {
		case v >= 0xd800 && v <= 0xdbff:
			hi = v
		case v >= 0xdc00 && v <= 0xdfff:
			l.scratch = utf8.AppendRune(l.scratch, utf8.RuneError)
		default:
			l.scratch = utf8.AppendRune(l.scratch, v)
		}
	}
	var b []byte
	switch {
	case cut:
		b = l.scratch[:len(l.scratch):len(l.scratch)]
	case !skip:
		if hi != 0 {
			l.scratch = utf8.AppendRune(l.scratch, utf8.RuneError)
		}
		if len(l.scratch) > l.maxStr {
			if kind != String || !l.cutLong {
				return l.tooLong(off, "string")
			}
			l.scratch, cut = l.scratch[:l.maxStr], true
			l.cuts++
		}
		b = l.scratch[:len(l.scratch):len(l.scratch)]
	}
	l.end = l.base + int64(l.pos)
	if kind == Name {
		l.state = stColon
	} else {
		l.afterValue()
	}
	return Token{Kind: kind, Offset: off, Bytes: b, Cut: cut}, nil
}
