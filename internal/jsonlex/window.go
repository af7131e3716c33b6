package jsonlex

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
)

// maxEmptyReads is how many successive reads may return no bytes and no
// error before the lexer gives up with io.ErrNoProgress.
const maxEmptyReads = 100

// errInvalidCount is the error for a Read that returns a count outside
// [0, len(p)].
var errInvalidCount = errors.New("reader returned an invalid count")

// more replaces the window, which must be fully consumed, with the next
// bytes from the reader. It reports whether any byte arrived; when it
// returns false, l.rerr is io.EOF or the reader's error.
func (l *Lexer) more() bool {
	if l.rerr != nil {
		return false
	}
	l.base += int64(len(l.buf))
	l.pos = 0
	w := l.buf[:cap(l.buf)]
	for empty := 0; ; {
		n, err := l.r.Read(w)
		if n < 0 || n > len(w) {
			n, err = 0, errInvalidCount
		}
		l.buf = w[:n]
		if err != nil {
			l.rerr = err
			l.rerrOff = l.base + int64(n)
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
		if empty++; empty >= maxEmptyReads {
			l.rerr = io.ErrNoProgress
			l.rerrOff = l.base
			return false
		}
	}
}

// eofReader stands in for a nil reader.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// isSpace marks the four whitespace bytes of JSON.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipSpace returns the index of the first byte at or after pos in b that
// is not whitespace, or len(b). The newline and indentation of
// pretty-printed JSON are passed over eight bytes at a time.
func skipSpace(b []byte, pos int) int {
	const hi1 = 0x8080808080808080
	for pos+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[pos:])
		sp := zeroBytes(x^(lsb*' ')) | zeroBytes(x^(lsb*'\n'))
		if sp == hi1 {
			pos += 8
			continue
		}
		pos += bits.TrailingZeros64(^sp&hi1) >> 3
		if c := b[pos]; c != '\r' && c != '\t' {
			return pos
		}
		pos++
	}
	for pos < len(b) && isSpace[b[pos]] {
		pos++
	}
	return pos
}
