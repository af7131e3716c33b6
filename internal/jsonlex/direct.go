package jsonlex

// Direct reading: a caller that knows the shape of the value that follows
// (a tensor's statistics, always the same few members) may read its bytes
// straight from the window with the scanners below, without tokens, and
// then tell the lexer how far it got. The caller checks every byte it
// consumes as strictly as Next would; what it cannot check it leaves to
// Next, having consumed nothing.

// Pending returns the bytes of the window that are not consumed yet. They
// are valid until the next call on the lexer.
func (l *Lexer) Pending() []byte {
	if l.err != nil {
		return nil
	}
	return l.buf[l.pos:]
}

// JustOpened reports whether the last token was an ObjectStart or an
// ArrayStart and nothing has been consumed since: the state in which Close
// may be called.
func (l *Lexer) JustOpened() bool {
	return l.err == nil && len(l.stack) > 0 &&
		(l.state == stNameOrEnd && l.inObject || l.state == stValueOrEnd && !l.inObject)
}

// Close consumes the first n bytes of Pending, which the caller has
// checked to be the contents of the object or array just opened
// (JustOpened) followed by its closing '}' or ']', as Next would have read
// them. The lexer is then where Next would be after that bracket. It
// reports false, consuming nothing, when the lexer is not just past an
// opening bracket or the n-th pending byte is not the closing one.
func (l *Lexer) Close(n int) bool {
	want := byte(']')
	if l.inObject {
		want = '}'
	}
	if !l.JustOpened() || n <= 0 || l.pos+n > len(l.buf) || l.buf[l.pos+n-1] != want {
		return false
	}
	end := l.pos + n
	l.pop()
	l.end = l.base + int64(end)
	l.pos = l.afterValueAt(end)
	return true
}

// ScanNumber returns the end of the well-formed JSON number that starts at
// b[i] and is followed, within b, by a byte that cannot continue it; -1 for
// anything else (not a number, bad grammar, or a number that reaches the
// end of b).
func ScanNumber(b []byte, i int) int { return scanNumber(b, i) }

// ScanPlain returns the index of the first byte at or after i in b that
// cannot stand for itself inside a JSON string (a quote, a backslash or a
// control character), or len(b).
func ScanPlain(b []byte, i int) int { return scanPlain(b, i) }

// SkipSpace returns the index of the first byte at or after i in b that is
// not JSON whitespace, or len(b).
func SkipSpace(b []byte, i int) int { return skipSpace(b, i) }

// SkipDigits returns the index of the first byte at or after i in b that
// is not an ASCII digit, or len(b).
func SkipDigits(b []byte, i int) int { return skipDigits(b, i) }

// AtValue reports whether the lexer waits for a value inside an object,
// after a member name and its colon: the state in which ConsumeValue may be
// called.
func (l *Lexer) AtValue() bool {
	return l.err == nil && l.state == stValue && l.inObject && len(l.stack) > 0
}

// ConsumeValue consumes the first n bytes of Pending, which the caller has
// checked to be whitespace and then one object or array, as Next would have
// read them (AtValue). The lexer is then where Next would be after that
// value's closing bracket. It reports false, consuming nothing, when the
// lexer does not wait for a value or the n-th pending byte is not '}' or
// ']'.
func (l *Lexer) ConsumeValue(n int) bool {
	if !l.AtValue() || n <= 0 || l.pos+n > len(l.buf) {
		return false
	}
	if c := l.buf[l.pos+n-1]; c != '}' && c != ']' {
		return false
	}
	end := l.pos + n
	l.end = l.base + int64(end)
	l.pos = l.afterValueAt(end)
	return true
}
