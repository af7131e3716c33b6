package jsonlex

import (
	"encoding/binary"
	"io"
	"math/bits"
	"strconv"
)

// A number is recognised by a small automaton over the grammar
//
//	-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//
// whose states are:
const (
	nStart = iota // nothing yet
	nMinus        // -
	nZero         // -?0
	nInt          // -?[1-9][0-9]*
	nDot          // integer part and '.'
	nFrac         // fraction digits
	nE            // 'e' or 'E'
	nESign        // exponent sign
	nExp          // exponent digits
	nStates

	// Results of a transition that do not continue the number.
	nStop   = 0x10 // a byte that cannot be part of a number: the number may end here
	nBad    = 0x11 // a number byte that the grammar does not allow here
	nNegInf = 0x12 // 'I' after '-': the token is -Infinity
)

// numAccept marks the states in which a number may end.
var numAccept = [16]bool{nZero: true, nInt: true, nFrac: true, nExp: true}

// numNext[s<<8|c] is the state after byte c in state s.
var numNext = func() (t [16 << 8]uint8) {
	for s := range 16 {
		for c := range 256 {
			v := uint8(nStop)
			switch c {
			case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '+', '.', 'e', 'E':
				v = nBad
			}
			t[s<<8|c] = v
		}
	}
	set := func(s int, chars string, to uint8) {
		for i := 0; i < len(chars); i++ {
			t[s<<8|int(chars[i])] = to
		}
	}
	const digits, nonzero = "0123456789", "123456789"
	set(nStart, "-", nMinus)
	set(nStart, "0", nZero)
	set(nStart, nonzero, nInt)
	set(nMinus, "0", nZero)
	set(nMinus, nonzero, nInt)
	set(nMinus, "I", nNegInf)
	set(nZero, ".", nDot)
	set(nZero, "eE", nE)
	set(nInt, digits, nInt)
	set(nInt, ".", nDot)
	set(nInt, "eE", nE)
	set(nDot, digits, nFrac)
	set(nFrac, digits, nFrac)
	set(nFrac, "eE", nE)
	set(nE, "+-", nESign)
	set(nE, digits, nExp)
	set(nESign, digits, nExp)
	set(nExp, digits, nExp)
	return t
}()

// isNumberByte marks the bytes that may occur in a number.
var isNumberByte = func() (t [256]bool) {
	for _, c := range "0123456789+-.eE" {
		t[c] = true
	}
	return t
}()

// skipDigits returns the index of the first byte at or after i in b that
// is not an ASCII digit, or len(b). It tests eight bytes at a time: after
// XOR with '0' a digit is a byte below 10, and adding 0x76 to the low seven
// bits sets the top bit of every other byte, without carries between bytes.
func skipDigits(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) ^ (lsb * '0')
		m := ((x&(lsb*0x7f) + lsb*0x76) | x) & msb
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	return i
}

// scanNumber returns the end of the well-formed number that starts at b[i]
// and is followed by a byte that cannot continue it, or -1 for anything
// else (an error, -Infinity, or a number that reaches the end of b), which
// numberDFA then handles. It is the fast path of Next.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i]-'1' < 9:
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		i = skipDigits(b, j)
		if i == j {
			return -1
		}
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		i = skipDigits(b, j)
		if i == j {
			return -1
		}
	}
	if i >= len(b) || isNumberByte[b[i]] {
		return -1
	}
	return i
}

// numberDFA consumes the number (or -Infinity) that starts at buf[pos] in
// the cases that scanNumber leaves to it: it runs the automaton, which goes
// on across windows and tells exactly what is wrong.
func (l *Lexer) numberDFA(pos int, skip bool) (Token, error) {
	buf := l.buf
	st := uint8(nStart)
	i := pos
	for ; i < len(buf); i++ {
		t := numNext[uint(st&15)<<8|uint(buf[i])]
		if t >= nStop {
			break
		}
		st = t
	}
	if i < len(buf) {
		off := l.base + int64(pos)
		if tok, done, err := l.numberEnd(off, st, i); done {
			return tok, err
		}
		if !skip && i-pos > l.maxStr {
			return l.tooLong(off, "number")
		}
		l.pos = i
		l.end = l.base + int64(i)
		l.afterValue()
		return Token{Kind: Number, Offset: off, Bytes: buf[pos:i:i]}, nil
	}
	return l.numberSlow(pos, st, skip)
}

// numberEnd looks at the byte buf[i] that stopped the automaton in state st.
// Unless the number ends well before it, it consumes the rest of the token
// (-Infinity) or fails, and reports done.
func (l *Lexer) numberEnd(off int64, st uint8, i int) (tok Token, done bool, err error) {
	c := l.buf[i]
	switch t := numNext[uint(st&15)<<8|uint(c)]; {
	case t == nStop && numAccept[st&15]:
		return Token{}, false, nil
	case t == nNegInf:
		tok, err = l.literal(off, i, "Infinity", NegInf)
		return tok, true, err
	case st == nMinus:
		tok, err = l.syntaxAt(i, "invalid character "+quoteChar(c)+" after '-' (expecting a digit)")
	case st == nZero && c >= '0' && c <= '9':
		tok, err = l.syntaxAt(i, "invalid character "+quoteChar(c)+" after leading zero in number")
	case st == nDot:
		tok, err = l.syntaxAt(i, "invalid character "+quoteChar(c)+" after decimal point in number (expecting a digit)")
	case st == nE || st == nESign:
		tok, err = l.syntaxAt(i, "invalid character "+quoteChar(c)+" in exponent of number (expecting a digit)")
	default:
		tok, err = l.syntaxAt(i, "invalid character "+quoteChar(c)+" in number")
	}
	return tok, true, err
}

// numberSlow continues a number that reaches the end of the window: the
// bytes seen so far go to scratch and the automaton goes on in the next
// windows.
func (l *Lexer) numberSlow(pos int, st uint8, skip bool) (Token, error) {
	off := l.base + int64(pos)
	if !skip {
		l.scratch = append(l.scratch[:0], l.buf[pos:]...)
	}
	l.pos = len(l.buf)
	for {
		if !l.more() {
			if l.rerr == io.EOF && numAccept[st&15] {
				break
			}
			return l.ended(" inside number")
		}
		buf := l.buf
		i := 0
		for ; i < len(buf); i++ {
			t := numNext[uint(st&15)<<8|uint(buf[i])]
			if t >= nStop {
				break
			}
			st = t
		}
		if !skip {
			if len(l.scratch)+i > l.maxStr {
				return l.tooLong(off, "number")
			}
			l.scratch = append(l.scratch, buf[:i]...)
		}
		l.pos = i
		if i < len(buf) {
			if tok, done, err := l.numberEnd(off, st, i); done {
				return tok, err
			}
			break
		}
	}
	if skip {
		l.end = l.base + int64(l.pos)
		l.afterValue()
		return Token{Kind: Number, Offset: off}, nil
	}
	if len(l.scratch) > l.maxStr {
		return l.tooLong(off, "number")
	}
	l.end = l.base + int64(l.pos)
	l.afterValue()
	return Token{Kind: Number, Offset: off, Bytes: l.scratch[:len(l.scratch):len(l.scratch)]}, nil
}

// tooLong fails for a token longer than Options.MaxStringLen that starts at
// off.
func (l *Lexer) tooLong(off int64, what string) (Token, error) {
	return l.syntaxOff(off, what+" longer than "+strconv.Itoa(l.maxStr)+" bytes")
}
