package jsonlex

import (
	"io"
)

const (
	defaultWindowSize   = 1 << 20
	defaultMaxDepth     = 10000
	defaultMaxStringLen = 64 << 20
)

// Options configures a [Lexer]. The zero value selects the defaults.
type Options struct {
	// WindowSize is the size in bytes of the read window, the only buffer
	// whose size does not depend on the input. 0 (or less) means 1 MiB.
	WindowSize int
	// MaxDepth limits the nesting of objects and arrays; opening a container
	// beyond it is a SyntaxError. 0 (or less) means 10000.
	MaxDepth int
	// MaxStringLen limits the length of the Bytes of a Name, String or
	// Number token returned by Next (after unescaping); a longer token is a
	// SyntaxError. SkipValue does not materialise tokens and applies no
	// limit. 0 (or less) means 64 MiB.
	MaxStringLen int
	// CutLongStrings makes a String value longer than MaxStringLen a
	// token of its first MaxStringLen bytes with Cut set, instead of an
	// error; the rest of the string is read through without being kept.
	// Names and numbers stay limited.
	CutLongStrings bool
}

// state says what the grammar allows next.
type state uint8

const (
	stValue      state = iota // a value: at the start, after ':', after ',' in an array
	stValueOrEnd              // a value or ']': after '['
	stNameOrEnd               // a member name or '}': after '{'
	stName                    // a member name: after ',' in an object
	stColon                   // ':': after a member name
	stCommaOrEnd              // ',' or the end of the container: after a value in a container
	stDone                    // nothing but whitespace: after the top-level value
)

// Lexer splits a JSON document read from an io.Reader into tokens.
//
// The lexer reads through a fixed window. Memory use is bounded by the
// window, the nesting depth and the longest token that must be unescaped or
// that spans two windows (Options.MaxStringLen).
//
// The accepted syntax is RFC 8259 JSON with one top-level value, plus the
// bare tokens NaN, Infinity and -Infinity wherever a value may appear (not
// as member names). Invalid UTF-8 is passed through as it is; a \u escape of
// an unpaired UTF-16 surrogate becomes U+FFFD. A leading byte order mark is
// rejected, as are comments, trailing commas and whitespace other than
// space, tab, line feed and carriage return.
//
// After an error every call returns the same error. A Lexer is not safe for
// concurrent use.
type Lexer struct {
	r    io.Reader
	buf  []byte // the window; buf[pos:] is not consumed yet
	pos  int
	base int64 // stream offset of buf[0]

	rerr    error // io.EOF or the error from the reader, reported once buf is consumed
	rerrOff int64 // stream offset of the read that failed
	err     error // the permanent error, once there is one

	state    state
	inObject bool   // the innermost open container is an object
	stack    []bool // inObject of each enclosing level, outermost first; len = depth
	end      int64  // InputOffset
	skipping bool   // SkipValue is running

	index structIndex // SkipValueFast: the structural index of part of the window

	scratch []byte // Bytes of tokens that are unescaped or span windows

	maxDepth int
	maxStr   int
	cutLong  bool
	cuts     int // strings cut so far
}

// New returns a lexer that reads the JSON document from r.
func New(r io.Reader, opt Options) *Lexer {
	if opt.WindowSize <= 0 {
		opt.WindowSize = defaultWindowSize
	}
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = defaultMaxDepth
	}
	if opt.MaxStringLen <= 0 {
		opt.MaxStringLen = defaultMaxStringLen
	}
	l := &Lexer{
		buf:      make([]byte, 0, opt.WindowSize),
		maxDepth: opt.MaxDepth,
		maxStr:   opt.MaxStringLen,
		cutLong:  opt.CutLongStrings,
	}
	l.Reset(r)
	return l
}

// Reset makes the lexer read a new document from r, keeping its options and
// buffers. Offsets start again at 0.
func (l *Lexer) Reset(r io.Reader) {
	if r == nil {
		r = eofReader{}
	}
	l.r = r
	l.buf = l.buf[:0]
	l.pos = 0
	l.base = 0
	l.rerr = nil
	l.rerrOff = 0
	l.err = nil
	l.state = stValue
	l.inObject = false
	l.stack = l.stack[:0]
	l.end = 0
	l.skipping = false
	l.index.valid = false
	if cap(l.scratch) > 1<<20 {
		l.scratch = nil // do not pin a huge token's buffer
	}
}

