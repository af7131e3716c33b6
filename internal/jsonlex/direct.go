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

// AtFirstMember reports whether the last token was an ObjectStart and
// nothing has been consumed since: the state in which CloseObject may be
// called.
func (l *Lexer) AtFirstMember() bool {
	return l.err == nil && l.state == stNameOrEnd && l.inObject && len(l.stack) > 0
}

// CloseObject consumes the first n bytes of Pending, which the caller has
// checked to be the members of the object just opened (AtFirstMember)
// followed by its closing '}', as Next would have read them. The lexer is
// then where Next would be after that '}'. It reports false, consuming
// nothing, when the lexer is not at an object's first member or the n-th
// pending byte is not '}'.
func (l *Lexer) CloseObject(n int) bool {
	if !l.AtFirstMember() || n <= 0 || l.pos+n > len(l.buf) || l.buf[l.pos+n-1] != '}' {
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
