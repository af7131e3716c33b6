package jsonlex

// The tests of the lexer's bounds (nesting, string length), of its
// reader's errors, and of its reuse (Reset, SkipValue, allocations).

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestNestingLimit(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, err := lexAll(strings.NewReader(deep(10000)), Options{}); err != nil {
		t.Errorf("depth 10000: %v", err)
	}
	_, err := lexAll(strings.NewReader(deep(10001)), Options{})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != 10000 || !strings.Contains(se.Msg, "nesting depth") {
		t.Errorf("depth 10001: %v", err)
	}
	if _, err := lexAll(strings.NewReader(`{"a":[{}]}`), Options{MaxDepth: 3}); err != nil {
		t.Errorf("depth 3 with MaxDepth 3: %v", err)
	}
	_, err = lexAll(strings.NewReader(`{"a":[{"b":[]}]}`), Options{MaxDepth: 3})
	if !errors.As(err, &se) || se.Offset != 11 {
		t.Errorf("depth 4 with MaxDepth 3: %v", err)
	}
	// Hostile input: a long run of '[' fails at the limit without reading
	// on.
	r := &countingReader{r: strings.NewReader(strings.Repeat("[", 1<<22))}
	if _, err := lexAll(r, Options{WindowSize: 4096, MaxDepth: 100}); err == nil {
		t.Error("no error for 4 Mi '['")
	}
	if r.n > 4096 {
		t.Errorf("read %d bytes before failing", r.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestMaxStringLen(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`"12345678"`, true},
		{`"123456789"`, false},
		{`"\u00312345678\n"`, false},
		{`"\u00e9234567"`, true}, // é is two bytes: 8 in all
		{`"\u00e92345678"`, false},
		{`{"123456789":1}`, false},
		{`12345678`, true},
		{`123456789`, false},
		{`[-12345678]`, false},
		{`"` + strings.Repeat(`\n`, 100) + `"`, false},
	}
	for _, tt := range tests {
		for _, ws := range []int{0, 1, 4, 9} {
			_, err := lexAll(strings.NewReader(tt.in), Options{MaxStringLen: 8, WindowSize: ws})
			if (err == nil) != tt.ok {
				t.Errorf("%q window %d: error %v, want ok=%v", tt.in, ws, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "longer than 8 bytes") {
				t.Errorf("%q: %v", tt.in, err)
			}
			// SkipValue does not materialise, so it has no limit.
			if err := New(strings.NewReader(tt.in), Options{MaxStringLen: 8, WindowSize: ws}).SkipValue(); err != nil {
				t.Errorf("%q: SkipValue: %v", tt.in, err)
			}
		}
	}
}

// failReader returns data, then an error.
type failReader struct {
	data string
	err  error
}

func (f *failReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, ws := range []int{0, 1, 4} {
		l := New(&failReader{data: `{"a":[1,"xyz`, err: boom}, Options{WindowSize: ws})
		var err error
		n := 0
		for err == nil {
			_, err = l.Next()
			n++
		}
		if !errors.Is(err, boom) || err.Error() != "read at offset 12: boom" {
			t.Errorf("window %d: error %q", ws, err)
		}
		if n != 5 {
			t.Errorf("window %d: error after %d tokens, want 5", ws, n-1)
		}
		if _, err2 := l.Next(); err2 != err {
			t.Errorf("second call: %v", err2)
		}
		if err2 := l.SkipValue(); err2 != err {
			t.Errorf("SkipValue after error: %v", err2)
		}
	}
	// A read error after the complete value is reported, not EOF.
	l := New(&failReader{data: `[]`, err: boom}, Options{})
	l.Next()
	l.Next()
	if _, err := l.Next(); !errors.Is(err, boom) {
		t.Errorf("after value: %v", err)
	}
	// A reader that never returns anything.
	_, err := lexAll(iotest.ErrReader(nil), Options{})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("empty reads: %v", err)
	}
}

func TestStickyError(t *testing.T) {
	l := New(strings.NewReader(`[1,,2]`), Options{})
	var first error
	for i := 0; i < 10; i++ {
		_, err := l.Next()
		if first == nil {
			first = err
		} else if err != first {
			t.Fatalf("call %d: %v, want %v", i, err, first)
		}
	}
	if first == nil {
		t.Fatal("no error")
	}
}

func TestEOFRepeats(t *testing.T) {
	l := New(strings.NewReader(" [] \n"), Options{})
	l.Next()
	l.Next()
	for range 3 {
		tk, err := l.Next()
		if err != nil || tk.Kind != EOF || tk.Offset != 5 || l.InputOffset() != 5 || l.Depth() != 0 {
			t.Fatalf("got %+v %v, offset %d", tk, err, l.InputOffset())
		}
	}
	if err := l.SkipValue(); err != nil {
		t.Fatal(err)
	}
}

func TestReset(t *testing.T) {
	l := New(strings.NewReader(`{"a":1} x`), Options{WindowSize: 3})
	for {
		if _, err := l.Next(); err != nil {
			break
		}
	}
	l.Reset(strings.NewReader(`["b"]`))
	var got []tok
	for {
		tk, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tok{tk.Kind, tk.Offset, l.InputOffset(), l.Depth(), string(tk.Bytes)})
		if tk.Kind == EOF {
			break
		}
	}
	want := []tok{{ArrayStart, 0, 1, 1, ""}, {String, 1, 4, 1, "b"}, {ArrayEnd, 4, 5, 0, ""}, {EOF, 5, 5, 0, ""}}
	if ok, diff := equalToks(got, want); !ok {
		t.Error(diff)
	}
	l.Reset(nil)
	if _, err := l.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("nil reader: %v", err)
	}
}