// Depth returns the number of objects and arrays that are open after the
// last token: 0 before the first token and after the top-level value.
func (l *Lexer) Depth() int { return len(l.stack) }

// InputOffset returns the stream offset just past the last token consumed by
// Next, or past the value skipped by SkipValue. After the EOF token it is the
// length of the input.
func (l *Lexer) InputOffset() int64 { return l.end }

// Cuts is the number of strings cut so far (Options.CutLongStrings).
func (l *Lexer) Cuts() int { return l.cuts }

// SkipValue consumes the next token as Next would, but without unescaping or
// copying anything; if that token opens an object or an array, the whole
// container up to its matching end is consumed. Skipped input is checked as
// strictly as Next checks it. Thus, before a value SkipValue skips the
// value, before a member name it skips only the name, before the end of a
// container it consumes that end, and at the end of the input it does
// nothing.
func (l *Lexer) SkipValue() error {
	d := len(l.stack)
	l.skipping = true
	defer func() { l.skipping = false }()
	for {
		if _, err := l.Next(); err != nil {
			return err
		}
		if len(l.stack) <= d {
			return nil
		}
	}
}

// Next returns the next token. After the top-level value it returns a token
// of kind EOF, once the reader has reported io.EOF with nothing but
// whitespace after the value, and keeps returning it.
//
// Commas and colons are checked but not returned. Errors are a
// *SyntaxError, or an error from the reader wrapped as
// "read at offset N: ...".
//
// The common tokens are handled inline: strings and numbers that lie in
// the window without escapes, bare words and punctuation. After a member
// name a colon that follows at once is consumed with it, and after a value
// inside a container so is a comma; this changes nothing observable but
// saves a round of the loop. Everything else goes to the helpers, which
// handle all cases, errors included (nexterrors.go). While SkipValue
// runs, tokens are validated but their Bytes are not materialised.
func (l *Lexer) Next() (Token, error) {
	if l.err != nil {
		return Token{}, l.err
	}
	skip := l.skipping
	buf, pos := l.buf, l.pos
	for {
		if pos < len(buf) && isSpace[buf[pos]] {
			pos = skipSpace(buf, pos)
		}
		if pos >= len(buf) {
			l.pos = pos
			if !l.more() {
				return l.endOfInput()
			}
			buf, pos = l.buf, l.pos
			continue
		}
		c := buf[pos]
		// A complete value (scalar or container end) leaves the switch
		// with its kind, its end and its bytes; other tokens return.
		kind, b, end := Kind(0), []byte(nil), pos+1
		switch l.state {
		case stName, stNameOrEnd:
			if c == '"' {
				start := pos + 1
				i := scanPlain(buf, start)
				if i >= len(buf) || buf[i] != '"' || i-start > l.maxStr {
					return l.str(pos, Name, skip)
				}
				off := l.base + int64(pos)
				end = i + 1
				l.end = l.base + int64(end)
				if end < len(buf) && buf[end] == ':' {
					end++
					if end < len(buf) && buf[end] == ' ' {
						end++ // Python's separator is ": "
					}
					l.state = stValue
				} else {
					l.state = stColon
				}
				l.pos = end
				return Token{Kind: Name, Offset: off, Bytes: buf[start:i:i]}, nil
			}
			if c != '}' || l.state != stNameOrEnd {
				return l.nameError(pos, c)
			}
			l.pop()
			kind = ObjectEnd
		case stValue, stValueOrEnd:
			switch c {
			case '"':
				start := pos + 1
				i := scanPlain(buf, start)
				if i >= len(buf) || buf[i] != '"' || i-start > l.maxStr {
					return l.str(pos, String, skip)
				}
				kind, end, b = String, i+1, buf[start:i:i]
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				i := scanNumber(buf, pos)
				if i < 0 || i-pos > l.maxStr {
					if c == '-' && pos+1 < len(buf) && buf[pos+1] == 'I' {
						return l.literal(l.base+int64(pos), pos+1, "Infinity", NegInf)
					}
					return l.numberDFA(pos, skip)
				}
				kind, end, b = Number, i, buf[pos:i:i]
			case '{', '[':
				if len(l.stack) >= l.maxDepth {
					return l.tooDeep(pos)
				}
				l.stack = append(l.stack, l.inObject)
				off := l.base + int64(pos)
				l.pos, l.end, l.inObject = pos+1, off+1, c == '{'
				l.state, kind = stValueOrEnd, ArrayStart
				if c == '{' {
					l.state, kind = stNameOrEnd, ObjectStart
				}
				return Token{Kind: kind, Offset: off}, nil
			case 't':
				if pos+4 > len(buf) || string(buf[pos:pos+4]) != "true" {
					return l.literal(l.base+int64(pos), pos, "true", True)
				}
				kind, end = True, pos+4
			case 'f':
				if pos+5 > len(buf) || string(buf[pos:pos+5]) != "false" {
					return l.literal(l.base+int64(pos), pos, "false", False)
				}
				kind, end = False, pos+5
			case 'n':
				if pos+4 > len(buf) || string(buf[pos:pos+4]) != "null" {
					return l.literal(l.base+int64(pos), pos, "null", Null)
				}
				kind, end = Null, pos+4
			case 'N':
				if pos+3 > len(buf) || string(buf[pos:pos+3]) != "NaN" {
					return l.literal(l.base+int64(pos), pos, "NaN", NaN)
				}
				kind, end = NaN, pos+3
			case 'I':
				if pos+8 > len(buf) || string(buf[pos:pos+8]) != "Infinity" {
					return l.literal(l.base+int64(pos), pos, "Infinity", PosInf)
				}
				kind, end = PosInf, pos+8
			case ']':
				if l.state != stValueOrEnd {
					return l.valueError(pos, c)
				}
				l.pop()
				kind = ArrayEnd
			default:
				return l.valueError(pos, c)
			}
		case stCommaOrEnd:
			switch {
			case c == ',':
				pos++
				if l.inObject {
					l.state = stName
				} else {
					l.state = stValue
				}
				continue
			case c == '}' && l.inObject:
				l.pop()
				kind = ObjectEnd
			case c == ']' && !l.inObject:
				l.pop()
				kind = ArrayEnd
			default:
				return l.afterValueError(pos, c)
			}
		case stColon:
			if c == ':' {
				pos++
				l.state = stValue
				continue
			}
			return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" after object member name")
		default: // stDone
			return l.syntaxAt(pos, "invalid character "+quoteChar(c)+" after top-level value")
		}
		off := l.base + int64(pos)
		l.end = l.base + int64(end)
		l.pos = l.afterValueAt(end)
		return Token{Kind: kind, Offset: off, Bytes: b}, nil
	}
}

