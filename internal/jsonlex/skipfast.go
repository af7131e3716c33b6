package jsonlex

import "bytes"

// SkipValueFast skips the next value like SkipValue, but inside an object
// or array it checks only what is needed to find the value's end: that
// strings close and that brackets balance. Scalars between them are not
// validated, so a syntax error inside the skipped container may go
// unnoticed; a document that ends inside it is still a truncation error.
// It walks the structural index (structural.go) 64 bytes at a time, several
// times faster than SkipValue on pretty-printed JSON.
func (l *Lexer) SkipValueFast() error {
	tok, err := l.Next()
	if err != nil {
		return err
	}
	if tok.Kind != ObjectStart && tok.Kind != ArrayStart {
		return nil
	}
	return l.skipRest()
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

// SkipObjectLines skips the value that follows, as SkipValueFast does,
// when it is an object laid out the way json.dump(indent=N) lays out a
// member's object value: its '{' ends its line, and it closes at the first
// line that is close ("\n", the member's indentation, "}"). Only the bytes
// of close are looked for: what lies between is not read, so an object
// whose inner lines are not indented deeper than its closing line is cut
// wrong. Any other value (an empty object "{}", an array, a scalar, an
// object whose '{' is followed by something else than a newline) is
// skipped by SkipValueFast's rules. close must start with '\n' and end
// with '}'.
func (l *Lexer) SkipObjectLines(close []byte) error {
	tok, err := l.Next()
	if err != nil {
		return err
	}
	switch tok.Kind {
	case ArrayStart:
		return l.skipRest()
	case ObjectStart:
	default:
		return nil
	}
	if l.pos == len(l.buf) && !l.more() {
		_, err := l.ended(" inside a skipped value")
		return err
	}
	if l.buf[l.pos] != '\n' {
		return l.skipRest()
	}
	matched := 0 // bytes of close at the end of the windows before
	for {
		if matched > 0 {
			rest := close[matched:]
			n := min(len(rest), len(l.buf))
			switch {
			case !bytes.Equal(l.buf[:n], rest[:n]):
				matched = 0 // close holds one '\n': no match starts inside it
			case n == len(rest):
				return l.closeSkipped(n)
			default:
				matched += n
			}
		}
		if matched == 0 {
			if end := closeLineEnd(l.buf, l.pos, close); end >= 0 {
				return l.closeSkipped(end)
			}
			matched = partialSuffix(l.buf[l.pos:], close)
		}
		l.pos = len(l.buf)
		if !l.more() {
			_, err := l.ended(" inside a skipped value")
			return err
		}
	}
}

// partialSuffix is the length of the longest end of b that is a proper
// beginning of close, which starts with '\n' and holds no other.
func partialSuffix(b, close []byte) int {
	i := bytes.LastIndexByte(b[max(0, len(b)-len(close)+1):], '\n')
	if i < 0 {
		return 0
	}
	tail := b[max(0, len(b)-len(close)+1)+i:]
	if bytes.HasPrefix(close, tail) {
		return len(tail)
	}
	return 0
}

// closeSkipped ends a skipped container whose closing bracket is at
// buf[end-1].
func (l *Lexer) closeSkipped(end int) error {
	l.pos = end
	l.end = l.base + int64(end)
	l.pop()
	l.pos = l.afterValueAt(end)
	return nil
}

// skipRest skips the container just opened, structurally.
func (l *Lexer) skipRest() error {
	s := skipState{depth: 1}
	for {
		if pos := s.scan(&l.index, l.buf, l.base, l.pos); pos < len(l.buf) || s.depth == 0 {
			return l.closeSkipped(pos)
		}
		l.pos = len(l.buf)
		if !l.more() {
			_, err := l.ended(" inside a skipped value")
			return err
		}
	}
}
