package jsonlex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/nanhunt/nanhunt/internal/fixturedir"

	"github.com/go-json-experiment/json/jsontext"
)

// tok is a token as the tests record it: with a copy of its bytes, the
// input offset after it and the depth after it.
type tok struct {
	Kind  Kind
	Off   int64
	End   int64
	Depth int
	Text  string
}

func (t tok) String() string {
	switch t.Kind {
	case Name, String, Number:
		return fmt.Sprintf("%v:%q", t.Kind, t.Text)
	}
	return t.Kind.String()
}

// lexers keeps a pool of lexers per Options: a default window is 1 MiB,
// and allocating it for every fuzz input would dominate the run time.
var lexers sync.Map // Options -> *sync.Pool

func getLexer(r io.Reader, opt Options) *Lexer {
	p, _ := lexers.LoadOrStore(opt, &sync.Pool{})
	if l, ok := p.(*sync.Pool).Get().(*Lexer); ok {
		l.Reset(r)
		return l
	}
	return New(r, opt)
}

func putLexer(l *Lexer, opt Options) {
	if p, ok := lexers.Load(opt); ok {
		p.(*sync.Pool).Put(l)
	}
}

// lexAll reads tokens until EOF (included in the result) or an error.
func lexAll(r io.Reader, opt Options) ([]tok, error) {
	l := getLexer(r, opt)
	defer putLexer(l, opt)
	var toks []tok
	for {
		t, err := l.Next()
		if err != nil {
			return toks, err
		}
		toks = append(toks, tok{t.Kind, t.Offset, l.InputOffset(), l.Depth(), string(t.Bytes)})
		if t.Kind == EOF {
			return toks, nil
		}
		if len(toks) > 1<<24 {
			return toks, errors.New("too many tokens")
		}
	}
}

// kinds formats the kinds and texts of toks, without offsets.
func kinds(toks []tok) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.String())
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// sharedDir is the project's shared folder, next to the work tree.
var sharedDir = func() string {
	root, err := fixturedir.Root()
	if err != nil {
		return filepath.Join("..", "..", "..", "shared")
	}
	return filepath.Dir(root)
}()

// The oracle is jsontext, which rejects the bare tokens: bareShim rewrites
// them (outside strings) to strings that carry a marker. The marker starts
// with U+0000, which an original string can only contain as the escape
// \u0000, so inputs with that escape are left out of the comparison.
var (
	markerKinds = map[string]Kind{
		"\x00\x01NaN":       NaN,
		"\x00\x01Infinity":  PosInf,
		"\x00\x01-Infinity": NegInf,
	}
	bareWords = []struct{ word, quoted string }{
		{"-Infinity", `"\u0000\u0001-Infinity"`},
		{"Infinity", `"\u0000\u0001Infinity"`},
		{"NaN", `"\u0000\u0001NaN"`},
	}
)

// bareShim replaces NaN, Infinity and -Infinity outside strings by quoted
// markers. It tracks strings the way a JSON lexer does (a quote opens or
// closes one, a backslash inside escapes the next byte) and leaves
// everything else alone, so that invalid input stays invalid.
func bareShim(in []byte) []byte {
	out := make([]byte, 0, len(in)+len(in)/8)
	inString := false
	for i := 0; i < len(in); {
		c := in[i]
		if inString {
			out = append(out, c)
			i++
			switch {
			case c == '\\' && i < len(in):
				out = append(out, in[i])
				i++
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		} else if c == '-' || c == 'I' || c == 'N' {
			replaced := false
			for _, w := range bareWords {
				if bytes.HasPrefix(in[i:], []byte(w.word)) {
					out = append(out, w.quoted...)
					i += len(w.word)
					replaced = true
					break
				}
			}
			if replaced {
				continue
			}
		}
		out = append(out, c)
		i++
	}
	return out
}

// oracleUsable reports whether the marker strings cannot collide with a
// string of the input.
func oracleUsable(in []byte) bool {
	return !bytes.Contains(in, []byte(`\u0000`))
}

// oracleTokens tokenizes in with jsontext behind bareShim. It returns the
// tokens (kind and text; offsets are not compared) and whether the input is
// one valid document in the dialect of this package.
func oracleTokens(r io.Reader) ([]tok, bool) {
	d := jsontext.NewDecoder(r,
		jsontext.AllowDuplicateNames(true),
		jsontext.AllowInvalidUTF8(true))
	var toks []tok
	for {
		t, err := d.ReadToken()
		if err != nil {
			return toks, false
		}
		var k Kind
		var text string
		switch t.Kind() {
		case '{':
			k = ObjectStart
		case '}':
			k = ObjectEnd
		case '[':
			k = ArrayStart
		case ']':
			k = ArrayEnd
		case 'n':
			k = Null
		case 't':
			k = True
		case 'f':
			k = False
		case '0':
			k, text = Number, t.String()
		case '"':
			text = t.String()
			level, n := d.StackIndex(d.StackDepth())
			isName := level == '{' && n%2 == 1
			if mk, ok := markerKinds[text]; ok {
				if isName {
					return toks, false // a bare word used as a name
				}
				k, text = mk, ""
			} else if isName {
				k = Name
			} else {
				k = String
			}
		default:
			return toks, false
		}
		toks = append(toks, tok{Kind: k, Text: text})
		if d.StackDepth() == 0 {
			break
		}
	}
	// jsontext reads a stream of values; this package wants exactly one.
	if _, err := d.ReadToken(); err != io.EOF {
		return toks, false
	}
	return append(toks, tok{Kind: EOF}), true
}

// withReplacedUTF8 returns toks with the texts of names and strings made
// valid UTF-8 the way jsontext does it with AllowInvalidUTF8: every byte
// that does not start a valid sequence becomes U+FFFD.
func withReplacedUTF8(toks []tok) []tok {
	out := make([]tok, len(toks))
	for i, t := range toks {
		if (t.Kind == Name || t.Kind == String) && !utf8.ValidString(t.Text) {
			var b strings.Builder
			for s := t.Text; s != ""; {
				r, n := utf8.DecodeRuneInString(s)
				if r == utf8.RuneError && n == 1 {
					b.WriteString("\uFFFD")
				} else {
					b.WriteString(s[:n])
				}
				s = s[n:]
			}
			t.Text = b.String()
		}
		out[i] = tok{Kind: t.Kind, Text: t.Text}
	}
	return out
}

// stripped returns toks with only kinds and texts.
func stripped(toks []tok) []tok {
	out := make([]tok, len(toks))
	for i, t := range toks {
		out[i] = tok{Kind: t.Kind, Text: t.Text}
	}
	return out
}

// equalToks reports whether a and b are equal, else where they first differ.
func equalToks(a, b []tok) (bool, string) {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return false, fmt.Sprintf("token %d: %+v != %+v", i, a[i], b[i])
		}
	}
	if len(a) != len(b) {
		return false, fmt.Sprintf("%d tokens != %d tokens", len(a), len(b))
	}
	return true, ""
}

// checkError checks the invariants every error must satisfy for an input
// of n bytes read without read errors.
func checkError(t testing.TB, err error, n int) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
	}
	if se.Offset < 0 || se.Offset > int64(n) {
		t.Fatalf("error offset %d outside [0, %d]: %v", se.Offset, n, err)
	}
	if se.Truncated && se.Offset != int64(n) {
		t.Fatalf("truncation error not at the end (%d): %v", n, err)
	}
	if se.Msg == "" || strings.ToLower(se.Msg[:1]) != se.Msg[:1] {
		t.Fatalf("message not lower-case: %q", se.Msg)
	}
}