// pop closes the innermost container.
func (l *Lexer) pop() {
	n := len(l.stack) - 1
	l.inObject = l.stack[n]
	l.stack = l.stack[:n]
}

// afterValueAt sets the state that follows a value that ends at buf[i] and
// returns where to go on: past a comma that follows at once inside a
// container, else i.
func (l *Lexer) afterValueAt(i int) int {
	if len(l.stack) == 0 {
		l.state = stDone
		return i
	}
	if i < len(l.buf) && l.buf[i] == ',' {
		if l.inObject {
			l.state = stName
		} else {
			l.state = stValue
		}
		return i + 1
	}
	l.state = stCommaOrEnd
	return i
}

// afterValue sets the state that follows a complete value.
func (l *Lexer) afterValue() {
	if len(l.stack) == 0 {
		l.state = stDone
	} else {
		l.state = stCommaOrEnd
	}
}

// endOfInput handles the end of the reader's data between tokens.
func (l *Lexer) endOfInput() (Token, error) {
	if l.state == stDone && l.rerr == io.EOF {
		off := l.base + int64(len(l.buf))
		l.end = off
		return Token{Kind: EOF, Offset: off}, nil
	}
	switch {
	case len(l.stack) == 0:
		return l.ended("")
	case l.inObject:
		return l.ended(" inside object")
	default:
		return l.ended(" inside array")
	}
}
