package jsonlex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// skipped is what a walk over the members of "data" that skips every
// value reports: each member's name and where its value ends, then the
// error that stopped it.
func skipped(r io.Reader, opt Options, skip func(*Lexer) error) string {
	l := New(r, opt)
	var out strings.Builder
	for _, want := range []Kind{ObjectStart, Name, String, Name, ObjectStart} { // {"task": "statistics", "data": {
		if tok, err := l.Next(); err != nil || tok.Kind != want {
			return fmt.Sprintf("head: %v %v", tok.Kind, err)
		}
	}
	for {
		tok, err := l.Next()
		if err != nil {
			return out.String() + "error: " + err.Error()
		}
		if tok.Kind != Name {
			return out.String() + "end " + tok.Kind.String()
		}
		if err := skip(l); err != nil {
			return out.String() + "error: " + err.Error()
		}
		fmt.Fprintf(&out, "%s@%d\n", tok.Bytes, l.InputOffset())
	}
}

// indentedDump lays a document {"data": {...}} out as json.dump(indent)
// does, its members' values random, or "" when they are not plain JSON.
func indentedDump(rng *rand.Rand, indent int) string {
	var b strings.Builder
	b.WriteString(`{"task": "statistics", "data": {`)
	for i, n := 0, rng.IntN(8); i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"e%d": `, i)
		if rng.IntN(4) == 0 {
			randomDoc(rng, &b, 4) // any value, "{}" and scalars among them
			continue
		}
		b.WriteByte('{')
		for j, m := 0, 1+rng.IntN(3); j < m; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d": `, j)
			randomDoc(rng, &b, 2)
		}
		b.WriteByte('}')
	}
	b.WriteString("}}")
	var out bytes.Buffer
	if json.Indent(&out, []byte(b.String()), "", strings.Repeat(" ", indent)) != nil {
		return ""
	}
	return out.String() + "\n"
}

// On documents laid out as json.dump lays them out, skipping a member's
// object by its closing line ends where the structural skip ends, through
// every kind of read; so does the end of a document cut anywhere.
func TestSkipObjectLinesLikeSkipValueFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	reads := []struct {
		name string
		opt  Options
		wrap func(io.Reader) io.Reader
	}{
		{"whole", Options{}, func(r io.Reader) io.Reader { return r }},
		{"window 16, half reads", Options{WindowSize: 16}, iotest.HalfReader},
		{"one-byte reads", Options{}, iotest.OneByteReader},
	}
	docs, lines, members := 0, 0, 0
	for docs < 3000 {
		indent := 1 + rng.IntN(4)
		doc := indentedDump(rng, indent)
		if doc == "" {
			continue
		}
		docs++
		close := []byte("\n" + strings.Repeat(" ", 2*indent) + "}")
		lines += strings.Count(doc, string(close))
		for _, cut := range []int{len(doc), rng.IntN(len(doc) + 1)} {
			in := doc[:cut]
			for _, rd := range reads {
				want := skipped(rd.wrap(strings.NewReader(in)), rd.opt, (*Lexer).SkipValueFast)
				got := skipped(rd.wrap(strings.NewReader(in)), rd.opt, func(l *Lexer) error { return l.SkipObjectLines(close) })
				members += strings.Count(want, "@")
				if got != want {
					t.Fatalf("%s, indent %d, cut at %d of %d:\nby lines:\n%s\nstructurally:\n%s\ndocument:\n%s", rd.name, indent, cut, len(doc), got, want, in)
				}
			}
		}
	}
	if lines == 0 || members == 0 {
		t.Fatalf("%d member objects closed on their own line, %d members skipped: nothing was compared", lines, members)
	}
}

// FuzzSkipObjectLines: any JSON object, laid out by an indenting encoder as
// the value of members of "data", read through windows of any size,
// skipped by its closing lines ends where the structural skip ends.
func FuzzSkipObjectLines(f *testing.F) {
	f.Add([]byte(`{"input_args": [{"type": "torch.Tensor", "Max": 1.5}], "output": []}`), uint8(1), uint8(0))
	f.Add([]byte(`{"a": {}, "b": [[], {}], "c": "}\n  }"}`), uint8(4), uint8(7))
	f.Fuzz(func(t *testing.T, value []byte, indent, window uint8) {
		if !json.Valid(value) || len(bytes.TrimSpace(value)) == 0 || bytes.TrimSpace(value)[0] != '{' {
			return
		}
		in := 1 + int(indent%4)
		doc := `{"task": "statistics", "data": {"a": ` + string(value) + `, "b": ` + string(value) + `}}`
		var out bytes.Buffer
		if json.Indent(&out, []byte(doc), "", strings.Repeat(" ", in)) != nil {
			return
		}
		close := []byte("\n" + strings.Repeat(" ", 2*in) + "}")
		opt := Options{WindowSize: 16 + int(window)}
		want := skipped(iotest.HalfReader(bytes.NewReader(out.Bytes())), opt, (*Lexer).SkipValueFast)
		got := skipped(iotest.HalfReader(bytes.NewReader(out.Bytes())), opt, func(l *Lexer) error { return l.SkipObjectLines(close) })
		if got != want {
			t.Fatalf("by lines:\n%s\nstructurally:\n%s\ndocument:\n%s", got, want, out.Bytes())
		}
	})
}