func TestSkipValue(t *testing.T) {
	const doc = `{"a": [1, {"b": "x\"y"}, [[]]], "c": NaN, "d": {"e": -Infinity}, "f": "g"}`
	type step struct {
		skip bool // SkipValue, else Next
		want string
	}
	tests := []struct {
		steps []step
	}{
		{[]step{{true, "EOF"}}},
		{[]step{{false, "ObjectStart"}, {false, `Name:"a"`}, {true, `Name:"c"`}, {false, "NaN"}, {false, `Name:"d"`}, {true, `Name:"f"`}}},
		{[]step{{false, "ObjectStart"}, {true, "ArrayStart"}, {false, `Number:"1"`}}},
		{[]step{{false, "ObjectStart"}, {false, `Name:"a"`}, {false, "ArrayStart"}, {false, `Number:"1"`}, {true, "ArrayStart"}, {true, "ArrayEnd"}, {true, `Name:"c"`}}},
		{[]step{{false, "ObjectStart"}, {false, `Name:"a"`}, {false, "ArrayStart"}, {false, `Number:"1"`}, {false, "ObjectStart"}, {true, `String:"x\"y"`}, {true, "ArrayStart"}}},
	}
	for i, tt := range tests {
		for _, ws := range []int{0, 1, 2, 5} {
			l := New(strings.NewReader(doc), Options{WindowSize: ws})
			var trace []string
			for _, s := range tt.steps {
				if s.skip {
					if err := l.SkipValue(); err != nil {
						t.Fatalf("test %d: %v", i, err)
					}
					// what follows the skipped value:
					tk, err := l.Next()
					if err != nil {
						t.Fatalf("test %d: %v", i, err)
					}
					trace = append(trace, tok{Kind: tk.Kind, Text: string(tk.Bytes)}.String())
				} else {
					tk, err := l.Next()
					if err != nil {
						t.Fatalf("test %d: %v", i, err)
					}
					trace = append(trace, tok{Kind: tk.Kind, Text: string(tk.Bytes)}.String())
				}
			}
			var want []string
			for _, s := range tt.steps {
				want = append(want, s.want)
			}
			if strings.Join(trace, " ") != strings.Join(want, " ") {
				t.Errorf("test %d window %d:\n got %s\nwant %s", i, ws, strings.Join(trace, " "), strings.Join(want, " "))
			}
		}
	}
	// InputOffset after skipping is just past the skipped value.
	l := New(strings.NewReader(doc), Options{})
	l.Next()
	l.Next()
	if err := l.SkipValue(); err != nil {
		t.Fatal(err)
	}
	if want := int64(strings.Index(doc, `, "c"`)); l.InputOffset() != want || l.Depth() != 1 {
		t.Errorf("after skip: offset %d depth %d, want %d 1", l.InputOffset(), l.Depth(), want)
	}
	// Errors inside the skipped value are reported.
	for _, bad := range []string{`[1, 2`, `[1, 02]`, `{"a" 1}`, `["\q"]`, `[NaN, Nan]`} {
		if err := New(strings.NewReader(bad), Options{}).SkipValue(); err == nil {
			t.Errorf("SkipValue(%q): no error", bad)
		}
	}
}

