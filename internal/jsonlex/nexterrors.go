package jsonlex

import "strconv"

// tooDeep is the error of a container opened at buf[pos] past the
// nesting bound.
func (l *Lexer) tooDeep(pos int) (Token, error) {
	return l.syntaxAt(pos, "nesting depth exceeds the maximum of "+strconv.Itoa(l.maxDepth))
}

// nameError is the error of the byte c at buf[pos] where a member name, or
// (stNameOrEnd) the end of the object, was expected.
func (l *Lexer) nameError(pos int, c byte) (Token, error) {
	if c != '}' {
		return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" looking for beginning of object member name")
	}
	return l.syntaxAt(pos, "invalid character '}' after ',' (trailing comma)")
}

// valueError is the error of the byte c at buf[pos] where a value was
// expected: a ']' after a comma, a byte order mark, or any byte that starts
// no value.
func (l *Lexer) valueError(pos int, c byte) (Token, error) {
	switch {
	case c == ']' && len(l.stack) > 0 && !l.inObject:
		return l.syntaxAt(pos, "invalid character ']' after ',' (trailing comma)")
	case c == 0xef && l.base+int64(pos) == 0:
		return l.syntaxAt(pos, "invalid character '\\xef' at start of input (a byte order mark is not allowed)")
	}
	return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" looking for beginning of value")
}

// afterValueError is the error of the byte c at buf[pos] where a comma or
// the end of the container was expected.
func (l *Lexer) afterValueError(pos int, c byte) (Token, error) {
	if l.inObject {
		return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" after object member value")
	}
	return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" after array element")
}
