package jsonlex

import (
	"fmt"
	"io"
	"strconv"
)

// SyntaxError reports input that is not a JSON document in the dialect the
// lexer accepts, or a document that exceeds a limit set in [Options].
type SyntaxError struct {
	// Offset is the byte offset in the stream where the problem is. For
	// truncated input it is the length of the input.
	Offset int64
	// Msg describes the problem in lower case, without the offset.
	Msg string
	// Truncated reports that the input ended before the top-level value was
	// complete; everything read until then was valid.
	Truncated bool
}

// Error returns the message prefixed by the offset: "offset 1234: <msg>".
func (e *SyntaxError) Error() string {
	return "offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Unwrap returns [io.ErrUnexpectedEOF] when the input was truncated, so that
// errors.Is(err, io.ErrUnexpectedEOF) holds, and nil otherwise.
func (e *SyntaxError) Unwrap() error {
	if e.Truncated {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// quoteChar formats a byte for an error message: 'x' for printable ASCII,
// an escape such as '\n' or '\x01' for control characters, and '\xNN' for
// bytes outside ASCII, which may be part of a multi-byte character.
func quoteChar(c byte) string {
	if c < 0x80 {
		return strconv.QuoteRuneToASCII(rune(c))
	}
	return fmt.Sprintf(`'\x%02x'`, c)
}

// fail makes err the lexer's permanent error and returns it.
func (l *Lexer) fail(err error) (Token, error) {
	l.err = err
	return Token{}, err
}

// syntaxAt fails with a SyntaxError at buf[pos].
func (l *Lexer) syntaxAt(pos int, msg string) (Token, error) {
	return l.fail(&SyntaxError{Offset: l.base + int64(pos), Msg: msg})
}

// syntaxOff fails with a SyntaxError at stream offset off.
func (l *Lexer) syntaxOff(off int64, msg string) (Token, error) {
	return l.fail(&SyntaxError{Offset: off, Msg: msg})
}

// ended fails after the reader returned no more bytes in the middle of a
// token or between tokens of an unfinished value: with the read error if
// there was one, else with a truncation error "unexpected end of input" +
// where.
func (l *Lexer) ended(where string) (Token, error) {
	if l.rerr != io.EOF {
		return l.fail(fmt.Errorf("read at offset %d: %w", l.rerrOff, l.rerr))
	}
	return l.fail(&SyntaxError{
		Offset:    l.base + int64(len(l.buf)),
		Msg:       "unexpected end of input" + where,
		Truncated: true,
	})
}