// TestNoAllocs checks that the steady state allocates nothing, including
// tokens that are unescaped or span windows.
func TestNoAllocs(t *testing.T) {
	doc := []byte(sample)
	r := bytes.NewReader(doc)
	l := New(r, Options{WindowSize: 64})
	walk := func() {
		r.Reset(doc)
		l.Reset(r)
		for {
			tk, err := l.Next()
			if err != nil {
				t.Fatal(err)
			}
			if tk.Kind == EOF {
				return
			}
		}
	}
	walk() // grow scratch and stack
	if n := testing.AllocsPerRun(20, walk); n != 0 {
		t.Errorf("Next: %v allocs per document", n)
	}
	skip := func() {
		r.Reset(doc)
		l.Reset(r)
		if err := l.SkipValue(); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(20, skip); n != 0 {
		t.Errorf("SkipValue: %v allocs per document", n)
	}
}

// TestBytesCapacity checks that appending to Bytes cannot write into the
// lexer's window.
func TestBytesCapacity(t *testing.T) {
	for _, ws := range []int{0, 4} {
		l := New(strings.NewReader(`{"ab":"c\nd","e":12,"f":"gh"}`), Options{WindowSize: ws})
		var got []string
		for {
			tk, err := l.Next()
			if err != nil {
				t.Fatal(err)
			}
			if tk.Kind == EOF {
				break
			}
			if cap(tk.Bytes) != len(tk.Bytes) {
				t.Errorf("%v: cap %d, len %d", tk.Kind, cap(tk.Bytes), len(tk.Bytes))
			}
			_ = append(tk.Bytes, "XXXXXXXX"...)
			got = append(got, string(tk.Bytes))
		}
		if s := strings.Join(got, "|"); s != "|ab|c\nd|e|12|f|gh|" {
			t.Errorf("window %d: %q", ws, s)
		}
	}
}

// badReader claims to have read more than it was given.
type badReader struct{}

func (badReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestBadReader(t *testing.T) {
	_, err := lexAll(badReader{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "invalid count") {
		t.Errorf("got %v", err)
	}
}

// TestResetDropsHugeScratch checks that Reset does not keep the buffer of
// a huge token alive.
func TestResetDropsHugeScratch(t *testing.T) {
	big := `"` + strings.Repeat(`\n`, 2<<20) + `"`
	l := New(strings.NewReader(big), Options{})
	tk, err := l.Next()
	if err != nil || len(tk.Bytes) != 2<<20 {
		t.Fatalf("%v %d", err, len(tk.Bytes))
	}
	l.Reset(strings.NewReader(`"x"`))
	if cap(l.scratch) != 0 {
		t.Errorf("scratch of %d bytes kept", cap(l.scratch))
	}
	if tk, err := l.Next(); err != nil || string(tk.Bytes) != "x" {
		t.Errorf("after Reset: %v %v", tk, err)
	}
}

// A string value longer than MaxStringLen is cut with CutLongStrings (in
// the window, across windows, with escapes), while a long name and a long
// string without the option stay errors.
func TestCutLongStrings(t *testing.T) {
	long := strings.Repeat("ab", 5000)
	tests := []struct {
		name, doc string
		cut       bool
		window    int
		want      string // the String token's bytes, or "error"
	}{
		{"in window", `{"k": "` + long + `", "n": 1}`, true, 1 << 16, long[:100]},
		{"across windows", `{"k": "` + long + `", "n": 1}`, true, 64, long[:100]},
		{"escapes", `{"k": "\n` + long + `", "n": 1}`, true, 64, "\n" + long[:99]},
		{"short", `{"k": "abc", "n": 1}`, true, 64, "abc"},
		{"without the option", `{"k": "` + long + `", "n": 1}`, false, 1 << 16, "error"},
		{"a long name", `{"` + long + `": 1}`, true, 1 << 16, "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lx := New(strings.NewReader(tt.doc), Options{WindowSize: tt.window, MaxStringLen: 100, CutLongStrings: tt.cut})
			got := ""
			var toks []Kind
			for {
				tok, err := lx.Next()
				if err != nil {
					got = "error"
					break
				}
				if tok.Kind == EOF {
					break
				}
				toks = append(toks, tok.Kind)
				if tok.Kind == String {
					got = string(tok.Bytes)
					if tok.Cut != (len(got) < len(tt.doc)-20) {
						t.Errorf("Cut = %v for %d bytes", tok.Cut, len(got))
					}
				}
			}
			if got != tt.want {
				t.Errorf("got %.20q…, want %.20q…", got, tt.want)
			}
			if got != "error" && len(toks) != 6 {
				t.Errorf("tokens %v, want 6 (the document goes on after the string)", toks)
			}
		})
	}
}
